"""DPO: the loss formula, masked multi-turn log-probabilities, ETO's pairing rule, and one real step."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from agentenv.data.trajectory import Trajectory, Turn
from agentenv.trainer.dpo import (
    REFERENCE_FILE,
    DPOConfig,
    PairCollator,
    PreferencePair,
    cut_rejected,
    dpo_loss,
    make_pair,
    read_pairs,
    tokenize_pairs,
    train_dpo,
    write_pairs,
)
from agentenv.trainer.engine import read_log

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_dpo_loss_matches_a_hand_computed_value():
    import torch

    pc, pr = torch.tensor([-1.0, -4.0]), torch.tensor([-3.0, -2.0])
    rc, rr = torch.tensor([-2.0, -4.0]), torch.tensor([-2.0, -3.0])
    beta = 0.5
    # pair 0: margin = (-1+2) - (-3+2) = 2 -> -log sigmoid(1) = log(1 + e^-1)
    # pair 1: margin = (-4+4) - (-2+3) = -1 -> -log sigmoid(-0.5) = log(1 + e^0.5)
    expected = [math.log(1 + math.exp(-1.0)), math.log(1 + math.exp(0.5))]
    assert dpo_loss(pc, pr, rc, rr, beta).tolist() == pytest.approx(expected, rel=1e-6)
    # IPO: (margin - 1 / (2 beta))^2 with 1 / (2 beta) = 1 -> (2 - 1)^2 and (-1 - 1)^2
    assert dpo_loss(pc, pr, rc, rr, beta, "ipo").tolist() == pytest.approx([1.0, 4.0], rel=1e-6)


def trajectory(idx: int, actions: list[str], reward: float) -> Trajectory:
    t = Trajectory.start("maze", idx, "You are an agent in a maze. Reach the goal.", reward=reward)
    for k, action in enumerate(actions):
        t.add_observation(f"Your position is {k}, 4. Available actions: move up, move down")
        t.add_reply(f"Thought:\nI should move toward the goal.\n\nAction:\n{action}")
    return t


def test_eto_pairing_rule():
    expert = trajectory(1, ["move up", "move up"], 1.0)
    failed = trajectory(1, ["move down"] * 12, 0.0)
    pair = make_pair(expert, failed)
    assert pair.chosen == expert.conversations and pair.chosen_reward == 1.0 and pair.rejected_reward == 0.0
    # the failure is cut to the expert's length + 5 rounds (10 turns), ending on an agent turn
    assert len(pair.rejected) == len(expert.conversations) + 10 and pair.rejected[-1].role == "gpt"
    assert make_pair(expert, trajectory(1, ["move up"], 1.0)) is None  # tie: no pair
    better = trajectory(1, ["move up"], 1.0)
    weaker = trajectory(1, ["move up", "move down"], 0.5)
    flipped = make_pair(weaker, better)  # the explored one wins when its reward is higher
    assert flipped.chosen == better.conversations and flipped.rejected == weaker.conversations
    # an expert trajectory beaten by an explored one stays whole (ETO cuts only a losing explored one)
    longer = trajectory(1, ["move up", "move down"] * 8, 0.5)
    assert make_pair(longer, better).rejected == longer.conversations
    assert cut_rejected([Turn("gpt", "a")], [Turn("human", "x")]) == []


def test_pair_files_roundtrip_and_eto_format(tmp_path):
    pair = make_pair(trajectory(2, ["move up"], 1.0), trajectory(2, ["move down"], 0.0))
    write_pairs(tmp_path / "pairs.jsonl", [pair])
    assert list(read_pairs(tmp_path / "pairs.jsonl")) == [pair]

    import json

    eto = [{"id": "7", "prompt": [{"from": "human", "value": "inst"}, {"from": "gpt", "value": "OK"},
                                  {"from": "human", "value": "task"}],
            "chosen": [{"from": "gpt", "value": "good"}], "rejected": [{"from": "gpt", "value": "bad"}]}]
    (tmp_path / "eto.json").write_text(json.dumps(eto))
    (loaded,) = read_pairs(tmp_path / "eto.json")
    assert [t.trains() for t in loaded.chosen] == [False, False, False, True]  # the prompt's "OK" has no loss
    assert loaded.rejected[-1].value == "bad" and loaded.item_id == "7"


def test_a_pairs_file_mistake_is_one_line_naming_the_file_and_record(base_model, tmp_path):
    from agentenv.cli import main

    (tmp_path / "half.jsonl").write_text('{"chosen": []}\n')
    # a prompt turn's role was taken as it came (a chosen or rejected one's is checked)
    (tmp_path / "role.jsonl").write_text('{"prompt": [{"from": "tool", "value": "x"}], "chosen": [], "rejected": []}\n')
    (tmp_path / "broken.jsonl").write_text('{"chosen": [], "rejected": []}\n{oops\n')
    (tmp_path / "list.json").write_text('[{"x": 1}]')
    (tmp_path / "latin1.json").write_bytes('[{"chosen": "caf\u00e9"}]'.encode("latin-1"))
    (tmp_path / "empty.jsonl").write_text("")  # was "no pair has a trained turn ... within --max-length: raise it"
    expected = {"latin1.json": "not UTF-8 text \\(byte 16\\); a pairs file is JSON",
                "half.jsonl": "line 1 is not a preference pair: it needs chosen and rejected lists",
                "role.jsonl": "line 1 is not a preference pair \\(a turn's from is human, gpt or system",
                "broken.jsonl": "line 2 is not JSON", "list.json": "record 1 is not a preference pair",
                "missing.jsonl": "no such pairs file", "empty.jsonl": "holds no pairs"}
    for name, message in expected.items():
        with pytest.raises(SystemExit, match=f"^error: .*{name}.*{message}|^error: {message}: .*{name}$"):
            main(["train", "dpo", "--model", str(base_model), "--pairs", str(tmp_path / name), "--output-dir", str(tmp_path / "out")])


def pairs() -> list[PreferencePair]:
    out = []
    for i in range(4):
        good = trajectory(i, ["move up", "move up"], 1.0)
        bad = trajectory(i, ["move down", "move left", "move down"], 0.0)
        out.append(make_pair(good, bad))
    return out


def policy_logps(model_path: Path, pair_list: list[PreferencePair], span: str = "turn"):
    from transformers import AutoModelForCausalLM

    from agentenv.trainer.engine import TrainConfig, load_tokenizer
    from agentenv.trainer.losses import _forward_logits, sequence_logprobs

    tokenizer = load_tokenizer(TrainConfig(model=str(model_path), output_dir="unused"))
    examples, _ = tokenize_pairs(pair_list, tokenizer, 1024, span)
    batch = PairCollator(tokenizer.pad_token_id)(examples)
    model = AutoModelForCausalLM.from_pretrained(model_path)
    import torch

    with torch.no_grad():
        logps = sequence_logprobs(_forward_logits(model, batch), batch["labels"])
    return logps[: len(examples)], logps[len(examples) :], model, batch, examples


def test_sequence_logprobs_sum_only_the_agent_turns(base_model):
    import torch

    chosen, _, model, batch, examples = policy_logps(base_model, pairs()[:1])
    ids, labels = examples[0]["chosen_input_ids"], examples[0]["chosen_labels"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].log_softmax(-1)
    by_hand = sum(float(logits[j - 1, ids[j]]) for j in range(1, len(ids)) if labels[j] != -100)
    assert float(chosen[0]) == pytest.approx(by_hand, rel=1e-5)
    n_trained = sum(label != -100 for label in labels)
    assert 0 < n_trained < len(ids) / 2  # observations and the instruction are masked


@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo"])
def test_one_dpo_step_raises_the_chosen_minus_rejected_log_ratio(base_model, tmp_path, loss_type):
    data = pairs()
    write_pairs(tmp_path / "pairs.jsonl", data)
    before_c, before_r, *_ = policy_logps(base_model, data)
    cfg = DPOConfig(
        model=str(base_model), output_dir=str(tmp_path / "dpo"), pairs=[str(tmp_path / "pairs.jsonl")],
        max_steps=1, batch_size=4, learning_rate=1e-3, warmup_ratio=0.0, beta=0.1, seed=0, loss_type=loss_type,
    )
    out = train_dpo(cfg)
    after_c, after_r, *_ = policy_logps(out, data)
    assert float((after_c - after_r).mean()) > float((before_c - before_r).mean()) + 1e-3

    # step 1's policy equals the reference: margin 0, loss log 2 (IPO: (0 - 1 / 0.2)^2); the reference
    # values were saved
    (line,) = read_log(out)
    assert line["loss"] == pytest.approx(math.log(2) if loss_type == "sigmoid" else 25.0, abs=1e-5)
    import json

    saved = [json.loads(s) for s in (out / REFERENCE_FILE).read_text().splitlines()]
    assert [d["chosen"] for d in saved] == pytest.approx(before_c.tolist(), rel=1e-5)


def test_given_reference_values_are_used_only_for_the_tokens_they_cover(base_model):
    from agentenv.trainer.engine import TrainConfig, load_tokenizer

    tokenizer = load_tokenizer(TrainConfig(model=str(base_model), output_dir="unused"))
    given = [dataclasses.replace(p, ref_chosen_logp=-1.5, ref_rejected_logp=-2.5) for p in pairs()]
    (whole,), _ = tokenize_pairs(given[:1], tokenizer, 1024)
    assert (whole["ref_chosen"], whole["ref_rejected"]) == (-1.5, -2.5)
    (action,), _ = tokenize_pairs(given[:1], tokenizer, 1024, "action")  # they cover whole turns
    assert (action["ref_chosen"], action["ref_rejected"]) == (None, None)
    # a max_length that cuts the rejected side's last turn but not the chosen side's
    cut = len(whole["rejected_input_ids"]) - 3
    assert len(whole["chosen_input_ids"]) <= cut
    (short,), _ = tokenize_pairs(given[:1], tokenizer, cut)
    assert (short["ref_chosen"], short["ref_rejected"]) == (-1.5, None)


def dpo_config(model, out, pair_file, **overrides) -> DPOConfig:
    settings = dict(
        model=str(model), output_dir=str(out), pairs=[str(pair_file)], max_length=1024,
        max_steps=1, batch_size=4, learning_rate=1e-3, warmup_ratio=0.0, beta=0.1, seed=0,
    )
    return DPOConfig(**(settings | overrides))


def perturbed_copy(model: Path, out: Path) -> Path:
    """Another starting model: ``model``'s weights with noise added."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(1)
    other = AutoModelForCausalLM.from_pretrained(model)
    with torch.no_grad():
        for w in other.parameters():
            w.add_(0.05 * torch.randn_like(w))
    other.save_pretrained(out)
    AutoTokenizer.from_pretrained(model).save_pretrained(out)
    return out


@pytest.mark.parametrize("saved_by", ["a run on other pairs", "a run from another model", "a run killed while writing"])
def test_saved_reference_values_are_reused_only_when_they_fit(base_model, tmp_path, saved_by):
    """A rerun in the same folder reuses the reference values an earlier run saved only for the same model,
    pairs, tokens and masks: values for other pairs (here each pair reversed) or another starting model
    would make step 1's loss differ from log 2, and a file cut short neither stops the run nor is half used."""
    import json
    import shutil

    write_pairs(tmp_path / "pairs.jsonl", pairs())
    reversed_pairs = [dataclasses.replace(p, chosen=p.rejected, rejected=p.chosen) for p in pairs()]
    write_pairs(tmp_path / "reversed.jsonl", reversed_pairs)
    earlier = {
        "a run on other pairs": dict(pair_file=tmp_path / "reversed.jsonl"),
        "a run from another model": dict(model=perturbed_copy(base_model, tmp_path / "other_model")),
        "a run killed while writing": {},
    }[saved_by]
    first = train_dpo(dpo_config(
        earlier.get("model", base_model), tmp_path / "first", earlier.get("pair_file", tmp_path / "pairs.jsonl")
    ))
    out = tmp_path / "dpo"
    out.mkdir()
    text = (first / REFERENCE_FILE).read_text()
    (out / REFERENCE_FILE).write_text(text[:-20] if saved_by == "a run killed while writing" else text)
    (line,) = read_log(train_dpo(dpo_config(base_model, out, tmp_path / "pairs.jsonl")))
    assert line["loss"] == pytest.approx(math.log(2), abs=1e-5)  # recomputed: the policy is the reference

    # and a rerun that fits reuses them: the same values, the same first step
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(out / REFERENCE_FILE, again / REFERENCE_FILE)
    (line,) = read_log(train_dpo(dpo_config(base_model, again, tmp_path / "pairs.jsonl")))
    assert line["loss"] == pytest.approx(math.log(2), abs=1e-5)
    assert [json.loads(s) for s in (again / REFERENCE_FILE).read_text().splitlines()] == [
        json.loads(s) for s in (out / REFERENCE_FILE).read_text().splitlines()
    ]


def test_a_resumed_run_without_its_reference_values_stops_with_a_clear_error(base_model, tmp_path):
    """The reference is the starting model; a checkpoint no longer is, so a resumed run whose saved values do
    not fit must stop, not train against missing (NaN) values."""
    import shutil

    write_pairs(tmp_path / "pairs.jsonl", pairs())
    first = train_dpo(dpo_config(
        base_model, tmp_path / "first", tmp_path / "pairs.jsonl", max_steps=2, save_every=1,
        delete_checkpoints_when_done=False,
    ))
    resumed = tmp_path / "resumed"
    shutil.copytree(first / "checkpoints" / "step-1", resumed / "checkpoints" / "step-1")
    with pytest.raises(ValueError, match="cannot recompute them"):
        train_dpo(dpo_config(base_model, resumed, tmp_path / "pairs.jsonl", max_steps=2, save_every=1))
    # with the values it resumes and takes the uninterrupted run's second step
    shutil.copy(first / REFERENCE_FILE, resumed / REFERENCE_FILE)
    out = train_dpo(dpo_config(base_model, resumed, tmp_path / "pairs.jsonl", max_steps=2, save_every=1))
    assert read_log(out)[-1]["loss"] == pytest.approx(read_log(first)[-1]["loss"], rel=1e-5)


def test_no_resume_into_a_folder_another_run_trains_in_leaves_its_reference_values(base_model, tmp_path):
    """--no-resume deleted the saved reference values before the training loop's hold of the folder refused
    the second run: the first run, training there, had lost them for its resume."""
    from agentenv.processes import held_by_this_run

    write_pairs(tmp_path / "pairs.jsonl", pairs())
    out = tmp_path / "dpo"
    out.mkdir()
    (out / REFERENCE_FILE).write_text('{"pair": 0}\n')
    with held_by_this_run(out, "held by the first run"):
        with pytest.raises(ValueError, match="is being trained into by another run"):
            train_dpo(dpo_config(base_model, out, tmp_path / "pairs.jsonl", resume=False))
    assert (out / REFERENCE_FILE).read_text() == '{"pair": 0}\n'


@pytest.mark.slow
def test_dpo_under_zero3_on_two_processes_matches_one_process(base_model, tmp_path):
    """examples/deepspeed/zero3.json with 2 CPU processes (torchrun, DeepSpeed's CPU accelerator): the
    reference pass shares 5 pairs unevenly (ZeRO-3's forwards are collective, so the process without a
    batch of its own must still join), and the losses, saved reference values and final weights are one
    process's with the whole batch."""
    import json

    from safetensors.torch import load_file

    from agentenv.testing import train_under_torchrun

    data = [make_pair(trajectory(i, ["move up", "move up"], 1.0), trajectory(i, ["move down"] * (i + 1), 0.0))
            for i in range(5)]  # fmt: skip
    write_pairs(tmp_path / "pairs.jsonl", data)
    settings = dict(max_steps=3, lr_scheduler="constant", learning_rate=1e-3, warmup_ratio=0.0, beta=0.1, seed=0)
    single = train_dpo(dpo_config(base_model, tmp_path / "one", tmp_path / "pairs.jsonl", batch_size=2, **settings))
    zero3 = tmp_path / "zero3"
    printed = train_under_torchrun(
        "dpo", zero3, "--model", str(base_model), "--pairs", str(tmp_path / "pairs.jsonl"), "--batch-size", "1",
        "--max-length", "1024", *(f"--{k.replace('_', '-')}={v}" for k, v in settings.items()),
        "--deepspeed", str(Path(__file__).resolve().parents[2] / "examples" / "deepspeed" / "zero3.json"),
    )
    assert [line["step"] for line in read_log(zero3)] == [1, 2, 3]
    assert "is deprecated" not in printed  # torch's warning at each of DeepSpeed's collectives: dozens a step
    for a, b in zip(read_log(zero3), read_log(single), strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4)
    saved = [[json.loads(s) for s in (out / REFERENCE_FILE).read_text().splitlines()] for out in (zero3, single)]
    assert [(d["pair"], d["key"]) for d in saved[0]] == [(d["pair"], d["key"]) for d in saved[1]]
    assert [d["chosen"] for d in saved[0]] == pytest.approx([d["chosen"] for d in saved[1]], rel=1e-5)
    weights, expected = load_file(zero3 / "model.safetensors"), load_file(single / "model.safetensors")
    for name, tensor in expected.items():  # ZeRO-3's shards gathered into whole tensors
        assert float((weights[name] - tensor).abs().max()) < 1e-4


def test_nll_weight_adds_the_chosen_per_token_nll(base_model, tmp_path):
    """RPO's term: at step 1 (policy = reference) the loss is log 2 plus the weighted per-token NLL of the
    chosen side, averaged over pairs; after the step the chosen trajectories are likelier than after the
    same step of pure DPO (whose push on the rejected side drags the shared tokens of both down)."""
    data = pairs()
    write_pairs(tmp_path / "pairs.jsonl", data)
    before_c, _, _, batch, examples = policy_logps(base_model, data)
    tokens = [sum(label != -100 for label in e["chosen_labels"][1:]) for e in examples]
    nll = sum(-float(c) / n for c, n in zip(before_c, tokens, strict=True)) / len(examples)
    cfg = DPOConfig(
        model=str(base_model), output_dir=str(tmp_path / "rpo"), pairs=[str(tmp_path / "pairs.jsonl")],
        max_steps=1, batch_size=4, learning_rate=1e-3, warmup_ratio=0.0, beta=0.1, nll_weight=0.5, seed=0,
    )
    out = train_dpo(cfg)
    (line,) = read_log(out)
    assert line["chosen_nll"] == pytest.approx(nll, rel=1e-4)
    assert line["loss"] == pytest.approx(math.log(2) + 0.5 * nll, rel=1e-4)
    after_c, *_ = policy_logps(out, data)
    pure = train_dpo(dataclasses.replace(cfg, output_dir=str(tmp_path / "dpo"), nll_weight=0.0))
    pure_c, *_ = policy_logps(pure, data)
    assert float(after_c.sum()) > float(pure_c.sum()) + 1e-3

    # beta 0 leaves the NLL term alone (the control): its loss is the weighted NLL, with no log 2
    alone = train_dpo(dataclasses.replace(cfg, output_dir=str(tmp_path / "nll"), beta=0.0))
    (line,) = read_log(alone)
    assert line["loss"] == pytest.approx(0.5 * nll, rel=1e-4)
    for beta, weight in ((0.0, 0.0), (-0.1, 1.0), (0.1, -1.0)):
        with pytest.raises(ValueError, match="beta"):
            train_dpo(dataclasses.replace(cfg, output_dir=str(tmp_path / "bad"), beta=beta, nll_weight=weight))


def test_the_preference_can_fall_on_the_action_lines_alone(base_model, tmp_path):
    """preference_span="action": both sides' labels cover only what follows each reply's "Action:" (the
    thought is left out of the preference), the NLL term still covers the whole chosen turns, and one
    step raises the action-only margin."""
    from agentenv.trainer.engine import TrainConfig, load_tokenizer

    tokenizer = load_tokenizer(TrainConfig(model=str(base_model), output_dir="unused"))
    data = pairs()
    (turns,), _ = tokenize_pairs(data[:1], tokenizer, 1024)
    (actions,), _ = tokenize_pairs(data[:1], tokenizer, 1024, "action")

    def trained(side: str, example: dict) -> str:
        ids, labels = example[f"{side}_input_ids"], example[f"{side}_labels"]
        return tokenizer.decode([i for i, label in zip(ids, labels, strict=True) if label != -100])

    assert actions["chosen_input_ids"] == turns["chosen_input_ids"]
    assert actions["chosen_nll_labels"] == turns["chosen_labels"]
    assert "Thought" in trained("chosen", turns) and "goal" in trained("rejected", turns)
    for side, moves in (("chosen", ["move up"] * 2), ("rejected", ["move down", "move left", "move down"])):
        text = trained(side, actions)
        assert "Thought" not in text and "goal" not in text and "Action" not in text
        assert [m for m in ("move up", "move down", "move left") for _ in range(text.count(m))] == sorted(
            moves, key=("move up", "move down", "move left").index
        )

    write_pairs(tmp_path / "pairs.jsonl", data)
    before_c, before_r, _, _, examples = policy_logps(base_model, data, "action")
    whole_c, *_ = policy_logps(base_model, data)
    tokens = [sum(label != -100 for label in e["chosen_nll_labels"][1:]) for e in examples]
    nll = sum(-float(c) / n for c, n in zip(whole_c, tokens, strict=True)) / len(examples)
    cfg = DPOConfig(
        model=str(base_model), output_dir=str(tmp_path / "dpo"), pairs=[str(tmp_path / "pairs.jsonl")],
        max_steps=1, batch_size=4, learning_rate=1e-3, warmup_ratio=0.0, beta=0.1, nll_weight=0.5, seed=0,
        preference_span="action",
    )
    out = train_dpo(cfg)
    (line,) = read_log(out)
    assert line["chosen_nll"] == pytest.approx(nll, rel=1e-4)  # the NLL term: whole chosen turns
    assert line["loss"] == pytest.approx(math.log(2) + 0.5 * nll, rel=1e-4)
    after_c, after_r, *_ = policy_logps(out, data, "action")
    assert float((after_c - after_r).mean()) > float((before_c - before_r).mean()) + 1e-3
    with pytest.raises(ValueError, match="preference_span must be one of"):
        train_dpo(dataclasses.replace(cfg, output_dir=str(tmp_path / "bad"), preference_span="thought"))


def test_first_difference_pairs_one_decision_in_a_shared_context():
    expert = trajectory(3, ["move up", "move up", "move left"], 1.0)
    failed = trajectory(3, ["move up", "move down", "move down", "move down"], 0.0)
    pair = make_pair(expert, failed, cut="first_difference")
    # instruction, ack, then (observation, reply) x 2: both end at the second reply, the first that differs
    assert len(pair.chosen) == len(pair.rejected) == 2 + 4
    assert pair.chosen[:-1] == pair.rejected[:-1]
    assert pair.chosen[-1].value.endswith("move up") and pair.rejected[-1].value.endswith("move down")
    # a failure that never leaves the expert's path (it only stops early) gives no step-wise pair
    assert make_pair(expert, trajectory(3, ["move up"], 0.0), cut="first_difference") is None
    with pytest.raises(ValueError, match="pair_cut must be one of"):
        make_pair(expert, failed, cut="sideways")


def test_pairing_by_success_ignores_how_fast_a_success_was():
    expert = trajectory(4, ["move up"], 0.9)
    slower = trajectory(4, ["move down", "move up", "move up"], 0.7)
    slower.success = expert.success = True
    failed = trajectory(4, ["move down"] * 3, 0.0)
    assert make_pair(expert, slower) is not None  # ETO's rule: the lower reward loses
    assert make_pair(expert, slower, by="success") is None  # two successes tie
    pair = make_pair(expert, failed, by="success")
    assert pair.chosen == expert.conversations and pair.rejected_reward == 0.0


def test_a_reference_value_that_is_no_finite_number_is_refused_naming_its_line(tmp_path):
    """A NaN reference trained a model of NaNs (exit 0); a string failed in the collator ('too many dimensions
    str') and was cached in the run folder, so mending the file did not help."""
    good = pairs()[0].to_json()
    for value in (float("nan"), "abc", float("inf"), True):
        path = tmp_path / "refs.jsonl"
        write_pairs(path, [PreferencePair.from_json(good)])
        path.write_text(path.read_text() + json.dumps(good | {"ref_chosen_logp": value, "ref_rejected_logp": -3.0}) + "\n")
        with pytest.raises(ValueError, match=r"refs.jsonl: line 2 is not a preference pair \(ref_chosen_logp is .*: a "
                                             r"finite number"):
            list(read_pairs(path))
    assert PreferencePair.from_json(good | {"ref_chosen_logp": -2, "ref_rejected_logp": None}).ref_chosen_logp == -2.0


def test_pairs_dropped_or_cut_are_counted_by_cause(base_model, tmp_path, capsys):
    """Pairs whose two sides are the same (loss log 2 at every step, nothing learned) trained without a word;
    cut pairs were not reported (BC reports its cut conversations); and pairs without a trained turn said
    'raise --max-length', which cannot help them."""
    from agentenv.trainer.engine import TrainConfig, load_tokenizer

    tokenizer = load_tokenizer(TrainConfig(model=str(base_model), output_dir="unused"))
    same = [dataclasses.replace(p, rejected=p.chosen) for p in pairs()]
    examples, counts = tokenize_pairs(same[:2] + pairs()[2:], tokenizer, 1024)
    assert (len(examples), counts.identical, counts.dropped) == (2, 2, 2)
    from agentenv.data.tokenize import encode_conversation

    longest = max(len(encode_conversation(tokenizer, p.rejected, 100_000).input_ids) for p in pairs())
    _, counts = tokenize_pairs(pairs(), tokenizer, longest - 1)  # the rejected sides lose their last reply
    assert (counts.truncated, counts.dropped) == (4, 0)
    assert f"4/4 pairs kept with trained turns cut at --max-length {longest - 1}" in counts.report(4, longest - 1)

    write_pairs(tmp_path / "same.jsonl", same)
    with pytest.raises(ValueError, match="every pair's chosen and rejected sides are the same"):
        train_dpo(dpo_config(base_model, tmp_path / "a", tmp_path / "same.jsonl"))
    untrained = [dataclasses.replace(p, chosen=[dataclasses.replace(t, loss=False) for t in p.chosen]) for p in pairs()]
    write_pairs(tmp_path / "untrained.jsonl", untrained)
    with pytest.raises(ValueError, match="no pair has a trained turn on both sides: each needs gpt turns"):
        train_dpo(dpo_config(base_model, tmp_path / "b", tmp_path / "untrained.jsonl"))
