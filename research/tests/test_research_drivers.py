"""The experiment drivers refuse settings they cannot use, and choose ETO's settings on validation tasks
that nothing else uses."""

from __future__ import annotations

import argparse
import sys

import demo
import pytest


def plan(**overrides) -> demo.Plan:
    args = dict(
        levels=["GoToObjS6", "GoToLocalS8N7"], bc_tasks=64, explore_tasks=256, test_tasks=200, max_rounds=10
    )
    return demo.babyai_plan(argparse.Namespace(**(args | overrides)))


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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env", "wordle", "--held-out", "test=1,2"], "the plan already has a held-out set of that name"),
        (["--held-out", "test_procedural=1,2"], "the plan already has a held-out set of that name"),
        (["--env", "wordle", "--held-out", "fresh=1,2", "--no-such-option"], "demo.py: error"),
        (["--held-out", "fresh=1:x"], "is not an index"),
        (["--held-out", "fresh="], "names no task"),
        (["--eto-against", "own_best"], "samples_per_instruction >= 2"),
        (["--eto-beta", "0"], "beta 0 and nll_weight 0"),
        (["--env", "babyai", "--levels", "GoToObjS6", "GoToObjS6x"], "no BabyAI level is called GoToObjS6x"),
        (["--env", "babyai", "--test-tasks", "0"], "argument --test-tasks: must be at least 1"),
        (["--base", "no/such/model"], "not a Hugging Face model folder"),
    ],
)
def test_cpu_experiment_refuses_bad_settings_before_any_seed_runs(tmp_path, monkeypatch, capsys, argv, message):
    import cpu_experiment

    out = tmp_path / "experiment"
    monkeypatch.setattr(sys, "argv", ["cpu_experiment.py", "--out", str(out), *argv])
    with pytest.raises(SystemExit) as stopped:
        cpu_experiment.main()
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()  # refused before seed 0's demo started
