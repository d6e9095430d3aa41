"""The one interface every environment implements, and the episodic base most of them build on.

An environment is a plain Python object: ``reset(data_idx)`` picks a task deterministically, ``step(text)``
advances it and never raises on a bad action.  Class attributes carry the metadata the server kit, the
clients and the trainers need (splits, reward range, success rule, round limit, the ReAct prompt, where it
is served, how AgentGym's own server for it spoke).

:class:`EpisodicEnv` owns what every environment would otherwise write again: the current task, the step
count and budget, the "no task yet" and "episode is over" guards, the last observation, the episode's
score and the base ``detail()`` fields.  A subclass writes ``start(data_idx)`` and ``act(action)``.

The server kit (:mod:`agentenv.server`) turns a class into a FastAPI app; :mod:`agentenv.session` runs one
in-process under the same rules.
"""

from __future__ import annotations

import contextlib
import numbers
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from agentenv.react import reply_format

#: seconds a call of a ``blocking = False`` env may take at most: it runs on the server's event loop, where
#: every other request (``/health`` included) waits for it
INLINE_CALL_S = 0.1


@dataclass
class StepResult:
    """What one ``step`` returns.

    ``reward`` is this step's reward; ``score`` the episode's score so far in the env's own units
    (``reward_range``), which evaluation reports and success is judged on (``None``: the sum of the
    rewards so far).  ``terminated``: the task ended (solved or failed); ``truncated``: the episode's
    step budget ran out first.  ``done`` is either, AgentGym's flag.
    """

    observation: str
    reward: float = 0.0
    terminated: bool = False
    score: float | None = None
    info: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class ExpertAction:
    """The expert's next move in the current state, with a short reason (used as the ReAct thought)."""

    thought: str
    action: str


@dataclass(frozen=True)
class Wire:
    """How AgentGym's own server for an env spoke, so that AgentGym's clients work unchanged (DESIGN.md §3).

    The project's uniform form is always answered beside it.
    """

    #: "id": ``/create`` -> ``{"id": n}``, bodies carry ``id``;  "env_idx": ``/create`` -> ``n``, bodies
    #: carry ``env_idx`` (which then names the session even where a body also has an ``id``)
    family: Literal["id", "env_idx"] = "id"
    #: the field AgentGym's ``/reset`` names the task index with (``data_idx``, ``game``, ``seed`` ...)
    reset_field: str = "data_idx"
    #: extra routes: route -> method name; ``GET /<route>?id=`` calls it with no arguments, ``POST /<route>``
    #: with the body's other fields as keyword arguments; a JSON-able result, or ``bytes`` served as a PNG
    queries: Mapping[str, str] = field(default_factory=dict)
    #: the queries also answered before a session's first reset (the others answer 409 until then)
    queries_before_reset: frozenset[str] = frozenset()
    #: ``/create``'s answer: "object" (``{"id", "env_idx", ...}``) or "int" (the bare id); default by family
    create_answer: Literal["object", "int"] | None = None
    #: ``/reset``'s answer in AgentGym's form: "object" (the uniform fields and the extras), "observation"
    #: (a bare string: the tool envs) or "pair" (``[observation, null]``: WebShop)
    reset_answer: Literal["object", "observation", "pair"] = "object"
    #: a step's ``reward`` in AgentGym's own form: "step" (this step's reward), "score" (the episode's score
    #: so far, as AgentGym's tool servers sent it and its client reads it) or "score_then_success" (that, and
    #: on the last step 1 or 0 for success, as AgentGym's TODO server sent it)
    step_reward: Literal["step", "score", "score_then_success"] = "step"
    #: the fields AgentGym's answers carry, per route ("create", "reset", "step"), which the conformance
    #: suite checks
    shapes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if unknown := sorted(set(self.shapes) - {"create", "reset", "step"}):  # a typo would go unchecked
            raise ValueError(f"Wire.shapes has routes {unknown}: its routes are 'create', 'reset' and 'step'")

    @property
    def creates_int(self) -> bool:
        return (self.create_answer or ("int" if self.family == "env_idx" else "object")) == "int"


class TaskRange(Sequence[int]):
    """A range of task indices less some left out (``start`` / ``stop`` as a ``range``'s).

    Left-out indices still play their task when reset; they just belong to no split (e.g. train tasks that
    repeat a test task).
    """

    def __init__(self, start: int, stop: int, excluded: Iterable[int] = ()) -> None:
        self.start, self.stop = start, stop
        self.excluded = frozenset(i for i in excluded if start <= i < stop)
        self._kept: tuple[int, ...] | None = None

    def _indices(self) -> tuple[int, ...]:
        if self._kept is None:
            self._kept = tuple(i for i in range(self.start, self.stop) if i not in self.excluded)
        return self._kept

    def __contains__(self, value: object) -> bool:
        # numbers.Integral: numpy's integers (a sampled index) are task indices too
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            return False
        return self.start <= value < self.stop and int(value) not in self.excluded

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices())

    def __len__(self) -> int:
        return self.stop - self.start - len(self.excluded)

    def __getitem__(self, item):
        return self._indices()[item]

    def __repr__(self) -> str:
        return f"TaskRange({self.start}, {self.stop}, excluded={len(self.excluded)})"


def cache_dir(name: str, override: str = "") -> Path:
    """Where env ``name`` keeps what it builds once (indexes, generated worlds): ``$<override>`` where that
    variable is set, else ``$XDG_CACHE_HOME/agentenv/<name>`` (``~/.cache/agentenv/<name>``)."""
    explicit = os.environ.get(override, "").strip() if override else ""
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "agentenv" / name


def info_splits(info: dict[str, Any]) -> dict[str, TaskRange]:
    """The splits of an ``/info`` answer (``splits`` less ``split_excluded``): what :meth:`Environment.metadata`
    wrote, read back."""
    excluded = info.get("split_excluded") or {}
    return {
        name: TaskRange(start, stop, excluded.get(name, ())) for name, (start, stop) in (info.get("splits") or {}).items()
    }


class Environment(ABC):
    """A text environment.  Subclasses set the class metadata and implement the abstract methods."""

    name: ClassVar[str]
    version: ClassVar[str] = "0.1.0"
    #: split name -> task index range, e.g. ``{"train": range(0, 1000), "test": range(1000, 1200)}``; a
    #: :class:`TaskRange` leaves some indices of its range out
    splits: ClassVar[dict[str, range | TaskRange]]
    reward_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    #: an episode succeeds when its final score reaches this value
    success_score: ClassVar[float] = 1.0
    #: reward threshold AgentEvol uses to keep an explored trajectory
    keep_threshold: ClassVar[float] = 0.99
    max_rounds: ClassVar[int] = 20
    #: rounds the expert agent gets when none are asked for (``None``: ``max_rounds``); for envs whose
    #: expert paths run longer than an agent's budget, such as ScienceWorld's gold paths
    expert_max_rounds: ClassVar[int | None] = None
    #: train tasks of it in a collected dataset (``agentenv collect --out-dataset``, like AgentTraj-L); set
    #: it lower where an episode is slow (a JVM, a browser)
    dataset_size: ClassVar[int] = 1000
    #: the ReAct instruction prompt shown as the first human turn; set it whole, or set ``task_text`` and
    #: it becomes ``task_text`` + the shared reply-format tail (:func:`agentenv.react.reply_format`)
    instruction: ClassVar[str]
    #: what the task is and how to act in it: the instruction before its reply-format tail
    task_text: ClassVar[str]
    #: what the tail asks for after ``Action:``
    action_prompt: ClassVar[str] = "your next action"

    # --- where it is served -------------------------------------------------------------------------
    #: the default port of its server (envs of one ``server`` group share it)
    port: ClassVar[int | None] = None
    #: a server group several envs of one package are served by together (AgentGym's "lmrlgym")
    server: ClassVar[str | None] = None
    #: its typed client, ``"module:Class"`` (an :class:`agentenv.client.EnvClient` subclass), if any
    client: ClassVar[str | None] = None
    #: how AgentGym's own server for this env spoke
    wire: ClassVar[Wire] = Wire()
    #: ``False`` for envs whose calls take at most milliseconds and never block: the server kit then runs them
    #: inline on its event loop instead of in a worker thread (a thread hop costs more than such a call, and
    #: Python code gains nothing from threads); the expert and env-specific queries always run in a thread.
    #: Envs doing I/O, talking to a subprocess (a JVM, a browser) or computing for long keep ``True``.
    #: ``check_env`` holds such an env to :data:`INLINE_CALL_S` a call, and a server warns of a slower one.
    blocking: ClassVar[bool] = True
    #: live sessions a server holds at most (``None``: the server's default); set it where a session is
    #: heavy (a JVM, a browser), from what one costs
    max_sessions: ClassVar[int | None] = None
    #: seconds one call (a step, a reset, an expert move ...) may take before the server ends its session
    #: (answered 504); envs whose calls block on a subprocess need it most
    call_deadline_s: ClassVar[float] = 60.0
    #: test tasks of it in a benchmark suite that stores none for it (:mod:`agentenv.controller.suites`);
    #: set it lower where an episode is slow (a JVM, a browser)
    suite_size: ClassVar[int] = 100

    @classmethod
    @contextlib.contextmanager
    def shared(cls) -> Iterator[None]:
        """What every instance of the class in one process shares (a search index, bundled web sites): set
        up on entry, freed on exit.  A server holds it for its lifetime, ``LocalEnv`` and ``check_env`` for
        theirs; instances may assume it is held."""
        yield

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "task_text" in cls.__dict__ and "instruction" not in cls.__dict__:
            cls.instruction = f"{cls.task_text}\n{reply_format(cls.action_prompt)}"

    # --- the interface ----------------------------------------------------------------------------
    @abstractmethod
    def reset(self, data_idx: int) -> str:
        """Start task ``data_idx`` (deterministic) and return the first observation."""

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply one action.  A malformed or illegal action returns an observation saying so, reward 0."""

    @abstractmethod
    def observation(self) -> str:
        """The current observation."""

    def available_actions(self) -> Any:
        """The actions legal now, where the env has a finite set; ``None`` otherwise."""
        return None

    @classmethod
    def all_actions(cls) -> list[str] | None:
        """Every action of the env, where the set does not depend on the state (served by
        ``GET /available_actions`` without a session, as AgentGym's Maze server did); ``None`` otherwise."""
        return None

    @abstractmethod
    def expert_action(self) -> ExpertAction:
        """The expert's next action in the current state (asked only while an episode runs)."""

    def task_type(self) -> str:
        """The current task's type, for per-type result tables."""
        return self.name

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        """Task ``data_idx``'s type without playing it (what ``task_type()`` will say), where the env can tell
        cheaply; ``None`` otherwise.  Used to sample tasks stratified by type (``agentenv eval --sample``)."""
        return None

    def detail(self) -> dict[str, Any]:
        """Debug detail about the current episode (served at ``GET /detail``)."""
        return {"task_type": self.task_type()}

    def create(self, /, **fields: Any) -> str | None:
        """Hook for ``POST /create`` bodies that carry AgentGym's own fields (TextCraft's ``goal``): start
        that task and return its observation, or ``None`` to leave the new session waiting for a reset.
        Raise ``ValueError`` / ``TypeError`` for a bad field (answered 422).  Keep ``self`` positional-only
        (``/``): a body may carry any key, ``"self"`` too."""
        return None

    def wire_extras(self, kind: Literal["create", "reset", "step"]) -> dict[str, Any]:
        """Extra fields AgentGym's answers carry for this env (e.g. SciWorld's ``task_name``)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op for envs holding nothing
        """Free everything the env holds (threads, subprocesses, browsers)."""

    # --- helpers ----------------------------------------------------------------------------------
    @classmethod
    def is_success(cls, score: float) -> bool:
        return score >= cls.success_score

    @classmethod
    def normalise(cls, score: float) -> float:
        """Map a score onto 0..1 using ``reward_range``."""
        lo, hi = cls.reward_range
        return (score - lo) / (hi - lo) if hi > lo else score

    @classmethod
    def split_of(cls, data_idx: int) -> str | None:
        for split, indices in cls.splits.items():
            if data_idx in indices:
                return split
        return None

    @classmethod
    def agentgym_task(cls, index: int) -> int:
        """The task that AgentGym's reset field (``Wire.reset_field``) names by ``index``: the same index,
        unless the env serves AgentGym's own tasks under other indices (loaded original task files)."""
        return index

    @classmethod
    def serves(cls, data_idx: int) -> bool:
        """Whether ``data_idx`` lies within a split's bounds (indices a split leaves out still play)."""
        return any(r.start <= data_idx < r.stop for r in cls.splits.values())

    @classmethod
    def served_beyond_splits(cls) -> str:
        """The indices beyond the splits' that :meth:`serves` plays too, in words for the refusal of one it
        does not (``"every index up to 999999"``); ``""`` when it plays the splits' alone."""
        return ""

    @classmethod
    def metadata(cls) -> dict[str, Any]:
        """The static facts served at ``GET /info`` (``split_excluded`` only where a split leaves some out)."""
        excluded = {k: sorted(r.excluded) for k, r in cls.splits.items() if getattr(r, "excluded", None)}
        return {
            "env": cls.name,
            "version": cls.version,
            "splits": {k: [r.start, r.stop] for k, r in cls.splits.items()},
            **({"split_excluded": excluded} if excluded else {}),
            "reward_range": list(cls.reward_range),
            "success_score": cls.success_score,
            "keep_threshold": cls.keep_threshold,
            "max_rounds": cls.max_rounds,
            "expert_max_rounds": cls.expert_max_rounds or cls.max_rounds,
            "instruction": cls.instruction,
        }


NO_TASK = "No task yet: reset first."
EPISODE_OVER = "The episode is over: reset to start a new task."


class EpisodicEnv(Environment):
    """An environment that plays one episode at a time: the base most environments build on.

    It keeps ``data_idx`` (the current task), ``steps``, ``score``, ``terminated`` / ``truncated`` and the
    last observation; answers a step before any task or after the episode's end without calling the
    subclass; ends an episode as truncated after ``max_steps`` actions; and serves the base ``detail()``.
    A subclass implements:

    - ``start(data_idx) -> str``: set up task ``data_idx``, return the first observation;
    - ``act(action) -> StepResult``: one action of a running episode: its observation, reward,
      ``terminated`` and info (``score`` only where it is not the sum of the rewards);
    - ``expert_action()``, and ``detail()`` (calling ``super().detail()``) for fields of its own.
    """

    #: actions per episode before it ends unsolved (truncated): a server-side guard, above any agent's
    #: ``max_rounds``; ``None``: the env has no budget of its own
    max_steps: ClassVar[int | None] = None

    def __init__(self) -> None:
        self.data_idx: int | None = None
        #: an episode has begun (by ``reset``, or by :meth:`begin` for a task given otherwise)
        self.started = False
        self.steps = 0
        self.score = 0.0
        self.terminated = False
        self.truncated = False
        self.last_observation = ""

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @abstractmethod
    def start(self, data_idx: int) -> str:
        """Set up task ``data_idx`` and return its first observation."""

    @abstractmethod
    def act(self, action: str) -> StepResult:
        """Apply one action to the running episode."""

    def reset(self, data_idx: int) -> str:
        return self.begin(self.start(data_idx), data_idx)

    def begin(self, observation: str, data_idx: int | None = None) -> str:
        """Count a new episode from here, with ``observation`` as its first; ``reset`` calls it, and so may
        a subclass that starts a task given otherwise than by index (AgentGym's create with a goal)."""
        self.data_idx, self.started = data_idx, True
        self.steps, self.score, self.terminated, self.truncated = 0, 0.0, False, False
        self.last_observation = observation
        return observation

    def step(self, action: str) -> StepResult:
        if not self.started:
            return StepResult(NO_TASK)
        if self.done:
            return StepResult(EPISODE_OVER, 0.0, self.terminated, self.score, truncated=self.truncated)
        self.steps += 1
        result = self.act(action)
        if not isinstance(result, StepResult):  # an AgentGym-style tuple, a bare string
            raise TypeError(f"{type(self).__name__}.act returned a {type(result).__name__}: it must return a StepResult")
        if not isinstance(result.reward, numbers.Real):
            raise TypeError(f"{type(self).__name__}.act returned a reward of type {type(result.reward).__name__}: "
                            "a number is needed")
        self.score = float(result.score) if result.score is not None else self.score + result.reward
        result.score = self.score
        if not result.done and self.max_steps is not None and self.steps >= self.max_steps:
            result.truncated = True
            result.observation += f"\nThe episode ends: {self.max_steps} actions used."
        self.terminated, self.truncated = result.terminated, result.truncated
        self.last_observation = result.observation
        return result

    def observation(self) -> str:
        return self.last_observation

    def detail(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type(),
            "data_idx": self.data_idx,
            "steps": self.steps,
            "observation": self.last_observation,
            "done": self.done,
            "terminated": self.terminated,
            "truncated": self.truncated,
            "score": self.score,
            "reward": self.score,  # AgentGym's detail calls the episode's score its reward
            "deleted": False,
        }


def check_metadata(env_cls: type[Environment]) -> None:
    """Refuse (``ValueError``) class attributes the kit cannot read as it reads them: checked when a server
    is made and by ``check_env`` (a mistake here otherwise shows as a 500 on ``/info``, an AttributeError
    deep in a check, or nonsense in ``agentenv list``)."""

    def _require(condition: bool, message: str) -> None:
        if not condition:
            raise ValueError(message)

    who = env_cls.__name__
    name = getattr(env_cls, "name", None)
    _require(isinstance(name, str) and name.isidentifier(), f"{who}.name must be a short identifier, not {name!r}")
    splits = getattr(env_cls, "splits", None)
    _require(isinstance(splits, dict) and bool(splits), f"{name}: splits must be a dict of split name -> range")
    for split, indices in splits.items():  # an empty one serves (a sample of a dataset without its train tasks)
        _require(
            isinstance(indices, (range, TaskRange)),
            f"{name}: splits[{split!r}] must be a range (or TaskRange), not {indices!r}",
        )
    instruction = getattr(env_cls, "instruction", "")  # missing when neither it nor task_text is set
    _require(isinstance(instruction, str) and bool(instruction), f"{name}: instruction must be a non-empty string")
    low_high = env_cls.reward_range
    _require(
        isinstance(low_high, (tuple, list)) and len(low_high) == 2 and low_high[0] < low_high[1],
        f"{name}: reward_range must be (low, high) with low < high, not {low_high!r}",
    )
    _require(
        low_high[0] < env_cls.success_score <= low_high[1],
        f"{name}: success_score {env_cls.success_score} lies outside reward_range {tuple(low_high)}",
    )
    for attribute in ("max_rounds", "dataset_size"):
        value = getattr(env_cls, attribute)
        _require(isinstance(value, int) and value > 0, f"{name}: {attribute} must be a positive int, not {value!r}")
