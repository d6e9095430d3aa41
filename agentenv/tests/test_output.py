"""What a person sees while a run goes and when it ends: one-line mistakes, a bar that keeps to its line,
tables whose figures are never cut, and a closing line that says where the results are."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from agentenv.cli import main
from agentenv.controller.agents import Agent
from agentenv.controller.progress import LiveProgress
from agentenv.controller.report import EvalReport, ResultRow
from agentenv.controller.rollout import Rollout, RolloutTask
from agentenv.controller.sources import LocalEnv

from test_controller_support import GuessEnv


def drawn(renderable, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


# --- the command line -----------------------------------------------------------------------------------


def test_a_usage_mistake_is_one_line_saying_where_help_is(capsys):
    """argparse printed the whole usage first: a dozen lines before the one that mattered."""
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--agent", "expert", "--env", "guess"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == ("agentenv eval: error: the following arguments are required: --out "
                                       "(see agentenv eval --help)\n")


def test_an_unknown_option_is_refused_by_its_command_with_a_guess(capsys):
    """It was refused by `agentenv` itself, naming neither `train bc` nor the option meant."""
    with pytest.raises(SystemExit) as exit_:
        main(["train", "bc", "--modle", "x"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == ("agentenv train bc: error: unrecognized arguments: --modle x; did you mean "
                                       "--model? (see agentenv train bc --help)\n")


def test_a_server_a_launcher_stops_while_it_starts_leaves_the_word_to_the_launcher(monkeypatch, capsys):
    """bench interrupted while its servers started said "interrupted" twice: its own and its server's."""
    import agentenv.cli
    from agentenv.processes import PARENT_PID_VAR

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(agentenv.cli, "parse_command_line", interrupted)
    assert main(["list"]) == 130 and capsys.readouterr().err == "interrupted\n"
    monkeypatch.setenv(PARENT_PID_VAR, str(os.getpid()))
    assert main(["list"]) == 130 and capsys.readouterr().err == ""


def test_an_option_is_not_guessed_from_the_dashes_alone(capsys):
    """`train grpo --data` was "likely" --beta: the two dashes every option shares made them alike."""
    with pytest.raises(SystemExit):
        main(["train", "grpo", "--data", "x.jsonl"])
    assert "did you mean" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "grpo", "--num-epoks", "2"])
    assert "did you mean --num-epochs?" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["eval"], ["train", "evol"], ["best-of-n"]])
def test_help_shows_the_flag_not_its_deprecated_spelling(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    printed = capsys.readouterr().out
    assert "--env ENV [ENV ...]" in printed and "--envs" not in printed and "--urls" not in printed


def test_debug_may_follow_the_command_as_the_errors_hint_reads():
    """`agentenv eval ... --debug` was refused as an unknown argument of eval."""
    from agentenv.cli import build_parser, parse_command_line

    assert parse_command_line(build_parser(), ["list", "--debug"]).debug is True
    assert parse_command_line(build_parser(), ["--debug", "list"]).debug is True
    assert parse_command_line(build_parser(), ["list"]).debug is False


def test_an_interrupted_training_run_says_how_to_resume(tmp_path, monkeypatch, capsys):
    """A Ctrl-C printed "interrupted" alone (eval and bench say what to do)."""
    import agentenv.trainer.bc as bc

    def interrupted(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(bc, "train_bc", interrupted)
    out = tmp_path / "bc"
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    assert main(["train", "bc", "--model", str(model), "--data", "d.jsonl", "--output-dir", str(out)]) == 130
    assert capsys.readouterr().err == f"\ninterrupted: rerun the same command to resume from what {out} keeps\n"


def test_a_training_run_ends_saying_where_its_model_and_curve_are(tmp_path, monkeypatch, capsys):
    """BC, DPO and GRPO ended on their last step's line: the model folder and the curve went unsaid."""
    import agentenv.trainer.bc as bc

    out = tmp_path / "bc"

    def trained(cfg):
        out.mkdir()
        (out / "train_log.jsonl").write_text(json.dumps({"step": 3, "loss": 1.23456, "lr": 1e-5}) + "\n")
        (out / "loss_curve.png").write_bytes(b"\x89PNG")
        return out

    monkeypatch.setattr(bc, "train_bc", trained)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    assert main(["train", "bc", "--model", str(model), "--data", "d.jsonl", "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out == f"model: {out}; curve: {out / 'loss_curve.png'} (step 3: loss 1.235)\n"


def test_dpos_curve_shows_how_often_the_chosen_side_wins(tmp_path):
    """DPO's curve drew its loss and learning rate only; its log's reward accuracy and margin, the figures
    that say whether the preference is learnt, were in no picture."""
    import struct

    from agentenv.trainer.engine import plot_loss

    def height(png):
        return struct.unpack(">I", png.read_bytes()[20:24])[0]  # IHDR: width, then height

    (tmp_path / "bc").mkdir(), (tmp_path / "dpo").mkdir()
    bc = [{"step": s, "loss": 2.0 / s, "lr": 1e-5} for s in range(1, 6)]
    dpo = [{**line, "reward_accuracy": s / 5, "reward_margin": 0.1 * s} for s, line in enumerate(bc, 1)]
    assert height(plot_loss(bc, tmp_path / "bc" / "loss_curve.png")) == 350
    assert height(plot_loss(dpo, tmp_path / "dpo" / "loss_curve.png")) == 550  # a second panel below the loss


def test_other_libraries_bars_are_off_in_a_log_and_in_a_launchers_other_processes(monkeypatch):
    from agentenv.processes import quiet_other_progress_bars

    names = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
    for name in (*names, "RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.stderr", io.StringIO())  # a log file
    quiet_other_progress_bars()
    assert all(os.environ[name] == "1" for name in names)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stderr", Terminal())
    for name in names:
        monkeypatch.delenv(name)
    quiet_other_progress_bars()
    assert not any(name in os.environ for name in names)  # a person watches: their bars stay
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")  # the user's choice wins
    quiet_other_progress_bars()
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "0" and os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] == "1"


# --- the bar --------------------------------------------------------------------------------------------


class Idle(Agent):
    name = "idle"

    def act(self, episodes):
        return []


class Counts:
    live_episodes, rounds_played = 12, 40


def test_the_bar_keeps_to_one_line_at_80_columns():
    """At 80 to 120 columns the status wrapped onto two or three lines at every redraw, and the bar itself
    was drawn zero-wide; a model's path made the title as long as the line."""
    bar = LiveProgress("iter 0 eval hf:/tmp/some/long/run/folder/iter_0/model", total=12, done=3, successes=3,
                       rollout=Counts(), agent=Idle(), enabled=False)
    for width in (80, 120):
        lines = drawn(bar._progress.get_renderable(), width).splitlines()
        assert len(lines) == 1, lines
        assert "iter 0 eval hf:…/iter_0/model" in lines[0] and "━" in lines[0] and "3/12" in lines[0]


def test_the_bar_says_when_the_env_servers_have_not_answered_for_a_while():
    """A server that stopped answering held a round for minutes with nothing on the bar to say so."""
    import time

    rollout = Counts()
    bar = LiveProgress("eval expert", total=12, done=3, successes=3, rollout=rollout, agent=Idle(), enabled=False)
    rollout.env_calls_since = time.monotonic() - 2  # a round's steps sent 2 s ago: nothing to say yet
    assert "silent" not in bar.status()
    rollout.env_calls_since = time.monotonic() - 42
    assert bar.status().startswith("env silent 42 s · success 100%")
    assert "env silent 42 s" in drawn(bar._progress.get_renderable(), 80)


def test_long_names_in_a_bar_title_keep_their_last_parts():
    from agentenv.controller.progress import short_title

    assert short_title("eval expert") == "eval expert"
    assert short_title("eval hf:runs/x") == "eval hf:runs/x"
    assert short_title("iter 2 eval hf:/data/runs/evol/iter_2/model") == "iter 2 eval hf:…/iter_2/model"
    assert short_title("eval openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1") == \
        "eval openai:Qwen/Qwen2.5-7B-Instruct"


def test_no_episode_counts_as_running_once_it_is_written():
    """The progress line of the last episode said "1 running": the count was updated after the episode was
    handed on."""
    seen = []

    class Guesser(Agent):
        name = "guesser"

        def act(self, episodes):
            return [f"Action:\nguess {ep.rounds}" for ep in episodes]

    rollout = Rollout(Guesser(), {"guess": LocalEnv(GuessEnv)}, concurrency=4)
    rollout.run([RolloutTask("guess", i) for i in range(6)], on_finish=lambda ep: seen.append(rollout.live_episodes))
    assert len(seen) == 6 and seen[-1] == 0
    assert all(n <= 6 - i - 1 for i, n in enumerate(seen))  # never more running than episodes left


# --- the tables -----------------------------------------------------------------------------------------


def test_a_narrow_terminal_folds_figures_and_never_cuts_them():
    """bench showed `100…` and compare `0.…` in every cell at 60 columns."""
    from agentenv.bench import BenchRow, print_table
    from agentenv.controller.compare import print_table as print_comparison

    report = EvalReport([ResultRow("babyai", "goto", 10, 1.0, 1.0), ResultRow("all", "all", 10, 1.0, 1.0)])
    assert "…" not in drawn(report.rich_table("a title"), 60)
    row = BenchRow("babyai", 200, 0.795, 0.734, 0.845, 0.812, 0.76, 0.86, 9.5, 1234, 1.25)
    console = Console(file=io.StringIO(), width=60, force_terminal=True, color_system=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("agentenv.controller.report.table_console", lambda file=None: console)
        patch.setattr("agentenv.controller.compare.table_console", lambda file=None: console)
        print_table([row], "expert on suite v1")
        print_comparison([{"base_file": "a.jsonl", "other_file": "b.jsonl", "env": "babyai", "tasks": 200, "base": 0.77,
                           "other": 0.795, "only_base": 3, "only_other": 8, "difference": 0.025, "low": -0.01,
                           "high": 0.06}])
    printed = console.file.getvalue()
    assert printed.count("┏") == 2 and "…" not in printed  # every cell whole, if folded over lines


def test_the_eval_table_gives_each_success_rate_its_interval(tmp_path, capsys):
    from agentenv.controller.evaluator import EvalTask, evaluate
    from agentenv.controller.expert import ExpertAgent

    out = tmp_path / "results.jsonl"
    with ExpertAgent() as agent:
        evaluate(agent, [EvalTask("guess", [], i) for i in range(10)], out, sources={"guess": LocalEnv(GuessEnv)},
                 progress=False)
    printed = capsys.readouterr().out
    # 10 of 10: Wilson's interval, as bench gives it
    assert "| 10 | 1.000 | 100.0% | 72.2% – 100.0% |" in (tmp_path / "results.report.md").read_text()
    assert "72.2% – 100.0%" in printed
    assert printed.endswith(f"report: {tmp_path / 'results.report.md'} (and results.report.json)\n")


def test_with_several_samples_per_task_the_interval_is_over_the_tasks():
    """10 tasks x 3 samples, 8 tasks solved every time: 24 of 30 episodes, but the interval is that of 8 of 10
    tasks (it was Wilson's of 24 of 30, 62.7% - 90.5%: in simulation it covered 80% at 12 tasks x 3)."""
    from agentenv.controller.report import build_report
    from agentenv.controller.stats import wilson
    from agentenv.data.trajectory import Trajectory

    episodes = [Trajectory(item_id=f"maze_{i}", conversations=[], reward=float(i < 8), success=i < 8, env="maze",
                           meta={"sample": k}) for i in range(10) for k in range(3)]
    row = build_report(episodes, {"maze": (0.0, 1.0)}).row()
    assert (row.n, row.tasks, row.success) == (30, 10, 0.8)
    low, high = wilson(8, 10)
    assert row.interval_text() == f"{low:.1%} – {high:.1%}" == "49.0% – 94.3%"
    assert "| maze | all | 30 (10 tasks) | 0.800 | 80.0% | 49.0% – 94.3% |" in build_report(episodes, {}).markdown()
    # a task with more samples than another weighs the same: the rate is the mean of the tasks' rates
    uneven = build_report(episodes[:3] + episodes[-1:], {}).row()
    assert (uneven.n, uneven.tasks, uneven.success) == (4, 2, 0.5)


def test_best_of_n_prints_one_table_not_markdown(tmp_path, capsys):
    """It printed the samples' table, then its own as raw Markdown (`| env | tasks |...|---|`)."""
    from agentenv.trainer.best_of_n import BestOfNConfig, run_best_of_n

    out = tmp_path / "bon.jsonl"
    run_best_of_n(BestOfNConfig(agent="expert", out=str(out), envs=["guess"], n=2, limit=3),
                  sources={"guess": LocalEnv(GuessEnv)})
    printed = capsys.readouterr().out
    assert "|---" not in printed and "not done: ended by" not in printed
    assert "best of 2 samples per task" in printed and "best-of-2 success" in printed


def test_envs_keep_what_they_build_once_under_the_users_cache_folder(monkeypatch, tmp_path):
    """WebShop's search index went to ~/.cache whatever XDG_CACHE_HOME said (SQLGym and ALFWorld honoured it)."""
    from agentenv.env import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir("webshop") == tmp_path / "xdg" / "agentenv" / "webshop"
    monkeypatch.setenv("AGENTENV_X_CACHE", str(tmp_path / "mine"))
    assert cache_dir("x", "AGENTENV_X_CACHE") == tmp_path / "mine"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir("x") == Path.home() / ".cache" / "agentenv" / "x"
    webshop = pytest.importorskip("agentenv_webshop.shop")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AGENTENV_WEBSHOP_CACHE", raising=False)
    assert webshop.ShopConfig.from_env().cache_dir == webshop.ShopConfig().cache_dir == tmp_path / "xdg" / "agentenv" / "webshop"


def test_under_a_launcher_an_error_says_which_process_met_it(tmp_path, monkeypatch):
    """Every process of a torchrun printed its error alike: the log did not say which met it (a server may
    hang for one process's episodes only)."""
    argv = ["train", "bc", "--model", str(tmp_path / "nowhere"), "--data", "x.jsonl", "--output-dir", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as first:
        main(argv)
    assert isinstance(first.value.code, str) and "does not exist" in first.value.code
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(SystemExit) as other:
        main(argv)
    assert other.value.code == f"[rank 1] {first.value.code}"
