"""Rollout throughput: the rollout engine with HFAgent vs AgentGym's sequential ``model.generate`` loop.

Both run the same episodes with the same tiny random Llama (greedy, a fixed number of new tokens per
turn, a fixed number of rounds) on an in-process environment whose observations are realistic in length
(50-80 tokens), so conversations grow to well over a thousand tokens:

- ``sequential``: one episode at a time, batch 1; every round renders and encodes the whole conversation
  and calls ``model.generate`` (what AgentGym's evaluation loop does);
- ``engine, no cache``: the rollout engine, all episodes batched, but every round re-encodes each
  conversation (``HFAgent(reuse_cache=False)``): what batching alone gives;
- ``engine``: the rollout engine with ``HFAgent`` keeping each episode's KV cache across rounds, one token a
  row per decoding step (``draft_tokens=0``);
- ``engine, drafts``: the same with prompt-lookup drafts (``HFAgent``'s default ``draft_tokens``): each step
  also feeds tokens copied from the conversation and keeps those the model confirms.

The replies of all runs are compared: greedy decoding must give the same text every way.

    python benchmarks/rollout_throughput.py --out benchmarks/results/rollout_throughput.json
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import torch
from train_throughput import device_name
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

from agentenv.controller.hf_agent import DRAFT_TOKENS, HFAgent
from agentenv.controller.rollout import Rollout, RolloutTask
from agentenv.controller.sources import LocalEnv
from agentenv.data.tokenize import to_messages
from agentenv.data.trajectory import Trajectory, write_json
from agentenv.env import Environment, ExpertAction, StepResult
from agentenv.testing import tiny_llama

ITEMS = ["red ball 1", "key 2", "green box 3", "blue door 1", "purple key 4", "yellow ball 2", "grey box 1"]


class CorridorEnv(Environment):
    """An endless grid walk with BabyAI-like observations of 50-80 tokens; never ends by itself."""

    name = "corridor"
    splits = {"test": range(0, 10_000)}
    max_rounds = 20
    instruction = (
        "You are an agent in a grid world. Reach the goal. Answer with Thought: and Action: lines. "
        "Available actions are listed after every observation."
    )

    def __init__(self) -> None:
        self.idx = self.t = 0

    def reset(self, data_idx: int) -> str:
        self.idx, self.t = data_idx, 0
        return self.observation()

    def step(self, action: str) -> StepResult:
        self.t += 1
        return StepResult(self.observation())

    def observation(self) -> str:
        k = self.idx * 7 + self.t * 3
        seen = ", ".join(ITEMS[(k + j) % len(ITEMS)] for j in range(1 + k % 3))
        return (
            f"Your position is {k % 9}, {self.t % 7}. There are walls to your left. You see {seen}. "
            f"Available actions: move up, move down, pick up {ITEMS[k % len(ITEMS)]}, turn left, turn right"
        )

    def expert_action(self) -> ExpertAction:
        return ExpertAction("Keep walking.", "move up")


def sequential_agentgym_loop(model, tokenizer, episodes: int, rounds: int, new_tokens: int) -> tuple[float, list]:
    """Batch 1, whole conversation re-encoded with ``model.generate`` every round."""
    config = GenerationConfig(
        max_new_tokens=new_tokens, do_sample=False, eos_token_id=None, pad_token_id=tokenizer.pad_token_id
    )
    transcripts = []
    start = time.perf_counter()
    for idx in range(episodes):
        env = CorridorEnv()
        traj = Trajectory.start(env.name, idx, env.instruction)
        traj.add_observation(env.reset(idx))
        for _ in range(rounds):
            text = tokenizer.apply_chat_template(to_messages(traj.conversations), tokenize=False,
                                                 add_generation_prompt=True)
            ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]], device=model.device)
            with torch.inference_mode():
                out = model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=config)
            reply = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True).strip()
            traj.add_reply(reply)
            traj.add_observation(env.step(reply).observation)
        transcripts.append(traj)
    return time.perf_counter() - start, transcripts


def engine(model, tokenizer, episodes: int, rounds: int, new_tokens: int, reuse_cache: bool,
           draft_tokens: int = 0) -> tuple[float, list, dict]:
    agent = HFAgent(
        model=model, tokenizer=tokenizer, max_new_tokens=new_tokens, batch_size=episodes,
        reuse_cache=reuse_cache, ignore_eos=True, draft_tokens=draft_tokens,
    )
    rollout = Rollout(agent, {"corridor": LocalEnv(CorridorEnv)}, concurrency=episodes, max_rounds=rounds)
    start = time.perf_counter()
    finished = rollout.run([RolloutTask("corridor", i) for i in range(episodes)])
    seconds = time.perf_counter() - start
    finished.sort(key=lambda ep: ep.data_idx)
    return seconds, [ep.trajectory for ep in finished], agent.stats | rollout.timing


def replies(trajectories) -> list[list[str]]:
    return [[t.value for t in traj.conversations[3::2]] for traj in trajectories]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--device", default="cpu", help="where the model runs (cpu, cuda)")
    parser.add_argument("--skip-no-cache", action="store_true", help="skip the batched no-cache variant")
    parser.add_argument("--draft-tokens", type=int, default=DRAFT_TOKENS,
                        help=f"prompt-lookup drafts a step in the drafting run (default: HFAgent's, {DRAFT_TOKENS})")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        path = tiny_llama(Path(tmp) / "model", hidden=args.hidden, layers=args.layers)
        model = AutoModelForCausalLM.from_pretrained(path).eval().to(args.device)
        tokenizer = AutoTokenizer.from_pretrained(path)
    n_params = sum(p.numel() for p in model.parameters())

    runs = {}
    seconds, seq = sequential_agentgym_loop(model, tokenizer, args.episodes, args.rounds, args.new_tokens)
    runs["sequential generate (AgentGym loop)"] = {"seconds": seconds, "episodes_per_s": args.episodes / seconds}
    if not args.skip_no_cache:
        seconds, nocache, stats = engine(model, tokenizer, args.episodes, args.rounds, args.new_tokens, False)
        runs["engine, no cache reuse"] = {"seconds": seconds, "episodes_per_s": args.episodes / seconds, **stats}
    seconds, cached, stats = engine(model, tokenizer, args.episodes, args.rounds, args.new_tokens, True)
    runs["engine, KV cache kept"] = {"seconds": seconds, "episodes_per_s": args.episodes / seconds, **stats}
    seconds, drafted, stats = engine(model, tokenizer, args.episodes, args.rounds, args.new_tokens, True,
                                     args.draft_tokens)
    runs[f"engine, KV cache kept, {args.draft_tokens} drafts"] = {
        "seconds": seconds, "episodes_per_s": args.episodes / seconds, **stats}

    same = replies(cached) == replies(seq) == replies(drafted) and (
        args.skip_no_cache or replies(nocache) == replies(seq))
    base = runs["sequential generate (AgentGym loop)"]["episodes_per_s"]
    final_tokens = [
        len(tokenizer.apply_chat_template(to_messages(traj.conversations), tokenize=True, return_dict=True)["input_ids"])
        for traj in cached
    ]
    obs_tokens = [len(tokenizer(t.value)["input_ids"]) for traj in cached for t in traj.conversations[2::2]]
    cached_stats = runs["engine, KV cache kept"]
    mean_prompt = (cached_stats["prefilled_tokens"] + cached_stats["reused_tokens"]) / (args.episodes * args.rounds)

    print(f"model: tiny random Llama, {n_params / 1e6:.2f}M parameters (hidden {args.hidden}, {args.layers} layers)")
    print(f"{args.episodes} episodes x {args.rounds} rounds, greedy, {args.new_tokens} new tokens per turn; "
          f"observations {min(obs_tokens)}-{max(obs_tokens)} tokens; final conversations "
          f"{min(final_tokens)}-{max(final_tokens)} tokens, prompts {mean_prompt:.0f} tokens on average")
    print(f"device: {device_name(args.device)}, torch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}, "
          f"load: {os.getloadavg()[0]:.1f}")
    print()
    print(f"| {'run':<38} | {'seconds':>8} | {'episodes/s':>10} | {'speed-up':>8} |")
    print(f"|{'-' * 40}|{'-' * 10}:|{'-' * 12}:|{'-' * 10}:|")
    for name, r in runs.items():
        print(f"| {name:<38} | {r['seconds']:>8.1f} | {r['episodes_per_s']:>10.3f} | {r['episodes_per_s'] / base:>7.1f}x |")
    print(f"\nidentical replies across runs: {same}")

    if args.out:
        result = {
            "benchmark": "rollout_throughput",
            "model": {"params": n_params, "hidden": args.hidden, "layers": args.layers},
            "episodes": args.episodes,
            "rounds": args.rounds,
            "new_tokens": args.new_tokens,
            "observation_tokens": [min(obs_tokens), max(obs_tokens)],
            "final_conversation_tokens": [min(final_tokens), max(final_tokens)],
            "mean_prompt_tokens": mean_prompt,
            "runs": runs,
            "speedup_vs_sequential": {k: r["episodes_per_s"] / base for k, r in runs.items()},
            "identical_replies": same,
            "machine": {
                "device": device_name(args.device), "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                "load_avg_1m": os.getloadavg()[0], "python": platform.python_version(), "torch": torch.__version__,
            },
        }
        write_json(args.out, result)


if __name__ == "__main__":
    main()
