"""ALFWorld's original games: a sample in the original layout (json_2.1.1, alfworld 0.3's grammar, AgentGym's
mapping files), served by the same server when ``ALFWORLD_DATA`` points at it."""

import json

import httpx
import pytest
from agentenv_alfworld import AlfWorldEnv, OriginalGames, game_library, tasks

from agentenv.testing import running_server

SAMPLE = {0: ("train", 3), 1: ("train", 10), 2420: ("valid_train", 2426), 2421: ("valid_train", 2431)}


@pytest.fixture
def original_data(original_sample, monkeypatch):
    root = original_sample(SAMPLE)
    monkeypatch.setenv("ALFWORLD_DATA", str(root))
    monkeypatch.setenv("AGENTENV_ALFWORLD_GAMES", "auto")
    return root


def test_agentgym_item_ids_map_to_the_original_games(original_data):
    games = game_library()
    assert isinstance(games, OriginalGames)
    for item_id, (folder, index) in SAMPLE.items():
        path = games.game_file(item_id)
        assert path.parts[-4:-2] == (folder, tasks.task(index).name)
        assert games.task_type(item_id) == tasks.task_type_of(index)
    with pytest.raises(LookupError, match="task 5 has no ALFWorld game"):
        games.game_file(5)


def test_the_server_serves_the_original_games(original_data):
    """Item 2420 is AgentGym's first test game; it plays in 0.3's dialect, and the expert wins it."""
    with running_server(AlfWorldEnv) as url, httpx.Client(base_url=url, timeout=120) as http:
        sid = http.post("/create").json()["id"]
        try:
            reset = http.post("/reset", json={"id": sid, "game": 2420, "world_type": "Text"}).json()
            generated = tasks.task(2426)
            assert reset["task_type"] == generated.goal.task_type
            assert reset["observation"].endswith(f"Your task is to: {generated.description}.")
            detail = http.get("/detail", params={"id": sid}).json()
            assert detail["games"] == "original" and detail["game"].startswith("valid_train/")
            for _ in range(AlfWorldEnv.expert_max_rounds):
                move = http.get("/expert", params={"id": sid}).json()
                answer = http.post("/step", json={"id": sid, "action": move["action"]}).json()
                assert "You arrive at loc" not in answer["observation"]  # 0.3's arrival, stripped
                if any(a.startswith("put ") for a in answer["available_actions"]):
                    assert not any(a.startswith("move ") for a in answer["available_actions"])
                if answer["done"]:
                    break
            assert answer["reward"] == 1.0
            assert move["action"].startswith("put ") and " in/on " in move["action"]
        finally:
            http.post("/close", json={"id": sid})
        missing = http.post("/create").json()["id"]
        refused = http.post("/reset", json={"id": missing, "data_idx": 7})
        assert refused.status_code == 500 and "task 7 has no ALFWorld game" in refused.json()["error"]


def test_without_mapping_files_games_are_numbered_in_path_order(original_sample, tmp_path):
    root = original_sample({0: ("train", 3), 1: ("train", 10), 2: ("valid_seen", 2426), 3: ("valid_unseen", 2600)}, mappings=False)
    data = root / "json_2.1.1"
    # games ALFWorld's own loader skips: an unsolvable one, a movable-receptacle task
    skipped = data / "train" / "pick_and_place_with_movable_recep-Mug-Bowl-Shelf-7" / "trial_T1"
    skipped.mkdir(parents=True)
    (skipped / "traj_data.json").write_text("{}")
    (skipped / "game.tw-pddl").write_text(json.dumps({"solvable": True}))
    unsolvable = data / "train" / "pick_and_place_simple-Mug-None-Shelf-7" / "trial_T2"
    unsolvable.mkdir(parents=True)
    (unsolvable / "traj_data.json").write_text("{}")
    (unsolvable / "game.tw-pddl").write_text(json.dumps({"solvable": False}))
    games = OriginalGames(root)
    train = sorted([tasks.task(3).name, tasks.task(10).name])
    assert [games.game_file(i).parts[-3] for i in (0, 1)] == train
    assert games.game_file(2420).parts[-4] == "valid_seen" and games.game_file(2421).parts[-4] == "valid_unseen"
    with pytest.raises(LookupError):
        games.game_file(2)
    env = AlfWorldEnv(games)
    try:
        assert env.reset(2420).endswith(f"Your task is to: {tasks.task(2426).description}.")
        assert env.task_type() == tasks.task_type_of(2426)
    finally:
        env.close()
