"""``agentenv list``, ``agentenv serve ENV`` and ``agentenv up ENV...``."""

from __future__ import annotations

import argparse
import os
import sys
import time

from agentenv.cli import HelpWithDefaults, port_number, seconds, whole_number


def add_commands(sub: argparse._SubParsersAction) -> None:
    about = "the installed environments: server, port, splits, rounds"
    listing = sub.add_parser("list", help=about, description=about)
    listing.set_defaults(func=_list)

    serve = sub.add_parser("serve", help="serve one environment (or a server group of several) over HTTP",
                           formatter_class=HelpWithDefaults)
    serve.add_argument("env", help="an installed environment or server group (agentenv list shows them)")
    serve.add_argument("--port", type=port_number, help="port (default: the env's own, agentenv list)")
    _add_server_options(serve)
    serve.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"],
                       help="uvicorn's log level (info: every start-up and shutdown step)")
    serve.set_defaults(func=_serve)

    up = sub.add_parser("up", help="start several servers as subprocesses; Ctrl-C stops them all",
                        formatter_class=HelpWithDefaults)
    up.add_argument("envs", nargs="+", help="environments or server groups, e.g. lmrlgym babyai; all: every installed one")
    up.add_argument("--port", action="append", default=[], type=_named_port, metavar="NAME=PORT",
                    help="override a default port (repeatable)")
    _add_server_options(up)
    up.set_defaults(func=_up)


def _add_server_options(p: argparse.ArgumentParser) -> None:
    from agentenv.server.app import DEFAULT_EVICT_IDLE_S, DEFAULT_MAX_SESSIONS, DEFAULT_TTL_S

    p.add_argument("--host", default="127.0.0.1", help="interface to bind (loopback only by default)")
    p.add_argument("--max-sessions", type=whole_number(1),
                   help=f"live sessions per env (default: the env's own, else {DEFAULT_MAX_SESSIONS})")
    p.add_argument("--ttl", type=seconds, default=DEFAULT_TTL_S,
                   help="seconds of idleness after which a session is reaped (a day)")
    p.add_argument("--evict-idle", type=seconds, default=DEFAULT_EVICT_IDLE_S,
                   help="a full server closes the least recently used session idle this long for a new client")
    p.add_argument("--deadline", type=seconds,
                   help="seconds one env call may take before its session is ended, 504 (default: the env's own)")
    p.add_argument("--workers", type=_worker_count, default=1,
                   help="processes serving on the one port, each session kept on its own (docs/protocol.md, Workers)")
    p.add_argument("--token", default=None,
                   help="require 'Authorization: Bearer TOKEN'; better set AGENTENV_TOKEN, which ps does not show")


def _worker_count(text: str) -> int:
    """A number of server processes: at least 1, at most 8 per core (each holds its envs in memory)."""
    value, most = whole_number(1)(text), 8 * (os.cpu_count() or 1)
    if value > most:
        raise argparse.ArgumentTypeError(f"must be at most {most} (8 per core of this machine), not {value}")
    return value


def _named_port(text: str) -> tuple[str, int]:
    name, eq, port = text.partition("=")
    if not eq or not name:
        raise argparse.ArgumentTypeError(f"takes NAME=PORT, not {text!r}")
    return name, port_number(port)


def _server_settings(args: argparse.Namespace) -> dict[str, object]:
    return {"max_sessions": args.max_sessions, "ttl_s": args.ttl, "evict_idle_s": args.evict_idle,
            "deadline_s": args.deadline, "token": args.token, "workers": args.workers}


def _list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from agentenv.controller.report import table_console
    from agentenv.registry import UnknownEnv, env_class, installed_envs

    table = Table(title="installed environments")
    for column in ("env", "server", "port", "splits (tasks)", "max rounds", "package"):
        table.add_column(column)
    broken = []
    for env in installed_envs():
        try:
            cls = env_class(env)
        except UnknownEnv as exc:  # one broken package must not hide the others
            broken.append(str(exc))
            table.add_row(env, "-", "-", "does not load (below)", "-", "-")
            continue
        splits = ", ".join(f"{name} {len(tasks)}" for name, tasks in cls.splits.items())
        table.add_row(env, cls.server or env, str(cls.port or "-"), splits, str(cls.max_rounds), cls.__module__.split(".")[0])
    table_console().print(table)
    for message in broken:
        print(f"error: {message}", file=sys.stderr)
    return 1 if broken else 0


def _serve(args: argparse.Namespace) -> int:
    from agentenv.processes import started_by_launcher
    from agentenv.registry import UnknownEnv
    from agentenv.server.launcher import CannotServe, serve
    from agentenv.server.workers import WorkerExited

    try:
        serve(args.env, host=args.host, port=args.port, log_level=args.log_level, **_server_settings(args))
    except (UnknownEnv, CannotServe, WorkerExited) as exc:
        raise SystemExit(f"error: {exc}") from None
    except KeyboardInterrupt:  # the workers' supervisor stops on it
        pass
    if not started_by_launcher():  # `up`, bench and the others say when they stop their servers
        print("stopped", file=sys.stderr)  # by Ctrl-C or SIGTERM: the way a server ends
    return 0


def _up(args: argparse.Namespace) -> int:
    from agentenv.processes import interrupt_on_sigterm
    from agentenv.registry import UnknownEnv, all_servers
    from agentenv.server.launcher import ServerProcesses, open_without_token, server_arguments

    if problem := open_without_token(args.host, args.token):  # before any server starts
        raise SystemExit(f"error: {problem}")
    interrupt_on_sigterm()  # Ctrl-C and a process manager's SIGTERM both stop the servers
    extra = server_arguments(**{k: v for k, v in _server_settings(args).items() if k != "token"})
    names = all_servers() if args.envs == ["all"] else args.envs
    try:
        servers = ServerProcesses(names, host=args.host, ports=dict(args.port), extra_args=extra, token=args.token)
        urls = servers.start()
    except (UnknownEnv, ValueError, RuntimeError, TimeoutError) as exc:
        raise SystemExit(f"error: {exc}") from None
    try:
        for name, url in urls.items():
            print(f"{name:12s} {url}", flush=True)
        print("all servers healthy; Ctrl-C stops them", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping servers", file=sys.stderr, flush=True)
    finally:
        servers.stop()
    return 0
