"""Running servers: ``serve`` one in this process, or ``ServerProcesses`` to keep several alive as
subprocesses (what ``agentenv up`` and the demo use)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from agentenv.processes import PARENT_PID_VAR, signal_group, started_by_launcher
from agentenv.protocol import TOKEN_ENV_VAR
from agentenv.registry import UnknownEnv, default_port, env_class, server_members

from .app import create_app
from .auth import is_loopback, resolve_token


class CannotServe(RuntimeError):
    """A server cannot start as asked: its port is taken, its host needs a token, or the caller cannot block."""


def stop_when_orphaned(
    parent_pid: int, interval_s: float = 0.5, on_orphaned: Callable[[], None] | None = None
) -> None:
    """SIGTERM this process (uvicorn's graceful shutdown: sessions closed) once ``parent_pid`` is no longer
    its parent, after calling ``on_orphaned`` (what the parent would have cleaned up: uvicorn ends on the
    re-raised signal, so no ``finally`` after it runs).  A launcher killed without the chance to stop its
    servers (SIGKILL, an unhandled SIGTERM) then leaves none behind."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval_s)
        if on_orphaned is not None:
            on_orphaned()
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="stop-when-orphaned", daemon=True).start()


def serve(
    name: str,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    log_level: str = "warning",
    workers: int = 1,
    **settings: Any,
) -> None:
    """Serve env ``name`` (or a server group such as ``lmrlgym``) until interrupted, on ``workers`` processes
    (:mod:`agentenv.server.workers`); ``settings`` are :func:`~agentenv.server.app.create_app`'s
    (``max_sessions``, ``ttl_s``, ``deadline_s``, ``token`` ...).  It blocks: a notebook or an asyncio program
    starts servers with :class:`ServerProcesses` instead.  A port in use, a host that needs a token or such a
    caller raise :class:`CannotServe`."""
    import asyncio

    from .connections import server_config

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none running: the usual case
        pass
    else:
        raise CannotServe(
            "serve blocks until interrupted, and this thread runs an event loop (a notebook's): start the "
            "server with agentenv.server.ServerProcesses, or `agentenv up` in a terminal"
        )
    if workers > 1 and threading.current_thread() is not threading.main_thread():
        raise CannotServe("serve with workers > 1 runs in the main thread (its supervisor handles signals)")
    if started_by_launcher():  # do not outlive the launcher
        stop_when_orphaned(int(os.environ[PARENT_PID_VAR]))

    envs = [env_class(env) for env in server_members(name)]
    port = port or default_port(name)
    if problem := _cannot_bind(host, port, name) or open_without_token(host, settings.get("token")):
        raise CannotServe(problem)
    settings["loopback_only"] = is_loopback(host)
    announce = None
    if not started_by_launcher():  # `up` and the other starters print their own URLs
        routes = ", ".join(f"/{cls.name}/" for cls in envs)
        announce = f"serving {routes} at {base_url(host, port)} ({workers} worker{'s' * (workers > 1)}); Ctrl-C stops"
    if workers > 1:
        from .workers import serve_workers

        serve_workers(envs, host=host, port=port, workers=workers, log_level=log_level, announce=announce, **settings)
        return
    run_announced(server_config(create_app(envs, **settings), host=host, port=port, log_level=log_level,
                                access_log=False), announce)


def run_announced(config: Any, announce: str | None) -> None:
    """``uvicorn.run`` of ``config``, printing ``announce`` once the server listens; exit status 3 (as
    uvicorn's) when its start-up fails."""
    server = announcing_server(config, announce)
    run_until_stopped(server)
    if not server.started:  # an env's start-up failed, said above
        sys.exit(3)


def run_until_stopped(server: Any, sockets: list | None = None) -> None:
    """Run a ``uvicorn.Server`` until SIGINT or SIGTERM stops it, and return.  uvicorn handles the signals
    while it serves, and raises them again once it has shut down, still inside its event loop: a
    ``KeyboardInterrupt`` there cancelled what tasks were left, and about one stop in 25 logged that as a
    traceback.  Around uvicorn's handling, a signal asks the server to stop instead: the one raised again
    finds it stopped, and one that comes before uvicorn handles signals (while the event loop is made) stops
    it as it starts, where it was lost and the server served on.  The handlers from before come back after."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # uvicorn handles no signal there either
        server.run(sockets=sockets)
        return

    def stop(signum: int, frame: object) -> None:
        server.should_exit = True

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, stop)
    try:
        server.run(sockets=sockets)
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: set outside Python, which cannot be put back from here
                signal.signal(sig, handler)


def announcing_server(config: Any, announce: str | None) -> Any:
    """A ``uvicorn.Server`` that prints ``announce`` on stderr once it listens: after its envs' start-up and
    its bind, so "serving" is never followed by an error that it cannot start."""
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list | None = None) -> None:
            await super().startup(sockets)
            if self.started and self.should_exit:
                # Stopped while it started (a `--workers` server stopped at once): uvicorn before 0.30 then
                # returned without the app's shutdown (its sessions not closed, a traceback logged).  Let its
                # main loop run one tick, which ends in that shutdown on every version.
                self.should_exit = False
                asyncio.get_running_loop().call_soon(setattr, self, "should_exit", True)
            if self.started and announce:
                print(announce, file=sys.stderr, flush=True)

    return AnnouncingServer(config)


def server_arguments(
    *, max_sessions: int | None = None, ttl_s: float | None = None, evict_idle_s: float | None = None,
    deadline_s: float | None = None, workers: int | None = None,
) -> list[str]:
    """``agentenv serve`` options for these settings (the ones given)."""
    pairs = [("--max-sessions", max_sessions), ("--ttl", ttl_s), ("--evict-idle", evict_idle_s), ("--deadline", deadline_s),
             ("--workers", workers)]
    return [arg for flag, value in pairs if value is not None for arg in (flag, str(value))]


class ServerProcesses:
    """Start servers as subprocesses, wait until each answers ``/health``, stop them all on exit.

    ``with ServerProcesses(["lmrlgym", "babyai"]) as urls: ...`` — ``urls`` maps each name to its base URL.
    A ``token`` reaches the servers through ``AGENTENV_TOKEN``, not their command lines (``ps`` shows those).
    """

    def __init__(
        self,
        names: Sequence[str],
        *,
        host: str = "127.0.0.1",
        ports: dict[str, int] | None = None,
        extra_args: Sequence[str] = (),
        token: str | None = None,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.names = list(names)
        self.host = host
        strays = sorted(set(ports or {}) - set(self.names))
        if strays:
            raise ValueError(f"a port is given for {', '.join(strays)}, which is not among the servers started "
                             f"({', '.join(self.names)}): name the server, as `agentenv list` shows it")
        self.ports = {name: (ports or {}).get(name) or default_port(name) for name in self.names}
        shared = {port: [n for n in self.names if self.ports[n] == port] for port in self.ports.values()}
        for port, names in shared.items():
            if len(names) > 1:
                raise ValueError(f"{' and '.join(names)} would both listen on port {port}: serve them as one group "
                                 f"(agentenv list shows the groups), or give each its own --port NAME=PORT")
        self.extra_args = list(extra_args)
        self.token = token
        self.startup_timeout_s = startup_timeout_s
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def urls(self) -> dict[str, str]:
        return {name: base_url(self.host, port) for name, port in self.ports.items()}

    def start(self) -> dict[str, str]:
        # another server on the port would answer our health checks while our own one fails to bind
        for name, port in self.ports.items():
            if problem := _cannot_bind(self.host, port, name):
                raise CannotServe(f"cannot start server {name!r}: {problem}")
        for name in self.names:
            server_members(name)  # an unknown name is refused here, not by a child that then exits
        try:
            for name in self.names:
                command = [sys.executable, "-m", "agentenv.cli", "serve", name, "--host", self.host]
                command += ["--port", str(self.ports[name]), *self.extra_args]
                env = os.environ | {PARENT_PID_VAR: str(os.getpid())}
                if self.token:
                    env[TOKEN_ENV_VAR] = self.token
                self.procs[name] = subprocess.Popen(command, start_new_session=True, env=env)
            for name in self.names:
                self._wait_healthy(name)
        except BaseException:
            self.stop()
            raise
        return self.urls

    def _wait_healthy(self, name: str) -> None:
        """Wait for ``/health`` to answer from our own process (its pid) with this server's env(s).  Another
        process that took the port after the check in :meth:`start` answers with its own pid, and our server
        then exits, unable to bind."""
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.urls[name]}/health"
        while time.monotonic() < deadline:
            if self.procs[name].poll() is not None:
                # the port taken meanwhile, or what the server printed above (a missing dependency, a limit)
                why = _cannot_bind(self.host, self.ports[name], name) or "its own error is above"
                raise CannotServe(f"server {name!r} exited with status {self.procs[name].returncode} while "
                                  f"starting: {why}")
            try:
                if _serves(httpx.get(url, timeout=2), server_members(name), self.procs[name].pid):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"server {name!r} not healthy at {url} after {self.startup_timeout_s:.0f} s")

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM every server (uvicorn then closes all sessions), SIGKILL what is left after the timeout."""
        for proc in self.procs.values():
            if proc.poll() is None:
                signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                signal_group(proc, signal.SIGKILL)
                proc.wait()
        self.procs.clear()

    def __enter__(self) -> dict[str, str]:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _health_of(answer: httpx.Response) -> tuple[list[str], int] | None:
    """``(envs, pid)`` of a ``/health`` answer from a healthy agentenv server (it names its process), else None."""
    try:
        body = answer.json() if answer.status_code == 200 else None
    except ValueError:
        return None
    if not (isinstance(body, dict) and body.get("status") == "ok" and isinstance(body.get("pid"), int)):
        return None
    return body.get("envs", [body.get("env")]), body["pid"]


def _serves(health: httpx.Response, envs: list[str], pid: int) -> bool:
    """Whether a ``/health`` answer is a healthy agentenv server for exactly ``envs``, run by process ``pid``."""
    return _health_of(health) == (envs, pid)


def _agentenv_server_at(host: str, port: int) -> list[str]:
    """The envs an agentenv server listening at ``host:port`` serves (``["maze", "wordle"]``), or []."""
    try:
        health = _health_of(httpx.get(f"{base_url(host, port)}/health", timeout=2))
    except httpx.HTTPError:
        return []
    return [str(env) for env in health[0] if env] if health else []  # None: another program


def base_url(host: str, port: int) -> str:
    """``http://host:port``, an IPv6 address in brackets (``http://[::1]:8000``)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports free on ``host`` now: all are held at once while chosen, so two servers
    started together never draw the same one (one at a time, the kernel may hand a just-freed port out again)."""
    with contextlib.ExitStack() as stack:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sockets = [stack.enter_context(socket.socket(family)) for _ in range(count)]
        for sock in sockets:
            sock.bind((host, 0))
        return [sock.getsockname()[1] for sock in sockets]


def open_without_token(host: str, token: str | None) -> str | None:
    """Why a server may not listen on ``host`` as it is asked to: beyond loopback, only with a token (and a
    token given is not blank)."""
    try:
        token = resolve_token(token)
    except ValueError as exc:
        return str(exc)
    if is_loopback(host) or token:
        return None
    return (f"--host {host} lets other machines reach the server: give --token T as well (or set {TOKEN_ENV_VAR}), "
            "which every client then has to send")


def _cannot_bind(host: str, port: int, name: str) -> str | None:
    """Why binding ``host:port`` as uvicorn does (with ``SO_REUSEADDR``) would fail for server ``name`` (an env
    or a group), saying what to do; None when it would not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        socket.create_server((host, port), family=family).close()
    except OSError as exc:
        if exc.errno is not None and exc.errno < 0:  # getaddrinfo's (create_server re-raises them as OSError)
            return f"cannot resolve host {host!r}: give --host 127.0.0.1 or one of this machine's addresses"
        if exc.errno == errno.EADDRINUSE:
            served = _agentenv_server_at(host, port)
            if served:
                try:
                    wanted = server_members(name)
                except UnknownEnv:  # not installed here: starting it will say so
                    wanted = [name]
                reuse = "use it as it is, " if set(wanted) <= set(served) else ""
                return (f"port {port} on {host} already serves {', '.join(served)} (an agentenv server): {reuse}"
                        "stop it, or give --port")
            return f"port {port} on {host} is already in use: stop what listens there, or give --port"
        if exc.errno == errno.EADDRNOTAVAIL:
            return f"{host} is not an address of this machine: give --host 127.0.0.1 or one of its own"
        if exc.errno == errno.EACCES:
            return f"binding port {port} needs privileges: give a --port above 1023"
        return f"cannot listen on {host}:{port}: {exc.strerror}"
    return None
