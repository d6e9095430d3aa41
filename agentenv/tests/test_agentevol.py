"""AgentEvol, ETO, RFT and Best-of-N: the pure filter / merge / pairing / aggregation rules, and whole
iterations end to end on a toy environment defined here, run in-process with the tiny random Llama."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import pytest

from agentenv.data.trajectory import Trajectory, content_key, read_trajectories, write_trajectories
from agentenv.env import Environment, ExpertAction, StepResult
from agentenv.trainer.agentevol import (
    AgentEvol,
    AgentEvolConfig,
    merge_trajectories,
    run_agentevol,
    select_explored,
)
from agentenv.trainer.best_of_n import best_of_n
from agentenv.trainer.best_of_n import markdown as best_of_n_markdown
from agentenv.trainer.eto import ETO, ETOConfig, build_pairs, run_eto
from agentenv.trainer.rft import RFT, RFTConfig
from agentenv.trainer.staged import tasks_with_data

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# --- a toy environment (the trainer core never imports an env package) ----------------------------------

WINNING_ACTION = "press the blue button 7"


class ToyEnv(Environment):
    """Even tasks are won by any action; odd ones only by the expert's action (which a random model never
    writes).  One round is enough; an episode ends after two."""

    name = "toy"
    splits = {"train": range(0, 6), "test": range(100, 104)}
    max_rounds = 2
    instruction = "You are in a toy world. Answer with Thought: and Action: lines."
    blocking = False

    def reset(self, data_idx: int) -> str:
        self.idx, self.rounds, self.score = data_idx, 0, 0.0
        return f"Task {data_idx}. Available actions: {WINNING_ACTION}, wait"

    def step(self, action: str) -> StepResult:
        self.rounds += 1
        won = self.idx % 2 == 0 or action.strip() == WINNING_ACTION
        self.score = 1.0 if won else 0.0
        observation = "You won." if won else "Nothing happens."
        return StepResult(observation, reward=self.score, terminated=won or self.rounds >= 2, score=self.score)

    def observation(self) -> str:
        return f"Task {self.idx}."

    def expert_action(self) -> ExpertAction:
        return ExpertAction("The button wins.", WINNING_ACTION)


def toy_sources():
    from agentenv.controller.sources import LocalEnv

    return {"toy": LocalEnv(ToyEnv)}


# --- filter and merge --------------------------------------------------------------------------------------


def traj(
    env: str, idx: int, reward: float, action: str = "go", sample: int = 0, success: bool = False
) -> Trajectory:
    t = Trajectory.start(env, idx, "instruction", reward=reward, success=success, meta={"sample": sample})
    t.add_observation(f"task {idx}")
    t.add_reply(f"Thought:\nok\n\nAction:\n{action}")
    return t


def test_filter_keeps_exactly_the_trajectories_above_threshold_once():
    thresholds = {"toy": 0.99, "sciworld": 99.0, "other": None}
    explored = [
        traj("toy", 0, 1.0, "a", sample=0),
        traj("toy", 0, 1.0, "a", sample=1),  # same text as sample 0: kept once
        traj("toy", 0, 1.0, "b", sample=2),  # a distinct success of the same task
        traj("toy", 1, 0.99, "a"),  # not above the threshold
        traj("toy", 2, 0.5, "a"),
        traj("sciworld", 3, 100.0),
        traj("sciworld", 4, 99.0),  # SciWorld keeps > 99 only
        traj("sciworld", 5, 99.5),
        traj("other", 7, 0.0, success=True),  # no threshold from the env: its success decides
        traj("other", 8, 1.0, success=False),
    ]
    random.Random(0).shuffle(explored)  # finish order does not matter
    kept = select_explored(explored, thresholds)
    assert [(t.item_id, t.meta["sample"]) for t in kept] == [
        ("other_7", 0),
        ("sciworld_3", 0),
        ("sciworld_5", 0),
        ("toy_0", 0),
        ("toy_0", 2),
    ]
    assert len({content_key(t) for t in kept}) == len(kept)

    best = select_explored(explored, thresholds, per_item="best")
    assert [(t.item_id, t.meta["sample"]) for t in best] == [
        ("other_7", 0),
        ("sciworld_3", 0),
        ("sciworld_5", 0),
        ("toy_0", 0),
    ]
    capped = select_explored(explored, thresholds, max_per_item=1)
    assert [t.item_id for t in capped].count("toy_0") == 1
    one_threshold = select_explored(explored, 0.99)  # one value for every env
    assert [t.item_id for t in one_threshold] == [
        "other_8",
        "sciworld_3",
        "sciworld_4",
        "sciworld_5",
        "toy_0",
        "toy_0",
    ]
    with pytest.raises(ValueError):
        select_explored(explored, thresholds, per_item="all")


def test_filter_and_merge_on_random_data_never_duplicate():
    rng = random.Random(1)
    explored = [
        traj(
            "toy",
            rng.randrange(10),
            rng.choice([0.0, 0.5, 0.99, 1.0]),
            rng.choice("abc"),
            sample=rng.randrange(4),
        )
        for _ in range(300)
    ]
    kept = select_explored(explored, {"toy": 0.99})
    assert all(t.reward > 0.99 for t in kept)
    above = {content_key(t) for t in explored if t.reward > 0.99}
    assert sorted(map(content_key, kept)) == sorted(above)  # every distinct success, exactly once

    initial = [traj("toy", i, 1.0, "expert") for i in range(10)]
    merged = merge_trajectories(initial + initial[:3], kept + initial[:2])
    keys = [content_key(t) for t in merged]
    assert len(keys) == len(set(keys)) == 10 + len(kept)
    assert merged[:10] == initial  # the initial set first, in order


def test_rft_defaults_and_bc_instruction_set():
    cfg = RFTConfig(model="m", output_dir="o", data=["d"], envs=["toy"])
    assert (cfg.iterations, cfg.samples_per_instruction, cfg.explore_items, cfg.per_item) == (
        1,
        4,
        "data",
        "distinct",
    )
    initial = [traj("toy", 1, 1.0), traj("toy", 4, 1.0), traj("other", 2, 1.0)]
    assert explore_tasks(RFT(cfg), initial) == {"toy": [1, 4]}  # only the BC set's instructions
    evol = AgentEvolConfig(model="m", output_dir="o", data=["d"], envs=["toy"], explore_limit=5)
    assert explore_tasks(AgentEvol(evol), initial) == {"toy": [0, 1, 2, 3, 4]}  # the wider split


def test_successes_only_leaves_the_failed_initial_trajectories_out(tmp_path):
    data = tmp_path / "collected.jsonl"
    write_trajectories(data, [traj("toy", 1, 1.0, success=True), traj("toy", 2, 0.0), traj("toy", 4, 1.0, success=True)])
    for successes_only, kept in ((False, [1, 2, 4]), (True, [1, 4])):
        run = RFT(RFTConfig(model="m", output_dir="o", data=[str(data)], envs=["toy"], successes_only=successes_only))
        run.prepare()
        assert [t.data_idx for t in run.initial] == kept
        run.envs = toy_sources()
        assert run.explore_tasks() == {"toy": kept}  # RFT samples the instructions of what it trains on


def explore_tasks(run, data: list[Trajectory]) -> dict[str, list[int]]:
    """What a staged run explores, given the trajectories it starts from (expert or initial set)."""
    run.envs, run.initial, run.experts = toy_sources(), data, data
    return run.explore_tasks()


def test_explicit_task_lists_replace_the_splits():
    from agentenv.trainer.rollouts import task_indices

    source = toy_sources()["toy"]
    assert task_indices(source, "test") == [100, 101, 102, 103]
    assert task_indices(source, "test", [103, 100], limit=1) == [103]
    initial = [traj("toy", 1, 1.0), traj("toy", 3, 1.0), traj("toy", 4, 1.0)]
    evol = AgentEvolConfig(
        model="m", output_dir="o", data=["d"], envs=["toy"], explore_tasks=[5, 3, 1], explore_limit=2
    )
    assert explore_tasks(AgentEvol(evol), initial) == {"toy": [5, 3]}  # in the order given, then cut
    eto = ETOConfig(model="m", output_dir="o", expert_data=["d"], envs=["toy"], explore_tasks=[5, 3, 1])
    assert explore_tasks(ETO(eto), initial) == {"toy": [3, 1]}  # only those with an expert


# --- ETO pairs and Best-of-N --------------------------------------------------------------------------------


def test_eto_pairs_each_failure_with_its_expert():
    experts = [traj("toy", 1, 0.5, "weak"), traj("toy", 1, 1.0, "expert"), traj("toy", 2, 1.0, "expert")]
    explored = [
        traj("toy", 1, 0.0, "wrong"),
        traj("toy", 1, 0.0, "wrong", sample=1),  # same text: one pair
        traj("toy", 2, 1.0, "other"),  # a tie: no pair
        traj("toy", 3, 0.0, "wrong"),  # no expert trajectory
    ]
    pairs = build_pairs(experts, explored)
    assert len(pairs) == 1
    (pair,) = pairs
    assert pair.item_id == "toy_1" and pair.chosen_reward == 1.0 and pair.rejected_reward == 0.0
    assert "expert" in pair.chosen[-1].value and "wrong" in pair.rejected[-1].value


def test_an_expert_trajectory_of_another_task_under_the_same_id_is_warned_of(caplog):
    """AgentGym's BabyAI and SciWorld ids name other tasks here: their expert trajectories were paired with
    explored episodes of another task without a word.  Paired still (SciWorld may show one task's room
    otherwise), but counted in a warning."""
    elsewhere = traj("toy", 1, 1.0, "expert")
    elsewhere.conversations[0].value = "AgentGym's own instruction"  # the instruction may differ ...
    elsewhere.conversations[2].value = "task 7"  # ... the first observation may not
    same = traj("toy", 2, 1.0, "expert")
    same.conversations[0].value = "AgentGym's own instruction"
    same.conversations[2].value = "  task\n2 "  # the same observation, spaced otherwise
    explored = [traj("toy", 1, 0.0, "wrong"), traj("toy", 2, 0.0, "wrong")]
    with caplog.at_level("WARNING"):
        pairs = build_pairs([elsewhere, same], explored)
    assert [p.item_id for p in pairs] == ["toy_1", "toy_2"]
    assert "1 of 2 instructions: the trajectory an explored one is paired with starts from another first" in caplog.text
    assert "(e.g. toy_1)" in caplog.text


def test_own_best_pairs_each_explored_trajectory_with_the_agents_best_one():
    experts = [traj("toy", 1, 1.0, "expert"), traj("toy", 2, 1.0, "expert")]
    explored = [
        traj("toy", 1, 0.0, "wrong", sample=0),
        traj("toy", 1, 1.0, "right", sample=1, success=True),
        traj("toy", 1, 0.0, "stray", sample=2),
        traj("toy", 2, 0.0, "wrong"),  # its only sample failed: nothing of its own beats it
        traj("toy", 2, 0.0, "wrong", sample=1),
    ]
    pairs = build_pairs(experts, explored, pair_with="own_best")
    assert [(p.item_id, p.chosen[-1].value, p.rejected[-1].value) for p in pairs] == [
        ("toy_1", "Thought:\nok\n\nAction:\nright", "Thought:\nok\n\nAction:\nwrong"),
        ("toy_1", "Thought:\nok\n\nAction:\nright", "Thought:\nok\n\nAction:\nstray"),
    ]
    assert all("expert" not in turn.value for p in pairs for turn in p.chosen)
    with pytest.raises(ValueError, match="pair_with must be one of"):
        build_pairs(experts, explored, pair_with="teacher")


def test_pairs_do_not_depend_on_the_order_episodes_finished_in():
    """Explored trajectories came in the order their episodes finished: own_best's winner among equal rewards
    and the pairs file's order (which DPO's seeded shuffle permutes) moved with concurrency and timing."""
    experts = [traj("toy", 1, 1.0, "expert"), traj("toy", 2, 1.0, "expert")]
    explored = [traj("toy", 1, 1.0, "up", sample=0, success=True), traj("toy", 1, 1.0, "down", sample=1, success=True),
                traj("toy", 1, 0.0, "left", sample=2), traj("toy", 2, 0.0, "wrong", sample=0)]
    for pair_with in ("own_best", "expert"):
        pairs = [build_pairs(experts, order, pair_with=pair_with) for order in (explored, explored[::-1])]
        assert [p.to_json() for p in pairs[0]] == [p.to_json() for p in pairs[1]]
    assert build_pairs(experts, explored[::-1], pair_with="own_best")[0].chosen[-1].value.endswith("up")


def test_an_item_id_without_an_index_is_a_value_error():
    """AgentGym-style ids are <env>_<index>; another form was an IndexError the data selection did not catch."""
    with pytest.raises(ValueError, match="is not <env>_<index>"):
        _ = Trajectory("noindex", []).data_idx
    assert tasks_with_data([Trajectory("noindex", [], env="toy"), traj("toy", 3, 1.0)]) == {"toy": {3}}


def test_unscored_experts_take_their_envs_best_score(tmp_path):
    """AgentGym's expert files carry no reward.  Read as 1, a SciWorld expert (scores 0-100) lost to every
    failure with partial credit, and the pairs were upside down."""
    from agentenv.data.dataset import iter_trajectories
    from agentenv.trainer.eto import scored_experts

    released = traj("sciworld", 7, 0.0, "expert").to_json()
    del released["reward"], released["success"]
    (tmp_path / "experts.json").write_text(json.dumps([released]))
    (read,) = iter_trajectories([str(tmp_path / "experts.json")], unscored_reward=float("inf"))
    experts = scored_experts([read, traj("toy", 1, 0.5, "expert")], {"sciworld": 100.0, "toy": 1.0})
    assert [(t.reward, t.success) for t in experts] == [(100.0, True), (0.5, False)]  # a scored one is kept
    (pair,) = build_pairs(experts, [traj("sciworld", 7, 33.0, "partly")])
    assert "expert" in pair.chosen[-1].value and (pair.chosen_reward, pair.rejected_reward) == (100.0, 33.0)
    assert build_pairs(experts, [traj("sciworld", 7, 100.0, "other")]) == []  # a full score ties


def test_own_best_pairs_need_several_samples_per_instruction(tmp_path):
    settings = dict(model="m", output_dir=str(tmp_path), expert_data=["e.jsonl"], envs=["toy"], pair_with="own_best")
    with pytest.raises(ValueError, match="samples_per_instruction >= 2"):
        ETOConfig(**settings)  # refused before anything runs
    with pytest.raises(ValueError, match="explore_temperature > 0"):
        ETOConfig(**settings, samples_per_instruction=4)  # greedy samples of a task are all the same
    ETOConfig(**settings, samples_per_instruction=4, explore_temperature=0.7)
    with pytest.raises(ValueError, match="rejected_extra_rounds must not be negative"):
        ETOConfig(**(settings | dict(pair_with="expert", rejected_extra_rounds=-1)))


def test_best_of_n_counts_a_task_when_any_sample_succeeds():
    episodes = [
        traj("toy", 0, 0.0, sample=0),
        traj("toy", 0, 1.0, sample=1, success=True),
        traj("toy", 1, 0.0, sample=0),
        traj("toy", 1, 0.5, sample=1),
        traj("sciworld", 2, 100.0, success=True),
        traj("sciworld", 2, 30.0, sample=1),
    ]
    rows = {r.env: r for r in best_of_n(episodes, {"toy": (0, 1), "sciworld": (0, 100)})}
    assert rows["toy"].tasks == 2 and rows["toy"].samples == 4
    assert rows["toy"].sample_success == 0.25 and rows["toy"].best_of_n_success == 0.5
    assert rows["toy"].best_of_n_score == pytest.approx(0.75)
    assert rows["sciworld"].best_of_n_score == 1.0
    assert rows["all"].tasks == 3 and rows["all"].best_of_n_success == pytest.approx(2 / 3)
    # a task whose other episodes ended on env errors had fewer tries: left out of best-of-N, and said so
    episodes.append(traj("toy", 3, 0.0, sample=0))
    rows = {r.env: r for r in best_of_n(episodes, {"toy": (0, 1), "sciworld": (0, 100)}, n=2)}
    assert (rows["toy"].tasks, rows["toy"].incomplete, rows["all"].incomplete) == (2, 1, 1)
    assert rows["toy"].best_of_n_success == 0.5
    assert "1 task(s) with fewer than 2 episodes" in best_of_n_markdown(list(rows.values()), 2)


# --- end to end -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def expert_data(tmp_path_factory) -> Path:
    """Expert trajectories of train tasks 0 and 1, collected through the controller."""
    from agentenv.controller import collect

    path = tmp_path_factory.mktemp("data") / "toy_expert.jsonl"
    report = collect("toy", [], [0, 1], path, progress=False, sources=toy_sources())
    assert report.row("toy").success == 1.0
    return path


def small_training(**overrides) -> dict:
    settings = dict(
        max_steps=2,
        batch_size=2,
        learning_rate=1e-3,
        warmup_ratio=0.0,
        max_length=512,
        seed=0,
        max_new_tokens=6,
        concurrency=8,
    )
    return settings | overrides


def test_a_run_folder_holds_one_kind_of_run(base_model, expert_data, tmp_path):
    """evol wrote its iterations beside a finished GRPO model, and dpo its model into an evol folder."""
    from agentenv.cli import main

    trained, staged = tmp_path / "trained", tmp_path / "staged"
    trained.mkdir()
    (trained / "train_config.json").write_text("{}")
    staged.mkdir()
    (staged / "run_config.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"holds a training run \(train_config.json: bc, dpo or grpo\): give another"):
        main(["train", "evol", "--model", str(base_model), "--data", str(expert_data), "--output-dir", str(trained),
              "--env", "maze", "--local", "--max-steps", "1"])
    with pytest.raises(SystemExit, match=r"holds an iterative run \(run_config.json: evol, rft or eto\): give another"):
        main(["train", "bc", "--model", str(base_model), "--data", str(expert_data), "--output-dir", str(staged),
              "--max-steps", "1"])
    assert sorted(p.name for p in trained.iterdir()) == ["train_config.json"]
    assert sorted(p.name for p in staged.iterdir()) == ["run_config.json"]


def test_an_iteration_that_keeps_nothing_says_so(expert_data, tmp_path, capsys):
    """kept 0 passed unseen: the iteration retrained a byte-identical model, and only the table said 0."""
    import dataclasses

    from agentenv.trainer.agentevol import AgentEvol
    from agentenv.trainer.runs import IterationDir

    cfg = AgentEvolConfig(model="m", output_dir=str(tmp_path), data=[str(expert_data)], envs=["toy"], iterations=1)
    run = AgentEvol(cfg)
    run.prepare()
    run.envs = toy_sources()
    failed = [dataclasses.replace(t, reward=0.0) for t in read_trajectories(expert_data)]
    assert run.select(IterationDir(tmp_path, 1), failed)["kept"] == 0
    assert (f"iteration 1 kept none of its {len(failed)} explored episodes (none rewarded toy > "
            in capsys.readouterr().err)


@pytest.mark.slow
def test_one_agentevol_iteration_end_to_end_and_resume(base_model, expert_data, tmp_path):
    run = tmp_path / "evol"
    cfg = AgentEvolConfig(
        model=str(base_model),
        output_dir=str(run),
        data=[str(expert_data)],
        envs=["toy"],
        iterations=1,
        samples_per_instruction=2,
        explore_temperature=1.0,
        **small_training(),
    )
    summary = run_agentevol(cfg, sources=toy_sources(), progress=False)

    assert [it["iteration"] for it in summary["iterations"]] == [0, 1]
    it1 = run / "iter_1"
    assert set(json.loads((it1 / "stages.json").read_text())) == {
        "explored",
        "filtered",
        "trained",
        "evaluated",
    }
    explored = list(read_trajectories(it1 / "explore.jsonl"))
    assert sorted((t.data_idx, t.meta["sample"]) for t in explored) == [
        (i, k) for i in range(6) for k in range(2)
    ]
    kept = list(read_trajectories(it1 / "kept.jsonl"))
    # exactly the explored successes (reward > 0.99), each distinct text once; every even task is won
    assert {content_key(t) for t in kept} == {content_key(t) for t in explored if t.reward > 0.99}
    assert len(kept) == len({content_key(t) for t in kept})
    assert {t.data_idx for t in kept} >= {0, 2, 4}
    train = list(read_trajectories(it1 / "train.jsonl"))
    initial = list(read_trajectories(expert_data))
    assert [content_key(t) for t in train] == [content_key(t) for t in initial] + [
        content_key(t) for t in kept
    ]

    # the new agent was trained from the base model on that set, saved in HF format, and evaluated
    bc_config = json.loads((it1 / "model" / "train_config.json").read_text())
    assert bc_config["model"] == str(base_model) and bc_config["data"] == [str(it1 / "train.jsonl")]
    assert (it1 / "model" / "model.safetensors").exists()
    scores = summary["iterations"][1]["scores"]
    assert scores["toy"]["n"] == 4 and scores["toy"]["success"] >= 0.5  # test tasks 100 and 102 are even
    assert (run / "curve.png").stat().st_size > 1000 and (run / "summary.json").exists()

    # killed while exploring: finished episodes are kept, the rest rerun, later stages redone
    lines = (it1 / "explore.jsonl").read_text().splitlines(keepends=True)
    (it1 / "explore.jsonl").write_text("".join(lines[:5]))
    stages = json.loads((it1 / "stages.json").read_text())
    (it1 / "stages.json").write_text(json.dumps({}))
    assert stages
    import shutil

    shutil.rmtree(it1 / "model")
    (it1 / "eval.jsonl").unlink()
    model0_stamp = (run / "iter_0" / "model" / "model.safetensors").stat().st_mtime_ns
    summary = run_agentevol(cfg, sources=toy_sources(), progress=False)
    assert (it1 / "explore.jsonl").read_text().splitlines(keepends=True)[:5] == lines[:5]
    assert len(list(read_trajectories(it1 / "explore.jsonl"))) == 12
    assert (
        run / "iter_0" / "model" / "model.safetensors"
    ).stat().st_mtime_ns == model0_stamp  # not retrained
    assert summary["iterations"][1]["scores"]["toy"]["n"] == 4

    with pytest.raises(ValueError, match="other settings"):
        run_agentevol(AgentEvolConfig(**(cfg.to_json() | {"merge": "previous"})), sources=toy_sources())


def test_a_run_continues_from_another_working_folder_and_a_moved_one_is_refused(base_model, expert_data, tmp_path,
                                                                                monkeypatch):
    """Its records named files relative to where it was started: rerun from elsewhere, a run could not resume
    ('saved with other settings (data)') or continue (a model path taken for a Hub repo id), and a copied
    folder went on exploring with the original's models."""
    import shutil

    monkeypatch.chdir(tmp_path)
    cfg = AgentEvolConfig(model=str(base_model), output_dir="runs/evol", data=[str(expert_data)], envs=["toy"],
                          iterations=0, eval_limit=2, explore_limit=2, **small_training())
    run_agentevol(cfg, sources=toy_sources(), progress=False)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    more = cfg.to_json() | {"output_dir": "../runs/evol", "iterations": 1}
    summary = run_agentevol(AgentEvolConfig(**more), sources=toy_sources(), progress=False)
    assert [row["iteration"] for row in summary["iterations"]] == [0, 1]
    assert Path(summary["iterations"][1]["model"]) == tmp_path / "runs" / "evol" / "iter_1" / "model"
    shutil.copytree(tmp_path / "runs" / "evol", tmp_path / "copy")
    with pytest.raises(ValueError, match=r"copy holds a run started in .*runs/evol \(moved or copied\)"):
        run_agentevol(AgentEvolConfig(**(more | {"output_dir": str(tmp_path / "copy"), "iterations": 2})),
                      sources=toy_sources(), progress=False)


@pytest.mark.slow
def test_no_resume_starts_a_staged_run_over(base_model, expert_data, tmp_path, capsys):
    """--no-resume trained nothing on a finished evol run (every stage was marked done) and kept a killed
    one's finished stages, where the docs say it starts over."""
    run = tmp_path / "evol"
    cfg = AgentEvolConfig(
        model=str(base_model), output_dir=str(run), data=[str(expert_data)], envs=["toy"], iterations=0,
        eval_limit=2, **small_training(),
    )
    run_agentevol(cfg, sources=toy_sources(), progress=False)
    (run / "notes.txt").write_text("mine")
    weights = run / "iter_0" / "model" / "model.safetensors"
    (run / "iter_0" / "stray").write_text("from the earlier run")
    first = weights.stat().st_mtime_ns
    run_agentevol(AgentEvolConfig(**(cfg.to_json() | {"resume": False})), sources=toy_sources(), progress=False)
    assert weights.stat().st_mtime_ns != first and not (run / "iter_0" / "stray").exists()
    assert (run / "notes.txt").read_text() == "mine" and (run / "summary.json").exists()
    assert "--no-resume: removed the earlier run's 1 iterations" in capsys.readouterr().err
    # starting over from a model the earlier run trained would remove it first: refused, nothing removed
    inside = AgentEvolConfig(**(cfg.to_json() | {"resume": False, "model": str(run / "iter_0" / "model")}))
    with pytest.raises(ValueError, match=r"--no-resume would remove .*iter_0/model, which this run starts from"):
        run_agentevol(inside, sources=toy_sources(), progress=False)
    assert weights.exists()


@pytest.mark.slow
def test_one_eto_iteration_end_to_end(base_model, expert_data, tmp_path, capsys):
    from agentenv.trainer.dpo import read_pairs
    from agentenv.trainer.engine import read_log

    run = tmp_path / "eto"
    cfg = ETOConfig(
        model=str(base_model),
        output_dir=str(run),
        expert_data=[str(expert_data)],
        envs=["toy"],
        iterations=1,
        iteration_learning_rates=[1e-3],
        eval_tasks=[101, 103],
        **small_training(batch_size=1),
    )
    summary = run_eto(cfg, sources=toy_sources())
    # progress lines (stderr is no terminal here) name each stage: exploration was shown as "eval"
    stages = {line.split(" hf:")[0] for line in capsys.readouterr().err.splitlines() if " hf:" in line}
    assert stages == {"iter 0 eval", "iter 1 explore", "iter 1 eval"}
    it1 = run / "iter_1"
    explored = list(read_trajectories(it1 / "explore.jsonl"))
    assert sorted(t.item_id for t in explored) == ["toy_0", "toy_1"]  # the tasks with an expert trajectory
    pairs = list(read_pairs(it1 / "pairs.jsonl"))
    # toy_0 is won by any action (a tie with the expert: no pair); the random model fails toy_1
    assert [p.item_id for p in pairs] == ["toy_1"]
    assert pairs[0].chosen[-1].value.endswith(WINNING_ACTION) and pairs[0].rejected[-1].role == "gpt"
    log = read_log(it1 / "model")
    assert len(log) == 2 and log[0]["loss"] == pytest.approx(
        0.6931, abs=1e-3
    )  # policy == reference at step 1
    assert summary["iterations"][1]["pairs"] == 1 and summary["iterations"][1]["scores"]["toy"]["n"] == 2
    assert sorted(t.data_idx for t in read_trajectories(it1 / "eval.jsonl")) == [101, 103]
    assert (it1 / "model" / "model.safetensors").exists()


@pytest.mark.slow
def test_eto_reads_agentgym_expert_files_and_skips_pairs_beyond_max_length(base_model, expert_data, tmp_path):
    """AgentGym's released expert files carry no reward: their trajectories still win against failures.
    When no pair fits in max_length, the iteration keeps its model instead of failing on every rerun."""
    from agentenv.trainer.dpo import read_pairs

    agenttraj = tmp_path / "toy_agenttraj.json"
    records = [{"item_id": t.item_id, "conversations": t.to_json()["conversations"]} for t in read_trajectories(expert_data)]
    agenttraj.write_text(json.dumps(records))
    run = tmp_path / "eto"
    cfg = ETOConfig(
        model=str(base_model), output_dir=str(run), expert_data=[str(agenttraj)], envs=["toy"], iterations=1,
        eval_tasks=[101], **small_training(batch_size=1, max_length=16),
    )
    for _ in range(2):  # the rerun finds the iteration done
        summary = run_eto(cfg, sources=toy_sources(), progress=False)
    it1 = run / "iter_1"
    (pair,) = read_pairs(it1 / "pairs.jsonl")
    assert pair.item_id == "toy_1" and pair.chosen_reward == 1.0 and pair.chosen[-1].value.endswith(WINNING_ACTION)
    stages = json.loads((it1 / "stages.json").read_text())
    assert stages["paired"]["trainable"] == 0 and stages["trained"]["skipped"] == "no pair trainable (none within max_length, or its sides the same)"
    assert stages["trained"]["model"] == str(base_model) and summary["iterations"][1]["pairs"] == 1


def test_best_of_n_run_with_a_local_model(base_model, tmp_path):
    from agentenv.trainer.best_of_n import BestOfNConfig, run_best_of_n

    cfg = BestOfNConfig(
        agent=f"hf:{base_model}",
        out=str(tmp_path / "bon.jsonl"),
        envs=["toy"],
        n=3,
        temperature=1.0,
        max_new_tokens=6,
    )
    summary = run_best_of_n(cfg, sources=toy_sources(), progress=False)
    (toy, total) = summary["rows"]
    # test tasks 100 and 102 are won by any reply; the random model never writes the winning action
    assert toy["env"] == "toy" and toy["tasks"] == 4 and toy["samples"] == 12
    assert toy["best_of_n_success"] == 0.5 and toy["sample_success"] == 0.5 and total["env"] == "all"
    assert json.loads((tmp_path / "bon.best_of_n.json").read_text())["n"] == 3


def test_best_of_n_checks_the_agent_before_it_opens_the_envs(tmp_path, monkeypatch):
    """A mistyped model path is one line at once, not after the env servers are reached (or started)."""
    import importlib

    bon = importlib.import_module("agentenv.trainer.best_of_n")  # the package's name best_of_n is the function

    def opened(*_args, **_kwargs):
        raise AssertionError("the env sources were opened before the agent spec was checked")

    monkeypatch.setattr(bon, "open_sources", opened)
    for agent, problem in ((f"hf:{tmp_path / 'typo'}", "does not exist"), ("gpt", "unknown agent spec")):
        with pytest.raises(ValueError, match=problem):
            bon.run_best_of_n(bon.BestOfNConfig(agent=agent, out=str(tmp_path / "bon.jsonl"), envs=["maze"]))
    with pytest.raises(ValueError, match=r"temperature must be 0 \(greedy\) or more"):
        bon.run_best_of_n(bon.BestOfNConfig(agent="expert", out=str(tmp_path / "b.jsonl"), envs=["maze"], temperature=-1))
    # --limit -1 played the whole split
    with pytest.raises(ValueError, match=r"limit must not be negative \(0: the whole split\), not -1"):
        bon.BestOfNConfig(agent="expert", out=str(tmp_path / "b.jsonl"), envs=["maze"], limit=-1)
    with pytest.raises(ValueError, match=r"n must be at least 1, not 0"):
        bon.BestOfNConfig(agent="expert", out=str(tmp_path / "b.jsonl"), envs=["maze"], n=0)


def test_a_server_down_or_a_split_mistyped_stops_evol_before_any_training(base_model, expert_data, tmp_path):
    """Iteration 0 trains BC before anything is played: a server that is down, or a split the env lacks,
    is one line at the start, not after that stage."""
    from agentenv.cli import main
    from agentenv.testing import refusing_url

    run = tmp_path / "evol"
    common = ["train", "evol", "--model", str(base_model), "--data", str(expert_data), "--output-dir", str(run),
              "--env", "maze", "--max-steps", "1"]
    with refusing_url() as down, pytest.raises(SystemExit, match=r"^error: GET .*/maze/info failed after \d tries.*; "
                                                                 r"is its server up\? start it with `agentenv up "
                                                                 r"lmrlgym`, .*; then rerun the same command"):
        main([*common, "--url", f"maze={down}"])
    with pytest.raises(SystemExit, match=r"^error: maze: no split 'dev' \(it has: test, train, test_procedural\)$"):
        main([*common, "--local", "--eval-split", "dev"])
    with pytest.raises(SystemExit, match=r"^error: maze: no split 'dev' \(it has: test, train, test_procedural\)$"):
        main([*common, "--local", "--explore-split", "dev"])
    # a task index outside every split was played as no task at all: every episode unscored, the run "done"
    with pytest.raises(SystemExit, match=r"^error: maze: task index 999999 is outside every maze split \(test 0\.\.25, "):
        main([*common, "--local", "--eval-tasks", "3", "999999"])
    # nothing to explore (the data covers another env's or split's tasks): it failed after iteration 0's
    # training with "No such file ... iter_1/explore.jsonl", and again on every rerun
    for trainer, data in (("rft", "--data"), ("eto", "--expert-data")):
        with pytest.raises(SystemExit, match=r"^error: nothing to explore: no task in the 'train' split of maze has a "
                                             r"trajectory in the (training|expert) data \(none of these envs\); give"):
            main(["train", trainer, "--model", str(base_model), data, str(expert_data), "--output-dir", str(run),
                  "--env", "maze", "--max-steps", "1", "--local"])
    with pytest.raises(SystemExit, match=r"^error: --local and --url exclude each other$"):  # --url was ignored
        main([*common, "--local", "--url", "maze=http://127.0.0.1:9"])
    config = tmp_path / "evol.json"  # the envs named in a --config file, not on the command line
    config.write_text(json.dumps({"envs": ["maze"], "urls": [down], "max_steps": 1}))
    with pytest.raises(SystemExit, match=r"is its server up\? start it with `agentenv up lmrlgym`"):
        main([*common[:8], "--config", str(config)])
    assert not (run / "iter_0" / "model").exists()


def test_a_run_that_never_explores_does_not_need_the_explore_split():
    pytest.importorskip("agentenv_lmrlgym", reason="plays Maze (agentenv-lmrlgym)")
    from agentenv_lmrlgym import MazeEnv

    from agentenv.controller.sources import LocalEnv
    from agentenv.trainer.rollouts import check_sources

    cfg = AgentEvolConfig(model="m", data=["d.jsonl"], output_dir="o", envs=["maze"], explore_split="dev", iterations=0)
    with LocalEnv(MazeEnv) as maze:
        check_sources(cfg, {"maze": maze}, explores=False)  # BC and its evaluation only: no error
        with pytest.raises(ValueError, match="no split 'dev'"):
            check_sources(cfg, {"maze": maze})


def test_cli_flags_build_the_configs(tmp_path):
    import argparse

    from agentenv.trainer.commands import add_commands
    from agentenv.trainer.config_args import dataclass_from_args

    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    (tmp_path / "evol.json").write_text(json.dumps({"model": "base", "iterations": 2, "envs": ["maze"]}))
    args = parser.parse_args(
        [
            "train",
            "evol",
            "--config",
            str(tmp_path / "evol.json"),
            "--output-dir",
            "runs/x",
            "--data",
            "a.jsonl",
            "b.json",
            "--envs",
            "maze",
            "wordle",
            "--keep-threshold",
            "0.5",
            "--merge",
            "previous",
            "--no-resume",
            "--train-launcher",
            "torchrun --nproc_per_node 8",
            "--explore-tasks",
            "7",
            "9",
        ]
    )
    cfg = dataclass_from_args(AgentEvolConfig, args)
    assert (cfg.model, cfg.iterations, cfg.envs, cfg.data) == (
        "base",
        2,
        ["maze", "wordle"],
        ["a.jsonl", "b.json"],
    )
    assert (cfg.keep_threshold, cfg.merge, cfg.resume) == (0.5, "previous", False)
    assert (cfg.explore_tasks, cfg.eval_tasks) == ([7, 9], [])
    for command in (
        ["train", "eto", "--help"],
        ["train", "rft", "--help"],
        ["train", "dpo", "--help"],
        ["best-of-n", "--help"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args(command)
        assert exit_info.value.code == 0

    from agentenv.trainer.launch import launch_command

    command = launch_command("bc", Path("c.json"), "torchrun --nproc_per_node 8")
    assert Path(command[0]).name == "torchrun"  # on PATH, or the virtual environment's beside its python
    assert command[1:] == [
        "--nproc_per_node",
        "8",
        "-m",
        "agentenv.trainer",
        "bc",
        "--config",
        "c.json",
    ]


def test_a_run_from_before_a_setting_existed_resumes_with_its_default(tmp_path):
    from agentenv.trainer.config_args import field_defaults
    from agentenv.trainer.runs import check_run_config

    defaults = field_defaults(ETOConfig)
    settings = ETOConfig(model="m", output_dir=str(tmp_path), expert_data=["e.jsonl"]).to_json()
    older = {k: v for k, v in settings.items() if k != "pair_by"}  # saved before pair_by was added
    (tmp_path / "run_config.json").write_text(json.dumps(older))
    check_run_config(tmp_path, settings, defaults=defaults)  # pair_by is at its default: resumes
    assert json.loads((tmp_path / "run_config.json").read_text())["pair_by"] == "reward"
    (tmp_path / "run_config.json").write_text(json.dumps(older))
    (tmp_path / "iter_0").mkdir()  # the run produced something
    with pytest.raises(ValueError, match=r"other settings \(pair_by 'reward' \(now 'success'\)\)"):
        check_run_config(tmp_path, settings | {"pair_by": "success"}, defaults=defaults)


def test_a_folder_named_with_its_trailing_slash_is_the_same_setting():
    """A shell completes a folder with a '/': the resume was refused as a run of another model."""
    from agentenv.trainer.config_args import changed_settings

    saved = {"model": "runs/bc", "data": ["a.jsonl", "dir/b"], "seed": 0}
    assert changed_settings(saved, {"model": "runs/bc/", "data": ["a.jsonl", "dir/b/"], "seed": 0}) == []
    assert changed_settings(saved, {"model": "runs/bc2/", "data": ["a.jsonl", "dir/b"], "seed": 0}) == ["model"]
    assert changed_settings({"model": "/"}, {"model": "/"}) == []


def test_a_run_that_produced_nothing_takes_new_settings(tmp_path):
    """A run stopped before its first output (a server down, a path put wrong) holds only its settings; the
    command rerun with other settings starts afresh instead of refusing the folder."""
    from agentenv.trainer.runs import check_run_config

    check_run_config(tmp_path, {"model": "runs/typo", "lr": 1.0})
    check_run_config(tmp_path, {"model": "runs/bc/model", "lr": 1.0})
    assert json.loads((tmp_path / "run_config.json").read_text())["model"] == "runs/bc/model"
    (tmp_path / "explore.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"other settings \(model 'runs/bc/model' \(now 'runs/other'\)\)"):
        check_run_config(tmp_path, {"model": "runs/other", "lr": 1.0})


def test_every_setting_of_every_command_sits_in_a_named_section():
    from agentenv.trainer.best_of_n import BestOfNConfig
    from agentenv.trainer.commands import TRAIN_COMMANDS
    from agentenv.trainer.config_args import sections

    for config_class in [load() for _, load, _ in TRAIN_COMMANDS.values()] + [BestOfNConfig]:
        titled = sections(config_class)
        assert "other settings" not in titled, (config_class.__name__, titled.get("other settings"))
    assert sections(ETOConfig)["experimental"] == ["nll_weight", "loss_type", "preference_span", "pair_cut", "pair_with"]


@pytest.mark.parametrize(
    ("setting", "message"),
    [({"iterations": -1}, "iterations must not be negative"), ({"max_new_tokens": 0}, "max_new_tokens must be at least 1"),
     ({"concurrency": 0}, "concurrency must be at least 1"), ({"explore_temperature": -1.0}, "explore_temperature must be 0"),
     ({"samples_per_instruction": 0}, "samples_per_instruction must be at least 1"),
     ({"train_launcher": 'torchrun "--nproc_per_node 1'}, "is not a command line"),
     ({"train_launcher": "no-such-launcher --x"}, "no program 'no-such-launcher'")],
)
def test_settings_found_wrong_hours_into_a_run_are_refused_at_once(tmp_path, setting, message):
    """Each one failed (or did nothing) only when its stage came: after iteration 0's training, or locked the
    run folder to the wrong value."""
    with pytest.raises(ValueError, match=message):
        AgentEvolConfig(model="m", output_dir=str(tmp_path), data=["d.jsonl"], envs=["toy"], **setting)
    with pytest.raises(ValueError, match="learning rates must be positive finite numbers, not -5e-07"):
        ETOConfig(model="m", output_dir=str(tmp_path), expert_data=["e.jsonl"], envs=["toy"],
                  iteration_learning_rates=[1e-6, -5e-7])


def test_a_launcher_found_beside_this_python_runs_from_there(tmp_path, monkeypatch):
    """A virtual environment's torchrun is beside its python, and not on PATH unless it is activated."""
    import sys

    from agentenv.trainer.launch import launch_command

    monkeypatch.setenv("PATH", str(tmp_path))
    command = launch_command("bc", tmp_path / "c.json", "python --version")
    assert command[0] == str(Path(sys.executable).parent / "python")


def test_a_mistyped_bc_model_is_one_line_before_anything_is_written(tmp_path, base_model):
    from agentenv.cli import main

    out = tmp_path / "evol"
    with pytest.raises(SystemExit, match="--bc-model .*nowhere"):
        main(["train", "evol", "--model", str(base_model), "--data", "d.jsonl", "--env", "maze", "--local",
              "--output-dir", str(out), "--bc-model", str(tmp_path / "nowhere")])
    assert not out.exists()



def test_a_finished_run_is_printed_as_a_table(tmp_path, capsys):
    from agentenv.trainer.runs import print_summary, write_summary

    scores = lambda s: {"maze": {"n": 2, "score": s, "success": s}, "all": {"n": 2, "score": s, "success": s}}  # noqa: E731
    summary = write_summary(tmp_path, "eto", {0: {"model": "runs/bc", "scores": scores(0.0)},
                                               1: {"model": "iter_1/model", "scores": scores(0.5), "pairs": 4}})
    print_summary(summary)
    out = capsys.readouterr().out
    assert "maze success" in out and "50.0% (n=2)" in out and "pairs 4" in out
    assert f"summary: {tmp_path / 'summary.json'}; curve: {tmp_path / 'curve.png'}" in out


def test_an_interrupted_best_of_n_says_what_it_kept(tmp_path, monkeypatch, capsys):
    """It printed "interrupted" alone, where eval and collect say how many episodes are kept and what to do."""
    import importlib

    from agentenv.cli import main

    bon = importlib.import_module("agentenv.trainer.best_of_n")
    out = tmp_path / "bon.jsonl"
    out.write_text("")

    def interrupted(cfg, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bon, "run_best_of_n", interrupted)
    assert main(["best-of-n", "--agent", "expert", "--env", "maze", "--out", str(out)]) == 130
    assert f"interrupted: 0 episodes are finished in {out}; rerun the same command to resume" in capsys.readouterr().err


# --- several envs, data of several envs -------------------------------------------------------------------


def test_env_all_is_every_installed_env_for_the_trainers_too(tmp_path, monkeypatch):
    """eval, collect and up took `--env all`; train evol said no env 'all' was installed."""
    import argparse

    import agentenv.registry
    from agentenv.trainer.commands import _settings, add_commands

    monkeypatch.setattr(agentenv.registry, "installed_envs", lambda: ["maze", "wordle"])
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["train", "evol", "--model", "base", "--data", "d.jsonl", "--output-dir", str(tmp_path),
                              "--env", "all"])
    monkeypatch.setattr("agentenv.models.check_model_folder", lambda *a, **k: None)
    assert _settings(AgentEvolConfig, args).envs == ["maze", "wordle"]


def test_data_of_envs_the_run_does_not_play_is_said_and_no_data_is_refused_early(expert_data, tmp_path, capsys):
    """A mixed data file with `--env` naming fewer envs trained on the rest without a word (ETO's SFT too,
    while its record said it trained on the others alone); data of failures only was found by BC, after the
    envs were opened and the run's settings written."""
    mixed = tmp_path / "mixed.jsonl"
    other = [dataclasses.replace(t, item_id="maze_3", env="maze") for t in read_trajectories(expert_data)][:1]
    write_trajectories(mixed, [*read_trajectories(expert_data), *other])

    evol = AgentEvol(AgentEvolConfig(model="m", output_dir=str(tmp_path / "e"), data=[str(mixed)], envs=["toy"]))
    evol.prepare()
    assert len(evol.initial) == 3
    assert ("1 trajectories of the data are of envs this run does not play (maze 1): each iteration trains on them"
            in capsys.readouterr().err)
    eto = ETO(ETOConfig(model="m", output_dir=str(tmp_path / "t"), expert_data=[str(mixed)], envs=["toy"], sft=True))
    eto.prepare()
    assert (len(eto.experts), eto.sft_size) == (2, 3)
    assert "(maze 1): no pairs are built for them; the SFT stage trains on them" in capsys.readouterr().err

    failed = tmp_path / "failed.jsonl"
    write_trajectories(failed, [dataclasses.replace(t, reward=0.0, success=False) for t in read_trajectories(expert_data)])
    cfg = AgentEvolConfig(model="m", output_dir=str(tmp_path / "f"), data=[str(failed)], envs=["toy"], successes_only=True)
    with pytest.raises(ValueError, match=r"no successful trajectories in .*failed.jsonl"):
        run_agentevol(cfg, sources=toy_sources(), progress=False)
    assert not (tmp_path / "f").exists()


def test_an_unknown_env_is_said_before_any_note_on_the_data(expert_data, tmp_path, capsys):
    """`train evol --env nosuch` first said that the data's trajectories were of envs the run does not play."""
    from agentenv.registry import UnknownEnv

    cfg = AgentEvolConfig(model="m", output_dir=str(tmp_path / "e"), data=[str(expert_data)], envs=["nosuch"])
    with pytest.raises(UnknownEnv, match="no installed environment or server group .nosuch."):
        run_agentevol(cfg, progress=False)
    assert capsys.readouterr().err == "" and not (tmp_path / "e").exists()


def test_tasks_both_explored_and_evaluated_are_warned_of(expert_data, capsys):
    """--explore-tasks 0 1 2 with eval on the same tasks trained on the eval tasks without a word.  The tasks
    compared are the ones the run explores: narrowed to the data's, then limited."""
    def warned(**settings) -> str:
        cfg = AgentEvolConfig(model="m", output_dir="o", data=[str(expert_data)], envs=["toy"], **settings)
        run = AgentEvol(cfg)
        run.prepare()
        run.envs = toy_sources()
        run._warn_of_tasks_explored_and_evaluated()
        return capsys.readouterr().err

    assert "toy: tasks 100, 101 are both explored and evaluated" in warned(explore_tasks=[100, 101, 2], eval_limit=2)
    assert "both explored" not in warned()  # train against test
    assert "toy: tasks 1 are both explored" in warned(explore_tasks=[2, 3, 1, 0], explore_limit=1,
                                                      explore_items="data", eval_tasks=[1, 2])


def test_a_second_run_into_a_busy_run_folder_names_the_folder(expert_data, tmp_path):
    """ETO into a folder another ETO ran in said '.../iter_0/eval.jsonl is being written by another run: ...
    give another --out', a flag the trainers do not have."""
    from agentenv.processes import held_by_this_run

    out = tmp_path / "evol"
    out.mkdir()
    cfg = AgentEvolConfig(model="m", output_dir=str(out), data=[str(expert_data)], envs=["toy"], iterations=1)
    with held_by_this_run(out, "busy"), pytest.raises(ValueError, match=r"evol is in use by another run: "
                                                                         r"wait for it to end, or give another --output-dir"):
        run_agentevol(cfg, sources=toy_sources(), progress=False)


def test_every_listed_beta_is_checked():
    """--iteration-betas 0.1 -1 with --iterations 1 was taken: the -1 ran once --iterations was raised."""
    with pytest.raises(ValueError, match="beta"):
        ETOConfig(model="m", output_dir="o", expert_data=["e"], envs=["toy"], iterations=1, iteration_betas=[0.1, -1])


def test_a_resume_refused_for_other_settings_says_what_they_were(tmp_path):
    from agentenv.trainer.runs import check_run_config

    settings = {"output_dir": str(tmp_path), "envs": ["maze", "babyai"], "iterations": 1}
    check_run_config(tmp_path, settings)
    (tmp_path / "iter_0").mkdir()
    with pytest.raises(ValueError, match=re.escape("(envs ['maze', 'babyai'] (now ['babyai', 'maze']))")):
        check_run_config(tmp_path, settings | {"envs": ["babyai", "maze"]})
