"""Task indices of one BabyAI level's seeds START..STOP-1 whose start state repeats no earlier seed's.

Seeds past the train split (510 on) make held-out and validation sets of any size, but a small level
repeats itself: GoToObjS6 has 55 repeats among seeds 0..1209.  A repeated start state is a task some
agent may have trained on, so it is left out.  The output is a comma list for ``agentenv eval --indices``:

    agentenv eval --agent hf:MODEL --env babyai --local \\
        --indices "$(python agentenv-babyai/benchmarks/fresh_tasks.py GoToObjS6 710 1210)" ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import agentenv_babyai.env  # noqa: F401  (registers the levels, silences minigrid's prints)
import gymnasium as gym
from agentenv_babyai.levels import LEVELS, NUM_LEVELS, short_name

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_test_duplicates import start_state  # noqa: E402  (beside this file)


def fresh_tasks(level: str, start: int, stop: int) -> list[int]:
    """Task indices of seeds ``start..stop-1`` of ``level`` (short or full name) whose start state differs
    from that of every smaller seed."""
    names = [short_name(lvl) for lvl in LEVELS]
    if level not in names and level not in LEVELS:
        raise ValueError(f"no BabyAI level {level!r}; the levels are {', '.join(names)}")
    position = names.index(level) if level in names else LEVELS.index(level)
    env = gym.make(LEVELS[position])
    try:
        seen: set[str] = set()
        fresh = []
        for seed in range(stop):
            state = start_state(env, seed)
            if seed >= start and state not in seen:
                fresh.append(seed * NUM_LEVELS + position)
            seen.add(state)
        return fresh
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("level", help="e.g. GoToObjS6 or BabyAI-GoToObjS6-v1")
    parser.add_argument("start", type=int)
    parser.add_argument("stop", type=int)
    args = parser.parse_args()
    tasks = fresh_tasks(args.level, args.start, args.stop)
    print(f"{len(tasks)} of {args.stop - args.start} seeds are fresh", file=sys.stderr)
    print(",".join(map(str, tasks)))


if __name__ == "__main__":
    main()
