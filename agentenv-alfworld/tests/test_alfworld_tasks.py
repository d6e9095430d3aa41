"""The game generator without the engine: splits, rooms, goals, placements, files, the cache."""

import hashlib
import json
import subprocess
import sys
from collections import Counter

import pytest
from agentenv_alfworld import pddl, tasks
from agentenv_alfworld.games import GeneratedGames
from agentenv_alfworld.scenes import TRAIN_SCENES, UNSEEN_SCENES, scene
from alfworld.gen import constants


def test_splits_are_alfworlds_sizes_and_cover_the_six_types():
    assert len(tasks.SPLITS["train"]) == 2420
    assert list(tasks.SPLITS["test"]) == list(tasks.SPLITS["test_seen"]) + list(tasks.SPLITS["test_unseen"])
    for split in ("train", "test_seen", "test_unseen"):
        counts = Counter(tasks.task_type_of(i) for i in tasks.SPLITS[split])
        assert set(counts) == set(tasks.TASK_TYPES)
        assert max(counts.values()) - min(counts.values()) <= 1, (split, counts)


def test_rooms_seen_and_unseen():
    assert not set(TRAIN_SCENES) & set(UNSEEN_SCENES)
    for i in tasks.SPLITS["test_unseen"]:
        assert tasks.task(i).scene.number in UNSEEN_SCENES
    for i in list(tasks.SPLITS["test_seen"]) + list(range(0, 2420, 97)):
        assert tasks.task(i).scene.number in TRAIN_SCENES


def test_seen_test_tasks_pose_goals_training_never_poses_in_that_room():
    train = tasks.train_pairs()
    for i in tasks.SPLITS["test_seen"]:
        t = tasks.task(i)
        assert (t.scene.number, t.goal) not in train


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4, 5, 777, 1501, 2419, 2420, 2455, 2519, 2520, 2577, 2619])
def test_a_task_is_a_possible_alfred_task(index):
    t = tasks.task(index)
    goal, room = t.goal, t.scene
    assert goal.task_type == tasks.task_type_of(index)
    assert room.room in constants.GOALS_VALID[goal.task_type]
    kinds = room.receptacle_types()
    targets = [p for p in t.placements if p.object_type == goal.object_target]
    assert len(targets) >= (2 if goal.task_type == "pick_two_obj_and_place" else 1)
    for p in t.placements:
        if p.object_type in tasks.LAMPS:
            assert p.receptacle.type in tasks.LAMP_HOLDERS[p.object_type]
        else:  # ALFRED's own table of which object may be in which receptacle
            assert p.object_type in constants.VAL_RECEPTACLE_OBJECTS[p.receptacle.type]
        assert p.receptacle in room.receptacles
    # the goal is not already met: no target starts where it is wanted
    assert all(p.receptacle.type != goal.parent_target for p in targets)
    if goal.parent_target:
        assert goal.parent_target in kinds
        assert goal.object_target in constants.VAL_RECEPTACLE_OBJECTS[goal.parent_target]
    if goal.task_type in tasks.STATE_CHANGE:
        appliance, ability = tasks.STATE_CHANGE[goal.task_type]
        assert appliance in kinds and goal.object_target in constants.VAL_ACTION_OBJECTS[ability]
    if goal.toggle_target:
        assert any(p.object_type == goal.toggle_target for p in t.placements)
    assert t.agent_location not in {r.location for r in room.receptacles}
    assert len({p.object_id for p in t.placements}) == len(t.placements)


def test_rooms_come_from_alfworlds_layouts():
    kitchen = scene(1)
    ids = {r.id for r in kitchen.receptacles}
    assert "Cabinet|+00.68|+00.50|-02.20" in ids and "Sink|-01.90|+00.97|-01.50|SinkBasin" in ids
    # the pose alfworld's layout gives this cabinet, as ALFRED names locations
    assert next(r for r in kitchen.receptacles if r.id == "Cabinet|+00.68|+02.02|-02.46").location == "loc|2|-7|2|-30"
    # listed in the room's objects but without a pose in the layout: added
    assert len(kitchen.of_type("StoveBurner")) == 4 and kitchen.of_type("CoffeeMachine")


def _problem_digest(index: int) -> str:
    return hashlib.sha256(pddl.problem(tasks.task(index)).encode()).hexdigest()


def test_generation_is_deterministic_across_processes():
    """Same problem text in another process with another hash seed (no set order leaks into a game)."""
    here = [_problem_digest(i) for i in (3, 2455, 2600)]
    code = (
        "import hashlib; from agentenv_alfworld import pddl, tasks; "
        "print(' '.join(hashlib.sha256(pddl.problem(tasks.task(i)).encode()).hexdigest() for i in (3, 2455, 2600)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": "123"}
    )
    assert out.stdout.split() == here


def test_game_files_are_alfworlds_format(tmp_path):
    t = tasks.task(2422)
    game_file = pddl.write_game(t, tmp_path / t.name / "trial_x")
    game = json.loads(game_file.read_text())
    assert set(game) == {"pddl_domain", "grammar", "pddl_problem", "solvable"} and game["solvable"] is True
    assert game["pddl_domain"] == pddl.domain()  # ALFWorld's own domain, unchanged
    assert f"Your task is to: {t.description}." in game["grammar"] and "UNKNOWN GOAL" not in game["grammar"]
    assert (game_file.parent / "initial_state.pddl").read_text() == game["pddl_problem"]
    traj = json.loads((game_file.parent / "traj_data.json").read_text())
    assert traj["task_type"] == t.goal.task_type
    assert traj["pddl_params"]["object_target"] == t.goal.object_target
    assert traj["turk_annotations"]["anns"][0]["task_desc"] == t.description
    assert "(:goal" in game["pddl_problem"] and game["pddl_problem"].count("(") == game["pddl_problem"].count(")")


def test_the_cache_writes_each_game_once_even_from_two_processes(tmp_path):
    indices = list(range(2420, 2440))
    code = (
        "import sys; from pathlib import Path; from agentenv_alfworld.games import GeneratedGames; "
        f"print(GeneratedGames(Path(sys.argv[1])).generate({indices}))"
    )
    runs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    written = [int(run.communicate(timeout=120)[0]) for run in runs]
    assert sum(written) == len(indices)  # the lock: one process wrote each game, the other found it
    games = GeneratedGames(tmp_path)
    assert all(games.game_file(i).is_file() for i in indices)
    assert games.generate(indices) == 0
    assert not list(games.data.rglob(".writing-*"))  # no half-written game left behind
    folder = games.folder(2425)
    assert folder.parts[-3] == "valid_seen" and folder.parent.name == tasks.task(2425).name
