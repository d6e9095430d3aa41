"""The ``agentenv`` command.  Each area adds its own subcommands:

- :mod:`agentenv.server.commands`: ``serve``, ``up``
- :mod:`agentenv.controller.commands`: ``eval``, ``collect``
- :mod:`agentenv.bench`: ``bench``
- :mod:`agentenv.trainer.commands`: ``train bc|evol|eto|rft``
- :mod:`agentenv.viewer.commands`: ``view``
"""

from __future__ import annotations

import argparse
import copy
import difflib
import importlib
import sys
from collections.abc import Callable

_COMMAND_MODULES = ["agentenv.server.commands", "agentenv.controller.commands", "agentenv.bench",
                    "agentenv.trainer.commands", "agentenv.viewer.commands"]


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


def round_limit(text: str) -> int | None:
    """An argparse type for ``--max-rounds``: a whole number, 0 for each env's own limit (``None``), as the
    trainers' settings read it."""
    return whole_number(0)(text) or None


def seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, 0 (greedy) or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 (greedy) or more, not {text}")
    return value


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535."""
    port = whole_number(1)(text)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"a port is at most 65535, not {text}")
    return port


class OneLineParser(argparse.ArgumentParser):
    """A parser whose mistakes are one line saying what to do (argparse's own printed its usage first: a
    dozen lines for ``eval``).  Subcommands' parsers are of the same class."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parse_command_line(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with an unknown option refused by the subcommand it was given to, naming
    the option it is likely a misspelling of (``agentenv train bc: error: unrecognized arguments: --modle x;
    did you mean --model?``)."""
    args, extra = parser.parse_known_args(argv)
    if "--debug" in extra and hasattr(args, "debug"):  # `agentenv eval ... --debug`, as an error's hint reads
        extra.remove("--debug")
        args.debug = True
    if extra:
        chosen = parser
        while True:  # down the subcommands that were chosen: `train`, then `bc`
            subcommands = [a for a in chosen._actions if isinstance(a, argparse._SubParsersAction)]
            if not subcommands or getattr(args, subcommands[0].dest, None) not in subcommands[0].choices:
                break
            chosen = subcommands[0].choices[getattr(args, subcommands[0].dest)]
        # compared without their dashes, which every option shares (--data was "likely" --beta)
        known = {o.lstrip("-"): o for a in chosen._actions for o in a.option_strings if o.startswith("--")}
        guesses = [
            known[g] for x in extra if x.startswith("--")
            for g in difflib.get_close_matches(x.split("=")[0].lstrip("-"), list(known), 1)
        ]
        chosen.error(f"unrecognized arguments: {' '.join(extra)}" + (f"; did you mean {guesses[0]}?" if guesses else ""))
    return args


class HelpWithDefaults(argparse.HelpFormatter):
    """``--help`` that shows each option's default where it has one (and its help does not already say), and
    not a deprecated spelling of an option (it still works, with a note)."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        old = getattr(action, "old_flag", None)
        if isinstance(old, str) and old in action.option_strings and len(action.option_strings) > 1:
            action = copy.copy(action)
            action.option_strings = [o for o in action.option_strings if o != old]
        return super()._format_action_invocation(action)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        hidden = action.default is None or action.default is False or action.default == [] or action.default == argparse.SUPPRESS
        if "default" in text or not action.option_strings or hidden:
            return text
        return f"{text} (default: %(default)s)"


class ListOption(argparse.Action):
    """A list option whose values come space- or comma-separated, over one or several uses of the flag
    (``--env maze wordle``, ``--env maze,wordle``, ``--env maze --env wordle``): one flat list.  Given
    ``old_flag`` (a deprecated name of it), using that name still works and prints a note.  (Not argparse's
    own ``deprecated``, a flag that Python 3.13 reads to warn of every use of the option.)"""

    def __init__(self, *args, old_flag: str | None = None, **kwargs) -> None:
        kwargs.setdefault("nargs", "+")
        super().__init__(*args, **kwargs)
        self.old_flag = old_flag

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if self.old_flag and option_string == self.old_flag:
            canonical = next(o for o in self.option_strings if o != self.old_flag)
            print(f"note: {self.old_flag} is deprecated; use {canonical}", file=sys.stderr)
        current = getattr(namespace, self.dest, None)
        items = list(current) if isinstance(current, list) else []
        given = [part for value in values for part in str(value).split(",") if part]
        if not given:
            parser.error(f"argument {option_string}: {' '.join(map(str, values))!r} names nothing")
        setattr(namespace, self.dest, items + given)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentenv")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="agentenv", description="AgentGym: env servers, evaluation, training")
    parser.add_argument("--debug", action="store_true", help="show a traceback when a command fails")
    parser.add_argument("--version", action="version", version=f"agentenv {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMAND_MODULES:
        module = importlib.import_module(name)
        module.add_commands(sub)  # each subparser sets `func=callable(args) -> int`
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; as the program itself (no ``argv``), SIGTERM stops it as Ctrl-C does, and an interrupted
    run exits without waiting for the calls it left to a server that stopped answering."""
    if argv is not None:
        return _run(argv)
    from agentenv.processes import exit_past_abandoned_calls, interrupt_on_sigterm, quiet_other_progress_bars

    interrupt_on_sigterm()
    quiet_other_progress_bars()
    code = _run(argv)
    if code == 130:
        exit_past_abandoned_calls(code)
    return code


def _run(argv: list[str] | None) -> int:
    try:
        args = parse_command_line(build_parser(), argv)  # it imports every command's module: a Ctrl-C may come meanwhile
    except KeyboardInterrupt:
        return _interrupted()
    if args.debug:
        return int(args.func(args) or 0)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as exc:  # a failure no command turned into its own one line: still one line
        from agentenv.controller.commands import one_line

        if isinstance(exc, OSError) and exc.filename is not None:  # a folder for a file, no permission ...
            path = exc.filename2 or exc.filename  # a rename's: where the file was to go
            raise SystemExit(f"error: {path}: {exc.strerror or one_line(exc)} (rerun with --debug for the traceback)") from None
        raise SystemExit(f"error: {type(exc).__name__}: {one_line(exc)} (rerun with --debug for the traceback)") from None


def _interrupted() -> int:
    """Say "interrupted" and return its exit status; a server that a launcher (``up``, bench) stops while it
    starts says nothing: the launcher says it."""
    from agentenv.processes import started_by_launcher

    if not started_by_launcher():
        print("interrupted", file=sys.stderr)
    return 130


if __name__ == "__main__":
    sys.exit(main())
