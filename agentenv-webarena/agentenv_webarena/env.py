"""WebArena: web tasks in a real browser, over the bundled sites or WebArena's own.

Each session has a browser context of its own; each episode clears it (cookies, site storage, tabs,
history) and opens the task's start URL(s), logged in where the task requires it, with the bundled sites'
state reset for this session alone.  The agent sees WebArena's observation
(the open tabs, the current tab's accessibility tree with element ids, the URL, the objective and its
previous action) and answers with an action of WebArena's grammar in triple backticks.  ``stop [answer]``
ends the episode and scores it with the task's evaluators (string match, URL match, program-HTML checks:
their product); every other step has reward 0.  An unparseable or impossible action changes nothing and
is answered with the reason, above the current observation.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, TaskRange, Wire

from . import runtime
from .actions import GRAMMAR, Action, InvalidAction, parse_action
from .browser import ActionFailed, BrowserSession, origin
from .configs import TAB_SEPARATOR, fill, urls_from_environment
from .evaluators import Evaluation, evaluate
from .expert import Expert
from .judge import Judge
from .sites import LOGINS, NAMESPACE_HEADER
from .tasks import BUNDLED_SITES, REAL_TASK_OFFSET, TaskTable

log = logging.getLogger("agentenv.webarena")

#: a config file or folder of WebArena's own configs to serve beside the bundled tasks
CONFIGS_ENV_VAR = "WEBARENA_CONFIGS"
#: "1": observations show only what lies in the 1280x720 viewport (WebArena's ``current_viewport_only``)
VIEWPORT_ENV_VAR = "WEBARENA_VIEWPORT_ONLY"

TASK_TEXT = f"""\
You are an agent completing a task in a web browser. Each round you see:
- the open tabs, and the current tab's accessibility tree: one line per element, "[id] role 'name'" \
followed by its properties, indented under the element that contains it;
- the current URL, the OBJECTIVE (your task) and your PREVIOUS ACTION.
Each reply gives one action, written in triple backticks, e.g. ```click [12]``` (a reply in WebArena's own \
style, ending "In summary, the next action I will perform is ```click [12]```", is understood too).
The actions:
- click [id]: click the element with that id; hover [id]: move the mouse over it;
- type [id] [text] [1|0]: replace the content of a field with the text, then press Enter unless the last \
field is [0] (for a drop-down list, type the option to choose);
- press [key_comb]: press keys, e.g. press [Control+a]; scroll [down] or scroll [up];
- new_tab, tab_focus [tab_index], close_tab; goto [url], go_back, go_forward;
- stop [answer]: finish. Give the answer when the objective asks a question, leave it empty otherwise, \
and answer "N/A" when the task cannot be done.
Only the ids of the current observation are valid. Only the environment's own web sites can be opened.
Actions: {GRAMMAR}."""


def _default_table() -> TaskTable:
    """The bundled tasks, and WebArena's configs where ``WEBARENA_CONFIGS`` names them."""
    configs = os.environ.get(CONFIGS_ENV_VAR, "").strip()
    if not configs:
        return TaskTable.load()
    try:
        return TaskTable.load(configs, urls_from_environment())
    except (OSError, ValueError) as exc:
        log.warning("%s=%s is not used: %s", CONFIGS_ENV_VAR, configs, exc)
        return TaskTable.load()


class EvaluationPage:
    """The session's current tab as the evaluators read it (calls run on the browser's thread)."""

    def __init__(self, session: BrowserSession) -> None:
        self.session = session

    @property
    def url(self) -> str:
        return self.session.url

    def goto(self, url: str) -> None:
        self.session.host.run(self.session.goto_for_evaluation(url))

    def evaluate(self, expression: str) -> Any:
        return self.session.host.run(self.session.evaluate(expression))

    def content(self) -> str:
        return self.session.host.run(self.session.content())


class WebArenaEnv(EpisodicEnv):
    """One WebArena episode at a time in its own browser context."""

    name: ClassVar[str] = "webarena"
    tasks: ClassVar[TaskTable] = _default_table()
    splits: ClassVar[dict[str, range | TaskRange]] = tasks.splits()
    max_rounds: ClassVar[int] = 25  # AgentGym's evaluation setting
    max_steps: ClassVar[int] = 30  # WebArena's own step limit
    task_text: ClassVar[str] = TASK_TEXT
    action_prompt: ClassVar[str] = "one action in triple backticks, e.g. ```click [12]```"
    port: ClassVar[int] = 36009
    wire: ClassVar[Wire] = Wire(
        family="env_idx",
        reset_field="idx",
        create_answer="object",
        shapes={
            "create": ("env_idx",),
            "reset": ("observation",),
            "step": ("observation", "reward", "terminated", "truncated", "info"),
        },
    )
    #: each live session holds a browser context of the shared Chromium (two renderer processes, 67 MiB of
    #: proportional memory measured on the bundled sites; a Chromium of its own would cost 158 MiB:
    #: docs/benchmarks.md, WebArena), so 64 sessions take about 4.3 GiB
    max_sessions: ClassVar[int] = 64
    viewport_only: ClassVar[bool] = os.environ.get(VIEWPORT_ENV_VAR, "") == "1"

    @classmethod
    @contextlib.contextmanager
    def shared(cls) -> Iterator[None]:
        """The process's Chromium and bundled sites, held for the block (sessions share them)."""
        runtime.acquire()
        try:
            yield
        finally:
            runtime.release()

    @classmethod
    def with_configs(
        cls, configs: str | Path, urls: dict[str, str] | None = None, *, viewport_only: bool | None = None
    ) -> type[WebArenaEnv]:
        """A WebArena env class that also plays WebArena's own configs (a file or folder), their sites at
        ``urls`` (site -> URL; bundled sites fill in the others)."""
        table = TaskTable.load(configs, urls)
        attrs = {"tasks": table, "splits": table.splits(), "__module__": cls.__module__}
        if viewport_only is not None:
            attrs["viewport_only"] = viewport_only
        return type(cls.__name__, (cls,), attrs)

    @classmethod
    def agentgym_task(cls, index: int) -> int:
        """AgentGym's ``idx`` is WebArena's ``task_id`` (its ``config_files/<idx>.json``): that config, when
        WebArena's configs are loaded; the bundled task ``idx`` otherwise."""
        return REAL_TASK_OFFSET + index if cls.tasks.real else index

    @classmethod
    def serves(cls, data_idx: int) -> bool:
        """A task index plays when it names a bundled task or a config whose sites have URLs."""
        return super().serves(data_idx) and cls.tasks.playable(data_idx)

    def __init__(self) -> None:
        super().__init__()
        self.runtime = runtime.acquire()
        self.namespace = uuid.uuid4().hex
        self.judge = Judge.from_environment()
        self.browser: BrowserSession | None = None
        self.config: dict[str, Any] | None = None
        self.tree = None
        self.expert: Expert | None = None
        self.previous_action = "None"
        self.closed = False
        # close() may come from another thread while start() runs (a call past the server's deadline): start
        # looks at `closed` again after making the session's site data, and takes a new browser context under
        # this lock only while open, dropping what it made if a close came meanwhile, so a close misses none
        self._lifecycle = threading.Lock()

    # --- starting a task --------------------------------------------------------------------------------
    def site_urls(self) -> dict[str, str]:
        """Site -> URL for this process: the bundled sites', overridden by the ones the user gave."""
        return self.runtime.sites.urls | self.tasks.urls

    def start(self, data_idx: int) -> str:
        urls = self.site_urls()
        config = fill(self.tasks.config(data_idx), urls)
        self._check_open()
        self.runtime.sites.reset(self.namespace)  # every task starts from the seeded sites
        if self.closed:  # closed during the reset (an HTTP call): its close may have dropped the site data before
            with contextlib.suppress(Exception):
                self.runtime.sites.drop(self.namespace)
            self._check_open()
        storage, geolocation = self._storage_state(config), config.get("geolocation") or None
        host = self.runtime.browser
        if self.browser is not None and (storage is None and geolocation is None and self.browser.made_with == (None, None)):
            host.run(self.browser.clear())  # the session's context, reused
        else:  # a saved login or a location is set when a context is made: a new one (WebArena's way)
            self._close_browser()
            browser = host.open_session(
                allowed={origin(url) for url in urls.values()},
                headers={NAMESPACE_HEADER: self.namespace},
                storage_state=storage,
                geolocation=geolocation,
            )
            with self._lifecycle:
                adopted = not self.closed
                if adopted:
                    self.browser = browser
            if not adopted:  # closed while the context was being made: it is nobody's, so it goes now
                with contextlib.suppress(Exception):  # the shared browser may have gone with the last session
                    host.run(browser.close())
                self._check_open()
        if config.get("require_login") and storage is None:
            self._log_in(config, urls)
        host.run(self.browser.open_tabs([u.strip() for u in config["start_url"].split(TAB_SEPARATOR)]))
        self.config = config
        self.expert = Expert(config["expert"]) if "expert" in config else None
        self.previous_action = "None"
        return self._observe()

    def _storage_state(self, config: dict[str, Any]) -> str | None:
        """A real config's saved login (``storage_state``, relative to WebArena's checkout), if present."""
        given = config.get("storage_state")
        if not given or self.tasks.root is None:
            return None
        path = (self.tasks.root / given).resolve()
        return str(path) if path.is_file() else None

    def _log_in(self, config: dict[str, Any], urls: dict[str, str]) -> None:
        """Sign in to each bundled site the task uses, through its own login form."""
        assert self.browser is not None
        for site in config.get("sites", []):
            if site in LOGINS and site in BUNDLED_SITES and urls.get(site) == self.runtime.sites.urls.get(site):
                path, form = LOGINS[site]
                status = self.runtime.browser.run(self.browser.post_form(urls[site] + path, form))
                if status >= 400:
                    raise RuntimeError(f"signing in to the bundled {site} site failed ({status})")

    # --- observing and acting ---------------------------------------------------------------------------
    def _observe(self) -> str:
        assert self.browser is not None and self.config is not None
        tabs, self.tree = self.runtime.browser.run(self.browser.observe(self.viewport_only))
        return (f"OBSERVATION:\n{tabs}\n\n{self.tree.text}\nURL: {self.browser.url}\n"
                f"OBJECTIVE: {self.config['intent']}\nPREVIOUS ACTION: {self.previous_action}")

    def act(self, action: str) -> StepResult:
        parsed = parse_action(action)
        if self.expert is not None and isinstance(parsed, Action):
            self.expert.taken(str(parsed))
        if isinstance(parsed, InvalidAction):
            return StepResult(f"Invalid action: {parsed.reason}\n\n{self._observe()}", info={"error": parsed.reason})
        if parsed.kind == "stop":
            return self._stop(parsed.answer)
        note = self._carry_out(parsed)
        self.previous_action = str(parsed)
        info = {"action": str(parsed), "url": self.browser.url if self.browser else ""}
        if note:
            info["error"] = note
        return StepResult((f"{note}\n\n" if note else "") + self._observe(), info=info)

    def _carry_out(self, action: Action) -> str:
        """Do an action in the browser; a note for the agent where it could not be done as asked."""
        assert self.browser is not None
        try:
            return self.runtime.browser.run(self.browser.act(action, self.tree))
        except ActionFailed as exc:
            return f"The action {action} failed: {exc}."
        except TimeoutError:
            return f"The action {action} timed out."
        except Exception as exc:  # Playwright's errors (a crashed page ...): the agent is told, the env goes on
            log.warning("webarena action %s failed: %s", action, exc)
            return f"The action {action} failed in the browser: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}."

    def _stop(self, answer: str) -> StepResult:
        assert self.browser is not None and self.config is not None
        try:
            result = evaluate(self.config, answer, EvaluationPage(self.browser), self.judge)
        except Exception as exc:  # the page could not be read (a crashed tab, a timeout): the task is not met
            log.warning("evaluating webarena task %s failed: %s", self.config["task_id"], exc)
            result = Evaluation(0.0, {"answer": answer, "error": f"the evaluation failed: {exc}"})
        text = f"You stopped with the answer {answer!r}. The task is evaluated: score {result.score:g}."
        return StepResult(text, reward=result.score, terminated=True, info={"evaluation": result.details})

    def expert_action(self) -> ExpertAction:
        if self.expert is None or self.tree is None:
            return ExpertAction("There is no scripted plan for this task (a WebArena config of your own); I stop.",
                                "```stop [N/A]```")
        move = self.expert.next_move(self.tree, self.viewport_only)
        return ExpertAction(move.thought, f"```{move.action}```")

    # --- describing -------------------------------------------------------------------------------------
    def task_type(self) -> str:
        return self.name if self.config is None else type_of(self.config)

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        """The sites and evaluator kind, read from the task's config (so ``--sample`` stratifies by them)."""
        try:
            return type_of(cls.tasks.config(data_idx))
        except ValueError:
            return None

    def detail(self) -> dict[str, Any]:
        found = super().detail()
        if self.config is not None:
            found |= {
                "task_id": self.config["task_id"],
                "intent": self.config["intent"],
                "sites": self.config.get("sites", []),
                "start_url": self.config["start_url"],
                "eval_types": self.config["eval"]["eval_types"],
                "url": self.browser.url if self.browser else None,
            }
        return found

    # --- closing ----------------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this WebArena env was closed")

    def _close_browser(self) -> None:
        with self._lifecycle:
            browser, self.browser = self.browser, None
        if browser is not None:
            try:
                self.runtime.browser.run(browser.close())
            except Exception:
                log.exception("closing a webarena browser context failed")

    def close(self) -> None:
        with self._lifecycle:
            if self.closed:
                return
            self.closed = True
        try:
            self._close_browser()
            with contextlib.suppress(Exception):
                self.runtime.sites.drop(self.namespace)
        finally:
            runtime.release()


def type_of(config: dict[str, Any]) -> str:
    """A config's task type: the sites it uses and what its first evaluator checks (``shopping/info``)."""
    kind = {"string_match": "info", "url_match": "navigation", "program_html": "content"}
    first = config["eval"]["eval_types"][0]
    return f"{'+'.join(config.get('sites', []))}/{kind.get(first, first)}"
