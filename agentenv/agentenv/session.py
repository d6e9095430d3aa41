"""``LocalSession``: one environment instance under the protocol's rules.

It is what a server serves behind each session id, and what in-process callers (tests, benchmarks,
``--local`` runs) use directly, so both follow the same rules: a task index outside every split is
refused (422), a step before a reset or after the episode's end too (409), a reply is reduced to its
action as the server does, and an env that raises ends its session (500, the env closed).  Its methods
answer with the wire models of :mod:`agentenv.protocol`, the same an HTTP client returns.
"""

from __future__ import annotations

import gc
import inspect
import logging
import math
import numbers
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from agentenv.env import Environment, ExpertAction, StepResult
from agentenv.protocol import (
    MAX_ACTION_CHARS,
    BadRequest,
    CreateResponse,
    EnvCrashed,
    EpisodeNotRunning,
    ResetResponse,
    SessionNotFound,
    StepResponse,
)
from agentenv.react import extract_action

log = logging.getLogger("agentenv.session")
T = TypeVar("T")


def without_collections(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with the garbage collector held off: a collection is the whole process's (0.14 s of CPU
    in a test run's, torch loaded), not to be timed as the call's."""
    collects = gc.isenabled()
    gc.disable()
    try:
        return fn(*args)
    finally:
        if collects:
            gc.enable()


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, even one whose ``str`` raises (py4j's, once its gateway is shut)."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Unfit(TypeError):
    """A value an env returned that the protocol cannot carry (its message names the field and type)."""


def _number(value: Any, field: str) -> float:
    # a float first (an ABC's check is slow); numpy's numbers are Real too, and a bool is 0 or 1
    if type(value) is not float and not isinstance(value, numbers.Real):
        raise _Unfit(f"{field} of type {type(value).__name__} (a number is needed)")
    if not math.isfinite(value):  # JSON has no NaN: the answer carried null, which no client reads
        raise _Unfit(f"{field} {float(value)} (a finite number is needed)")
    return float(value)


class _Answering:
    """:meth:`LocalSession._answering`'s context manager, a class: every step takes one, and a generator-based
    one costs three times as much."""

    __slots__ = ("method", "session")

    def __init__(self, session: LocalSession, method: str) -> None:
        self.session, self.method = session, method

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, traceback: Any) -> None:
        if not isinstance(exc, (ValueError, TypeError, AttributeError)):  # pydantic's ValidationError is a ValueError
            return
        session, what = self.session, _unfit(exc)
        log.error("%s session %d: its %s returned %s", session.name, session.id, self.method, what)
        session.close()
        raise EnvCrashed(f"{session.name} env's {self.method} returned {what}; session {session.id} closed") from exc


def _unfit(exc: Exception) -> str:
    """What was wrong with a value an env returned, for a message: the field and the type it had."""
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        return f"{field} of type {type(error['input']).__name__} ({error['msg'].lower()})"
    return str(exc) if isinstance(exc, _Unfit) else describe(exc)


def task_index(env_cls: type[Environment], value: Any, field: str = "data_idx") -> int:
    """``value`` as a task index of ``env_cls``, or :class:`BadRequest` saying why not."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{field} must be an integer task index, got {value!r}")
    if not env_cls.serves(value):
        splits = ", ".join(f"{k} {r.start}..{r.stop - 1}" for k, r in env_cls.splits.items())
        if beyond := env_cls.served_beyond_splits():
            raise BadRequest(f"task index {value} is not one {env_cls.name} plays: it plays its splits ({splits}) and {beyond}")
        raise BadRequest(f"task index {value} is outside every {env_cls.name} split ({splits})")
    return value


class LocalSession:
    """One env instance (made here unless given) and the state of its current episode."""

    def __init__(self, env_cls: type[Environment], session_id: int = 0, env: Environment | None = None) -> None:
        self.env_cls = env_cls
        self.id = session_id
        self.env = env if env is not None else env_cls()
        self.data_idx: int | None = None
        #: ``True`` between a reset and the end of its episode: only then may the session step
        self.running = False
        #: ``True`` once an episode has begun (a reset, or a create that started a task)
        self.started = False
        self.score = 0.0
        self.closed = False

    @property
    def name(self) -> str:
        return self.env_cls.name

    # --- the protocol ---------------------------------------------------------------------------------
    def create(self, data_idx: int | None = None, /, **fields: Any) -> CreateResponse:
        """What ``POST /create`` answers for this new session: with ``data_idx`` it is reset to that task;
        other ``fields`` go to the env's :meth:`~agentenv.env.Environment.create` hook (AgentGym's own create
        fields), whose refusal (``ValueError`` / ``TypeError``) is a 422 that closes the session."""
        if data_idx is not None:
            reset = self.reset(data_idx)
            return CreateResponse(**reset.model_dump())
        observation = self._call(lambda: self.env.create(**fields), rejects=(ValueError, TypeError))
        answer: dict[str, Any] = {"id": self.id, "env_idx": self.id}
        if observation is not None:
            self.running = self.started = True
            answer |= {"observation": observation, "done": False, "reward": 0.0, "score": 0.0}
        extras = self._call(self.env.wire_extras, "create")
        with self._answering("create"):
            return CreateResponse(**answer, **extras)

    def reset(self, data_idx: Any) -> ResetResponse:
        self._check_open()  # a closed session is a 404 whatever the body says, as a server answers
        index = task_index(self.env_cls, data_idx)
        observation = self._call(self.env.reset, index)
        self.data_idx, self.running, self.started, self.score = index, True, True, 0.0
        task_type, extras = self._call(self.env.task_type), self._call(self.env.wire_extras, "reset")
        with self._answering("reset"):
            return ResetResponse(
                id=self.id, env_idx=self.id, observation=observation, data_idx=index, task_type=task_type, **extras
            )

    def step(self, action: str) -> StepResponse:
        """Step with ``action``: a bare action or a whole ReAct reply (its action is taken)."""
        if len(action) > MAX_ACTION_CHARS:
            raise BadRequest(f"an action is at most {MAX_ACTION_CHARS} characters, not {len(action)}")
        if not action.isascii():
            try:
                action.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate: the server's body model refuses it too
                raise BadRequest(f"the action is not valid Unicode: {exc.reason} at {exc.start}") from None
        self._check_open()
        if not self.running:
            why = "reset it first" if self.data_idx is None else "the episode is done; reset it first"
            raise EpisodeNotRunning(f"{self.name} session {self.id} is not running: {why}")
        result = self._call(self.env.step, extract_action(action))
        extras = self._call(self.env.wire_extras, "step")
        with self._answering("step"):
            if not isinstance(result, StepResult):
                raise _Unfit(f"a {type(result).__name__} (a StepResult is needed)")
            reward = _number(result.reward, "reward")
            self.score = _number(result.score, "score") if result.score is not None else self.score + reward
            low, high = self.env_cls.reward_range
            if not low - 1e-9 <= self.score <= high + 1e-9:  # evaluation normalises and judges success on it
                raise _Unfit(f"score {self.score:g}, outside its reward_range ({low:g}, {high:g})")
            self.running = not result.done
            return StepResponse(
                observation=result.observation,
                reward=reward,
                score=self.score,
                done=result.done,
                terminated=bool(result.terminated),
                truncated=bool(result.truncated),
                success=self.env_cls.is_success(self.score),
                info=result.info,
                **extras,
            )

    def observation(self) -> str:
        self._check_open()
        observation = self._call(self.env.observation)
        with self._answering("observation"):
            if not isinstance(observation, str):
                raise _Unfit(f"observation of type {type(observation).__name__} (a string is needed)")
        return observation

    def available_actions(self) -> Any:
        self._check_open()
        return self._call(self.env.available_actions)

    def expert(self) -> ExpertAction:
        self._check_open()
        if not self.running:
            raise EpisodeNotRunning(f"{self.name} session {self.id} has no running episode")
        move = self._call(self.env.expert_action)
        with self._answering("expert_action"):
            if not isinstance(move, ExpertAction) or not isinstance(move.action, str):
                raise _Unfit(f"a {type(move).__name__} (an ExpertAction with an action string is needed)")
            if not isinstance(move.thought, str):
                raise _Unfit(f"a thought of type {type(move.thought).__name__} (a string is needed)")
        return move

    def detail(self) -> dict[str, Any]:
        self._check_open()
        found = self._call(self.env.detail)
        return {"id": self.id, "data_idx": self.data_idx, "done": not self.running} | found

    def query(self, route: str, /, **arguments: Any) -> Any:
        """An env-specific query (``Wire.queries``) with its ``arguments``; 409 before the first reset unless
        the env answers it then; arguments the method does not take are a 422."""
        method = self.env_cls.wire.queries.get(route)
        if method is None:
            raise BadRequest(f"{self.name} has no query {route!r} (it has: {', '.join(self.env_cls.wire.queries)})")
        self._check_open()
        if not self.started and route not in self.env_cls.wire.queries_before_reset:
            raise EpisodeNotRunning(f"{self.name} session {self.id} has no episode yet: reset it first")
        answer = getattr(self.env, method)
        try:  # a mistyped argument name is the client's mistake: refused before the env runs, the session kept
            inspect.signature(answer).bind(**arguments)
        except TypeError as exc:
            raise BadRequest(f"{self.name}'s {route} query: {exc}") from None
        return self._call(lambda: answer(**arguments), rejects=(TypeError,) if arguments else ())

    def close(self) -> None:
        """Free the env (its threads, subprocesses, browsers); closing twice is a no-op."""
        if self.closed:
            return
        self.closed = True
        try:
            self.env.close()
        except Exception:
            log.exception("closing %s session %d failed", self.name, self.id)

    def __enter__(self) -> LocalSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LocalSession({self.name!r}, id={self.id})"

    # --- plumbing -------------------------------------------------------------------------------------
    def _answering(self, method: str) -> _Answering:
        """Around building an answer from what the env returned: a value the protocol cannot carry (an
        observation that is not a string, a reward that is not a number) is the env's fault, a crash that
        closes the session, named so its author can find it."""
        return _Answering(self, method)

    def _check_open(self) -> None:
        if self.closed:
            raise SessionNotFound(f"{self.name} session {self.id} was closed")

    def _call(self, fn: Callable[..., T], *args: Any, rejects: tuple[type[Exception], ...] = ()) -> T:
        """Run env code; an exception ends this session (the env is closed).  One of a ``rejects`` type is
        the env refusing the request's input (422), any other a crash (500)."""
        try:
            value = fn(*args)
        except Exception as exc:
            if self.closed:  # closed under the call (a server's deadline): the env failing then is no crash
                raise SessionNotFound(f"{self.name} session {self.id} was closed while a call ran") from exc
            what = describe(exc)  # before closing: closing the env may leave the exception unprintable
            if not isinstance(exc, rejects):
                log.exception("%s session %d crashed", self.name, self.id)
            self.close()
            if isinstance(exc, rejects):
                raise BadRequest(f"{self.name} rejected the request: {what}") from exc
            raise EnvCrashed(f"{self.name} env crashed: {what}; session {self.id} closed") from exc
        if self.closed:  # the call returned, but the session was closed meanwhile: what it made is gone
            raise SessionNotFound(f"{self.name} session {self.id} was closed while a call ran")
        return value
