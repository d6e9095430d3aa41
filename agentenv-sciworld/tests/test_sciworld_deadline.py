"""A stalled JVM (``kill -STOP``) costs one call its deadline, not the server: the step answers 504 in time,
the session ends, and its JVM process is gone."""

import os
import signal
import time

import httpx
import psutil
from agentenv_sciworld import SciWorldEnv

from agentenv.testing import running_server

DEADLINE_S = 10.0  # also covers the first reset, a JVM starting on a loaded machine


def new_java_children(before: set[int]) -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in before and "java" in p.name()]


def test_a_stopped_jvm_answers_504_within_the_deadline_and_its_process_is_gone():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with running_server(SciWorldEnv, deadline_s=DEADLINE_S) as url, httpx.Client(base_url=url, timeout=60) as http:
        session = http.post("/create").json()["id"]
        assert http.post("/reset", json={"id": session, "data_idx": 0}).status_code == 200
        [jvm] = new_java_children(before)
        os.kill(jvm.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            answer = http.post("/step", json={"id": session, "action": "look around"})
            took = time.monotonic() - started
            assert answer.status_code == 504, answer.text
            assert "deadline" in answer.json()["error"] or "took over" in answer.json()["error"]
            assert took < DEADLINE_S + 3
            gone_by = time.monotonic() + DEADLINE_S + 15
            while jvm.is_running() and jvm.status() != psutil.STATUS_ZOMBIE and time.monotonic() < gone_by:
                time.sleep(0.2)
            assert not jvm.is_running() or jvm.status() == psutil.STATUS_ZOMBIE, "the stopped JVM outlived its session"
        finally:
            if jvm.is_running():
                jvm.kill()
        assert http.post("/step", json={"id": session, "action": "look around"}).status_code == 404
        assert http.get("/info").json()["live_sessions"] == 0
