"""DPO on whole multi-turn trajectories (the preference step of ETO).

A pair is two trajectories of the same instruction: ``chosen`` (the better one) and ``rejected``.  Both
start with the same prompt turns (the env's instruction, the acknowledgement, the task's first
observation).  A trajectory's log-probability is the sum of ``log p(token)`` over its agent turns only
(turns with ``loss: true``; observations and the prompt are masked), and

    loss = -log sigmoid(beta * ((pi_chosen - ref_chosen) - (pi_rejected - ref_rejected)))

With ``nll_weight`` > 0 the loss also carries the chosen trajectory's negative log-likelihood per trained
token (RPO, Pang et al. 2024: "Iterative Reasoning Preference Optimization")::

    loss += nll_weight * (-pi_chosen / tokens_chosen)

which keeps the chosen trajectory likely while DPO pushes the pair apart: pure DPO can lower both sides'
likelihood together, and on a small model at a high learning rate that collapses the agent.  ``beta`` 0
turns the DPO term off and leaves the NLL alone: fine-tuning on the chosen sides, the control that shows
what the preference itself adds.  ``loss_type="ipo"`` swaps the logistic loss for IPO's squared one,
``(margin - 1 / (2 beta))^2``, which stops pushing once the pair is that far apart.

The reference model is the policy's starting point, frozen.  Its log-probabilities are computed once
before the first step (or taken from the pair file when present) and saved in the output folder, so the
reference never has to sit in memory beside the policy and a resumed run uses the same values.

Pair files are JSONL, one pair a line::

    {"item_id": "maze_3", "chosen": [turns...], "rejected": [turns...],
     "chosen_reward": 1.0, "rejected_reward": 0.0, "ref_chosen_logp": -12.3, "ref_rejected_logp": -15.0}

``ref_*`` are optional.  ETO's own files (``{"id", "prompt", "chosen", "rejected"}``, where chosen /
rejected continue the prompt) load too: the prompt turns are put in front, without loss.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agentenv.data.trajectory import Trajectory, Turn, numbered_records, read_jsonl, write_jsonl
from agentenv.trainer.engine import (
    TrainConfig,
    already_trained,
    check_resumable_launch,
    data_fingerprint,
    fit,
    holding_output_dir,
    latest_checkpoint,
    load_model,
    load_tokenizer,
    make_accelerator,
    release,
)

REFERENCE_FILE = "reference_logps.jsonl"


@dataclass
class PreferencePair:
    """Two trajectories of one instruction; ``chosen`` is preferred."""

    item_id: str
    chosen: list[Turn]
    rejected: list[Turn]
    chosen_reward: float | None = None
    rejected_reward: float | None = None
    ref_chosen_logp: float | None = None
    ref_rejected_logp: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "chosen": [t.to_json() for t in self.chosen],
            "rejected": [t.to_json() for t in self.rejected],
            "chosen_reward": self.chosen_reward,
            "rejected_reward": self.rejected_reward,
            "ref_chosen_logp": self.ref_chosen_logp,
            "ref_rejected_logp": self.ref_rejected_logp,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PreferencePair:
        prompt = [Turn.from_json(t | {"loss": False}) for t in d.get("prompt") or []]
        return cls(
            item_id=str(d.get("item_id", d.get("id", ""))),
            chosen=prompt + [Turn.from_json(t) for t in d["chosen"]],
            rejected=prompt + [Turn.from_json(t) for t in d["rejected"]],
            chosen_reward=d.get("chosen_reward"),
            rejected_reward=d.get("rejected_reward"),
            ref_chosen_logp=_reference_value(d, "ref_chosen_logp"),
            ref_rejected_logp=_reference_value(d, "ref_rejected_logp"),
        )


def _reference_value(d: dict[str, Any], field: str) -> float | None:
    """A pair file's reference log-probability: a finite number, or absent (computed by the run).  A NaN
    trained a model of NaNs; a string failed deep in the collator, and was cached in the run folder."""
    value = d.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{field} is {value!r}: a finite number (a log-probability), or leave it out")
    return float(value)


def read_pairs(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> Iterator[PreferencePair]:
    """Read pair files: JSONL, or a JSON list (ETO's format)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for path in map(Path, paths):
        if not path.is_file():
            raise FileNotFoundError(f"no such pairs file: {path}")
        for place, record in numbered_records(path, "pairs", strict=True):  # written whole: strict
            try:
                pair = PreferencePair.from_json(record)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                why = f" ({exc})" if isinstance(exc, ValueError) else ""  # a turn's own fault, named
                raise ValueError(f"{path}: {place} is not a preference pair{why}: it needs chosen and rejected "
                                 "lists of from/value turns") from None
            yield pair


def write_pairs(path: str | os.PathLike, pairs: Iterable[PreferencePair]) -> int:
    """Write a JSONL file of preference pairs atomically; returns the count."""
    return write_jsonl(path, (p.to_json() for p in pairs))


def cut_rejected(chosen: list[Turn], rejected: list[Turn], extra_rounds: int = 5) -> list[Turn]:
    """Cut a rejected trajectory to the chosen one's length plus ``extra_rounds`` rounds (ETO's rule, so a
    long failure does not dominate the pair's log-probability), ending on an agent turn."""
    cut = list(rejected[: len(chosen) + 2 * extra_rounds])
    while cut and cut[-1].role != "gpt":
        cut.pop()
    return cut


def cut_at_first_difference(chosen: list[Turn], rejected: list[Turn]) -> tuple[list[Turn], list[Turn]]:
    """Both sides cut just after the first turn where they differ, when that turn is an agent turn on both:
    one decision in one shared context (the step-wise pair).  Otherwise (they differ first in an
    observation, or never) both come back empty."""
    for i, (c, r) in enumerate(zip(chosen, rejected, strict=False)):
        if c.value != r.value:
            return (chosen[: i + 1], rejected[: i + 1]) if c.role == r.role == "gpt" else ([], [])
    return [], []


#: how a pair's sides are cut: ETO's whole trajectories, or the step-wise pair at the first difference
PAIR_CUTS = ("trajectory", "first_difference")


#: what makes a trajectory win its pair: the higher reward (ETO), or success against failure
PAIR_BY = ("reward", "success")


def check_pairing(cut: str, by: str) -> None:
    """Refuse a pair cut or winner rule that :func:`make_pair` does not know."""
    if cut not in PAIR_CUTS:
        raise ValueError(f"pair_cut must be one of {PAIR_CUTS}, not {cut!r}")
    if by not in PAIR_BY:
        raise ValueError(f"pair_by must be one of {PAIR_BY}, not {by!r}")


def make_pair(
    expert: Trajectory,
    explored: Trajectory,
    extra_rounds: int = 5,
    cut: str = "trajectory",
    by: str = "reward",
) -> PreferencePair | None:
    """ETO's pairing: the trajectory with the higher reward wins; a tie gives no pair.  With
    ``by="success"`` only a success beats a failure (two successes, or two failures, are a tie): where the
    reward also grades successes, as BabyAI's does by speed, a slower success is then no loser.

    ``cut="trajectory"`` (ETO): the winner whole, an explored loser cut with :func:`cut_rejected` (an expert
    one that an explored trajectory beat stays whole, as in ETO);
    ``cut="first_difference"``: both end at their first differing agent turn (:func:`cut_at_first_difference`),
    so the preference falls on the decision where the loser left the winner's path, not on every turn after
    it.  A pair whose sides do not both end on an agent turn with loss is dropped.
    """
    check_pairing(cut, by)
    grade = (lambda t: t.success) if by == "success" else (lambda t: t.reward)
    if grade(explored) == grade(expert):
        return None
    win, lose = (expert, explored) if grade(expert) > grade(explored) else (explored, expert)
    chosen = list(win.conversations)
    if cut == "first_difference":
        chosen, rejected = cut_at_first_difference(chosen, list(lose.conversations))
    else:
        rejected = list(lose.conversations)
        if lose is explored:
            rejected = cut_rejected(chosen, rejected, extra_rounds)
    if not chosen or chosen[-1].role != "gpt" or not rejected or not any(t.trains() for t in rejected):
        return None
    return PreferencePair(expert.item_id, chosen, rejected, win.reward, lose.reward)


# --- the loss --------------------------------------------------------------------------------------------


#: the preference loss on a pair's margin: DPO's logistic one, or IPO's squared one
LOSS_TYPES = ("sigmoid", "ipo")
#: which tokens of the agent turns the preference compares: all of them (ETO's), or each ReAct reply's
#: action line only (after its last "Action:"; the NLL term still covers whole chosen turns)
PREFERENCE_SPANS = ("turn", "action")


def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta: float, loss_type: str = "sigmoid"):
    """Per-pair preference loss on the margin ``m = (pc - rc) - (pr - rr)`` (tensors of summed log-probs):
    DPO's ``-log sigmoid(beta * m)``, or with ``loss_type="ipo"`` IPO's ``(m - 1 / (2 * beta)) ** 2``
    (Azar et al. 2023), which stops pushing the pair apart once the margin reaches ``1 / (2 beta)``."""
    import torch.nn.functional as F

    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    if loss_type == "ipo":
        return (margin - 1 / (2 * beta)) ** 2
    return -F.logsigmoid(beta * margin)


def chosen_nll(policy_chosen, chosen_tokens):
    """Per-pair negative log-likelihood of the chosen trajectory per trained token (RPO's extra term)."""
    return -policy_chosen / chosen_tokens.clamp(min=1)


def check_objective(
    beta: float, nll_weight: float, loss_type: str = "sigmoid", preference_span: str = "turn"
) -> None:
    """Refuse weights that train nothing or train backwards (``beta`` 0 alone is the NLL-only control),
    and unknown loss types or preference spans."""
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, not {loss_type!r}")
    if preference_span not in PREFERENCE_SPANS:
        raise ValueError(f"preference_span must be one of {PREFERENCE_SPANS}, not {preference_span!r}")
    if not (beta >= 0 and nll_weight >= 0 and math.isfinite(beta + nll_weight)):  # NaN fails every comparison
        raise ValueError(f"beta and nll_weight must be finite and >= 0, not {beta} and {nll_weight}")
    if beta == 0 and nll_weight == 0:
        raise ValueError("beta 0 and nll_weight 0: the loss would be constant")


class DPOObjective:
    """DPO over a batch that holds the chosen rows first, then the rejected rows; ``nll_weight`` adds
    :func:`chosen_nll` (0: pure DPO), and ``beta`` 0 leaves the NLL term alone.  The preference is on
    ``labels``; the NLL term is on ``nll_labels`` where the batch has them (the whole chosen turns, when
    the preference is on their action lines only)."""

    def __init__(self, beta: float, nll_weight: float = 0.0, loss_type: str = "sigmoid"):
        check_objective(beta, nll_weight, loss_type)
        self.beta = beta
        self.nll_weight = nll_weight
        self.loss_type = loss_type

    def units(self, batch: dict[str, Any]) -> int:
        return int(batch["ref_chosen"].numel())

    def loss_sum(self, model, batch: dict[str, Any]):
        from agentenv.data.tokenize import IGNORE_INDEX
        from agentenv.trainer.losses import _forward_logits, sequence_logprobs

        logits = _forward_logits(model, batch)
        logps = sequence_logprobs(logits, batch["labels"])
        n = batch["ref_chosen"].numel()
        chosen, rejected = logps[:n], logps[n:]
        if "nll_labels" in batch:
            nll_labels = batch["nll_labels"]
            nll = chosen_nll(sequence_logprobs(logits[:n], nll_labels), (nll_labels[:, 1:] != IGNORE_INDEX).sum(-1))
        else:
            nll = chosen_nll(chosen, (batch["labels"][:n, 1:] != IGNORE_INDEX).sum(-1))
        losses = self.nll_weight * nll
        if self.beta:  # beta 0: the NLL term alone (the control that tells what the preference adds)
            losses = losses + dpo_loss(
                chosen, rejected, batch["ref_chosen"], batch["ref_rejected"], self.beta, self.loss_type
            )
        chosen_reward = self.beta * (chosen - batch["ref_chosen"]).detach()
        rejected_reward = self.beta * (rejected - batch["ref_rejected"]).detach()
        metrics = {
            "reward_accuracy": (chosen_reward > rejected_reward).float().sum(),
            "reward_margin": (chosen_reward - rejected_reward).sum(),
            "chosen_reward": chosen_reward.sum(),
            "rejected_reward": rejected_reward.sum(),
            "policy_chosen_logp": chosen.detach().sum(),
            "policy_rejected_logp": rejected.detach().sum(),
            "chosen_nll": nll.detach().sum(),
        }
        return losses.sum(), metrics


@dataclass
class PairCollator:
    """Pads a list of tokenized pairs into one batch: chosen rows, then rejected rows."""

    pad_token_id: int

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        from agentenv.data.tokenize import IGNORE_INDEX, DataCollator

        rows = [{"input_ids": e["chosen_input_ids"], "labels": e["chosen_labels"]} for e in examples]
        rows += [{"input_ids": e["rejected_input_ids"], "labels": e["rejected_labels"]} for e in examples]
        batch = DataCollator(self.pad_token_id)(rows)
        if "chosen_nll_labels" in examples[0]:
            batch["nll_labels"] = torch.full((len(examples), batch["labels"].size(1)), IGNORE_INDEX)
            for row, e in enumerate(examples):
                batch["nll_labels"][row, : len(e["chosen_nll_labels"])] = torch.tensor(e["chosen_nll_labels"])
        for key in ("ref_chosen", "ref_rejected"):
            values = [e.get(key) for e in examples]
            batch[key] = torch.tensor([v if v is not None else float("nan") for v in values], dtype=torch.float32)
        return batch


# --- training --------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class DPOConfig(TrainConfig):
    """DPO settings (ETO's defaults: lr 1e-6, beta 0.1, 3 epochs)."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "preference": ("pairs", "beta"),
        "experimental": ("nll_weight", "loss_type", "preference_span"),
    }
    required: ClassVar[tuple[str, ...]] = ("pairs",)
    data_fields: ClassVar[tuple[str, ...]] = ("pairs",)

    #: pair files (JSONL, or ETO's JSON list)
    pairs: list[str] = field(default_factory=list)
    #: DPO temperature: how far the policy may move from the reference for a preference (0 with
    #: nll_weight > 0: fine-tuning on the chosen sides only)
    beta: float = 0.1
    #: weight of the chosen side's per-token NLL beside the DPO loss (RPO; 0: pure DPO)
    nll_weight: float = 0.0
    #: sigmoid (DPO) or ipo (squared loss toward a margin of 1 / (2 beta))
    loss_type: str = "sigmoid"
    #: turn (ETO: the agent turns' tokens) or action (each reply's action line; see PREFERENCE_SPANS)
    preference_span: str = "turn"
    learning_rate: float = 1e-6
    warmup_ratio: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_objective(self.beta, self.nll_weight, self.loss_type, self.preference_span)


@dataclass
class PairCounts:
    """What :func:`tokenize_pairs` left out or cut: pairs with a side that has no trained token within
    ``max_length`` (``no_trained_turn``, of which ``no_gpt_turn`` have no trained turn at all), pairs whose
    two sides are the same (nothing to prefer: the loss is constant), and pairs kept with trained turns cut."""

    no_trained_turn: int = 0
    no_gpt_turn: int = 0
    identical: int = 0
    truncated: int = 0

    @property
    def dropped(self) -> int:
        return self.no_trained_turn + self.identical

    def report(self, total: int, max_length: int) -> str:
        parts = []
        if self.no_trained_turn:
            parts.append(f"dropped {self.no_trained_turn}/{total} pairs with a side that has no trained turn within "
                         f"--max-length {max_length}" + (f" ({self.no_gpt_turn} with none at all)" * bool(self.no_gpt_turn)))
        if self.identical:
            parts.append(f"dropped {self.identical}/{total} pairs whose chosen and rejected sides are the same")
        if self.truncated:
            parts.append(f"{self.truncated}/{total} pairs kept with trained turns cut at --max-length {max_length}")
        return "; ".join(parts)


def tokenize_pairs(
    pairs: list[PreferencePair], tokenizer, max_length: int, preference_span: str = "turn"
) -> tuple[list[dict[str, Any]], PairCounts]:
    """Tokenized pairs (both sides with loss masks), and :class:`PairCounts`: a pair is dropped when either
    side has no trained token within ``max_length``, or when its two sides are the same.  With
    ``preference_span="action"`` the sides' labels cover the action lines only, and ``chosen_nll_labels``
    the whole chosen turns.

    A pair file's reference log-probabilities are kept only for a side trained as given (all its agent
    turns, none cut by ``max_length``); otherwise they cover other tokens and are left to be recomputed."""
    from agentenv.data.tokenize import IGNORE_INDEX, encode_conversation
    from agentenv.react import ACTION_MARKER

    focus = ACTION_MARKER if preference_span == "action" else None
    examples, counts = [], PairCounts()
    for i, pair in enumerate(pairs):
        chosen = encode_conversation(tokenizer, pair.chosen, max_length, focus)
        rejected = encode_conversation(tokenizer, pair.rejected, max_length, focus)
        if chosen is None or rejected is None:
            counts.no_trained_turn += 1
            counts.no_gpt_turn += not all(any(t.trains() for t in side) for side in (pair.chosen, pair.rejected))
            continue
        if chosen.input_ids == rejected.input_ids:
            counts.identical += 1
            continue
        example = {
            "pair": i,
            "chosen_input_ids": chosen.input_ids,
            "chosen_labels": chosen.labels,
            "rejected_input_ids": rejected.input_ids,
            "rejected_labels": rejected.labels,
            "ref_chosen": pair.ref_chosen_logp if focus is None and not chosen.dropped_turns else None,
            "ref_rejected": pair.ref_rejected_logp if focus is None and not rejected.dropped_turns else None,
        }
        if focus is not None:
            if all(t == IGNORE_INDEX for t in chosen.focus_labels + rejected.focus_labels):
                counts.no_trained_turn += 1
                continue
            example |= {
                "chosen_labels": chosen.focus_labels,
                "rejected_labels": rejected.focus_labels,
                "chosen_nll_labels": chosen.labels,
            }
        counts.truncated += bool(chosen.dropped_turns or rejected.dropped_turns)
        examples.append(example)
    return examples, counts


def compute_reference_logps(model, examples: list[dict[str, Any]], collate: PairCollator, batch_size: int, accelerator):
    """Fill ``ref_chosen`` / ``ref_rejected`` of every example with the (frozen) model's summed log-probs.

    The work is spread over the processes (each takes every ``world``-th batch; all run the same number of
    forwards, as ZeRO-3 needs) and the results are gathered everywhere.
    """
    import torch

    from agentenv.trainer.losses import _forward_logits, sequence_logprobs

    world, rank = accelerator.num_processes, accelerator.process_index
    batches = [examples[i : i + batch_size] for i in range(0, len(examples), batch_size)]
    rounds = -(-len(batches) // world)
    mine: list[tuple[int, float, float]] = []
    model.eval()
    with torch.no_grad():
        for r in range(rounds):
            b = r * world + rank
            chunk = batches[b] if b < len(batches) else batches[0]  # idle processes still join the forward
            batch = {k: v.to(accelerator.device) for k, v in collate(chunk).items()}
            logps = sequence_logprobs(_forward_logits(model, batch), batch["labels"]).float().cpu().tolist()
            if b < len(batches):
                n = len(chunk)
                mine += [(e["pair"], logps[j], logps[n + j]) for j, e in enumerate(chunk)]
    results = {}
    from accelerate.utils import gather_object

    for pair, c, r in gather_object(mine) if world > 1 else mine:
        results[pair] = (c, r)
    for e in examples:
        e["ref_chosen"], e["ref_rejected"] = results[e["pair"]]


def reference_key(example: dict[str, Any], model: str) -> str:
    """What a saved reference value is for: the starting model and both sides' tokens and loss masks."""
    sides = [example[k] for k in sorted(example) if k.endswith(("_input_ids", "_labels"))]
    return hashlib.sha256(json.dumps([model, sides]).encode()).hexdigest()


def use_saved_reference(saved: Path, examples: list[dict[str, Any]], keys: list[str]) -> None:
    """Take the reference log-probabilities saved by an earlier run of these pairs, when they cover every
    example's ``keys`` (:func:`reference_key`; a file cut short by a kill does not)."""
    values = {d.get("key"): d for d in read_jsonl(saved)} if saved.exists() else {}
    if values and all(k in values for k in keys):
        for e, k in zip(examples, keys, strict=True):
            e["ref_chosen"], e["ref_rejected"] = values[k]["chosen"], values[k]["rejected"]


def train_dpo(cfg: DPOConfig) -> Path:
    """DPO from ``cfg.model`` (also the frozen reference) on ``cfg.pairs``; returns the output folder."""
    out = Path(cfg.output_dir)
    if not cfg.pairs:
        raise ValueError("--pairs (DPOConfig.pairs): give at least one pair file")
    if already_trained(cfg):  # --no-resume trains again
        return out
    data_files = data_fingerprint(cfg)  # before the files are read: a file still growing is read again next time
    pairs = list(read_pairs(cfg.pairs))  # a mistake in the file stops the run before anything loads
    if not pairs:
        raise ValueError(f"{', '.join(map(str, cfg.pairs))} holds no pairs")
    accelerator = make_accelerator(cfg)
    try:
        check_resumable_launch(cfg, accelerator)
        tokenizer = load_tokenizer(cfg)
        examples, counts = tokenize_pairs(pairs, tokenizer, cfg.max_length, cfg.preference_span)
        if counts.dropped or counts.truncated:
            accelerator.print(counts.report(len(pairs), cfg.max_length))
        if not examples:
            if counts.identical == len(pairs):
                raise ValueError("every pair's chosen and rejected sides are the same: there is nothing to prefer")
            if counts.no_gpt_turn == counts.no_trained_turn:
                raise ValueError("no pair has a trained turn on both sides: each needs gpt turns (loss true or unset)")
            raise ValueError(f"no pair has a trained turn on both sides within --max-length {cfg.max_length}: raise it")
        collate = PairCollator(tokenizer.pad_token_id)
        saved = out / REFERENCE_FILE
        if not cfg.resume:
            if accelerator.is_main_process:
                # starting over: an earlier run's values may be for other pairs; a run training there now keeps
                # its values (refused here, not only later by the training loop's hold of the folder)
                with holding_output_dir(out, holder=True):
                    saved.unlink(missing_ok=True)
            # before any process reads it: one that still found it would skip the reference pass the others
            # run, and their collective calls would wait for it forever
            accelerator.wait_for_everyone()
        keys = [reference_key(e, cfg.model) for e in examples]
        use_saved_reference(saved, examples, keys)
        need_reference = any(e["ref_chosen"] is None or e["ref_rejected"] is None for e in examples)
        if need_reference and cfg.resume and latest_checkpoint(out) is not None:
            # the reference is the starting model, which a checkpoint no longer is
            raise ValueError(
                f"{out}: the saved reference log-probabilities do not cover these pairs at these settings, "
                "and a resumed run cannot recompute them: rerun with the first run's pairs and settings, "
                "or with --no-resume to start over"
            )

        def before_training(model) -> None:
            if need_reference:
                compute_reference_logps(model, examples, collate, cfg.batch_size, accelerator)
            if accelerator.is_main_process:
                write_jsonl(
                    saved,
                    (
                        {"pair": e["pair"], "chosen": e["ref_chosen"], "rejected": e["ref_rejected"], "key": key}
                        for e, key in zip(examples, keys, strict=True)
                    ),
                )

        model = load_model(cfg, accelerator)
        objective = DPOObjective(cfg.beta, cfg.nll_weight, cfg.loss_type)
        fit(cfg, accelerator, model, tokenizer, examples, collate, objective, before_training, data_files)
    finally:
        release(accelerator)
    return out
