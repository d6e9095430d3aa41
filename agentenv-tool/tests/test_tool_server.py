"""The five envs on one real server (the "tool" group), spoken to in AgentGym's form and in the uniform one."""

import httpx
import pytest
from agentenv_tool.academia.env import AcademiaEnv
from agentenv_tool.base import first_observation
from agentenv_tool.movie.env import MovieEnv
from agentenv_tool.sheet.env import SheetEnv
from agentenv_tool.todo.env import TodoEnv
from agentenv_tool.weather.env import WeatherEnv

from agentenv.client import EnvClient
from agentenv.registry import default_port, server_members
from agentenv.testing import running_server

ENVS = [WeatherEnv, MovieEnv, AcademiaEnv, SheetEnv, TodoEnv]


@pytest.fixture(scope="module")
def base_url():
    with running_server(ENVS) as url:
        yield url


def test_the_five_envs_are_one_server_group_on_one_port():
    assert sorted(server_members("tool")) == sorted(env.name for env in ENVS)
    assert default_port("tool") == 36007 == default_port("weather")


@pytest.mark.parametrize("env_cls", ENVS, ids=lambda c: c.name)
def test_agentgyms_wire_plays_the_expert_to_success(base_url, env_cls):
    idx = env_cls.splits["test"][-1]
    task = env_cls.task_of(idx)
    with httpx.Client(base_url=f"{base_url}/{env_cls.name}", timeout=30) as http:
        sid = http.post("/create", json={"id": idx}).json()
        assert isinstance(sid, int) and not isinstance(sid, bool)
        try:
            observation = http.post("/reset", json={"env_idx": sid, "id": idx}).json()
            assert observation == first_observation(task.record.goal)
            assert http.get("/observation", params={"env_idx": sid}).json() == observation
            for planned in task.plan:
                reply = f"Thought:\n{planned.thought}\n\nAction:\n{planned.action}"  # a whole ReAct reply
                answer = http.post("/step", json={"env_idx": sid, "action": reply}).json()
                assert {"observation", "reward", "done"} <= answer.keys()
                assert answer["observation"].startswith("Observation: ")
            assert answer["done"] is True and answer["success"] is True and answer["score"] == 1.0
            assert http.get("/observation", params={"env_idx": sid}).json() == answer["observation"]
        finally:
            assert http.post("/close", json={"env_idx": sid}).json()["closed"] is True


def test_a_bad_action_over_http_is_an_observation_and_keeps_the_session(base_url):
    with EnvClient("todo", base_url) as client, client.session(data_idx=TodoEnv.splits["test"][0]) as session:
        for action in ("Action: get_projects with Action Input: {oops}", "delete everything",
                       'Action: complete_task with Action Input: {"task_id": "0"}'):
            answer = session.step(action)
            assert answer.reward == 0 and not answer.done and answer.observation.startswith("Observation: ")
        assert "does not exist" in answer.observation
        assert '"name"' in session.step("Action: get_projects with Action Input: {}").observation


def test_agentgym_form_gets_the_running_progress_as_reward_and_the_uniform_form_the_increment():
    def rewards(http: httpx.Client, key: str, sid: int) -> list[float]:
        seen, done = [], False
        while not done:
            move = http.get("/expert", params={key: sid}).json()
            answer = http.post("/step", json={key: sid, "action": move["action"]}).json()
            seen.append(answer["reward"])
            done = answer["done"]
        assert answer["score"] == 1.0
        return seen

    with running_server(WeatherEnv) as url, httpx.Client(base_url=url, timeout=60) as http:
        task = next(i for i in WeatherEnv.splits["test"] if len(WeatherEnv.task_of(i).record.subgoals) > 2)
        sid = http.post("/create", json={"id": task}).json()
        http.post("/reset", json={"env_idx": sid, "id": task})
        running = rewards(http, "env_idx", sid)  # AgentGym's form: the progress so far
        uniform = http.post("/create", json={}).json()
        http.post("/reset", json={"id": uniform, "data_idx": task})
        increments = rewards(http, "id", uniform)
    assert running == sorted(running) and running[-1] == 1.0
    assert sum(increments) == pytest.approx(1.0) and running != increments


def test_todo_in_agentgyms_form_ends_with_a_reward_of_success():
    """AgentGym's TODO server sent, on the last step, 1 or 0 for success rather than the progress: a wrong
    finish after half the work is 0 there (0.5 over the uniform form's score)."""
    task = next(i for i in TodoEnv.splits["test"] if len(TodoEnv.task_of(i).plan) > 2)
    with running_server(TodoEnv) as url, httpx.Client(base_url=url, timeout=60) as http:
        sid = http.post("/create", json={"id": task}).json()
        http.post("/reset", json={"env_idx": sid, "id": task})
        move = http.get("/expert", params={"env_idx": sid}).json()
        partial = http.post("/step", json={"env_idx": sid, "action": move["action"]}).json()
        wrong = http.post("/step", json={"env_idx": sid, "action": 'finish with Action Input: {"answer": "x"}'}).json()
        assert wrong["done"] and not wrong["success"] and wrong["reward"] == 0.0 and wrong["score"] > 0
        assert partial["reward"] == partial["score"] > 0  # before the end: the progress, as the other tool envs
        http.post("/reset", json={"env_idx": sid, "id": task})
        for planned in TodoEnv.task_of(task).plan:
            right = http.post("/step", json={"env_idx": sid, "action": planned.action}).json()
        assert right["done"] and right["success"] and right["reward"] == 1.0


def test_agentgyms_id_names_a_record_of_the_loaded_task_file(tmp_path, monkeypatch):
    """With AgentGym's own task file loaded, its client's ``id`` is a line of that file (served from
    ORIGINAL_BASE on), not a generated task of the same number."""
    import json

    from agentenv_tool.records import ORIGINAL_BASE, original_records

    lines = [{"id": k, "goal": f"ORIGINAL GOAL {k}", "subgoals": ["1"], "additional_info": {
        "answer": 1, "init_config": {"current_date": "2023-06-15", "current_location": "Oslo"}, "goal_type": 0,
        "tool": "weather"}, "difficulty": "easy"} for k in range(6)]
    (tmp_path / "weather.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setenv("AGENTENV_WEATHER_TASKS", str(tmp_path / "weather.jsonl"))
    original_records.cache_clear()
    try:
        loaded = type("WeatherEnv", (WeatherEnv,), {"splits": WeatherEnv.splits_for("weather", 400, 100)})
        assert loaded.agentgym_task(5) == ORIGINAL_BASE + 5
        with running_server(loaded) as url, httpx.Client(base_url=url, timeout=60) as http:
            sid = http.post("/create", json={}).json()
            assert "ORIGINAL GOAL 5" in http.post("/reset", json={"env_idx": sid, "id": 5}).json()
            uniform = http.post("/create", json={}).json()
            assert "ORIGINAL" not in http.post("/reset", json={"id": uniform, "data_idx": 5}).json()["observation"]
            from agentenv.testing import check_server

            assert "AgentGym wire shapes" in check_server(url, "weather", expert_tasks=1)  # plays a loaded line
    finally:
        monkeypatch.delenv("AGENTENV_WEATHER_TASKS")
        original_records.cache_clear()
    assert WeatherEnv.agentgym_task(5) == 5
