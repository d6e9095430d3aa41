"""What every session of one server shares: the catalog, its goals, its search index and its splits.

Where they come from is a :class:`ShopConfig`, read from the environment by default:

- ``AGENTENV_WEBSHOP_DATA``: a folder holding WebShop's own files (``items_shuffle*.json``,
  ``items_ins_v2*.json``, optionally ``items_human_ins.json`` and ``reviews.json``), served instead of a
  generated catalog (:mod:`agentenv_webshop.original`);
- ``AGENTENV_WEBSHOP_GOALS``: ``synthetic`` (default, as AgentGym serves) or ``human``, with that data;
- ``AGENTENV_WEBSHOP_PRODUCTS`` (default 10000) and ``AGENTENV_WEBSHOP_SEED`` (default 0): the generated
  catalog's size and seed;
- ``AGENTENV_WEBSHOP_CACHE``: where search indexes are kept (default ``~/.cache/agentenv/webshop``;
  ``none`` keeps none).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentenv.env import cache_dir as env_cache_dir

from .catalog import Catalog, Product, generate_catalog
from .goals import Goal, generate_goals
from .search import SearchIndex

#: goals of a generated catalog, and how they split (the ranges of WebShop's baseline split of its goals:
#: test 0-499, valid 500-1499, train from 1500)
GENERATED_GOALS = 11_500
TEST, VALID = range(0, 500), range(500, 1500)


def splits_for(goals: int) -> dict[str, range]:
    """``train`` / ``valid`` / ``test`` over ``goals`` goals, by WebShop's fixed index ranges (cut short
    for fewer goals)."""
    return {
        "train": range(min(VALID.stop, goals), goals),
        "valid": range(min(VALID.start, goals), min(VALID.stop, goals)),
        "test": range(0, min(TEST.stop, goals)),
    }


@dataclass(frozen=True)
class ShopConfig:
    """Where a shop's catalog and goals come from."""

    products: int = 10_000
    seed: int = 0
    #: a folder of WebShop's original files; ``None``: a generated catalog
    data_dir: Path | None = None
    goal_kind: Literal["synthetic", "human"] = "synthetic"
    #: where the search index is kept (``None``: built anew each start)
    cache_dir: Path | None = field(default_factory=lambda: env_cache_dir("webshop"))

    @classmethod
    def from_env(cls) -> ShopConfig:
        env = os.environ
        data = env.get("AGENTENV_WEBSHOP_DATA")
        goal_kind = env.get("AGENTENV_WEBSHOP_GOALS", "synthetic")
        if goal_kind not in ("synthetic", "human"):
            raise ValueError(f"AGENTENV_WEBSHOP_GOALS must be synthetic or human, not {goal_kind!r}")
        cache = env.get("AGENTENV_WEBSHOP_CACHE")
        return cls(
            products=_positive_int(
                env.get("AGENTENV_WEBSHOP_PRODUCTS", "10000"), "AGENTENV_WEBSHOP_PRODUCTS"
            ),
            seed=_positive_int(
                env.get("AGENTENV_WEBSHOP_SEED", "0"), "AGENTENV_WEBSHOP_SEED", allow_zero=True
            ),
            data_dir=Path(data).expanduser() if data else None,
            goal_kind=goal_kind,  # type: ignore[arg-type]
            cache_dir=env_cache_dir("webshop")
            if cache is None
            else (None if cache.lower() == "none" else Path(cache).expanduser()),
        )


def _positive_int(text: str, name: str, allow_zero: bool = False) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer, not {text!r}") from None
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'at least 0' if allow_zero else 'positive'}, not {value}")
    return value


class Shop:
    """A catalog, its goals and its search index."""

    def __init__(
        self, catalog: Catalog, goals: list[Goal], index: SearchIndex, splits: dict[str, range]
    ) -> None:
        self.catalog = catalog
        self.goals = goals
        self.index = index
        self.splits = splits

    @classmethod
    def generated(cls, products: int = 10_000, seed: int = 0, cache_dir: Path | None = None) -> Shop:
        """A generated catalog of ``products`` products and its :data:`GENERATED_GOALS` goals."""
        catalog = generate_catalog(products, seed)
        goals = generate_goals(catalog, GENERATED_GOALS, seed)
        index = SearchIndex.cached([p.search_text() for p in catalog], cache_dir)
        return cls(catalog, goals, index, splits_for(len(goals)))

    @classmethod
    def from_config(cls, config: ShopConfig) -> Shop:
        if config.data_dir is None:
            return cls.generated(config.products, config.seed, config.cache_dir)
        from .original import load_original

        catalog, goals = load_original(config.data_dir, human_goals=config.goal_kind == "human")
        index = SearchIndex.cached([p.search_text() for p in catalog], config.cache_dir)
        return cls(catalog, goals, index, splits_for(len(goals)))

    def search(self, keywords: str) -> list[Product]:
        return [self.catalog[i] for i in self.index.search(keywords)]

    def goal(self, data_idx: int) -> Goal:
        return self.goals[data_idx]


# --- one shop per config per process ---------------------------------------------------------------------

_held: dict[ShopConfig, tuple[Shop, int]] = {}
_lock = threading.Lock()


@contextlib.contextmanager
def holding(config: ShopConfig) -> Iterator[Shop]:
    """Load the shop of ``config`` (once per process, however many hold it) and keep it while held."""
    with _lock:
        shop, holders = _held.get(config) or (Shop.from_config(config), 0)
        _held[config] = (shop, holders + 1)
    try:
        yield shop
    finally:
        with _lock:
            shop, holders = _held[config]
            if holders == 1:
                del _held[config]
            else:
                _held[config] = (shop, holders - 1)


def shop_for(config: ShopConfig) -> Shop:
    """The shop of ``config``: the one held, else one loaded now (and held for the life of the process:
    code that makes envs outside :func:`holding` still loads each shop once)."""
    with _lock:
        if config not in _held:
            _held[config] = (Shop.from_config(config), 1)
        return _held[config][0]
