"""The one interface every environment implements.

An environment is a plain Python object: ``reset(data_idx)`` picks a task deterministically, ``step(text)``
advances it and never raises on a bad action.  Class attributes carry the metadata the server kit, the
clients and the trainers need (splits, reward range, success rule, round limit, the ReAct prompt).

The server kit (:mod:`agentenv.server`) turns a subclass into a FastAPI app; tests and benchmarks may use
the same object in-process.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal


@dataclass
class StepResult:
    """What one ``step`` returns.

    ``reward`` is this step's reward; ``score`` is the episode's score so far in the env's own units
    (``reward_range``), which is what evaluation reports and what success is judged on.
    """

    observation: str
    reward: float = 0.0
    done: bool = False
    score: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExpertAction:
    """The expert's next move in the current state, with a short reason (used as the ReAct thought)."""

    thought: str
    action: str


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
    #: the ReAct instruction prompt shown as the first human turn
    instruction: ClassVar[str]

    # --- AgentGym wire compatibility (see DESIGN.md §3) -------------------------------------------
    #: "id": ``/create`` -> ``{"id": n}``, bodies carry ``id``;  "env_idx": ``/create`` -> ``n``
    wire_family: ClassVar[Literal["id", "env_idx"]] = "id"
    #: the field AgentGym's ``/reset`` uses for the task index (``data_idx``, ``game``, ``seed`` ...)
    reset_index_field: ClassVar[str] = "data_idx"
    #: extra ``GET /<name>?id=`` routes: route name -> method name (no arguments, JSON-able result,
    #: or ``bytes`` served as ``image/png``)
    queries: ClassVar[dict[str, str]] = {}
    #: the queries also answered before a session's first reset (the others answer 409 until then)
    queries_before_reset: ClassVar[frozenset[str]] = frozenset()

    # --- serving ----------------------------------------------------------------------------------
    #: ``False`` for envs whose calls take microseconds and never block: the server kit then runs them
    #: inline on its event loop instead of in a worker thread (saving a thread hop per request).  Envs
    #: doing I/O, talking to a subprocess (a JVM, a browser) or computing for long keep ``True``.
    blocking: ClassVar[bool] = True

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

    @abstractmethod
    def expert_action(self) -> ExpertAction:
        """The expert's next action in the current state."""

    def task_type(self) -> str:
        """The current task's type, for per-type result tables."""
        return self.name

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
        """Extra fields AgentGym's responses carry for this env (e.g. SciWorld's ``task_name``)."""
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
    def serves(cls, data_idx: int) -> bool:
        """Whether ``data_idx`` lies within a split's bounds (indices a split leaves out still play)."""
        return any(r.start <= data_idx < r.stop for r in cls.splits.values())

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
