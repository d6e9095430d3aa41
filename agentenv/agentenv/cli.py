"""The ``agentenv`` command.  Each area adds its own subcommands:

- :mod:`agentenv.server.commands`: ``serve``, ``up``
- :mod:`agentenv.controller.commands`: ``eval``, ``collect``
- :mod:`agentenv.trainer.commands`: ``train bc|evol|eto|rft``
"""

from __future__ import annotations

import argparse
import importlib
import sys

_COMMAND_MODULES = ["agentenv.server.commands", "agentenv.controller.commands", "agentenv.trainer.commands"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentenv", description="AgentGym: env servers, evaluation, training")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMAND_MODULES:
        module = importlib.import_module(name)
        module.add_commands(sub)  # each subparser sets `func=callable(args) -> int`
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; as the program itself (no ``argv``), SIGTERM stops it as Ctrl-C does."""
    if argv is None:
        from agentenv.processes import interrupt_on_sigterm

        interrupt_on_sigterm()
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
