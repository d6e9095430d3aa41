"""The session pool: a server's live sessions, their ids, locks, capacity, deadlines and idle reaping.

Each session is a :class:`~agentenv.session.LocalSession` (the env and the protocol's rules) held in a
:class:`Slot` with the lock that serialises its requests.  Bookkeeping runs on the server's event loop;
session code runs through :meth:`SessionPool.run`, which moves it to a worker thread unless the env class
says it never blocks (``Environment.blocking = False``).  Experts always run in a worker thread: they are
planners, and even a microsecond env's expert can take tens of milliseconds.

A call in a worker thread has a deadline: past it the request is answered 504, the session ends (its env
is closed from another thread, which ends a stuck JVM or browser) and it keeps counting toward capacity
until the stuck call and the close have both returned, so a server never holds more than it admits to.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from agentenv.env import INLINE_CALL_S, Environment
from agentenv.protocol import BadRequest, CallTimedOut, EnvCrashed, ServerFull, SessionNotFound
from agentenv.session import LocalSession, describe, without_collections

log = logging.getLogger("agentenv.server")
T = TypeVar("T")

#: how many ended sessions a pool remembers, to say why a stale id is gone
REMEMBERED_ENDS = 10_000


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

    def use(self) -> _Use:
        """``async with slot.use() as session``: hold the session for one request; its idle time counts from
        when the request lets go."""
        return _Use(self)


class _Use:
    """:meth:`Slot.use`'s context manager, a class: every request takes one, and a generator-based one costs
    four times as much."""

    __slots__ = ("slot",)

    def __init__(self, slot: Slot) -> None:
        self.slot = slot

    async def __aenter__(self) -> LocalSession:
        await self.slot.lock.acquire()
        return self.slot.session

    async def __aexit__(self, *exc: object) -> None:
        self.slot.last_used = time.monotonic()
        self.slot.lock.release()


#: the header of a request one worker of a ``--workers`` server passed on to another (it answers it itself)
FORWARDED_HEADER = "x-agentenv-forwarded"
#: its value on a create another worker passed on that may evict an idle session (every worker is full)
EVICT_IF_FULL = b"evict"


def first_session_id() -> int:
    """Where a server process starts numbering sessions: the microseconds since the epoch when it started.
    Ids only grow, so a restarted server never hands out an id that named a session before the restart
    (it would need a million sessions a second to catch up), and ids stay JSON integers below 2**53."""
    return time.time_ns() // 1_000


class SessionPool:
    """Sessions of one environment class.

    - ids are allocated under a lock, never reused and never repeated by a restarted server, so a stale
      id answers 404 rather than reaching another client's session (with why it ended, when known);
    - at most ``max_sessions`` live at once; a create on a full pool closes the least recently used
      session idle for ``evict_idle_s`` or more to make room, else raises :class:`ServerFull` (429);
    - a session with no request on it for ``ttl_s`` seconds is reaped as ``close`` would free it (idle time
      counts from the end of its last request, and a session in use is never reaped);
    - a worker-thread call running past ``deadline_s`` raises :class:`CallTimedOut` (504) and ends its
      session (``None``: no deadline).
    """

    def __init__(
        self,
        env_cls: type[Environment],
        *,
        max_sessions: int,
        ttl_s: float,
        evict_idle_s: float | None = None,
        deadline_s: float | None = None,
    ) -> None:
        self.env_cls = env_cls
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.evict_idle_s = evict_idle_s
        self.deadline_s = deadline_s
        self.slots: dict[int, Slot] = {}
        #: the ids this pool hands out, in order (each worker of a ``--workers`` server takes every N-th one)
        self.ids: Iterator[int] = itertools.count(first_session_id())
        self._reserved = 0  # slots taken by sessions still being constructed
        self._stuck = 0  # sessions ended past their deadline whose call or close has not returned yet
        self._ended: OrderedDict[int, str] = OrderedDict()  # id -> why it ended (reaped, evicted, timed out)
        self._alloc = asyncio.Lock()
        self._slow_said = -math.inf  # when a slow inline call was last logged

    def __len__(self) -> int:
        return len(self.slots)

    @property
    def ending(self) -> int:
        """Sessions ended past their deadline whose call or close has not returned yet."""
        return self._stuck

    @property
    def held(self) -> int:
        """Sessions counted toward capacity: live, being made, and ended ones still holding resources."""
        return len(self.slots) + self._reserved + self._stuck

    # --- running session code ---------------------------------------------------------------------------
    async def call(self, fn: Callable[..., T], *args: Any, offload: bool = False) -> T:
        """Run code that belongs to no session (yet): inline for non-blocking envs, else in a worker thread."""
        if offload or self.env_cls.blocking:
            return await run_in_threadpool(fn, *args)
        return self._inline(fn, *args)

    def _inline(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the event loop (a ``blocking = False`` env's call); one slower than the env
        contract's :data:`~agentenv.env.INLINE_CALL_S` is logged, at most once a minute."""
        started = time.perf_counter()
        answer = without_collections(fn, *args)
        took = time.perf_counter() - started
        if took > INLINE_CALL_S and started - self._slow_said > 60:
            self._slow_said = started
            log.warning(
                "%s: a call took %.0f ms on the event loop, where every other request waited for it; an env "
                "whose calls take over %.0f ms should keep blocking = True (this is said at most once a minute)",
                self.env_cls.name, 1000 * took, 1000 * INLINE_CALL_S,
            )
        return answer

    async def run(self, slot: Slot, fn: Callable[..., T], *args: Any, offload: bool = False) -> T:
        """Run one of ``slot``'s session methods under the deadline; a session its env's crash closed, or
        that ran past the deadline, leaves the pool."""
        try:
            if not (offload or self.env_cls.blocking):
                return self._inline(fn, *args)  # microseconds, on the event loop: nothing to time out
            call = asyncio.ensure_future(run_in_threadpool(fn, *args))
            if self.deadline_s is None:
                return await call
            try:
                return await asyncio.wait_for(asyncio.shield(call), self.deadline_s)
            except asyncio.TimeoutError:
                self._end_stuck(slot, call)
                raise CallTimedOut(
                    f"{self.env_cls.name} session {slot.id} took over {self.deadline_s:g} s on one call: "
                    "the session was ended and its resources freed; create a new one"
                ) from None
        except Exception:
            if slot.session.closed:
                self._forget(slot, "its environment failed")
            raise

    def _end_stuck(self, slot: Slot, call: asyncio.Future) -> None:
        """End a session whose call ran past the deadline: close its env from a thread of its own (a stuck
        worker thread cannot be interrupted, but closing the env ends a JVM or browser it waits on) and
        count it toward capacity until both the call and the close have returned."""
        self._forget(slot, f"a call ran past the {self.deadline_s:g} s deadline")
        log.warning("%s session %d: a call ran past %s s; closing it", self.env_cls.name, slot.id, self.deadline_s)
        self._stuck += 1
        closed = _in_own_thread(slot.session.close, f"close-{self.env_cls.name}-{slot.id}")

        async def reclaim() -> None:
            try:
                await asyncio.wait([closed, call])
            finally:
                self._stuck -= 1
            if not call.cancelled() and call.exception() is not None:  # read, or asyncio logs it as lost
                log.info("%s session %d: its stuck call ended: %s", self.env_cls.name, slot.id, describe(call.exception()))

        asyncio.ensure_future(reclaim())

    # --- lifetime of sessions -----------------------------------------------------------------------------
    async def create(self, *, evict: bool = True) -> Slot:
        """A new session's slot; on a full pool an idle session is evicted first where ``evict`` (and
        ``evict_idle_s``) allow, else :class:`ServerFull`."""
        async with self._alloc:
            if self.held >= self.max_sessions and evict:
                await self._evict_one()
            if self.held >= self.max_sessions:
                ending = f" ({self._stuck} of them ended past the deadline, still freeing)" if self._stuck else ""
                raise ServerFull(
                    f"server full: {self.max_sessions} {self.env_cls.name} sessions{ending}; close one first"
                )
            self._reserved += 1
            session_id = next(self.ids)
        try:
            session = await self.call(LocalSession, self.env_cls, session_id)
        except Exception as exc:
            if lacking := _exhausted(exc):  # the machine's limit, not the env's fault: 429, retried
                log.warning("creating a %s env: out of %s (%s)", self.env_cls.name, lacking, describe(exc))
                raise ServerFull(f"could not create a {self.env_cls.name} env: the server is out of {lacking} "
                                 f"({describe(exc)}); retry once sessions have closed") from exc
            log.exception("creating a %s env failed", self.env_cls.name)
            raise EnvCrashed(f"could not create a {self.env_cls.name} env: {describe(exc)}") from exc
        finally:
            self._reserved -= 1
        slot = Slot(session)
        self.slots[session_id] = slot
        return slot

    async def _evict_one(self) -> None:
        """Close the least recently used session idle for ``evict_idle_s`` or more, if there is one."""
        if self.evict_idle_s is None:
            return
        now = time.monotonic()
        idle = [s for s in self.slots.values() if now - s.last_used >= self.evict_idle_s and not s.lock.locked()]
        if idle:
            oldest = min(idle, key=lambda s: s.last_used)
            log.info("evicting %s session %d, idle %.0f s, for a new one", self.env_cls.name, oldest.id, now - oldest.last_used)
            await self.close(oldest, why=f"it was idle {now - oldest.last_used:.0f} s on a full server")

    def get(self, session_id: int | None) -> Slot:
        if session_id is None:
            raise BadRequest("no session id given: send `id` (or `env_idx`)")  # a missing field, as protocol.md says
        slot = self.slots.get(session_id)
        if slot is None:
            why = self._ended.get(session_id)
            ended = f": it was closed because {why}; create a new session" if why else ""
            raise SessionNotFound(f"no live {self.env_cls.name} session with id {session_id}{ended}")
        slot.last_used = time.monotonic()
        return slot

    async def close(self, slot: Slot, why: str | None = None) -> None:
        """Forget the session and free its env (waits for a call in flight on it to finish, at most the
        deadline; a close that overruns it is counted toward capacity until it returns)."""
        if self.slots.pop(slot.id, None) is None:
            return
        if why:
            self._remember(slot.id, why)
        async with slot.lock:
            closing = asyncio.ensure_future(self.call(slot.session.close))
            try:
                await asyncio.wait_for(asyncio.shield(closing), self.deadline_s)
            except asyncio.TimeoutError:
                log.warning("closing %s session %d takes over %s s", self.env_cls.name, slot.id, self.deadline_s)
                self._stuck += 1
                closing.add_done_callback(lambda _: self._unstick())

    def _unstick(self) -> None:
        self._stuck -= 1

    def _forget(self, slot: Slot, why: str) -> None:
        if self.slots.get(slot.id) is slot:
            del self.slots[slot.id]
            self._remember(slot.id, why)

    def _remember(self, session_id: int, why: str) -> None:
        self._ended[session_id] = why
        while len(self._ended) > REMEMBERED_ENDS:
            self._ended.popitem(last=False)

    def is_idle(self, slot: Slot, now: float | None = None) -> bool:
        """Live, idle longer than the TTL and not busy right now."""
        now = time.monotonic() if now is None else now
        return self.slots.get(slot.id) is slot and now - slot.last_used > self.ttl_s and not slot.lock.locked()

    def idle(self, now: float | None = None) -> list[Slot]:
        """Sessions idle longer than the TTL and not busy right now."""
        return [s for s in self.slots.values() if self.is_idle(s, now)]

    async def reap(self) -> int:
        """Close every session idle longer than the TTL; returns how many were closed."""
        reaped = 0
        for slot in self.idle():
            # closing the ones before may take seconds (a JVM shutting down): a client may have come back
            if not self.is_idle(slot):
                continue
            log.info("reaping idle %s session %d", self.env_cls.name, slot.id)
            await self.close(slot, why=f"it was idle longer than {self.ttl_s:g} s")
            reaped += 1
        return reaped

    async def close_all(self) -> None:
        for slot in list(self.slots.values()):
            await self.close(slot)


#: what an error number says the machine ran out of
_EXHAUSTED = {errno.EMFILE: "file descriptors", errno.ENFILE: "file descriptors", errno.ENOMEM: "memory",
              errno.EAGAIN: "processes or threads"}


def _exhausted(exc: BaseException) -> str | None:
    """What the machine ran out of, where ``exc`` (or its cause) says it ran out of something."""
    for _ in range(8):  # down the chain of causes (never a loop)
        if exc is None:
            break
        if isinstance(exc, MemoryError):
            return "memory"
        if isinstance(exc, OSError) and exc.errno in _EXHAUSTED:
            return _EXHAUSTED[exc.errno]
        if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
            return "processes or threads"
        exc = exc.__cause__ or exc.__context__
    return None


def _in_own_thread(fn: Callable[[], Any], name: str) -> asyncio.Future:
    """Run ``fn`` in a new daemon thread (not the worker pool, whose threads a stuck call may hold); the
    returned future resolves when it returns."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def target() -> None:
        try:
            fn()
        except Exception:
            log.exception("%s failed", name)
        finally:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))

    threading.Thread(target=target, name=name, daemon=True).start()
    return done
