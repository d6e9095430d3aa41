"""AgentEvol: an agent that evolves by exploring, keeping what was rewarded, and relearning (DESIGN.md §7).

Iteration 0 is the behavioural-cloning agent: trained from the base model on the initial (expert) set, or
given as ``bc_model``, then evaluated.  Each iteration ``m = 1..M`` then

1. **explores** the instruction set (the ``explore_split`` of every env: wider than the BC set) with the
   model of iteration ``m-1``, ``samples_per_instruction`` episodes per task at ``explore_temperature``;
2. **filters**: keeps the explored trajectories whose reward is above the env's keep threshold
   (``Environment.keep_threshold``: reward > 0.99 for 0-1 envs, > 99 for SciWorld, > 0 for BabyAI) and
   **merges** them with the initial set (``merge="initial"``, AgentGym's default) or with iteration
   ``m-1``'s training set (``merge="previous"``) — see :func:`select_explored` and :func:`merge_trajectories`;
3. **trains** a new agent on the merged set **from the base model** (not from the previous agent);
4. **evaluates** it on the ``eval_split``.

The loop, its run folder and resume are the staged run's (:mod:`agentenv.trainer.staged`); this file supplies
the filter-and-merge stage and training from the base model.  Everything lands under ``output_dir``:
``iter_m/explore.jsonl``, ``kept.jsonl``, ``train.jsonl``, ``model/``, ``eval.jsonl`` (+ reports),
``stages.json``, and at the top ``summary.json`` and ``curve.png``.  Rerunning the same command resumes a
killed run at the stage it was in.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from agentenv.controller.sources import EnvSource
from agentenv.data.trajectory import (
    Trajectory,
    content_key,
    read_trajectories,
    trajectory_order,
    write_trajectories,
)
from agentenv.trainer.bc import BCConfig
from agentenv.trainer.launch import run_training
from agentenv.trainer.rollouts import RolloutSettings
from agentenv.trainer.rollouts import keep_threshold as env_keep_threshold
from agentenv.trainer.runs import IterationDir
from agentenv.trainer.staged import StagedRun, tasks_with_data

PER_ITEM_POLICIES = ("distinct", "best")
MERGE_STRATEGIES = ("initial", "previous")


# --- filter and merge (pure) -----------------------------------------------------------------------------


def passes(t: Trajectory, threshold: float | None) -> bool:
    """Kept by AgentEvol: reward strictly above the threshold (``None``: the episode's own ``success``)."""
    return t.success if threshold is None else t.reward > threshold


def select_explored(
    trajectories: Iterable[Trajectory],
    thresholds: float | Mapping[str, float | None] | None,
    *,
    per_item: str = "distinct",
    max_per_item: int = 0,
) -> list[Trajectory]:
    """The explored trajectories AgentEvol keeps.

    A trajectory is kept when its reward is above its env's threshold (``thresholds`` is one value for
    every env or a mapping env -> value; ``None`` falls back to the trajectory's ``success``).  Copies with
    the same item id and the same text are kept once.  When an instruction was sampled several times:

    - ``per_item="distinct"`` keeps every distinct successful trajectory of it (at most ``max_per_item``
      when > 0, the lowest sample indices first) — more varied data, as in rejection-sampling fine-tuning;
    - ``per_item="best"`` keeps one: the highest reward, the lowest sample index among equals.

    The result is sorted by env, task index and sample index, so it does not depend on the order in which
    episodes finished.
    """
    if per_item not in PER_ITEM_POLICIES:
        raise ValueError(f"per_item must be one of {PER_ITEM_POLICIES}, not {per_item!r}")

    def threshold(env: str) -> float | None:
        if isinstance(thresholds, Mapping):
            return thresholds.get(env)
        return thresholds

    passed = sorted((t for t in trajectories if passes(t, threshold(t.env))), key=trajectory_order)
    by_item: dict[str, list[Trajectory]] = {}
    seen: set = set()
    for t in passed:
        key = content_key(t)
        if key in seen:
            continue
        seen.add(key)
        by_item.setdefault(t.item_id, []).append(t)
    kept: list[Trajectory] = []
    for group in by_item.values():
        if per_item == "best":
            kept.append(max(group, key=lambda t: t.reward))  # max keeps the first of equal rewards
        else:
            kept.extend(group[:max_per_item] if max_per_item > 0 else group)
    return sorted(kept, key=trajectory_order)


def merge_trajectories(base: Iterable[Trajectory], new: Iterable[Trajectory]) -> list[Trajectory]:
    """``base`` followed by the trajectories of ``new`` it does not already hold; no (item id, text) pair
    appears twice in the result (duplicates inside ``base`` are dropped too)."""
    merged: list[Trajectory] = []
    seen: set = set()
    for t in [*base, *new]:
        key = content_key(t)
        if key not in seen:
            seen.add(key)
            merged.append(t)
    return merged


# --- the loop ---------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class AgentEvolConfig(RolloutSettings, BCConfig):
    """AgentEvol settings.  ``model`` is the base model every iteration is trained from, ``data`` the
    initial (expert) trajectories, ``output_dir`` the run folder; the training fields (learning rate,
    epochs, batch size ...) apply to every iteration's behavioural cloning."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "iterations": ("bc_model", "iterations", "train_launcher"),
        "exploration": ("samples_per_instruction", "explore_temperature", "explore_items"),
        "selection": ("keep_threshold", "merge", "per_item"),
    }

    #: an already trained BC agent used as iteration 0 (default: train it from model on data)
    bc_model: str = ""
    #: evolution iterations M after the BC agent
    iterations: int = 4
    #: episodes per instruction while exploring (K)
    samples_per_instruction: int = 1
    #: sampling temperature while exploring (T)
    explore_temperature: float = 0.7
    #: keep explored trajectories with reward above this (default: each env's keep_threshold)
    keep_threshold: float | None = None
    #: merge kept trajectories with the initial set ("initial") or the previous iteration's set ("previous")
    merge: str = "initial"
    #: with several samples per instruction: keep each distinct success ("distinct") or the best one ("best")
    per_item: str = "distinct"
    #: explore every task of explore_split ("split") or only the instructions in data ("data")
    explore_items: str = "split"
    #: run training under this command, e.g. "torchrun --nproc_per_node 8" (default: in this process)
    train_launcher: str = ""


class AgentEvol(StagedRun):
    """AgentEvol's stages: keep the rewarded explored trajectories, merge them, retrain from the base model."""

    algorithm: ClassVar[str] = "agentevol"
    select_stage: ClassVar[str] = "filtered"
    cfg: AgentEvolConfig

    def prepare(self) -> None:
        cfg = self.cfg
        if cfg.merge not in MERGE_STRATEGIES:
            raise ValueError(f"merge must be one of {MERGE_STRATEGIES}, not {cfg.merge!r}")
        if cfg.per_item not in PER_ITEM_POLICIES:
            raise ValueError(f"per_item must be one of {PER_ITEM_POLICIES}, not {cfg.per_item!r}")
        if cfg.explore_items not in ("split", "data"):
            raise ValueError(f"explore_items must be split or data, not {cfg.explore_items!r}")
        if cfg.keep_threshold is not None and not math.isfinite(cfg.keep_threshold):
            raise ValueError(f"keep_threshold must be a finite number, not {cfg.keep_threshold}")
        if not cfg.data:
            raise ValueError("--data (data): give the initial (expert) trajectory files")
        from agentenv.data.dataset import iter_trajectories

        # records without a score (AgentGym's releases) are demonstrations: successes, as BC reads them
        initial = iter_trajectories(cfg.data, unscored_reward=1.0)
        self.initial = [t for t in initial if t.success or not cfg.successes_only]
        if not self.initial and not cfg.bc_model:  # before any env opens: iteration 0's BC would fail on it
            raise ValueError(f"no {'successful ' if cfg.successes_only else ''}trajectories in {', '.join(cfg.data)}")
        self.note_other_envs(self.initial, "each iteration trains on them; they are neither explored nor evaluated")

    def initial_model(self, it: IterationDir) -> dict[str, Any]:
        cfg = self.cfg
        model = cfg.bc_model or run_training("bc", self._bc_config(list(cfg.data), it / "model"), cfg.train_launcher)
        return {"model": str(model), "train_size": len(self.initial)}

    def explore_filter(self) -> tuple[str, dict[str, set[int]]] | None:
        return ("training data", tasks_with_data(self.initial)) if self.cfg.explore_items == "data" else None

    def select(self, it: IterationDir, explored: list[Trajectory]) -> dict[str, Any]:
        cfg = self.cfg
        thresholds = {env: env_keep_threshold(src, cfg.keep_threshold) for env, src in self.envs.items()}
        kept = select_explored(
            (t for t in explored if t.env in self.envs),
            thresholds,
            per_item=cfg.per_item,
            max_per_item=cfg.samples_per_instruction,
        )
        previous = IterationDir(self.run_dir, it.iteration - 1) / "train.jsonl"
        base = self.initial if cfg.merge == "initial" or it.iteration == 1 else list(read_trajectories(previous))
        train_set = merge_trajectories(base, kept)
        if not kept:  # the iteration then trains on what an earlier one did: say so, or it passes unseen
            above = ", ".join(f"{env} > {'success' if t is None else t}" for env, t in thresholds.items())
            print(f"[agentenv] iteration {it.iteration} kept none of its {len(explored)} explored episodes "
                  f"(none rewarded {above}): it trains on the {'initial' if base is self.initial else 'previous'} "
                  "set alone", file=sys.stderr)
        write_trajectories(it / "kept.jsonl", kept)
        write_trajectories(it / "train.jsonl", train_set)
        return {"kept": len(kept), "train_size": len(train_set), "thresholds": thresholds}

    def train(self, it: IterationDir, model: str) -> dict[str, Any]:
        """From the base model (not the previous agent), on the merged set."""
        out = run_training("bc", self._bc_config([str(it / "train.jsonl")], it / "model"), self.cfg.train_launcher)
        return {"model": str(out), "train_size": it.info(self.select_stage)["train_size"]}

    def summary(self, it: IterationDir) -> dict[str, Any]:
        return {"kept": it.info(self.select_stage)["kept"]} if it.iteration else {}

    def _bc_config(self, data: list[str], out: Path) -> BCConfig:
        """This run's training settings, from the base model, on ``data``, into ``out``."""
        settings = {f.name: getattr(self.cfg, f.name) for f in fields(BCConfig)}
        settings.update(model=self.cfg.model, data=data, output_dir=str(out))
        return BCConfig(**settings)


def run_agentevol(
    cfg: AgentEvolConfig, *, sources: Mapping[str, EnvSource] | None = None, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) AgentEvol; returns the summary (also in ``<output_dir>/summary.json``).

    ``sources`` (env name -> :class:`~agentenv.controller.sources.EnvSource`) replaces the HTTP servers or
    ``local`` envs for the envs it names, e.g. ``{"toy": LocalEnv(ToyEnv)}``.
    """
    return AgentEvol(cfg, sources=sources, progress=progress).run()
