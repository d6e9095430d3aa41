"""A script terminated while it runs a child process group (a demo seed, torchrun and its workers) takes the
whole group with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

# a parent that runs a child group: a shell that starts a grandchild and waits for it
PARENT = textwrap.dedent(
    """
    import sys
    from agentenv.processes import interrupt_on_sigterm, run_process_group

    interrupt_on_sigterm()
    try:
        run_process_group(["bash", "-c", f"sleep 300 & echo $! > {sys.argv[1]}; wait"], stop_timeout_s=10)
    except KeyboardInterrupt:
        print("stopped", flush=True)
        sys.exit(130)
    """
)


def alive(pid: int) -> bool:
    """Running: it exists and is not a zombie waiting for a parent to reap it."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_terminated_parent_stops_its_child_group(tmp_path: Path, sig: int):
    pid_file = tmp_path / "grandchild.pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pid_file)], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    assert alive(grandchild)

    parent.send_signal(sig)
    out, _ = parent.communicate(timeout=30)
    assert parent.returncode == 130 and "stopped" in out
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)  # the grandchild went with the group, not left to run on its own


def test_an_interrupt_while_popen_returns_still_stops_the_group(tmp_path: Path, monkeypatch):
    """Ctrl-C landing after the child group started but before ``Popen`` returned (a loaded machine makes
    that window long) stops the group too: it used to be left running, holding the caller's pipes."""
    from agentenv import processes

    pid_file, started, real_popen = tmp_path / "grandchild.pid", [], subprocess.Popen

    def popen_then_interrupted(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        started.append(proc)
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the interrupt acts here, inside "Popen"
        return proc

    monkeypatch.setattr(processes.subprocess, "Popen", popen_then_interrupted)
    # Ctrl-C's own handler: a suite started in the background of a shell inherits SIGINT ignored
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            processes.run_process_group(["bash", "-c", f"sleep 300 & echo $! > {pid_file}; wait"], stop_timeout_s=10)
        grandchild = int(pid_file.read_text())
        deadline = time.monotonic() + 10
        while alive(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(grandchild)
    finally:
        signal.signal(signal.SIGINT, previous)
        for proc in started:
            processes.signal_group(proc, signal.SIGKILL)


# a parent killed outright while it runs a trainer-like child group: nothing of it can act, the group must
PARENT_OF_A_WATCHING_GROUP = textwrap.dedent(
    """
    import sys
    from agentenv.processes import run_process_group

    child = "from agentenv.processes import end_group_with_owner; end_group_with_owner(0.1); import subprocess; " \\
            f"subprocess.run(['bash', '-c', 'sleep 300 & echo $! > {sys.argv[1]}; wait'])"
    run_process_group([sys.executable, "-c", child])
    """
)


def test_a_parent_killed_outright_takes_a_group_that_watches_it_along(tmp_path: Path):
    """SIGKILL leaves the parent no chance to stop its group (a trainer's torchrun would train on, and the
    rerun start a second one in the same folder): members that watch their owner end the group."""
    pid_file = tmp_path / "grandchild.pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT_OF_A_WATCHING_GROUP, str(pid_file)])
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    assert alive(grandchild)
    parent.kill()
    parent.wait(timeout=10)
    deadline = time.monotonic() + 15
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_outside_a_group_the_owner_watch_does_nothing(monkeypatch):
    from agentenv import processes

    monkeypatch.delenv(processes.GROUP_OWNER_VAR, raising=False)
    before = threading.active_count()
    processes.end_group_with_owner()
    assert threading.active_count() == before


def test_a_hold_is_seen_from_another_process_and_held_again_only_where_nested(tmp_path):
    """collect holds its dataset's results file across the evaluation (which holds it too) and the dataset it
    writes after: a second collect started in between replaced the shards under the first."""
    from agentenv.processes import held_by_another_run, held_by_this_run
    from agentenv.testing import held_elsewhere

    path = tmp_path / "results.jsonl"
    with held_elsewhere(path):
        assert held_by_another_run(path)
        with pytest.raises(ValueError, match="^taken$"), held_by_this_run(path, "taken"):
            pass
    assert not held_by_another_run(path)
    with held_by_this_run(path, "outer", nested=True):
        assert not held_by_another_run(path)  # this process's own hold
        with held_by_this_run(path, "inner"):  # this run's own code: held on
            pass
    with held_by_this_run(path, "outer"), pytest.raises(ValueError, match="^inner$"), held_by_this_run(path, "inner"):
        pass
