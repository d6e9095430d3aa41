"""Would prompt-lookup speculative decoding speed up the rollout engine?  Two measurements.

Prompt lookup (exact for greedy decoding) proposes the next ``k`` tokens by finding the conversation's last
n-gram earlier in it and copying what followed; one forward of ``k + 1`` tokens per row then checks them.
It pays when (1) many drafts are accepted and (2) a forward of ``k + 1`` tokens a row costs about what a
forward of one does (decoding reads every row's cache either way).  This probe measures both:

1. tokens produced per verification step, replaying the replies of a saved run (e.g. the demo's BC agent
   on BabyAI, ``runs/demo/babyai_bc.jsonl``) with the tokenizer of the model that wrote them;
2. the cost of attention by query width on this machine, at the rollout benchmark's decode shape
   (40 rows, 4 heads of 32, 1,300 cached tokens, fp32).

    .venv/bin/python research/probes/prompt_lookup.py runs/demo/babyai_bc.jsonl --model runs/demo/base_model

Findings (2026-11-26, docs/benchmarks.md, "Rollout engine"): 1.8-2.0 tokens a step on the BC agent's
BabyAI replies, while 5 queries a row cost 1.3-2.1x one in SDPA on two CPU cores (about 1.7x in most runs):
about a tenth of the decode's attention back, before the drafting's own cost.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer

from agentenv.controller.hf_agent import HFAgent
from agentenv.data.tokenize import to_messages
from agentenv.data.trajectory import read_trajectories


def draft(context: list[int], n_max: int, k: int) -> list[int]:
    """The ``k`` tokens after the latest earlier occurrence of the context's last n-gram (longest n first)."""
    for n in range(min(n_max, len(context) - 1), 0, -1):
        tail = context[-n:]
        for start in range(len(context) - n - 1, -1, -1):
            if context[start : start + n] == tail:
                return context[start + n : start + n + k]
    return []


def replies(path: str, agent: HFAgent) -> list[tuple[list[int], list[int]]]:
    """Every reply of a run's episodes as (prompt token ids, reply token ids), rendered as the agent did."""
    pairs = []
    for trajectory in read_trajectories(path):
        messages = to_messages(trajectory.conversations)
        for r in range(3, len(messages), 2):
            reply = agent.tokenizer(messages[r]["content"], add_special_tokens=False)["input_ids"]
            pairs.append((agent.prompt_ids(messages[:r]), reply))
    return pairs


def tokens_per_step(pairs: list[tuple[list[int], list[int]]], k: int, n_max: int) -> float:
    """Replay every reply after its prompt: each step yields the accepted drafts plus the model's own token."""
    steps = produced = 0
    for prompt, reply in pairs:
        context = prompt + reply[:1]  # the first token comes from the prefill
        i = 1
        while i < len(reply):
            proposal = draft(context, n_max, k)
            accepted = 0
            while accepted < len(proposal) and i + accepted < len(reply) and proposal[accepted] == reply[i + accepted]:
                accepted += 1
            step = min(accepted + 1, len(reply) - i)
            context += reply[i : i + step]
            i += step
            steps += 1
            produced += step
    return produced / max(steps, 1)


def attention_ms(width: int, rows: int = 40, heads: int = 4, length: int = 1300, dim: int = 32, calls: int = 50) -> float:
    keys, values = torch.randn(rows, heads, length, dim), torch.randn(rows, heads, length, dim)
    query, mask = torch.randn(rows, heads, width, dim), torch.zeros(rows, 1, width, length)
    for _ in range(3):
        F.scaled_dot_product_attention(query, keys, values, attn_mask=mask)
    start = time.perf_counter()
    for _ in range(calls):
        F.scaled_dot_product_attention(query, keys, values, attn_mask=mask)
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("episodes", help="a run's episodes (JSONL, AgentGym conversations)")
    parser.add_argument("--model", required=True, help="the folder of the model that wrote them (tokenizer, chat format)")
    args = parser.parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model)
    agent = HFAgent(model=model, tokenizer=AutoTokenizer.from_pretrained(args.model))  # renders prompts as the run did
    pairs = replies(args.episodes, agent)
    print(f"{len(pairs)} replies; tokens per verification step (drafts k, n-grams up to n):")
    for k in (3, 5, 8):
        print(f"  k={k}: " + ", ".join(f"n<={n} {tokens_per_step(pairs, k, n):.2f}" for n in (2, 3)))
    print(f"SDPA at the benchmark's decode shape, {torch.get_num_threads()} threads:")
    base = attention_ms(1)
    for width in (1, 2, 3, 5, 9):
        ms = base if width == 1 else attention_ms(width)
        print(f"  {width} queries a row: {ms:.1f} ms ({ms / base:.1f}x)")


if __name__ == "__main__":
    main()
