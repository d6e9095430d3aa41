"""The BabyAI plan of ``examples/demo.py --env babyai``: which tasks BC, exploration, the reading walks and
the held-out scores use (the demo's claim rests on these sets being disjoint).  The demo is run as a
script with ``--plan-only``, which writes its plan and runs nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentenv_babyai.levels import level_of, short_name

from agentenv.data.walks import random_walks, walk_tasks

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"
DEFAULTS = ["--env", "babyai", "--max-rounds", "10", "--explore-tasks", "256"]


def demo_plan(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(DEMO), "--plan-only", "--out", str(tmp_path / "demo"), *DEFAULTS, *options]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("plan")
    done = demo_plan(tmp)
    assert done.returncode == 0, done.stderr
    return json.loads((tmp / "demo" / "plan.json").read_text())


def test_held_out_seeds_are_never_trained_or_walked_on(plan):
    unseen, test = plan["held_out"]["unseen_seeds"], plan["held_out"]["test"]
    assert len(unseen) == 200 and len(test) == 20  # AgentGym's test split has 10 tasks per level
    assert plan["bc"] == plan["explore"][:64] and len(plan["explore"]) == 256
    assert not set(unseen) & (set(plan["explore"]) | set(plan["walks"]))
    assert not set(test) & (set(plan["explore"]) | set(plan["walks"]) | set(unseen))
    every = plan["explore"] + plan["walks"] + unseen + test
    assert {short_name(level_of(i)[0]) for i in every} == {"GoToObjS6", "GoToLocalS8N7"}
    assert plan["expert_check"] == {"babyai": unseen} and plan["max_rounds"] == 10


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--levels", "NoSuchLevel"], "no BabyAI level is called NoSuchLevel"),
        (["--levels", "GoToObjS6", "--explore-tasks", "400"], "too few"),  # 500 seeds: 400 + 200 held out
    ],
)
def test_a_plan_that_does_not_fit_is_refused(tmp_path, options, message):
    refused = demo_plan(tmp_path, *options)
    assert refused.returncode != 0 and message in refused.stderr
    assert not (tmp_path / "demo" / "plan.json").exists()


def test_task_reading_walks_restate_the_goal_in_every_reply(plan):
    tasks = plan["walks"][:3]
    for walk in random_walks("babyai", tasks, steps=4, seed=1, kind="task_reading"):
        goal = walk.conversations[2].value.splitlines()[0]
        assert goal.startswith("Your goal: go to ")
        replies = [t for t in walk.conversations[2:] if t.role == "gpt"]
        assert replies and all(t.loss for t in replies)
        assert all(t.value.startswith(f"Thought:\n{goal} ") for t in replies)
        observations = [t for t in walk.conversations[2:] if t.role == "human"]
        assert not any(t.loss for t in observations)
        for observation, reply in zip(observations, replies, strict=True):  # the move is one it was offered
            assert reply.value.split("Action:\n")[1] in observation.value.split("Available actions: ")[1]
    plain = random_walks("babyai", tasks[:1], steps=2, seed=1, kind="reading")[0]
    assert plain.conversations[3].value.startswith("Thought:\nYour goal:")  # only the first reply restates it
    assert not plain.conversations[5].value.startswith("Thought:\nYour goal:")


def test_the_readers_level_walks_skip_held_out_tasks(plan):
    held_out = [i for ids in plan["held_out"].values() for i in ids]
    tasks = walk_tasks("babyai", "train", 3000, 0, held_out)
    assert len(tasks) == len(set(tasks)) == 3000 and tasks == sorted(tasks)
    assert not set(tasks) & set(held_out)
    assert len({level_of(i)[0] for i in tasks}) == 40  # every level, not only the demo's two
    assert walk_tasks("babyai", "train", 3000, 0, held_out) == tasks  # the same draw for the same seed
    assert walk_tasks("babyai", "train", 3000, 1, held_out) != tasks
