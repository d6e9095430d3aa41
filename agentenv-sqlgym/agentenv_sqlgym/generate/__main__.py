"""Build the generated task set now (at set-up) instead of on first use:

    python -m agentenv_sqlgym.generate [--cache DIR]

Prints the folder and its manifest.  A complete set already there is kept as it is.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from .cache import task_set


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agentenv_sqlgym.generate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--cache", type=Path, default=None, help="cache folder (default: AGENTENV_SQLGYM_CACHE or ~/.cache)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    folder = task_set(args.cache)
    print(f"{folder} ({time.perf_counter() - start:.1f} s)")
    print(json.dumps(json.loads((folder / "manifest.json").read_text()), indent=1))


if __name__ == "__main__":
    main()
