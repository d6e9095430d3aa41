"""The wire, for servers and clients alike: request and response models, and one table of errors.

The models are the types on both sides: the server kit's routes validate what they answer against them,
the HTTP client parses answers into them, and in-process sessions (:mod:`agentenv.session`) return them.
Every model accepts extra fields, so AgentGym's per-env bodies (``game``, ``seed``, ``item_id``,
``minecraft_dir`` ...) validate too and AgentGym's extra answer fields (``deleted``, ``task_name``, ``state``
...) travel beside the uniform ones.  A session is named by ``id`` or ``env_idx``, a task by ``data_idx``.

Errors are one exception class per HTTP status (:data:`ERRORS`): the server raises them and answers
``status`` with ``{"error": message}``; the client turns that answer back into the same class.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt

#: the environment variable a server reads its bearer token from, and a client sends when given none
TOKEN_ENV_VAR = "AGENTENV_TOKEN"

#: the longest action (or whole ReAct reply) a step takes
MAX_ACTION_CHARS = 100_000


# --- requests -------------------------------------------------------------------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class SessionRef(_Lenient):
    """Names a session: ``id`` (the "id" family) or ``env_idx`` (the "env_idx" family)."""

    # strict: JSON's true, 1.0 or "1" name no session (pydantic would read them as 1)
    id: StrictInt | None = None
    env_idx: StrictInt | None = None


def written_in_digits(text: str) -> bool:
    """Whether a query string's value is a session id as the routes take it: ASCII digits only."""
    return text.isascii() and text.isdigit()


def _digits(value: Any) -> Any:
    if isinstance(value, str) and not written_in_digits(value):
        raise ValueError("a session id in a query is written in digits (3, not 3.0 or +3)")
    return value


#: a session id in a query string (``?id=3``): digits only, as a body's is a JSON integer (pydantic alone
#: reads ``1.0``, ``+1`` or `` 1`` as 1)
QueryId = Annotated[int | None, BeforeValidator(_digits)]


class CreateRequest(_Lenient):
    """``POST /create``; a ``data_idx`` also resets the new session to that task."""

    data_idx: StrictInt | None = None


class ResetRequest(SessionRef):
    data_idx: StrictInt | None = None


class StepRequest(SessionRef):
    action: str = Field(max_length=MAX_ACTION_CHARS)


# --- answers --------------------------------------------------------------------------------------------


class CreateResponse(_Lenient):
    """A new session; when the create started a task (``data_idx``, TextCraft's ``goal``) its first
    observation too."""

    id: int
    env_idx: int
    observation: str | None = None


class ResetResponse(_Lenient):
    id: int
    env_idx: int
    observation: str
    data_idx: int | None
    task_type: str
    done: bool = False
    reward: float = 0.0
    score: float = 0.0


class StepResponse(_Lenient):
    """One step's answer.  ``done`` is ``terminated or truncated`` (AgentGym's flag); ``terminated``: the
    task ended, ``truncated``: the step budget ran out (Gymnasium's distinction)."""

    observation: str
    reward: float
    score: float
    done: bool
    terminated: bool = False
    truncated: bool = False
    success: bool
    info: dict[str, Any] = Field(default_factory=dict)


class TaskTypesRequest(BaseModel):
    """``POST /task_types``: the tasks whose types are asked."""

    data_idx: list[StrictInt] = Field(max_length=1_000_000)


class TaskTypesResponse(BaseModel):
    #: each task's type, in the order asked; ``null`` where the env cannot tell without playing the task
    task_types: list[str | None]


class ExpertResponse(BaseModel):
    thought: str
    action: str


class InfoResponse(_Lenient):
    env: str
    version: str
    splits: dict[str, list[int]]
    #: indices within a split's ``[start, stop)`` that it leaves out (absent where none are)
    split_excluded: dict[str, list[int]] = Field(default_factory=dict)
    reward_range: list[float]
    success_score: float
    keep_threshold: float
    max_rounds: int
    expert_max_rounds: int
    instruction: str
    live_sessions: int
    max_sessions: int
    #: sessions the server ended (a call past its deadline) whose call or close has not returned: they
    #: still hold capacity
    ending_sessions: int = 0
    #: seconds one env call may run before the server ends its session (absent: no bound); a client that
    #: gives up sooner loses calls the server would have answered
    call_deadline_s: float | None = None


class CloseResponse(BaseModel):
    closed: bool
    id: int


class HealthResponse(_Lenient):
    status: str
    #: the server process's pid: a launcher tells its own server from another one on the same port
    pid: int | None = None


class ErrorBody(BaseModel):
    error: str


# --- errors ---------------------------------------------------------------------------------------------


class EnvError(Exception):
    """An environment refused or failed a request: ``status`` is the HTTP status it is answered with."""

    status: int = 0

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status

    def __str__(self) -> str:
        return f"[{self.status}] {self.message}" if self.status else self.message


class Unauthorized(EnvError):
    status = 401


class SessionNotFound(EnvError):
    status = 404


class EpisodeNotRunning(EnvError):
    """A step (or a query that needs an episode) before the first reset, or after the episode ended."""

    status = 409


#: the name the clients used before the error table was shared
EpisodeFinished = EpisodeNotRunning


class BodyTooLarge(EnvError):
    status = 413


class BadRequest(EnvError):
    """A request that is well-formed JSON but asks for something impossible (a task index outside every
    split, a field the env refuses)."""

    status = 422


class ServerFull(EnvError):
    status = 429


class EnvCrashed(EnvError):
    """The environment's own code raised; that session has been closed."""

    status = 500


class CallTimedOut(EnvError):
    """An environment call ran past the server's deadline; that session has been ended."""

    status = 504


class ServerUnreachable(EnvError):
    """No answer after every retry (connection refused, reset, timed out): no status.  ``env`` names the
    environment whose server it was, where the client knows it."""

    def __init__(self, message: str, env: str | None = None) -> None:
        super().__init__(message)
        self.env = env


class ServerHung(ServerUnreachable):
    """The server took the request but gave no answer in time: its process is stopped or stuck (a server
    that lives answers a call past its deadline with 504), so asking again would wait as long again."""


class ClientClosed(EnvError, RuntimeError):
    """A call through a client that was closed (by ``close()`` or its ``with`` block): no status.  Also a
    ``RuntimeError``, what it was before it had a name."""


class EnvNotServed(EnvError):
    """The server at a client's URL answers, but has no routes of the client's environment."""

    status = 404


#: status -> error class, for both sides
ERRORS: dict[int, type[EnvError]] = {
    cls.status: cls
    for cls in (
        Unauthorized, SessionNotFound, EpisodeNotRunning, BodyTooLarge, BadRequest, ServerFull, EnvCrashed, CallTimedOut
    )
}


def error_for(status: int, message: str) -> EnvError:
    """The error an answer with ``status`` stands for."""
    return ERRORS.get(status, EnvError)(message, status)
