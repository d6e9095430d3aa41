"""Behavioural cloning (SFT) on AgentTraj trajectories, with loss only on ``loss: true`` turns.

Single process::

    agentenv train bc --model PATH --data trajs.jsonl --output-dir runs/bc

Several processes (GPUs, or CPU with gloo) run the same command under a launcher::

    torchrun --nproc_per_node 8 -m agentenv.cli train bc ...
    accelerate launch --config_file examples/accelerate/zero2.yaml -m agentenv.cli train bc ...
"""

from __future__ import annotations

import logging
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from agentenv.data.trajectory import Trajectory, content_key
from agentenv.trainer.engine import (
    TrainConfig,
    already_trained,
    check_resumable_launch,
    data_fingerprint,
    fit,
    load_model,
    load_tokenizer,
    make_accelerator,
    release,
)

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class BCConfig(TrainConfig):
    """Behavioural cloning settings (on top of :class:`TrainConfig`)."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "data": ("data", "successes_only", "packing", "num_proc"),
    }
    required: ClassVar[tuple[str, ...]] = ("data",)
    data_fields: ClassVar[tuple[str, ...]] = ("data",)

    #: AgentTraj .json / .jsonl files or folders of them
    data: list[str] = field(default_factory=list)
    #: leave out the episodes that failed (success false); records without a score, as AgentGym releases
    #: them, count as successful demonstrations
    successes_only: bool = False
    #: pack several conversations into each max_length row
    packing: bool = False
    #: processes for tokenization (datasets.map num_proc)
    num_proc: int = 0


def build_examples(cfg: BCConfig, tokenizer) -> tuple[list[dict[str, list[int]]], str]:
    """Tokenized (and optionally packed) training rows, and a line saying what they hold."""
    from agentenv.data.dataset import trajectories_to_dataset
    from agentenv.data.tokenize import pack_examples, tokenize_dataset

    trajectories = training_trajectories(cfg.data, cfg.successes_only)
    if not any(turn.trains() for t in trajectories for turn in t.conversations):  # no --max-length would help
        raise ValueError(f"no turn of {', '.join(cfg.data)} is trained: it has no gpt turn, or each has loss false")
    dataset = trajectories_to_dataset(trajectories)
    tokenized, stats = tokenize_dataset(dataset, tokenizer, cfg.max_length, num_proc=cfg.num_proc or None)
    # 4 bytes a token, where Python's lists of ints took about 40 (2.5 GB for AgentTraj-L's size)
    examples = [{"input_ids": array("i", r["input_ids"]), "labels": array("i", r["labels"])} for r in tokenized]
    if cfg.packing:
        examples = pack_examples(examples, cfg.max_length)
    chosen = " successful" if cfg.successes_only else ""
    return examples, f"{len(trajectories)}{chosen} trajectories: {stats.report()}"


def training_trajectories(data: list[str], successes_only: bool) -> list[Trajectory]:
    """The trajectories of ``data`` that BC trains on: every one, or with ``successes_only`` the successful
    ones.  Data that mixes successes and failures (an expert's ``collect --out`` file keeps both) is trained
    on whole with a warning: it may be a mistake, where data of failures only (random walks) is deliberate."""
    from agentenv.data.dataset import iter_trajectories

    trajectories = list(iter_trajectories(data, unscored_reward=1.0))
    failed = sum(not t.success for t in trajectories)
    if successes_only:
        trajectories = [t for t in trajectories if t.success]
    elif 0 < failed < len(trajectories):
        log.warning(
            "%d of the %d episodes in %s failed (success false): BC imitates them too; --successes-only "
            "leaves them out", failed, len(trajectories), ", ".join(data)
        )
    if not trajectories:
        raise ValueError(f"no {'successful ' if successes_only else ''}trajectories in {', '.join(data)}")
    repeats = len(trajectories) - len({content_key(t) for t in trajectories})
    if repeats:  # upsampling may be meant; two runs' files given together, or a file given twice, is not
        log.warning(
            "%d of the %d trajectories in %s repeat an earlier one (the same item and turns): BC trains on "
            "every copy", repeats, len(trajectories), ", ".join(data)
        )
    return trajectories


def train_bc(cfg: BCConfig) -> Path:
    """Train and save the model in ``cfg.output_dir``; returns that folder.

    A finished run (its ``train_state.json`` says done) is not repeated; an interrupted one resumes from
    its latest checkpoint.
    """
    from agentenv.data.tokenize import DataCollator
    from agentenv.trainer.losses import LanguageModelObjective

    out = Path(cfg.output_dir)
    if not cfg.data:
        raise ValueError("--data (BCConfig.data): give at least one trajectory file, or a folder of them")
    if already_trained(cfg):  # --no-resume trains again
        return out
    data_files = data_fingerprint(cfg)  # before the files are read: a file still growing is read again next time
    accelerator = make_accelerator(cfg)
    try:
        check_resumable_launch(cfg, accelerator)
        tokenizer = load_tokenizer(cfg)
        examples, summary = build_examples(cfg, tokenizer)
        accelerator.print(summary)
        if not examples:  # before the model loads (minutes for a large one)
            raise ValueError(f"no conversation has a trained turn within --max-length {cfg.max_length}: raise it")
        model = load_model(cfg, accelerator)
        collate = DataCollator(tokenizer.pad_token_id, pad_to_multiple_of=8 if accelerator.device.type == "cuda" else None)
        fit(cfg, accelerator, model, tokenizer, examples, collate, LanguageModelObjective(), data_files=data_files)
    finally:
        release(accelerator)
    return out
