"""The HTTP connections a server keeps: uvicorn's protocol (httptools) with a deadline for each request's head.

uvicorn times a connection out only while it idles between two requests (its keep-alive timeout).  A client
that connected and sent nothing, or sent a request line and headers a byte at a time, held its connection (a
file descriptor under the process's limit) for ever, and enough of them left the server none for anyone
else.  Here the head of a request (request line and headers) must come whole within :data:`HEAD_TIMEOUT_S`
of the connection's start, or of the request's first byte; past it the server answers 408 and closes the
connection.  The body has its own deadline (:mod:`~agentenv.server.limits`).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: seconds the head of a request may take to arrive whole
HEAD_TIMEOUT_S = 30.0


def server_config(app: Any, **options: Any) -> uvicorn.Config:
    """``uvicorn.Config(app, **options)`` with the protocol below: every server of the kit is made with it."""
    return uvicorn.Config(app, http=HeadDeadlineProtocol, **options)


class HeadDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol; a request whose head has not come whole by its deadline gets a 408 and
    its connection closed."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.heads = _heads_of(self.loop)
        self.heads.watch(self)  # a connection that sends nothing is a head that never comes

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.heads.watch(self)

    def on_headers_complete(self) -> None:
        self.heads.started.pop(self, None)
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self.heads.started.pop(self, None)
        super().connection_lost(exc)

    def head_too_slow(self) -> None:
        """Past the deadline: 408 and close, unless an answer is still being sent on this connection (a
        request pipelined behind it waits for it; its head's time starts again)."""
        if self.transport.is_closing():  # going already (its connection_lost comes next)
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self.heads.watch(self)
            return
        body = json.dumps({"error": f"the request's head did not come whole within {HEAD_TIMEOUT_S:g} s"}).encode()
        self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
        self.transport.close()


class _Heads:
    """The connections of one event loop still reading a request's head, with when it began: one check a
    second answers those past their deadline (a timer a request would cost more than the check)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.started: dict[HeadDeadlineProtocol, float] = {}
        self.check: asyncio.TimerHandle | None = None

    def watch(self, protocol: HeadDeadlineProtocol) -> None:
        self.started.setdefault(protocol, self.loop.time())  # a first request's time runs from the connection's
        if self.check is None:
            self.check = self.loop.call_later(1.0, self._answer_late)

    def _answer_late(self) -> None:
        too_early = self.loop.time() - HEAD_TIMEOUT_S
        for protocol, started in list(self.started.items()):
            if started <= too_early:
                del self.started[protocol]
                protocol.head_too_slow()
        self.check = self.loop.call_later(1.0, self._answer_late) if self.started else None


#: each event loop's connections reading a head (a server has one loop; tests may run several)
_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Heads] = weakref.WeakKeyDictionary()


def _heads_of(loop: asyncio.AbstractEventLoop) -> _Heads:
    heads = _loops.get(loop)
    if heads is None:
        heads = _loops[loop] = _Heads(loop)
    return heads
