"""How many of AgentGym's BabyAI ids name the same task here: ``babyai`` and ``babyai_agentgym`` against
the tasks AgentGym's own server made.

AgentGym ran minigrid 2.3.1 (its ``minigrid<2.5.0``); this project runs minigrid 3.2.0.  The reference is
therefore made in another interpreter that has minigrid 2.3.1, by AgentGym's procedure (a new
``gymnasium.make`` of its level id per task, reset twice with seed ``idx // 40``), and compared task by task:

- **start state**: the whole grid, the agent's position and direction, and the mission;
- **goal line**: what follows ``Your goal:`` in the first observation (AgentGym's: the mission with every
  ``then`` / ``after you`` written ``and``).

Make the reference interpreter once, then run (about a minute):

    python -m venv /tmp/minigrid231
    /tmp/minigrid231/bin/pip install minigrid==2.3.1 gymnasium==0.29.1 "numpy<2" pygame
    python agentenv-babyai/benchmarks/agentgym_ids.py --reference-python /tmp/minigrid231/bin/python

The id sets: AgentEval's 90 test items, AgentTraj's 810 training items, this project's 400 test tasks, and
every level's seeds 0..99 (4,000 tasks).  ``--dump`` is the reference side (it imports only gymnasium and
minigrid); ``--json`` writes the table's figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from typing import Any


def fingerprint(env: Any) -> str:
    """The start state of an unwrapped minigrid env: its grid, the agent's pose and the mission."""
    pose = (tuple(int(v) for v in env.agent_pos), int(env.agent_dir), env.mission)
    return hashlib.sha1(env.grid.encode().tobytes() + repr(pose).encode()).hexdigest()


def dump(pairs: list[tuple[str, int]]) -> list[tuple[str, str]]:
    """``(fingerprint, mission)`` of each ``(level id, seed)`` as AgentGym's server made the task."""
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the BabyAI ids)
    from minigrid.envs.babyai.core import roomgrid_level

    roomgrid_level.print = lambda *args: None  # minigrid prints every rejected sample
    found = []
    for level, seed in pairs:
        env = gym.make(level).unwrapped  # AgentGym: a new env for every reset ...
        env.reset(seed=seed)  # ... reset once when its wrapper is made ...
        env.reset(seed=seed)  # ... and once more by the server's reset
        found.append((fingerprint(env), env.mission))
    return found


def id_sets() -> dict[str, list[int]]:
    from agentenv_babyai import BabyAIEnv
    from agentenv_babyai.agentgym_ids import AGENTEVAL_TEST, AGENTTRAJ_TRAIN

    return {
        "AgentEval test": sorted(AGENTEVAL_TEST),
        "AgentTraj train": sorted(AGENTTRAJ_TRAIN),
        "babyai test split": list(BabyAIEnv.splits["test"]),
        "seeds 0-99 of every level": list(range(4000)),
    }


def ours(env_cls: type, ids: list[int]) -> dict[int, tuple[str, str]]:
    """``{idx: (fingerprint, goal line)}`` of ``env_cls``'s tasks."""
    env, found = env_cls(), {}
    try:
        for idx in ids:
            first = env.reset(idx).splitlines()[0]
            found[idx] = (fingerprint(env.env), first.removeprefix("Your goal: "))
    finally:
        env.close()
    return found


def measure(reference_python: str) -> dict[str, dict[str, Any]]:
    from agentenv_babyai import BabyAIEnv
    from agentenv_babyai.agentgym import BabyAIAgentGymEnv, agentgym_goal

    sets = id_sets()
    every = sorted({i for ids in sets.values() for i in ids})
    pairs = [BabyAIAgentGymEnv.level_of(i) for i in every]  # AgentGym's level ids and seeds
    answer = subprocess.run(
        [reference_python, __file__, "--dump"], input=json.dumps(pairs), capture_output=True, text=True, check=True
    )
    reference = {i: (state, agentgym_goal(mission)) for i, (state, mission) in zip(every, json.loads(answer.stdout), strict=True)}
    envs = {"babyai": ours(BabyAIEnv, every), "babyai_agentgym": ours(BabyAIAgentGymEnv, every)}
    table: dict[str, dict[str, Any]] = {}
    for name, ids in sets.items():
        row: dict[str, Any] = {"ids": len(ids)}
        for env, found in envs.items():
            row[f"{env} same start state"] = sum(found[i][0] == reference[i][0] for i in ids)
            row[f"{env} same goal line"] = sum(found[i][1] == reference[i][1] for i in ids)
        table[name] = row
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-python", help="an interpreter with minigrid 2.3.1 (see above)")
    parser.add_argument("--dump", action="store_true", help="reference side: read (level, seed) pairs on stdin")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if args.dump:
        print(json.dumps(dump(json.loads(sys.stdin.read()))))
        return
    if not args.reference_python:
        parser.error("--reference-python is required: an interpreter with minigrid 2.3.1 (see the docstring)")
    table = measure(args.reference_python)
    columns = list(next(iter(table.values())))
    print("| id set | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(str(row[c]) for c in columns) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)


if __name__ == "__main__":
    main()
