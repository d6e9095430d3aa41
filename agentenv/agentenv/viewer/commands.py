"""``agentenv view``: browse results files in a web browser.

    agentenv view runs/expert.jsonl                       # prints http://127.0.0.1:PORT/
    agentenv view runs/bc.jsonl runs/evol.jsonl --port 8080

The page lists the episodes (filter by env, task type, success), shows one as a conversation with each
turn's reward and the env's picture where it has one (BabyAI), and two files' episodes of a task side by
side.  It listens on 127.0.0.1 only; Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from agentenv.cli import HelpWithDefaults, port_number


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="browse results files in a web page (filter, replay, compare two agents)",
                       formatter_class=HelpWithDefaults)
    p.add_argument("files", type=Path, nargs="+", metavar="FILE", help="results files (.jsonl) of eval or collect")
    p.add_argument("--port", type=port_number, help="port on 127.0.0.1 (default: a free one)")
    p.set_defaults(func=run_view)


def run_view(args: argparse.Namespace) -> int:
    from agentenv.server.connections import server_config
    from agentenv.server.launcher import announcing_server, run_until_stopped
    from agentenv.viewer.app import create_app

    try:
        app = create_app(args.files)
    except (FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", args.port or 0))
    except OSError as exc:
        raise SystemExit(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror}; give another --port") from None
    print(f"agentenv view: http://127.0.0.1:{sock.getsockname()[1]}/  (the files as they are now: episodes added later "
          "show after a restart; Ctrl-C stops it)", file=sys.stderr, flush=True)
    # announcing nothing (said above), but stopped while it starts it still shuts its app down, as `serve` does
    run_until_stopped(announcing_server(server_config(app, log_level="warning"), None), sockets=[sock])
    print("stopped", file=sys.stderr)  # by Ctrl-C or SIGTERM: the way a server ends
    return 0
