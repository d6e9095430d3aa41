"""How the server's routes are laid out and served cheaply.

An episode step is a few microseconds of environment inside a request that FastAPI's general machinery
makes cost a few hundred (docs/benchmarks.md): finding the route among ~50, solving the route's dependencies,
reading and validating its body.  Two things here keep that machinery off the routes every episode takes,
with the same routes, OpenAPI schema and answers:

- :func:`add_routes` puts a router's routes on the app as the app's own routes, so that the hot ones can
  come first (Starlette tries routes in order, a regular expression each);
- :class:`BodyRoute` serves a route whose only parameter is its JSON body as a plain ASGI app that validates
  the raw bytes with pydantic in one call and awaits the endpoint, instead of FastAPI's request object,
  dependency solver and exit stacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute, APIWebSocketRoute
from pydantic import TypeAdapter, ValidationError
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send


class BodyRoute(APIRoute):
    """An ``APIRoute`` that serves an endpoint of one JSON body parameter returning a ``Response`` directly.

    The route is a plain ASGI app: it reads the body, puts its bytes through the parameter's pydantic model
    in one call (``validate_json``), awaits the endpoint and sends its answer, without FastAPI's request
    object, dependency solver and per-request exit stacks (there is nothing for them to do).  A refusal is
    the :class:`RequestValidationError` FastAPI would raise (``loc`` starting with ``"body"``), and it and
    every other exception go to the app's handlers as a route's would.  The OpenAPI schema is FastAPI's,
    from the same declaration.  A route with anything else to solve (dependencies such as the bearer-token
    check, query or path parameters, the ``Request``, a body size limit of its own) is served by FastAPI as
    usual, so nothing it declares is skipped.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        served = self.body_app()
        if served is not None:
            self.app = served

    def body_app(self) -> ASGIApp | None:
        """The route as a plain ASGI app, or ``None`` where FastAPI has more to do than read the body."""
        dependant = self.dependant
        others = (dependant.path_params, dependant.query_params, dependant.header_params, dependant.cookie_params,
                  dependant.dependencies)
        special = (dependant.request_param_name, dependant.response_param_name, dependant.background_tasks_param_name,
                   dependant.http_connection_param_name, dependant.websocket_param_name)
        if len(dependant.body_params) != 1 or any(others) or any(special) or getattr(self, "max_body_size", None) is not None:
            return None
        field = dependant.body_params[0]
        name, info, adapter = field.name, field.field_info, TypeAdapter(field.field_info.annotation)
        required, endpoint = info.is_required(), self.endpoint

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            raw = await read_body(receive)
            if raw is None:  # the client went away: no one to answer
                return
            if raw or required:
                try:
                    value = adapter.validate_json(raw)
                except ValidationError as refused:
                    errors = [error | {"loc": ("body", *error["loc"])} for error in refused.errors(include_url=False)]
                    raise RequestValidationError(errors, body=raw) from None
            else:  # no body where the body is optional: its default, as FastAPI gives it
                value = info.get_default(call_default_factory=True)
            answer = await endpoint(**{name: value})
            if not isinstance(answer, Response):
                raise TypeError(f"{endpoint.__name__} must return a Response to be served as a BodyRoute")
            await answer(scope, receive, send)

        return app


async def read_body(receive: Receive) -> bytes | None:
    """A request's whole body, or ``None`` if the client disconnected first."""
    message = await receive()
    if message["type"] != "http.request":
        return None
    body = message.get("body", b"")
    if not message.get("more_body", False):  # the usual case: one message
        return body
    chunks = [body]
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def add_routes(
    app: FastAPI, routes: Sequence[BaseRoute], prefix: str, *, dependencies: Sequence[Any] = (),
    responses: dict[int | str, dict[str, Any]] | None = None,
) -> list[BaseRoute]:
    """Add an ``APIRouter``'s ``routes`` to ``app`` under ``prefix`` as the app's own routes (of the same
    route class), with the given dependencies and answers besides their own; returns the routes added.
    This is what ``app.include_router`` did until FastAPI began to keep an included router nested, matched
    route by route twice on every request."""
    added = []
    for route in routes:
        if isinstance(route, APIRoute):
            app.router.add_api_route(
                prefix + route.path, route.endpoint, methods=sorted(route.methods), name=route.name,
                response_model=route.response_model, responses={**(responses or {}), **route.responses},
                dependencies=[*dependencies, *route.dependencies], route_class_override=type(route),
            )
        elif isinstance(route, APIWebSocketRoute):
            app.add_api_websocket_route(prefix + route.path, route.endpoint, name=route.name)
        else:
            raise TypeError(f"add_routes takes an APIRouter's own routes, not {type(route).__name__}")
        added.append(app.router.routes[-1])
    return added
