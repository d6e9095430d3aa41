"""The session pool: a server's live sessions, their ids, locks, capacity and idle reaping.

Each session is a :class:`~agentenv.session.LocalSession` (the env and the protocol's rules) held in a
:class:`Slot` with the lock that serialises its requests.  Bookkeeping runs on the server's event loop;
session code runs through :meth:`SessionPool.run`, which moves it to a worker thread unless the env class
says it never blocks (``Environment.blocking = False``).  Experts always run in a worker thread: they are
planners, and even a microsecond env's expert can take tens of milliseconds.
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
from agentenv.protocol import EnvCrashed, ServerFull, SessionNotFound
from agentenv.session import LocalSession, describe

log = logging.getLogger("agentenv.server")
T = TypeVar("T")


@dataclass(eq=False)
class Slot:
    """A live session and what the server keeps beside it."""

    session: LocalSession
    #: serialises the requests of this session; different sessions never share a lock
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)

    @property
    def id(self) -> int:
        return self.session.id

    @contextlib.asynccontextmanager
    async def use(self) -> AsyncIterator[LocalSession]:
        """Hold the session for one request; its idle time counts from when the request lets go."""
        async with self.lock:
            try:
                yield self.session
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
        self.slots: dict[int, Slot] = {}
        self._ids = itertools.count()
        self._reserved = 0  # slots taken by sessions still being constructed
        self._alloc = asyncio.Lock()

    def __len__(self) -> int:
        return len(self.slots)

    async def call(self, fn: Callable[..., T], *args: Any, offload: bool = False) -> T:
        """Run session code: inline for non-blocking envs, else (or with ``offload``) in a worker thread,
        off the event loop."""
        if offload or self.env_cls.blocking:
            return await run_in_threadpool(fn, *args)
        return fn(*args)

    async def run(self, slot: Slot, fn: Callable[..., T], *args: Any, offload: bool = False) -> T:
        """Run one of ``slot``'s session methods; a session its env's crash closed leaves the pool."""
        try:
            return await self.call(fn, *args, offload=offload)
        except Exception:
            if slot.session.closed:
                self.slots.pop(slot.id, None)
            raise

    async def create(self) -> Slot:
        async with self._alloc:
            if len(self.slots) + self._reserved >= self.max_sessions:
                raise ServerFull(f"server full: {self.max_sessions} live {self.env_cls.name} sessions; close one first")
            self._reserved += 1
            session_id = next(self._ids)
        try:
            session = await self.call(LocalSession, self.env_cls, session_id)
        except Exception as exc:
            log.exception("creating a %s env failed", self.env_cls.name)
            raise EnvCrashed(f"could not create a {self.env_cls.name} env: {describe(exc)}") from exc
        finally:
            self._reserved -= 1
        slot = Slot(session)
        self.slots[session_id] = slot
        return slot

    def get(self, session_id: int | None) -> Slot:
        if session_id is None:
            raise SessionNotFound("no session id given: send `id` (or `env_idx`)")
        slot = self.slots.get(session_id)
        if slot is None:
            raise SessionNotFound(f"no live {self.env_cls.name} session with id {session_id}")
        slot.last_used = time.monotonic()
        return slot

    async def close(self, slot: Slot) -> None:
        """Forget the session and free its env (waits for a call in flight on it to finish)."""
        if self.slots.pop(slot.id, None) is None:
            return
        async with slot.lock:
            await self.call(slot.session.close)

    def is_idle(self, slot: Slot, now: float | None = None) -> bool:
        """Live, idle longer than the TTL and not busy right now."""
        now = time.monotonic() if now is None else now
        return self.slots.get(slot.id) is slot and now - slot.last_used > self.ttl_s and not slot.lock.locked()

    def idle(self, now: float | None = None) -> list[Slot]:
        """Sessions idle longer than the TTL and not busy right now."""
        return [s for s in self.slots.values() if self.is_idle(s, now)]

    async def reap(self) -> int:
        """Close every idle session; returns how many were closed."""
        reaped = 0
        for slot in self.idle():
            # closing the ones before may take seconds (a JVM shutting down): a client may have come back
            if not self.is_idle(slot):
                continue
            log.info("reaping idle %s session %d", self.env_cls.name, slot.id)
            await self.close(slot)
            reaped += 1
        return reaped

    async def close_all(self) -> None:
        for slot in list(self.slots.values()):
            await self.close(slot)
