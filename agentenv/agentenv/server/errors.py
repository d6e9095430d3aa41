"""Errors as HTTP status codes with a JSON body ``{"error": "..."}`` — never a traceback.

Route and session code raise the protocol's errors (:class:`agentenv.protocol.EnvError` and its table);
:func:`install_error_handlers` turns them, FastAPI's validation errors, Starlette's 404/405 and any
unexpected exception into that one shape.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentenv.protocol import EnvError, Unauthorized

log = logging.getLogger("agentenv.server")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def format_validation_errors(errors: list[dict[str, Any]]) -> str:
    """FastAPI's list of validation errors as one readable line: ``body.action: Field required; ...``."""
    parts = []
    for err in errors:
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid")))
    return "malformed request: " + "; ".join(parts)


async def _env_error(request: Request, exc: EnvError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
    return error_response(exc.status or 500, exc.message, headers)


async def _refused_token(request: Request) -> JSONResponse | None:
    """FastAPI parses the body before any dependency runs, so a malformed body would be answered before
    the auth dependency could refuse the request: the token is checked first (``app.state.auth``, if set)."""
    auth = getattr(request.app.state, "auth", None)
    if auth is not None:
        try:
            await auth(request)
        except Unauthorized as refused:
            return await _env_error(request, refused)
    return None


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    return await _refused_token(request) or error_response(422, format_validation_errors(list(exc.errors())))


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if exc.status_code == 404:
        message = f"no such route: {request.method} {request.url.path}"
    if exc.status_code == 400:  # FastAPI's "error parsing the body" (e.g. bytes that are not UTF-8)
        return await _refused_token(request) or error_response(422, f"malformed request: {message}")
    return error_response(exc.status_code, message, getattr(exc, "headers", None))


class CatchAll:
    """Answer an unexpected exception (a bug in the kit itself: env crashes are answered as
    :class:`~agentenv.protocol.EnvCrashed`) with 500 ``{"error": ...}``.

    A plain ASGI middleware rather than an ``Exception`` handler: Starlette re-raises after running such a
    handler, and uvicorn then drops the client's keep-alive connection.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started:  # too late for an answer of our own
                raise
            log.exception("internal error on %s %s", scope["method"], scope["path"])
            response = error_response(500, f"internal server error: {type(exc).__name__}")
            await response(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(EnvError, _env_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_middleware(CatchAll)
