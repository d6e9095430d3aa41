"""The session pool: live environment instances, their ids, locks, capacity and idle reaping.

All bookkeeping runs on the server's event loop; environment code (construction, ``reset``, ``step``,
``close`` ...) runs through :meth:`SessionPool.call`, which moves it to a worker thread unless the env
class says it never blocks (``Environment.blocking = False``).  Experts always run in a worker thread:
they are planners, and even a microsecond env's expert can take tens of milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from agentenv.env import Environment

from .errors import EnvCrashed, ServerFull, SessionNotFound, describe

log = logging.getLogger("agentenv.server")
T = TypeVar("T")


@dataclass(eq=False)
class Session:
    """One live environment instance and the state of its current episode."""

    id: int
    env: Environment
    #: serialises the calls of this session; different sessions never share a lock
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    data_idx: int | None = None
    #: ``True`` between a reset and the end of its episode: only then may the session step
    running: bool = False
    #: ``True`` once an episode has begun (a reset, or a ``/create`` that started a task)
    started: bool = False
    score: float = 0.0
    closed: bool = False

    @contextlib.asynccontextmanager
    async def use(self) -> AsyncIterator[None]:
        """Hold the session for one request; its idle time counts from when the request lets go."""
        async with self.lock:
            try:
                yield
            finally:
                self.last_used = time.monotonic()


class SessionPool:
    """Sessions of one environment class.

    - ids are allocated under a lock and never reused, so a stale id answers 404 rather than reaching
      another client's session;
    - at most ``max_sessions`` live at once (creating one more raises :class:`ServerFull`, 429);
    - a session with no request on it for ``ttl_s`` seconds is reaped exactly as ``close`` would free it
      (idle time counts from the end of its last request, and a session in use is never reaped).
    """

    def __init__(self, env_cls: type[Environment], *, max_sessions: int, ttl_s: float) -> None:
        self.env_cls = env_cls
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.sessions: dict[int, Session] = {}
        self._ids = itertools.count()
        self._reserved = 0  # slots taken by sessions still being constructed
        self._alloc = asyncio.Lock()

    def __len__(self) -> int:
        return len(self.sessions)

    async def call(self, fn: Callable[..., T], *args: Any, offload: bool = False) -> T:
        """Run env code: inline for non-blocking envs, else (or with ``offload``) in a worker thread, off
        the event loop."""
        if offload or self.env_cls.blocking:
            return await run_in_threadpool(fn, *args)
        return fn(*args)

    async def create(self) -> Session:
        async with self._alloc:
            if len(self.sessions) + self._reserved >= self.max_sessions:
                raise ServerFull(f"server full: {self.max_sessions} live {self.env_cls.name} sessions; close one first")
            self._reserved += 1
            session_id = next(self._ids)
        try:
            env = await self.call(self.env_cls)
        except Exception as exc:
            log.exception("creating a %s env failed", self.env_cls.name)
            raise EnvCrashed(f"could not create a {self.env_cls.name} env: {describe(exc)}") from exc
        finally:
            self._reserved -= 1
        session = Session(session_id, env)
        self.sessions[session_id] = session
        return session

    def get(self, session_id: int | None) -> Session:
        if session_id is None:
            raise SessionNotFound("no session id given: send `id` (or `env_idx`)")
        session = self.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no live {self.env_cls.name} session with id {session_id}")
        session.last_used = time.monotonic()
        return session

    async def close(self, session: Session) -> None:
        """Forget the session and free its env (waits for a call in flight on it to finish)."""
        if self.sessions.pop(session.id, None) is None:
            return
        async with session.lock:
            await self._close_env(session)

    async def discard(self, session: Session) -> None:
        """Close a session whose lock the caller already holds (after an env crash)."""
        self.sessions.pop(session.id, None)
        await self._close_env(session)

    async def _close_env(self, session: Session) -> None:
        if session.closed:
            return
        session.closed = True
        try:
            await self.call(session.env.close)
        except Exception:
            log.exception("closing %s session %d failed", self.env_cls.name, session.id)

    def is_idle(self, session: Session, now: float | None = None) -> bool:
        """Live, idle longer than the TTL and not busy right now."""
        now = time.monotonic() if now is None else now
        return (
            self.sessions.get(session.id) is session
            and now - session.last_used > self.ttl_s
            and not session.lock.locked()
        )

    def idle(self, now: float | None = None) -> list[Session]:
        """Sessions idle longer than the TTL and not busy right now."""
        return [s for s in self.sessions.values() if self.is_idle(s, now)]

    async def reap(self) -> int:
        """Close every idle session; returns how many were closed."""
        reaped = 0
        for session in self.idle():
            # closing the ones before may take seconds (a JVM shutting down): a client may have come back
            if not self.is_idle(session):
                continue
            log.info("reaping idle %s session %d", self.env_cls.name, session.id)
            await self.close(session)
            reaped += 1
        return reaped

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            await self.close(session)
