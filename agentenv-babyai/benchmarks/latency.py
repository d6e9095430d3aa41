"""BabyAI latency, memory and expert success (in-process).

    python agentenv-babyai/benchmarks/latency.py [--tasks 400] [--sessions 100]

Plays the first ``--tasks`` tasks of the test split with the expert (max_rounds rounds each) and reports
the expert's success rate, median reset / step / expert-call times; then the same tasks with seeded random
primitive actions (turn left / turn right / move forward, ``--primitive-steps`` per task), whose step is
the env's lightest; and the memory of ``--sessions`` live envs each reset to a different level
(tracemalloc and RSS growth, divided by their number).  Run it with ``PYTHONPATH`` naming another
checkout's ``agentenv-babyai`` to time that version on the same episodes.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
import tracemalloc

from agentenv_babyai import BabyAIEnv

from agentenv.testing.measure import latency_text, rss_bytes


def _ms(samples: list[float]) -> str:
    return latency_text(samples, digits=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--primitive-steps", type=int, default=20)
    args = parser.parse_args()
    test = BabyAIEnv.splits["test"]
    env = BabyAIEnv()
    resets, steps, experts, solved, rounds = [], [], [], 0, []
    for idx in range(test.start, min(test.stop, test.start + args.tasks)):
        t = time.perf_counter()
        env.reset(idx)
        resets.append(time.perf_counter() - t)
        used = 0
        while used < BabyAIEnv.max_rounds:
            used += 1
            t = time.perf_counter()
            move = env.expert_action()
            experts.append(time.perf_counter() - t)
            t = time.perf_counter()
            result = env.step(move.action)
            steps.append(time.perf_counter() - t)
            if result.done:
                break
        rounds.append(used)
        solved += result.reward > 0
    print(f"expert success: {solved}/{len(resets)} = {solved / len(resets):.1%}, "
          f"rounds mean {statistics.mean(rounds):.1f} max {max(rounds)}")
    print(f"reset:       {_ms(resets)}")
    print(f"step:        {_ms(steps)}")
    print(f"expert call: {_ms(experts)}")

    rng, primitive = random.Random(0), []
    for idx in range(test.start, min(test.stop, test.start + args.tasks)):
        env.reset(idx)
        for _ in range(args.primitive_steps):
            action = rng.choice(["turn left", "turn right", "move forward"])
            t = time.perf_counter()
            result = env.step(action)
            primitive.append(time.perf_counter() - t)
            if result.done:
                break
    print(f"primitive step: {_ms(primitive)}")

    gc.collect()
    before = rss_bytes()
    tracemalloc.start()
    live = [BabyAIEnv() for _ in range(args.sessions)]
    for i, e in enumerate(live):
        e.reset(i)
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    grown = rss_bytes() - before
    print(f"memory per live env: {size / len(live) / 1024:.0f} KiB (tracemalloc), "
          f"{grown / len(live) / 1024:.0f} KiB (RSS growth, {args.sessions} envs)")


if __name__ == "__main__":
    main()
