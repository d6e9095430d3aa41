"""How the iterative trainers (AgentEvol, ETO, RFT, Best-of-N) reach environments and run a model on them.

Environments come through :mod:`agentenv.controller`: :class:`~agentenv.controller.sources.RemoteEnv` over
HTTP (the normal path; URLs from ``--url`` or the registry's default port) or, with ``local=True``,
:class:`~agentenv.controller.sources.LocalEnv` running the env class registered under the
``agentenv.envs`` entry point in this process.  Python callers may also pass ready ``sources`` (any
:class:`~agentenv.controller.sources.EnvSource`), which is how tests use a toy environment.

Episodes run through :func:`agentenv.controller.evaluate`, so every exploration and evaluation is a
resumable AgentTraj JSONL file with a report beside it.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agentenv.controller.selection import check_served
from agentenv.controller.sources import EnvSource
from agentenv.env import info_splits
from agentenv.trainer.launch import find_program


@dataclass(kw_only=True)
class EnvSettings:
    """Which environments to use and how episodes run on them."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "environments": ("envs", "urls", "local", "max_rounds", "concurrency", "max_new_tokens", "agent_batch_size"),
    }
    #: the flags every command spells alike (``agentenv eval --env ... --url ...``)
    flag_names: ClassVar[dict[str, str]] = {"envs": "env", "urls": "url"}
    required: ClassVar[tuple[str, ...]] = ("envs",)

    #: environment names, space- or comma-separated, e.g. maze wordle babyai
    envs: list[str] = field(default_factory=list)
    #: server URLs: NAME=URL for one env (repeat for several servers), a bare URL for every env;
    #: default: each env's registered port on 127.0.0.1
    urls: list[str] = field(default_factory=list)
    #: run the environments in this process (entry point agentenv.envs) instead of over HTTP
    local: bool = False
    #: rounds per episode (0: each env's own limit)
    max_rounds: int = 0
    #: episodes run at once
    concurrency: int = 16
    #: reply length limit during rollouts
    max_new_tokens: int = 512
    #: generation batch size of the local model (0: the concurrency)
    agent_batch_size: int = 0

    def __post_init__(self) -> None:
        check_env_settings(self)
        parent = getattr(super(), "__post_init__", None)  # the training settings beside these, if any
        if parent is not None:
            parent()


@dataclass(kw_only=True)
class RolloutSettings(EnvSettings):
    """Environments, plus the splits an iterative trainer explores and evaluates on."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "exploration": ("explore_split", "explore_limit", "explore_tasks"),
        "evaluation": ("eval_split", "eval_limit", "eval_tasks", "eval_temperature"),
    }

    #: split explored for new trajectories
    explore_split: str = "train"
    #: explore at most this many tasks per env (0: the whole split)
    explore_limit: int = 0
    #: explore exactly these task indices in every env instead of explore_split (e.g. one BabyAI level)
    explore_tasks: list[int] = field(default_factory=list)
    #: split the model is evaluated on after each iteration
    eval_split: str = "test"
    #: evaluate on at most this many tasks per env (0: the whole split)
    eval_limit: int = 0
    #: evaluate on exactly these task indices in every env instead of eval_split
    eval_tasks: list[int] = field(default_factory=list)
    #: sampling temperature for evaluation (0: greedy)
    eval_temperature: float = 0.0


def check_env_settings(cfg: EnvSettings) -> None:
    """Refuse episode settings no run can use, before anything starts (``ValueError`` naming the setting):
    a mistake found after hours of training is found too late."""
    for name in ("concurrency", "max_new_tokens"):
        if getattr(cfg, name) < 1:
            raise ValueError(f"{name} must be at least 1, not {getattr(cfg, name)}")
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if f.name in ("max_rounds", "agent_batch_size", "explore_limit", "eval_limit", "iterations") and value < 0:
            raise ValueError(f"{f.name} must not be negative, not {value}")
        if f.name.endswith("temperature") and not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{f.name} must be 0 (greedy) or more, not {value}")
        if f.name == "samples_per_instruction" and value < 1:
            raise ValueError(f"{f.name} must be at least 1, not {value}")
    launcher = getattr(cfg, "train_launcher", "")
    if launcher.strip():
        check_launcher(launcher)


def check_launcher(launcher: str) -> None:
    """A ``train_launcher`` that splits like a shell command whose program exists (found on PATH or beside
    this Python, where a virtual environment's ``torchrun`` is)."""
    try:
        program = shlex.split(launcher)[0]
    except (ValueError, IndexError) as exc:
        raise ValueError(f"train_launcher {launcher!r} is not a command line ({exc})") from None
    if find_program(program) is None:
        where = Path(sys.executable).parent
        raise ValueError(f"train_launcher {launcher!r}: no program {program!r} on PATH or in {where}")


def open_sources(cfg: EnvSettings, given: Mapping[str, EnvSource] | None = None) -> dict[str, EnvSource]:
    """One source per env of ``cfg.envs``: ``given`` ones first, else in-process or HTTP per ``cfg.local``."""
    if not cfg.envs:
        raise ValueError("no environments: set envs (e.g. --env maze wordle)")
    if cfg.local and cfg.urls:  # as eval and bench refuse them: --url was ignored without a word
        raise ValueError("--local and --url exclude each other")
    sources: dict[str, EnvSource] = {}
    missing = [env for env in cfg.envs if not (given and env in given)]
    if cfg.local and missing:
        from agentenv.controller.sources import LocalEnv
        from agentenv.registry import env_class

        sources.update({env: LocalEnv(env_class(env)) for env in missing})
    elif missing:
        from agentenv.controller.commands import env_urls
        from agentenv.controller.sources import RemoteEnv

        urls = (
            env_urls(missing, list(cfg.urls)) if cfg.urls else {env: [_default_url(env)] for env in missing}
        )
        sources.update({env: RemoteEnv(env, env_urls_) for env, env_urls_ in urls.items()})
    for env in cfg.envs:
        if given and env in given:
            sources[env] = given[env]
    return {env: sources[env] for env in cfg.envs}


def check_sources(cfg: RolloutSettings, sources: Mapping[str, EnvSource], explores: bool = True) -> None:
    """Every env answers and has the splits the run evaluates on (and explores, where it ``explores``),
    checked before the first training stage: a server that is down or a mistyped split stops the run now,
    not hours later."""
    for source in sources.values():
        source.info()
        if explores:
            task_indices(source, cfg.explore_split, cfg.explore_tasks)
        task_indices(source, cfg.eval_split, cfg.eval_tasks)


def close_sources(sources: Mapping[str, EnvSource], given: Mapping[str, EnvSource] | None = None) -> None:
    """Close the sources this module opened (not the caller's own)."""
    for env, source in sources.items():
        if not (given and env in given):
            source.close()


def _default_url(env: str) -> str:
    from agentenv.registry import default_url

    return default_url(env)


def split_indices(source: EnvSource, split: str, limit: int = 0) -> list[int]:
    """The task indices of ``split`` as the env's ``/info`` lists them (the first ``limit`` when > 0)."""
    splits = info_splits(source.info())
    if split not in splits:
        raise ValueError(f"{source.name}: no split {split!r} (it has: {', '.join(splits) or 'none'})")
    indices = list(splits[split])
    return indices[:limit] if limit > 0 else indices


def task_indices(source: EnvSource, split: str, explicit: Sequence[int] = (), limit: int = 0) -> list[int]:
    """``explicit`` task indices if any are given (each one the env serves: asked of it before anything is
    played), else those of ``split``; the first ``limit`` when > 0."""
    if explicit:
        check_served(source, explicit)
    indices = list(explicit) or split_indices(source, split)
    return indices[:limit] if limit > 0 else indices


def keep_threshold(source: EnvSource, override: float | None = None) -> float | None:
    """The reward an explored trajectory must exceed to be kept (``None``: the env does not say; use success)."""
    if override is not None:
        return override
    value = source.info().get("keep_threshold")
    return None if value is None else float(value)


def run_model(
    model_path: str | os.PathLike,
    cfg: EnvSettings,
    sources: Mapping[str, EnvSource],
    tasks: Mapping[str, Sequence[int]],
    out_path: str | os.PathLike,
    *,
    samples_per_task: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    progress: bool = True,
    title: str = "eval",
):
    """Run the local model at ``model_path`` (an :class:`~agentenv.controller.hf_agent.HFAgent`) on ``tasks``
    (env -> indices), ``samples_per_task`` times each; trajectories go to ``out_path`` (resumable).

    Returns the :class:`~agentenv.controller.report.EvalReport`.  The model is freed before returning.
    """
    from agentenv.controller.evaluator import EvalTask, evaluate
    from agentenv.controller.hf_agent import HFAgent

    eval_tasks = [
        EvalTask(env, getattr(sources[env], "base_urls", []), i)
        for env, indices in tasks.items()
        for i in indices
    ]
    agent = HFAgent(
        str(model_path),
        max_new_tokens=cfg.max_new_tokens,
        temperature=temperature,
        seed=seed,
        batch_size=cfg.agent_batch_size or cfg.concurrency,
    )
    try:
        return evaluate(
            agent,
            eval_tasks,
            out_path,
            concurrency=cfg.concurrency,
            max_rounds=cfg.max_rounds or None,
            temperature=temperature,
            seed=seed,
            samples_per_task=samples_per_task,
            progress=progress,
            sources=sources,
            title=title,
        )
    finally:
        agent.close()
        del agent
        free_memory()


def free_memory() -> None:
    """Return a finished model's memory (GPU included) before the next stage loads another."""
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover - torch is a training dependency
        pass


def scores(report) -> dict[str, dict[str, Any]]:
    """``{env: {"n", "score", "success"}}`` from a report (its per-env total rows, and ``"all"``)."""
    return {
        row.env: {"n": row.n, "score": row.score, "success": row.success}
        for row in report.rows
        if row.task_type == "all"
    }


def run_until_complete(
    cfg: EnvSettings,
    model_path: str | os.PathLike,
    sources: Mapping[str, EnvSource],
    tasks: Mapping[str, Sequence[int]],
    out_path: str | os.PathLike,
    samples_per_task: int,
    temperature: float,
    seed: int,
    progress: bool = True,
    attempts: int = 3,
    title: str = "eval",
):
    """:func:`run_model`, run again (it resumes) while episodes end on environment errors; an error if
    some still fail after ``attempts`` runs."""
    for _ in range(attempts):
        report = run_model(
            model_path,
            cfg,
            sources,
            tasks,
            out_path,
            samples_per_task=samples_per_task,
            temperature=temperature,
            seed=seed,
            progress=progress,
            title=title,
        )
        if not report.errors:
            return report
    raise RuntimeError(
        f"{report.errors} episode(s) of {out_path} kept failing on environment errors; fix the servers and "
        "rerun the same command to resume"
    )
