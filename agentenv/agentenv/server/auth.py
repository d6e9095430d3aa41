"""Who may talk to a server: optional bearer-token auth (every route but ``/health``, and OpenEnv's, requires
``Authorization: Bearer <token>``; a server with a token serves no ``/docs`` or ``/openapi.json``), and, for a
server on a loopback address, requests that name it by a loopback name only (:class:`LoopbackOnly`)."""

from __future__ import annotations

import functools
import hmac
import ipaddress
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request

from agentenv.protocol import TOKEN_ENV_VAR, Unauthorized


def resolve_token(token: str | None) -> str | None:
    """The token given, else the ``AGENTENV_TOKEN`` environment variable, else ``None`` (open server); stripped
    of surrounding spaces, as a request's header arrives.  A blank one is refused (``ValueError``)."""
    if token is None:
        token = os.environ.get(TOKEN_ENV_VAR) or None
    if token is not None and not token.strip():  # asked for, and would leave the server open (or shut to all)
        raise ValueError("the token is blank: give one, or none for a loopback server open to its host's users")
    return None if token is None else token.strip()  # a header's value arrives stripped


def bearer_auth(token: str) -> Callable[[Request], Awaitable[None]]:
    """A FastAPI dependency that answers 401 unless the request carries the bearer ``token``."""
    expected = token.encode()

    async def require_token(request: Request) -> None:
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        # the scheme is case-insensitive (RFC 7235); the token is compared in constant time
        if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip().encode(), expected):
            raise Unauthorized("missing or wrong bearer token")

    return require_token


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, without a port) is this machine's loopback."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_of(netloc: str) -> str:
    """The host of ``host[:port]`` (``[::1]:8000`` -> ``::1``); ``""`` for one that is no host (``[::1``)."""
    return _hostname(f"//{netloc}")


def _hostname(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # an unclosed bracket
        return ""


class LoopbackOnly:
    """ASGI middleware for a server bound to a loopback address: a request must name a loopback host (a page
    elsewhere that points its own name at 127.0.0.1, DNS rebinding, gets a 400), and a browser's request or
    WebSocket must come from a loopback page (a cross-site page cannot drive a session: a form or a plain-text
    ``fetch`` needs no CORS preflight, so the server itself refuses it with a 403, and a WebSocket's handshake).
    Clients that are no browser send no ``Origin``."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] in ("http", "websocket"):
            host = origin = b""
            for name, value in scope["headers"]:  # ASGI's header names are lowercase
                if name == b"host":
                    host = value
                elif name == b"origin":
                    origin = value
            # the answer is cached for headers of a usual length only: long ones would make the cache large
            check = _refusal if len(host) + len(origin) <= 512 else _refusal.__wrapped__
            refusal = check(host, origin, scope["type"] == "websocket")
            if refusal is not None:
                status, problem = refusal
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})  # before accepting: the handshake gets 403
                else:
                    body = json.dumps({"error": problem}).encode()
                    await send({"type": "http.response.start", "status": status,
                                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


@functools.lru_cache(maxsize=256)  # a server sees few distinct hosts and origins; parsing them cost ~10 us a request
def _refusal(host_header: bytes, origin_header: bytes, websocket: bool) -> tuple[int, str] | None:
    """The status and message :class:`LoopbackOnly` answers a request with these ``Host`` and ``Origin``
    headers (empty: absent), or ``None`` to let it through."""
    host, origin = host_header.decode("latin-1"), origin_header.decode("latin-1")
    if host and not is_loopback(_host_of(host)):
        return 400, f"this server answers on its loopback address only, not as {host!r}"
    if origin and not is_loopback(_hostname(origin)):  # "null" too: a sandboxed or file page
        kind = "a WebSocket" if websocket else "a request"
        return 403, f"{kind} from a page of {origin} is refused: drive sessions with a client"
    return None
