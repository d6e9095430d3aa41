"""The evaluator: AgentTraj lines, resuming without duplicates or gaps, the score table, collect."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter as Tally

import httpx
import pytest

from agentenv.controller import commands
from agentenv.controller.agents import Agent
from agentenv.controller.evaluator import EvalTask, collect, evaluate
from agentenv.controller.expert import ExpertAgent
from agentenv.controller.sources import LocalEnv
from agentenv.data.trajectory import read_trajectories, write_json
from agentenv.testing import running_server

from test_controller_support import GuessEnv

LOCAL = {"guess": LocalEnv(GuessEnv)}


def tasks(indices) -> list[EvalTask]:
    return [EvalTask("guess", [], i) for i in indices]


class Counter(Agent):
    """Guesses 0, 1, 2 ...; raises ``error`` on its ``fail_at``-th call; records what it saw."""

    name = "counter"

    def __init__(self, fail_at: int | None = None, error: type[BaseException] = KeyboardInterrupt):
        self.calls, self.fail_at, self.error = 0, fail_at, error
        self.seen: list[tuple[str, int, float | None, int | None]] = []

    def act(self, episodes):
        self.calls += 1
        if self.calls == self.fail_at:
            raise self.error("killed")
        self.seen += [(ep.item_id, ep.sample, ep.temperature, ep.seed) for ep in episodes if ep.rounds == 0]
        return [f"Thought:\nnext\n\nAction:\nguess {ep.rounds}" for ep in episodes]


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_writes_agenttraj_lines_and_a_report(tmp_path):
    out = tmp_path / "run" / "results.jsonl"
    report = evaluate(ExpertAgent(), tasks(range(20)), out, concurrency=4, sources=LOCAL, progress=False)
    records = lines(out)
    assert {r["item_id"] for r in records} == {f"guess_{i}" for i in range(20)} and len(records) == 20
    first = records[0]
    assert first.keys() >= {"item_id", "conversations", "reward", "success", "env", "split", "source", "meta"}
    assert first["conversations"][0] == {"from": "human", "loss": False, "value": GuessEnv.instruction}
    assert first["conversations"][1] == {"from": "gpt", "loss": False, "value": "Ok."}
    assert first["conversations"][-1]["from"] == "gpt" and first["conversations"][-1]["loss"] is True
    assert first["source"] == "expert" and first["meta"]["normalised_score"] == 1.0

    assert (report.row().n, report.row().score, report.row().success) == (20, 1.0, 1.0)
    assert report.row("guess", "even").n == report.row("guess", "odd").n == 10
    saved = json.loads((tmp_path / "run" / "results.report.json").read_text())
    assert saved["rows"][0] == {"env": "guess", "task_type": "all", "n": 20, "score": 1.0, "success": 1.0, "stops": {"done": 20},
                                "tasks": 20, "success_low": pytest.approx(0.8389, abs=1e-4), "success_high": 1.0}
    assert "| guess | odd | 10 | 1.000 | 100.0% |" in (tmp_path / "run" / "results.report.md").read_text()

    meta = json.loads((tmp_path / "run" / "results.meta.json").read_text())
    assert meta["agent"]["name"] == "expert" and meta["temperature"] == 0.0 and meta["seed"] == 0
    assert meta["max_rounds"] == {"guess": GuessEnv.max_rounds}  # None: the env's own limit
    assert meta["envs"]["guess"]["instruction"] == GuessEnv.instruction
    assert meta["runs"][0]["episodes_to_run"] == 20 and meta["runs"][0]["errors"] == 0


def test_the_run_files_are_replaced_whole_or_not_at_all(tmp_path):
    """The meta file, the trainer's stage markers and summaries go through write_json: a write that fails
    part-way keeps the previous document and leaves no temp file behind."""
    path = tmp_path / "results.meta.json"
    write_json(path, {"runs": [1]})
    with pytest.raises(TypeError):
        write_json(path, {"runs": [1, 2], "agent": object()})  # not JSON: fails after the first keys
    assert json.loads(path.read_text()) == {"runs": [1]}
    assert [p.name for p in tmp_path.iterdir()] == ["results.meta.json"]


def test_an_interrupted_run_resumes_without_duplicates_or_gaps(tmp_path):
    out = tmp_path / "results.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(Counter(fail_at=4), tasks(range(30)), out, concurrency=5, sources=LOCAL, progress=False)
    done_first = [r["item_id"] for r in lines(out)]
    assert 0 < len(done_first) < 30
    with out.open("a") as f:  # a line cut short by the kill
        f.write('{"item_id": "guess_29", "conversa')

    second = Counter()
    report = evaluate(second, tasks(range(30)), out, concurrency=5, sources=LOCAL, progress=False)
    ids = [t.item_id for t in read_trajectories(out)]
    assert sorted(ids) == sorted(f"guess_{i}" for i in range(30))  # each once
    assert {item for item, *_ in second.seen} == {f"guess_{i}" for i in range(30)} - set(done_first)
    assert report.row().n == 30
    # the counter solves task i in round i+1: within 6 rounds for hidden numbers 0..5
    assert report.row().success == pytest.approx(sum(i % 16 < 6 for i in range(30)) / 30)
    assert len(json.loads((tmp_path / "results.meta.json").read_text())["runs"]) == 2

    third = Counter()
    evaluate(third, tasks(range(30)), out, sources=LOCAL, progress=False)
    assert third.calls == 0  # nothing left to do


def test_a_line_cut_inside_a_character_does_not_stop_the_resume(tmp_path):
    out = tmp_path / "results.jsonl"
    evaluate(ExpertAgent(), tasks(range(3)), out, sources=LOCAL, progress=False)
    with out.open("ab") as f:  # killed while writing "café": the line ends inside the two bytes of "é"
        f.write('{"item_id": "guess_3", "note": "café"'.encode()[:-2])
    report = evaluate(ExpertAgent(), tasks(range(5)), out, sources=LOCAL, progress=False)
    assert report.row().n == 5
    assert sorted(t.item_id for t in read_trajectories(out)) == [f"guess_{i}" for i in range(5)]


def test_results_must_go_to_a_jsonl_file(tmp_path):
    agent = Counter()
    with pytest.raises(ValueError, match="must end in .jsonl"):
        evaluate(agent, tasks(range(3)), tmp_path / "results.json", sources=LOCAL, progress=False)
    assert agent.calls == 0 and not list(tmp_path.iterdir())
    with pytest.raises(SystemExit):
        cli("eval", "--agent", "expert", "--env", "guess", "--out", str(tmp_path / "results.json"))


def test_results_must_go_to_a_regular_file(tmp_path):
    """A named pipe as --out blocked the run for good, past SIGTERM."""
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "folder.jsonl").mkdir()
    for name, what in (("pipe.jsonl", "no regular file"), ("folder.jsonl", "a folder")):
        with pytest.raises(ValueError, match=f"results file .*{name} is {what}: give the path of a file"):
            evaluate(Counter(), tasks(range(3)), tmp_path / name, sources=LOCAL, progress=False)


def test_the_error_that_stopped_a_run_is_the_one_said(tmp_path, monkeypatch, capsys):
    """Out of file descriptors, the append of an episode failed, then so did the record of the run's end in
    .meta.json, and that second error was the only one shown (naming the wrong file)."""
    import errno

    from agentenv.controller import evaluator

    failed: list[str] = []
    write_json = evaluator.write_json

    def no_descriptor(path, *args):
        failed.append(str(path))
        raise OSError(errno.EMFILE, "Too many open files", str(path))

    monkeypatch.setattr(evaluator, "append_trajectory", no_descriptor)
    monkeypatch.setattr(evaluator, "write_json", lambda path, data: (no_descriptor if failed else write_json)(path, data))
    with pytest.raises(OSError) as raised:
        evaluate(Counter(), tasks(range(3)), tmp_path / "out.jsonl", sources=LOCAL, progress=False)
    assert raised.value.filename == str(tmp_path / "out.jsonl")
    assert "out.meta.json: the run's end is not recorded: Too many open files" in capsys.readouterr().err


def test_a_file_of_an_earlier_version_is_not_claimed_for_settings_it_never_recorded(tmp_path, capsys):
    """A results file written before the agent reported its weights resumed with other weights at the same
    path, and its record then claimed every episode for them."""

    class Weighed(Counter):
        def settings(self):
            return {"name": "counter", "weights": "5a8a7aa0b6665d88"}

    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(Counter(fail_at=3), tasks(range(6)), out, sources=LOCAL, progress=False, concurrency=2)
    held = len(lines(out))
    evaluate(Weighed(), tasks(range(6)), out, sources=LOCAL, progress=False, concurrency=2, print_table=False)
    assert f"its {held} episodes were written before results recorded the agent's weights" in capsys.readouterr().err
    meta = json.loads(out.with_suffix(".meta.json").read_text())
    assert meta["agent"] == {"name": "counter"} and len(lines(out)) == 6


def test_its_own_clients_are_closed_when_the_server_is_unreachable(tmp_path, monkeypatch):
    from agentenv.controller import sources
    from agentenv.protocol import ServerUnreachable

    made = []
    monkeypatch.setattr(sources.RemoteEnv, "close", lambda self: made.append(self) or self.pool.close())
    with running_server([GuessEnv]) as url:
        pass  # the server is gone: nothing listens at url now
    with pytest.raises(ServerUnreachable):
        evaluate(Counter(), [EvalTask("guess", url, 0)], tmp_path / "r.jsonl", progress=False)
    assert len(made) == 1


def test_a_server_that_dies_stops_the_run_and_a_rerun_resumes(tmp_path):
    """Once no server of the env opens a session, the run stops with that error (instead of failing every
    task left, each after the client's retries); what finished is kept, and a rerun finishes the rest."""
    import contextlib

    from agentenv.protocol import ServerUnreachable

    out, todo = tmp_path / "r.jsonl", range(100, 140)
    server = contextlib.ExitStack()
    url = server.enter_context(running_server([GuessEnv]))

    class KillsTheServer(Counter):
        def act(self, episodes):
            if self.calls == 8:
                server.close()  # the server process is gone from here on
            return super().act(episodes)

    with pytest.raises(ServerUnreachable, match="create failed"):
        evaluate(KillsTheServer(), [EvalTask("guess", url, i) for i in todo], out, concurrency=4, progress=False)
    kept = lines(out)
    assert 0 < len(kept) < 12  # 4 at a time, a few rounds each: the 28 or more tasks left were never started
    meta = json.loads((tmp_path / "r.meta.json").read_text())
    assert meta["runs"][-1]["stopped_by"].startswith("ServerUnreachable") and meta["runs"][-1]["errors"] <= 4
    with running_server([GuessEnv]) as url:
        report = evaluate(Counter(), [EvalTask("guess", url, i) for i in todo], out, concurrency=4, progress=False)
    assert sorted(r["item_id"] for r in lines(out)) == [f"guess_{i}" for i in todo] and report.errors == 0
    args = argparse.Namespace(env=["guess"], out=str(out))
    assert commands._servers_hint(args).endswith(f"40 episodes are finished in {out}; rerun the same command to resume")


def test_a_server_with_less_room_than_the_concurrency_is_named(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    with running_server([GuessEnv], max_sessions=3) as url:
        report = evaluate(Counter(), [EvalTask("guess", url, i) for i in range(12)], out, concurrency=8, progress=False,
                          print_table=False)
    assert report.errors == 0 and len(lines(out)) == 12  # the tasks past its room waited: none failed
    assert json.loads((tmp_path / "r.meta.json").read_text())["runs"][-1]["env_capacity"] == {"guess": 3}
    assert "guess: its servers had room for 3 sessions, so 3 of its episodes ran at once (--concurrency 8)" in (
        capsys.readouterr().err
    )


def test_samples_per_task_and_per_episode_seeds(tmp_path):
    out = tmp_path / "samples.jsonl"
    agent = Counter()
    report = evaluate(
        agent, tasks([0, 1]), out, samples_per_task=3, temperature=0.7, seed=5, sources=LOCAL, progress=False
    )
    keys = sorted((t.item_id, t.meta["sample"]) for t in read_trajectories(out))
    assert keys == [(f"guess_{i}", k) for i in (0, 1) for k in range(3)]
    assert report.row().n == 6
    assert {temp for *_, temp, _ in agent.seen} == {0.7}
    seeds = [seed for *_, seed in agent.seen]
    assert len(set(seeds)) == 6  # every episode its own seed ...
    again = Counter()
    evaluate(again, tasks([0, 1]), tmp_path / "again.jsonl", samples_per_task=3, temperature=0.7, seed=5,
             sources=LOCAL, progress=False)
    assert sorted(again.seen) == sorted(agent.seen)  # ... the same in every run


def test_resuming_a_file_of_episodes_played_otherwise_is_refused(tmp_path):
    """Its episodes would be reported under the new run's settings (an earlier run only warned, then
    recorded the new settings as the file's).  The seed of a greedy run changes nothing; the agent's URL (a
    server restarted elsewhere) neither; nor does it matter which tasks the file's episodes were."""
    class Seeded(Counter):  # as the HF and OpenAI agents, which name their seed among their settings
        def __init__(self, seed):
            super().__init__()
            self.seed = seed

        def settings(self):
            return super().settings() | {"seed": self.seed, "url": f"http://127.0.0.1:{8000 + self.seed}/v1"}

    out = tmp_path / "run.jsonl"
    evaluate(Seeded(1), tasks([0]), out, temperature=0.0, seed=1, sources=LOCAL, progress=False)
    evaluate(Seeded(2), tasks([0]), out, temperature=0.0, seed=2, sources=LOCAL, progress=False)
    with pytest.raises(ValueError, match=r"holds 1 finished episodes of a run with temperature 0.0 \(now 0.7\)"):
        evaluate(Seeded(2), tasks([0]), out, temperature=0.7, seed=2, sources=LOCAL, progress=False)
    with pytest.raises(ValueError, match=r"max rounds 6 for guess \(now 3\)"):
        evaluate(Seeded(2), tasks([0]), out, max_rounds=3, sources=LOCAL, progress=False)
    with pytest.raises(ValueError, match="agent"):
        evaluate(ExpertAgent(), tasks([0]), out, sources=LOCAL, progress=False)
    assert len(lines(out)) == 1 and json.loads(out.with_suffix(".meta.json").read_text())["seed"] == 2
    # other tasks, another agent: the file would hold two agents' episodes, recorded as the second's (the
    # check only looked at episodes of the tasks asked for, so this was taken and the file's agent replaced)
    with pytest.raises(ValueError, match=r"holds 1 finished episodes of a run with agent"):
        evaluate(ExpertAgent(), tasks([5]), out, sources=LOCAL, progress=False)
    assert len(lines(out)) == 1 and json.loads(out.with_suffix(".meta.json").read_text())["agent"]["name"] == "counter"
    evaluate(Seeded(2), tasks([5]), out, temperature=0.0, sources=LOCAL, progress=False)  # the same agent: more tasks
    assert len(lines(out)) == 2


def test_episodes_with_no_record_of_their_run_are_not_taken_as_this_agent_s(tmp_path):
    """A results file without its .meta.json (the refusal said to remove both; one removed only that) was
    resumed by any agent, and the expert's episodes reported as that agent's.  A record that is no JSON
    object is named."""
    out = tmp_path / "run.jsonl"
    evaluate(ExpertAgent(), tasks([0, 1]), out, sources=LOCAL, progress=False, print_table=False)
    out.with_suffix(".meta.json").unlink()
    with pytest.raises(ValueError, match=r"run.jsonl holds 2 finished episodes but no run.meta.json"):
        evaluate(Counter(), tasks([0, 1, 2]), out, sources=LOCAL, progress=False)
    assert len(lines(out)) == 2
    out.with_suffix(".meta.json").write_text("{oops")
    with pytest.raises(ValueError, match=r"run.meta.json is not a run's record \(Expecting"):
        evaluate(Counter(), tasks([0]), out, sources=LOCAL, progress=False)
    out.with_suffix(".meta.json").write_text("[]")
    with pytest.raises(ValueError, match=r"run.meta.json is not a run's record \(a JSON list, not an object\)"):
        evaluate(Counter(), tasks([0]), out, sources=LOCAL, progress=False)


def test_a_second_run_into_the_same_file_at_once_is_refused(tmp_path):
    """Two runs at once into one file wrote 587 lines for 300 tasks and lost the first run's end record."""
    import threading

    out, started, go_on = tmp_path / "run.jsonl", threading.Event(), threading.Event()

    class Waiting(Counter):
        def act(self, episodes):
            started.set()
            go_on.wait(30)
            return super().act(episodes)

    first = threading.Thread(
        target=evaluate, args=(Waiting(), tasks([0, 1]), out), kwargs={"sources": LOCAL, "progress": False}
    )
    first.start()
    try:
        assert started.wait(30)
        with pytest.raises(ValueError, match=r"run.jsonl is being written by another run: wait for it to end"):
            evaluate(Counter(), tasks([0, 1]), out, sources=LOCAL, progress=False)
    finally:
        go_on.set()
        first.join(30)
    assert sorted(line["item_id"] for line in lines(out)) == ["guess_0", "guess_1"]
    (run,) = json.loads(out.with_suffix(".meta.json").read_text())["runs"]
    assert run["episodes_finished"] == 2
    evaluate(Counter(), tasks([0, 1]), out, sources=LOCAL, progress=False)  # once it ended, the file is free


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_run_whose_results_file_is_deleted_or_replaced_stops(tmp_path, how):
    """The lock is on the file, not its name: deleted while its run wrote it, a second run took the free name
    and the two played the same tasks (288 duplicates in an audit)."""
    out = tmp_path / "run.jsonl"

    class Removing(Counter):
        def act(self, episodes):
            if out.exists() and lines(out) and not (tmp_path / "gone").exists():
                (tmp_path / "gone").touch()
                if how == "deleted":
                    out.unlink()
                else:
                    (tmp_path / "other.jsonl").write_text("")
                    os.replace(tmp_path / "other.jsonl", out)
            return super().act(episodes)

    with pytest.raises(ValueError, match=r"run.jsonl was deleted or replaced while this run wrote it \(1 episodes\)"):
        evaluate(Removing(), tasks(range(6)), out, concurrency=1, sources=LOCAL, progress=False)
    assert not out.exists() or out.read_text() == ""  # nothing written into what took its place
    (run,) = json.loads(out.with_suffix(".meta.json").read_text())["runs"]
    assert "ended" not in run  # the record may be another run's by then: left as it was


def test_a_meta_file_removed_while_its_run_writes_is_written_again(tmp_path, capsys):
    """Removed mid-run, the run's end crashed on reading it and the report was never written."""
    out = tmp_path / "run.jsonl"
    evaluate(Counter(), tasks([0]), out, sources=LOCAL, progress=False, print_table=False)

    class Removing(Counter):
        def act(self, episodes):
            out.with_suffix(".meta.json").unlink(missing_ok=True)
            return super().act(episodes)

    report = evaluate(Removing(), tasks([0, 1, 2]), out, sources=LOCAL, progress=False, print_table=False)
    assert report.row().n == 3
    meta = json.loads(out.with_suffix(".meta.json").read_text())
    assert meta["agent"]["name"] == "counter" and [r["episodes_finished"] for r in meta["runs"]] == [1, 2]
    assert "run.meta.json was removed while this run wrote its results" in capsys.readouterr().err


def test_a_results_file_is_made_as_any_file_is(tmp_path):
    """Made by the lock, it was 0644 whatever the umask (a group's shared folder: no colleague could resume)."""
    old = os.umask(0o002)
    try:
        evaluate(Counter(), tasks([0]), tmp_path / "run.jsonl", sources=LOCAL, progress=False, print_table=False)
    finally:
        os.umask(old)
    assert (tmp_path / "run.jsonl").stat().st_mode & 0o777 == 0o664


def test_a_run_of_fewer_envs_keeps_the_others_settings_for_the_next_check(tmp_path):
    """guess and other played, then guess alone: other's round limit is still recorded, so a later run of
    other with another limit is refused (it replaced the file's limits with guess's only, and passed)."""
    class OtherEnv(GuessEnv):
        name = "other"

    sources = {"guess": LocalEnv(GuessEnv), "other": LocalEnv(OtherEnv)}
    out = tmp_path / "run.jsonl"
    both = [EvalTask("guess", [], 0), EvalTask("other", [], 0)]
    evaluate(ExpertAgent(), both, out, sources=sources, progress=False)
    evaluate(ExpertAgent(), both[:1], out, sources={"guess": sources["guess"]}, progress=False)
    with pytest.raises(ValueError, match=r"max rounds 6 for other \(now 2\)"):
        evaluate(ExpertAgent(), both[1:], out, max_rounds=2, sources={"other": sources["other"]}, progress=False)
    assert set(json.loads(out.with_suffix(".meta.json").read_text())["envs"]) == {"guess", "other"}


def test_a_run_logged_to_a_file_writes_a_line_every_tenth_of_the_run(tmp_path, capsys):
    """stderr is no terminal here, as in a log: lines, not a bar that only shows up at the end."""
    evaluate(ExpertAgent(), tasks(range(20)), tmp_path / "r.jsonl", sources=LOCAL, print_table=False)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("eval expert ")]
    assert [line.split()[2] for line in lines] == [f"{n}/20" for n in range(2, 21, 2)]
    assert "success 100%" in lines[-1]
    collect("guess", [], range(20), tmp_path / "c.jsonl", sources=LOCAL, print_table=False)  # says what it does
    assert sum(line.startswith("collect expert ") for line in capsys.readouterr().err.splitlines()) == 10


def test_env_errors_are_counted_not_written(tmp_path):
    class Crashy(GuessEnv):
        def step(self, action):
            if self.secret == 1:
                raise RuntimeError("boom")
            return super().step(action)

    out = tmp_path / "r.jsonl"
    report = evaluate(ExpertAgent(), tasks(range(4)), out, sources={"guess": LocalEnv(Crashy)}, progress=False)
    assert report.errors == 1 and report.row().n == 3
    assert "guess_1" not in {r["item_id"] for r in lines(out)}


def test_names_and_errors_print_as_written(tmp_path, capsys):
    """Printed through rich, '[agentenv]' before an env's error was taken for markup and dropped, an error
    holding '[/x]' ended the run (MarkupError), and a model named llama got an emoji in the table's title."""
    class Bracketed(GuessEnv):
        def step(self, action):
            if self.secret == 1:
                raise RuntimeError("no such tag [/x]")
            return super().step(action)

    agent = ExpertAgent()
    agent.name = "openai:llama"
    report = evaluate(agent, tasks(range(3)), tmp_path / "r [/y].jsonl", sources={"guess": LocalEnv(Bracketed)})
    assert report.errors == 1
    printed = capsys.readouterr()
    assert "[agentenv] guess_1 (sample 0): step: EnvCrashed: [500] guess env crashed: RuntimeError: no such tag [/x]; session" in printed.err
    assert "openai:llama:" in printed.out and "[/y].jsonl" in printed.out and "\U0001f999" not in printed.out


def test_scores_are_normalised_by_reward_range(tmp_path):
    class Percent(GuessEnv):
        name = "percent"
        reward_range = (0.0, 100.0)
        success_score = 100.0

        def step(self, action):
            result = super().step(action)
            result.score = 100.0 if result.done else 40.0
            return result

    out = tmp_path / "p.jsonl"
    report = evaluate(
        Counter(), [EvalTask("percent", [], i) for i in (0, 1, 9)], out, max_rounds=2,
        sources={"percent": LocalEnv(Percent)}, progress=False,
    )
    # hidden 0 and 1 are found within 2 rounds (score 100); 9 is not (score 40)
    assert report.row("percent").score == pytest.approx((1 + 1 + 0.4) / 3)
    assert report.row("percent").success == pytest.approx(2 / 3)
    assert sorted(t.reward for t in read_trajectories(out)) == [40.0, 100.0, 100.0]


def test_collect_writes_expert_trajectories(tmp_path):
    out = tmp_path / "expert.jsonl"
    report = collect("guess", [], range(8), out, concurrency=3, sources=LOCAL, progress=False)
    trajectories = list(read_trajectories(out))
    assert len(trajectories) == 8 and all(t.source == "expert" and t.success for t in trajectories)
    assert report.row().success == 1.0


def test_a_results_file_under_a_file_is_refused_naming_it(tmp_path):
    """mkdir said "File exists", naming the file only."""
    (tmp_path / "m3.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"results file .*m3.jsonl/x.jsonl: .*m3.jsonl is a file, not a folder"):
        evaluate(ExpertAgent(), tasks(range(1)), tmp_path / "m3.jsonl" / "x.jsonl", sources=LOCAL, progress=False)


def test_an_interrupted_run_with_several_samples_resumes_exactly(tmp_path, monkeypatch):
    out = tmp_path / "samples.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(Counter(fail_at=3), tasks(range(6)), out, samples_per_task=3, concurrency=4, sources=LOCAL,
                 progress=False)
    first = Tally((t.item_id, t.meta["sample"]) for t in read_trajectories(out))
    assert 0 < len(first) < 18 and max(first.values()) == 1

    second = Counter()
    evaluate(second, tasks(range(6)), out, samples_per_task=3, concurrency=4, sources=LOCAL, progress=False)
    keys = Tally((t.item_id, t.meta["sample"]) for t in read_trajectories(out))
    assert keys == Tally((f"guess_{i}", k) for i in range(6) for k in range(3))  # each exactly once
    assert {(item, k) for item, k, *_ in second.seen}.isdisjoint(first)  # finished samples were not rerun

    # a rerun reads the file once: its report is of what it read and what it wrote (a second read parsed
    # every conversation again, 4.4 s of a 6.1 s resume at 19,900 episodes)
    reads = []
    monkeypatch.setattr("agentenv.controller.evaluator.read_trajectories",
                        lambda path: reads.append(path) or read_trajectories(path))
    report = evaluate(Counter(), tasks(range(7)), out, samples_per_task=3, concurrency=4, sources=LOCAL, progress=False)
    assert len(reads) == 1 and report.row().n == 21 and report.row().tasks == 7


def test_a_killed_process_resumes_without_duplicates_or_gaps(tmp_path):
    """SIGKILL an evaluation running in another process over HTTP, then finish it here."""

    class SlowGuess(GuessEnv):
        def step(self, action):
            time.sleep(0.02)
            return super().step(action)

    out = tmp_path / "killed.jsonl"
    script = (
        "import sys\n"
        "from agentenv.controller.evaluator import EvalTask, evaluate\n"
        "from agentenv.controller.expert import ExpertAgent\n"
        "url, out = sys.argv[1], sys.argv[2]\n"
        "evaluate(ExpertAgent(), [EvalTask('guess', url, i) for i in range(60)], out, concurrency=2, progress=False)\n"
    )
    with running_server([SlowGuess]) as url:
        proc = subprocess.Popen([sys.executable, "-c", script, url, str(out)])
        try:
            deadline = time.monotonic() + 60
            while not (out.exists() and len(out.read_text().splitlines()) >= 5):
                assert proc.poll() is None and time.monotonic() < deadline, "the evaluation should still be running"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
        before = [t.item_id for t in read_trajectories(out)]
        assert 5 <= len(before) < 60

        report = evaluate(ExpertAgent(), [EvalTask("guess", url, i) for i in range(60)], out, concurrency=8,
                          progress=False)
        # the killed run never closed its sessions; the resumed run closed all of its own
        assert httpx.get(f"{url}/guess/info").json()["live_sessions"] == 2
    ids = [t.item_id for t in read_trajectories(out)]
    assert sorted(ids) == sorted(f"guess_{i}" for i in range(60))
    assert report.row().n == 60 and report.row().success == 1.0


def test_evaluates_over_http(tmp_path):
    with running_server([GuessEnv]) as url:
        report = evaluate(Counter(), [EvalTask("guess", url, i) for i in range(100, 110)], tmp_path / "h.jsonl",
                          concurrency=4, progress=False)
        assert httpx.get(f"{url}/guess/info").json()["live_sessions"] == 0
    trajectories = list(read_trajectories(tmp_path / "h.jsonl"))
    assert len(trajectories) == 10 and {t.split for t in trajectories} == {"test"}
    assert report.row().success == pytest.approx(2 / 10)  # hidden 4..13: the counter, guessing 0..5, finds 4, 5
    meta = json.loads((tmp_path / "h.meta.json").read_text())
    assert meta["envs"]["guess"]["base_urls"] == [url]


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="agentenv")
    commands.add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_eval_and_collect_over_http(tmp_path, capsys):
    out = tmp_path / "eval.jsonl"
    with running_server([GuessEnv]) as url:
        argv = ["eval", "--agent", "expert", "--env", "guess", "--url", url, "--split", "test", "--limit", "12",
                "--concurrency", "4", "--max-rounds", "3", "--temperature", "0.3", "--seed", "7", "--out", str(out)]
        assert cli(*argv) == 0
        table = capsys.readouterr().out
        assert "guess" in table and "success" in table
        records = lines(out)
        assert sorted(r["item_id"] for r in records) == [f"guess_{i}" for i in range(100, 112)]
        assert all(len(r["conversations"]) <= 2 + 2 * 3 for r in records)  # at most 3 rounds
        meta = json.loads((tmp_path / "eval.meta.json").read_text())
        assert (meta["temperature"], meta["seed"], meta["max_rounds"]) == (0.3, 7, {"guess": 3})
        assert cli(*argv) == 0 and len(lines(out)) == 12  # a rerun resumes: nothing left to do

        expert = tmp_path / "expert.jsonl"
        assert cli("collect", "--env", "guess", "--url", f"guess={url}", "--indices", "0:8", "--out", str(expert),
                   "--no-progress") == 0
        assert [t.source for t in read_trajectories(expert)] == ["expert"] * 8
        assert httpx.get(f"{url}/guess/info").json()["live_sessions"] == 0

    with pytest.raises(SystemExit, match="no split 'dev'"):
        with running_server([GuessEnv]) as url:
            cli("eval", "--agent", "expert", "--env", "guess", "--url", url, "--split", "dev", "--out", str(out))


def test_cli_local_runs_envs_in_process(tmp_path, monkeypatch):
    import agentenv.registry as registry

    monkeypatch.setattr(registry, "env_class", lambda env: {"guess": GuessEnv}[env])
    out = tmp_path / "local.jsonl"
    code = cli("collect", "--env", "guess", "--local", "--split", "train", "--limit", "5", "--out", str(out),
               "--no-progress")
    assert code == 0 and len(lines(out)) == 5
    assert commands.parse_indices("3,7,9") == [3, 7, 9] and commands.parse_indices("0:10:5") == [0, 5]
    assert commands.parse_indices("3:90:40, 4:90:40,7") == [3, 43, 83, 4, 44, 84, 7]


def test_max_rounds_0_is_the_envs_own_as_in_the_trainers(tmp_path, monkeypatch):
    """A trainer's --max-rounds 0 means each env's own limit; eval, collect and bench refused 0."""
    import agentenv.registry as registry

    monkeypatch.setattr(registry, "env_class", lambda env: {"guess": GuessEnv}[env])
    out = tmp_path / "zero.jsonl"
    argv = ["eval", "--agent", "expert", "--env", "guess", "--local", "--limit", "3", "--out", str(out), "--no-progress"]
    assert cli(*argv, "--max-rounds", "0") == 0
    assert json.loads((tmp_path / "zero.meta.json").read_text())["max_rounds"] == {"guess": GuessEnv.max_rounds}
    assert cli(*argv) == 0 and len(lines(out)) == 3  # the same settings: resumed, nothing left to do
    assert cli("collect", "--env", "guess", "--local", "--limit", "2", "--max-rounds", "0",
               "--out", str(tmp_path / "c.jsonl"), "--no-progress") == 0


def test_a_task_the_env_does_not_serve_is_refused_before_anything_plays(tmp_path):
    """evaluate() from Python played index 5000 (an env error every run, the report empty); the CLI refused
    it. A numpy index is an index (the JSON encoder refused it over HTTP, an env error too)."""
    numpy = pytest.importorskip("numpy")
    out = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="guess: task index 5000 is outside every guess split"):
        evaluate(ExpertAgent(), tasks([101, 5000]), out, sources=LOCAL, progress=False)
    assert not lines(out)
    report = evaluate(ExpertAgent(), [EvalTask("guess", [], numpy.int64(101))], out, sources=LOCAL, progress=False)
    assert report.row().n == 1 and lines(out)[0]["item_id"] == "guess_101"
    with pytest.raises(TypeError, match="a task index is an integer"):
        EvalTask("guess", [], 1.5)


def test_a_report_of_fewer_tasks_than_its_file_holds_says_so(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    evaluate(ExpertAgent(), tasks([101, 102, 103]), out, sources=LOCAL, progress=False)
    capsys.readouterr()
    report = evaluate(ExpertAgent(), tasks([101]), out, sources=LOCAL, progress=False)
    assert report.row().n == 1
    assert "r.jsonl also holds 2 episodes this run did not ask for (other tasks or samples: earlier runs'); its " \
           "report is of this run's 1" in capsys.readouterr().err


def test_an_agent_that_returns_no_list_of_str_is_named(tmp_path):
    """act returning [None] failed in the rollout with AttributeError: 'NoneType' object has no attribute
    'encode'; a generator with TypeError: object of type 'generator' has no len()."""

    class Sloppy(Agent):
        name = "sloppy"

        def __init__(self, replies):
            self.replies = replies

        def act(self, episodes):
            return self.replies(episodes)

    for replies, got in [(lambda eps: [None for _ in eps], "a list holding NoneType"),
                         (lambda eps: (f"guess {ep.rounds}" for ep in eps), "generator")]:
        with pytest.raises(TypeError, match=f"sloppy's act returned {got}: it returns a list of str"):
            evaluate(Sloppy(replies), tasks([101]), tmp_path / "s.jsonl", sources=LOCAL, progress=False)


def test_the_hint_for_a_server_that_does_not_answer_names_that_envs_server():
    """With babyai down, a run of maze and babyai said `agentenv up babyai lmrlgym`."""
    from agentenv.protocol import ServerUnreachable

    @commands.one_line_errors()
    def run(args):
        raise ServerUnreachable("POST http://127.0.0.1:9/babyai/create failed", "babyai")

    with pytest.raises(SystemExit, match=r"start it with `agentenv up babyai`, give its --url"):
        run(argparse.Namespace(env=["maze", "babyai"], out=None))


def test_a_task_given_twice_is_played_once_and_an_episodes_last_line_stands_for_it(tmp_path):
    """`--indices 0:10,5:15` gives tasks twice; a resumed run (or a mended file) appends an episode's newer line."""
    out = tmp_path / "results.jsonl"
    agent = Counter()
    first = evaluate(agent, tasks([3, 3, 4]), out, sources=LOCAL, progress=False, print_table=False)
    assert sorted(r["item_id"] for r in lines(out)) == ["guess_3", "guess_4"] and first.row().n == 2
    assert [item for item, *_ in agent.seen].count("guess_3") == 1

    older = lines(out)[0]
    newer = older | {"success": not older["success"], "reward": 1.0 - older["reward"]}
    with out.open("a") as file:
        file.write(json.dumps(newer) + "\n")
    again = Counter()
    report = evaluate(again, tasks([3, 4]), out, sources=LOCAL, progress=False, print_table=False)
    assert again.seen == []  # nothing left to play
    flipped = 1 if newer["success"] else -1
    assert report.row().n == 2 and report.row().success == first.row().success + flipped / 2
