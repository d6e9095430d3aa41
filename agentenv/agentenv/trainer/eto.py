"""ETO (exploration-based trajectory optimisation): learn from the agent's own failures with DPO.

Iteration 0 is the SFT (behavioural-cloning) agent: ``model`` itself, or — with ``sft=True`` — a model
trained from ``model`` on ``expert_data`` (ETO's SFT: 3 epochs, lr 2e-5).  It is evaluated.  Each iteration
``m = 1..M`` then

1. **explores** the train-split instructions that have an expert trajectory with the model of iteration
   ``m-1`` (``samples_per_instruction`` episodes each, at ``explore_temperature``);
2. **pairs** each explored trajectory with the expert trajectory of the same instruction: the higher
   reward wins, ties give no pair, and the losing trajectory is cut to the winner's length plus
   ``rejected_extra_rounds`` rounds (ETO: 5) — see :func:`build_pairs`; with ``pair_cut="first_difference"``
   both sides end at the first agent turn where they differ instead (a step-wise pair), with
   ``pair_by="success"`` only a success beats a failure, and with ``pair_with="own_best"`` each explored
   trajectory is paired with the agent's own best one of its instruction instead of the expert's;
3. **trains** with DPO from the model of iteration ``m-1``, which is also the frozen reference (its
   log-probabilities are computed once and saved beside the pairs); the log-probability of a trajectory
   is the sum over its agent turns only, observations masked (:mod:`agentenv.trainer.dpo`);
4. **evaluates** the new model.

ETO's published settings: DPO lr 1e-6 in the first iteration and 5e-7 later, beta 0.1 (0.5 for ALFWorld and
later iterations), 3 epochs, global batch 32 — ``iteration_learning_rates`` / ``iteration_betas`` set them
per iteration.  The loop, its run folder and resume are the staged run's (:mod:`agentenv.trainer.staged`); this
file supplies the pairing stage and DPO from the previous agent.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from agentenv.controller.sources import EnvSource
from agentenv.data.trajectory import Trajectory, content_key, trajectory_order
from agentenv.trainer.bc import BCConfig
from agentenv.trainer.dpo import (
    DPOConfig,
    PreferencePair,
    check_objective,
    check_pairing,
    make_pair,
    tokenize_pairs,
    write_pairs,
)
from agentenv.trainer.engine import TrainConfig
from agentenv.trainer.launch import run_training
from agentenv.trainer.rollouts import RolloutSettings
from agentenv.trainer.runs import IterationDir
from agentenv.trainer.staged import StagedRun, tasks_with_data

log = logging.getLogger(__name__)

#: what an explored trajectory is paired with: its instruction's expert trajectory (ETO), or the agent's
#: own best explored trajectory of that instruction (on-policy pairs: the winner is behaviour the agent
#: already produces; it needs several samples per instruction)
PAIR_WITH = ("expert", "own_best")


def best_per_item(trajectories: Iterable[Trajectory]) -> dict[str, Trajectory]:
    """The best trajectory of each instruction (the highest reward; the first among equals)."""
    best: dict[str, Trajectory] = {}
    for t in trajectories:
        if t.item_id not in best or t.reward > best[t.item_id].reward:
            best[t.item_id] = t
    return best


def build_pairs(
    experts: Iterable[Trajectory],
    explored: Iterable[Trajectory],
    extra_rounds: int = 5,
    cut: str = "trajectory",
    by: str = "reward",
    pair_with: str = "expert",
) -> list[PreferencePair]:
    """ETO's contrastive pairs: each explored trajectory against its instruction's expert trajectory
    (cut as :func:`~agentenv.trainer.dpo.make_pair` says), or with ``pair_with="own_best"`` against the
    best explored trajectory of its instruction.

    Explored trajectories with nothing to pair with (no expert trajectory of their instruction), ties and
    repeats (same text) give no pair.  Pairs whose sides start from different first observations are
    counted in a warning: another task under the same item id (AgentGym's BabyAI and SciWorld ids name other
    tasks here), or the same task shown otherwise (SciWorld may list a room's objects in another order).
    """
    check_pair_with(pair_with)
    # in task and sample order, not the order episodes finished in: own_best's winner among equals and the
    # pairs file's order (DPO's shuffle permutes it) would depend on concurrency and timing
    explored = sorted(explored, key=trajectory_order)
    by_item = best_per_item(experts if pair_with == "expert" else explored)
    pairs, seen, other_task = [], set(), set()
    for t in explored:
        winner = by_item.get(t.item_id)  # the expert's trajectory, or the agent's own best
        if winner is None or content_key(t) in seen:
            continue
        seen.add(content_key(t))
        if first_observation(winner) != first_observation(t):
            other_task.add(t.item_id)
        pair = make_pair(winner, t, extra_rounds, cut, by)
        if pair is not None:
            pairs.append(pair)
    if other_task:
        log.warning(
            "%d of %d instructions: the trajectory an explored one is paired with starts from another first "
            "observation (e.g. %s); another task under the same id? (AgentGym's BabyAI and SciWorld ids name "
            "other tasks here: docs/agentgym-compatibility.md)", len(other_task), len({t.item_id for t in explored}),
            sorted(other_task)[0],
        )
    return pairs


def first_observation(trajectory: Trajectory) -> str | None:
    """The first human turn after the first agent turn (the task's first observation, after the instruction
    and its acknowledgement), its whitespace collapsed; ``None`` where there is none."""
    turns = trajectory.conversations
    first_gpt = next((i for i, turn in enumerate(turns) if turn.role == "gpt"), len(turns))
    found = next((turn.value for turn in turns[first_gpt:] if turn.role == "human"), None)
    return " ".join(found.split()) if found is not None else None


def scored_experts(experts: Iterable[Trajectory], best: Mapping[str, float]) -> list[Trajectory]:
    """Expert trajectories read without a score (an infinite reward) take their env's ``best`` score, on the
    env's own scale (SciWorld's is 0-100): a demonstration solves its task, and a partly solved failure must
    not beat it (ETO's gold trajectories score 1 on its 0-1 scales)."""
    return [dataclasses.replace(t, reward=best[t.env]) if math.isinf(t.reward) else t for t in experts]


def check_pair_with(pair_with: str, samples_per_instruction: int | None = None, temperature: float | None = None) -> None:
    """Refuse an unknown ``pair_with``, and own-best pairs from one episode per instruction, or from greedy
    episodes (identical: no pairs)."""
    if pair_with not in PAIR_WITH:
        raise ValueError(f"pair_with must be one of {PAIR_WITH}, not {pair_with!r}")
    if pair_with == "own_best" and samples_per_instruction is not None and samples_per_instruction < 2:
        raise ValueError("pair_with own_best needs samples_per_instruction >= 2 (one episode has no rival)")
    if pair_with == "own_best" and temperature is not None and temperature <= 0:
        raise ValueError("pair_with own_best needs explore_temperature > 0 (greedy episodes of a task are all the same)")


@dataclass(kw_only=True)
class ETOConfig(RolloutSettings, TrainConfig):
    """ETO settings.  ``model`` is the SFT agent (or the base model when ``sft`` is on); the training
    fields apply to every DPO stage (ETO's defaults: lr 1e-6 constant after a 0.1 warmup, 3 epochs)."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "iterations": (
            "expert_data", "sft", "sft_learning_rate", "sft_epochs", "iterations", "iteration_learning_rates",
            "iteration_betas", "train_launcher",
        ),
        "exploration": ("samples_per_instruction", "explore_temperature"),
        "pairing": ("beta", "rejected_extra_rounds", "pair_by"),
        "experimental": ("nll_weight", "loss_type", "preference_span", "pair_cut", "pair_with"),
    }  # fmt: skip
    required: ClassVar[tuple[str, ...]] = ("expert_data",)

    #: expert trajectories (the SFT set) the explored ones are paired with
    expert_data: list[str] = field(default_factory=list)
    #: first train the SFT agent from model on expert_data
    sft: bool = False
    #: the SFT agent's peak learning rate (with sft)
    sft_learning_rate: float = 2e-5
    #: the SFT agent's passes over expert_data (with sft)
    sft_epochs: float = 3.0
    #: ETO iterations after the SFT agent
    iterations: int = 2
    #: DPO temperature beta (all iterations, unless iteration_betas says otherwise; 0 with nll_weight > 0:
    #: fine-tuning on the chosen sides only, the control for what the preference adds)
    beta: float = 0.1
    learning_rate: float = 1e-6
    warmup_ratio: float = 0.1
    #: ETO's DPO schedule: constant after the warmup
    lr_scheduler: str = "constant"
    #: per-iteration DPO learning rates (the last repeats), e.g. 1e-6 5e-7
    iteration_learning_rates: list[float] = field(default_factory=list)
    #: per-iteration betas (the last repeats), e.g. 0.1 0.5
    iteration_betas: list[float] = field(default_factory=list)
    #: weight of the chosen (expert) side's per-token NLL beside the DPO loss (RPO; 0: ETO's pure DPO)
    nll_weight: float = 0.0
    #: sigmoid (DPO, ETO's) or ipo (squared loss toward a margin of 1 / (2 beta))
    loss_type: str = "sigmoid"
    #: turn (ETO: the agent turns' tokens) or action (each reply's action line; the NLL term keeps whole turns)
    preference_span: str = "turn"
    #: rejected trajectories are cut to the chosen one's length plus this many rounds
    rejected_extra_rounds: int = 5
    #: trajectory (ETO: whole trajectories) or first_difference (step-wise: both sides end at the first
    #: agent turn where they differ)
    pair_cut: str = "trajectory"
    #: reward (ETO: the higher reward wins) or success (only a success beats a failure)
    pair_by: str = "reward"
    #: expert (ETO: the instruction's expert trajectory) or own_best (the agent's best explored one)
    pair_with: str = "expert"
    #: episodes per instruction while exploring
    samples_per_instruction: int = 1
    #: sampling temperature while exploring (0: greedy)
    explore_temperature: float = 0.0
    #: run training under this command, e.g. "torchrun --nproc_per_node 8" (default: in this process)
    train_launcher: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_pairing(self.pair_cut, self.pair_by)
        check_pair_with(self.pair_with, self.samples_per_instruction, self.explore_temperature)
        # every listed beta, as every listed learning rate: one beyond --iterations runs once they are raised
        for m in range(1, max(self.iterations, len(self.iteration_betas)) + 1):
            check_objective(self.beta_for(m), self.nll_weight, self.loss_type, self.preference_span)
        if self.rejected_extra_rounds < 0:
            raise ValueError(f"rejected_extra_rounds must not be negative, not {self.rejected_extra_rounds}")
        for rate in self.iteration_learning_rates + ([self.sft_learning_rate] if self.sft else []):
            if not (math.isfinite(rate) and rate > 0):
                raise ValueError(f"learning rates must be positive finite numbers, not {rate}")
        if self.sft and not self.sft_epochs > 0:
            raise ValueError(f"sft_epochs must be positive, not {self.sft_epochs}")

    def learning_rate_for(self, iteration: int) -> float:
        return _per_iteration(self.iteration_learning_rates, iteration, self.learning_rate)

    def beta_for(self, iteration: int) -> float:
        return _per_iteration(self.iteration_betas, iteration, self.beta)


def _per_iteration(values: list[float], iteration: int, default: float) -> float:
    if not values:
        return default
    return values[min(iteration, len(values)) - 1]


class ETO(StagedRun):
    """ETO's stages: pair each explored trajectory with its instruction's expert one, DPO from the previous agent."""

    algorithm: ClassVar[str] = "eto"
    select_stage: ClassVar[str] = "paired"
    cfg: ETOConfig

    def prepare(self) -> None:
        cfg = self.cfg
        if not cfg.expert_data:
            raise ValueError("--expert-data (expert_data): give the expert trajectory files")
        from agentenv.data.dataset import iter_trajectories

        # an expert trajectory without a score (AgentGym's released files) is a successful demonstration: read
        # with an infinite reward, which select() sets to its env's best score once the env is open
        experts = list(iter_trajectories(cfg.expert_data, unscored_reward=math.inf))
        self.note_other_envs(experts, "no pairs are built for them" + ("; the SFT stage trains on them" if cfg.sft else ""))
        self.sft_size = len(experts)  # SFT trains on the whole expert data, as BC would
        self.experts = [t for t in experts if t.env in cfg.envs]

    def initial_model(self, it: IterationDir) -> dict[str, Any]:
        cfg = self.cfg
        if not cfg.sft:
            return {"model": str(cfg.model), "train_size": 0}
        return {"model": str(run_training("bc", _sft_config(cfg, it / "model"), cfg.train_launcher)),
                "train_size": self.sft_size}

    def explore_filter(self) -> tuple[str, dict[str, set[int]]]:
        """The explore-split tasks that have an expert trajectory to pair with."""
        return "expert data", tasks_with_data(self.experts)

    def select(self, it: IterationDir, explored: list[Trajectory]) -> dict[str, Any]:
        cfg = self.cfg
        best = {env: float(source.info()["reward_range"][1]) for env, source in self.envs.items()}
        experts = scored_experts(self.experts, best)
        pairs = build_pairs(experts, explored, cfg.rejected_extra_rounds, cfg.pair_cut, cfg.pair_by, cfg.pair_with)
        write_pairs(it / "pairs.jsonl", pairs)
        previous = IterationDir(self.run_dir, it.iteration - 1).info("trained")["model"]
        return {"pairs": len(pairs), "trainable": trainable_pairs(pairs, _dpo_config(cfg, it, previous))}

    def train(self, it: IterationDir, model: str) -> dict[str, Any]:
        """DPO from the previous agent, which is also the frozen reference."""
        paired = it.info(self.select_stage)
        if paired.get("trainable", paired["pairs"]) == 0:  # nothing to learn from: the agent stays
            skipped = "no pair trainable (none within max_length, or its sides the same)" if paired["pairs"] else "no pairs"
            return {"model": str(model), "skipped": skipped}
        out = run_training("dpo", _dpo_config(self.cfg, it, model), self.cfg.train_launcher)
        m = it.iteration
        return {"model": str(out), "pairs": paired["pairs"], "beta": self.cfg.beta_for(m), "learning_rate": self.cfg.learning_rate_for(m)}

    def summary(self, it: IterationDir) -> dict[str, Any]:
        return {"pairs": it.info(self.select_stage)["pairs"]} if it.iteration else {}


def run_eto(
    cfg: ETOConfig, *, sources: Mapping[str, EnvSource] | None = None, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) ETO; returns the summary (also in ``<output_dir>/summary.json``)."""
    return ETO(cfg, sources=sources, progress=progress).run()


def trainable_pairs(pairs: list[PreferencePair], dpo: DPOConfig) -> int:
    """How many pairs DPO can train on: both sides keep a trained turn within ``max_length``."""
    if not pairs:
        return 0
    from agentenv.trainer.engine import load_tokenizer

    examples, _ = tokenize_pairs(pairs, load_tokenizer(dpo), dpo.max_length, dpo.preference_span)
    return len(examples)


def _train_settings(cfg: ETOConfig) -> dict[str, Any]:
    return {f.name: getattr(cfg, f.name) for f in fields(TrainConfig)}


def _sft_config(cfg: ETOConfig, out: Path) -> BCConfig:
    settings = _train_settings(cfg)
    settings.update(
        output_dir=str(out),
        data=list(cfg.expert_data),
        learning_rate=cfg.sft_learning_rate,
        num_epochs=cfg.sft_epochs,
        warmup_ratio=0.03,
        lr_scheduler="cosine",  # ETO's SFT stage (FastChat's), whatever the DPO stages use
    )
    return BCConfig(**settings)


def _dpo_config(cfg: ETOConfig, it: IterationDir, model: str) -> DPOConfig:
    m = it.iteration
    settings = _train_settings(cfg)
    settings.update(
        model=str(model),
        output_dir=str(it / "model"),
        pairs=[str(it / "pairs.jsonl")],
        learning_rate=cfg.learning_rate_for(m),
        beta=cfg.beta_for(m),
        nll_weight=cfg.nll_weight,
        loss_type=cfg.loss_type,
        preference_span=cfg.preference_span,
    )
    return DPOConfig(**settings)
