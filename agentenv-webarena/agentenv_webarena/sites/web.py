"""What the bundled sites share: HTML pages, forms, logins, the namespace of a request and the control
routes the env uses to reset a namespace.

Pages are plain server-rendered HTML with inline styles (one request per page, so the browser's route
interception stays cheap), written with :func:`html.escape` around every value.
"""

from __future__ import annotations

import hmac
import sqlite3
from html import escape
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response

from agentenv.server.auth import is_loopback

from .control import CONTROL_HEADER, CONTROL_PREFIX, NAMESPACE_HEADER
from .store import PUBLIC, Store

BASE_STYLE = """
body { font-family: sans-serif; margin: 0; color: #222; }
header { padding: 10px 24px; display: flex; gap: 18px; align-items: center; }
header a, header strong { color: inherit; }
main { padding: 16px 24px; max-width: 1100px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: left; }
form.inline { display: inline; }
label { display: block; margin-top: 8px; }
.message { background: #e8f5e9; border: 1px solid #9c9; padding: 6px 10px; }
.error { background: #fdecea; border: 1px solid #d99; padding: 6px 10px; }
"""


def e(value: Any) -> str:
    """Escape a value for HTML text or an attribute."""
    return escape(str(value), quote=True)


def page(title: str, body: str, *, header: str, color: str) -> HTMLResponse:
    """A whole HTML page: the site's header bar over ``body``."""
    return HTMLResponse(
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}</title>"
        f"<style>{BASE_STYLE} header {{ background: {color}; color: white; }}</style></head>"
        f"<body><header>{header}</header><main>{body}</main></body></html>"
    )


def link(href: str, text: Any, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}='{e(v)}'" for k, v in attrs.items())
    return f"<a href='{e(href)}'{extra}>{e(text)}</a>"


def table(headers: list[str], rows: list[list[str]], *, table_id: str = "") -> str:
    """A table of already-escaped cells."""
    ident = f" id='{e(table_id)}'" if table_id else ""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def field(label: str, name: str, value: Any = "", *, kind: str = "text", ident: str = "") -> str:
    ident = ident or name
    return (f"<label for='{e(ident)}'>{e(label)}</label>"
            f"<input type='{kind}' id='{e(ident)}' name='{e(name)}' value='{e(value)}'>")


def textarea(label: str, name: str, value: str = "") -> str:
    return f"<label for='{e(name)}'>{e(label)}</label><textarea id='{e(name)}' name='{e(name)}' rows='4' cols='60'>{e(value)}</textarea>"


def select(label: str, name: str, options: list[str], chosen: str = "") -> str:
    opts = "".join(f"<option value='{e(o)}'{' selected' if o == chosen else ''}>{e(o)}</option>" for o in options)
    return f"<label for='{e(name)}'>{e(label)}</label><select id='{e(name)}' name='{e(name)}'>{opts}</select>"


def button_form(action: str, text: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}='{e(v)}'" for k, v in attrs.items())
    return f"<form class='inline' method='post' action='{e(action)}'><button type='submit'{extra}>{e(text)}</button></form>"


async def form_data(request: Request) -> dict[str, str]:
    """A url-encoded form body as a dict (first value of each field)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def login_redirect(login_path: str, back: str) -> RedirectResponse:
    return redirect(f"{login_path}?next={quote(back, safe='/')}")


def safe_next(value: str | None, default: str) -> str:
    """A post-login redirect target: a path on this site only."""
    return value if value and value.startswith("/") and not value.startswith("//") else default


def not_found(what: str, *, header: str, color: str) -> HTMLResponse:
    response = page("Page not found", f"<h1>Page not found</h1><p>{e(what)}</p>", header=header, color=color)
    response.status_code = 404
    return response


class Site:
    """A bundled site's FastAPI app over the shared :class:`Store`: ``db(request)`` is the request's
    namespace database; the control routes reset or drop a namespace."""

    def __init__(self, name: str, store: Store, control_token: str) -> None:
        self.name = name
        self.store = store
        self.app = FastAPI(title=name, docs_url=None, redoc_url=None, openapi_url=None)
        self.app.include_router(control_router(store, control_token))
        self.app.middleware("http")(only_the_envs_writes)

    def db(self, request: Request) -> sqlite3.Connection:
        namespace = request.headers.get(NAMESPACE_HEADER, PUBLIC)
        try:
            return self.store.db(namespace)
        except KeyError:
            raise HTTPException(404, f"no namespace {namespace[:40]!r}: a session's sites are reset first") from None

    def user(self, request: Request, cookie: str) -> str | None:
        return self.store.user_of(self.name, request.cookies.get(cookie))

    def logged_in(self, response: Response, cookie: str, user: str) -> Response:
        response.set_cookie(cookie, self.store.login(self.name, user), httponly=True, samesite="lax", path="/")
        return response

    async def sign_in(self, request: Request, *, query: str, name_field: str, cookie: str, login_path: str,
                      home: str, normalise=lambda name: name) -> Response:
        """A login form's POST: the user ``query`` finds by ``(name, password)`` (the form's ``name_field``,
        normalised) signed in and sent to the form's ``next`` (else ``home``); back to the form when none."""
        form = await form_data(request)
        row = self.db(request).execute(query, (normalise(form.get(name_field, "")), form.get("password", ""))).fetchone()
        if row is None:
            return redirect(f"{login_path}?failed=1")
        return self.logged_in(redirect(safe_next(form.get("next"), home)), cookie, row[0])

    def logged_out(self, request: Request, response: Response, cookie: str) -> Response:
        self.store.logout(request.cookies.get(cookie))
        response.delete_cookie(cookie, path="/")
        return response


async def only_the_envs_writes(request: Request, call_next):
    """Any local process reaches the sites' ports, and a web page could through a name that resolves to
    127.0.0.1: requests naming a host that is no loopback are refused, and so are writes naming no session's namespace (the
    public namespace, for someone browsing, reads only: its writes piled up without bound), but for signing in
    (a saved login, as WebArena's auto-login makes one; the logins kept are bounded).  A session's namespace
    exists only once the control route, behind its token, made it."""
    host = request.url.hostname or ""
    if not is_loopback(host):  # as the env servers' LoopbackOnly tells them
        return PlainTextResponse(f"the bundled sites answer a loopback host only, not {host[:60]!r}", status_code=403)
    signing_in = request.url.path.endswith("/login")
    if request.method not in ("GET", "HEAD") and not signing_in and not request.headers.get(NAMESPACE_HEADER):
        return PlainTextResponse("the bundled sites take writes from the env's sessions only", status_code=403)
    return await call_next(request)


def control_router(store: Store, token: str) -> APIRouter:
    """``POST /__agentenv/reset`` and ``/__agentenv/drop``: reset or drop the namespace of the request's
    header, for callers holding the control token."""
    router = APIRouter(prefix=CONTROL_PREFIX)

    def check(request: Request) -> str:
        given = request.headers.get(CONTROL_HEADER, "")
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(403, "control token required")
        namespace = request.headers.get(NAMESPACE_HEADER)
        if not namespace:
            raise HTTPException(422, f"the {NAMESPACE_HEADER} header is required")
        return namespace

    @router.post("/reset")
    async def reset(request: Request) -> JSONResponse:
        namespace = check(request)
        store.reset(namespace)
        return JSONResponse({"reset": namespace})

    @router.post("/drop")
    async def drop(request: Request) -> JSONResponse:
        namespace = check(request)
        store.drop(namespace)
        return JSONResponse({"dropped": namespace})

    return router
