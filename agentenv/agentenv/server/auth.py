"""Optional bearer-token auth: every route but ``/health`` (and OpenEnv's) requires ``Authorization: Bearer <token>``
(a server with a token serves no ``/docs`` or ``/openapi.json``)."""

from __future__ import annotations

import hmac
import os
from collections.abc import Awaitable, Callable

from fastapi import Request

from agentenv.protocol import TOKEN_ENV_VAR, Unauthorized


def resolve_token(token: str | None) -> str | None:
    """The token given, else the ``AGENTENV_TOKEN`` environment variable, else ``None`` (open server)."""
    if token is None:
        token = os.environ.get(TOKEN_ENV_VAR) or None
    return token


def bearer_auth(token: str) -> Callable[[Request], Awaitable[None]]:
    """A FastAPI dependency that answers 401 unless the request carries the bearer ``token``."""
    expected = token.encode()

    async def require_token(request: Request) -> None:
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        # the scheme is case-insensitive (RFC 7235); the token is compared in constant time
        if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip().encode(), expected):
            raise Unauthorized("missing or wrong bearer token")

    return require_token
