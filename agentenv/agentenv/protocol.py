"""Request and response models shared by the server kit and the clients (the project's uniform form).

Every request model accepts extra fields, so AgentGym's per-env bodies (``game``, ``seed``, ``item_id``,
``minecraft_dir`` ...) validate too; the kit reads the AgentGym names it knows and ignores the rest.
A session is named by ``id`` or ``env_idx`` (either works everywhere), a task by ``data_idx``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt

#: the environment variable a server reads its bearer token from, and a client sends when given none
TOKEN_ENV_VAR = "AGENTENV_TOKEN"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class SessionRef(_Lenient):
    """Names a session: ``id`` (the "id" family) or ``env_idx`` (the "env_idx" family)."""

    # strict: JSON's true, 1.0 or "1" name no session (pydantic would read them as 1)
    id: StrictInt | None = None
    env_idx: StrictInt | None = None


class CreateRequest(_Lenient):
    """``POST /create``; a ``data_idx`` also resets the new session to that task."""

    data_idx: StrictInt | None = None


class ResetRequest(SessionRef):
    data_idx: StrictInt | None = None


class StepRequest(SessionRef):
    action: str = Field(max_length=100_000)


class StepResponse(_Lenient):
    observation: str
    reward: float
    score: float
    done: bool
    success: bool
    info: dict[str, Any] = {}


class ResetResponse(_Lenient):
    id: int
    observation: str
    data_idx: int
    task_type: str
    done: bool = False
    reward: float = 0.0
    score: float = 0.0


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
    instruction: str
    live_sessions: int
    max_sessions: int


class CloseResponse(BaseModel):
    closed: bool
    id: int


class HealthResponse(_Lenient):
    status: str
    #: the server process's pid: a launcher tells its own server from another one on the same port
    pid: int | None = None


class ErrorBody(BaseModel):
    error: str
