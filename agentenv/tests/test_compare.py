"""``agentenv compare``: two agents' episodes on the same tasks, compared task by task."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentenv.cli import main
from agentenv.controller import compare as paired_difference
from agentenv.controller.stats import paired_difference_interval


def episodes(path: Path, solved: dict[str, bool]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"item_id": k, "success": v, "reward": float(v)}) + "\n"
                            for k, v in solved.items()))
    return path


def test_the_difference_and_its_interval_are_over_the_shared_tasks(tmp_path):
    base = episodes(tmp_path / "base.jsonl", {"t1": True, "t2": False, "t3": False, "t4": True, "x": True})
    other = episodes(tmp_path / "other.jsonl", {"t1": True, "t2": True, "t3": True, "t4": False})
    row = paired_difference.paired_difference(
        paired_difference.successes(base), paired_difference.successes(other)
    )
    # per-task differences over t1..t4 (x is not shared): 0, +1, +1, -1 -> 1/4, and Tango's interval
    assert row["tasks"] == 4 and (row["base"], row["other"]) == (0.5, 0.75)
    assert (row["only_base"], row["only_other"]) == (1, 2)
    assert row["difference"] == pytest.approx(0.25)
    assert (row["low"], row["high"]) == paired_difference_interval(1, 2, 4)


@pytest.mark.parametrize(
    "only_base, only_other, n, low, high",
    # Fagerland, Lydersen and Laake (2014), the paired 2x2 table's examples: complete response before and
    # after consolidation therapy (Cavo et al., 2012) and airway hyper-responsiveness (Bentur et al., 2009)
    [(16, 6, 161, -0.1240, -0.0054), (7, 1, 21, -0.5172, -0.0260)],
)
def test_tangos_interval_matches_published_ones(only_base, only_other, n, low, high):
    assert paired_difference_interval(only_base, only_other, n) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))


def test_the_interval_keeps_its_coverage_when_only_one_agent_solves_tasks_the_other_does_not():
    """200 tasks, the other agent alone solving 1% of them and the base none alone: Agresti and Min's interval
    covered the true +1% in 86.5% of draws (never when no task differed), Tango's in over 95%."""
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(2000):
        only_other = int(rng.binomial(200, 0.01))
        low, high = paired_difference_interval(0, only_other, 200)
        covered += low <= 0.01 <= high
    assert covered / 2000 >= 0.94
    assert paired_difference_interval(0, 0, 200)[1] > 0.01
    with pytest.raises(ValueError):
        paired_difference_interval(3, 3, 5)


def test_the_interval_is_not_empty_when_the_agents_agree_and_stays_within_100_points():
    """The plain normal interval (sd / sqrt(n)) was 0 .. 0 when the agents agreed on every task, and went
    past +100% when one solved most of a few tasks the other did not."""
    from agentenv.controller.compare import paired_difference

    same = paired_difference({f"t{i}": i % 2 == 0 for i in range(100)}, {f"t{i}": i % 2 == 0 for i in range(100)})
    assert same["difference"] == 0 and same["low"] < -0.01 and same["high"] > 0.01
    apart = paired_difference({f"t{i}": False for i in range(10)}, {f"t{i}": i < 8 for i in range(10)})
    assert apart["difference"] == pytest.approx(0.8) and 0 < apart["low"] < apart["high"] <= 1.0


def test_a_task_played_twice_or_a_missing_file_is_refused(tmp_path):
    twice = tmp_path / "twice.jsonl"
    twice.write_text(json.dumps({"item_id": "t1", "success": True}) + "\n" +
                     json.dumps({"item_id": "t1", "success": False}) + "\n")
    with pytest.raises(ValueError, match="record 2 plays t1 again; compare takes one episode per task"):
        paired_difference.successes(twice)
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"item_id": "t1", "success": True, "meta": {"sample": 0}}) + "\n" +
                       json.dumps({"item_id": "t1", "success": False, "meta": {"sample": 1}}) + "\n")
    with pytest.raises(ValueError, match=r"several samples per task \(eval --samples\)"):
        paired_difference.successes(samples)
    report = tmp_path / "results.report.json"
    report.write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="results.report.json is not an episodes file: it holds a JSON dict"):
        paired_difference.successes(report)
    text = tmp_path / "text.jsonl"  # bool("false") is True: a success as text is refused, as Trajectory refuses it
    text.write_text(json.dumps({"item_id": "t1", "success": "false"}) + "\n")
    with pytest.raises(ValueError, match="text.jsonl: record 1 has success 'false'; it is true or false"):
        paired_difference.successes(text)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"item_id": "t1", "success": True}) + "\n" + json.dumps({"id": "t2"}) + "\n")
    with pytest.raises(ValueError, match="other.jsonl: record 2 is not an episode: it needs item_id and success"):
        paired_difference.successes(other)
    with pytest.raises(SystemExit, match="^error: .*missing.jsonl: no such episodes file$"):
        main(["compare", str(tmp_path / "missing.jsonl"), str(twice)])


def test_files_of_other_tasks_are_one_line_that_says_what_each_holds(tmp_path):
    maze = episodes(tmp_path / "maze.jsonl", {"maze_1": True, "maze_2": False})
    wordle = episodes(tmp_path / "wordle.jsonl", {"wordle_1": True, "wordle_2": True, "wordle_3": False})
    with pytest.raises(SystemExit, match=r"^error: .*maze.jsonl and .*wordle.jsonl share no task "
                                         r"\(maze: 2 against wordle: 3\): compare two agents' episodes"):
        main(["compare", str(maze), str(wordle)])
    one = episodes(tmp_path / "one.jsonl", {"maze_1": False, "wordle_1": True, "wordle_2": True})
    with pytest.raises(SystemExit, match=r"^error: .*maze.jsonl and .*one.jsonl share 1 task\(s\) \(maze: 1\); a difference's interval"):
        main(["compare", str(maze), str(one)])


def test_tasks_in_one_file_only_and_an_env_of_one_shared_task_are_left_out_and_said(tmp_path, capsys):
    """A partial overlap was compared on the shared tasks without a word (a half-finished run against a
    finished one), and one env sharing a single task failed the whole comparison, every other env with it."""
    base = episodes(tmp_path / "base.jsonl", {**{f"babyai_{i}": i % 2 == 0 for i in range(6)},
                                              **{f"maze_{i}": True for i in range(4)}})
    other = episodes(tmp_path / "other.jsonl", {**{f"babyai_{i}": True for i in range(6)}, "maze_0": True,
                                                "wordle_1": False})
    rows = paired_difference.compare([(base, other)])
    assert [(r["env"], r["tasks"]) for r in rows] == [("babyai", 6)]
    err = capsys.readouterr().err
    assert "base.jsonl: 3 of its 10 tasks are not in the other file (maze: 3); left out" in err
    assert "other.jsonl: 1 of its 8 tasks are not in the other file (wordle: 1); left out" in err
    assert "maze: 1 shared task; a difference's interval needs 2 or more, left out" in err


def test_a_json_list_of_episodes_is_read_as_the_trainers_read_it(tmp_path):
    """AgentGym releases a .json list: it was read as JSONL ('skipped line 36 ... not JSON')."""
    listed = tmp_path / "agentgym.json"
    listed.write_text(json.dumps([{"item_id": f"maze_{i}", "success": i < 2} for i in range(4)], indent=1))
    assert paired_difference.successes(listed) == {"maze_0": True, "maze_1": True, "maze_2": False, "maze_3": False}


def test_a_file_compared_with_itself_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = episodes(tmp_path / "run.jsonl", {"maze_1": True, "maze_2": False})
    with pytest.raises(SystemExit, match=r"^error: run.jsonl is compared with itself: give two agents' episode files$"):
        main(["compare", "run.jsonl", str(run)])


def test_files_named_by_absolute_and_relative_paths_get_short_labels(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bc").mkdir()
    (tmp_path / "eto").mkdir()
    absolute, relative = tmp_path / "bc" / "eval.jsonl", Path("eto") / "eval.jsonl"
    assert paired_difference.short_names([absolute, relative]) == {absolute: "bc", relative: "eto"}


def test_compare_gives_a_row_per_env_and_one_for_all(tmp_path, capsys):
    base = episodes(tmp_path / "a" / "eval.jsonl", {"maze_1": True, "maze_2": False, "babyai_1": False, "babyai_2": True})
    other = episodes(tmp_path / "b" / "eval.jsonl", {"maze_1": True, "maze_2": True, "babyai_1": True, "babyai_2": True})
    out = tmp_path / "rows.json"
    assert main(["compare", str(base), str(other), "--json", str(out)]) == 0
    rows = {row["env"]: row for row in json.loads(out.read_text())}
    assert set(rows) == {"babyai", "maze", "all"}
    assert rows["maze"]["difference"] == pytest.approx(0.5) and rows["all"]["tasks"] == 4
    assert "babyai" in capsys.readouterr().out
    # `--json -`: the rows alone on stdout, for a pipe (it wrote a file named "-")
    assert main(["compare", str(base), str(other), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(out.read_text()) and not Path("-").exists()


def test_a_parquet_shard_or_a_readme_is_refused_not_read_as_json_lines(tmp_path):
    """compare and view read a dataset's parquet shard as JSON lines: 355 lines of 'skipped line N'."""
    from agentenv.viewer.app import load_runs

    shard = tmp_path / "maze-00000-of-00001.parquet"
    shard.write_bytes(b"PAR1\x00\x01\nPAR1")
    readme = tmp_path / "README.md"
    readme.write_text("# a dataset\n")
    with pytest.raises(SystemExit, match=r"parquet is no .json or .jsonl file: give the results files of `agentenv eval`"):
        main(["compare", str(shard), str(readme)])
    with pytest.raises(ValueError, match=r"README.md is no .json or .jsonl file"):
        load_runs([readme])
