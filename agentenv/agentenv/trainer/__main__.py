"""``python -m agentenv.trainer ALGORITHM ...``: the ``train`` commands alone, for launchers::

    torchrun --nproc_per_node 2 -m agentenv.trainer bc --model M --data D --output-dir OUT
"""

from __future__ import annotations

import logging
import sys

from agentenv.cli import OneLineParser, parse_command_line
from agentenv.trainer.commands import add_train_commands


def main(argv: list[str] | None = None) -> int:
    from agentenv.processes import end_group_with_owner, quiet_other_progress_bars

    quiet_other_progress_bars()
    end_group_with_owner()  # launched by `agentenv train` (run_process_group): end with it, even if it is killed
    # warnings, not every library's INFO: httpx's line per request and accelerate's per checkpoint file filled
    # a launcher's log, once per process
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = OneLineParser(prog="python -m agentenv.trainer", description="agentenv trainers")
    add_train_commands(parser.add_subparsers(dest="algorithm", required=True))
    args = parse_command_line(parser, argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
