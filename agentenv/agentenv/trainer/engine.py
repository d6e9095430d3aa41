"""The training loop shared by BC and DPO: accelerate, AdamW, schedule, accumulation, checkpoints, resume.

One run writes into ``output_dir``::

    train_config.json        the run's configuration
    train_log.jsonl          one line per logged optimiser step (loss, lr, grad norm, tokens/s ...)
    checkpoints/step-N/      accelerate state (model, optimiser, scheduler, RNG) + trainer_state.json
    *.safetensors, config.json, tokenizer files      the final model, Hugging Face format
    train_state.json         {"done": true, ...} once the final model is saved

The data order is a pure function of ``(seed, epoch)``: optimiser step ``s`` always sees the same
micro-batches, so a resumed run continues exactly where the killed one stopped.

The loss is normalised over the whole optimiser step: an objective returns a *sum* over its units (trained
tokens for BC, pairs for DPO) and the loop divides by the number of units in all micro-batches on all
processes, so gradient accumulation and the number of processes do not change the gradient.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import json
import logging
import math
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Protocol

from agentenv.data.trajectory import read_jsonl, write_json, write_text_atomic
from agentenv.processes import first_process, held_by_another_run, held_by_this_run, quiet_deepspeed_on_cpu
from agentenv.trainer.config_args import changed_settings, field_defaults
from agentenv.trainer.runs import refuse_another_kind_of_run

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
STATE_FILE = "trainer_state.json"
DONE_FILE = "train_state.json"
LOG_FILE = "train_log.jsonl"
LOSS_CURVE = "loss_curve.png"


@dataclass(kw_only=True)
class TrainConfig:
    """Settings every trainer shares.  ``batch_size`` is per process and micro-batch: the global batch is
    ``batch_size * gradient_accumulation_steps * processes``."""

    #: the fields naming the files trained on (a finished run records their bytes' digest)
    data_fields: ClassVar[tuple[str, ...]] = ()
    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "model": ("model", "output_dir", "template", "max_length", "attn_implementation"),
        "training": (
            "learning_rate", "num_epochs", "max_steps", "batch_size", "gradient_accumulation_steps", "lr_scheduler",
            "warmup_ratio", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm", "seed",
        ),
        "checkpoints and logs": (
            "save_every", "save_total_limit", "delete_checkpoints_when_done", "resume", "log_every", "report_to",
        ),
        "hardware": ("cpu", "mixed_precision", "gradient_checkpointing", "deepspeed"),
    }  # fmt: skip

    #: the model to start from: a Hugging Face folder (or hub name where a hub is reachable)
    model: str
    #: where checkpoints, logs and the final model go
    output_dir: str
    #: peak learning rate, reached after the warmup
    learning_rate: float = 2e-5
    #: passes over the data (a fraction stops part-way through the last)
    num_epochs: float = 3.0
    #: optimiser steps to run; > 0 overrides ``num_epochs``
    max_steps: int = 0
    #: sequences per process per micro-batch; the global batch is this x gradient_accumulation_steps x processes
    batch_size: int = 1
    #: micro-batches per optimiser step
    gradient_accumulation_steps: int = 1
    #: cosine, linear or constant (each after a linear warmup)
    lr_scheduler: str = "cosine"
    #: fraction of the optimiser steps over which the learning rate rises from 0
    warmup_ratio: float = 0.03
    #: AdamW's decoupled weight decay
    weight_decay: float = 0.0
    #: AdamW's first-moment decay
    adam_beta1: float = 0.9
    #: AdamW's second-moment decay
    adam_beta2: float = 0.999
    #: AdamW's epsilon
    adam_epsilon: float = 1e-8
    #: gradient clipping (0 = off)
    max_grad_norm: float = 1.0
    #: tokens per sequence; a longer conversation loses whole trailing turns (docs/training.md, Truncation)
    max_length: int = 4096
    #: chat template: auto, model, chatml, llama2 (see agentenv.data.tokenize)
    template: str = "auto"
    #: seeds the data order (each epoch's permutation) and everything random in training
    seed: int = 0
    #: auto (bf16 on a GPU that has it, else none), no, bf16, fp16
    mixed_precision: str = "auto"
    #: auto (on when training on a GPU), on, off
    gradient_checkpointing: str = "auto"
    #: save a checkpoint every N optimiser steps, so that a killed run loses less (0: only the final model)
    save_every: int = 500
    #: checkpoints kept while training (older ones are deleted)
    save_total_limit: int = 2
    #: delete the checkpoints once the final model is saved
    delete_checkpoints_when_done: bool = True
    #: continue from the latest checkpoint in output_dir when there is one
    resume: bool = True
    #: log the metrics every N optimiser steps
    log_every: int = 1
    #: also log the metrics to these trackers (accelerate's: tensorboard, wandb, mlflow, ...; "" for none)
    report_to: str = ""
    #: train on CPU even when a GPU is present
    cpu: bool = False
    #: attention implementation passed to from_pretrained ("" = the model's default; e.g. flash_attention_2)
    attn_implementation: str = ""
    #: a DeepSpeed config JSON (e.g. examples/deepspeed/zero3.json), for runs under torchrun; under
    #: ``accelerate launch`` the accelerate config file names it instead
    deepspeed: str = ""

    def __post_init__(self) -> None:
        check_train_settings(self)
        parent = getattr(super(), "__post_init__", None)  # the episode settings beside these, if any (GRPO's)
        if parent is not None:
            parent()

    @property
    def trackers(self) -> list[str]:
        """``report_to`` as a list."""
        return [t.strip() for t in self.report_to.split(",") if t.strip()]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]):
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown {cls.__name__} fields: {sorted(unknown)}")
        return cls(**d)


LR_SCHEDULERS = ("cosine", "linear", "constant")
MIXED_PRECISION = ("auto", "no", "bf16", "fp16")
GRADIENT_CHECKPOINTING = ("auto", "on", "off")

def check_train_settings(cfg: TrainConfig) -> None:
    """Refuse settings no run can use, before any model is loaded (``ValueError`` naming the setting)."""
    for name in ("model", "output_dir"):
        if not str(getattr(cfg, name)).strip():
            raise ValueError(f"{name} is empty (an unset shell variable?)")
    if Path(cfg.output_dir).exists() and not Path(cfg.output_dir).is_dir():
        raise ValueError(f"output_dir {cfg.output_dir} is a file: give a folder")
    for f in fields(TrainConfig):  # set from Python too: the CLI's flags and config files refuse them first
        value = getattr(cfg, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{f.name} must be a finite number, not {value}")
    positive = ("batch_size", "gradient_accumulation_steps", "log_every", "max_length")
    for name in positive:
        if getattr(cfg, name) < 1:
            raise ValueError(f"{name} must be at least 1, not {getattr(cfg, name)}")
    for name in ("max_steps", "save_every", "max_grad_norm", "weight_decay", "adam_epsilon"):
        if getattr(cfg, name) < 0:
            raise ValueError(f"{name} must not be negative, not {getattr(cfg, name)}")
    if not cfg.learning_rate > 0:
        raise ValueError(f"learning_rate must be positive, not {cfg.learning_rate} (0 would train nothing)")
    for name in ("adam_beta1", "adam_beta2"):
        if not 0 <= getattr(cfg, name) < 1:
            raise ValueError(f"{name} must lie in [0, 1), not {getattr(cfg, name)}")
    if cfg.deepspeed:
        try:
            json.loads(Path(cfg.deepspeed).read_text())
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else f"not JSON: {exc}"
            raise ValueError(f"deepspeed config {cfg.deepspeed}: {why}") from None
    if cfg.max_steps == 0 and not cfg.num_epochs > 0:
        raise ValueError(f"num_epochs must be positive (or set max_steps), not {cfg.num_epochs}")
    if not 0 <= cfg.warmup_ratio <= 1:
        raise ValueError(f"warmup_ratio must lie in [0, 1], not {cfg.warmup_ratio}")
    for name, allowed in (
        ("lr_scheduler", LR_SCHEDULERS),
        ("mixed_precision", MIXED_PRECISION),
        ("gradient_checkpointing", GRADIENT_CHECKPOINTING),
    ):
        if getattr(cfg, name) not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, not {getattr(cfg, name)!r}")


class Objective(Protocol):
    """What a trainer optimises: a loss summed over the batch's units, and the number of those units."""

    def units(self, batch: dict[str, Any]) -> int: ...

    def loss_sum(self, model, batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """``(loss summed over units, {metric: value summed over units})``."""
        ...


def already_trained(cfg: TrainConfig) -> bool:
    """Whether ``cfg.output_dir`` holds the finished run of these settings (a rerun trains nothing, and says
    so).  A finished run of other settings, or of another trainer, is refused: its model is not this one's."""
    out = Path(cfg.output_dir)
    # said now, not once the data is read and the model loaded (minutes); by the process that would hold it (the
    # others of a launch would find their first process's hold)
    if first_process() and held_by_another_run(out):
        raise ValueError(f"{out} is being trained into by another run: wait for it to end, or give another --output-dir")
    refuse_another_kind_of_run(out, staged=False, config=cfg.to_json())  # first: each training command starts here
    if not cfg.resume or not is_done(out):
        if cfg.resume and (checkpoint := latest_checkpoint(out)) is not None:
            check_checkpoint(checkpoint, cfg)  # before the data is tokenized and the model loads (minutes)
        return False
    done = json.loads((out / DONE_FILE).read_text())
    saved = done.get("config") or {}
    changed = changed_settings(saved, cfg.to_json(), field_defaults(type(cfg))) + sorted(set(saved) - set(cfg.to_json()))
    if changed:
        raise ValueError(
            f"{out} holds a finished run with other settings ({', '.join(changed)}): give "
            "another --output-dir, or --no-resume to train again there"
        )
    if done.get("data_files") is not None:  # a run of an earlier version recorded none
        now = data_fingerprint(cfg)
        if now is not None and now != done["data_files"]:  # None: the files are gone, nothing to compare
            fields = " and ".join(f"--{name.replace('_', '-')}" for name in cfg.data_fields)
            raise ValueError(
                f"{out} holds a finished run trained on other data: the files of {fields} changed since it "
                "read them: give another --output-dir, or --no-resume to train again there"
            )
    print(f"{out} holds this run, finished: nothing to train (--no-resume trains again)", file=sys.stderr)
    return True


def data_fingerprint(cfg: TrainConfig) -> str | None:
    """A digest of the bytes of the files ``cfg``'s data fields name (a folder's trajectory files, a dataset
    folder's shards), in order; ``None`` for a trainer that reads no files (GRPO plays its envs)."""
    from agentenv.data.dataset import expand_paths
    from agentenv.data.export import DATA_DIR, is_dataset_folder

    paths = [Path(p) for name in cfg.data_fields for p in getattr(cfg, name) or []]
    if not paths:
        return None
    digest = hashlib.blake2b(digest_size=16)
    try:
        for path in paths:
            if is_dataset_folder(path):
                files = sorted((path / DATA_DIR).glob("*.parquet"))
            else:
                files = expand_paths([path]) if path.is_dir() else [path]
            for file in files:
                digest.update(f"{file.name}\0".encode())
                with open(file, "rb") as f:
                    while chunk := f.read(1 << 20):
                        digest.update(chunk)
    except (OSError, ValueError):  # missing or unreadable: reading the data says so, naming the file
        return None
    return digest.hexdigest()


def check_checkpoint(checkpoint: Path, cfg: TrainConfig) -> dict[str, Any]:
    """The checkpoint's saved state, or a ``ValueError`` naming the settings it was saved with that differ."""
    saved = json.loads((checkpoint / STATE_FILE).read_text())
    changed = changed_settings(saved.get("config", {}), cfg.to_json(), field_defaults(type(cfg)))
    if changed:
        raise ValueError(
            f"{checkpoint} was saved with other settings ({', '.join(changed)}): rerun with the first "
            "run's settings, or with --no-resume to start over"
        )
    return saved


def data_digest(examples: Sequence[dict[str, Any]]) -> str:
    """A digest of the examples' lists (token ids, labels), each with its length, in their order.  Other
    values are left out: DPO's reference log-probabilities are filled in after a fresh run starts, read back
    on a resume."""
    digest = hashlib.blake2b(digest_size=16)
    for example in examples:
        for key in sorted(example):
            if isinstance(example[key], list | array.array):  # the same digest for either
                digest.update(f"{key}:{len(example[key])}:".encode() + array.array("q", example[key]).tobytes())
    return digest.hexdigest()


def is_done(output_dir: str | os.PathLike) -> bool:
    """Whether a run already saved its final model there."""
    p = Path(output_dir) / DONE_FILE
    return p.exists() and json.loads(p.read_text()).get("done", False)


def latest_checkpoint(output_dir: str | os.PathLike) -> Path | None:
    """The newest complete checkpoint (its ``trainer_state.json`` is written last)."""
    root = Path(output_dir) / CHECKPOINTS
    if not root.is_dir():
        return None
    done = [p for p in root.glob("step-*") if (p / STATE_FILE).exists()]
    return max(done, key=lambda p: int(p.name.split("-")[1]), default=None)


def read_log(output_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """The run's log lines (a line cut short by a kill is left out)."""
    p = Path(output_dir) / LOG_FILE
    return list(read_jsonl(p)) if p.exists() else []


# --- setup -----------------------------------------------------------------------------------------------


def _cuda_available(cfg: TrainConfig) -> bool:
    import torch

    return torch.cuda.is_available() and not cfg.cpu


def _without_deepspeed_shm_op() -> None:
    """DeepSpeed's CPU process group JIT-compiles a shared-memory all-reduce (a C++ build of about a minute
    on a fresh machine) that only its inference all-reduce uses; training reduces over gloo.  DeepSpeed
    reads whether to build it from ``deepspeed.ops.__compatible_ops__``, a dict it keeps for such edits."""
    try:
        import deepspeed.ops

        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    except (ImportError, AttributeError, TypeError):  # another DeepSpeed layout: it builds the op, as before
        pass


def make_accelerator(cfg: TrainConfig):
    """An ``Accelerator`` for this run (CPU + gloo when there is no GPU; bf16 on GPUs that have it).

    With ``cfg.deepspeed`` it runs DeepSpeed: on GPUs, or on CPU (its CPU accelerator over gloo) for
    processes started by torchrun; a single CPU process trains without it, as ZeRO has nothing to shard.
    """
    import torch
    from accelerate import Accelerator, PartialState

    cuda = _cuda_available(cfg)
    quiet_deepspeed_on_cpu()
    precision = cfg.mixed_precision
    if precision == "auto":
        precision = "bf16" if cuda and torch.cuda.is_bf16_supported() else "no"
    deepspeed = cfg.deepspeed
    if deepspeed and not cuda:
        if torch.cuda.is_available() or "LOCAL_RANK" not in os.environ:
            why = "cpu=True on a GPU machine" if torch.cuda.is_available() else "one CPU process, not torchrun"
            log.warning("deepspeed=%s ignored (%s): training without DeepSpeed", deepspeed, why)
            deepspeed = ""
        else:
            _without_deepspeed_shm_op()
            # accelerate starts DeepSpeed's process group only with a device backend: on CPU, name gloo
            os.environ["ACCELERATE_USE_DEEPSPEED"] = "true"
            PartialState(backend="gloo")
    kwargs: dict[str, Any] = {}
    if deepspeed:
        from accelerate.utils import DeepSpeedPlugin

        # DeepSpeed calls collectives that torch deprecated (2.13), and the warning repeats: on CPU, ZeRO-3
        # printed it some 30 times a step
        warnings.filterwarnings("ignore", r"`torch\.distributed\.\w+` is deprecated", FutureWarning)

        # "auto" entries of the file are filled from this run's settings
        kwargs["deepspeed_plugin"] = DeepSpeedPlugin(
            hf_ds_config=deepspeed,
            gradient_accumulation_steps=cfg.gradient_accumulation_steps,
            gradient_clipping=cfg.max_grad_norm,
        )
    if cfg.report_to:
        kwargs |= {"log_with": cfg.trackers, "project_dir": cfg.output_dir}
    return Accelerator(
        cpu=not cuda and not deepspeed,
        mixed_precision=precision,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        **kwargs,
    )


def load_tokenizer(cfg: TrainConfig):
    """The model's tokenizer with the chat template fixed (and saved with the model) and a pad token; a model
    that cannot be trained as an agent, or not at ``max_length``, is refused first."""
    from transformers import AutoTokenizer

    from agentenv.data.tokenize import set_chat_template
    from agentenv.models import check_causal_lm

    check_causal_lm(cfg.model, cfg.max_length, label=f"--model {cfg.model}")
    tokenizer = AutoTokenizer.from_pretrained(cfg.model)
    set_chat_template(tokenizer, cfg.template)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(cfg: TrainConfig, accelerator):
    """Load the model (fp32 weights; mixed precision casts on the fly, DeepSpeed converts its own)."""
    import torch
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"dtype": torch.float32}
    if cfg.attn_implementation:
        kwargs["attn_implementation"] = cfg.attn_implementation
    model = AutoModelForCausalLM.from_pretrained(cfg.model, **kwargs)
    checkpointing = cfg.gradient_checkpointing
    if checkpointing == "on" or (checkpointing == "auto" and accelerator.device.type == "cuda"):
        if hasattr(model, "activation_checkpointing_enable"):  # transformers 5.x's name; the old one goes in 6
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    return model


# --- data order ------------------------------------------------------------------------------------------


class MicroBatches:
    """The run's micro-batches as a pure function of their index.

    Micro-batch ``m`` belongs to epoch ``m // per_epoch``; each epoch is a fresh permutation seeded with
    ``seed + epoch``; process ``rank`` takes its ``batch_size`` slice of the global micro-batch.  An epoch
    is a whole number of optimiser steps (``accumulation`` micro-batches each), and its last step wraps
    around to the epoch's first examples so every process gets full batches: a step sees the same examples
    whatever its batch is split into (processes, accumulation), at an epoch's end too.
    """

    def __init__(self, num_examples: int, batch_size: int, world_size: int, rank: int, seed: int,
                 accumulation: int = 1):
        if num_examples == 0:
            raise ValueError("no training examples")
        self.n, self.batch_size, self.world_size, self.rank, self.seed = (
            num_examples, batch_size, world_size, rank, seed,
        )
        self.per_epoch = math.ceil(num_examples / (batch_size * world_size * accumulation)) * accumulation
        self._epoch, self._perm = -1, []

    def indices(self, micro_index: int) -> list[int]:
        import torch

        epoch, k = divmod(micro_index, self.per_epoch)
        if epoch != self._epoch:
            gen = torch.Generator().manual_seed(self.seed + epoch)
            self._epoch, self._perm = epoch, torch.randperm(self.n, generator=gen).tolist()
        start = (k * self.world_size + self.rank) * self.batch_size
        return [self._perm[(start + j) % self.n] for j in range(self.batch_size)]

    def epoch_of(self, micro_index: int) -> float:
        return micro_index / self.per_epoch


def total_steps(cfg: TrainConfig, micro_per_epoch: int) -> int:
    if cfg.max_steps > 0:
        return cfg.max_steps
    return max(1, math.ceil(cfg.num_epochs * micro_per_epoch / cfg.gradient_accumulation_steps))


# --- the loop --------------------------------------------------------------------------------------------


def _to_device(batch: dict[str, Any], device) -> dict[str, Any]:
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}


@contextlib.contextmanager
def holding_output_dir(out: Path, holder: bool) -> Iterator[None]:
    """While the block runs, ``holder`` (a launcher's main process; the others pass False) holds the run's
    output folder, made if missing: a second run into it is refused (two at once resumed each other's
    checkpoints and wrote every log line twice)."""
    with contextlib.ExitStack() as held:
        if holder:
            out.mkdir(parents=True, exist_ok=True)
            busy = f"{out} is being trained into by another run: wait for it to end, or give another --output-dir"
            held.enter_context(held_by_this_run(out, busy))
        yield


def fit(
    cfg: TrainConfig,
    accelerator,
    model,
    tokenizer,
    examples: Sequence[dict[str, Any]],
    collate: Callable[[list[dict[str, Any]]], dict[str, Any]],
    objective: Objective,
    before_training: Callable[[Any], None] | None = None,
    data_files: str | None = None,
) -> list[dict[str, Any]]:
    """Train ``model`` on ``examples`` and save the final model in ``cfg.output_dir``.

    ``before_training(prepared_model)`` runs once after the model is prepared and before the first step
    of a fresh run (DPO computes its reference log-probabilities there).  Returns the run's log lines.  The
    main process holds the output folder meanwhile: a second run into it is refused (two at once resumed
    each other's checkpoints and wrote every log line twice).
    """
    out = Path(cfg.output_dir)
    with holding_output_dir(out, accelerator.is_main_process):
        accelerator.wait_for_everyone()  # the others start once the main process holds the folder
        if already_trained(cfg):  # another run finished there while this one loaded: it trained this run
            return []
        return _fit(cfg, accelerator, model, tokenizer, examples, collate, objective, before_training, data_files)


def checkpoint_format(accelerator) -> str:
    """How the run's checkpoints are written: ``no DeepSpeed`` or ``DeepSpeed ZeRO-N`` (each reads its own)."""
    from accelerate.utils import DistributedType

    if accelerator.distributed_type != DistributedType.DEEPSPEED:
        return "no DeepSpeed"
    zero = accelerator.state.deepspeed_plugin.deepspeed_config.get("zero_optimization", {})
    return f"DeepSpeed ZeRO-{zero.get('stage', 0)}"


def check_resumable_launch(cfg: TrainConfig, accelerator) -> None:
    """Refuse, before the data is tokenized and the model loaded (minutes for a large one), to resume a
    checkpoint of another number of processes or written in another format (:func:`check_launch`)."""
    checkpoint = latest_checkpoint(cfg.output_dir) if cfg.resume else None
    if checkpoint is not None:
        was = json.loads((checkpoint / STATE_FILE).read_text()).get("data")
        if was:  # a checkpoint from before this record: not checked
            check_launch(checkpoint, was, accelerator)


def check_launch(checkpoint: Path, was: dict[str, Any], accelerator) -> None:
    """Refuse a checkpoint (its saved ``data`` record: ``was``) of another number of processes (another global
    batch) or written with or without DeepSpeed, or at another ZeRO stage (neither reads the other's files)."""
    if was["processes"] != accelerator.num_processes:
        raise ValueError(processes_changed(checkpoint, was["processes"], accelerator.num_processes))
    now = checkpoint_format(accelerator)
    if was.get("format", now) != now:
        raise ValueError(
            f"{checkpoint} was saved training with {was['format']}, this run trains with {now}: its optimiser state "
            "cannot be read across; rerun with the first run's --deepspeed, or with --no-resume to start over"
        )


#: the data order's version: 2 since an epoch is a whole number of optimiser steps (``MicroBatches``)
DATA_ORDER = 2


def processes_changed(checkpoint: Path, was: int, now: int) -> str:
    """Why a checkpoint saved by ``was`` processes is not resumed by ``now``."""
    return (f"{checkpoint} was saved by a run of {was} processes, this one has {now}: a step's batch (batch size "
            f"x accumulation x processes) would change; rerun with {was}, or with --no-resume to start over")


def _fit(cfg, accelerator, model, tokenizer, examples, collate, objective, before_training, data_files=None):
    import torch
    from accelerate.utils import DistributedType, set_seed
    from transformers import get_scheduler

    out = Path(cfg.output_dir)
    world, rank = accelerator.num_processes, accelerator.process_index
    checkpoint = latest_checkpoint(out) if cfg.resume else None
    saved = json.loads((checkpoint / STATE_FILE).read_text()) if checkpoint is not None else {}
    # a checkpoint saved before an epoch was a whole number of optimiser steps (data order 1) goes on in its
    # own order: its steps would otherwise be counted and drawn anew
    version = saved.get("data", {}).get("order", 1) if checkpoint is not None else DATA_ORDER
    # what a checkpoint's steps were drawn from: a resume over other data, or over another number of
    # processes (another global batch), would go on with other batches than the first run's
    data = {"examples": len(examples), "processes": world, "digest": data_digest(examples),
            "format": checkpoint_format(accelerator), "order": version}
    set_seed(cfg.seed)
    accumulation = cfg.gradient_accumulation_steps if version >= 2 else 1
    order = MicroBatches(len(examples), cfg.batch_size, world, rank, cfg.seed, accumulation)
    steps = total_steps(cfg, order.per_epoch)
    accum = cfg.gradient_accumulation_steps

    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.learning_rate,
        betas=(cfg.adam_beta1, cfg.adam_beta2),
        eps=cfg.adam_epsilon,
    )
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        # no dataloader goes through prepare(): tell DeepSpeed the micro-batch size ourselves
        ds_config = accelerator.state.deepspeed_plugin.deepspeed_config
        ds_config["train_micro_batch_size_per_gpu"] = cfg.batch_size
        ds_config["train_batch_size"] = cfg.batch_size * accum * world
        if ds_config.get("gradient_clipping") == "auto":  # accelerate would put 1.0 there
            ds_config["gradient_clipping"] = cfg.max_grad_norm
    model, optimizer = accelerator.prepare(model, optimizer)
    # the scheduler is made on the prepared optimizer: ZeRO-3 regroups the parameters of the one it wraps.
    # It stays unwrapped (accelerate's wrapper steps it once per process); it is checkpointed
    scheduler_name = {"constant": "constant_with_warmup"}.get(cfg.lr_scheduler, cfg.lr_scheduler)
    scheduler = get_scheduler(
        scheduler_name, optimizer, num_warmup_steps=math.ceil(cfg.warmup_ratio * steps), num_training_steps=steps
    )
    accelerator.register_for_checkpointing(scheduler)

    start = 0
    if checkpoint is not None:  # its settings: checked by fit's already_trained
        was = saved.get("data", data)  # a checkpoint from before this record: not checked
        if "data" not in saved and accelerator.is_main_process:
            print(f"[agentenv] warning: {checkpoint} was saved before checkpoints recorded their data and launch: "
                  "resume it with the same data files and number of processes (nothing here can check), or start "
                  "over with --no-resume", file=sys.stderr)
        check_launch(checkpoint, was, accelerator)
        if (was["examples"], was["digest"]) != (data["examples"], data["digest"]):
            raise ValueError(
                f"{checkpoint} was saved training on other data ({was['examples']} examples, now "
                f"{data['examples']}{', other ones' if was['examples'] == data['examples'] else ''}): the data "
                "files changed since; rerun with the first run's, or with --no-resume to start over"
            )
        if saved["total_steps"] != steps:
            raise ValueError(
                f"{checkpoint} belongs to a run of {saved['total_steps']} steps, this one has {steps}: "
                "rerun with the first run's settings, or with --no-resume to start over"
            )
        accelerator.load_state(str(checkpoint))
        start = saved["step"]
        accelerator.print(f"resumed from {checkpoint} at step {start}/{steps}")
    if accelerator.is_main_process:
        out.mkdir(parents=True, exist_ok=True)
        if not cfg.resume:  # an earlier run's checkpoints would outrank this run's when pruned or resumed
            shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
            (out / DONE_FILE).unlink(missing_ok=True)  # its final model is about to be replaced
        for partial in (out / CHECKPOINTS).glob("step-*"):  # saves a kill cut short; none is resumed from
            if not (partial / STATE_FILE).exists():
                shutil.rmtree(partial, ignore_errors=True)
        write_json(out / "train_config.json", cfg.to_json())
        _truncate_log(out, start)
    if start == 0 and before_training is not None:
        before_training(model)
    accelerator.wait_for_everyone()

    history: list[dict[str, Any]] = []
    t0, tokens_seen = time.perf_counter(), 0
    if cfg.report_to:
        accelerator.init_trackers(out.name, config={k: v for k, v in cfg.to_json().items() if not isinstance(v, list)})
    bar = TrainingProgress(steps, start, enabled=accelerator.is_main_process)
    try:
        for step in range(start, steps):
            micro = [collate([examples[i] for i in order.indices(step * accum + g)]) for g in range(accum)]
            units = torch.tensor(float(sum(objective.units(b) for b in micro)), device=accelerator.device)
            units = accelerator.reduce(units, reduction="sum")
            model.train()
            sums: dict[str, Any] = {}
            grad_norm = None
            for batch in micro:
                batch = _to_device(batch, accelerator.device)
                tokens_seen += int(batch["attention_mask"].sum())
                with accelerator.accumulate(model):
                    loss_sum, metrics = objective.loss_sum(model, batch)
                    accelerator.backward(loss_sum * (accum * world) / units)
                    if accelerator.sync_gradients and cfg.max_grad_norm > 0:
                        grad_norm = accelerator.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    optimizer.step()
                    optimizer.zero_grad()
                for k, v in {"loss": loss_sum, **metrics}.items():
                    sums[k] = sums.get(k, 0.0) + v.detach().float()
            lr = scheduler.get_last_lr()[0]
            scheduler.step()

            done = step + 1
            if done % cfg.log_every == 0 or done == steps:
                reduced = {k: float(accelerator.reduce(v, reduction="sum") / units) for k, v in sums.items()}
                elapsed = time.perf_counter() - t0
                line = {
                    "step": done,
                    "epoch": round(order.epoch_of(done * accum), 4),
                    **reduced,
                    "lr": lr,
                    "grad_norm": float(grad_norm) if grad_norm is not None else None,
                    "units": int(units),
                    "tokens_per_s_per_process": round(tokens_seen / elapsed, 1) if elapsed > 0 else None,
                    "elapsed_s": round(elapsed, 3),
                    "peak_memory_gib": round(peak_memory_gib(accelerator.device), 4),
                }
                history.append(line)
                if accelerator.is_main_process:
                    with (out / LOG_FILE).open("a") as f:
                        f.write(json.dumps(line) + "\n")
                if cfg.report_to:
                    accelerator.log({k: v for k, v in line.items() if isinstance(v, int | float)}, step=done)
            bar.update(done, _figures(history[-1]) if history else {})
            if cfg.save_every > 0 and done % cfg.save_every == 0 and done < steps:
                save_checkpoint(cfg, accelerator, done, steps, data)
    finally:  # closed on a Ctrl-C too: its message then comes below the bar, not above a redrawn one
        bar.close()
    save_final(cfg, accelerator, model, tokenizer, steps, data_files)
    if cfg.report_to:
        accelerator.end_training()
    return history


def _figures(line: dict[str, Any]) -> dict[str, str]:
    """What the bar shows of a log line: the loss, learning rate and tokens per second (of each process)."""
    tokens = line["tokens_per_s_per_process"]
    return {"loss": f"{line['loss']:.4f}", "lr": f"{line['lr']:.2g}", "tok/s": f"{tokens:.0f}" if tokens else "-"}


class TrainingProgress:
    """A bar of optimiser steps with the figures of the last logged step (the main process only); where
    stderr is not a terminal (a log file), a line every tenth of the run instead."""

    def __init__(self, steps: int, start: int, enabled: bool) -> None:
        self.steps, self.enabled = steps, enabled
        self.live = enabled and sys.stderr.isatty()
        self._next_line, self._printed = start, start
        self._bar = None
        if self.live:
            from tqdm import tqdm

            self._bar = tqdm(total=steps, initial=start, desc="train", unit="step", dynamic_ncols=True)

    def update(self, done: int, figures: dict[str, str]) -> None:
        """``done`` steps of ``steps``; ``figures`` (name: text) shown beside the bar or in the line."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix(figures, refresh=False)
            self._bar.update(done - self._bar.n)
        elif done > self._printed and (done >= self._next_line or done == self.steps):
            self._next_line, self._printed = done + max(1, self.steps // 10), done
            print(f"train step {done}/{self.steps}  " + "  ".join(f"{k} {v}" for k, v in figures.items()),
                  file=sys.stderr, flush=True)  # beside eval's progress lines: stdout keeps the results

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def plot_loss(log: list[dict[str, Any]], path: Path) -> Path | None:
    """The training loss (and, where logged, the learning rate) against the optimiser step, as a PNG; below
    it, where the log has them (DPO's), how often the chosen side wins and by what margin."""
    points = [(line["step"], line["loss"]) for line in log if "loss" in line]
    if not points:
        return None
    import matplotlib

    matplotlib.use("Agg")  # files only, never a display
    import matplotlib.pyplot as plt

    accuracy = [(line["step"], line["reward_accuracy"]) for line in log if "reward_accuracy" in line]
    fig, axes = plt.subplots(2 if accuracy else 1, 1, figsize=(6, 5.5 if accuracy else 3.5), dpi=100,
                             sharex=True, squeeze=False)
    ax = axes[0][0]
    ax.plot([s for s, _ in points], [v for _, v in points], label="loss")
    ax.set_ylabel("loss")
    ax.grid(alpha=0.3)
    rates = [(line["step"], line["lr"]) for line in log if line.get("lr") is not None]
    if rates:
        twin = ax.twinx()
        twin.plot([s for s, _ in rates], [v for _, v in rates], color="grey", linestyle=":", label="learning rate")
        twin.set_ylabel("learning rate", color="grey")
    ax.set_title(path.parent.name)
    if accuracy:
        low = axes[1][0]
        low.plot([s for s, _ in accuracy], [v for _, v in accuracy], color="tab:green")
        low.set_ylabel("reward accuracy", color="tab:green")
        low.set_ylim(-0.05, 1.05)
        low.grid(alpha=0.3)
        margins = [(line["step"], line["reward_margin"]) for line in log if "reward_margin" in line]
        if margins:
            twin = low.twinx()
            twin.plot([s for s, _ in margins], [v for _, v in margins], color="tab:purple", linestyle="--")
            twin.set_ylabel("reward margin", color="tab:purple")
    axes[-1][0].set_xlabel("optimiser step")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def peak_memory_gib(device) -> float:
    """This process's peak memory so far: allocated GPU memory on CUDA, resident set (max RSS) on CPU."""
    import torch

    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**30
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux reports KiB


def _truncate_log(out: Path, step: int) -> None:
    """Drop log lines past the step a resumed run restarts from."""
    p = out / LOG_FILE
    if p.exists():
        write_text_atomic(p, "".join(json.dumps(line) + "\n" for line in read_log(out) if line["step"] <= step))


def save_checkpoint(cfg: TrainConfig, accelerator, step: int, steps: int, data: dict[str, Any]) -> Path:
    """Save the training state after ``step`` of ``steps``, with the settings and ``data`` (the examples'
    count and digest, the processes) a resume must match; keep the newest ``save_total_limit``."""
    root = Path(cfg.output_dir) / CHECKPOINTS
    path = root / f"step-{step}"
    # with tied embeddings (SmolLM2, Qwen2.5-0.5B, the demo's Llama) accelerate warns at every save that it left
    # out the tied copy and asks to check the reload: load_state ties them again (a test resumes one exactly)
    shared_tensor_warning = logging.getLogger("accelerate.utils.other")
    level = shared_tensor_warning.level
    shared_tensor_warning.setLevel(logging.ERROR)
    try:
        accelerator.save_state(str(path))
    finally:
        shared_tensor_warning.setLevel(level)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        # written last and atomically: a checkpoint with this file is complete
        write_json(path / STATE_FILE, {"step": step, "total_steps": steps, "config": cfg.to_json(), "data": data})
        complete = sorted((p for p in root.glob("step-*") if (p / STATE_FILE).exists()), key=_step_of)
        for old in complete[: max(0, len(complete) - max(1, cfg.save_total_limit))]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
    return path


def _step_of(p: Path) -> int:
    return int(p.name.split("-")[1])


def save_final(cfg: TrainConfig, accelerator, model, tokenizer, steps: int, data_files: str | None = None) -> None:
    """Save the trained model + tokenizer in Hugging Face format, then mark the run done (with the digest of
    its data files, :func:`data_fingerprint`)."""
    out = Path(cfg.output_dir)
    accelerator.wait_for_everyone()
    state_dict = accelerator.get_state_dict(model)  # every process takes part; ZeRO-3 gathers onto the main one
    unwrapped = accelerator.unwrap_model(model)
    if unwrapped.config.use_cache is False:
        unwrapped.config.use_cache = True  # checkpointing turned it off for training, not for inference
    if accelerator.is_main_process:
        # only here: other processes hold no gathered weights (DeepSpeed gives them None), and transformers 4.x
        # writes the weights file on every process, so theirs (ZeRO-3's empty shards) could overwrite this one
        unwrapped.save_pretrained(out, state_dict=state_dict)
        tokenizer.save_pretrained(out)
        plot_loss(read_log(out), out / LOSS_CURVE)  # before the mark: a finished run is never redrawn
        # done before the checkpoints go: a run killed while deleting them must not find neither and train again
        write_json(out / DONE_FILE, {"done": True, "steps": steps, "config": cfg.to_json(), "data_files": data_files})
        if cfg.delete_checkpoints_when_done:
            shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
    accelerator.wait_for_everyone()


def release(accelerator) -> None:
    """Forget accelerate's process-wide state so another run can start in this process (the process
    group itself is kept for torchrun)."""
    from accelerate.state import AcceleratorState, GradientState

    accelerator.free_memory()
    AcceleratorState._reset_state()
    GradientState._reset_state()
