"""TextCraft over HTTP: a real server on a loopback port, real httpx clients."""

import re

import httpx
import pytest
from agentenv_textcraft import TextCraftEnv

from agentenv.testing import running_server


@pytest.fixture(scope="module")
def base_url():
    with running_server(TextCraftEnv) as url:
        yield url


def test_expert_episode_over_http(base_url):
    """The project's uniform form under /textcraft: reset a test task and let /expert play it."""
    with httpx.Client(base_url=f"{base_url}/textcraft", timeout=30) as http:
        sid = http.post("/create", json={}).json()["id"]
        try:
            reset = http.post("/reset", json={"id": sid, "data_idx": 543}).json()
            assert reset["observation"].endswith("Goal: craft purple banner.")
            assert reset["done"] is False and reset["reward"] == 0
            for _ in range(TextCraftEnv.max_rounds):
                move = http.get("/expert", params={"id": sid}).json()
                assert move["thought"] and move["action"]
                reply = f"Thought:\n{move['thought']}\n\nAction:\n{move['action']}"  # a whole ReAct reply
                answer = http.post("/step", json={"id": sid, "action": reply}).json()
                assert answer["observation"].startswith(("Got ", "Crafted "))
                if answer["done"]:
                    break
            assert answer["done"] and answer["reward"] == 1.0 and answer["success"] is True
            assert http.post("/step", json={"id": sid, "action": "inventory"}).status_code == 409
            detail = http.get("/detail", params={"id": sid}).json()
            assert detail["task_type"] == "depth_4" and detail["done"] is True
        finally:
            assert http.post("/close", json={"id": sid}).json()["closed"] is True
        assert http.post("/step", json={"id": sid, "action": "inventory"}).status_code == 404


def test_illegal_action_over_http_keeps_the_session(base_url):
    with httpx.Client(base_url=f"{base_url}/textcraft", timeout=30) as http:
        sid = http.post("/create", json={"data_idx": 0}).json()["id"]
        try:
            for action in ("", "dance", "get 4 acacia planks", "craft 1 acacia planks using 9 acacia log"):
                answer = http.post("/step", json={"id": sid, "action": action})
                assert answer.status_code == 200
                body = answer.json()
                assert body["reward"] == 0 and body["done"] is False
                assert body["observation"].startswith(("Invalid action", "Could not find"))
            assert http.post("/step", json={"id": sid, "action": "get 1 acacia log"}).json()[
                "observation"
            ] == ("Got 1 acacia log")
            final = http.post(
                "/step", json={"id": sid, "action": "craft 4 acacia planks using 1 acacia logs"}
            )
            assert final.json()["done"] is True and final.json()["reward"] == 1
        finally:
            http.post("/close", json={"id": sid})


def test_agentgym_client_plays_a_whole_episode(base_url):
    """A client written only from AgentGym's TextCraft wire facts (DESIGN.md §3), at the server root:
    /create {commands, goal, minecraft_dir} -> {id, observation, done, reward}; /reset {id, data_idx};
    /step {id, action} -> {observation, reward, done}; GET /observation?id=, /detail?id=; /close."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        created = http.post(
            "/create", json={"commands": None, "goal": None, "minecraft_dir": "agentenv_textcraft/"}
        )
        assert created.status_code == 200
        created = created.json()
        sid = created["id"]
        assert {"id", "observation", "done", "reward"} <= set(created)
        assert created["observation"].startswith("Crafting commands:") and created["done"] is False

        reset = http.post("/reset", json={"id": sid, "data_idx": 1}).json()
        assert {"id", "observation", "done", "reward"} <= set(reset) and reset["id"] == sid
        goal = re.search(r"Goal: craft (.+)\.$", reset["observation"]).group(1)
        # goal 1 is a depth-1 item: read its crafting command off the listing, get the ingredients, craft
        command = next(
            line
            for line in reset["observation"].splitlines()
            if line.startswith("craft ") and re.match(rf"craft \d+ {re.escape(goal)} using ", line)
        )
        ingredients = re.findall(r"(\d+) ([a-z ]+)", command.split(" using ")[1])
        for count, item in ingredients:
            step = http.post("/step", json={"id": sid, "action": f"get {count} {item}"}).json()
            assert set(step) >= {"observation", "reward", "done"} and step["reward"] == 0, step
        step = http.post("/step", json={"id": sid, "action": command}).json()
        assert step["done"] is True and step["reward"] == 1, step
        assert http.get("/observation", params={"id": sid}).json() == step["observation"]
        assert http.get("/detail", params={"id": sid}).json()["done"] is True
        assert http.post("/close", json={"id": sid}).status_code == 200


def test_create_with_goal_and_commands_ignores_minecraft_dir(base_url):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        body = {
            "goal": "minecraft:stick",
            "commands": "craft 1 stick using 2 bamboo",
            "minecraft_dir": "/etc",
        }
        created = http.post("/create", json=body).json()
        try:
            assert (
                created["observation"]
                == "Crafting commands:\ncraft 1 stick using 2 bamboo\n\nGoal: craft stick."
            )
            sid = created["id"]
            http.post("/step", json={"id": sid, "action": "get 2 bamboo"})
            assert (
                http.post("/step", json={"id": sid, "action": "craft 1 stick using 2 bamboo"}).json()[
                    "reward"
                ]
                == 1
            )
        finally:
            http.post("/close", json={"id": created["id"]})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"goal": "nonexistent_item"}, "is not a craftable item"),
        ({"goal": 5}, "goal must be an item name"),
        ({"goal": "minecraft:stick", "commands": 7}, "commands must be one newline-separated string"),
    ],
)
def test_bad_create_fields_are_422_and_leave_no_session(base_url, body, message):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        live = http.get("/info").json()["live_sessions"]
        refused = http.post("/create", json=body)
        assert refused.status_code == 422 and message in refused.json()["error"]
        assert http.get("/info").json()["live_sessions"] == live
