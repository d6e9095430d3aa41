"""``agentenv list``, ``agentenv serve ENV`` and ``agentenv up ENV...``."""

from __future__ import annotations

import argparse
import time


def add_commands(sub: argparse._SubParsersAction) -> None:
    listing = sub.add_parser("list", help="the installed environments: server, port, splits, rounds")
    listing.set_defaults(func=_list)

    serve = sub.add_parser("serve", help="serve one environment (or a server group of several) over HTTP")
    serve.add_argument("env", help="an installed environment or server group (agentenv list shows them)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=None, help="port (default: the env's default port)")
    serve.add_argument("--max-sessions", type=int, help="live sessions per env (default: the env's own, else 512)")
    serve.add_argument("--ttl", type=float, default=900.0, help="seconds before an idle session is reaped")
    serve.add_argument(
        "--token",
        default=None,
        help="require 'Authorization: Bearer TOKEN'; better set AGENTENV_TOKEN, which ps does not show",
    )
    serve.add_argument("--log-level", default="warning")
    serve.set_defaults(func=_serve)

    up = sub.add_parser("up", help="start several servers as subprocesses; Ctrl-C stops them all")
    up.add_argument("envs", nargs="+", help="environments or server groups, e.g. lmrlgym babyai")
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument("--port", action="append", default=[], metavar="NAME=PORT", help="override a default port")
    up.add_argument("--max-sessions", type=int, help="live sessions per env (default: the env's own, else 512)")
    up.add_argument("--ttl", type=float, default=900.0, help="seconds before an idle session is reaped")
    up.add_argument(
        "--token",
        default=None,
        help="servers require 'Authorization: Bearer TOKEN' (or set AGENTENV_TOKEN); passed to them through "
        "AGENTENV_TOKEN, not their command lines",
    )
    up.set_defaults(func=_up)


def _list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from agentenv.registry import env_class, installed_envs

    table = Table(title="installed environments")
    for column in ("env", "server", "port", "splits (tasks)", "max rounds", "package"):
        table.add_column(column)
    for env in installed_envs():
        cls = env_class(env)
        splits = ", ".join(f"{name} {len(tasks)}" for name, tasks in cls.splits.items())
        table.add_row(env, cls.server or env, str(cls.port or "-"), splits, str(cls.max_rounds), cls.__module__.split(".")[0])
    Console().print(table)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from agentenv.server.launcher import serve

    serve(
        args.env,
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        ttl_s=args.ttl,
        token=args.token,
        log_level=args.log_level,
    )
    return 0


def _up(args: argparse.Namespace) -> int:
    from agentenv.processes import interrupt_on_sigterm
    from agentenv.server.launcher import ServerProcesses

    interrupt_on_sigterm()  # Ctrl-C and a process manager's SIGTERM both stop the servers
    ports = {}
    for item in args.port:
        name, _, port = item.partition("=")
        if not port.isdigit():
            raise SystemExit(f"--port takes NAME=PORT, got {item!r}")
        ports[name] = int(port)
    extra = ["--ttl", str(args.ttl)] + (["--max-sessions", str(args.max_sessions)] if args.max_sessions else [])
    with ServerProcesses(args.envs, host=args.host, ports=ports, extra_args=extra, token=args.token) as urls:
        for name, url in urls.items():
            print(f"{name:12s} {url}", flush=True)
        print("all servers healthy; Ctrl-C stops them", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping servers", flush=True)
    return 0
