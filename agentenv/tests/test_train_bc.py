"""Behavioural cloning on the tiny random Llama: the loss falls, resume is exact, accumulation and
processes do not change the result, and the saved model is a normal Hugging Face folder."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from agentenv.data.trajectory import Trajectory, write_trajectories
from agentenv.testing import held_elsewhere, train_under_torchrun
from agentenv.trainer.bc import BCConfig, build_examples, train_bc
from agentenv.trainer.engine import CHECKPOINTS, LOG_FILE, is_done, read_log

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    trajectories = []
    for i in range(8):
        t = Trajectory.start("maze", i, "You are an agent in a maze. Reach the goal.")
        t.add_observation(f"Your position is {i}, 4. Available actions: move up, move down")
        t.add_reply(f"Thought:\nI should move toward the goal.\n\nAction:\nmove {'up' if i % 2 else 'down'}")
        t.add_observation("There are walls to your left and right.")
        t.add_reply("Thought:\nThe goal is above.\n\nAction:\nmove up")
        trajectories.append(t)
    path = tmp_path_factory.mktemp("data") / "maze.jsonl"
    write_trajectories(path, trajectories)
    return path


def config(base_model: Path, data: Path, out: Path, **overrides) -> BCConfig:
    settings = dict(
        model=str(base_model), output_dir=str(out), data=[str(data)], max_steps=4, batch_size=4,
        learning_rate=3e-3, warmup_ratio=0.0, lr_scheduler="linear", seed=1, max_length=512,
    )
    settings.update(overrides)
    return BCConfig(**settings)


def fixed_batch(cfg: BCConfig):
    from agentenv.data.tokenize import DataCollator
    from agentenv.trainer.engine import load_tokenizer

    tokenizer = load_tokenizer(cfg)
    return DataCollator(tokenizer.pad_token_id)(build_examples(cfg, tokenizer)[0])


def model_loss(path: Path, batch) -> float:
    from transformers import AutoModelForCausalLM

    from agentenv.trainer.losses import batch_lm_loss

    return batch_lm_loss(AutoModelForCausalLM.from_pretrained(path), batch)


def test_successes_only_leaves_out_failed_episodes_and_a_mix_is_named(tmp_path, caplog):
    import json as json_

    from agentenv.trainer.bc import training_trajectories

    def episode(i: int, success: bool) -> Trajectory:
        t = Trajectory.start("maze", i, "Reach the goal.", success=success, reward=float(success))
        t.add_observation("You are at 0, 0.")
        t.add_reply("Thought:\nUp.\n\nAction:\nmove up")
        return t

    collected = tmp_path / "collected.jsonl"  # an expert's collect --out file keeps its failures too
    write_trajectories(collected, [episode(0, True), episode(1, False), episode(2, True)])
    released = tmp_path / "released.json"  # AgentGym's release: no reward, no success
    released.write_text(json_.dumps([{"item_id": "maze_9", "conversations": episode(9, True).to_json()["conversations"]}]))

    with caplog.at_level("WARNING", logger="agentenv.trainer.bc"):
        every = training_trajectories([str(collected), str(released)], successes_only=False)
    assert [t.item_id for t in every] == ["maze_0", "maze_1", "maze_2", "maze_9"]
    assert "1 of the 4 episodes" in caplog.text and "--successes-only" in caplog.text
    kept = training_trajectories([str(collected), str(released)], successes_only=True)
    assert [t.item_id for t in kept] == ["maze_0", "maze_2", "maze_9"]

    walks = tmp_path / "walks.jsonl"  # failures only (random walks) are deliberate: no warning
    write_trajectories(walks, [episode(3, False), episode(4, False)])
    caplog.clear()
    assert len(training_trajectories([str(walks)], successes_only=False)) == 2 and not caplog.text
    with pytest.raises(ValueError, match="no successful trajectories in"):
        training_trajectories([str(walks)], successes_only=True)

    caplog.clear()  # a file given twice (or two runs' files that share episodes) is trained twice, and said
    with caplog.at_level("WARNING", logger="agentenv.trainer.bc"):
        twice = training_trajectories([str(walks), str(walks)], successes_only=False)
    assert len(twice) == 4 and "2 of the 4 trajectories in" in caplog.text and "repeat an earlier one" in caplog.text


def test_one_step_lowers_the_loss_on_a_fixed_batch(base_model, data, tmp_path):
    cfg = config(base_model, data, tmp_path / "bc", max_steps=1, batch_size=8)  # one step sees all 8
    batch = fixed_batch(cfg)
    before = model_loss(base_model, batch)
    out = train_bc(cfg)
    after = model_loss(out, batch)
    assert after < before - 0.05
    # the logged loss of step 1 is the base model's loss on that batch (mean over trained tokens)
    assert read_log(out)[0]["loss"] == pytest.approx(before, rel=1e-4)
    (line,) = read_log(out)  # the figures benchmarks/train_throughput.py reads: time, and peak RSS on CPU
    assert line["elapsed_s"] > 0 and line["tokens_per_s_per_process"] > 0 and 0.05 < line["peak_memory_gib"] < 64
    assert is_done(out) and (out / "model.safetensors").exists() and (out / "chat_template.jinja").exists()


def test_a_run_draws_its_loss_curve_and_reports_to_a_tracker_when_asked(base_model, data, tmp_path, capsys):
    pytest.importorskip("tensorboardX")
    out = train_bc(config(base_model, data, tmp_path / "bc", max_steps=3, batch_size=2, report_to="tensorboard"))
    assert (out / "loss_curve.png").read_bytes().startswith(b"\x89PNG")
    assert list(out.rglob("events.out.tfevents.*"))  # the tracker's event file, under the run's folder
    printed = "".join(capsys.readouterr())  # the lines go to stderr, beside eval's
    assert printed.count("train step") <= 4  # not a line per optimiser step: a bar, or a line a tenth


def test_resume_gives_the_same_next_losses(base_model, data, tmp_path, caplog):
    """The tiny Llama ties its output layer to its embeddings, as SmolLM2 does: a checkpoint leaves the tied
    copy out and the resume ties it again."""
    full = tmp_path / "full"
    train_bc(config(base_model, data, full, save_every=2, delete_checkpoints_when_done=False))
    uninterrupted = read_log(full)
    assert [line["step"] for line in uninterrupted] == [1, 2, 3, 4]

    # a run "killed" after step 2: it has the step-2 checkpoint and the log up to there, nothing else
    killed = tmp_path / "killed"
    (killed / CHECKPOINTS).mkdir(parents=True)
    shutil.copytree(full / CHECKPOINTS / "step-2", killed / CHECKPOINTS / "step-2")
    (killed / LOG_FILE).write_text("".join(json.dumps(line) + "\n" for line in uninterrupted[:2]))
    (killed / CHECKPOINTS / "step-3").mkdir()  # killed while saving step 3: no trainer state written
    (killed / CHECKPOINTS / "step-3" / "model.safetensors").write_bytes(b"cut short")
    train_bc(config(base_model, data, killed, save_every=2, delete_checkpoints_when_done=False))

    resumed = read_log(killed)
    assert [line["step"] for line in resumed] == [1, 2, 3, 4]
    for a, b in zip(resumed[2:], uninterrupted[2:], strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-6, abs=1e-7)
        assert a["lr"] == pytest.approx(b["lr"])
    assert sorted(p.name for p in (killed / CHECKPOINTS).iterdir()) == ["step-2"]  # the partial save is gone
    assert "Removed shared tensor" not in caplog.text  # accelerate's warning on tied weights, answered here


def test_gradient_accumulation_matches_a_big_batch(base_model, data, tmp_path):
    big = read_log(train_bc(config(base_model, data, tmp_path / "big", max_steps=2, batch_size=4)))
    accumulated = read_log(
        train_bc(config(base_model, data, tmp_path / "acc", max_steps=2, batch_size=2, gradient_accumulation_steps=2))
    )
    for a, b in zip(big, accumulated, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)


def test_a_checkpoint_saved_before_the_epoch_was_whole_steps_goes_on_in_its_own_order(
    base_model, data, tmp_path, monkeypatch
):
    """Its steps were counted with an epoch of micro-batches: drawn anew, it was refused as 'a run of 5 steps,
    this one has 6' with the first run's settings given, or, with --max-steps, went on over other batches."""
    import agentenv.trainer.engine as engine

    settings = dict(max_steps=0, num_epochs=3, batch_size=3, gradient_accumulation_steps=2, save_every=1,
                    save_total_limit=10, delete_checkpoints_when_done=False)
    out = train_bc(config(base_model, data, tmp_path / "bc", **settings))
    assert [line["step"] for line in read_log(out)] == [1, 2, 3, 4, 5, 6]  # 2 whole steps an epoch
    (out / "train_state.json").unlink()
    for late in (4, 5, 6):
        shutil.rmtree(out / CHECKPOINTS / f"step-{late}", ignore_errors=True)
    state = out / CHECKPOINTS / "step-3" / "trainer_state.json"
    saved = json.loads(state.read_text())
    assert saved["data"]["order"] == 2
    # as the code before saved it: no order, and 5 steps (an epoch of 3 micro-batches, 9 over 2 a step)
    state.write_text(json.dumps(saved | {"total_steps": 5, "data": {k: v for k, v in saved["data"].items() if k != "order"}}))
    drawn, original = [], engine.MicroBatches
    monkeypatch.setattr(engine, "MicroBatches", lambda *args: drawn.append(args[-1]) or original(*args))
    train_bc(config(base_model, data, out, **settings))
    assert drawn == [1] and [line["step"] for line in read_log(out)] == [1, 2, 3, 4, 5]
    assert json.loads((out / CHECKPOINTS / "step-4" / "trainer_state.json").read_text())["data"]["order"] == 1


def test_examples_are_held_at_4_bytes_a_token_with_the_digest_of_lists(base_model, data, tmp_path):
    """Python lists of ints took about 40 bytes a token (2.5 GB for 15,000 AgentGym-size conversations); a
    run's checkpoints record the data's digest, which must not change with the holding."""
    from array import array

    from agentenv.trainer.engine import data_digest, load_tokenizer

    for packing in (False, True):
        cfg = config(base_model, data, tmp_path / "bc", packing=packing)
        examples, _ = build_examples(cfg, load_tokenizer(cfg))
        assert all(isinstance(v, array) and v.itemsize == 4 for e in examples for v in e.values())
        assert data_digest(examples) == data_digest([{k: list(v) for k, v in e.items()} for e in examples])


def test_accumulation_sees_the_big_batchs_examples_across_an_epochs_end(base_model, data, tmp_path):
    """8 examples in steps of 6: an epoch is 2 steps, the second wrapping round. An epoch was counted in
    micro-batches (3 of 3 examples), so accumulation's step 2 spanned two epochs' examples and every step
    after it differed from the big batch's."""
    from agentenv.trainer.engine import MicroBatches

    def steps(batch: int, world: int, accumulation: int) -> list[list[int]]:
        orders = [MicroBatches(8, batch, world, rank, seed=1, accumulation=accumulation) for rank in range(world)]
        return [sorted(i for m in range(s * accumulation, (s + 1) * accumulation) for o in orders for i in o.indices(m))
                for s in range(6)]

    assert steps(3, 1, 2) == steps(3, 2, 1) == steps(6, 1, 1)
    assert MicroBatches(8, 3, 1, 0, seed=1, accumulation=2).per_epoch == 4  # 2 steps of 2 micro-batches
    big = read_log(train_bc(config(base_model, data, tmp_path / "big", max_steps=3, batch_size=6)))
    accumulated = read_log(
        train_bc(config(base_model, data, tmp_path / "acc", max_steps=3, batch_size=3, gradient_accumulation_steps=2))
    )
    assert [a["loss"] for a in accumulated] == pytest.approx([b["loss"] for b in big], rel=1e-5)


def test_finished_run_is_not_repeated(base_model, data, tmp_path):
    out = train_bc(config(base_model, data, tmp_path / "bc", max_steps=2, save_every=1))
    assert not (out / CHECKPOINTS).exists()  # deleted once the final model is saved
    out = train_bc(config(base_model, data, tmp_path / "bc", max_steps=1, resume=False))
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    train_bc(config(base_model, data, tmp_path / "bc", max_steps=1))
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp
    train_bc(config(base_model, data, tmp_path / "bc", max_steps=1, resume=False))  # unless told to start over
    assert (out / "model.safetensors").stat().st_mtime_ns != stamp
    # a finished run of other settings, or of another trainer, is no rerun of it: refused, not returned as done
    with pytest.raises(ValueError, match=r"holds a finished run with other settings .*\(learning_rate\)"):
        train_bc(config(base_model, data, tmp_path / "bc", max_steps=1, learning_rate=1e-3))
    from agentenv.trainer.dpo import DPOConfig, train_dpo

    # named as such (it said "other settings (pairs, warmup_ratio)" and offered --no-resume, which trained
    # over the BC model), --no-resume or not
    for resume in (True, False):
        with pytest.raises(ValueError, match="bc holds a bc run: give another --output-dir \\(this dpo run would train over"):
            train_dpo(DPOConfig(model=str(base_model), output_dir=str(out), pairs=["p.jsonl"], max_steps=1, resume=resume))


def test_a_finished_run_over_data_that_changed_since_is_refused(base_model, data, tmp_path, capsys):
    """A run that trained on a results file an evaluation was still writing (169 of 400 episodes) said
    "nothing to train" when rerun once the file was whole: a finished run recorded its settings, not its data."""
    grown = tmp_path / "grown.jsonl"
    grown.write_bytes(data.read_bytes())
    with held_elsewhere(grown):  # a run still writing the file: said at once
        out = train_bc(config(base_model, grown, tmp_path / "bc", max_steps=1))
    assert f"[agentenv] warning: {grown} is being written by a run now: only the episodes it holds so far" in capsys.readouterr().err
    train_bc(config(base_model, grown, tmp_path / "bc", max_steps=1))  # the same bytes: nothing to train
    assert "holds this run, finished: nothing to train" in capsys.readouterr().err
    grown.write_bytes(data.read_bytes() + data.read_bytes().splitlines(keepends=True)[0])
    with pytest.raises(ValueError, match=r"bc holds a finished run trained on other data: the files of --data changed "
                                         r"since it read them: give another --output-dir, or --no-resume"):
        train_bc(config(base_model, grown, tmp_path / "bc", max_steps=1))
    assert read_log(train_bc(config(base_model, grown, out, max_steps=1, resume=False)))  # trains again


def test_a_folder_another_process_trains_in_is_refused_before_the_data_is_read(base_model, tmp_path):
    out = tmp_path / "bc"
    out.mkdir()
    with held_elsewhere(out), pytest.raises(ValueError, match="bc is being trained into by another run"):
        train_bc(config(base_model, tmp_path / "no-such-data.jsonl", out))  # the data is never read


def test_packed_rows_give_the_loss_of_their_conversations_one_by_one(base_model, data, tmp_path):
    """Conversations packed into one row do not see each other (the rows are padded to one length too)."""
    import torch
    from transformers import AutoModelForCausalLM

    from agentenv.data.tokenize import DataCollator
    from agentenv.trainer.engine import load_tokenizer
    from agentenv.trainer.losses import LanguageModelObjective

    cfg = config(base_model, data, tmp_path / "bc", max_length=300)
    tokenizer = load_tokenizer(cfg)
    alone, _ = build_examples(cfg, tokenizer)
    packed, _ = build_examples(config(base_model, data, tmp_path / "bc", max_length=300, packing=True), tokenizer)
    assert len(packed) < len(alone) and len({len(row["input_ids"]) for row in packed}) > 1
    model = AutoModelForCausalLM.from_pretrained(base_model)
    collate, objective = DataCollator(tokenizer.pad_token_id), LanguageModelObjective()
    with torch.no_grad():
        one_by_one = sum(float(objective.loss_sum(model, collate([e]))[0]) for e in alone)
        together = float(objective.loss_sum(model, collate(packed))[0])
    assert together == pytest.approx(one_by_one, rel=1e-5)


def test_a_run_killed_while_deleting_its_checkpoints_is_done(base_model, data, tmp_path, monkeypatch):
    from agentenv.trainer import engine

    def killed(path, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine.shutil, "rmtree", killed)
    out = tmp_path / "bc"
    with pytest.raises(KeyboardInterrupt):
        train_bc(config(base_model, data, out, save_every=2))
    assert is_done(out) and (out / "model.safetensors").exists()  # a rerun keeps the model, trains nothing


def test_checkpoints_of_another_run_are_refused_or_cleared(base_model, data, tmp_path):
    out = tmp_path / "bc"
    train_bc(config(base_model, data, out, max_steps=6, save_every=1, delete_checkpoints_when_done=False))
    (out / "train_state.json").unlink()  # an earlier, unfinished run of 6 steps left step-5 and step-6
    with pytest.raises(ValueError, match=r"step-5 was saved with other settings \(max_steps\)"):
        train_bc(config(base_model, data, out, save_every=1))
    train_bc(config(base_model, data, out, save_every=1, resume=False, delete_checkpoints_when_done=False))
    assert sorted(p.name for p in (out / CHECKPOINTS).iterdir()) == ["step-2", "step-3"]  # this run's (4 is final)
    assert [line["step"] for line in read_log(out)] == [1, 2, 3, 4]


def test_a_resumed_run_refuses_other_settings_but_not_other_bookkeeping(base_model, data, tmp_path):
    out = tmp_path / "bc"
    train_bc(config(base_model, data, out, save_every=1, delete_checkpoints_when_done=False))
    (out / "train_state.json").unlink()  # unfinished: it resumes from step-3
    with pytest.raises(ValueError, match=r"other settings \(batch_size, learning_rate\)"):
        train_bc(config(base_model, data, out, save_every=1, learning_rate=1e-5, batch_size=2))
    # how often it saves and logs, and how many checkpoints it keeps, may change
    train_bc(config(base_model, data, out, save_every=2, save_total_limit=5, log_every=2))
    assert [line["step"] for line in read_log(out)] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--batch-size", "0", "batch_size must be at least 1"),
        ("--gradient-accumulation-steps", "0", "gradient_accumulation_steps must be at least 1"),
        ("--log-every", "0", "log_every must be at least 1"),
        ("--num-epochs", "0", "num_epochs must be positive"),
        ("--warmup-ratio", "-1", r"warmup_ratio must lie in \[0, 1\]"),
        ("--gradient-checkpointing", "yes", "gradient_checkpointing must be one of"),
        ("--lr-scheduler", "cosine_restarts", "lr_scheduler must be one of"),
        ("--learning-rate", "0", "learning_rate must be positive"),
        ("--adam-beta1", "1.5", r"adam_beta1 must lie in \[0, 1\)"),
        ("--output-dir", "", "output_dir is empty"),
        ("--deepspeed", "nowhere.json", "deepspeed config nowhere.json: No such file"),
    ],
)
def test_bad_settings_are_refused_before_any_work(tmp_path, flag, value, message):
    from agentenv.cli import main

    out = tmp_path / "bc"
    args = ["train", "bc", "--model", "nowhere", "--data", "none.jsonl", "--output-dir", str(out), "--max-steps", "0"]
    with pytest.raises(SystemExit, match=f"invalid settings: {message}"):
        main([*args, flag, value])
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "flag", "value"),
    [("bc", "--learning-rate", "inf"),  # trained a model of NaNs
     ("dpo", "--beta", "nan"), ("dpo", "--nll-weight", "inf"),  # trained to NaN weights, exit 0
     ("evol", "--keep-threshold", "nan"), ("eto", "--beta", "nan")],  # kept nothing / ran the whole loop
)
def test_a_number_flag_refuses_nan_and_inf(tmp_path, capsys, command, flag, value):
    from agentenv.cli import main

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exited:
        main(["train", command, "--model", "nowhere", "--output-dir", str(out), flag, value])
    assert exited.value.code == 2 and f"argument {flag}: '{value}' is not a finite number" in capsys.readouterr().err
    assert not out.exists()



def test_a_number_flag_given_text_says_it_is_no_number(capsys):
    """It said "invalid finite_float value": the name of a function."""
    from agentenv.cli import main

    with pytest.raises(SystemExit):
        main(["train", "evol", "--model", "nowhere", "--output-dir", "x", "--keep-threshold", "abc"])
    assert "argument --keep-threshold: 'abc' is not a number" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('{"learning_rate": "fast"}', "learning_rate must be a finite number, not 'fast'"),
        ('{"learning_rate": NaN}', "learning_rate must be a finite number, not nan"),
        ('{"learning_rate": 1' + "0" * 400 + '}', "learning_rate must be a finite number, not 1000"),  # OverflowError
        ('{"data": "a.jsonl"}', "data must be a list of strings, not 'a.jsonl'"),
        ('{"resume": "yes"}', "resume must be true or false, not 'yes'"),
        ('{"warp": 9}', r"unknown settings \['warp'\]"),
        ("{learning_rate: 1}", "is not JSON"),
        ("[1, 2]", "must hold a JSON object of settings, not a list"),
    ],
)
def test_a_config_file_mistake_names_the_file_and_setting(tmp_path, config, message):
    from agentenv.cli import main

    (tmp_path / "bc.json").write_text(config)
    out = tmp_path / "bc"
    with pytest.raises(SystemExit, match=f"^error: {tmp_path / 'bc.json'}.*{message}"):
        main(["train", "bc", "--config", str(tmp_path / "bc.json"), "--model", "m", "--data", "x.jsonl",
              "--output-dir", str(out)])
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "missing"),
    [("bc", "--data"), ("dpo", "--pairs"), ("grpo", "--env"), ("eto", "--env, --expert-data"),
     ("evol", "--data, --env"), ("rft", "--data, --env")],
)
def test_a_setting_no_run_can_do_without_is_marked_and_asked_for(tmp_path, capsys, command, missing):
    """``--data`` and ``--env`` have empty defaults in Python, but a run without them failed only after the
    run had begun (BC's after its accelerator started), and help did not say they were needed."""
    from agentenv.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["train", command, "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    for flag in missing.split(", "):
        its_help = shown.split(f"\n  {flag} ", 1)[1].split("\n  -", 1)[0]
        assert "(required)" in " ".join(its_help.split()), its_help
    out = tmp_path / "run"
    with pytest.raises(SystemExit, match=f"^error: missing settings: {missing}$"):
        main(["train", command, "--model", "m", "--output-dir", str(out)])
    assert not out.exists()


@pytest.mark.parametrize("command", ["bc", "evol", "rft", "grpo"])
@pytest.mark.parametrize(("model", "problem"), [("runs/typo/model", "does not exist"),
                                                ("/", r"is not a Hugging Face model folder \(no config.json\)")])
def test_a_mistyped_model_is_one_line_and_writes_nothing(tmp_path, command, model, problem):
    from agentenv.cli import main

    out = tmp_path / "run"
    data = ["--data", "x.jsonl"] if command != "grpo" else []
    envs = ["--env", "babyai"] if command != "bc" else []
    with pytest.raises(SystemExit, match=f"^error: --model {model}: {problem}; give the folder of a saved model"):
        main(["train", command, "--model", model, *data, *envs, "--output-dir", str(out)])
    assert not out.exists()  # a rerun with the path put right starts afresh


def test_a_hub_name_is_checked_at_once_against_the_cache_and_the_hub(tmp_path, monkeypatch):
    """A name that is no folder here must be in the Hugging Face cache or on the Hub: a typo is one line in
    seconds, where transformers would retry for about a minute on a machine without the Hub."""
    from huggingface_hub import constants

    from agentenv.cli import main
    from agentenv.models import check_model_folder

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    out = tmp_path / "run"
    command = ["train", "bc", "--data", "x.jsonl", "--output-dir", str(out), "--model"]
    # on this machine the Hub is out of reach; on one that reaches it, the name is not there: one line either way
    with pytest.raises(SystemExit, match=r"^error: --model agentenv-tests/no-such-model: not a folder here nor "):
        main([*command, "agentenv-tests/no-such-model"])
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(SystemExit, match="HF_HUB_OFFLINE is set with no copy of it in the Hugging Face cache"):
        main([*command, "agentenv-tests/no-such-model"])
    assert not out.exists()

    repo = tmp_path / "hub" / "models--agentenv-tests--cached"  # the cache's own layout
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    check_model_folder("agentenv-tests/cached")  # found offline, without a word


class OtherProcess:
    """What save_final sees on a process other than the main one under ZeRO-3: DeepSpeed gathers the
    weights onto the main process only and gives the others None."""

    is_main_process = False

    def wait_for_everyone(self) -> None:
        pass

    def get_state_dict(self, model):
        return None

    def unwrap_model(self, model):
        return model


def test_only_the_main_process_writes_the_model(base_model, data, tmp_path):
    """A process other than the main one writes nothing: its copy of the weights (ZeRO-3's empty shards)
    could overwrite the main process's model.safetensors (seen on transformers 4.57, which writes weight
    files on every process whatever is_main_process says)."""
    from transformers import AutoModelForCausalLM

    from agentenv.trainer.engine import load_tokenizer, save_final

    cfg = config(base_model, data, tmp_path / "bc")
    model = AutoModelForCausalLM.from_pretrained(base_model)
    save_final(cfg, OtherProcess(), model, load_tokenizer(cfg), steps=1)
    out = Path(cfg.output_dir)
    written = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert written == [], f"a non-main process wrote {written}"


def torchrun_bc(out: Path, base_model: Path, data: Path, *options: str) -> None:
    """BC of the tiny Llama by 2 CPU processes under torchrun (4 steps of batch 2 each, a global 4)."""
    train_under_torchrun(
        "bc", out, "--model", str(base_model), "--data", str(data), "--max-steps", "4", "--batch-size", "2",
        "--learning-rate", "3e-3", "--warmup-ratio", "0", "--lr-scheduler", "linear", "--seed", "1",
        "--max-length", "512", *options,
    )


@pytest.mark.slow
@pytest.mark.timeout(900)  # up to three trainings and two torchrun launches on a loaded machine
@pytest.mark.parametrize("stage", [2, 3])
def test_deepspeed_zero_under_torchrun_on_cpu(base_model, data, tmp_path, stage):
    """examples/deepspeed/zero{2,3}.json with 2 CPU processes (DeepSpeed's CPU accelerator, gloo): the
    losses and the final weights of one process with the whole batch; under ZeRO-3, whose checkpoint is
    sharded, a run killed after step 2 resumes from its DeepSpeed checkpoint with the same next losses
    (ZeRO-2's checkpoint is saved and loaded by the same calls: a second resume would add 17 s, no path)."""
    from safetensors.torch import load_file

    single = train_bc(config(base_model, data, tmp_path / "one"))
    full = tmp_path / "zero"
    zero = ("--deepspeed", str(ROOT / "examples" / "deepspeed" / f"zero{stage}.json"), "--save-every", "2")
    torchrun_bc(full, base_model, data, *zero, "--no-delete-checkpoints-when-done")
    uninterrupted = read_log(full)
    assert [line["step"] for line in uninterrupted] == [1, 2, 3, 4] and is_done(full)
    for a, b in zip(uninterrupted, read_log(single), strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4)
    assert (full / CHECKPOINTS / "step-2" / "pytorch_model").is_dir()  # DeepSpeed's own checkpoint layout
    weights, expected = load_file(full / "model.safetensors"), load_file(single / "model.safetensors")
    for name, tensor in expected.items():  # ZeRO-3's shards gathered into whole tensors
        assert weights[name].shape == tensor.shape
        assert float((weights[name] - tensor).abs().max()) < 1e-4
    if stage == 2:
        return

    killed = tmp_path / "killed"
    (killed / CHECKPOINTS).mkdir(parents=True)
    shutil.copytree(full / CHECKPOINTS / "step-2", killed / CHECKPOINTS / "step-2")
    (killed / LOG_FILE).write_text("".join(json.dumps(line) + "\n" for line in uninterrupted[:2]))
    torchrun_bc(killed, base_model, data, *zero)
    resumed = read_log(killed)
    assert [line["step"] for line in resumed] == [1, 2, 3, 4]
    for a, b in zip(resumed[2:], uninterrupted[2:], strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-6, abs=1e-7)


@pytest.mark.slow
def test_two_process_gloo_run_under_torchrun(base_model, data, tmp_path):
    """2 processes x batch 2 see the same global batch as 1 process x batch 4: same losses."""
    single = read_log(train_bc(config(base_model, data, tmp_path / "one")))
    out = tmp_path / "two"
    torchrun_bc(out, base_model, data)
    two = read_log(out)
    assert [line["step"] for line in two] == [1, 2, 3, 4] and is_done(out)
    for a, b in zip(two, single, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4)


def test_a_path_given_relative_is_written_resolved_so_a_run_resumes_from_another_folder(tmp_path, monkeypatch):
    """--data given relative was saved as written: rerun from another folder (the same file, written relative
    to there), the run was refused as 'saved with other settings (data)'."""
    import argparse

    from agentenv.trainer.commands import add_commands
    from agentenv.trainer.config_args import changed_settings, dataclass_from_args

    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))

    def config(data: str) -> BCConfig:
        args = parser.parse_args(["train", "bc", "--model", "org/hub-model", "--data", data, "--output-dir", "out"])
        return dataclass_from_args(BCConfig, args)

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "d.jsonl").write_text("")
    monkeypatch.chdir(tmp_path / "a")
    first = config("d.jsonl")
    assert first.data == [str(tmp_path / "a" / "d.jsonl")] and first.model == "org/hub-model"  # a Hub id stays
    saved_before = first.to_json() | {"data": ["d.jsonl"]}  # a run saved before paths were written resolved
    monkeypatch.chdir(tmp_path)
    assert changed_settings(first.to_json(), config("a/d.jsonl").to_json()) == []
    monkeypatch.chdir(tmp_path / "a")
    assert changed_settings(saved_before, config("d.jsonl").to_json()) == []  # resumed where it was started
    assert changed_settings(first.to_json(), config("d.jsonl").to_json() | {"model": "org/other"}) == ["model"]


def test_a_resume_over_other_data_or_processes_is_refused_and_settings_before_the_model_loads(
    base_model, data, tmp_path, monkeypatch, capsys
):
    """Data appended to the training file between a kill and the rerun (a `collect` into it), or another
    number of processes, resumed at step N over other batches; another setting was refused only after the
    data was tokenized and the model loaded (minutes for a 7B)."""
    from agentenv.trainer import bc

    out, changed = tmp_path / "bc", tmp_path / "maze.jsonl"
    shutil.copy(data, changed)
    train_bc(config(base_model, changed, out, save_every=1, delete_checkpoints_when_done=False))
    (out / "train_state.json").unlink()  # unfinished: it resumes from step-3
    state = out / CHECKPOINTS / "step-3" / "trainer_state.json"
    saved = json.loads(state.read_text())
    assert saved["data"]["examples"] == 8 and saved["data"]["processes"] == 1

    lines = changed.read_text().splitlines(keepends=True)
    changed.write_text("".join(lines + lines[:1]))
    with pytest.raises(ValueError, match=r"step-3 was saved training on other data \(8 examples, now 9\)"):
        train_bc(config(base_model, changed, out, save_every=1))
    changed.write_text("".join(lines[1:] + lines[:1]))  # the same examples in another order
    with pytest.raises(ValueError, match=r"other data \(8 examples, now 8, other ones\)"):
        train_bc(config(base_model, changed, out, save_every=1))
    changed.write_text("".join(lines))

    state.write_text(json.dumps(saved | {"data": saved["data"] | {"processes": 2}}))
    with pytest.raises(ValueError, match=r"step-3 was saved by a run of 2 processes, this one has 1: a step's batch"):
        train_bc(config(base_model, changed, out, save_every=1))
    # a ZeRO-2 checkpoint resumed without DeepSpeed ended on a missing pytorch_model.bin (and the reverse on
    # DeepSpeed's bare assertion), although the docs let --deepspeed change on resume
    assert saved["data"]["format"] == "no DeepSpeed"
    state.write_text(json.dumps(saved | {"data": saved["data"] | {"format": "DeepSpeed ZeRO-2"}}))
    with pytest.raises(ValueError, match=r"step-3 was saved training with DeepSpeed ZeRO-2, this run trains with no "
                                         r"DeepSpeed: its optimiser state cannot be read across"):
        train_bc(config(base_model, changed, out, save_every=1))
    state.write_text(json.dumps(saved))

    def loads(*_args):
        raise AssertionError("the tokenizer loaded before the settings were checked")

    monkeypatch.setattr(bc, "load_tokenizer", loads)
    with pytest.raises(ValueError, match=r"other settings \(learning_rate\)"):
        train_bc(config(base_model, changed, out, save_every=1, learning_rate=1e-5))
    for record in ({"processes": 2}, {"format": "DeepSpeed ZeRO-3"}):  # known before the model loads, too
        state.write_text(json.dumps(saved | {"data": saved["data"] | record}))
        with pytest.raises(ValueError, match=r"step-3 was saved (by a run of 2 processes|training with DeepSpeed)"):
            train_bc(config(base_model, changed, out, save_every=1))
    # a checkpoint of an earlier version, with no record to check: it goes on, saying what it cannot check
    state.write_text(json.dumps({k: v for k, v in saved.items() if k != "data"}))
    monkeypatch.undo()
    capsys.readouterr()
    train_bc(config(base_model, changed, out, save_every=1))  # the first run's data and settings: it goes on
    assert [line["step"] for line in read_log(out)] == [1, 2, 3, 4]
    assert "step-3 was saved before checkpoints recorded their data and launch" in capsys.readouterr().err


def test_a_second_run_into_the_same_folder_at_once_is_refused(base_model, data, tmp_path):
    """Two at once: the second resumed the first's checkpoints, deleted its save in progress, and the log
    held 63 lines for 40 steps."""
    from agentenv.processes import held_by_this_run

    out = tmp_path / "bc"
    out.mkdir()
    with held_by_this_run(out, "held by the test"):  # as the first run's main process holds it
        with pytest.raises(ValueError, match=r"bc is being trained into by another run: wait for it to end"):
            train_bc(config(base_model, data, out))
    train_bc(config(base_model, data, out))
    assert [line["step"] for line in read_log(out)] == [1, 2, 3, 4]


def test_data_with_no_trained_turn_says_so_and_a_chat_s_role_names_train(base_model, data, tmp_path, capsys):
    """Every turn loss false (or roles user / assistant, whose replies trained nothing) was refused as "no
    conversation has a trained turn within --max-length: raise it", which no --max-length mends; a clean run
    said nothing of what it trains on."""
    records = [json.loads(line) for line in data.read_text().splitlines()]
    silent = tmp_path / "silent.jsonl"
    silent.write_text("".join(
        json.dumps(r | {"conversations": [t | {"loss": False} for t in r["conversations"]]}) + "\n" for r in records
    ))
    with pytest.raises(ValueError, match=r"no turn of .*silent.jsonl is trained: it has no gpt turn, or each has loss false"):
        train_bc(config(base_model, silent, tmp_path / "silent"))
    chat = tmp_path / "chat.jsonl"
    names = {"human": "user", "gpt": "assistant"}
    chat.write_text("".join(
        json.dumps(r | {"conversations": [t | {"from": names[t["from"]], "loss": None} for t in r["conversations"]]}) + "\n"
        for r in records
    ))
    capsys.readouterr()
    train_bc(config(base_model, chat, tmp_path / "chat", max_steps=1))
    assert re.search(r"8 trajectories: 8/8 conversations kept; [\d,]+ tokens", capsys.readouterr().out)
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps(records[0] | {"conversations": [{"from": "tool", "value": "x"}]}) + "\n")
    with pytest.raises(ValueError, match=r"a turn's from is human, gpt or system \(or user, assistant\), not 'tool'"):
        train_bc(config(base_model, odd, tmp_path / "odd"))


def test_a_run_finished_by_another_while_this_one_loaded_is_not_trained_again(base_model, data, tmp_path, monkeypatch):
    """The folder was held only from the training loop on: a second run that passed the "finished?" check
    while the first trained, then loaded, started over at step 0 once the first had finished (its log wiped)."""
    from agentenv.trainer import bc

    out = tmp_path / "bc"
    train_bc(config(base_model, data, out))
    log = (out / LOG_FILE).read_text()
    monkeypatch.setattr(bc, "already_trained", lambda cfg: False)  # as when the first run was still training
    train_bc(config(base_model, data, out))
    assert (out / LOG_FILE).read_text() == log
    with pytest.raises(ValueError, match="holds a finished run with other settings"):
        train_bc(config(base_model, data, out, learning_rate=1e-4))


def test_a_folder_that_cannot_be_locked_is_trained_with_a_warning(base_model, data, tmp_path, monkeypatch, caplog):
    """NFS locks no folder (EBADF) and Lustre without -o flock nothing (ENOSYS): a run there must still go."""
    import errno
    import fcntl

    def unsupported(fd, operation):
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", unsupported)
    out = tmp_path / "bc"
    train_bc(config(base_model, data, out))
    assert [line["step"] for line in read_log(out)] == [1, 2, 3, 4]
    assert "cannot be locked here (Function not implemented)" in caplog.text


def test_a_run_that_fails_on_a_full_disk_says_the_disk_is_full(tmp_path, monkeypatch):
    """torch's checkpoint writer says ENOSPC as "[enforce fail at inline_container.cc:672] . unexpected pos
    134528 vs 134420"; that line alone was the whole error."""
    import argparse
    from collections import namedtuple

    from agentenv.trainer import commands

    def save(args):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 134528 vs 134420")

    run = commands._trainer_command(save)
    args = argparse.Namespace(output_dir=str(tmp_path / "runs" / "bc"))
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 << 30, 10 << 30, 4096))
    with pytest.raises(SystemExit, match=r"unexpected pos 134528 vs 134420; the disk of .*runs/bc is full \(4,096 "
                                         r"bytes free\): free some and rerun the same command to resume"):
        run(args)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 << 30, 5 << 30, 5 << 30))
    with pytest.raises(RuntimeError, match="unexpected pos"):  # room enough: another cause, as it was
        run(args)
