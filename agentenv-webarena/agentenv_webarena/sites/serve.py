"""The bundled sites' process: ``python -m agentenv_webarena.sites.serve``.

It binds one loopback port per site (WebArena's own ports where they are free, any free port otherwise),
prints ``{"shopping": port, ...}`` as one JSON line, and serves until its standard input closes, so it
never outlives the process that started it.  The control token comes in ``AGENTENV_WEBARENA_CONTROL``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys

import uvicorn

from . import admin, forum, shop, wiki
from .control import CONTROL_TOKEN_ENV
from .store import Store

#: site -> (its app's builder, WebArena's port for it)
SITES = {
    "shopping": (shop.build, 7770),
    "shopping_admin": (admin.build, 7780),
    "reddit": (forum.build, 9999),
    "wikipedia": (wiki.build, 8888),
}


def bind(preferred: int) -> socket.socket:
    """A listening socket on 127.0.0.1: ``preferred`` if free, else any free port."""
    for port in (preferred, 0):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen(128)
        return sock
    raise OSError("no free port on 127.0.0.1")


async def serve(token: str) -> None:
    store = Store()
    servers, sockets, ports = [], [], {}
    for name, (build, preferred) in SITES.items():
        sock = bind(preferred)
        config = uvicorn.Config(build(store, token).app, log_level="warning", lifespan="off", access_log=False)
        servers.append(uvicorn.Server(config))
        sockets.append(sock)
        ports[name] = sock.getsockname()[1]
    loop = asyncio.get_running_loop()

    def stop_if_closed() -> None:
        if not os.read(sys.stdin.fileno(), 4096):  # the parent closed our stdin (or died)
            loop.remove_reader(sys.stdin.fileno())
            for server in servers:
                server.should_exit = True

    loop.add_reader(sys.stdin.fileno(), stop_if_closed)
    print(json.dumps(ports), flush=True)
    await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in zip(servers, sockets, strict=True)))


def main() -> None:
    token = os.environ.get(CONTROL_TOKEN_ENV)
    if not token:
        sys.exit(f"{CONTROL_TOKEN_ENV} is not set: this process is started by agentenv_webarena")
    asyncio.run(serve(token))


if __name__ == "__main__":
    main()
