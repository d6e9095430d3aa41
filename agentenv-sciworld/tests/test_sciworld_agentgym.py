"""sciworld_agentgym: AgentGym's ids (task after task, variation after variation) name AgentGym's tasks; the
routes AgentGym's visualisation asks for (task_description, object_tree, state) on both envs."""

import httpx
import pytest
from agentenv_sciworld import SciWorldEnv, tasks
from agentenv_sciworld.agentgym import SciWorldAgentGymEnv, data_idx_of, task_at
from agentenv_sciworld.agentgym_ids import AGENTEVAL_TEST, AGENTTRAJ_TRAIN

from agentenv.testing import running_server


def test_ids_run_task_after_task_as_agentgyms():
    assert (task_at(0).task_name, task_at(0).variation) == ("boil", 0)
    assert (task_at(29).task_name, task_at(29).variation) == ("boil", 29)
    assert (task_at(30).task_name, task_at(30).variation) == ("melt", 0)
    assert (task_at(606).task_name, task_at(606).variation, task_at(606).block) == ("use-thermometer", 486, "test")
    assert (task_at(4638).task_name, task_at(4638).variation) == ("identify-life-stages-2", 9)
    pairs = [(task_at(i).task_name, task_at(i).variation) for i in range(4639)]
    assert len(set(pairs)) == 4639 and set(pairs) == {(t.task_name, t.variation) for t in map(tasks.task_at, range(4639))}
    assert all(data_idx_of(*pairs[i]) == i for i in range(0, 4639, 97))
    with pytest.raises(IndexError):
        task_at(4639)


def test_only_two_ids_name_the_same_task_in_sciworld():
    same = [i for i in range(4639) if (task_at(i).task_name, task_at(i).variation) == (
        tasks.task_at(i).task_name, tasks.task_at(i).variation)]
    assert same == [0, 4112]


def test_splits_are_agenteval_and_agenttraj_less_their_overlap():
    test, train = SciWorldAgentGymEnv.splits["test"], SciWorldAgentGymEnv.splits["train"]
    assert list(test) == sorted(AGENTEVAL_TEST) and len(test) == 200
    overlap = set(AGENTTRAJ_TRAIN) & set(AGENTEVAL_TEST)
    assert len(overlap) == 61 and list(train) == sorted(set(AGENTTRAJ_TRAIN) - overlap)
    assert SciWorldAgentGymEnv.serves(1) and not SciWorldAgentGymEnv.serves(4639)  # any AgentGym id plays


def test_an_agentgym_client_at_the_root_gets_agentgyms_task():
    with running_server(SciWorldAgentGymEnv) as url, httpx.Client(base_url=url, timeout=60) as http:
        assert http.get("/").json() == "This is environment sciworld_agentgym."
        sid = http.post("/create").json()["id"]
        reset = http.post("/reset", json={"id": sid, "data_idx": 536}).json()  # AgentEval's first item
        assert (reset["task_name"], reset["var_num"]) == ("use-thermometer", 416)
        assert reset["score"] == 3.0  # as AgentGym's reset: the start room already earns 3 points
        step = http.post("/step", json={"id": sid, "action": "zork"}).json()
        assert step["reward"] == 0 and step["score"] == 3.0
        description = http.get("/task_description", params={"id": sid}).json()["task_description"]
        assert description.startswith("Your task is to measure the temperature of unknown substance B")
        http.post("/close", json={"id": sid})


@pytest.fixture(scope="module")
def url():
    with running_server([SciWorldEnv]) as base:
        yield base


def test_visualisation_routes_answer_get_and_post(url):
    with httpx.Client(base_url=url, timeout=60) as http:
        sid = http.post("/create").json()["id"]
        assert http.get("/state", params={"id": sid}).status_code == 409  # no task yet
        http.post("/reset", json={"id": sid, "data_idx": tasks.data_idx_of("find-living-thing", 225)})
        http.post("/step", json={"id": sid, "action": "open door to hallway"})
        for answer in (http.get("/task_description", params={"id": sid}), http.post("/task_description", json={"id": sid})):
            assert answer.json()["task_description"].startswith("Your task is to find a(n) living thing")
        tree = http.post("/object_tree", json={"id": sid}).json()["object_tree"]
        assert tree["name"] and tree["uuid"]
        state = http.get("/state", params={"id": sid}).json()
        assert set(state) == {"observation", "inventory", "task_description", "goal_progress", "possible_actions",
                              "possible_objects", "current_moves", "environment_info"}
        assert state["observation"].startswith("This room is called") and state["current_moves"] == 1
        assert len(state["possible_actions"]) == 10 and state["environment_info"]["task_name"] == "find-living-thing"
        assert http.post("/state", json={"id": sid, "unknown": 1}).status_code == 422  # not an argument of state
        http.post("/close", json={"id": sid})
        assert http.get("/object_tree", params={"id": sid}).status_code == 404


def test_step_visual_extras_are_agentgyms_fields(env):
    env.reset(tasks.data_idx_of("find-non-living-thing", 225))
    env.step("look around")
    extras = env.visual_extras()
    assert set(extras) == {"object_tree", "inventory", "moves"}
    assert extras["inventory"].startswith("In your inventory") and extras["object_tree"]["name"]
