"""Start states of BabyAI tasks: which train tasks repeat a test task, and which seeds are fresh.

A start state is the whole grid (objects, colours, door states, box contents), the agent's position and
direction, and the mission.  Some levels have few distinct layouts (OpenRedDoor, GoToRedBallNoDists ...), so
some of their training seeds repeat a test seed's start state (the train split leaves those out, from
``duplicates.py``), and seeds past the train split repeat earlier ones (a new held-out set must skip them)::

    python -m agentenv_babyai.starts duplicates [--workers 2] [--check]   # recompute duplicates.py
    python -m agentenv_babyai.starts fresh GoToObjS6 710 1210              # a comma list for --indices

The second prints the task indices of the level's seeds START..STOP-1 whose start state repeats no earlier
seed's, for ``agentenv eval --indices``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import gymnasium as gym

from . import env as _env  # noqa: F401  (registers the levels, silences minigrid's prints)
from .levels import LEVELS, NUM_LEVELS, short_name

TEST_SEEDS = range(0, 10)
TRAIN_SEEDS = range(10, 510)
DUPLICATES_MODULE = Path(__file__).with_name("duplicates.py")


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


def module_text(found: dict[int, int]) -> str:
    """``duplicates.py`` holding ``found``."""
    lines = ['"""Train tasks whose start state equals a test task\'s (grid, agent pose, mission).',
             "",
             "Written by ``python -m agentenv_babyai.starts duplicates``; the train split leaves these out.",
             '"""', "", "#: ``{train index: the test index with the same start state}``",
             "TRAIN_TEST_DUPLICATES: dict[int, int] = {"]
    row = "   "
    for item in (f"{k}: {v}," for k, v in sorted(found.items())):
        if len(row) + 1 + len(item) > 110:
            lines.append(row)
            row = "   "
        row += " " + item
    if found:
        lines.append(row)
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agentenv_babyai.starts", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dup = sub.add_parser("duplicates", help="recompute the train tasks that repeat a test task (duplicates.py)")
    dup.add_argument("--workers", type=int, default=2)
    dup.add_argument("--check", action="store_true", help="compare with the stored list, write nothing")
    fresh = sub.add_parser("fresh", help="a level's seeds START..STOP-1 that repeat no earlier seed")
    fresh.add_argument("level", help="e.g. GoToObjS6 or BabyAI-GoToObjS6-v1")
    fresh.add_argument("start", type=int)
    fresh.add_argument("stop", type=int)
    args = parser.parse_args(argv)
    if args.command == "fresh":
        try:
            tasks = fresh_tasks(args.level, args.start, args.stop)
        except ValueError as exc:
            parser.exit(2, f"error: {exc}\n")
        print(f"{len(tasks)} of {args.stop - args.start} seeds are fresh", file=sys.stderr)
        print(",".join(map(str, tasks)))
        return
    found = all_duplicates(args.workers)
    print(f"{len(found)} train tasks repeat a test task", file=sys.stderr)
    if args.check:
        sys.exit(0 if DUPLICATES_MODULE.read_text() == module_text(found) else "the stored list differs")
    DUPLICATES_MODULE.write_text(module_text(found))
    print(f"wrote {DUPLICATES_MODULE}", file=sys.stderr)


if __name__ == "__main__":
    main()
