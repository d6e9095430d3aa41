"""Run a real server on a free loopback port for tests and benchmarks."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI

from agentenv.env import Environment
from agentenv.server.app import create_app
from agentenv.server.connections import server_config
from agentenv.server.launcher import free_ports


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now; for several servers at once use :func:`free_ports`."""
    return free_ports(1, host)[0]


@contextlib.contextmanager
def refusing_url(host: str = "127.0.0.1") -> Iterator[str]:
    """A URL where every connection is refused while the context lasts (a server that is down): a bound socket
    that never listens holds its port, so no server started meanwhile is handed that port."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        yield f"http://{host}:{sock.getsockname()[1]}"


@contextlib.contextmanager
def running_server(
    app_or_envs: FastAPI | type[Environment] | Sequence[type[Environment]], **create_app_kwargs: Any
) -> Iterator[str]:
    """Serve an app (or env classes, through :func:`create_app`) with uvicorn in a background thread.

    Yields the base URL (``http://127.0.0.1:PORT``); on exit the server shuts down, which runs the app's
    lifespan end and so closes every session still open.
    """
    app = app_or_envs if isinstance(app_or_envs, FastAPI) else create_app(app_or_envs, **create_app_kwargs)
    port = free_port()
    config = server_config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn:{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"test server on port {port} did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
