"""A run's hold on a path (:func:`agentenv.processes.held_by_this_run`), taken by another process."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

_HOLDER = (
    "import sys, time\n"
    "from agentenv.processes import held_by_this_run\n"
    "with held_by_this_run(sys.argv[1], 'held'):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(600)\n"
)


@contextlib.contextmanager
def held_elsewhere(path: str | os.PathLike) -> Iterator[None]:
    """While the block runs, another process holds ``path`` as a run writing it or training into it does."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        if holder.stdout.readline() != "held\n":
            raise RuntimeError(f"the process meant to hold {path} exited with status {holder.wait()}")
        yield
    finally:
        holder.kill()
        holder.wait()
