"""``EnvClient``: the HTTP client of one environment, and ``EnvSession``, one live session on a server.

Answers are parsed into the wire models of :mod:`agentenv.protocol`, and error answers raised as its
error classes: an in-process :class:`~agentenv.session.LocalSession` answers with the same types.
"""

from __future__ import annotations

import numbers
import os
import threading
import time
import weakref
from typing import Any

import httpx

from agentenv.env import ExpertAction
from agentenv.protocol import (
    TOKEN_ENV_VAR,
    ClientClosed,
    EnvError,
    EnvNotServed,
    ResetResponse,
    ServerHung,
    ServerUnreachable,
    StepResponse,
    error_for,
)

#: 60 s to connect (a dead host is found as soon as ever); a read 30 s past the kit's default call deadline
DEFAULT_TIMEOUT = httpx.Timeout(60.0, read=90.0)
#: seconds a close may take to be answered: the server has the request by then, and finishes it anyway
CLOSE_TIMEOUT_S = 10.0
#: a client's close (or its finalizer's) asks once per session, this long; a server that let it time out is
#: not asked again by any client for SILENT_FOR_S (the end of a script with many clients of a stopped server
#: waited out each one in turn), and its TTL frees those sessions
SESSIONS_CLOSE_TIMEOUT_S, SILENT_FOR_S = 5.0, 60.0
_silent_since: dict[str, float] = {}  # server URL -> when a close to it timed out


class EnvClient:
    """Talks to the ``/<env>`` routes of an environment server over one keep-alive connection pool.

    Connection failures are retried ``retries`` times with exponential backoff: any request whose
    connection could not be opened, and idempotent GETs on any transport error but a read timeout.  A POST
    that may have reached the server (a step, say) is never sent twice.  ``timeout``: seconds for each phase
    (connect, each read ...).  The default's read, 90 s, outlasts the kit's default call deadline (60 s), so
    a live server's 504 comes first (:meth:`wait_at_least` for a server whose deadline is longer), and a read
    timeout means a server that is stopped or stuck (:class:`~agentenv.protocol.ServerHung`).  Error answers raise
    :class:`~agentenv.protocol.EnvError` subclasses named after their status.

    ``token`` (default: the ``AGENTENV_TOKEN`` environment variable, as the server reads it) is sent as
    ``Authorization: Bearer <token>``.
    """

    #: the environment this client class is for; ``None`` for the generic client
    env_name: str | None = None

    def __init__(
        self,
        env: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retries: int = 3,
        backoff_s: float = 0.2,
        token: str | None = None,
        max_connections: int = 256,
    ) -> None:
        self.env = env or self.env_name
        if self.env is None:
            raise ValueError("EnvClient needs an env name")
        if base_url is None:
            from agentenv.registry import default_url

            base_url = default_url(self.env)
        if not base_url.startswith(("http://", "https://")):  # else retried as a connection failure, then unreachable
            raise ValueError(f"a server URL begins with http:// or https://, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        if token is None:
            token = os.environ.get(TOKEN_ENV_VAR)
        headers = {"Authorization": f"Bearer {token.strip()}"} if token and token.strip() else {}
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self.http = httpx.Client(
            base_url=f"{self.base_url}/{self.env}", timeout=timeout, headers=headers, limits=limits
        )
        # the sessions this client opened and has not closed: closing the client (or its collection, or the
        # end of the script) closes them, or each would hold a server's place until its idle eviction
        self._sessions = _OpenSessions()
        self._finalizer = weakref.finalize(self, _close_sessions, self.http, self._sessions)

    # --- plumbing ---------------------------------------------------------------------------------
    def request(
        self, method: str, route: str, *, json: Any = None, params: Any = None, timeout: float | None = None
    ) -> httpx.Response:
        """One call, retried while the server cannot be reached (and a GET while its connection breaks); an
        error status as :class:`EnvError`.  ``timeout``: the read's limit, where not the client's."""
        url = f"{self.base_url}/{self.env}{route}"
        limit = self.http.timeout if timeout is None else httpx.Timeout(self.http.timeout.connect, read=timeout)
        for attempt in range(self.retries + 1):
            try:
                response = self.http.request(method, route, json=json, params=params, timeout=limit)
                break
            except RuntimeError:  # httpx's "Cannot send a request, as the client has been closed"
                if self.http.is_closed:
                    raise ClientClosed(f"{method} {url}: this client was closed; make a new one") from None
                raise
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                error: Exception = exc
            except httpx.ReadTimeout as exc:  # each try would wait as long: a GET took 4 x 210 s on a stopped server
                raise ServerHung(
                    f"{method} {url}: the server took the request but gave no answer in {limit.read:g} s "
                    "(its process is stopped, stuck or overloaded)", self.env,
                ) from exc
            except httpx.TransportError as exc:
                if method != "GET":
                    raise ServerUnreachable(f"{method} {url} failed: {exc!r}", self.env) from exc
                error = exc
            if attempt == self.retries:
                raise ServerUnreachable(
                    f"{method} {url} failed after {self.retries + 1} tries: {error!r}", self.env
                ) from error
            time.sleep(self.backoff_s * 2**attempt)
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            # the kit answers {"error": ...}; a proxy in between may answer anything
            message = body.get("error", response.text) if isinstance(body, dict) else response.text
            raise error_for(response.status_code, message)
        return response

    def _post(self, route: str, body: dict[str, Any]) -> Any:
        return self.request("POST", route, json=body).json()

    def _get(self, route: str, sid: int) -> Any:
        return self.request("GET", route, params={"id": sid}).json()

    # --- the protocol -----------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """The server's ``/health``: its envs, process id and version."""
        return self.request("GET", "/health").json()

    def info(self) -> dict[str, Any]:
        """The env's facts (``/info``): splits, instruction, reward range, round limit, live sessions."""
        try:
            return self.request("GET", "/info").json()
        except EnvError as exc:
            if exc.status != 404:
                raise
            raise EnvNotServed(self._not_served()) from None

    def _not_served(self) -> str:
        """Why the server at ``base_url`` has no ``/<env>/info``: what it serves, read from its ``/health``."""
        try:
            health = self.http.get(f"{self.base_url}/health").json()
            served = health.get("envs") or [health["env"]]
        except Exception:  # not an agentenv server (AgentGym's own have no /health), or no JSON
            return f"{self.base_url} has no {self.env} environment (GET /{self.env}/info answered 404)"
        root, _, last = self.base_url.rpartition("/")
        if served == [last] and "://" in root:  # a URL that names the env's routes as well
            return f"{self.base_url} is the {last} routes of a server: give the server's own URL, {root}"
        return f"{self.base_url} serves {', '.join(served)}, not {self.env}: give the URL of a {self.env} server"

    def task_types(self, indices: list[int]) -> list[str | None]:
        """Each task's type without playing it, where the env can tell (``None`` where not)."""
        return self.request("POST", "/task_types", json={"data_idx": list(indices)}).json()["task_types"]

    def create(self, data_idx: int | None = None) -> int:
        """Open a session (and reset it to ``data_idx`` when given); returns its id."""
        answer = self._post("/create", {} if data_idx is None else {"data_idx": _index(data_idx)})
        sid = answer if isinstance(answer, int) else int(answer["id"])
        with self._sessions.lock:
            if not self._sessions.closed:
                self._sessions.ids.add(sid)
                return sid
        _close_on_server(self.http, sid)  # the client was closed while this session was being opened
        raise ClientClosed(f"{self!r} was closed while a session was being opened")

    def reset(self, sid: int, data_idx: int) -> ResetResponse:
        """Start task ``data_idx`` in session ``sid``; its first observation."""
        return ResetResponse.model_validate(self._post("/reset", {"id": sid, "data_idx": _index(data_idx)}))

    def step(self, sid: int, action: str) -> StepResponse:
        """Take ``action`` (a bare action or a whole ReAct reply) in session ``sid``."""
        return StepResponse.model_validate(self._post("/step", {"id": sid, "action": action}))

    def observation(self, sid: int) -> str:
        """The session's current observation."""
        return self._get("/observation", sid)

    def available_actions(self, sid: int) -> Any:
        """The actions the env takes now, where it lists them."""
        return self._get("/available_actions", sid)

    def expert(self, sid: int) -> ExpertAction:
        """The expert's next move in the session's current state."""
        move = self._get("/expert", sid)
        return ExpertAction(move["thought"], move["action"])

    def detail(self, sid: int) -> dict[str, Any]:
        """The session's state: its task, steps, score, whether it is done (and what the env adds)."""
        return self._get("/detail", sid)

    def query(self, sid: int, name: str) -> Any:
        """An env-specific ``GET /<name>?id=``; JSON decoded, or the raw bytes of an image."""
        response = self.request("GET", f"/{name}", params={"id": sid})
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.content

    def close_session(self, sid: int) -> None:
        """Close session ``sid`` on the server."""
        with self._sessions.lock:
            self._sessions.ids.discard(sid)
        # briefly: a close is quick where the server lives, and a run ending on a hung one waited out each
        self.request("POST", "/close", json={"id": sid}, timeout=CLOSE_TIMEOUT_S)

    def session(self, data_idx: int | None = None) -> EnvSession:
        """Open a session (reset to ``data_idx`` when given) as an :class:`EnvSession`, which closes it."""
        return EnvSession(self, self.create(data_idx))

    def wait_at_least(self, seconds: float) -> None:
        """Wait at least ``seconds`` for an answer (a server's ``call_deadline_s`` may exceed ``timeout``)."""
        t = self.http.timeout
        if t.read is not None and t.read < seconds:  # the read alone: a dead host is still found as soon
            self.http.timeout = httpx.Timeout(connect=t.connect, read=seconds, write=t.write, pool=t.pool)

    @property
    def closed(self) -> bool:
        return self._sessions.closed

    # --- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the sessions this client opened and left open, then its connections."""
        self._finalizer()

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env!r}, {self.base_url!r})"


def _index(data_idx: Any) -> int:
    """A task index as JSON takes it (a numpy integer is refused by the encoder; ``True`` is no index)."""
    if isinstance(data_idx, bool) or not isinstance(data_idx, numbers.Integral):
        raise TypeError(f"a task index is an integer, not {data_idx!r}")
    return int(data_idx)


class _OpenSessions:
    """The ids of the sessions a client opened and has not closed, and whether the client is closed (a
    session opened by another thread while it closes is then closed at once)."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.lock = threading.Lock()
        self.closed = False


def _close_sessions(http: httpx.Client, sessions: _OpenSessions) -> None:
    """Close a client's open sessions on the server, once each and without retries (a server that is gone
    ends the attempt), then its connection pool: the client's :meth:`~EnvClient.close`, or its finalizer."""
    with sessions.lock:
        sessions.closed = True
        ids = sorted(sessions.ids)
        sessions.ids.clear()
    server = str(http.base_url)
    if ids and time.monotonic() - _silent_since.get(server, -SILENT_FOR_S) >= SILENT_FOR_S:
        for sid in ids:
            if not _close_on_server(http, sid):
                break
    http.close()


def _close_on_server(http: httpx.Client, sid: int) -> bool:
    """Close session ``sid`` with one try of ``SESSIONS_CLOSE_TIMEOUT_S``; whether the server could be asked (it
    may be gone, or the connection pool closed already)."""
    try:
        http.post("/close", json={"id": sid}, timeout=SESSIONS_CLOSE_TIMEOUT_S)
    except httpx.TimeoutException:
        _silent_since[str(http.base_url)] = time.monotonic()
        return False
    except (httpx.HTTPError, RuntimeError):
        return False
    return True


class EnvSession:
    """One live session on a server; closing it (or leaving its ``with`` block) frees it there.  Its
    methods are its client's (:class:`EnvClient`) for this session."""

    def __init__(self, client: EnvClient, sid: int) -> None:
        self.client = client
        self.id = sid
        self.closed = False

    def reset(self, data_idx: int) -> ResetResponse:
        return self.client.reset(self.id, data_idx)

    def step(self, action: str) -> StepResponse:
        return self.client.step(self.id, action)

    def observation(self) -> str:
        return self.client.observation(self.id)

    def available_actions(self) -> Any:
        return self.client.available_actions(self.id)

    def expert(self) -> ExpertAction:
        return self.client.expert(self.id)

    def detail(self) -> dict[str, Any]:
        return self.client.detail(self.id)

    def query(self, name: str) -> Any:
        return self.client.query(self.id, name)

    def close(self) -> None:
        """Close the session on the server; a session the server already dropped counts as closed."""
        if self.closed:
            return
        self.closed = True
        if self.client.closed:  # closing the client closed it
            return
        try:
            self.client.close_session(self.id)
        except EnvError as exc:
            if exc.status not in (404, 0):
                raise

    def __enter__(self) -> EnvSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EnvSession({self.client.env!r}, id={self.id})"
