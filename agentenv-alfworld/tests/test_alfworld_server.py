"""ALFWorld over real HTTP: AgentGym's wire, an expert win of each task type, an illegal command mid-episode,
several sessions at once."""

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from agentenv_alfworld import AlfWorldEnv, tasks

from agentenv.testing import running_server


@pytest.fixture(scope="module")
def url():
    with running_server(AlfWorldEnv) as base:
        yield base


def _of_type(task_type: str, split: str) -> int:
    return next(i for i in tasks.SPLITS[split] if tasks.task_type_of(i) == task_type)


def test_agentgym_routes_and_fields(url):
    """AgentGym's ALFWorld client, field for field, at the server's root."""
    with httpx.Client(base_url=url, timeout=120) as http:
        sid = http.post("/create").json()["id"]
        try:
            reset = http.post("/reset", json={"id": sid, "game": 2426, "world_type": "Text"}).json()
            assert {"id", "observation", "available_actions", "task_type"} <= set(reset)
            assert reset["id"] == sid and reset["task_type"] == "pick_and_place_simple"
            assert reset["observation"].startswith("You are in the middle of a room.")
            assert "go to countertop 1" in reset["available_actions"] or any(
                a.startswith("go to ") for a in reset["available_actions"]
            )
            step = http.post("/step", json={"id": sid, "action": reset["available_actions"][0]}).json()
            assert {"observation", "reward", "available_actions", "done"} <= set(step)
            assert step["reward"] == 0 and step["done"] is False
            assert http.get("/available_actions", params={"id": sid}).json() == step["available_actions"]
            assert http.get("/observation", params={"id": sid}).json() == step["observation"]
            detail = http.get("/detail", params={"id": sid}).json()
            assert detail["world_type"] == "Text" and detail["games"] == "generated"
            assert detail["task"] == tasks.task(2426).description and detail["steps"] == 1
            assert detail["game"].startswith("valid_seen/pick_and_place_simple-")
            info = http.get("/info").json()
            assert info["splits"]["train"] == [0, 2420] and info["splits"]["test"] == [2420, 2620]
            assert info["max_rounds"] == 30
        finally:
            assert http.post("/close", json={"id": sid}).json()["closed"] is True
        assert http.post("/step", json={"id": sid, "action": "look"}).status_code == 404


@pytest.mark.slow
def test_the_expert_wins_each_task_type_and_an_illegal_command_changes_nothing(url):
    """One generated game of each type, played by the expert over HTTP to a win; in each, an illegal
    command mid-episode is answered "Nothing happens." and the episode goes on from where it was."""
    with httpx.Client(base_url=f"{url}/alfworld", timeout=120) as http:
        sid = http.post("/create", json={}).json()["id"]
        try:
            for task_type in tasks.TASK_TYPES:
                index = _of_type(task_type, "test_unseen")
                reset = http.post("/reset", json={"id": sid, "data_idx": index}).json()
                assert reset["task_type"] == task_type
                for rounds in range(AlfWorldEnv.expert_max_rounds):
                    if rounds == 2:
                        before = http.get("/available_actions", params={"id": sid}).json()
                        illegal = http.post("/step", json={"id": sid, "action": "take the moon from cabinet 99"}).json()
                        assert illegal["observation"] == "Nothing happens."
                        assert illegal["reward"] == 0 and illegal["done"] is False
                        assert illegal["available_actions"] == before
                    move = http.get("/expert", params={"id": sid}).json()
                    reply = f"Thought:\n{move['thought']}\n\nAction:\n{move['action']}"
                    answer = http.post("/step", json={"id": sid, "action": reply}).json()
                    assert "You arrive at loc" not in answer["observation"]
                    if answer["done"]:
                        break
                assert answer["reward"] == 1.0 and answer["success"] is True, task_type
        finally:
            http.post("/close", json={"id": sid})


def test_sessions_at_once_play_their_own_games(url):
    games = [_of_type(t, "test_seen") for t in tasks.TASK_TYPES[:3]]
    with httpx.Client(base_url=f"{url}/alfworld", timeout=120) as http:
        before = http.get("/info").json()["live_sessions"]

        def play(index: int) -> tuple[int, str, str]:
            sid = http.post("/create", json={}).json()["id"]
            first = http.post("/reset", json={"id": sid, "data_idx": index}).json()
            step = http.post("/step", json={"id": sid, "action": first["available_actions"][-1]}).json()
            return sid, first["observation"], step["observation"]

        with ThreadPoolExecutor(len(games)) as pool:
            played = list(pool.map(play, games))
        assert http.get("/info").json()["live_sessions"] == before + len(games)
        for (sid, first, _), index in zip(played, games, strict=True):
            assert first.endswith(f"Your task is to: {tasks.task(index).description}.")
            assert http.get("/detail", params={"id": sid}).json()["data_idx"] == index
            assert http.post("/close", json={"id": sid}).json()["closed"] is True
        assert http.get("/info").json()["live_sessions"] == before
