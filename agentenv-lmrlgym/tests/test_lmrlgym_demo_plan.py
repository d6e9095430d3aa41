"""The Wordle plan of ``examples/demo.py --env wordle``: BC and exploration never touch the test words the
agent is scored on (docs/results.md, experiment 7)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import demo  # noqa: E402


def test_wordle_plan_trains_and_explores_only_training_words():
    p = demo.wordle_plan(argparse.Namespace(bc_tasks=64, explore_tasks=160, max_rounds=0))
    test = p.held_out["test"]
    assert (p.env, p.package) == ("wordle", "lmrlgym")
    assert len(test) == 300 and p.expert_check == {"wordle": test}
    assert p.bc == p.explore[:64] and len(p.explore) == 160
    assert not set(p.walks) & set(test)  # the training words (eto_sweep validates on unused ones)
    assert p.max_new_tokens == 128  # the expert's replies list candidate words


def test_reading_walks_are_refused_for_wordle(capsys):
    with pytest.raises(SystemExit):
        demo.parse_args(["--env", "wordle", "--reading-walks", "10"])
    assert "a Wordle guess is free text" in capsys.readouterr().err


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
