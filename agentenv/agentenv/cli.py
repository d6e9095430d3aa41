"""The ``agentenv`` command.  Each area adds its own subcommands:

- :mod:`agentenv.server.commands`: ``serve``, ``up``
- :mod:`agentenv.controller.commands`: ``eval``, ``collect``
- :mod:`agentenv.trainer.commands`: ``train bc|evol|eto|rft``
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

_COMMAND_MODULES = ["agentenv.server.commands", "agentenv.controller.commands", "agentenv.trainer.commands"]


def whole_number(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {text}")
        return value

    return parse


def seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535."""
    port = whole_number(1)(text)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"a port is at most 65535, not {text}")
    return port


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
