"""Find the train tasks whose start state equals a test task's and write them to ``duplicates.py``.

    python agentenv-babyai/benchmarks/train_test_duplicates.py [--workers 2] [--check]

A start state is the whole grid (objects, colours, door states, box contents), the agent's position and
direction, and the mission.  Some levels have few distinct layouts (OpenRedDoor, GoToRedBallNoDists ...),
so some of their seeds 10..509 repeat one of seeds 0..9.  The result is written to
``agentenv_babyai/duplicates.py``, which the train split leaves out; ``--check`` only compares.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import agentenv_babyai.env  # noqa: F401  (registers the levels, silences minigrid's prints)
import gymnasium as gym
from agentenv_babyai.levels import LEVELS, NUM_LEVELS

TEST_SEEDS = range(0, 10)
TRAIN_SEEDS = range(10, 510)
OUT = Path(agentenv_babyai.env.__file__).with_name("duplicates.py")


def start_state(env, seed: int) -> str:
    """A digest of the start state of ``seed`` (``env`` wrapped, of one level)."""
    env.reset(seed=seed)
    u = env.unwrapped
    boxes = [(i, o.contains.color, o.contains.type) for i, o in enumerate(u.grid.grid)
             if o is not None and o.type == "box" and o.contains is not None]
    extra = repr((tuple(int(v) for v in u.agent_pos), int(u.agent_dir), u.mission, boxes,
                  None if u.carrying is None else (u.carrying.color, u.carrying.type)))
    return hashlib.sha256(u.grid.encode().tobytes() + extra.encode()).hexdigest()


def level_duplicates(level: int) -> dict[int, int]:
    """``{train index: test index}`` of one level (by its position in ``LEVELS``)."""
    env = gym.make(LEVELS[level])
    test: dict[str, int] = {}
    for seed in TEST_SEEDS:
        test.setdefault(start_state(env, seed), seed * NUM_LEVELS + level)
    found = {}
    for seed in TRAIN_SEEDS:
        twin = test.get(start_state(env, seed))
        if twin is not None:
            found[seed * NUM_LEVELS + level] = twin
    env.close()
    return found


def all_duplicates(workers: int = 2) -> dict[int, int]:
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(level_duplicates, range(NUM_LEVELS)))
    return {k: v for part in parts for k, v in sorted(part.items())}


def module_text(found: dict[int, int]) -> str:
    lines = ['"""Train tasks whose start state equals a test task\'s (grid, agent pose, mission).',
             "",
             "Written by ``agentenv-babyai/benchmarks/train_test_duplicates.py``; the train split leaves these out.",
             '"""', "", "#: ``{train index: the test index with the same start state}``",
             "TRAIN_TEST_DUPLICATES: dict[int, int] = {"]
    items = [f"{k}: {v}," for k, v in sorted(found.items())]
    row = "   "
    for item in items:
        if len(row) + 1 + len(item) > 110:
            lines.append(row)
            row = "   "
        row += " " + item
    if items:
        lines.append(row)
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="compare with the stored list, write nothing")
    args = parser.parse_args()
    found = all_duplicates(args.workers)
    per_level: dict[str, int] = {}
    for idx in found:
        name = LEVELS[idx % NUM_LEVELS]
        per_level[name] = per_level.get(name, 0) + 1
    for name, count in per_level.items():
        print(f"{name}: {count}")
    print(f"total: {len(found)}")
    if args.check:
        sys.exit(0 if OUT.read_text() == module_text(found) else "the stored list differs")
    OUT.write_text(module_text(found))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
