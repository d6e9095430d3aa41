"""The BabyAI plan of ``examples/demo.py --env babyai``: which tasks BC, exploration, the reading walks and
the held-out scores use (the experiment of docs/results.md rests on these sets being disjoint)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from agentenv_babyai.levels import level_of, short_name

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import demo  # noqa: E402


def plan(**overrides) -> demo.Plan:
    args = dict(
        levels=["GoToObjS6", "GoToLocalS8N7"], bc_tasks=64, explore_tasks=256, test_tasks=200, max_rounds=10
    )
    return demo.babyai_plan(argparse.Namespace(**(args | overrides)))


def test_held_out_seeds_are_never_trained_or_walked_on():
    p = plan()
    unseen, test = p.held_out["unseen_seeds"], p.held_out["test"]
    assert len(unseen) == 200 and len(test) == 20  # AgentGym's test split has 10 tasks per level
    assert p.bc == p.explore[:64] and len(p.explore) == 256
    assert not set(unseen) & (set(p.explore) | set(p.walks))
    assert not set(test) & (set(p.explore) | set(p.walks) | set(unseen))
    every = p.explore + p.walks + unseen + test
    assert {short_name(level_of(i)[0]) for i in every} == {"GoToObjS6", "GoToLocalS8N7"}
    assert p.expert_check == {"babyai": unseen} and p.max_rounds == 10


def test_a_plan_that_does_not_fit_is_refused():
    with pytest.raises(SystemExit, match="no BabyAI level"):
        plan(levels=["NoSuchLevel"])
    with pytest.raises(SystemExit, match="too few"):
        plan(levels=["GoToObjS6"], explore_tasks=400)  # 500 training seeds: 400 + 200 held out do not fit


def test_task_reading_walks_restate_the_goal_in_every_reply():
    from random_walks import random_walks

    tasks = plan().walks[:3]
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


def test_the_readers_level_walks_skip_held_out_tasks():
    from random_walks import walk_tasks

    p = plan()
    held_out = [i for ids in p.held_out.values() for i in ids]
    tasks = walk_tasks("babyai", "train", 3000, 0, held_out)
    assert len(tasks) == len(set(tasks)) == 3000 and tasks == sorted(tasks)
    assert not set(tasks) & set(held_out)
    assert len({level_of(i)[0] for i in tasks}) == 40  # every level, not only the demo's two
    assert walk_tasks("babyai", "train", 3000, 0, held_out) == tasks  # the same draw for the same seed
    assert walk_tasks("babyai", "train", 3000, 1, held_out) != tasks


def test_eto_sweep_validates_on_tasks_nothing_else_uses():
    from dataclasses import asdict

    import eto_sweep

    p = asdict(plan())
    validation = eto_sweep.validation_tasks(p, 100)
    assert len(validation) == 100
    held_out = {i for ids in p["held_out"].values() for i in ids}
    assert not set(validation) & (set(p["explore"]) | set(p["bc"]) | held_out)
    eto = eto_sweep.parse_setting(["lr=1e-5", "nll=1", "tasks=explore", "k=2", "t=0.7", "by=success"])
    assert (eto.learning_rate, eto.nll_weight, eto.samples, eto.tasks, eto.by) == (1e-5, 1.0, 2, "explore", "success")
    assert eto.folder() == "eto_lr1e-05_beta0.1_k2_t0.7_nll1_explore_by_success"
    assert eto_sweep.parse_setting([]).folder() == "eto"  # the defaults keep experiment 1's folder name
    with pytest.raises(ValueError, match="unknown setting"):
        eto_sweep.parse_setting(["speed=3"])
    with pytest.raises(ValueError, match="'3x' is not a number"):
        eto_sweep.parse_setting(["lr=3x"])
    with pytest.raises(ValueError, match="cut one of"):
        eto_sweep.parse_setting(["cut=halfway"])
    with pytest.raises(ValueError, match="tasks must be one of"):
        eto_sweep.parse_setting(["tasks=test"])
    with pytest.raises(ValueError, match="loss_type must be one of"):
        eto_sweep.parse_setting(["loss=hinge"])
    assert eto_sweep.parse_setting(["beta=0.5", "loss=ipo"]).folder() == "eto_lr0.0001_beta0.5_ipo"
    assert eto_sweep.parse_setting(["beta=1", "nll=1", "span=action"]).folder() == "eto_lr0.0001_beta1_nll1_actions"
    with pytest.raises(ValueError, match="preference_span must be one of"):
        eto_sweep.parse_setting(["span=thought"])
    own = eto_sweep.parse_setting(["lr=3e-5", "k=4", "t=0.7", "by=success", "against=own_best"])
    assert own.folder() == "eto_lr3e-05_beta0.1_k4_t0.7_by_success_against_own_best"
    with pytest.raises(ValueError, match="samples_per_instruction >= 2"):
        eto_sweep.parse_setting(["against=own_best"])  # greedy: one episode per task, nothing to pair
    with pytest.raises(ValueError, match="pair_with must be one of"):
        eto_sweep.parse_setting(["against=teacher"])
    staged = eto_sweep.parse_setting(["lr=1e-3", "beta=0", "nll=1", "it=2", "betas=0,0.1", "lrs=1e-3,1e-5"])
    assert (staged.iteration_betas, staged.iteration_learning_rates) == ((0.0, 0.1), (1e-3, 1e-5))
    assert staged.folder() == "eto_lr0.001_beta0_nll1_betas0-0.1_lrs0.001-1e-05"
    with pytest.raises(ValueError, match="beta 0 and nll_weight 0"):
        eto_sweep.parse_setting(["betas=0.1,0"])  # iteration 2 would train nothing


def test_eto_sweep_takes_named_validation_tasks_when_the_plan_leaves_none(tmp_path, monkeypatch, capsys):
    from dataclasses import asdict

    import eto_sweep

    from agentenv.data.trajectory import write_json

    p = asdict(plan(bc_tasks=800, explore_tasks=800))  # BC on every training task the plan does not hold out
    assert eto_sweep.validation_tasks(p, 100) == []
    write_json(tmp_path / "plan.json", p)
    write_json(tmp_path / "agentevol" / "run_config.json", {"seed": 0})

    def sweep(*args: str) -> str:
        monkeypatch.setattr(sys, "argv", ["eto_sweep.py", str(tmp_path), "--setting", "lr=1e-5", *args])
        with pytest.raises(SystemExit):
            eto_sweep.main()
        return capsys.readouterr().err

    assert "leaves no training task for validation" in sweep()
    assert f"tasks [{p['bc'][0]}] are BC, explored or held-out" in sweep("--validation", str(p["bc"][0]))
    assert "are BC, explored or held-out" in sweep("--validation", str(p["held_out"]["unseen_seeds"][3]))
    # an earlier sweep in this folder scored other tasks: its rows could not be compared with new ones
    write_json(tmp_path / "eto_sweep" / "validation.json", [60444])
    assert "swept on other validation tasks" in sweep("--validation", "60404:60484:40")
