"""OpenEnv's protocol for one environment's session pool, mounted under ``/<env>/openenv``.

OpenEnv (PyPI ``openenv``, the Hugging Face / PyTorch framework TRL's docs train with) drives an environment
over a WebSocket at ``<base_url>/ws``: one connection is one session, and each message is answered with one
frame::

    -> {"type": "reset", "data": {"data_idx": 3}}       <- {"type": "observation", "data": {"observation": {...},
    -> {"type": "step", "data": {"action": "move up"}}                                "reward": r, "done": d}}
    -> {"type": "state"}                                 <- {"type": "state", "data": {"episode_id", "step_count", ...}}
    -> {"type": "close"}                                 (the session is closed, and so is the socket)
                                                         <- {"type": "error", "data": {"message", "code", "status"}}

``GET /schema`` publishes the action, observation and state types (:class:`AgentGymAction`,
:class:`AgentGymObservation`, :class:`AgentGymResetObservation`, :class:`AgentGymState`), ``GET /metadata``
the env's name and description, ``GET /health`` ``{"status": "healthy"}``.  ``POST /reset`` and ``POST /step``
are OpenEnv's stateless HTTP forms (each on a session of its own, closed afterwards, as OpenEnv's server
does): a step there is always refused, since a fresh session has no episode; episodes run over ``/ws``.

Behind the socket is the kit's own session (:class:`~agentenv.server.sessions.SessionPool`): the same
capacity (a full server answers ``CAPACITY_REACHED``), deadlines, idle reaping, bearer token and protocol
rules; a refusal is an error frame carrying the kit's message and HTTP status, and the session carries on
(it ends where the kit ends it: a crash, a deadline).  ``state`` names the kit's session id, so the uniform
routes (``GET /<env>/expert?id=``, ``/detail``) reach the same session.  A task is named by ``data_idx``;
without one, ``seed`` draws a task of ``split`` (default ``train``) deterministically, and neither draws one
at random, as a Gymnasium reset would.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Body, Depends, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from agentenv.env import Environment
from agentenv.protocol import BadRequest, EnvError, EpisodeNotRunning
from agentenv.session import LocalSession, describe

from .sessions import SessionPool, Slot

log = logging.getLogger(__name__)

# --- the types OpenEnv publishes (GET /schema) ----------------------------------------------------------


class AgentGymAction(BaseModel):
    """One action: a bare action (``move up``) or a whole ReAct reply, whose action is taken."""

    model_config = ConfigDict(extra="forbid")
    action: str = Field(description="a bare action or a whole ReAct reply (its last 'Action:' is taken)")
    metadata: dict[str, Any] = Field(default_factory=dict)


class AgentGymObservation(BaseModel):
    """What a step shows: the env's text and the episode's score so far (``reward`` and ``done`` travel beside
    it in OpenEnv's frames, as in its ``serialize_observation``)."""

    model_config = ConfigDict(extra="forbid")
    done: bool = False
    reward: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    text: str = Field(description="the observation")
    score: float = Field(0.0, description="the episode's score so far, in the env's reward_range")
    success: bool = False
    terminated: bool = Field(False, description="the task ended (solved or failed)")
    truncated: bool = Field(False, description="the episode's step budget ran out first")
    data_idx: int | None = None
    task_type: str = ""


class AgentGymResetObservation(AgentGymObservation):
    """The first observation of an episode, with the env's ReAct instruction (the prompt's first turn)."""

    instruction: str = ""


class AgentGymState(BaseModel):
    """The session's episode: OpenEnv's ``episode_id`` / ``step_count``, and the kit's session id."""

    model_config = ConfigDict(extra="allow")
    episode_id: str | None = None
    step_count: int = 0
    session_id: int | None = None
    data_idx: int | None = None
    done: bool = False


class ResetBody(BaseModel):
    """OpenEnv's reset parameters: ``data_idx`` names the task, else ``seed`` draws one of ``split``."""

    model_config = ConfigDict(extra="allow")
    data_idx: StrictInt | None = None
    seed: StrictInt | None = None
    split: str = "train"
    episode_id: str | None = Field(None, max_length=255)


class StepBody(BaseModel):
    """OpenEnv's HTTP step: ``{"action": {...}}``."""

    model_config = ConfigDict(extra="allow")
    action: dict[str, Any]


class OpenEnvResult(BaseModel):
    """OpenEnv's HTTP reset / step answer."""

    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False


class OpenEnvMetadata(BaseModel):
    name: str
    description: str
    version: str
    readme_content: str | None = None


class OpenEnvSchema(BaseModel):
    action: dict[str, Any]
    observation: dict[str, Any]
    reset_observation: dict[str, Any]
    state: dict[str, Any]


#: OpenEnv's error codes (``openenv.core.env_server.types.WSErrorCode``) for the kit's statuses
ERROR_CODES = {401: "UNAUTHORIZED", 413: "VALIDATION_ERROR", 422: "VALIDATION_ERROR", 429: "CAPACITY_REACHED"}


# --- one episode under the kit's rules ------------------------------------------------------------------


class OpenEnvSession:
    """A kit session as OpenEnv sees it: reset / step / state answers in OpenEnv's frames."""

    def __init__(self, pool: SessionPool, slot: Slot) -> None:
        self.pool, self.slot = pool, slot
        self.env_cls: type[Environment] = pool.env_cls
        self.step_count = 0
        self.episode_id: str | None = None
        self.task_type = ""

    async def call(self, method: Callable[[LocalSession], Any]) -> Any:
        slot = self.pool.get(self.slot.id)  # 404 (with why) if the kit ended it: reaped, evicted, crashed
        async with slot.use() as session:
            return await self.pool.run(slot, lambda: method(session))

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        body = ResetBody.model_validate(data)
        data_idx = task_of(self.env_cls, body)
        answer = await self.call(lambda session: session.reset(data_idx))
        self.step_count, self.task_type = 0, answer.task_type
        self.episode_id = body.episode_id or f"{self.slot.id}-{data_idx}"
        observation = AgentGymResetObservation(
            text=answer.observation, data_idx=data_idx, task_type=answer.task_type, instruction=self.env_cls.instruction
        )
        return {"observation": observation.model_dump(exclude={"reward", "done"}), "reward": 0.0, "done": False}

    async def step(self, data: dict[str, Any]) -> dict[str, Any]:
        action = AgentGymAction.model_validate(data)
        answer = await self.call(lambda session: session.step(action.action))
        self.step_count += 1
        observation = AgentGymObservation(
            text=answer.observation,
            score=answer.score,
            success=answer.success,
            terminated=answer.terminated,
            truncated=answer.truncated,
            data_idx=self.slot.session.data_idx,
            task_type=self.task_type,
            metadata=answer.info,
        )
        result = {"observation": observation.model_dump(exclude={"reward", "done"}), "reward": answer.reward, "done": answer.done}
        if answer.info:  # OpenEnv also puts the metadata beside the observation, for clients of the raw frames
            result["metadata"] = answer.info
        return result

    def state(self) -> dict[str, Any]:
        session = self.pool.get(self.slot.id).session
        return AgentGymState(
            episode_id=self.episode_id,
            step_count=self.step_count,
            session_id=session.id,
            data_idx=session.data_idx,
            done=session.started and not session.running,
        ).model_dump()


def task_of(env_cls: type[Environment], body: ResetBody) -> int:
    """The task a reset names: ``data_idx``; else one of ``split`` drawn with ``seed`` (at random without)."""
    if body.data_idx is not None:
        return body.data_idx  # bounds are the session's to check (422)
    if body.split not in env_cls.splits:
        raise BadRequest(f"{env_cls.name} has no split {body.split!r} (it has: {', '.join(env_cls.splits)})")
    tasks = env_cls.splits[body.split]
    return tasks[random.Random(body.seed).randrange(len(tasks))]


# --- the routes -----------------------------------------------------------------------------------------


def openenv_router(pool: SessionPool, auth: Callable[[Any], Awaitable[None]] | None = None) -> APIRouter:
    """OpenEnv's routes for one env's pool (mounted under ``/<env>/openenv``), behind the bearer-token check
    ``auth`` when the server has a token: a dependency of the HTTP routes, and checked by the WebSocket itself
    on its handshake's headers (a dependency that takes a request cannot run on a WebSocket)."""
    env_cls = pool.env_cls
    router = APIRouter()
    guarded = [Depends(auth)] if auth else []  # the HTTP routes'; the WebSocket checks for itself

    @router.get("/health")  # open, as the server's own /health: a health poller carries no token
    async def health() -> dict[str, str]:
        return {"status": "healthy"}

    @router.get("/metadata", response_model=OpenEnvMetadata, dependencies=guarded)
    async def metadata() -> OpenEnvMetadata:
        description = getattr(env_cls, "task_text", "") or env_cls.instruction
        return OpenEnvMetadata(name=env_cls.name, description=description, version=env_cls.version)

    @router.get("/schema", response_model=OpenEnvSchema, dependencies=guarded)
    async def schema() -> OpenEnvSchema:
        return OpenEnvSchema(
            action=AgentGymAction.model_json_schema(),
            observation=AgentGymObservation.model_json_schema(),
            reset_observation=AgentGymResetObservation.model_json_schema(),
            state=AgentGymState.model_json_schema(),
        )

    @router.get("/state", response_model=AgentGymState, dependencies=guarded)
    async def state() -> AgentGymState:
        """OpenEnv's HTTP state: a fresh session's (the WebSocket's ``state`` is its own session's)."""
        return AgentGymState()

    @router.post("/reset", response_model=OpenEnvResult, dependencies=guarded)
    async def reset(body: ResetBody = Body(default_factory=ResetBody)) -> Any:
        """OpenEnv's stateless HTTP reset: a task's first observation, on a session closed afterwards."""
        return await one_shot(pool, lambda episode: episode.reset(body.model_dump(exclude_none=True)))

    @router.post("/step", response_model=OpenEnvResult, dependencies=guarded)
    async def step(body: StepBody) -> Any:
        """OpenEnv's stateless HTTP step: a fresh session has no episode, so it is always refused (409)."""
        raise EpisodeNotRunning(
            f"{env_cls.name}: OpenEnv's HTTP /step runs on a fresh session, which has no episode; "
            "run episodes over the WebSocket <base_url>/ws (what OpenEnv's client does)"
        )

    @router.websocket("/ws")
    async def websocket(socket: WebSocket) -> None:
        await socket.accept()
        try:
            if auth is not None:
                await auth(socket)  # reads the handshake's Authorization header, as for a request
            episode = OpenEnvSession(pool, await pool.create())
        except EnvError as refused:  # 401, or 429 on a full server: said, then the socket is closed
            await socket.send_text(error_frame(refused))
            await socket.close()
            return
        try:
            await serve(socket, episode)
        except WebSocketDisconnect:
            pass
        except Exception as exc:  # a fault of the server's own: logged, and said in OpenEnv's frame before closing
            log.exception("%s OpenEnv session %d failed", env_cls.name, episode.slot.id)
            with contextlib.suppress(Exception):
                await socket.send_text(frame("error", {"message": f"session error: {describe(exc)}", "code": "SESSION_ERROR"}))
                await socket.close(code=1011)
        finally:
            await pool.close(episode.slot)

    return router


async def serve(socket: WebSocket, episode: OpenEnvSession) -> None:
    """Answer one connection's messages until it says ``close`` or goes away."""
    while True:
        received = await socket.receive()
        if received["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(received.get("code", 1000))
        raw = received.get("text")
        if raw is None:  # a binary frame
            await socket.send_text(frame("error", {"message": "a message is a JSON text frame, not binary", "code": "INVALID_JSON"}))
            continue
        try:
            message = json.loads(raw)
            if not isinstance(message, dict):
                raise ValueError("a message is a JSON object")
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply for Python
            await socket.send_text(frame("error", {"message": f"Invalid JSON: {exc}", "code": "INVALID_JSON"}))
            continue
        kind, data = message.get("type"), message.get("data") or {}
        try:
            if kind == "close":
                await socket.close()  # a normal close frame, as OpenEnv's server sends
                return
            if kind == "reset":
                answer = frame("observation", await episode.reset(data))
            elif kind == "step":
                answer = frame("observation", await episode.step(data))
            elif kind == "state":
                answer = frame("state", episode.state())
            else:
                answer = frame("error", {"message": f"Unknown message type: {kind!r}", "code": "UNKNOWN_TYPE"})
        except ValidationError as exc:
            answer = frame("error", {"message": f"Invalid message: {exc.errors(include_url=False)}",
                                     "code": "VALIDATION_ERROR", "status": 422})
        except EnvError as exc:
            answer = error_frame(exc)
        await socket.send_text(answer)
        if episode.slot.session.closed:  # the kit ended it (a crash, a deadline): so ends the connection
            await socket.close()
            return


def frame(kind: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "data": data})


def error_frame(exc: EnvError) -> str:
    """An error as OpenEnv's frame: the kit's message and status, and OpenEnv's code."""
    code = ERROR_CODES.get(exc.status, "EXECUTION_ERROR")
    return frame("error", {"message": exc.message, "code": code, "status": exc.status})


async def one_shot(pool: SessionPool, run: Callable[[OpenEnvSession], Awaitable[dict[str, Any]]]) -> OpenEnvResult:
    """Run ``run`` on a session of its own, closed afterwards (OpenEnv's stateless HTTP routes)."""
    slot = await pool.create()
    try:
        return OpenEnvResult(**await run(OpenEnvSession(pool, slot)))
    finally:
        await pool.close(slot)

