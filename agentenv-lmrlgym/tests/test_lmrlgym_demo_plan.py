"""The Wordle plan of ``examples/demo.py --env wordle``: BC and exploration never touch the test words the
agent is scored on.  The demo is run as a script with ``--plan-only``, which writes its plan and runs nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def demo(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(DEMO), "--plan-only", "--out", str(tmp_path / "demo"), "--env", "wordle", *options]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_wordle_plan_trains_and_explores_only_training_words(tmp_path):
    done = demo(tmp_path, "--bc-tasks", "64", "--explore-tasks", "160")
    assert done.returncode == 0, done.stderr
    p = json.loads((tmp_path / "demo" / "plan.json").read_text())
    test = p["held_out"]["test"]
    assert (p["env"], p["package"]) == ("wordle", "lmrlgym")
    assert len(test) == 300 and p["expert_check"] == {"wordle": test}
    assert p["bc"] == p["explore"][:64] and len(p["explore"]) == 160
    assert not set(p["walks"]) & set(test)  # the training words
    assert p["max_new_tokens"] == 128  # the expert's replies list candidate words


def test_reading_walks_are_refused_for_wordle(tmp_path):
    refused = demo(tmp_path, "--reading-walks", "10")
    assert refused.returncode == 2 and "a Wordle guess is free text" in refused.stderr
