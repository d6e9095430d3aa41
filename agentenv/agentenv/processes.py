"""Child processes that stop with their parent: long runs (a demo seed, torchrun, a server) must not keep
running after the script that started them is interrupted or terminated."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

log = logging.getLogger(__name__)


#: set by :class:`agentenv.server.launcher.ServerProcesses` for its servers: the launcher's pid, which they watch
PARENT_PID_VAR = "AGENTENV_PARENT_PID"


def started_by_launcher() -> bool:
    """Whether this process is a server that :class:`~agentenv.server.launcher.ServerProcesses` started (for
    ``up``, bench, the demo): the launcher says when it starts, stops or is interrupted, not each server."""
    return PARENT_PID_VAR in os.environ


class _Hold(NamedTuple):
    #: whether this run's own code may hold the path again (``nested``)
    nested: bool
    #: the held file's (device, inode) when the hold was taken (:func:`still_held`)
    file: tuple[int, int]


#: the paths this process holds (:func:`held_by_this_run`)
_HELD: dict[str, _Hold] = {}


@contextlib.contextmanager
def held_by_this_run(path: str | os.PathLike, busy: str, *, nested: bool = False) -> Iterator[None]:
    """Hold ``path`` (a folder, or a file made if missing) while the block runs, or raise ``ValueError(busy)``
    when another run holds it: two runs writing one results file or output folder at once duplicate and lose
    work.  The lock is the kernel's (``flock``), so it goes with the process however that ends.  With
    ``nested`` a hold of the same path inside the block is this run's own, and not refused (a command that
    holds its results file across an evaluation and what it writes from it after)."""
    import errno
    import fcntl

    key = os.path.realpath(path)
    if key in _HELD and _HELD[key].nested:
        yield
        return
    # a file opened for writing: NFS takes an exclusive lock on no other (a folder it locks on no filesystem)
    fd = os.open(path, os.O_RDONLY if os.path.isdir(path) else os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ValueError(busy) from None
            # a filesystem without locks (NFS for a folder, Lustre without -o flock): run unguarded, and say so
            log.warning("%s cannot be locked here (%s): a second run into it at once would not be refused",
                        path, exc.strerror)
        st = os.fstat(fd)
        _HELD[key] = _Hold(nested, (st.st_dev, st.st_ino))
        try:
            yield
        finally:
            _HELD.pop(key, None)
    finally:
        os.close(fd)


def still_held(path: str | os.PathLike) -> bool:
    """Whether ``path`` still names the file this run holds (:func:`held_by_this_run`).  The lock is on the
    file, not its name: a results file deleted or replaced while its run writes it leaves the name free for a
    second run, and the two would play the same episodes."""
    hold = _HELD.get(os.path.realpath(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    return hold is not None and hold.file == (st.st_dev, st.st_ino)


def held_by_another_run(path: str | os.PathLike) -> bool:
    """Whether another process holds ``path`` (:func:`held_by_this_run`) now: a results file being written,
    a folder being trained into.  The probe's own lock lasts microseconds."""
    import errno
    import fcntl

    if not os.path.exists(path) or os.path.realpath(path) in _HELD:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # and with it the probe's lock
    return False


def interrupt_on_sigterm() -> None:
    """Make SIGTERM (a process manager's, Slurm's before a kill) raise ``KeyboardInterrupt`` like Ctrl-C, so
    ``finally`` blocks run: servers stop, child process groups are ended.  SIGINT is set too, because a
    process started in the background of a non-interactive shell inherits it ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """:func:`interrupt_on_sigterm` for the block only: the handlers from before come back after it (a
    server served from a notebook's or a script's own process leaves its signals as it found them)."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    interrupt_on_sigterm()
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: set outside Python, which cannot be put back from here
                signal.signal(sig, handler)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def exit_past_abandoned_calls(code: int) -> None:
    """Exit now with ``code`` where a rollout interrupted by Ctrl-C left calls in flight (to a server that
    stopped answering): Python's own exit would join their threads, waiting out the client's read timeout
    (minutes).  The standard streams are flushed first; atexit handlers do not run."""
    if any(t.name.startswith("rollout") and t.is_alive() for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def first_process() -> bool:
    """Whether this is a launcher's (torchrun's, accelerate's) first process, or no launcher's: the one that
    speaks and holds the run's folder."""
    return os.environ.get("RANK", "0") == "0"


def process_count() -> int:
    """How many processes a launcher started for the run (1 without one)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def quiet_other_progress_bars() -> None:
    """Other libraries' bars (datasets' map and filter, transformers' weight loading and shard writing) only
    where a person watches: off in a log, where each is a run of carriage returns, and in every process of a
    launcher but the first, whose bars interleaved mid-line.  Set before those libraries are imported; a
    value the user set wins."""
    import sys

    if not sys.stderr.isatty() or not first_process():
        for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
            os.environ.setdefault(name, "1")


def quiet_deepspeed_on_cpu() -> None:
    """On a machine without a GPU, tell DeepSpeed its accelerator is the CPU, which it would find itself after
    warning on stdout, at a run's first save, that it found no GPU.  A value the user set wins."""
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("DS_ACCELERATOR", "cpu")


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the process group ``proc`` leads (it and every process it started)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """Within the block, SIGINT and SIGTERM (unless ignored) are recorded in the list it yields instead of
    acting; the caller acts on them after.  Python's handlers run only in the main thread: elsewhere nothing
    is held."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    sigs = [sig for sig in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(sig) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in sigs}
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: set by :func:`run_process_group` for the group it starts: ``PID:START_TIME`` of the process that owns it
GROUP_OWNER_VAR = "AGENTENV_GROUP_OWNER"


def run_process_group(cmd: Sequence[str], env: Mapping[str, str] | None = None, stop_timeout_s: float = 30.0) -> int:
    """Run ``cmd`` in a process group of its own and return its exit status.  If this process is interrupted
    while it runs, the whole group (torchrun's workers too) gets SIGTERM, then SIGKILL after
    ``stop_timeout_s``.  Killed outright (SIGKILL, the OOM killer), it can stop nothing: members that call
    :func:`end_group_with_owner` (the trainers' entry point does) end the group themselves."""
    import psutil

    owner = f"{os.getpid()}:{psutil.Process().create_time()}"
    child_env = dict(os.environ if env is None else env) | {GROUP_OWNER_VAR: owner}
    proc = None
    try:
        with _signals_held() as held:  # interrupted inside Popen, the group would start with no one to stop it
            proc = subprocess.Popen(list(cmd), env=child_env, start_new_session=True)
        if held:
            raise KeyboardInterrupt
        return proc.wait()
    except BaseException:
        if proc is not None:
            signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=stop_timeout_s)
            except subprocess.TimeoutExpired:
                signal_group(proc, signal.SIGKILL)
                proc.wait()
        raise


def end_group_with_owner(interval_s: float = 1.0) -> None:
    """In a member of a group :func:`run_process_group` started: SIGTERM the whole group once the process that
    started it is gone, so that a run killed outright leaves no trainer writing into its folders (its rerun
    would start a second one there).  Does nothing outside such a group."""
    owner = os.environ.get(GROUP_OWNER_VAR, "")
    pid, _, started = owner.partition(":")
    if not (pid.isdigit() and started):
        return

    def watch() -> None:
        import psutil

        while True:
            try:
                if str(psutil.Process(int(pid)).create_time()) != started:
                    break  # the pid names another process now
            except psutil.NoSuchProcess:
                break
            time.sleep(interval_s)
        os.killpg(os.getpgrp(), signal.SIGTERM)

    threading.Thread(target=watch, name="end-group-with-owner", daemon=True).start()
