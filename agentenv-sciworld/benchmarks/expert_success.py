"""How often the gold-path expert solves ScienceWorld tasks, per task type.

    python agentenv-sciworld/benchmarks/expert_success.py [--split test] [--limit N] [--rounds 30]

Plays every task of the split (by default ``test``: the first two test variations of each of the 23
task types) in-process with :class:`SciWorldEnv`, asking ``expert_action()`` before each step exactly as
``agentenv eval --agent expert`` does over HTTP.  Reports success (score 100) with no round limit (the
env's own ``max_steps``), success within ``--rounds`` rounds (the env's ``max_rounds``: what an evaluation
of another agent allows by default; the expert itself gets ``expert_max_rounds`` = 300 unless
``--max-rounds`` is passed) and the expert's episode lengths.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from agentenv_sciworld import SciWorldEnv, task_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", help="split name from SciWorldEnv.splits")
    parser.add_argument("--limit", type=int, help="only the first N tasks of the split")
    parser.add_argument(
        "--rounds", type=int, default=SciWorldEnv.max_rounds, help="round limit to also report"
    )
    args = parser.parse_args()
    indices = list(SciWorldEnv.splits[args.split])[: args.limit]

    env = SciWorldEnv()
    per_type: dict[str, list[tuple[bool, bool, int]]] = defaultdict(list)
    verbs: set[str] = set()
    start = time.perf_counter()
    try:
        for idx in indices:
            task = task_at(idx)
            env.reset(idx)
            rounds, solved_in_limit = 0, False
            while not env.done:
                move = env.expert_action()
                verbs.add(move.action.split(" ")[0])
                env.step(move.action)
                rounds += 1
                if rounds == args.rounds:
                    solved_in_limit = env.is_success(env.score)
            solved = env.is_success(env.score)
            solved_in_limit = solved_in_limit or (solved and rounds <= args.rounds)
            per_type[task.task_name].append((solved, solved_in_limit, rounds))
            print(
                f"{idx:5d} {task.task_id:>4} {task.task_name:50s} var {task.variation:4d}: score {env.score:5.1f} "
                f"in {rounds:3d} rounds{'' if solved else '  FAILED'}",
                flush=True,
            )
    finally:
        env.close()
    elapsed = time.perf_counter() - start

    print(
        f"\n{'task type':50s} {'n':>3} {'success':>8} {f'<= {args.rounds} rounds':>14} {'median rounds':>14}"
    )
    episodes = [e for runs in per_type.values() for e in runs]
    for name, runs in per_type.items():
        n = len(runs)
        print(
            f"{name:50s} {n:3d} {sum(r[0] for r in runs) / n:8.0%} {sum(r[1] for r in runs) / n:14.0%} "
            f"{statistics.median(r[2] for r in runs):14.0f}"
        )
    n = len(episodes)
    print(
        f"{'all':50s} {n:3d} {sum(e[0] for e in episodes) / n:8.1%} {sum(e[1] for e in episodes) / n:14.1%} "
        f"{statistics.median(e[2] for e in episodes):14.0f}"
    )
    print(
        f"{n} episodes in {elapsed:.0f} s ({elapsed / n:.1f} s each, one JVM); action verbs used: {sorted(verbs)}"
    )


if __name__ == "__main__":
    main()
