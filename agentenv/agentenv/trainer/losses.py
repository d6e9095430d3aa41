"""Token-level losses and log-probabilities over the labelled (``loss: true``) tokens."""

from __future__ import annotations

from typing import Any

from agentenv.data.tokenize import IGNORE_INDEX


def _forward_logits(model, batch: dict[str, Any]):
    if "position_ids" in batch:
        # Packed rows: without an attention mask transformers reads the conversations' bounds from where the
        # positions restart, and keeps them apart (sdpa, eager and flash-attention alike); with one, later
        # conversations would see earlier ones.  Padding is on the right with no labels, so nothing real
        # attends to it.
        kwargs = {"input_ids": batch["input_ids"], "position_ids": batch["position_ids"]}
    else:
        kwargs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
    return model(**kwargs, use_cache=False).logits


def lm_loss_sum(logits, labels):
    """Next-token cross-entropy summed over positions whose label is not -100; returns ``(sum, count)``."""
    import torch.nn.functional as F

    logits = logits[:, :-1].float()
    targets = labels[:, 1:]
    loss = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum"
    )
    return loss, int((targets != IGNORE_INDEX).sum())


def sequence_logprobs(logits, labels):
    """Per-sequence sum of ``log p(token)`` over the labelled tokens (observations, prompts masked)."""
    import torch

    logits = logits[:, :-1].float()
    targets = labels[:, 1:]
    mask = targets != IGNORE_INDEX
    logp = torch.gather(logits.log_softmax(-1), 2, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (logp * mask).sum(-1)


def batch_lm_loss(model, batch: dict[str, Any]) -> float:
    """Mean cross-entropy per trained token of ``model`` on one collated batch (no gradient)."""
    import torch

    with torch.no_grad():
        total, count = lm_loss_sum(_forward_logits(model, batch), batch["labels"])
    return float(total) / max(count, 1)


class LanguageModelObjective:
    """Behavioural cloning: cross-entropy on trained tokens, averaged over all trained tokens of a step."""

    def units(self, batch: dict[str, Any]) -> int:
        return int((batch["labels"][:, 1:] != IGNORE_INDEX).sum())

    def loss_sum(self, model, batch: dict[str, Any]):
        total, _ = lm_loss_sum(_forward_logits(model, batch), batch["labels"])
        return total, {}
