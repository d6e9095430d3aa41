"""``create_app``: an :class:`~agentenv.env.Environment` class (or several) as a FastAPI app.

The routes are thin: each finds its session, takes the session's lock, runs env code through the pool
and shapes the answer.  Answers carry the project's uniform fields plus AgentGym's per-env fields
(``Environment.wire_extras``); requests accept both forms (see docs/protocol.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import APIRouter, Body, Depends, FastAPI, Query
from fastapi.responses import JSONResponse, Response

from agentenv.env import Environment
from agentenv.protocol import (
    CloseResponse,
    CreateRequest,
    ExpertResponse,
    HealthResponse,
    InfoResponse,
    ResetRequest,
    ResetResponse,
    SessionRef,
    StepRequest,
    StepResponse,
)
from agentenv.react import extract_action

from .auth import bearer_auth, resolve_token
from .errors import (
    BadRequest,
    EnvCrashed,
    EpisodeNotRunning,
    SessionNotFound,
    describe,
    install_error_handlers,
)
from .limits import BodySizeLimit
from .sessions import Session, SessionPool

log = logging.getLogger("agentenv.server")


def create_app(
    envs: type[Environment] | Sequence[type[Environment]],
    *,
    max_sessions: int = 512,
    ttl_s: float = 900.0,
    token: str | None = None,
    max_body_bytes: int = 1_000_000,
) -> FastAPI:
    """Serve each environment class under ``/<env.name>``; a single environment also at the root.

    ``max_sessions`` caps live sessions per environment, ``ttl_s`` is the idle time after which a
    session is reaped, ``token`` (or ``AGENTENV_TOKEN``) requires ``Authorization: Bearer <token>``.
    """
    env_classes = [envs] if isinstance(envs, type) else list(envs)
    if not env_classes:
        raise ValueError("create_app needs at least one environment class")
    names = [cls.name for cls in env_classes]
    if len(set(names)) != len(names):
        raise ValueError(f"environment names must be unique, got {names}")
    pools = {cls.name: SessionPool(cls, max_sessions=max_sessions, ttl_s=ttl_s) for cls in env_classes}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(_reap_forever(list(pools.values()), ttl_s))
        try:
            yield
        finally:
            reaper.cancel()
            for pool in pools.values():
                await pool.close_all()

    token = resolve_token(token)
    auth = bearer_auth(token) if token else None
    dependencies = [Depends(auth)] if auth else []
    # a browser on /docs cannot send the token, and the docs must not answer without it: none then
    no_docs: dict[str, Any] = {"docs_url": None, "redoc_url": None, "openapi_url": None} if token else {}
    app = FastAPI(title="agentenv: " + ", ".join(names), lifespan=lifespan, **no_docs)
    app.state.pools = pools
    app.state.auth = auth  # also consulted by the validation-error handler (errors.py)
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)

    if len(pools) > 1:

        @app.get("/health", response_model=HealthResponse)
        async def health() -> dict[str, Any]:
            return {"status": "ok", "envs": names, "pid": os.getpid()}

    for pool in pools.values():
        prefixes = [f"/{pool.env_cls.name}"] + ([""] if len(pools) == 1 else [])
        router = env_router(pool)
        for prefix in prefixes:
            app.add_api_route(f"{prefix}/health", _health(pool.env_cls.name), methods=["GET"], response_model=HealthResponse)
            app.include_router(router, prefix=prefix, dependencies=dependencies)
    return app


def _health(env: str) -> Any:
    async def health() -> dict[str, Any]:
        return {"status": "ok", "env": env, "pid": os.getpid()}

    return health


async def _reap_forever(pools: list[SessionPool], ttl_s: float) -> None:
    period = min(max(ttl_s / 4, 0.05), 30.0)
    while True:
        await asyncio.sleep(period)
        for pool in pools:
            try:
                await pool.reap()
            except Exception:  # the reaper must outlive any one bad close
                log.exception("reaping %s sessions failed", pool.env_cls.name)


def _task_index(env_cls: type[Environment], body: CreateRequest | ResetRequest) -> int | None:
    """The task index of a body: ``data_idx``, else AgentGym's name for it (``game``, ``seed`` ...)."""
    value = body.data_idx
    if value is None and body.model_extra:
        value = body.model_extra.get(env_cls.reset_index_field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{env_cls.reset_index_field} must be an integer task index, got {value!r}")
    if not env_cls.serves(value):
        splits = ", ".join(f"{k} {r.start}..{r.stop - 1}" for k, r in env_cls.splits.items())
        raise BadRequest(f"task index {value} is outside every {env_cls.name} split ({splits})")
    return value


def env_router(pool: SessionPool) -> APIRouter:
    """The routes of one environment (mounted under ``/<env>``, and at the root for a single env)."""
    env_cls = pool.env_cls
    router = APIRouter()

    def session_from_query(
        id: int | None = Query(None, description="session id"),  # noqa: A002 - AgentGym's name
        env_idx: int | None = Query(None, description="session id, env_idx family"),
    ) -> Session:
        return pool.get(id if id is not None else env_idx)

    async def call_env(
        session: Session,
        fn: Any,
        *args: Any,
        offload: bool = False,
        rejects: tuple[type[Exception], ...] = (),
    ) -> Any:
        """Run env code for a session whose lock is held; a crash ends that session alone.  An exception
        of a ``rejects`` type is the env refusing the request's input: 422, and the session is closed."""
        if session.closed:
            raise SessionNotFound(f"{env_cls.name} session {session.id} was closed")
        try:
            return await pool.call(fn, *args, offload=offload)
        except Exception as exc:
            what = describe(exc)  # before discarding: closing the env may leave the exception unprintable
            if isinstance(exc, rejects):
                await pool.discard(session)
                raise BadRequest(f"{env_cls.name} rejected the request: {what}") from exc
            log.exception("%s session %d crashed", env_cls.name, session.id)
            await pool.discard(session)
            raise EnvCrashed(f"{env_cls.name} env crashed: {what}; session {session.id} closed") from exc

    async def start(session: Session, data_idx: int) -> dict[str, Any]:
        observation = await call_env(session, session.env.reset, data_idx)
        session.data_idx, session.running, session.started, session.score = data_idx, True, True, 0.0
        return reset_answer(session, observation)

    def reset_answer(session: Session, observation: str) -> dict[str, Any]:
        answer = {
            "id": session.id,
            "env_idx": session.id,
            "observation": observation,
            "data_idx": session.data_idx,
            "task_type": session.env.task_type(),
            "done": False,
            "reward": 0.0,
            "score": 0.0,
        }
        return answer | session.env.wire_extras("reset")

    @router.get("/info", response_model=InfoResponse)
    async def info() -> dict[str, Any]:
        return env_cls.metadata() | {"live_sessions": len(pool), "max_sessions": pool.max_sessions}

    @router.post("/create", response_model=None)
    async def create(body: CreateRequest | None = Body(None)) -> Any:
        body = body or CreateRequest()
        data_idx = _task_index(env_cls, body)
        session = await pool.create()
        async with session.use():
            if data_idx is not None:
                answer = await start(session, data_idx)
            else:
                # the env's own create fields (TextCraft's goal); a bad one is the client's error, not a crash
                fields = body.model_extra or {}
                observation = await call_env(
                    session, lambda: session.env.create(**fields), rejects=(ValueError, TypeError)
                )
                answer = {"id": session.id}
                if observation is not None:
                    session.running = session.started = True
                    answer |= {"observation": observation, "done": False, "reward": 0.0, "score": 0.0}
            answer |= session.env.wire_extras("create")
        if env_cls.wire_family == "env_idx":
            return JSONResponse(session.id)
        return JSONResponse(answer)

    @router.post("/reset", response_model=ResetResponse)
    async def reset(body: ResetRequest) -> Any:
        session = pool.get(body.id if body.id is not None else body.env_idx)
        data_idx = _task_index(env_cls, body)
        if data_idx is None:
            raise BadRequest(f"reset needs a task index: send data_idx (or {env_cls.reset_index_field})")
        async with session.use():
            return JSONResponse(await start(session, data_idx))

    @router.post("/step", response_model=StepResponse)
    async def step(body: StepRequest) -> Any:
        session = pool.get(body.id if body.id is not None else body.env_idx)
        async with session.use():
            if not session.running and not session.closed:
                why = "reset it first" if session.data_idx is None else "the episode is done; reset it first"
                raise EpisodeNotRunning(f"{env_cls.name} session {session.id} is not running: {why}")
            result = await call_env(session, session.env.step, extract_action(body.action))
            session.score = float(result.score)
            session.running = not result.done
            answer = {
                "observation": result.observation,
                "reward": float(result.reward),
                "score": session.score,
                "done": bool(result.done),
                "success": env_cls.is_success(session.score),
                "info": result.info,
            }
            return JSONResponse(answer | session.env.wire_extras("step"))

    @router.get("/observation", response_model=str)
    async def observation(session: Session = Depends(session_from_query)) -> Any:
        async with session.use():
            return JSONResponse(await call_env(session, session.env.observation))

    @router.get("/available_actions")
    async def available_actions(session: Session = Depends(session_from_query)) -> Any:
        async with session.use():
            return JSONResponse(await call_env(session, session.env.available_actions))

    @router.get("/detail")
    async def detail(session: Session = Depends(session_from_query)) -> Any:
        async with session.use():
            found = await call_env(session, session.env.detail)
        return JSONResponse({"id": session.id, "data_idx": session.data_idx, "done": not session.running} | found)

    @router.get("/expert", response_model=ExpertResponse)
    async def expert(session: Session = Depends(session_from_query)) -> Any:
        async with session.use():
            if not session.running:
                raise EpisodeNotRunning(f"{env_cls.name} session {session.id} has no running episode")
            move = await call_env(session, session.env.expert_action, offload=True)  # a planner: never inline
        return JSONResponse({"thought": move.thought, "action": move.action})

    @router.post("/close", response_model=CloseResponse)
    async def close(body: SessionRef) -> Any:
        session = pool.get(body.id if body.id is not None else body.env_idx)
        await pool.close(session)
        return JSONResponse({"closed": True, "id": session.id})

    for route, method in env_cls.queries.items():
        before_reset = route in env_cls.queries_before_reset
        handler = _query_route(env_cls.name, method, before_reset, call_env, session_from_query)
        router.add_api_route(f"/{route}", handler, methods=["GET"])
    return router


def _query_route(env: str, method: str, before_reset: bool, call_env: Any, session_from_query: Any) -> Any:
    """``GET /<query>?id=``: call ``env.<method>()``; bytes come back as a PNG image.  Before the session's
    first reset: 409, unless the env answers this query ``before_reset``."""

    async def query(session: Session = Depends(session_from_query)) -> Any:
        async with session.use():
            if not session.started and not before_reset and not session.closed:
                raise EpisodeNotRunning(f"{env} session {session.id} has no episode yet: reset it first")
            value = await call_env(session, getattr(session.env, method))
        if isinstance(value, bytes):
            return Response(value, media_type="image/png")
        return JSONResponse(value)

    query.__name__ = method
    return query
