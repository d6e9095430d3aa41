"""The `agentenv` command end to end: `up` starts real server processes, `eval` runs the experts."""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import psutil
import pytest

from agentenv.server.launcher import ServerProcesses
from agentenv.testing import free_port

AGENTENV = [sys.executable, "-m", "agentenv.cli"]


def start_up(port: int) -> tuple[subprocess.Popen, list[psutil.Process]]:
    """``agentenv up lmrlgym`` on ``port``, once it says its servers are healthy, and its server processes."""
    up = subprocess.Popen([*AGENTENV, "up", "lmrlgym", "--port", f"lmrlgym={port}"], stdout=subprocess.PIPE, text=True)
    for line in up.stdout:
        if "all servers healthy" in line:
            break
    return up, psutil.Process(up.pid).children(recursive=True)


def test_up_starts_healthy_servers_and_ctrl_c_stops_them_all():
    port = free_port()
    up, children = start_up(port)
    try:
        assert children, "no server process"
        assert httpx.get(f"http://127.0.0.1:{port}/maze/health").json()["status"] == "ok"
        assert httpx.get(f"http://127.0.0.1:{port}/wordle/info").json()["env"] == "wordle"
        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=90) == 0
        _, alive = psutil.wait_procs(children, timeout=10)
        assert not alive
    finally:
        if up.poll() is None:
            for child in psutil.Process(up.pid).children(recursive=True):
                child.kill()
            up.kill()


def test_servers_do_not_outlive_a_killed_launcher():
    up, children = start_up(free_port())
    try:
        assert children, "no server process"
        up.kill()  # SIGKILL: `up` cannot stop its servers itself
        up.wait(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=30)
        assert not alive
    finally:
        for child in children:
            if child.is_running():
                child.kill()
        if up.poll() is None:
            up.kill()


class _ForeignHealth(http.server.BaseHTTPRequestHandler):
    """Another program on the port: it answers ``/health`` 200 with JSON, but is no lmrlgym server."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps({"status": "ok", "env": "something else"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_start_fails_when_another_program_holds_the_port():
    foreign = http.server.HTTPServer(("127.0.0.1", 0), _ForeignHealth)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    servers = ServerProcesses(["lmrlgym"], ports={"lmrlgym": foreign.server_address[1]}, startup_timeout_s=60)
    try:
        with pytest.raises(RuntimeError, match="port .* is already in use"):  # refused before starting
            servers.start()
        assert not servers.procs
    finally:
        servers.stop()
        foreign.shutdown()


def test_the_token_reaches_the_servers_off_their_command_lines():
    servers = ServerProcesses(["lmrlgym"], ports={"lmrlgym": free_port()}, token="s3cret")
    with servers as urls:
        command_lines = [psutil.Process(p.pid).cmdline() for p in servers.procs.values()]
        assert command_lines and not any("s3cret" in arg for line in command_lines for arg in line)
        assert httpx.post(f"{urls['lmrlgym']}/maze/create").status_code == 401
        allowed = httpx.post(f"{urls['lmrlgym']}/maze/create", headers={"Authorization": "Bearer s3cret"})
        assert allowed.status_code == 200


@pytest.mark.slow
def test_expert_eval_prints_full_success_on_both_test_splits(tmp_path):
    with ServerProcesses(["lmrlgym"], ports={"lmrlgym": free_port()}) as urls:
        out = tmp_path / "expert.jsonl"
        command = [*AGENTENV, "eval", "--agent", "expert", "--env", "maze,wordle", "--split", "test",
                   "--url", urls["lmrlgym"], "--concurrency", "16", "--out", str(out), "--no-progress"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=240,
                              env=os.environ | {"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    by_env = {env: [t for t in lines if t["env"] == env] for env in ("maze", "wordle")}
    assert len(by_env["maze"]) == 26 and len(by_env["wordle"]) == 300
    assert all(t["success"] for t in by_env["maze"])
    assert sum(t["success"] for t in by_env["wordle"]) / 300 >= 0.98
    assert "maze" in done.stdout and "wordle" in done.stdout  # the printed table


def test_a_server_that_takes_the_port_after_the_check_is_not_taken_for_ours(monkeypatch):
    from agentenv_lmrlgym import MazeEnv, WordleEnv

    from agentenv.server import launcher
    from agentenv.testing import running_server

    # an lmrlgym server of another process, which took the port between the launcher's check and its bind
    with running_server([MazeEnv, WordleEnv]) as url:
        port = int(url.rsplit(":", 1)[1])
        checks, real = [], launcher._cannot_bind

        def cannot_bind(*args):  # the check before the start finds the port free; the one after our exit, taken
            checks.append(args)
            return real(*args) if len(checks) > 1 else None

        monkeypatch.setattr(launcher, "_cannot_bind", cannot_bind)
        servers = ServerProcesses(["lmrlgym"], ports={"lmrlgym": port}, startup_timeout_s=60)
        with pytest.raises(RuntimeError, match=f"exited .*port {port} on 127.0.0.1 already serves maze, wordle"):
            servers.start()
        assert not servers.procs
