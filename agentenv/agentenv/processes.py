"""Child processes that stop with their parent: long runs (a demo seed, torchrun, a server) must not keep
running after the script that started them is interrupted or terminated."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence


def interrupt_on_sigterm() -> None:
    """Make SIGTERM (a process manager's, Slurm's before a kill) raise ``KeyboardInterrupt`` like Ctrl-C, so
    ``finally`` blocks run: servers stop, child process groups are ended.  SIGINT is set too, because a
    process started in the background of a non-interactive shell inherits it ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the process group ``proc`` leads (it and every process it started)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def run_process_group(cmd: Sequence[str], env: Mapping[str, str] | None = None, stop_timeout_s: float = 30.0) -> int:
    """Run ``cmd`` in a process group of its own and return its exit status.  If this process is interrupted
    while it runs, the whole group (torchrun's workers too) gets SIGTERM, then SIGKILL after
    ``stop_timeout_s``."""
    proc = subprocess.Popen(list(cmd), env=None if env is None else dict(env), start_new_session=True)
    try:
        return proc.wait()
    except BaseException:
        signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=stop_timeout_s)
        except subprocess.TimeoutExpired:
            signal_group(proc, signal.SIGKILL)
            proc.wait()
        raise
