"""``agentenv train bc|dpo|eto|evol|rft|grpo`` and ``agentenv best-of-n``.

Every flag comes from the algorithm's config dataclass (``--help`` lists them); ``--config FILE.json``
gives settings from a file.  Training commands also run under ``torchrun`` / ``accelerate launch``::

    torchrun --nproc_per_node 2 -m agentenv.trainer bc --model M --data D --output-dir OUT
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv.cli import HelpWithDefaults
from agentenv.controller.commands import one_line, one_line_errors, resume_advice, start_servers_hint
from agentenv.processes import first_process
from agentenv.trainer.config_args import add_dataclass_args, dataclass_from_args
from agentenv.trainer.runs import print_summary


def _servers_hint(args: argparse.Namespace, envs: list[str] | None = None) -> str:
    """What to do when the server of ``envs`` (default: any of the run's) does not answer; a trainer keeps
    what it finished."""
    envs = envs or getattr(args, "envs", None)
    if not envs and getattr(args, "config", None):  # the envs a --config file names
        try:
            envs = list(json.loads(Path(args.config).read_text()).get("envs", []))
        except (OSError, ValueError, AttributeError, TypeError):
            envs = []
    return f"{start_servers_hint(envs or [])}; then rerun the same command: finished work is kept"


def _trainer_command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A trainer's mistakes and lost servers or endpoints as one ``error: ...`` line saying what to do, and
    a Ctrl-C as one line saying how to resume."""
    run = one_line_errors(_servers_hint, lambda args: "rerun the same command to resume", also=(FileNotFoundError,))(run)

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except SystemExit as exc:  # which of a launcher's processes says it (an error may be one process's own)
            if isinstance(exc.code, str) and not first_process():
                raise SystemExit(f"[rank {os.environ['RANK']}] {exc.code}") from None
            raise
        except KeyboardInterrupt:
            if first_process():
                where = getattr(args, "output_dir", None) or getattr(args, "out", None)  # (or in --config's file)
                kept = f" from what {where} keeps" if where else ""
                print(f"\ninterrupted: rerun the same command to resume{kept}", file=sys.stderr)
            return 130
        except Exception as exc:  # torch's writer says a full disk as "unexpected pos 134528 vs 134420"
            where = getattr(args, "output_dir", None)
            if where and (free := _free_bytes(where)) is not None and free < DISK_FULL_BYTES:
                raise SystemExit(f"error: {type(exc).__name__}: {one_line(exc)}; the disk of {where} is full "
                                 f"({free:,} bytes free): free some and rerun the same command to resume") from None
            raise

    return wrapped


#: an output folder's disk with less free than this is taken for full when a run fails
DISK_FULL_BYTES = 64 << 20


def _free_bytes(path: str) -> int | None:
    """Free bytes on the disk of ``path`` (or of its nearest existing folder)."""
    folder = Path(path).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def _say_trained(out: Path, curve: str) -> None:
    """The closing line of a training run: where its model and curve are, and its last logged figures."""
    from agentenv.trainer.engine import read_log

    if not first_process():
        return
    log = read_log(out)
    last = log[-1] if log else {}
    figures = ", ".join(f"{k} {last[k]:.4g}" for k in ("loss", "reward") if isinstance(last.get(k), int | float))
    print(f"model: {out}" + (f"; curve: {out / curve}" if (out / curve).exists() else "")
          + (f" (step {last['step']}: {figures})" if figures else ""))


def _end_process_group() -> None:
    """Leave a launcher's (torchrun / accelerate) process group cleanly."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _settings(config_class: type, args: argparse.Namespace) -> Any:
    """The run's config from the flags, its ``--model`` checked before anything is written or loaded."""
    from agentenv.models import check_model_folder

    cfg = dataclass_from_args(config_class, args)
    if list(getattr(cfg, "envs", None) or []) == ["all"]:  # as eval, collect and up take it
        from agentenv.registry import installed_envs

        cfg = dataclasses.replace(cfg, envs=installed_envs())
    try:
        check_model_folder(cfg.model, label=f"--model {cfg.model}")
        if getattr(cfg, "bc_model", ""):  # AgentEvol's and RFT's given iteration-0 agent
            check_model_folder(cfg.bc_model, label=f"--bc-model {cfg.bc_model}")
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    return cfg


def _bc(args: argparse.Namespace) -> int:
    from agentenv.trainer.bc import BCConfig, train_bc
    from agentenv.trainer.engine import LOSS_CURVE

    _say_trained(train_bc(_settings(BCConfig, args)), LOSS_CURVE)
    _end_process_group()
    return 0


def _dpo(args: argparse.Namespace) -> int:
    from agentenv.trainer.dpo import DPOConfig, train_dpo
    from agentenv.trainer.engine import LOSS_CURVE

    _say_trained(train_dpo(_settings(DPOConfig, args)), LOSS_CURVE)
    _end_process_group()
    return 0


def _grpo(args: argparse.Namespace) -> int:
    from agentenv.trainer.grpo import CURVE_FILE, GRPOConfig, train_grpo

    _say_trained(train_grpo(_settings(GRPOConfig, args)), CURVE_FILE)
    _end_process_group()
    return 0


def _eto(args: argparse.Namespace) -> int:
    from agentenv.trainer.eto import ETOConfig, run_eto

    print_summary(run_eto(_settings(ETOConfig, args)))
    return 0


def _evol(args: argparse.Namespace) -> int:
    from agentenv.trainer.agentevol import AgentEvolConfig, run_agentevol

    print_summary(run_agentevol(_settings(AgentEvolConfig, args)))
    return 0


def _rft(args: argparse.Namespace) -> int:
    from agentenv.trainer.rft import RFTConfig, run_rft

    print_summary(run_rft(_settings(RFTConfig, args)))
    return 0


def _best_of_n(args: argparse.Namespace) -> int:
    from agentenv.trainer.best_of_n import BestOfNConfig, run_best_of_n

    cfg = dataclass_from_args(BestOfNConfig, args)
    out = Path(cfg.out)
    try:
        run_best_of_n(cfg)  # prints its table
    except KeyboardInterrupt:
        print(f"\ninterrupted: {resume_advice(out)}", file=sys.stderr)
        return 130
    print(f"summary: {out.with_name(out.stem + '.best_of_n.json')} and .md; episodes: {out}")
    return 0


def _config_class(path: str, name: str) -> Callable[[], type]:
    def load() -> type:
        import importlib

        return getattr(importlib.import_module(path), name)

    return load


# name -> (help, config class, handler)
TRAIN_COMMANDS: dict[str, tuple[str, Callable[[], type], Callable[[argparse.Namespace], int]]] = {
    "bc": ("behavioural cloning on AgentTraj trajectories", _config_class("agentenv.trainer.bc", "BCConfig"), _bc),
    "dpo": ("DPO on a file of (chosen, rejected) trajectory pairs", _config_class("agentenv.trainer.dpo", "DPOConfig"), _dpo),
    "eto": ("ETO: explore, pair failures with expert trajectories, DPO, iterate",
            _config_class("agentenv.trainer.eto", "ETOConfig"), _eto),
    "evol": ("AgentEvol: explore, keep rewarded trajectories, merge, retrain from the base model, evaluate",
             _config_class("agentenv.trainer.agentevol", "AgentEvolConfig"), _evol),
    "rft": ("rejection-sampling fine-tuning baseline", _config_class("agentenv.trainer.rft", "RFTConfig"), _rft),
    "grpo": ("online RL: multi-turn GRPO (TRL's GRPOTrainer) on episodes played on the env servers",
             _config_class("agentenv.trainer.grpo", "GRPOConfig"), _grpo),
}


def add_train_commands(sub: Any) -> None:
    """Add one subparser per training algorithm to ``sub``."""
    for name, (help_text, config_class, handler) in TRAIN_COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, usage="%(prog)s [options]",
                           formatter_class=HelpWithDefaults)
        add_dataclass_args(p, config_class())
        p.set_defaults(func=_trainer_command(handler))


def add_commands(sub: Any) -> None:
    """Add ``train`` (with ``bc``, ``dpo``, ``eto``, ``evol``, ``rft``, ``grpo``) and ``best-of-n``."""
    train = sub.add_parser("train", help="train agents: bc, dpo, eto, evol (AgentEvol), rft, grpo")
    add_train_commands(train.add_subparsers(dest="algorithm", required=True))

    from agentenv.trainer.best_of_n import BestOfNConfig

    bon = sub.add_parser(
        "best-of-n", help="Best-of-N evaluation: N samples per task, a task succeeds if any does", usage="%(prog)s [options]",
        formatter_class=HelpWithDefaults,
    )
    add_dataclass_args(bon, BestOfNConfig)
    bon.set_defaults(func=_trainer_command(_best_of_n))
