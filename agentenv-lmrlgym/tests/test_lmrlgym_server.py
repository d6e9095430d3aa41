"""The lmrlgym server over HTTP: a real server on a loopback port, real httpx clients."""

import re
from importlib.metadata import entry_points

import httpx
import pytest
from agentenv_lmrlgym import MazeEnv, WordleEnv

from agentenv.testing import running_server


@pytest.fixture(scope="module")
def base_url():
    with running_server([MazeEnv, WordleEnv]) as url:
        yield url


def test_entry_points_name_both_envs():
    found = {
        ep.name: ep.load() for ep in entry_points(group="agentenv.envs") if ep.name in ("maze", "wordle")
    }
    assert found == {"maze": MazeEnv, "wordle": WordleEnv}


def test_one_server_hosts_both(base_url):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        assert set(http.get("/health").json()["envs"]) == {"maze", "wordle"}
        maze = http.get("/maze/info").json()
        assert maze["env"] == "maze" and maze["max_rounds"] == 15 and maze["splits"]["test"] == [0, 26]
        wordle = http.get("/wordle/info").json()
        assert (
            wordle["env"] == "wordle" and wordle["max_rounds"] == 8 and wordle["splits"]["test"] == [0, 300]
        )


@pytest.mark.parametrize(
    ("env", "data_idx", "task_type"),
    [
        ("maze", 0, "double_t"),
        ("maze", 2999, "procedural"),
        ("maze", 3199, "procedural"),
        ("wordle", 299, "wordle"),
    ],
)
def test_expert_episode_in_the_uniform_form(base_url, env, data_idx, task_type):
    with httpx.Client(base_url=f"{base_url}/{env}", timeout=30) as http:
        created = http.post("/create", json={"data_idx": data_idx}).json()
        sid = created["id"]
        try:
            assert created["task_type"] == task_type and created["done"] is False
            for _ in range(http.get("/info").json()["max_rounds"]):
                move = http.get("/expert", params={"id": sid}).json()
                assert move["thought"] and move["action"]
                reply = f"Thought:\n{move['thought']}\n\nAction:\n{move['action']}"  # a whole ReAct reply
                answer = http.post("/step", json={"id": sid, "action": reply}).json()
                if answer["done"]:
                    break
            assert answer["reward"] == 1.0 and answer["score"] == 1.0 and answer["success"] is True
            assert http.post("/step", json={"id": sid, "action": "move up"}).status_code == 409
            assert http.get("/detail", params={"id": sid}).json()["done"] is True
        finally:
            assert http.post("/close", json={"id": sid}).json()["closed"] is True


def test_bad_actions_and_bad_indices_over_http(base_url):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        sid = http.post("/maze/create").json()["id"]
        assert http.post("/maze/reset", json={"id": sid, "game": 26}).status_code == 422  # between the splits
        http.post("/maze/reset", json={"id": sid, "game": 3})
        for action in ("", "fly north", "move up"):  # (1, 4) has a wall above
            answer = http.post("/maze/step", json={"id": sid, "action": action})
            assert answer.status_code == 200 and answer.json()["reward"] == 0 and not answer.json()["done"]
        assert http.get("/maze/available_actions", params={"id": sid}).json() == ["move left", "move right"]
        http.post("/maze/close", json={"id": sid})

        sid = http.post("/wordle/create").json()["id"]
        assert http.post("/wordle/reset", json={"id": sid, "seed": 2315}).status_code == 422
        http.post("/wordle/reset", json={"id": sid, "seed": 0})
        answer = http.post("/wordle/step", json={"id": sid, "action": "q q q q q"}).json()
        assert answer["observation"].startswith("invalid word") and answer["reward"] == 0
        http.post("/wordle/close", json={"id": sid})


def _maze_move(observation: str, visited: set[tuple[int, int]]) -> str:
    """A client-side policy from the observation text alone: an open move toward the goal, preferring
    squares not yet visited."""
    goal = tuple(map(int, re.search(r"The goal is at position (\d+), (\d+)", observation).groups()))
    pos = tuple(
        map(int, re.search(r"Your current position is at position (\d+), (\d+)", observation).groups())
    )
    walls = observation.split(". ", 2)[-1]
    blocked = {
        "move up": "above you" in walls,
        "move down": "below you" in walls,
        "move left": "to your left" in walls,
        "move right": "to your right" in walls,
    }
    delta = {"move up": (-1, 0), "move down": (1, 0), "move left": (0, -1), "move right": (0, 1)}

    def score(move):
        r, c = pos[0] + delta[move][0], pos[1] + delta[move][1]
        return ((r, c) in visited, abs(goal[0] - r) + abs(goal[1] - c))

    visited.add(pos)
    return min((m for m in delta if not blocked[m]), key=score)


def test_agentgym_facts_client_plays_maze_and_wordle(base_url):
    """A client written only from AgentGym's lmrlgym wire facts (DESIGN.md §3), with raw httpx:
    POST /maze/create -> {"id": n}; /maze/reset {id, game} -> {observation}; /maze/step {id, action} ->
    {observation, reward, done}; GET /maze/available_actions?id=; POST /wordle/create; GET
    /wordle/filtered_vocab?id= (before the first reset too, as AgentGym's client does); /wordle/reset
    {id, seed}; /wordle/step {id, action}."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        created = http.post("/maze/create")
        assert created.status_code == 200 and isinstance(created.json()["id"], int)
        sid = created.json()["id"]
        reset = http.post("/maze/reset", json={"id": sid, "game": 13}).json()
        observation = reset["observation"]
        assert observation.startswith("The goal is at position 8, 6.")
        assert isinstance(http.get("/maze/available_actions", params={"id": sid}).json(), list)
        visited: set[tuple[int, int]] = set()
        for _ in range(MazeEnv.max_rounds):
            step = http.post(
                "/maze/step", json={"id": sid, "action": _maze_move(observation, visited)}
            ).json()
            assert {"observation", "reward", "done"} <= set(step)
            observation = step["observation"]
            if step["done"]:
                break
        assert step["reward"] == 1 and step["done"] is True and observation == "Success"

        sid = http.post("/wordle/create").json()["id"]
        vocab = http.get("/wordle/filtered_vocab", params={"id": sid}).json()
        assert len(vocab) == 2315 and all(len(w) == 5 for w in vocab)
        assert http.post("/wordle/reset", json={"id": sid, "seed": 1}).status_code == 200
        for _ in range(WordleEnv.max_guesses):
            guess = " ".join(vocab[0])  # the first word still consistent with the feedback
            step = http.post("/wordle/step", json={"id": sid, "action": guess}).json()
            assert {"observation", "reward", "done"} <= set(step)
            assert re.fullmatch(r"[bgy]( [bgy]){4}", step["observation"].split("\n")[0])
            if step["done"]:
                break
            vocab = http.get("/wordle/filtered_vocab", params={"id": sid}).json()
        assert step["reward"] == 1 and step["done"] is True and step["observation"] == "g g g g g"


def test_available_actions_without_a_session_is_the_whole_action_set():
    with running_server([MazeEnv]) as url, httpx.Client(base_url=url, timeout=30) as http:
        # AgentGym's answer, in its order
        assert http.get("/maze/available_actions").json() == ["move left", "move right", "move up", "move down"]
        sid = http.post("/maze/create", json={"data_idx": 0}).json()["id"]
        assert len(http.get("/maze/available_actions", params={"id": sid}).json()) < 4  # walls around
    with running_server([WordleEnv]) as url, httpx.Client(base_url=url, timeout=30) as http:
        whole = http.get("/wordle/available_actions")  # no whole set: a session is needed, and none is named
        assert whole.status_code == 422 and whole.json()["error"].startswith("no session id given")
