"""Online RL: multi-turn, multi-environment GRPO through TRL's ``GRPOTrainer``.

::

    agentenv train grpo --model runs/bc --env maze babyai --output-dir runs/grpo --max-steps 100

TRL owns the RL step (advantages, clipped surrogate, optimiser, checkpoints); this file gives it a
``rollout_func`` that plays whole episodes on the project's environments:

1. TRL's sampler hands each process a batch of prompts, every prompt repeated ``num_generations`` (G) times
   in a row.  A prompt here is a task, ``"<env>/<data_idx>"``: the dataset is the ``train_split`` tasks of
   every env in ``envs``, shuffled together, so one step mixes tasks of several envs.
2. The rollout engine (:mod:`agentenv.controller.rollout`) plays each prompt as one episode over HTTP with
   the policy being trained: :class:`~agentenv.controller.hf_agent.HFAgent` on the live model (CPU, or a GPU
   without vLLM), or TRL's vLLM engine (``use_vllm``, weights synced by TRL before every rollout).  Replies
   are sampled at ``temperature``, each episode from its own seed.
3. Each episode becomes one sequence, rendered with the model's chat template and tokenised as behavioural
   cloning does (:func:`agentenv.data.tokenize.encode_conversation`): ``prompt_ids`` are the instruction and
   the first observation up to the assistant header, ``completion_ids`` everything after (every reply, and
   the observations between them), ``env_mask`` 1 on the agent's own tokens (reply and end-of-turn marker,
   but not the marker of a reply cut at ``max_new_tokens``, which the model never chose) and 0 on the
   observations and role headers.  Under vLLM, as with HFAgent, an episode whose next prompt leaves no room
   for a reply in ``max_length`` stops (``context_overflow``) and replies end at the template's end-of-turn
   token.
4. The reward is the env's final score, normalised to 0..1 by its ``reward_range`` (``reward="score"``;
   the tool envs' score is their progress rate) or 1 / 0 for success (``reward="success"``), as the server
   reported it.  One reward function per env (named after it) scores that env's episodes, so TRL logs
   ``rewards/<env>/mean`` per step; an episode that ended on an environment error is unscorable (no
   advantage).

TRL then computes, per group of G episodes of one task, ``A_i = (r_i - mean(r)) / (std(r) + 1e-4)``
(``scale_rewards="group"``) and minimises, over the completion tokens ``t`` where ``env_mask`` is 1,

    ratio_t = exp(logp_t - logp_old_t)
    loss    = -sum_t min(ratio_t * A_i, clip(ratio_t, 1 - epsilon, 1 + epsilon) * A_i) / (masked tokens)
              + beta * ratio_t * KL(policy || reference)_t                 (beta 0 by default: no reference)

(``loss_type="dapo"``: normalised by the masked tokens of the whole step).  With one update per rollout
``logp_old`` is ``logp`` detached, so the ratio is 1 and the gradient is REINFORCE's with a group baseline.
The KL term is TRL's k3 estimate times the (differentiable) ratio (``use_bias_correction_kl``, TRL 1.16's
default).  A reply whose text re-encodes to other tokens than the policy sampled has ``env_mask`` 0 (see
:func:`episode_tokens`), as has every token of an episode that ended on an environment error.

A run writes what the other trainers write (:mod:`agentenv.trainer.engine`): ``train_config.json``,
``train_log.jsonl`` (one line per logged step: loss, reward, per-env reward ...), checkpoints under
``checkpoints/`` (TRL's ``checkpoint-N``: model, optimiser, scheduler, RNG), the final model and
``train_state.json``, and ``reward_curve.png``.  A killed run resumes from its latest checkpoint with the
same settings; a finished one is not repeated.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import shutil
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode
from agentenv.controller.sources import EnvSource
from agentenv.data.trajectory import Trajectory, write_json, write_text_atomic
from agentenv.processes import first_process, process_count, quiet_deepspeed_on_cpu
from agentenv.trainer.config_args import changed_settings, field_defaults
from agentenv.trainer.engine import (
    CHECKPOINTS,
    DONE_FILE,
    LOG_FILE,
    TrainConfig,
    already_trained,
    holding_output_dir,
    load_tokenizer,
    processes_changed,
    read_log,
)
from agentenv.trainer.rollouts import EnvSettings, close_sources, open_sources, task_indices

log = logging.getLogger(__name__)

REWARDS = ("score", "success")
#: TRL's loss aggregations (as of TRL 1.16) and advantage scalings
LOSS_TYPES = ("dapo", "grpo", "dr_grpo", "bnpo", "cispo", "sapo", "luspo", "vespo")
SCALE_REWARDS = ("group", "batch", "none")
CURVE_FILE = "reward_curve.png"


@dataclass(kw_only=True)
class GRPOConfig(TrainConfig, EnvSettings):
    """GRPO settings.  ``batch_size`` counts episodes per process and micro-batch; the episodes of one
    optimiser step (``batch_size * gradient_accumulation_steps * processes``) are played in one rollout and
    must be a multiple of ``num_generations``."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "tasks": ("train_split", "train_tasks", "train_limit"),
        "grpo": ("num_generations", "reward", "temperature", "top_p", "beta", "epsilon", "loss_type", "scale_rewards"),
        "vllm (GPU)": ("use_vllm", "vllm_mode", "vllm_server_url", "vllm_gpu_memory_utilization"),
    }

    learning_rate: float = 1e-6
    #: passes over the train tasks (used when max_steps is 0)
    num_epochs: float = 3.0
    #: tokens of an episode's whole conversation: an episode that reaches it before a reply stops there
    max_length: int = 4096
    #: optimiser steps to run (each plays batch_size * gradient_accumulation_steps episodes per process);
    #: 0: num_epochs passes over the train tasks instead
    max_steps: int = 100
    #: episodes per process and micro-batch
    batch_size: int = 8
    #: the split whose tasks are trained on, in every env
    train_split: str = "train"
    #: exactly these task indices in every env instead of train_split
    train_tasks: list[int] = field(default_factory=list)
    #: at most this many tasks per env (0: all of them)
    train_limit: int = 0
    #: episodes per task in a step (the group whose rewards are compared)
    num_generations: int = 4
    #: score (the env's final score, normalised to 0..1) or success (1 or 0)
    reward: str = "score"
    #: sampling temperature of the rollouts
    temperature: float = 1.0
    #: nucleus sampling of the rollouts: the smallest set of tokens holding this much probability (1: all)
    top_p: float = 1.0
    #: KL coefficient against the starting model (0: no reference model is kept)
    beta: float = 0.0
    #: clipping range of the probability ratio
    epsilon: float = 0.2
    #: TRL's loss aggregation: dapo, grpo, dr_grpo, bnpo ... (LOSS_TYPES)
    loss_type: str = "dapo"
    #: advantage scaling: group (GRPO), batch, none (Dr. GRPO)
    scale_rewards: str = "group"
    #: generate with TRL's vLLM engine (GPU; one training process)
    use_vllm: bool = False
    #: colocate (vLLM in the training process) or server (``trl vllm-serve`` on other GPUs)
    vllm_mode: str = "colocate"
    #: the vLLM server's URL in server mode (default: TRL's, http://localhost:8000)
    vllm_server_url: str = ""
    #: GPU memory fraction vLLM may take in colocate mode
    vllm_gpu_memory_utilization: float = 0.3

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_generations < 2:
            raise ValueError(f"num_generations must be at least 2 (a group to compare), not {self.num_generations}")
        episodes = self.batch_size * self.gradient_accumulation_steps
        if episodes % self.num_generations:
            raise ValueError(
                f"batch_size * gradient_accumulation_steps ({episodes}) must be a multiple of num_generations "
                f"({self.num_generations}): each task is played num_generations times in one step"
            )
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, not {self.reward!r}")
        if self.vllm_mode not in ("colocate", "server"):
            raise ValueError(f"vllm_mode must be colocate or server, not {self.vllm_mode!r}")
        if not self.temperature > 0:
            raise ValueError(f"temperature must be positive (GRPO samples), not {self.temperature}")
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be positive, not {self.epsilon}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], not {self.top_p}")
        if not self.beta >= 0:
            raise ValueError(f"beta must be 0 or more (a KL penalty), not {self.beta}")
        # checked here, before the model loads: TRL checks them at its first loss, after a rollout
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type must be one of {', '.join(LOSS_TYPES)}, not {self.loss_type!r}")
        if self.scale_rewards not in SCALE_REWARDS:
            raise ValueError(f"scale_rewards must be one of {', '.join(SCALE_REWARDS)}, not {self.scale_rewards!r}")


# --- one episode as TRL's sequence ----------------------------------------------------------------------


class EpisodeTokens(NamedTuple):
    """One episode as TRL's sequence; ``unsampled``: how many of its replies are not trained because their
    tokens are not the ones sampled."""

    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    unsampled: int = 0


def episode_tokens(
    tokenizer, trajectory: Trajectory, max_length: int | None = None, sampled: Mapping[int, list[int]] | None = None
) -> EpisodeTokens | None:
    """The :class:`EpisodeTokens` of a finished episode, or ``None`` if it has no reply.

    The conversation is tokenised as behavioural cloning tokenises it; the prompt ends where the first reply
    begins (after its role header, where generation started), the completion ends with the last reply, and
    ``env_mask`` is 1 exactly on the tokens that carry BC's loss: each reply and its end-of-turn marker, but
    for the marker of a reply the agent cut at ``max_new_tokens`` (``meta["truncated_replies"]``).

    ``sampled`` (reply number -> the token ids the policy sampled before its stop token, where known): a
    reply whose text tokenises otherwise (its decoded text was stripped, cut at a stop string, or held a
    token that is no whole character) is not trained, as the policy never chose those tokens.  The replies
    after it are trained as they were sampled: the policy saw its earlier replies as the same re-encoded text.
    """
    from agentenv.data.tokenize import IGNORE_INDEX, encode_conversation

    encoded = encode_conversation(tokenizer, trajectory.conversations, max_length)
    if encoded is None:
        return None
    trained = [j for j, label in enumerate(encoded.labels) if label != IGNORE_INDEX]
    first, end = trained[0], trained[-1] + 1  # the completion ends on the last reply's end-of-turn marker
    env_mask = [int(label != IGNORE_INDEX) for label in encoded.labels[first:end]]
    # A reply cut at max_new_tokens never ended its turn: the marker the template adds is not the model's
    # choice, and training it would teach (or, with a negative advantage, unteach) ending a reply there.
    cut = set(trajectory.meta.get("truncated_replies", ()))
    completion = encoded.input_ids[first:end]
    spans: list[list[int]] = []  # each reply's positions in the completion
    for j, trains in enumerate(env_mask):
        if trains and (j == 0 or not env_mask[j - 1]):
            spans.append([])
        if trains:
            spans[-1].append(j)
    unsampled = 0
    for reply, span in enumerate(spans):
        ids = (sampled or {}).get(reply)
        if reply in cut:  # the marker after it, of one token or several (Llama-2's " </s>")
            for j in span[len(ids):] if ids is not None else span[-1:]:
                env_mask[j] = 0
        if ids is not None and [completion[j] for j in span[: len(ids)]] != list(ids):
            unsampled += 1
            for j in span:
                env_mask[j] = 0
    return EpisodeTokens(encoded.input_ids[:first], completion, env_mask, unsampled)


def episode_reward(episode: Episode, info: dict[str, Any], reward: str) -> float | None:
    """The reward of a finished episode: its normalised final score, or success; ``None`` (unscorable) if
    it ended on an environment error."""
    if episode.stop_reason == "error":
        return None
    if reward == "success":
        return float(episode.success)
    low, high = info["reward_range"]
    return (episode.score - low) / (high - low) if high > low else episode.score


class VLLMAgent(Agent):
    """Replies generated by the GRPO trainer's vLLM engine (its weights are the policy's: TRL syncs them
    before each rollout); prompts and replies are rendered and decoded as :class:`HFAgent` does."""

    name = "vllm"

    def __init__(self, trainer: Any, renderer: Any) -> None:
        self.trainer, self.renderer = trainer, renderer

    def act(self, episodes: list[Episode]) -> list[str]:
        replies = [""] * len(episodes)
        prompts = self.renderer.encode_prompts([ep.messages() for ep in episodes])
        live = [i for i, (ep, prompt) in enumerate(zip(episodes, prompts, strict=True)) if self.renderer.fits(ep, prompt)]
        if live:
            generate = self.trainer.vllm_generation.generate
            _, completions, _, _ = generate(prompts=[prompts[i] for i in live], images=None, num_generations=1)
            for i, ids in zip(live, completions, strict=True):
                replies[i] = self.renderer.reply(episodes[i], list(ids))
        return replies


# --- the rollout function -------------------------------------------------------------------------------


class EpisodeRollouts:
    """TRL's ``rollout_func``: plays the prompts' tasks on the envs and returns TRL's sequences."""

    def __init__(self, cfg: GRPOConfig, sources: dict[str, EnvSource], tokenizer) -> None:
        self.cfg, self.sources, self.tokenizer = cfg, sources, tokenizer
        self._said: set[str] = set()  # the notes given this run
        #: replies played and replies left untrained (their text re-encodes otherwise) since the last log
        #: line, over every process: ``train_log.jsonl``'s ``untrained_replies`` / ``replies``
        self.reply_counts = {"replies": 0, "untrained_replies": 0}

    def __call__(self, prompts: list[str], trainer) -> dict[str, list]:
        from agentenv.controller.hf_agent import HFAgent
        from agentenv.controller.rollout import Rollout, RolloutTask

        cfg = self.cfg
        policy = trainer.accelerator.unwrap_model(trainer.model)
        was_training = policy.training
        seed = cfg.seed * 1_000_003 + trainer.state.global_step  # a new draw each step, the same on resume
        # episodes are numbered across the step's processes (an episode's seed derives from its number), so
        # N processes play the episodes one process would
        first = trainer.accelerator.process_index * len(prompts)
        tasks = [
            RolloutTask(env, int(idx), sample=first + position, temperature=cfg.temperature, seed=seed)
            for position, (env, idx) in enumerate(prompt.split("/") for prompt in prompts)
        ]
        local = HFAgent(
            model=policy,
            tokenizer=self.tokenizer,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            top_p=cfg.top_p,
            seed=seed,
            batch_size=cfg.agent_batch_size or cfg.concurrency,
            max_length=cfg.max_length,
            keep_sampled_ids=True,  # a reply is trained only where its text re-encodes to them
        )
        agent = VLLMAgent(trainer, local) if cfg.use_vllm else local
        try:
            episodes = Rollout(agent, self.sources, concurrency=cfg.concurrency, max_rounds=cfg.max_rounds or None).run(tasks)
        finally:
            policy.train(was_training)  # HFAgent put it in eval mode
        if episodes and all(ep.stop_reason == "error" for ep in episodes):
            # a server gone mid-step: stop before the optimiser step (a session it cannot open raises), so that
            # no checkpoint counts the step and the rerun plays it again; an env that fails its tasks for
            # good is no reason to stop, and its episodes train nothing (no reward)
            for env in dict.fromkeys(task.env for task in tasks):
                self.sources[env].session().close()
        by_position = {ep.sample - first: ep for ep in episodes}
        out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "env_mask", "env", "env_reward")}
        unsampled, replies = 0, sum(len(ep.sampled_ids) for ep in episodes)
        for position, task in enumerate(tasks):
            ep = by_position[position]
            reward = episode_reward(ep, self.sources[task.env].info(), cfg.reward)
            tokens = episode_tokens(self.tokenizer, ep.trajectory, cfg.max_length, ep.sampled_ids)
            if tokens is None:  # no reply (reset failed, or the prompt overflowed): nothing to learn from
                tokens = EpisodeTokens(local.prompt_ids(ep.messages()[:3]), [self.tokenizer.eos_token_id], [0])
                reward = None
            if reward is None:  # unscorable: no advantage, and no tokens in the loss's denominator either
                tokens = tokens._replace(env_mask=[0] * len(tokens.env_mask))
            unsampled += tokens.unsampled
            out["prompt_ids"].append(tokens.prompt_ids)
            out["completion_ids"].append(tokens.completion_ids)
            out["env_mask"].append(tokens.env_mask)
            out["env"].append(task.env)
            out["env_reward"].append(reward)
        counts = self._step_counts(trainer, episodes, unsampled, replies)
        self._say_what_trains_nothing(episodes, counts, trainer.state.global_step + 1,
                                      speak=trainer.accelerator.is_main_process)
        out["logprobs"] = None  # sequences are re-tokenised: TRL recomputes log-probabilities itself
        return out

    def _step_counts(self, trainer, episodes: list[Episode], unsampled: int, replies: int) -> dict[str, int]:
        """The step's episodes, those that filled the context (``stuck``: before any reply), replies and
        untrained replies, over every process (each plays its share of the step); the replies are added to
        ``reply_counts``."""
        import torch

        overflowed = [ep for ep in episodes if ep.stop_reason == "context_overflow"]
        local = [len(episodes), len(overflowed), sum(not ep.sampled_ids for ep in overflowed), replies, unsampled]
        total = trainer.accelerator.reduce(torch.tensor(local, device=trainer.accelerator.device), reduction="sum")
        counts = dict(zip(("episodes", "overflowed", "stuck", "replies", "untrained_replies"),
                          (int(n) for n in total.tolist()), strict=True))
        self.reply_counts["replies"] += counts["replies"]
        self.reply_counts["untrained_replies"] += counts["untrained_replies"]
        return counts

    def _say_what_trains_nothing(self, episodes: list[Episode], counts: dict[str, int], step: int,
                                 speak: bool) -> None:
        """Refuse a step whose every episode filled the context before its first reply (the run would train on
        nothing, step after step), on every process at once; say once a run what else trains nothing."""
        if counts["episodes"] and counts["stuck"] == counts["episodes"]:
            prompt = max((ep.meta.get("context_tokens", 0) for ep in episodes), default=0)
            raise ValueError(f"every episode of step {step} filled --max-length {self.cfg.max_length} before its "
                             f"first reply (prompts of up to {prompt} tokens, and --max-new-tokens "
                             f"{self.cfg.max_new_tokens} for the reply): raise --max-length")
        if not speak:  # a launcher's other processes: the first one speaks
            return
        notes = []
        if counts["overflowed"] and "overflow" not in self._said:
            self._said.add("overflow")
            notes.append(f"{counts['overflowed']} of {counts['episodes']} episodes of step {step} ended with the "
                         f"context full (--max-length {self.cfg.max_length}): their later rounds are not played")
        if counts["untrained_replies"] and "unsampled" not in self._said:
            self._said.add("unsampled")
            notes.append(f"{counts['untrained_replies']} of {counts['replies']} replies of step {step} are not "
                         "trained: their text tokenises otherwise than the tokens sampled (stripped, cut at a stop "
                         "string, or a part of a character)")
        for note in notes:
            print(f"[agentenv] {note} (said once a run)", file=sys.stderr)


def env_reward_function(env: str):
    """The reward function of one env (TRL logs it as ``rewards/<env>``): the rollout's reward for that env's
    episodes, ``None`` for the others'."""

    def reward(prompts, completions, env, env_reward, **_):  # noqa: ARG001 - TRL's reward-function signature
        return [value if name == own else None for name, value in zip(env, env_reward, strict=True)]

    own = env
    reward.__name__ = env
    return reward


# --- the run ----------------------------------------------------------------------------------------------


def trl_config(cfg: GRPOConfig, checkpoints: Path, stop_ids: set[int] = frozenset()):
    """TRL's ``GRPOConfig`` for this run; vLLM stops replies at ``stop_ids`` (the agent's, with the chat
    template's end-of-turn token, which vLLM does not know of)."""
    import torch
    import trl

    cuda = torch.cuda.is_available() and not cfg.cpu
    quiet_deepspeed_on_cpu()
    precision = cfg.mixed_precision
    if precision == "auto":
        precision = "bf16" if cuda and torch.cuda.is_bf16_supported() else "no"
    checkpointing = cfg.gradient_checkpointing == "on" or (cfg.gradient_checkpointing == "auto" and cuda)
    vllm = {"vllm_max_model_length": cfg.max_length, "generation_kwargs": {"stop_token_ids": sorted(stop_ids)}}
    if cfg.vllm_server_url:
        vllm["vllm_server_base_url"] = cfg.vllm_server_url
    return trl.GRPOConfig(
        output_dir=str(checkpoints),
        per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        num_generations=cfg.num_generations,
        max_steps=cfg.max_steps if cfg.max_steps > 0 else -1,
        num_train_epochs=cfg.num_epochs,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type={"constant": "constant_with_warmup"}.get(cfg.lr_scheduler, cfg.lr_scheduler),
        # steps where the run's length is known; else the ratio (transformers takes a float below 1 as one)
        warmup_steps=math.ceil(cfg.warmup_ratio * cfg.max_steps) if cfg.max_steps > 0 else min(cfg.warmup_ratio, 0.99),
        weight_decay=cfg.weight_decay,
        adam_beta1=cfg.adam_beta1,
        adam_beta2=cfg.adam_beta2,
        adam_epsilon=cfg.adam_epsilon,
        max_grad_norm=cfg.max_grad_norm,
        seed=cfg.seed,
        use_cpu=not cuda,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        **{_checkpointing_argument(trl.GRPOConfig): checkpointing},
        deepspeed=cfg.deepspeed or None,
        model_init_kwargs={"attn_implementation": cfg.attn_implementation} if cfg.attn_implementation else None,
        save_strategy="steps" if cfg.save_every > 0 else "no",
        save_steps=max(cfg.save_every, 1),
        save_total_limit=cfg.save_total_limit,
        logging_steps=cfg.log_every,
        report_to=cfg.trackers or "none",
        beta=cfg.beta,
        epsilon=cfg.epsilon,
        loss_type=cfg.loss_type,
        scale_rewards=cfg.scale_rewards,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        max_completion_length=cfg.max_new_tokens,  # what vLLM generates per reply
        mask_truncated_completions=False,  # a completion ends on a reply's end-of-turn marker, not on EOS
        use_vllm=cfg.use_vllm,
        vllm_mode=cfg.vllm_mode,
        vllm_gpu_memory_utilization=cfg.vllm_gpu_memory_utilization,
        vllm_importance_sampling_correction=False,  # no sampling log-probs for the re-tokenised sequences
        remove_unused_columns=False,
        **(vllm if cfg.use_vllm else {}),
    )


def _checkpointing_argument(config_class) -> str:
    """transformers 5.x renamed ``gradient_checkpointing`` (the old name goes in 6)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(config_class)}
    return "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"


def train_grpo(cfg: GRPOConfig, *, sources: dict[str, EnvSource] | None = None) -> Path:
    """Train with GRPO and save the model in ``cfg.output_dir``; returns that folder.  ``sources`` (env ->
    source) replaces the servers of ``cfg.envs`` / ``cfg.urls`` for those envs."""
    out = Path(cfg.output_dir)
    if already_trained(cfg):  # --no-resume trains again
        return out
    if cfg.use_vllm and importlib.util.find_spec("vllm") is None:  # TRL says so once the folder is made
        raise ValueError("--use-vllm: vLLM is not installed here (pip install 'trl[vllm]', on a GPU machine); "
                         "without the flag the run generates with its own model")
    with holding_output_dir(out, first_process()):  # (a launcher's first process holds it for all)
        if first_process() and already_trained(cfg):  # another run finished there while this one started
            return out
        return _train(cfg, out, sources)


def _train(cfg: GRPOConfig, out: Path, sources: dict[str, EnvSource] | None) -> Path:
    from datasets import Dataset
    from trl import GRPOTrainer

    from agentenv.controller.hf_agent import stop_token_ids
    from agentenv.trainer.engine import release

    checkpoints = out / CHECKPOINTS
    if cfg.resume:
        check_resumable(out, cfg)
    elif first_process():  # the one holding the folder: another process would delete a busy run's files
        start_over(out)
    envs = open_sources(cfg, sources)
    try:
        tasks = [
            f"{env}/{idx}"
            for env, source in envs.items()
            for idx in task_indices(source, cfg.train_split, cfg.train_tasks, cfg.train_limit)
        ]
        # a step plays batch_size x accumulation x processes episodes, num_generations of each task: with fewer
        # tasks TRL's sampler makes no step, and the untrained model was saved as the run's
        per_step = cfg.batch_size * cfg.gradient_accumulation_steps * process_count()
        if len(tasks) < per_step // cfg.num_generations:
            raise ValueError(f"{len(tasks)} train tasks, and one step plays {per_step // cfg.num_generations} "
                             f"(--batch-size x --gradient-accumulation-steps x processes / --num-generations "
                             f"{cfg.num_generations}): give more tasks or a smaller --batch-size")
        tokenizer = load_tokenizer(cfg)
        # TRL calls rollout_func experimental at every start; it is this trainer's whole design
        warnings.filterwarnings("ignore", message="You are using 'rollout_func'", category=UserWarning)
        # TRL's own call, each run (transformers renamed the attribute)
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        rollouts = EpisodeRollouts(cfg, envs, tokenizer)
        trainer = GRPOTrainer(
            model=cfg.model,
            reward_funcs=[env_reward_function(env) for env in envs],
            args=trl_config(cfg, checkpoints, stop_token_ids(tokenizer)),
            train_dataset=Dataset.from_dict({"prompt": tasks}),
            processing_class=tokenizer,
            rollout_func=rollouts,
            callbacks=[train_log(out, rollouts.reply_counts)],
        )
        bar = quiet_console(trainer)
        if trainer.accelerator.is_main_process:
            out.mkdir(parents=True, exist_ok=True)
            write_json(out / "train_config.json", cfg.to_json())
        last = last_complete_checkpoint(checkpoints, delete_cut=trainer.accelerator.is_main_process)
        if last is not None and trainer.accelerator.is_main_process:
            print(f"resumed from {last}", flush=True)
        try:
            trainer.train(resume_from_checkpoint=last)
        finally:  # transformers ends no callback on a Ctrl-C: the bar is closed here, above its message
            if bar is not None:
                bar.close()
        trainer.save_model(str(out))  # the model and its tokenizer (chat template included), HF format
        if trainer.accelerator.is_main_process:
            draw_curve(out)
            write_json(out / DONE_FILE, {"done": True, "steps": trainer.state.global_step, "config": cfg.to_json()})
            if cfg.delete_checkpoints_when_done:
                shutil.rmtree(checkpoints, ignore_errors=True)
        trainer.accelerator.wait_for_everyone()
        release(trainer.accelerator)
    finally:
        close_sources(envs, sources)
    return out


def quiet_console(trainer):
    """The project's training bar (reward and loss of the last logged step; a line every tenth of the run in
    a log; returned, to be closed) for transformers' own, which prints the dict of metrics at every logged step (about 30 keys a
    line; train_log.jsonl and the curve hold them); and no note at a resume that the tied output embedding
    was missing from the checkpoint (it is tied again on load, as in BC)."""
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from agentenv.trainer.engine import TrainingProgress

    class StepsBar(TrainerCallback):
        def __init__(self) -> None:
            self.bar: TrainingProgress | None = None
            self.figures: dict[str, str] = {}

        def on_train_begin(self, args, state, control, **kwargs):
            self.bar = TrainingProgress(state.max_steps, state.global_step, enabled=state.is_world_process_zero)

        def on_step_end(self, args, state, control, **kwargs):
            if self.bar is not None and not control.should_log:  # a logged step moves the bar with its figures
                self.bar.update(state.global_step, self.figures)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "reward" in logs:
                self.figures = {"reward": f"{logs['reward']:.3f}", "loss": f"{logs.get('loss', float('nan')):.4f}"}
            if self.bar is not None:
                self.bar.update(state.global_step, self.figures)

        def on_train_end(self, args, state, control, **kwargs):
            self.close()

        def close(self) -> None:
            if self.bar is not None:
                self.bar.close()

    steps_bar = None
    if trainer.pop_callback(ProgressCallback) is not None:  # (a notebook's bar, or none, is left as it is)
        steps_bar = StepsBar()
        trainer.add_callback(steps_bar)
    trainer.remove_callback(PrinterCallback)
    logging.getLogger("transformers.trainer").addFilter(_not_the_tied_head_note)  # added once
    return steps_bar


def _not_the_tied_head_note(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("There were missing keys in the checkpoint model loaded: "
                                              "['lm_head.weight']")


def last_complete_checkpoint(checkpoints: Path, delete_cut: bool) -> str | None:
    """TRL's newest checkpoint that a kill did not cut short: its ``trainer_state.json``, which transformers
    writes last (and not atomically), reads as JSON.  ``delete_cut`` (the main process): the cut ones go, or
    a resumed run would save into them and rotate complete ones out before them."""
    complete = []
    for folder in checkpoints.glob("checkpoint-*") if checkpoints.is_dir() else []:
        if not folder.name.removeprefix("checkpoint-").isdigit():
            continue  # not one of TRL's
        try:
            json.loads((folder / "trainer_state.json").read_text())
        except (OSError, ValueError):
            if delete_cut:
                shutil.rmtree(folder, ignore_errors=True)
            continue
        complete.append((int(folder.name.removeprefix("checkpoint-")), folder))
    return str(max(complete)[1]) if complete else None


def start_over(out: Path) -> None:
    """``--no-resume``: an earlier run's checkpoints, log and done mark go."""
    shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
    for name in (DONE_FILE, LOG_FILE):
        (out / name).unlink(missing_ok=True)


def check_resumable(out: Path, cfg: GRPOConfig) -> None:
    """A run with checkpoints resumes only with the settings it was started with (as the engine's); one stopped
    before its first complete checkpoint starts over with the settings given now."""
    saved = out / "train_config.json"
    last = last_complete_checkpoint(out / CHECKPOINTS, delete_cut=False)
    if last is None or not saved.exists():
        return
    # transformers saves one random state per process (rng_state_RANK.pth), or rng_state.pth for one
    was, now = len(list(Path(last).glob("rng_state_*.pth"))) or 1, process_count()
    if was != now:
        raise ValueError(processes_changed(last, was, now))
    changed = changed_settings(json.loads(saved.read_text()), cfg.to_json(), field_defaults(type(cfg)))
    if changed:
        raise ValueError(
            f"{out} holds checkpoints of a run with other settings ({', '.join(changed)}): rerun with the first "
            "run's settings, or with --no-resume to start over"
        )


def train_log(out: Path, counts: dict[str, int] | None = None):
    """A callback writing ``train_log.jsonl``: one line per logged step (TRL's metrics: loss, reward,
    rewards/<env>/mean ...; and ``counts``, the rollouts' own, summed since the line before and then
    zeroed); a resumed run first drops the lines past its checkpoint."""
    from transformers import TrainerCallback

    path = out / LOG_FILE

    class TrainLog(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            if state.is_world_process_zero and path.exists():
                kept = [line for line in read_log(out) if line["step"] <= state.global_step]
                write_text_atomic(path, "".join(json.dumps(line) + "\n" for line in kept))

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "reward" in logs:
                own = dict(counts or {})
                for key in own:
                    counts[key] = 0
                if state.is_world_process_zero:
                    with path.open("a") as f:
                        f.write(json.dumps({"step": state.global_step, **logs, **own}) + "\n")

    return TrainLog()


def draw_curve(out: Path) -> Path | None:
    """``reward_curve.png``: the mean reward per step, overall and per env."""
    lines = read_log(out)
    if not lines:
        return None
    import matplotlib

    matplotlib.use("Agg")  # files only, never a display
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    steps = [line["step"] for line in lines]
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    # markers: a step an env had no episode in (None) breaks its line, and a run of one step is one point
    ax.plot(steps, [line["reward"] for line in lines], label="all", color="black", marker="o")
    for key in sorted({k for line in lines for k in line if k.startswith("rewards/") and k.endswith("/mean")}):
        values = [line.get(key) for line in lines]
        ax.plot(steps, [float("nan") if v is None else v for v in values], label=key.split("/")[1], alpha=0.7,
                marker=".")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("mean episode reward")
    ax.set_title("GRPO: reward per step")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / CURVE_FILE)
    plt.close(fig)
    return out / CURVE_FILE
