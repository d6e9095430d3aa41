"""SQLGym over HTTP: a real server on a loopback port, AgentGym's own wire, real httpx clients."""

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from agentenv_sqlgym import SqlGymEnv

from agentenv.testing import running_server

TEST = SqlGymEnv.splits["test"]


@pytest.fixture(scope="module")
def base_url():
    with running_server(SqlGymEnv) as url:
        yield url


def test_agentgym_wire_create_reset_step_observation_close(base_url):
    """AgentGym's client: /create -> a bare int; /reset {env_idx, item_id}; /step -> {state, reward, done,
    info}; GET /observation?env_idx=; /close."""
    with httpx.Client(base_url=base_url, timeout=60) as http:
        env_idx = http.post("/create").json()
        assert isinstance(env_idx, int) and not isinstance(env_idx, bool)
        reset = http.post("/reset", json={"env_idx": env_idx, "item_id": TEST[0]}).json()
        observation, nothing = reset  # AgentGym's [observation, null]
        assert observation.split("\n\n")[0].endswith(".") and nothing is None
        assert http.get("/observation", params={"env_idx": env_idx}).json() == observation
        gold = http.get("/expert", params={"env_idx": env_idx}).json()["action"]
        # AgentGym's client strips the fence before sending: the bare SQL works as well
        bare = gold.removeprefix("```sql\n").removesuffix("\n```")
        step = http.post("/step", json={"env_idx": env_idx, "action": bare}).json()
        assert {"state", "reward", "done", "info"} <= step.keys()
        assert step["reward"] == 1.0 and step["done"] is True and step["state"] == step["observation"]
        assert step["info"]["ground_truth"] == bare
        assert http.get("/observation", params={"env_idx": env_idx}).json() == step["state"]
        assert (
            http.post("/step", json={"env_idx": env_idx, "action": bare}).status_code == 409
        )  # one step per task
        assert http.post("/close", json={"env_idx": env_idx}).json()["closed"] is True
        assert http.post("/step", json={"env_idx": env_idx, "action": bare}).status_code == 404


def test_bad_requests_get_clear_errors_and_the_session_lives_on(base_url):
    with httpx.Client(base_url=base_url, timeout=60) as http:
        env_idx = http.post("/create").json()
        try:
            for item in (-1, 2560, 9428, "x"):
                answer = http.post("/reset", json={"env_idx": env_idx, "item_id": item})
                assert answer.status_code == 422 and "error" in answer.json()
            http.post("/reset", json={"env_idx": env_idx, "item_id": TEST[5]})
            answer = http.post(
                "/step", json={"env_idx": env_idx, "action": "DROP TABLE customers; --"}
            ).json()
            assert answer["observation"].startswith("Refused: ") and answer["reward"] == 0 and answer["done"]
            assert http.post("/reset", json={"env_idx": env_idx, "item_id": TEST[5]}).status_code == 200
        finally:
            http.post("/close", json={"env_idx": env_idx})


def test_info_names_the_task_set(base_url):
    info = httpx.get(f"{base_url}/info", timeout=60).json()
    assert info["env"] == "sqlgym" and info["task_set"] == "generated" and info["max_rounds"] == 1
    assert info["splits"] == {"train": [20000, 21920], "dev": [21920, 22176], "test": [22176, 22560]}


def play(base_url: str, idx: int) -> tuple[int, float, str]:
    """One client's episode on its own session: (session id, reward, the task's question)."""
    with httpx.Client(base_url=base_url, timeout=120) as http:
        env_idx = http.post("/create").json()
        try:
            question = http.post("/reset", json={"env_idx": env_idx, "item_id": idx}).json()[0]
            gold = http.get("/expert", params={"env_idx": env_idx}).json()["action"]
            reward = http.post("/step", json={"env_idx": env_idx, "action": gold}).json()["reward"]
            return env_idx, reward, question.split("\n\n")[1]
        finally:
            http.post("/close", json={"env_idx": env_idx})


def test_concurrent_clients_each_get_their_own_session(base_url):
    """Never a shared session: 24 clients at once (AgentGym capped at 8 and handed a live session to the
    ninth) each play their own task."""
    tasks = list(TEST[:24])
    with ThreadPoolExecutor(max_workers=24) as pool:
        results = list(pool.map(lambda idx: play(base_url, idx), tasks))
    assert len({sid for sid, _, _ in results}) == 24
    assert [reward for _, reward, _ in results] == [1.0] * 24
    expected = [play(base_url, idx)[2] for idx in tasks[:3]]  # the same tasks, one at a time
    assert [question for _, _, question in results[:3]] == expected
    assert httpx.get(f"{base_url}/info", timeout=60).json()["live_sessions"] == 0
