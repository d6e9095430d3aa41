"""``agentenv up all``: every installed environment's server, healthy, then all of them stopped by one Ctrl-C
with no process left (issue 35)."""

from __future__ import annotations

import signal
import subprocess
import sys

import httpx
import psutil
import pytest

from agentenv.registry import all_servers, installed_envs, server_of
from agentenv.testing import free_ports

pytestmark = pytest.mark.slow


@pytest.mark.timeout(600)
def test_up_all_serves_every_installed_env_and_ctrl_c_stops_them_all():
    servers = all_servers()
    ports = dict(zip(servers, free_ports(len(servers)), strict=True))
    command = [sys.executable, "-m", "agentenv.cli", "up", "all"]
    for name, port in ports.items():
        command += ["--port", f"{name}={port}"]
    up = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    children: list[psutil.Process] = []
    try:
        printed = {}
        for line in up.stdout:
            if "all servers healthy" in line:
                break
            name, url = line.split()
            printed[name] = url
        assert printed == {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        children = psutil.Process(up.pid).children(recursive=True)
        for env in installed_envs():
            answer = httpx.get(f"{printed[server_of(env)]}/{env}/health", timeout=30)
            assert answer.status_code == 200 and answer.json()["status"] == "ok", (env, answer.text)
        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=120) == 0
        _, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, f"left running: {[p.pid for p in alive]}"
    finally:
        if up.poll() is None:
            for child in psutil.Process(up.pid).children(recursive=True):
                child.kill()
            up.kill()
