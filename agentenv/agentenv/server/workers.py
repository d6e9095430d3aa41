"""One environment server on several processes: ``agentenv serve ENV --workers N``.

An environment's step holds the GIL, so one server process uses one core.  With ``--workers N``:

- **One port, N processes.**  The supervisor (the process ``serve`` runs in) binds N listening sockets to
  the same host and port with ``SO_REUSEPORT``, so the kernel spreads new connections over them, and one
  unix socket per worker in a private directory (mode 0700).  It then starts N workers (``multiprocessing``,
  spawn); each serves the same app (:func:`~agentenv.server.app.create_app`) on its TCP socket and on its
  unix socket, with uvicorn.
- **Ids name their worker.**  Worker ``w`` of ``N`` hands out the ids ``≡ w (mod N)``, from its start time
  in microseconds on (:func:`worker_session_ids`), so ids still never repeat across restarts and stay
  JSON integers below 2**53.
- **Sessions never move.**  A request that names a session of another worker (a client with fresh
  connections, or one keep-alive pool for many sessions) is forwarded to its owner over the owner's unix
  socket, and the answer relayed as it is (:class:`WorkerRouter`).
- **Capacity is in total.**  Each worker holds its share of ``max_sessions``; a create on a full worker is
  passed to the others before it evicts an idle session or answers 429.  ``/info`` sums ``live_sessions``
  and ``max_sessions`` over the workers.  TTL reaping and call deadlines are each worker's own, over the
  sessions it owns.
- The supervisor stops every worker on SIGTERM or Ctrl-C, and all of them when one exits; a worker stops
  when its supervisor is gone (and the last one removes the private directory the supervisor cannot).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import multiprocessing
import os
import socket
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any
from urllib.parse import parse_qsl

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentenv.env import Environment
from agentenv.protocol import written_in_digits

from .limits import WHOLE_BODY, body_deadline, body_message
from .sessions import EVICT_IF_FULL, FORWARDED_HEADER, first_session_id

log = logging.getLogger("agentenv.server")

#: the header a forwarded request carries: the worker that gets it answers it itself
FORWARDED = FORWARDED_HEADER.encode()
#: headers that belong to one connection, not to the request or answer relayed
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"content-length", b"expect"}
#: answer headers uvicorn adds itself
ADDED_BY_SERVER = {b"date", b"server"}


def worker_session_ids(index: int, count: int) -> Iterator[int]:
    """The session ids worker ``index`` of ``count`` hands out: those ``≡ index (mod count)``, from the
    microseconds since the epoch when it started on (see :func:`~agentenv.server.sessions.first_session_id`)."""
    start = first_session_id()
    return itertools.count(start + (index - start) % count, count)


def owner_of(session_id: int, count: int) -> int:
    """The worker that owns (or would own) a session id."""
    return session_id % count


def share(total: int, index: int, count: int) -> int:
    """Worker ``index``'s share of ``total`` places: the shares of all workers add up to ``total``."""
    return total // count + (index < total % count)


class WorkerRouter:
    """The ASGI app of worker ``index``: its own requests go to ``app``; a request that names another worker's
    session is forwarded to that worker; ``/create`` on a full worker tries the others first; ``/info``
    counts every worker's sessions.  ``peers`` are the workers' unix socket paths, by index.  It gives
    ``app``'s session pools this worker's share of their capacity and its ids."""

    def __init__(self, app: Any, index: int, peers: Sequence[str], max_body_bytes: int = 1_000_000) -> None:
        self.app: ASGIApp = app
        self.index = index
        self.peers = list(peers)
        self.max_body_bytes = max_body_bytes
        self.pools = app.state.pools  # env name -> SessionPool
        self.single = next(iter(self.pools)) if len(self.pools) == 1 else None
        self._clients: dict[int, httpx.AsyncClient] = {}
        #: the server's capacity per env, over all workers; this worker holds its share, and its own ids
        self.capacity = {name: pool.max_sessions for name, pool in self.pools.items()}
        #: per env, the fields that name a session, first the one that wins (in the "env_idx" family ``env_idx``)
        self.id_fields = {name: ("env_idx", "id") if pool.env_cls.wire.family == "env_idx" else ("id", "env_idx")
                          for name, pool in self.pools.items()}
        for pool in self.pools.values():
            pool.max_sessions = share(pool.max_sessions, index, len(self.peers))
            pool.ids = worker_session_ids(index, len(self.peers))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or any(name == FORWARDED for name, _ in scope["headers"]):
            await self.app(scope, receive, send)  # lifespan, or a request another worker passed on
            return
        env, route = self._route(scope["path"])
        if env is None or route in ("", "/", "/health"):
            await self.app(scope, receive, send)
            return
        body, receive, complete = await _read_body(scope, receive, self.max_body_bytes)
        if not complete:  # too large or too slow (the app answers 413 or 408) or the client went away
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if route == "/info" and method == "GET":
            await self._info(scope, send)
            return
        if route == "/create" and method == "POST":
            await self._create(env, scope, receive, body, send)
            return
        session = self._session_id(env, scope, body)
        owner = self.index if session is None else owner_of(session, len(self.peers))
        if owner == self.index:
            await self.app(scope, receive, send)
        else:
            await (await self._request(owner, scope, body)).send_to(send)

    # --- what a request names ---------------------------------------------------------------------
    def _route(self, path: str) -> tuple[str | None, str]:
        """``(env, route under its mount)``: ``/maze/step`` is ``("maze", "/step")``; a single env's ``/step``
        is its own."""
        head, _, rest = path.lstrip("/").partition("/")
        if head in self.pools:
            return head, "/" + rest if rest else ""
        return self.single, path

    def _session_id(self, env: str, scope: Scope, body: bytes) -> int | None:
        """The session a request names, as the routes read it (``SessionRef``): ``id`` or ``env_idx`` from
        the JSON body, else from the query string; in the "env_idx" family ``env_idx`` wins."""
        fields: dict[str, Any] = {}
        if body:
            with contextlib.suppress(ValueError, RecursionError):  # the route answers 422 for it
                parsed = json.loads(body)
                fields = parsed if isinstance(parsed, dict) else {}
        if not fields:
            for key, value in parse_qsl(scope["query_string"].decode("latin-1")):
                if written_in_digits(value):  # else the route answers 422 (protocol.QueryId)
                    fields[key] = int(value)
        for key in self.id_fields[env]:
            value = fields.get(key)
            if value is not None:
                return value if isinstance(value, int) and not isinstance(value, bool) else None
        return None

    async def _create(self, env: str, scope: Scope, receive: Receive, body: bytes, send: Send) -> None:
        """A new session is made here while this worker has room; when it is full (or fills up while the
        request waits), on the other workers in turn: a free place anywhere comes before evicting an idle
        session, here first, then on the other workers.  429 when every worker refused."""
        pool = self.pools[env]
        tried_here = pool.held < pool.max_sessions
        if tried_here:
            answer = await self._answer_here(scope, receive)
            if answer.status != 429:
                await answer.send_to(send)
                return
        count = len(self.peers)
        for worker in [(self.index + k) % count for k in range(1, count)]:
            answer = await self._request(worker, scope, body)
            if answer.status != 429:
                await answer.send_to(send)
                return
        if not tried_here:
            answer = await self._answer_here(scope, receive)
            if answer.status != 429:
                await answer.send_to(send)
                return
        evicting = pool.evict_idle_s is not None
        for worker in [(self.index + k) % count for k in range(1, count) if evicting]:  # an idle session there
            answer = await self._request(worker, scope, body, evict=True)
            if answer.status != 429:
                await answer.send_to(send)
                return
        message = (f"server full: {self.capacity[env]} {env} sessions over {count} workers (some may have ended past "
                   "the deadline and still be freeing: /info's ending_sessions); close one first")
        await _Answer.of_json(429, {"error": message}).send_to(send)

    # --- talking to the other workers -----------------------------------------------------------------
    def _client(self, worker: int) -> httpx.AsyncClient:
        if worker not in self._clients:
            # A connection per request: a kept-alive one may be closed by the worker (its keep-alive timeout) just
            # as a request goes out, and a POST must never be sent twice.  On a unix socket a connection is cheap.
            # No timeout: the owner bounds its env calls with its own deadline (504).
            self._clients[worker] = httpx.AsyncClient(
                transport=httpx.AsyncHTTPTransport(uds=self.peers[worker]), base_url="http://worker", timeout=None,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=0),
            )
        return self._clients[worker]

    async def _answer_here(self, scope: Scope, receive: Receive) -> _Answer:
        """This worker's own answer to a request, kept to relay (or not)."""
        start: Message = {}
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        return _Answer(start["status"], list(start.get("headers", [])), b"".join(chunks))

    async def _request(self, worker: int, scope: Scope, body: bytes, evict: bool = False) -> _Answer:
        """The request as received, sent to ``worker``, and its answer as sent (an error answer of our own
        when the worker does not answer: it is shutting down).  A create there takes a free place only, or
        with ``evict`` may close an idle session for it."""
        mark = EVICT_IF_FULL if evict else b"1"
        headers = [(k, v) for k, v in scope["headers"] if k not in HOP_BY_HOP] + [(FORWARDED, mark)]
        raw_path = scope.get("raw_path") or scope["path"].encode()
        if scope["query_string"]:
            raw_path += b"?" + scope["query_string"]
        client = self._client(worker)
        request = client.build_request(scope["method"], httpx.URL("http://worker", raw_path=raw_path),
                                       headers=headers, content=body)
        try:
            answer = await client.send(request, stream=True)
            try:
                content = b"".join([chunk async for chunk in answer.aiter_raw()])  # as sent, not decoded
            finally:
                await answer.aclose()
        except httpx.TransportError as exc:
            log.warning("worker %d could not reach worker %d: %r", self.index, worker, exc)
            message = f"worker {worker} of this server did not answer ({type(exc).__name__}): it may be shutting down"
            return _Answer.of_json(503, {"error": message})
        return _Answer(answer.status_code, answer.headers.raw, content)

    async def _info(self, scope: Scope, send: Send) -> None:
        """Every worker's ``/info``; the first answer with the session counts summed."""
        answers = await asyncio.gather(*(self._request(w, scope, b"") for w in range(len(self.peers))))
        failed = next((a for a in answers if a.status != 200), None)
        if failed is not None:
            await failed.send_to(send)
            return
        bodies = [json.loads(a.body) for a in answers]
        counts = ("live_sessions", "max_sessions", "ending_sessions")
        info = bodies[self.index] | {k: sum(b.get(k, 0) for b in bodies) for k in counts}
        await _Answer.of_json(200, info).send_to(send)


@dataclass
class _Answer:
    """An HTTP answer read whole, to relay."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes

    @classmethod
    def of_json(cls, status: int, value: Any) -> _Answer:
        return cls(status, [(b"content-type", b"application/json")], json.dumps(value).encode())

    async def send_to(self, send: Send) -> None:
        headers = [(k, v) for k, v in self.headers if k.lower() not in HOP_BY_HOP | ADDED_BY_SERVER]
        headers.append((b"content-length", str(len(self.body)).encode()))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


async def _read_body(scope: Scope, receive: Receive, limit: int) -> tuple[bytes, Receive, bool]:
    """Read a request's body up to ``limit`` bytes: ``(body, a receive that replays it, whether it was read
    whole)``.  A body over the limit, or not come by its deadline, is left to the app (its
    :class:`~agentenv.server.limits.BodySizeLimit` answers 413, or 408 at the same deadline).  A body read
    whole is also left in the scope, where the app's ``BodySizeLimit`` takes it rather than read it again;
    once it has, the replay passes on what comes next (the disconnect)."""
    messages: list[Message] = []
    size = 0
    complete = False
    deadline = body_deadline(scope)
    while size <= limit:
        message = await body_message(receive, deadline)
        if message is None:
            break
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            complete = size <= limit
            break
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
    if complete:
        scope[WHOLE_BODY] = body
    pending = list(messages)

    async def replay() -> Message:
        if pending and (not complete or WHOLE_BODY in scope):  # a GET's body, say, stays in the scope
            return pending.pop(0)
        return await receive()

    return body, replay, complete


# --- processes ---------------------------------------------------------------------------------------------
@dataclass
class _WorkerSpec:
    """What a worker process needs (pickled to it: env classes by reference, the token not on a command line)."""

    envs: list[type[Environment]]
    index: int
    peers: list[str]
    supervisor_pid: int
    log_level: str
    settings: dict[str, Any] = field(default_factory=dict)
    announce: str | None = None  # what worker 0 prints once it listens


def _run_worker(spec: _WorkerSpec, tcp: socket.socket, unix: socket.socket) -> None:
    """A worker process: the app of every env, its share of the capacity, its ids, served on both sockets."""
    from .app import create_app
    from .connections import server_config
    from .launcher import announcing_server, run_until_stopped, stop_when_orphaned

    stop_when_orphaned(spec.supervisor_pid, on_orphaned=functools.partial(_remove_socket, spec.peers[spec.index]))
    app = create_app(spec.envs, server_pid=spec.supervisor_pid, **spec.settings)
    router = WorkerRouter(app, spec.index, spec.peers, spec.settings.get("max_body_bytes", 1_000_000))
    config = server_config(router, log_level=spec.log_level, access_log=False, lifespan="on")
    run_until_stopped(announcing_server(config, spec.announce if spec.index == 0 else None), sockets=[tcp, unix])


def _remove_socket(path: str) -> None:
    """Remove a worker's unix socket, and its folder once empty: a killed supervisor cannot (the last
    worker to stop removes the folder)."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))


def _listen_tcp(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048, reuse_port=True)


def _shared_with_another_process(sock: socket.socket, ours: int) -> bool:
    """Whether another process listens with ``SO_REUSEPORT`` on ``sock``'s address too, where this server has
    ``ours`` sockets: two servers started at once both pass the check that the port is free, then share it."""
    import psutil

    address = sock.getsockname()[:2]
    return sum(
        c.status == psutil.CONN_LISTEN and tuple(c.laddr) == address for c in psutil.net_connections("tcp")
    ) > ours


def _close(sockets: list[tuple[socket.socket, socket.socket]]) -> None:
    for pair in sockets:
        for sock in pair:
            sock.close()


def _listen_unix(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(2048)
    return sock


def serve_workers(
    envs: Sequence[type[Environment]],
    *,
    host: str,
    port: int,
    workers: int,
    log_level: str = "warning",
    stop_timeout_s: float = 15.0,
    announce: str | None = None,
    **settings: Any,
) -> None:
    """Serve ``envs`` on ``host:port`` with ``workers`` processes until interrupted (SIGTERM, Ctrl-C) or until
    a worker exits (then :class:`WorkerExited`); ``settings`` are :func:`~agentenv.server.app.create_app`'s.
    It runs in the main thread (it handles SIGTERM, whose handlers it puts back when it returns)."""
    from agentenv.processes import sigterm_interrupts

    with sigterm_interrupts():
        _supervise(envs, host, port, workers, log_level, stop_timeout_s, settings, announce)


class WorkerExited(RuntimeError):
    """A worker of ``serve --workers N`` exited by itself: the server stopped."""


def _supervise(envs: Sequence[type[Environment]], host: str, port: int, workers: int, log_level: str,
               stop_timeout_s: float, settings: dict[str, Any], announce: str | None) -> None:
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads or locks inherited
    with tempfile.TemporaryDirectory(prefix="agentenv-workers-") as private:  # mode 0700: only this user
        peers = [os.path.join(private, f"{w}.sock") for w in range(workers)]
        sockets = [(_listen_tcp(host, port), _listen_unix(path)) for path in peers]
        if _shared_with_another_process(sockets[0][0], workers):
            _close(sockets)
            from .launcher import CannotServe

            raise CannotServe(f"port {port} on {host} is already in use (another server bound it as this one "
                              "started): stop what listens there, or give --port")
        procs = [
            spawn.Process(
                target=_run_worker, name=f"agentenv-worker-{w}",
                args=(_WorkerSpec(list(envs), w, peers, os.getpid(), log_level, settings, announce), *sockets[w]),
            )
            for w in range(workers)
        ]
        try:
            for proc in procs:
                proc.start()
            _close(sockets)  # the workers have their own copies
            ended = wait([p.sentinel for p in procs])
            gone = next(p for p in procs if p.sentinel in ended)
            gone.join()
            raise WorkerExited(f"{gone.name} exited with status {gone.exitcode}; the server stopped")
        except KeyboardInterrupt:
            pass
        finally:
            _stop(procs, stop_timeout_s)


def _stop(procs: list[multiprocessing.process.BaseProcess], timeout_s: float) -> None:
    """SIGTERM every worker still running (uvicorn then closes its sessions), SIGKILL what is left after
    ``timeout_s``."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    end = time.monotonic() + timeout_s
    for proc in procs:
        if proc.pid is None:
            continue
        proc.join(max(0.1, end - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()
