"""The ScienceWorld server over real HTTP: expert episode, AgentGym's wire shapes, bad actions, JVM lifetime."""

import time

import httpx
import pytest
from agentenv_sciworld import SciWorldEnv
from agentenv_sciworld.client import SciWorldClient
from agentenv_sciworld.processes import java_children
from agentenv_sciworld.tasks import data_idx_of

from agentenv.client import EpisodeFinished
from agentenv.testing import running_server

FIND_LIVING = data_idx_of("find-living-thing", 225)
FIND_NON_LIVING = data_idx_of("find-non-living-thing", 225)  # gold path ~7 actions


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def url():
    with running_server([SciWorldEnv]) as base:
        yield base


@pytest.mark.slow
def test_expert_episode_over_http_then_close_frees_the_jvm(url):
    before = set(java_children())
    with SciWorldClient(base_url=url) as client:
        info = client.info()
        assert info["splits"]["test"] == [3468, 3514] and info["max_rounds"] == 30
        assert info["reward_range"] == [0.0, 100.0] and info["success_score"] == 100.0
        session = client.session()
        jvms = set(java_children()) - before
        assert len(jvms) == 1  # the session's own engine
        first = session.reset(FIND_LIVING)
        assert first.task_type == "find-living-thing" and first.var_num == 225
        rounds = 0
        while True:
            move = session.expert()
            assert move.thought and move.action
            result = session.step(f"Thought:\n{move.thought}\n\nAction:\n{move.action}")
            rounds += 1
            if result.done:
                break
        assert result.score == 100.0 and result.success and rounds <= 30
        assert client.goals(session.id)["goals"]
        with pytest.raises(EpisodeFinished):
            session.step("look around")
        session.close()
    assert wait_until(lambda: not (set(java_children()) & jvms), 10)


def test_agentgym_client_plays_a_short_episode(url):
    """A raw httpx client using only AgentGym's routes and fields (at the root, as AgentGym's server)."""
    with httpx.Client(base_url=url, timeout=60) as http:
        sid = http.post("/create").json()["id"]
        reset = http.post("/reset", json={"id": sid, "data_idx": FIND_NON_LIVING}).json()
        for key in (
            "task_name",
            "var_num",
            "task_description",
            "observation",
            "reward",
            "score",
            "deleted",
            "done",
        ):
            assert key in reset
        assert reset["task_name"] == "find-non-living-thing" and reset["done"] is False
        assert reset["task_description"].startswith("Your task is to find a(n) non-living thing")
        hint = http.get("/action_hint", params={"id": sid}).json()
        assert "focus on OBJ" in hint["possible_actions"] and hint["possible_objects"]
        assert "Subgoals" in http.get("/goals", params={"id": sid}).json()["goals"]
        done, steps = False, 0
        while not done:
            action = http.get("/expert", params={"id": sid}).json()["action"]
            step = http.post("/step", json={"id": sid, "action": f"Thought: go on.\nAction: {action}"}).json()
            assert set(step) >= {"observation", "reward", "score", "done"}
            done, steps = step["done"], steps + 1
            assert steps < 30
        assert step["score"] == 100
        assert http.get("/observation", params={"id": sid}).json() == step["observation"]
        assert http.get("/detail", params={"id": sid}).json()["task_name"] == "find-non-living-thing"
        assert http.post("/close", json={"id": sid}).json()["closed"] is True
        assert http.get("/observation", params={"id": sid}).status_code == 404


def test_bad_requests_and_garbled_actions(url):
    with httpx.Client(base_url=f"{url}/sciworld", timeout=60) as http:
        sid = http.post("/create").json()["id"]
        assert http.post("/step", json={"id": sid, "action": "look around"}).status_code == 409
        assert http.post("/reset", json={"id": sid, "data_idx": 99999}).status_code == 422
        http.post("/reset", json={"id": sid, "data_idx": FIND_LIVING}).raise_for_status()
        for action in ("", "Thought: hmm", "zork the grue", "a" * 10_000):
            answer = http.post("/step", json={"id": sid, "action": action})
            assert answer.status_code == 200
            step = answer.json()
            assert step["observation"].startswith("No known action matches that input.")
            assert step["reward"] == 0 and step["done"] is False
        step = http.post("/step", json={"id": sid, "action": "open door to hallway"}).json()
        assert step["observation"] == "The door is now open." and step["reward"] > 0
        http.post("/close", json={"id": sid})


@pytest.mark.slow
def test_idle_session_is_reaped_and_its_jvm_ends():
    before = set(java_children())
    with running_server([SciWorldEnv], ttl_s=1.0) as base, httpx.Client(base_url=base, timeout=60) as http:
        sid = http.post("/create", json={"data_idx": FIND_LIVING}).json()["id"]
        jvms = set(java_children()) - before
        assert len(jvms) == 1
        assert wait_until(lambda: http.get("/info").json()["live_sessions"] == 0, 15)
        assert wait_until(lambda: not (set(java_children()) & jvms), 10)
        assert http.get("/observation", params={"id": sid}).status_code == 404
