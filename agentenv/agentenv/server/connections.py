"""The HTTP connections a server keeps: uvicorn's protocol (httptools) with a deadline for each request's head.

uvicorn times a connection out only while it idles between two requests (its keep-alive timeout).  A client
that connected and sent nothing, or sent a request line and headers a byte at a time, held its connection (a
file descriptor under the process's limit) for ever, and enough of them left the server none for anyone
else.  Here the head of a request (request line and headers) must come whole within :data:`HEAD_TIMEOUT_S`
of the connection's start, or of the request's first byte; past it the server answers 408 and closes the
connection.  The body has its own deadline (:mod:`~agentenv.server.limits`).

A request httptools cannot parse (a garbage request line, a malformed header) is answered 400 with a JSON
error like every other, where uvicorn answers it in plain text.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .limits import LoopDeadlines, per_loop

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
        self.heads = per_loop(_heads, _Heads)
        self._watch()  # a connection that sends nothing is a head that never comes

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._watch()  # a first request's time runs from the connection's start

    def on_headers_complete(self) -> None:
        self.heads.forget(self)
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self.heads.forget(self)
        super().connection_lost(exc)

    def _watch(self) -> None:
        self.heads.watch(self, self.loop.time() + HEAD_TIMEOUT_S)

    def head_too_slow(self) -> None:
        """Past the deadline: 408 and close, unless an answer is still being sent on this connection (a
        request pipelined behind it waits for it; its head's time starts again)."""
        if self.transport.is_closing():  # going already (its connection_lost comes next)
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self._watch()
            return
        self._close_with(b"408 Request Timeout", f"the request's head did not come whole within {HEAD_TIMEOUT_S:g} s")

    def send_400_response(self, msg: str) -> None:
        """What uvicorn sends for a request it cannot parse ("Invalid HTTP request received."), as JSON."""
        self._close_with(b"400 Bad Request", f"{msg} It must be HTTP/1.1: a request line, headers, a blank line.")

    def _close_with(self, status: bytes, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        head = [b"HTTP/1.1 " + status + b"\r\n"]
        head += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]
        head.append(b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self.transport.close()


class _Heads(LoopDeadlines):
    """The connections of one event loop still reading a request's head: one past its deadline gets its 408."""

    def late(self, key: HeadDeadlineProtocol) -> None:
        key.head_too_slow()


#: each event loop's connections reading a head
_heads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Heads] = weakref.WeakKeyDictionary()
