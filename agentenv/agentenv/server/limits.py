"""Request-body limits, as a plain ASGI middleware (no per-request task or thread): its size, and the time it
may take to arrive."""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: seconds a request's body may take to arrive whole: a client that sent part of one and stopped held its
#: connection (and a file descriptor) for ever, and enough of them left the server none for anyone else
BODY_TIMEOUT_S = 30.0
#: the scope key under which a reader in front of the app (a worker's router) leaves a body it has read whole
#: within the limit: :class:`BodySizeLimit` takes it (removes it) instead of reading the request again
WHOLE_BODY = "agentenv.body"


async def body_message(receive: Receive, deadline: float) -> Message | None:
    """The next message of a request's body, or ``None`` if it has not come by ``deadline`` (loop time)."""
    reads = per_loop(_reads, _BodyReads)
    task = asyncio.current_task()
    reads.watch(task, deadline)
    try:
        return await receive()
    except asyncio.CancelledError:
        if task in reads.expired:
            reads.expired.discard(task)
            if task.uncancel() == 0:  # cancelled for its deadline alone
                return None
        raise
    finally:
        reads.forget(task)


class LoopDeadlines:
    """What waits on one event loop, each with a deadline: one check a second hands those past theirs to
    :meth:`late`.  (An ``asyncio.timeout`` around each body read cost ~15 us a request, a tenth of a Maze
    step.)"""

    def __init__(self) -> None:
        self.deadlines: dict[Any, float] = {}
        self.check: asyncio.TimerHandle | None = None

    def watch(self, key: Any, deadline: float) -> None:
        """Watch ``key`` until ``deadline`` (loop time); a deadline it has already stands."""
        self.deadlines.setdefault(key, deadline)
        if self.check is None:
            self.check = asyncio.get_running_loop().call_later(1.0, self._hand_late)

    def forget(self, key: Any) -> None:
        self.deadlines.pop(key, None)

    def late(self, key: Any) -> None:
        """What becomes of ``key`` past its deadline (no longer watched)."""
        raise NotImplementedError

    def _hand_late(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        for key, deadline in list(self.deadlines.items()):
            if deadline <= now:
                del self.deadlines[key]
                self.late(key)
        self.check = loop.call_later(1.0, self._hand_late) if self.deadlines else None


Watched = TypeVar("Watched", bound=LoopDeadlines)


def per_loop(registry: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Watched],
             make: Callable[[], Watched]) -> Watched:
    """The running event loop's entry of ``registry``, made on first use (a server has one loop; tests may
    run several, one after another)."""
    loop = asyncio.get_running_loop()
    deadlines = registry.get(loop)
    if deadlines is None:
        deadlines = registry[loop] = make()
    return deadlines


class _BodyReads(LoopDeadlines):
    """The body reads waiting on one event loop: one past its deadline is cancelled, and marked expired."""

    def __init__(self) -> None:
        super().__init__()
        self.expired: set[asyncio.Task] = set()

    def late(self, key: asyncio.Task) -> None:
        self.expired.add(key)
        key.cancel()


#: each event loop's body reads
_reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _BodyReads] = weakref.WeakKeyDictionary()


def body_deadline(scope: Scope) -> float:
    """When the body of the request ``scope`` must have come (one deadline for every reader of it)."""
    return scope.setdefault("agentenv.body_deadline", asyncio.get_running_loop().time() + BODY_TIMEOUT_S)


class BodySizeLimit:
    """Answer 413 to any request whose body exceeds ``max_bytes``, and 408 to one whose body has not come
    whole within :data:`BODY_TIMEOUT_S`.

    A declared ``Content-Length`` over the limit is refused at once; the body (with one or without, chunked)
    is read as it streams in, counted, and replayed to the app in one message.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _reject(send, 400, "invalid Content-Length header")
                    return
                if declared > self.max_bytes:
                    await _reject(send, 413, f"request body over {self.max_bytes} bytes")
                    return
                break  # the body itself is counted as it comes, below

        whole = scope.pop(WHOLE_BODY, None)
        if whole is None:
            chunks = await self._read(scope, receive, send)
            if chunks is None:
                return
        elif len(whole) > self.max_bytes:
            await _reject(send, 413, f"request body over {self.max_bytes} bytes")
            return
        else:
            chunks = [whole]

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # later reads wait for the disconnect, as usual
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> list[bytes] | None:
        """The body's chunks, read as they come; ``None`` when it was refused (413, 408) or the client left."""
        deadline = body_deadline(scope)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await body_message(receive, deadline)
            if message is None:
                await _reject(send, 408, f"the request's body did not come whole within {BODY_TIMEOUT_S:g} s")
                return None
            if message["type"] != "http.request":  # the client went away
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _reject(send, 413, f"request body over {self.max_bytes} bytes")
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks


async def _reject(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
