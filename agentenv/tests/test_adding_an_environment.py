"""docs/adding-an-environment.md, followed to the letter: its two files are written into a temporary folder,
installed into this venv without network, and served, evaluated and checked with no change to the core."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agentenv.testing import free_port

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-an-environment.md"
FILE_BLOCK = re.compile(r"```(?:toml|python)\n# (agentenv-hilo/[\w./-]+)\n(.*?)```", re.DOTALL)


def written_package(root: Path) -> Path:
    """The files the page shows (a code block whose first line names its path), written under ``root``."""
    files = FILE_BLOCK.findall(DOC.read_text())
    assert {path for path, _ in files} == {"agentenv-hilo/pyproject.toml", "agentenv-hilo/agentenv_hilo.py"}
    for path, text in files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root / "agentenv-hilo"


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_the_page_builds_an_env_the_core_serves_evaluates_and_checks(tmp_path):
    package = written_package(tmp_path)
    python, agentenv = sys.executable, str(Path(sys.executable).with_name("agentenv"))
    pip = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "-e", str(package)]
    installed = run(*pip)
    assert installed.returncode == 0, installed.stderr
    try:
        checked = run(python, "-c", "from agentenv.testing import check_env; from agentenv_hilo import HiLoEnv; print(check_env(HiLoEnv))")
        assert checked.returncode == 0 and "expert solves" in checked.stdout, checked.stderr

        port = free_port()
        server = subprocess.Popen([agentenv, "serve", "hilo", "--port", str(port)], stderr=subprocess.PIPE, text=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/hilo/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert server.poll() is None and time.monotonic() < deadline, "agentenv serve hilo did not start"
                time.sleep(0.2)
            out = tmp_path / "hilo_expert.jsonl"
            evaluated = run(agentenv, "eval", "--agent", "expert", "--env", "hilo", "--split", "test", "--url", url, "--out", str(out), "--no-progress")
            assert evaluated.returncode == 0, evaluated.stderr
            report = json.loads(out.with_suffix(".report.json").read_text())
            overall = next(row for row in report["rows"] if row["env"] == "hilo" and row["task_type"] == "all")
            assert overall["n"] == 100 and overall["success"] == 1.0
            conformance = run(python, "-c", f"from agentenv.testing import check_server; print(check_server({url!r}, 'hilo'))")
            assert conformance.returncode == 0 and "AgentGym wire shapes" in conformance.stdout, conformance.stderr
        finally:
            server.terminate()
            server.wait(30)
        # it says where it serves, as the guide shows (it printed nothing: you could not tell it was up)
        assert server.stderr.readline().startswith(f"serving /hilo/ at http://127.0.0.1:{port} (1 worker); Ctrl-C")
    finally:
        run(python, "-m", "pip", "uninstall", "--quiet", "--yes", "agentenv-hilo")
