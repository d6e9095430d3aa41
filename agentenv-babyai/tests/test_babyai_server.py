"""BabyAI over HTTP: a real server on a loopback port, real httpx clients."""

import re

import httpx
import pytest
from agentenv_babyai import BabyAIEnv

from agentenv.testing import running_server


@pytest.fixture(scope="module")
def base_url():
    with running_server(BabyAIEnv) as url:
        yield url


def test_expert_episode_over_the_uniform_form(base_url):
    with httpx.Client(base_url=f"{base_url}/babyai", timeout=30) as http:
        sid = http.post("/create", json={}).json()["id"]
        try:
            reset = http.post("/reset", json={"id": sid, "data_idx": 23}).json()
            assert reset["observation"].startswith("Your goal: open the")
            assert reset["done"] is False and reset["task_type"] == "Unlock"
            for _ in range(BabyAIEnv.max_rounds):
                move = http.get("/expert", params={"id": sid}).json()
                reply = f"Thought:\n{move['thought']}\n\nAction:\n{move['action']}"  # a whole ReAct reply
                answer = http.post("/step", json={"id": sid, "action": reply}).json()
                assert not answer["observation"].startswith("Invalid action")
                if answer["done"]:
                    break
            assert answer["done"] and answer["reward"] > 0 and answer["success"] is True
            assert http.post("/step", json={"id": sid, "action": "turn left"}).status_code == 409
        finally:
            assert http.post("/close", json={"id": sid}).json()["closed"] is True


def test_render_returns_a_png(base_url):
    with httpx.Client(base_url=f"{base_url}/babyai", timeout=30) as http:
        sid = http.post("/create", json={"data_idx": 5}).json()["id"]
        try:
            image = http.get("/render", params={"id": sid})
            assert image.status_code == 200 and image.headers["content-type"] == "image/png"
            assert image.content.startswith(b"\x89PNG\r\n\x1a\n")
        finally:
            http.post("/close", json={"id": sid})


def test_render_before_the_first_reset_is_409_and_keeps_the_session(base_url):
    with httpx.Client(base_url=f"{base_url}/babyai", timeout=30) as http:
        sid = http.post("/create", json={}).json()["id"]
        try:
            early = http.get("/render", params={"id": sid})
            assert early.status_code == 409 and "reset" in early.json()["error"]
            assert http.post("/reset", json={"id": sid, "data_idx": 5}).status_code == 200
            assert http.get("/render", params={"id": sid}).status_code == 200
        finally:
            http.post("/close", json={"id": sid})


def test_agentgym_client_plays_a_whole_episode(base_url):
    """A client written only from AgentGym's BabyAI wire facts (DESIGN.md §3), at the server root:
    /create -> {id}; /reset {id, data_idx} -> {observation, reward, score, deleted, done};
    /step {id, action} -> {observation, reward, score, done}; GET /observation?id=; /close {id}."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        sid = http.post("/create").json()["id"]
        reset = http.post("/reset", json={"id": sid, "data_idx": 1}).json()  # GoToRedBall, seed 0
        assert {"observation", "reward", "score", "deleted", "done"} <= set(reset)
        assert reset["deleted"] is False and reset["done"] is False
        assert "Your goal: go to the red ball" in reset["observation"]
        # read the listed actions and play them as AgentGym's agents do
        listed = re.search(r"Available actions: \[(.*)\]$", reset["observation"]).group(1)
        actions = re.findall(r'"([^"]+)"', listed)
        target = next(a for a in actions if a.startswith("go to red ball"))
        step = http.post("/step", json={"id": sid, "action": target}).json()
        assert {"observation", "reward", "score", "done"} <= set(step)
        assert step["done"] is True and step["reward"] > 0 and step["score"] == step["reward"]
        assert http.get("/observation", params={"id": sid}).json() == step["observation"]
        assert http.post("/close", json={"id": sid}).status_code == 200


def test_info_leaves_the_repeated_train_tasks_out_but_serves_them(base_url):
    from agentenv.controller.rollout import _split_of

    with httpx.Client(base_url=f"{base_url}/babyai", timeout=30) as http:
        info = http.get("/info").json()
        assert info["splits"]["train"] == [400, 20400] and 532 in info["split_excluded"]["train"]
        assert _split_of(info, 532) == "" and _split_of(info, 572) == "train"
        sid = http.post("/create", json={}).json()["id"]
        try:
            assert http.post("/reset", json={"id": sid, "data_idx": 532}).json()["task_type"] == "OpenRedDoor"
        finally:
            http.post("/close", json={"id": sid})
