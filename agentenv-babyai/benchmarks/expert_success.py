"""BabyAI expert success on a split (in-process), with the rounds it needs and its failures per level.

    python agentenv-babyai/benchmarks/expert_success.py [--split test] [--rounds 80] [--every 1] [--workers 2]

``--every N`` plays every N-th task of the split (a sample of the 19,949 train tasks).
"""

from __future__ import annotations

import argparse
import collections
import time
from concurrent.futures import ProcessPoolExecutor

from agentenv_babyai import BabyAIEnv
from agentenv_babyai.levels import level_of, short_name


def play(indices: list[int], rounds: int) -> list[tuple[int, bool, int, int]]:
    """``(idx, success, rounds used, invalid actions)`` of an expert episode per task."""
    env, out = BabyAIEnv(), []
    for idx in indices:
        env.reset(idx)
        invalid, used, result = 0, 0, None
        while used < rounds:
            result = env.step(env.expert_action().action)
            used += 1
            invalid += not result.info.get("action_is_valid", True)
            if result.done:
                break
        out.append((idx, bool(result and result.done and BabyAIEnv.is_success(result.score)), used, invalid))
    env.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test")
    parser.add_argument("--rounds", type=int, default=80)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    tasks = list(BabyAIEnv.splits[args.split])[:: args.every]
    t = time.perf_counter()
    chunks = [tasks[i:: args.workers * 8] for i in range(args.workers * 8)]
    with ProcessPoolExecutor(args.workers) as pool:
        results = [r for part in pool.map(play, chunks, [args.rounds] * len(chunks)) for r in part]
    won = [r for r in results if r[1]]
    bands = collections.Counter(min(r[2] // 10, 8) for r in won)
    print(f"{args.split}: {len(won)}/{len(results)} = {100 * len(won) / len(results):.1f}% within {args.rounds} rounds,"
          f" {sum(r[2] <= BabyAIEnv.max_rounds for r in won)} within {BabyAIEnv.max_rounds}"
          f" ({time.perf_counter() - t:.0f} s)")
    print("rounds of the wins:", {f"{10 * b}-{10 * b + 9}": n for b, n in sorted(bands.items())})
    print("invalid actions:", sum(r[3] for r in results))
    fails = collections.Counter(short_name(level_of(r[0])[0]) for r in results if not r[1])
    print("failures:", dict(fails.most_common()))
    print("failed tasks:", sorted(r[0] for r in results if not r[1])[:60])


if __name__ == "__main__":
    main()
