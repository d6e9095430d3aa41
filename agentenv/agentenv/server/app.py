"""``create_app``: an :class:`~agentenv.env.Environment` class (or several) as a FastAPI app.

The routes are thin: each reads the wire (the uniform form and the env's AgentGym form, ``Environment.wire``),
finds its session, takes the session's lock and runs the session's method, which applies the protocol's
rules (:mod:`agentenv.session`) and answers with a wire model of :mod:`agentenv.protocol`, validated as it is
built.  Routes declare those models (the OpenAPI schema shows them) and send them as built: FastAPI's second
validation of an answer would cost more than the rest of a step (see docs/protocol.md).  For the same reason
the routes of every episode step come first and read their bodies in one pydantic call (:mod:`.routing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, Union

import anyio.to_thread
from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from agentenv.env import Environment, check_metadata
from agentenv.protocol import (
    BadRequest,
    CloseResponse,
    CreateRequest,
    CreateResponse,
    ErrorBody,
    ExpertResponse,
    HealthResponse,
    InfoResponse,
    QueryId,
    ResetRequest,
    ResetResponse,
    SessionRef,
    StepRequest,
    StepResponse,
    TaskTypesRequest,
    TaskTypesResponse,
)
from agentenv.session import task_index

from .auth import LoopbackOnly, bearer_auth, resolve_token
from .errors import install_error_handlers
from .limits import BodySizeLimit
from .openenv import openenv_router
from .routing import BodyRoute, add_routes
from .sessions import EVICT_IF_FULL, FORWARDED_HEADER, SessionPool, Slot

log = logging.getLogger("agentenv.server")

#: live sessions per environment where neither the server's options nor the env class set a number
DEFAULT_MAX_SESSIONS = 512
#: idle seconds after which a session is reaped: a day, longer than a training epoch between evaluations
DEFAULT_TTL_S = 86_400.0
#: idle seconds after which a full server may close a session to make room for a new client
DEFAULT_EVICT_IDLE_S = 600.0

#: the routes of every episode step, in order of how often they are called
HOT_ROUTES = ("/step", "/reset", "/create", "/close")

#: the error answers every session route may give, for the OpenAPI schema
ERROR_ANSWERS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": what}
    for status, what in {
        401: "missing or wrong bearer token",
        404: "no live session with that id",
        409: "no running episode: reset first",
        413: "request body too large",
        422: "malformed request, or a task index outside every split",
        429: "server full: close a session first",
        500: "the environment crashed; its session was closed",
        504: "an environment call ran past the deadline; its session was ended",
    }.items()
}


class StartupFailed(Exception):
    """An env's shared set-up failed at start-up (logged in one line): the server exits."""


class _WithoutStartupTraceback(logging.Filter):
    """uvicorn logs a failed start-up's traceback; a :class:`StartupFailed` has been said in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return StartupFailed.__name__ not in str(record.msg)


_WITHOUT_STARTUP_TRACEBACK = _WithoutStartupTraceback()


def create_app(
    envs: type[Environment] | Sequence[type[Environment]],
    *,
    max_sessions: int | None = None,
    ttl_s: float = DEFAULT_TTL_S,
    evict_idle_s: float | None = DEFAULT_EVICT_IDLE_S,
    deadline_s: float | None = None,
    token: str | None = None,
    max_body_bytes: int = 1_000_000,
    server_pid: int | None = None,
    loopback_only: bool = False,
) -> FastAPI:
    """Serve each environment class under ``/<env.name>``; a single environment also at the root.

    ``max_sessions`` caps live sessions per environment (default: each class's ``max_sessions``, else
    :data:`DEFAULT_MAX_SESSIONS`); ``ttl_s`` is the idle time after which a session is reaped (a day by
    default: AgentGym's trainers hold their sessions through a training epoch); a full server closes the
    least recently used session idle ``evict_idle_s`` or more for a new client (``None``: never);
    ``deadline_s`` bounds one env call (default: each class's ``call_deadline_s``); ``token`` (or
    ``AGENTENV_TOKEN``) requires ``Authorization: Bearer <token>``; ``/health`` answers ``server_pid`` (default:
    this process's; the workers of a ``--workers`` server answer their supervisor's); ``loopback_only`` (a
    server bound to a loopback address) refuses requests that name another host and browsers' WebSockets
    from other pages (:class:`~agentenv.server.auth.LoopbackOnly`).
    """
    env_classes = [envs] if isinstance(envs, type) else list(envs)
    if not env_classes:
        raise ValueError("create_app needs at least one environment class")
    for cls in env_classes:  # before any route is made: a mistake here was a 500 on every /info
        check_metadata(cls)
    names = [cls.name for cls in env_classes]
    if len(set(names)) != len(names):
        raise ValueError(f"environment names must be unique, got {names}")
    pools = {
        cls.name: SessionPool(
            cls,
            max_sessions=max_sessions or cls.max_sessions or DEFAULT_MAX_SESSIONS,
            ttl_s=ttl_s,
            evict_idle_s=evict_idle_s,
            deadline_s=deadline_s or cls.call_deadline_s,
        )
        for cls in env_classes
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # a thread for every session a call may hold (one each: their lock), beyond the shared 40: one client's
        # slow calls (SQL up to its time limit) on 40 sessions made every other session wait for a thread
        threads = anyio.to_thread.current_default_thread_limiter()
        threads.total_tokens = max(threads.total_tokens, sum(pool.max_sessions for pool in pools.values()) + 40)
        with contextlib.ExitStack() as shared:
            for cls in env_classes:  # what sessions of a class share (an index, bundled sites), set up once
                try:
                    await run_in_threadpool(shared.enter_context, cls.shared())
                except Exception as exc:  # a missing dependency or data: one line, not uvicorn's traceback
                    log.error("error: %s cannot start: %s", cls.name, exc or type(exc).__name__)
                    logging.getLogger("uvicorn.error").addFilter(_WITHOUT_STARTUP_TRACEBACK)  # added once
                    raise StartupFailed from None
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
    app = FastAPI(title="agentenv: " + ", ".join(names), lifespan=lifespan, **no_docs, **telemetry_options())
    app.state.pools = pools
    app.state.auth = auth  # also consulted by the validation-error handler (errors.py)
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    if loopback_only:
        app.add_middleware(LoopbackOnly)

    if len(pools) > 1:

        @app.get("/health", response_model=HealthResponse)
        async def health() -> dict[str, Any]:
            return {"status": "ok", "envs": names, "pid": server_pid or os.getpid()}

    @app.get("/", response_model=str, dependencies=dependencies)  # behind the token, as all but /health
    async def hello() -> str:  # AgentGym's servers answered their root; its visualisation asks it
        return f"This is environment {', '.join(names)}."

    rank: dict[int, int] = {}  # id of an added route -> its place in HOT_ROUTES
    for pool in pools.values():
        routes, openenv = env_router(pool).routes, openenv_router(pool, auth).routes
        for prefix in [f"/{pool.env_cls.name}"] + ([""] if len(pools) == 1 else []):
            app.add_api_route(f"{prefix}/health", _health(pool.env_cls.name, server_pid), methods=["GET"], response_model=HealthResponse)
            added = add_routes(app, routes, prefix, dependencies=dependencies, responses=ERROR_ANSWERS)
            rank |= {id(new): HOT_ROUTES.index(old.path) for old, new in zip(routes, added, strict=True) if old.path in HOT_ROUTES}
            # OpenEnv's protocol beside it (its WebSocket checks the token itself: see server/openenv.py)
            add_routes(app, openenv, f"{prefix}/openenv", responses=ERROR_ANSWERS)
    # Starlette tries an app's routes in order, a regular expression each: the routes of every episode go
    # first, before FastAPI's docs (behind two dozen others, a Maze step spent a third of its time routing)
    app.router.routes.sort(key=lambda route: rank.get(id(route), len(HOT_ROUTES)))
    return app


def telemetry_options() -> dict[str, Any]:
    """``FastAPI(**telemetry_options())``: FastAPI's own OpenTelemetry (0.16x) looks up the global providers on
    every request (~10 us, a tenth of a Maze step); a server decides once, when it is made: on if OpenTelemetry
    is set up then (``opentelemetry-instrument``, a provider set in code, ``FASTAPI_OTEL_AUTO_CONFIGURE``), else
    off.  A FastAPI without it (or whose check has moved) keeps its own behaviour."""
    try:
        from fastapi.telemetry._asgi import NativeTelemetry

        config = FastAPI()._telemetry  # FastAPI's defaults, as it reads them from the environment
        set_up = config["auto_configure"] or NativeTelemetry(config).enabled()
    except (ImportError, AttributeError, KeyError, TypeError):
        return {}
    return {} if set_up else {"telemetry": {"tracing": False, "metrics": False, "logs": False}}


def _health(env: str, server_pid: int | None) -> Any:
    async def health() -> dict[str, Any]:
        return {"status": "ok", "env": env, "pid": server_pid or os.getpid()}

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


def sent(answer: BaseModel | Any) -> Response:
    """An answer as JSON: a wire model through pydantic's serializer, anything else as JSON."""
    if isinstance(answer, BaseModel):
        return Response(answer.model_dump_json(), media_type="application/json")
    return JSONResponse(answer)


def env_router(pool: SessionPool) -> APIRouter:
    """The routes of one environment (mounted under ``/<env>``, and at the root for a single env)."""
    env_cls = pool.env_cls
    wire = env_cls.wire
    router = APIRouter(route_class=BodyRoute)

    def session_id(ref: SessionRef | None = None, id: int | None = None, env_idx: int | None = None) -> int | None:  # noqa: A002
        """The session a request names; in the "env_idx" family ``env_idx`` wins (there ``id`` may be a task)."""
        if ref is not None:
            id, env_idx = ref.id, ref.env_idx  # noqa: A001
        first, second = (env_idx, id) if wire.family == "env_idx" else (id, env_idx)
        return first if first is not None else second

    def slot_from_query(
        id: Annotated[QueryId, Query(description="session id")] = None,  # noqa: A002 - AgentGym's name
        env_idx: Annotated[QueryId, Query(description="session id, env_idx family")] = None,
    ) -> Slot:
        return pool.get(session_id(id=id, env_idx=env_idx))

    def task_of(body: CreateRequest | ResetRequest) -> tuple[int | None, bool]:
        """``(task index, named by AgentGym's field)`` of a body: ``data_idx``, else ``Wire.reset_field``; both,
        naming different tasks, are refused."""
        ours = None if body.data_idx is None else task_index(env_cls, body.data_idx)
        value = None if wire.reset_field == "data_idx" else (body.model_extra or {}).get(wire.reset_field)
        if wire.reset_field == "id" and isinstance(body, ResetRequest) and body.env_idx is not None:
            value = body.id  # AgentGym's tool envs: env_idx names the session, id the task
        if value is None:
            return ours, False
        if isinstance(value, int) and not isinstance(value, bool):
            value = env_cls.agentgym_task(value)
        theirs = task_index(env_cls, value, wire.reset_field)
        if ours is not None and ours != theirs:
            raise BadRequest(f"data_idx {ours} and {wire.reset_field} {theirs} name different tasks: send one of them")
        return theirs, ours is None

    @router.get("/info", response_model=InfoResponse)
    async def info() -> Any:
        return sent(
            InfoResponse(
                **env_cls.metadata(),
                live_sessions=len(pool),
                max_sessions=pool.max_sessions,
                ending_sessions=pool.ending,
                call_deadline_s=pool.deadline_s,
            )
        )

    @router.post("/task_types", response_model=TaskTypesResponse)
    async def task_types(body: TaskTypesRequest) -> Any:
        # an index the env does not serve is refused as a reset would refuse it (422), so a run can check its
        # task list here before it plays
        return sent(TaskTypesResponse(task_types=[env_cls.task_type_of(task_index(env_cls, i)) for i in body.data_idx]))

    @router.post("/create", response_model=int if wire.creates_int else CreateResponse)
    async def create(request: Request, body: CreateRequest | None = Body(None)) -> Any:
        body = body or CreateRequest()
        data_idx, _ = task_of(body)  # refused before a session is made
        # a create another worker passed on takes a free place only, until no worker has room: then each may
        # evict an idle session in turn (a free place anywhere comes before an eviction)
        forwarded = request.headers.get(FORWARDED_HEADER)
        slot = await pool.create(evict=forwarded is None or forwarded == EVICT_IF_FULL.decode())
        async with slot.use() as session:
            if data_idx is not None:
                answer = await pool.run(slot, session.create, data_idx)
            else:  # the env's own create fields (TextCraft's goal)
                answer = await pool.run(slot, lambda: session.create(**(body.model_extra or {})))
        return sent(answer.id if wire.creates_int else answer)

    reset_model: Any = {"observation": Union[ResetResponse, str], "pair": Union[ResetResponse, list]}.get(  # noqa: UP007
        wire.reset_answer, ResetResponse
    )

    @router.post("/reset", response_model=reset_model)
    async def reset(body: ResetRequest) -> Any:
        slot = pool.get(session_id(body))
        data_idx, agentgym_form = task_of(body)
        if data_idx is None:
            also = f" (or {wire.reset_field})" if wire.reset_field != "data_idx" else ""
            raise BadRequest(f"reset needs a task index: send data_idx{also}")
        async with slot.use() as session:
            answer = await pool.run(slot, session.reset, data_idx)
        if agentgym_form and wire.reset_answer == "observation":
            return sent(answer.observation)
        if agentgym_form and wire.reset_answer == "pair":
            return sent([answer.observation, None])
        return sent(answer)

    @router.post("/step", response_model=StepResponse)
    async def step(body: StepRequest) -> Any:
        slot = pool.get(session_id(body))
        async with slot.use() as session:
            answer = await pool.run(slot, session.step, body.action)
        if wire.step_reward != "step" and wire.family == "env_idx" and body.id is None:  # AgentGym's form
            reward = answer.score
            if wire.step_reward == "score_then_success" and answer.done:
                reward = float(answer.success)
            answer = answer.model_copy(update={"reward": reward})
        return sent(answer)

    @router.get("/observation", response_model=str)
    async def observation(slot: Slot = Depends(slot_from_query)) -> Any:
        async with slot.use() as session:
            return sent(await pool.run(slot, session.observation))

    @router.get("/available_actions")
    async def available_actions(
        id: Annotated[QueryId, Query(description="session id")] = None,  # noqa: A002 - AgentGym's name
        env_idx: Annotated[QueryId, Query(description="session id, env_idx family")] = None,
    ) -> Any:
        if id is None and env_idx is None and env_cls.all_actions() is not None:
            return sent(env_cls.all_actions())  # the env's whole action set, no session needed
        slot = slot_from_query(id, env_idx)
        async with slot.use() as session:
            return sent(await pool.run(slot, session.available_actions))

    @router.get("/detail", response_model=dict[str, Any])
    async def detail(slot: Slot = Depends(slot_from_query)) -> Any:
        async with slot.use() as session:
            return sent(await pool.run(slot, session.detail))

    @router.get("/expert", response_model=ExpertResponse)
    async def expert(slot: Slot = Depends(slot_from_query)) -> Any:
        async with slot.use() as session:
            move = await pool.run(slot, session.expert, offload=True)  # a planner: never inline
        return sent(ExpertResponse(thought=move.thought, action=move.action))

    @router.post("/close", response_model=CloseResponse)
    async def close(body: SessionRef) -> Any:
        slot = pool.get(session_id(body))
        await pool.close(slot)
        return sent(CloseResponse(closed=True, id=slot.id))

    for route in wire.queries:
        get, post = _query_routes(pool, route, slot_from_query, session_id)
        router.add_api_route(f"/{route}", get, methods=["GET"], responses=QUERY_ANSWERS)
        router.add_api_route(f"/{route}", post, methods=["POST"], responses=QUERY_ANSWERS)
    return router


#: a query may answer JSON or a PNG image (BabyAI's render)
QUERY_ANSWERS: dict[int | str, dict[str, Any]] = {200: {"content": {"application/json": {}, "image/png": {}}}}


def _query_routes(pool: SessionPool, route: str, slot_from_query: Any, session_id: Any) -> tuple[Any, Any]:
    """``GET /<route>?id=`` and ``POST /<route> {id, ...}``: the env's query method (the POST body's other
    fields are its arguments); bytes come back as a PNG image."""

    async def answer(slot: Slot, arguments: dict[str, Any]) -> Any:
        async with slot.use() as session:
            # an env's own query (BabyAI's render draws a PNG) may take long: never inline
            value = await pool.run(slot, lambda: session.query(route, **arguments), offload=True)
        if isinstance(value, bytes):
            return Response(value, media_type="image/png")
        return sent(value)

    async def get(slot: Slot = Depends(slot_from_query)) -> Any:
        return await answer(slot, {})

    async def post(body: SessionRef) -> Any:
        return await answer(pool.get(session_id(body)), dict(body.model_extra or {}))

    get.__name__, post.__name__ = f"{route}", f"{route}_post"
    return get, post
