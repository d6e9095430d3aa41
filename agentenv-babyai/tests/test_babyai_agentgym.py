"""babyai_agentgym: AgentGym's task ids name AgentGym's tasks (as its minigrid 2.3.1 made them), with its
goal lines; and babyai plays every index AgentGym accepts (past the splits too).

The expected missions were measured with minigrid 2.3.1 (AgentGym's ``minigrid<2.5.0``) running AgentGym's
procedure (``benchmarks/agentgym_ids.py --reference-python``); this project's ``babyai`` gives others.
"""

import base64

import httpx
import pytest
from agentenv_babyai import BabyAIEnv
from agentenv_babyai.agentgym import BabyAIAgentGymEnv, agentgym_goal
from agentenv_babyai.agentgym_ids import AGENTEVAL_TEST, AGENTTRAJ_TRAIN
from agentenv_babyai.levels import MAX_TASKS

from agentenv.protocol import BadRequest
from agentenv.session import LocalSession
from agentenv.testing import running_server

#: index -> (AgentGym's mission, babyai's mission): GoToObjS6 (AgentGym's was a 4x4 room) and the three
#: Synth levels whose missions depended on minigrid 2.3's left-over locked room
MEASURED = {
    83: ("go to the red box", "go to the blue ball"),
    155: ("go to the red box", "go to a door on your right"),
    156: (
        "put the purple box next to the grey box and go to the door on your right",
        "put the purple box next to the green key and open the door in front of you",
    ),
    2994: ("open the grey door", "open the green door"),
}


@pytest.fixture(scope="module")
def sessions():
    agentgym, babyai = LocalSession(BabyAIAgentGymEnv, 0), LocalSession(BabyAIEnv, 1)
    yield agentgym, babyai
    agentgym.close()
    babyai.close()


@pytest.mark.parametrize("idx", sorted(MEASURED))
def test_agentgym_ids_play_agentgyms_missions(sessions, idx):
    agentgym, babyai = sessions
    theirs, ours = MEASURED[idx]
    agentgym.reset(idx)
    babyai.reset(idx)
    assert agentgym.detail()["mission"] == theirs
    assert babyai.detail()["mission"] == ours


def test_goto_obj_s6_is_agentgyms_four_by_four_room(sessions):
    agentgym, babyai = sessions
    agentgym.reset(3)
    babyai.reset(3)
    assert agentgym.detail()["level"] == "BabyAI-GoToObjS6-v0" and agentgym.env.env.width == 4
    assert babyai.detail()["level"] == "BabyAI-GoToObjS6-v1" and babyai.env.env.width == 6
    assert agentgym.detail()["task_type"] == babyai.detail()["task_type"] == "GoToObjS6"


def test_goal_line_is_agentgyms_wording_and_the_mission_is_unchanged(sessions):
    agentgym, babyai = sessions
    mission = "go to a yellow door and go to the green box, then go to the yellow ball"
    first = agentgym.reset(3967).observation.splitlines()[0]
    assert first == "Your goal: go to a yellow door and go to the green box, and go to the yellow ball"
    assert agentgym.detail()["mission"] == mission  # the episode is still judged by the strict mission
    assert babyai.reset(3967).observation.splitlines()[0] == f"Your goal: {mission}"
    assert agentgym_goal("open the red door after you pick up a key") == "open the red door and pick up a key"


def test_splits_are_agentgyms_published_items():
    assert list(BabyAIAgentGymEnv.splits["test"]) == sorted(AGENTEVAL_TEST) and len(AGENTEVAL_TEST) == 90
    assert list(BabyAIAgentGymEnv.splits["train"]) == sorted(AGENTTRAJ_TRAIN) and len(AGENTTRAJ_TRAIN) == 810
    assert BabyAIAgentGymEnv.serves(0) and BabyAIAgentGymEnv.serves(MAX_TASKS - 1)  # listed or not


def test_expert_solves_agentevals_test_items_in_agentgyms_twenty_rounds(sessions):
    agentgym, _ = sessions
    for idx in AGENTEVAL_TEST[::9]:  # 10 of the 90, over 10 levels
        agentgym.reset(idx)
        for _ in range(BabyAIAgentGymEnv.max_rounds):
            answer = agentgym.step(agentgym.expert().action)
            if answer.done:
                break
        assert answer.success, idx


@pytest.mark.parametrize("idx", [20400, 40 * 510 + 3, MAX_TASKS - 1])
def test_babyai_plays_indices_past_the_splits_as_agentgym_did(sessions, idx):
    _, babyai = sessions
    assert BabyAIEnv.split_of(idx) is None
    assert babyai.reset(idx).observation.startswith("Your goal: ")
    assert babyai.detail()["seed"] == idx // 40 and babyai.detail()["level"].endswith(("-v0", "-v1"))


@pytest.mark.parametrize("idx", [MAX_TASKS, -1])
def test_babyai_refuses_indices_past_the_seed_bound(sessions, idx):
    _, babyai = sessions
    with pytest.raises(BadRequest):
        babyai.reset(idx)


def test_an_agentgym_client_at_the_root_gets_agentgyms_task_and_render():
    """AgentGym's own client and visualisation speak to the root: create, reset, step, POST /render."""
    with running_server(BabyAIAgentGymEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/").json() == "This is environment babyai_agentgym."
        sid = http.post("/create").json()["id"]
        reset = http.post("/reset", json={"id": sid, "data_idx": 156}).json()
        assert reset["observation"].startswith(f"Your goal: {MEASURED[156][0]}\n")
        assert {"observation", "reward", "score", "deleted", "done"} <= set(reset)
        picture = http.post("/render", json={"id": sid})
        assert picture.headers["content-type"].startswith("application/json")
        data_url = picture.json()
        assert data_url.startswith("data:image/png;base64,")
        assert base64.b64decode(data_url.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
        step = http.post("/step", json={"id": sid, "action": "turn left"}).json()
        assert {"observation", "reward", "score", "done"} <= set(step)
        far = http.post("/reset", json={"id": sid, "data_idx": 40 * 1000 + 3})  # any seed AgentGym takes
        assert far.status_code == 200 and far.json()["task_type"] == "GoToObjS6"
        assert http.post("/reset", json={"id": sid, "data_idx": MAX_TASKS}).status_code == 422
        assert http.post("/close", json={"id": sid}).json()["closed"] is True
