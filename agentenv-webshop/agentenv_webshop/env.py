"""WebShop: find and buy the product an instruction asks for on a simulated shopping site.

The agent searches (``search[keywords]``) and clicks what a page offers (``click[label]``); "Buy Now" ends
the episode with WebShop's reward for the product bought (:mod:`agentenv_webshop.reward`), 1.0 when it
has every attribute and option asked for at a price under the ceiling.  All sessions of a server share
one :class:`~agentenv_webshop.shop.Shop` (catalog, goals, search index), set up by :meth:`WebShopEnv.shared`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire
from agentenv.react import match_first_line

from . import expert
from .shop import GENERATED_GOALS, Shop, ShopConfig, holding, shop_for, splits_for
from .site import Site

TASK_TEXT = """\
You are web shopping.
I will give you instructions about what to do.
You have to follow the instructions.
Every round I will give you an observation and a list of available actions, you have to respond an \
action based on the state and instruction.
You can use search action if search is available.
You can click one of the buttons in clickables.
An action should be of the following structure:
search[keywords]
click[value]
If the action is not valid, perform nothing.
Keywords in search are up to you, but the value in click must be a value in the list of available actions.
Remember that your keywords in search should be carefully designed."""

#: an action, read from the reply's first line up to that line's last "]" (what follows is ignored, as
#: WebShop's parser ignores it), else from the whole reply (keywords over several lines)
ACTION = re.compile(r"\s*(search|click)\s*\[(.*)\]\s*", re.IGNORECASE | re.DOTALL)
GRAMMAR = "search[keywords] or click[value]"
#: the longest search a site takes (longer keywords are refused as an invalid action)
MAX_KEYWORDS_CHARS = 500

ObservationMode = Literal["text", "html"]


def _config_splits(config: ShopConfig) -> dict[str, range]:
    """The splits a config's shop will have: fixed for a generated catalog; for WebShop's files, known
    once they are read (read here, and kept for the server)."""
    if config.data_dir is None:
        return splits_for(GENERATED_GOALS)
    return shop_for(config).splits


class WebShopEnv(EpisodicEnv):
    """One shopping episode at a time on the shared shop."""

    name: ClassVar[str] = "webshop"
    #: where the catalog and goals come from (the ``AGENTENV_WEBSHOP_*`` variables, see :mod:`.shop`)
    config: ClassVar[ShopConfig] = ShopConfig.from_env()
    #: test 0-499, valid 500-1499, train from 1500 (WebShop's baseline ranges)
    splits: ClassVar[dict[str, range]] = _config_splits(config)
    max_rounds: ClassVar[int] = 10  # AgentGym's evaluation setting
    #: actions per episode before the server ends it unsolved (agents stop at max_rounds long before)
    max_steps: ClassVar[int] = 50
    task_text: ClassVar[str] = TASK_TEXT
    #: the observation mode of new sessions: WebShop's ``[SEP]`` text, or the page's HTML
    observation_mode: ClassVar[ObservationMode] = "text"
    port: ClassVar[int] = 36005
    client: ClassVar[str] = "agentenv_webshop.client:WebShopClient"
    wire: ClassVar[Wire] = Wire(
        family="env_idx",
        reset_field="session_id",
        reset_answer="pair",
        queries={"instruction_text": "instruction_text", "state": "state"},
        shapes={"step": ("state", "reward", "done", "info"), "reset": ("observation",)},
    )

    def __init__(self, shop: Shop | None = None, observation_mode: ObservationMode | None = None) -> None:
        super().__init__()
        self.shop = shop or shop_for(self.config)
        self.mode: ObservationMode = observation_mode or self.observation_mode
        self.site: Site | None = None

    @classmethod
    @contextlib.contextmanager
    def shared(cls) -> Iterator[None]:
        """Load the shop once (catalog, goals, search index from its disk cache) for every session."""
        with holding(cls.config):
            yield

    @classmethod
    def with_config(cls, config: ShopConfig) -> type[WebShopEnv]:
        """This env over another shop (a 100,000-product catalog, WebShop's files): a subclass whose
        splits are that shop's."""
        return type(
            cls.__name__,
            (cls,),
            {"config": config, "splits": _config_splits(config), "__module__": cls.__module__},
        )

    # --- AgentGym's create ------------------------------------------------------------------------------
    def create(self, /, observation_mode: str | None = None) -> None:
        """``POST /create``, optionally ``{"observation_mode": "html"}``; the session waits for a reset."""
        if observation_mode is not None:
            if observation_mode not in ("text", "html"):
                raise ValueError(f"observation_mode must be 'text' or 'html', not {observation_mode!r}")
            self.mode = observation_mode  # type: ignore[assignment]
        return None

    # --- the episode ------------------------------------------------------------------------------------
    def start(self, data_idx: int) -> str:
        if not 0 <= data_idx < len(self.shop.goals):
            raise ValueError(f"task {data_idx} is not one of the shop's {len(self.shop.goals)} goals")
        self.site = Site(self.shop, self.shop.goal(data_idx))
        return self._render()

    def act(self, action: str) -> StepResult:
        site = self.site
        assert site is not None
        parsed = self._read(action)
        if isinstance(parsed, str):
            return StepResult(f"Invalid action: {parsed}. The page is unchanged.\n{self._render()}")
        verb, argument = parsed
        if verb == "search":
            site.search(argument)
            return StepResult(self._render())
        purchase = site.click(argument)
        if purchase is None or site.product is None:
            return StepResult(self._render())
        bought = {"asin": site.product.asin, "options": dict(site.options), "goal_asin": site.goal.asin}
        return StepResult(
            self._render(), reward=purchase.total, terminated=True, info=purchase.info(site.goal) | bought
        )

    def _read(self, action: str) -> tuple[str, str] | str:
        """``(verb, argument)`` of an action the current page takes, else why it does not take it.  The
        argument is lower-cased with its spaces collapsed, as WebShop matches clickables."""
        match = match_first_line(ACTION, action.strip())
        if match is None:
            shown = " ".join(action.split())[:60]
            return f'"{shown}" is not an action; use {GRAMMAR}'
        verb, argument = match.group(1).lower(), " ".join(match.group(2).lower().split())
        if verb == "search":
            if not argument:
                return "search[...] needs keywords"
            if len(argument) > MAX_KEYWORDS_CHARS:
                return f"search keywords are at most {MAX_KEYWORDS_CHARS} characters"
            return verb, argument
        assert self.site is not None
        clickables = self.site.page.clickables()
        if argument == "search" and "search" in clickables:
            return "to search, use search[keywords]"
        if argument not in clickables:
            listed = ", ".join(c for c in clickables if c != "search")
            return f'"{argument[:60]}" is not clickable on this page (clickables: {listed})'
        return verb, argument

    def _render(self) -> str:
        assert self.site is not None
        page = self.site.page
        return page.html() if self.mode == "html" else page.text()

    # --- views ----------------------------------------------------------------------------------------
    def observation(self) -> str:
        """The current page (the answer to an invalid action also says why it was refused)."""
        return self._render() if self.site is not None else super().observation()

    def available_actions(self) -> dict[str, Any]:
        """AgentGym's ``{has_search_bar, clickables}`` of the current page."""
        if self.site is None:
            return {"has_search_bar": False, "clickables": []}
        return {"has_search_bar": self.site.at == "search", "clickables": list(self.site.page.clickables())}

    def instruction_text(self) -> str:
        """The goal's instruction (AgentGym's ``GET /instruction_text``)."""
        assert self.site is not None
        return f"Instruction: {self.site.goal.instruction_text}"

    def state(self) -> dict[str, str]:
        """AgentGym's ``GET /state``: the page's url and HTML, and the instruction."""
        assert self.site is not None
        page = self.site.page
        return {"url": page.url, "html": page.html(), "instruction_text": self.instruction_text()}

    def expert_action(self) -> ExpertAction:
        assert self.site is not None
        return expert.next_move(self.site)

    def task_type(self) -> str:
        """The goal's top category (beauty, food, fashion, furniture, electronics)."""
        if self.site is None or not self.site.goal.category:
            return self.name
        return self.site.goal.category

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        goals = shop_for(cls.config).goals
        return (goals[data_idx].category or cls.name) if 0 <= data_idx < len(goals) else None

    def wire_extras(self, kind: Literal["create", "reset", "step"]) -> dict[str, Any]:
        # AgentGym's /step answers the observation as "state"
        return {"state": self.last_observation} if kind == "step" else {}

    def detail(self) -> dict[str, Any]:
        site = self.site
        if site is None:
            return super().detail()
        return super().detail() | {
            "instruction": site.goal.instruction_text,
            "goal": {
                "asin": site.goal.asin,
                "attributes": list(site.goal.attributes),
                "options": site.goal.options,
                "price_upper": site.goal.price_upper,
            },
            "page": site.at,
            "keywords": site.keywords,
            "product": site.product.asin if site.product else None,
            "options": site.options,
            "observation_mode": self.mode,
        }
