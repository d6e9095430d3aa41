"""The README's main command, small: ``examples/demo.py --env babyai --reader`` end to end (a real BabyAI
server subprocess, the expert, the reader's three stages, BC, an AgentEvol iteration, the table), then
run again: the finished run is found and nothing is trained twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"
SMALL = [
    "--env", "babyai", "--reader", "--reader-walks", "6", "6", "--bc-tasks", "4", "--explore-tasks", "6",
    "--test-tasks", "4", "--samples", "1", "--max-rounds", "3", "--epochs", "1", "--iterations", "1",
]  # fmt: skip


def run_demo(out: Path) -> str:
    proc = subprocess.run(
        [sys.executable, str(DEMO), "--out", str(out), *SMALL],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"COLUMNS": "200"},  # the table's rows unwrapped
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.slow
@pytest.mark.timeout(900)  # two runs, each allowed its own 600 s on a loaded machine
def test_the_demo_tells_the_whole_story_and_resumes(tmp_path):
    out = tmp_path / "demo"
    first = run_demo(out)
    table = first[first.index("AgentGym demo") :]
    for row in ("expert", "BC", "AgentEvol iteration 1"):
        assert f"│ {row} " in table

    # the reader's stages are trained models, each from the one before (its walks hold 6 + 6 episodes)
    configs = {
        name: json.loads((out / name / "train_state.json").read_text())["config"]
        for name in ("reading_model", "reader_stage2", "reader_model")
    }
    assert configs["reading_model"]["model"] == str(out / "base_model")
    assert configs["reader_stage2"]["model"] == str(out / "reading_model")
    assert configs["reader_model"]["model"] == str(out / "reader_stage2")
    for walks in ("reading_walks.jsonl", "level_walks.jsonl"):
        assert len((out / walks).read_text().splitlines()) == 6

    # AgentEvol starts from the reader and scores the 4 held-out seeds after BC and after its iteration
    summary = json.loads((out / "demo_summary.json").read_text())
    assert json.loads((out / "agentevol" / "run_config.json").read_text())["model"] == str(out / "reader_model")
    assert [it["scores"]["babyai"]["n"] for it in summary["iterations"]] == [4, 4]
    assert (out / "agentevol" / "curve.png").stat().st_size > 0

    # a rerun finds every stage finished: the same table, and no model written again
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("model.safetensors")}
    again = run_demo(out)
    assert again[again.index("AgentGym demo") :].split("curve:")[0] == table.split("curve:")[0]
    assert {p: p.stat().st_mtime_ns for p in out.rglob("model.safetensors")} == stamps

    # the run folder's models and data are reused by path, so a rerun with other settings is refused
    other = subprocess.run(
        [sys.executable, str(DEMO), "--out", str(out), *SMALL, "--hidden", "64"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert other.returncode != 0 and "other settings (hidden " in other.stderr
    assert not (out / "base_model.tmp").exists()  # the base model was saved whole, then renamed
