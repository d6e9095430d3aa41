"""Every CLI mistake and every lost dependency is one line saying what to do, with a non-zero exit and no
traceback; a model endpoint that dies mid-run leaves a file the same command resumes, and a truthful
``.meta.json``.  Run as a user would: ``agentenv`` subprocesses, real servers, a real (small) endpoint."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentenv.testing import free_port, refusing_url

AGENTENV = str(Path(sys.executable).with_name("agentenv"))


def agentenv(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGENTENV, *args], capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], expected: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert expected in lines[0], lines[0]


@pytest.fixture
def held_port():
    """A loopback port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["serve", "nosuchenv"], "no installed environment or server group 'nosuchenv'"),
        (["up", "nosuchenv"], "no installed environment or server group 'nosuchenv'"),
        (["up", "nosuchenv", "--port", "nosuchenv=36999"], "no installed environment or server group 'nosuchenv'"),
        (["up", "lmrlgym", "--port", "babyai=36999"], "a port is given for babyai, which is not among the servers started"),
        (["serve", "lmrlgym", "--host", "203.0.113.7"], "203.0.113.7 is not an address of this machine: give --host"),
        # beyond loopback only with a token (it served the network, no word said)
        (["serve", "lmrlgym", "--host", "0.0.0.0"], "--host 0.0.0.0 lets other machines reach the server: give --token T"),
        (["up", "lmrlgym", "--host", "0.0.0.0"], "--host 0.0.0.0 lets other machines reach the server: give --token T"),
        (["collect", "--env", "nosuchenv", "--local", "--out", "x.jsonl"], "no installed environment 'nosuchenv'"),
        # a typo is told the name it is closest to (it was told to pip install agentenv-mazee)
        (["collect", "--env", "mazee", "--local", "--out", "x.jsonl"], "did you mean 'maze'? (else install the package"),
        (["serve", "lmrlgm"], "did you mean 'lmrlgym'?"),
        (["eval", "--agent", "hf:runs/typo/model", "--env", "maze", "--local", "--out", "x.jsonl"],
         "hf:runs/typo/model: does not exist; give the folder of a saved model"),
        # a Hub name neither cached here nor on a Hub that answers
        (["eval", "--agent", "hf:agentenv-tests/no-such-model", "--env", "maze", "--local", "--out", "x.jsonl"],
         "hf:agentenv-tests/no-such-model: not a folder here nor "),
        (["eval", "--agent", "robot", "--env", "maze", "--local", "--out", "x.jsonl"], "unknown agent spec 'robot'"),
        # refused before bench starts every env's server
        (["bench", "--agent", "hf:runs/typo/model"], "hf:runs/typo/model: does not exist; give the folder of a saved model"),
    ],
)
def test_mistakes_are_one_line(args, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a Hub that never answers, wherever this runs
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("AGENTENV_TOKEN", raising=False)
    assert_one_line_error(agentenv(*args), expected)


def test_a_port_in_use_is_one_line(held_port):
    assert_one_line_error(agentenv("serve", "lmrlgym", "--port", str(held_port)), f"port {held_port} on 127.0.0.1 is already in use")
    assert_one_line_error(agentenv("up", "lmrlgym", "--port", f"lmrlgym={held_port}"), f"port {held_port} on 127.0.0.1 is already in use")


def test_a_server_that_is_down_names_the_command_that_starts_it(tmp_path):
    with refusing_url() as url:
        proc = agentenv("eval", "--agent", "expert", "--env", "maze", "--url", url, "--out", str(tmp_path / "r.jsonl"))
    assert_one_line_error(proc, "is its server up? start it with `agentenv up lmrlgym`")


class DyingModel:
    """An OpenAI-compatible endpoint that answers "move up" ``lives`` times, then only 503 (as a proxy does
    for a model server that died behind it)."""

    def __init__(self, lives: int) -> None:
        self.lives, self.answered = lives, 0
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.complete)
        self.server: uvicorn.Server | None = None

    async def complete(self, request: Request) -> Any:
        await request.json()
        self.answered += 1
        if self.answered > self.lives:
            return JSONResponse({"error": {"message": "no healthy upstream"}}, status_code=503)
        content = "Thought:\nUp.\n\nAction:\nmove up"
        return {"choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


@contextmanager
def serving(model: DyingModel, port: int):
    model.server = uvicorn.Server(uvicorn.Config(model.app, port=port, log_level="warning"))
    thread = threading.Thread(target=model.server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not model.server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        model.server.should_exit = True
        thread.join(timeout=10)


def test_a_model_endpoint_that_dies_mid_run_leaves_a_resumable_file_and_a_truthful_meta(tmp_path):
    out = tmp_path / "maze.jsonl"
    port = free_port()
    command = ["eval", "--agent", f"openai:m@http://127.0.0.1:{port}/v1", "--env", "maze", "--local",
               "--split", "test", "--indices", "0:4", "--max-rounds", "2", "--concurrency", "1",
               "--max-retries", "0", "--no-progress", "--out", str(out)]
    with serving(DyingModel(lives=5), port):  # 2 episodes of 2 rounds and the third's first request
        died = agentenv(*command)
    assert_one_line_error(died, "the model endpoint failed")
    assert f"2 episodes are finished in {out}; rerun the same command to resume" in died.stderr
    meta = json.loads(out.with_suffix(".meta.json").read_text())
    run = meta["runs"][-1]
    assert run["episodes_finished"] == 2 and "AgentError" in run["stopped_by"] and run["errors"] == 0

    with serving(DyingModel(lives=1000), port):
        resumed = agentenv(*command)
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(line)["item_id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == [f"maze_{i}" for i in range(4)]  # the two left, no episode twice
    meta = json.loads(out.with_suffix(".meta.json").read_text())
    assert meta["runs"][-1]["episodes_finished"] == 2 and "stopped_by" not in meta["runs"][-1]
    assert "out of rounds 4" in out.with_suffix(".report.md").read_text()  # the stop reasons, in the table


def test_every_command_takes_env_and_url_spelled_alike(tmp_path):
    from agentenv.cli import build_parser

    parser = build_parser()
    common = ["--env", "maze,wordle", "babyai", "--url", "http://127.0.0.1:1"]
    for command in (["eval", "--agent", "expert", "--out", "x.jsonl"], ["collect", "--out", "x.jsonl"]):
        args = parser.parse_args([*command, *common])
        assert args.env == ["maze", "wordle", "babyai"] and args.url == ["http://127.0.0.1:1"]
    for command in (["train", "evol", "--data", "d"], ["train", "eto", "--expert-data", "d"], ["train", "rft", "--data", "d"]):
        args = parser.parse_args([*command, "--model", "m", "--output-dir", "o", *common])
        assert args.envs == ["maze", "wordle", "babyai"] and args.urls == ["http://127.0.0.1:1"]
    args = parser.parse_args(["best-of-n", "--agent", "expert", "--out", "x.jsonl", *common])
    assert args.envs == ["maze", "wordle", "babyai"]
    old = agentenv("collect", "--envs", "maze", "--local", "--limit", "1", "--no-progress", "--out", str(tmp_path / "o.jsonl"))
    assert old.returncode == 0 and "note: --envs is deprecated; use --env" in old.stderr


def test_an_unknown_name_is_guessed_only_when_it_is_a_near_typo():
    """A package not installed is told to be installed, not taken for another env ('alfworld': 'sciworld'?)."""
    from agentenv.registry import _hint

    assert _hint("alfworld", ["maze", "sciworld"]) == "install the package that provides it (docs/envs/)"
    assert _hint("todo", ["tool"]).startswith("install the package")
    assert _hint("mazee", ["maze", "sciworld"]).startswith("did you mean 'maze'? (else install the package")
