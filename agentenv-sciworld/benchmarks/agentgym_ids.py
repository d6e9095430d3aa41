"""How many of AgentGym's ScienceWorld ids name the same ``(task, variation)`` here, in ``sciworld`` and in
``sciworld_agentgym``, and where AgentEval's test items fall in ``sciworld``'s splits.

The reference is built as AgentGym's server built its list, from a live simulator: every task of
``tasks.json`` but task ids 5-1, 5-2, 9-1, 9-2, 9-3, 10-1, 10-2, in order, each with variations
``0 .. getTaskMaxVariations - 1``.  (The counts are the same in ``scienceworld`` 1.1.3, AgentGym's time,
as in 1.2.3.)  One JVM, a few seconds:

    python agentenv-sciworld/benchmarks/agentgym_ids.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from agentenv_sciworld import SciWorldEnv, agentgym, tasks
from agentenv_sciworld.agentgym_ids import AGENTEVAL_TEST, AGENTTRAJ_TRAIN
from agentenv_sciworld.engine import Engine
from scienceworld.constants import ID2TASK

LEFT_OUT = {"5-1", "5-2", "9-1", "9-2", "9-3", "10-1", "10-2"}


def agentgym_pairs() -> list[tuple[str, int]]:
    """AgentGym's ``(task name, variation)`` list, asked of the simulator as AgentGym's server asked it."""
    with Engine() as engine:
        return [
            (name, v)
            for task_id, name in ID2TASK.items()
            if task_id not in LEFT_OUT
            for v in range(engine.max_variations(name))
        ]


def measure() -> dict[str, Any]:
    reference = agentgym_pairs()
    here = {
        "sciworld": lambda i: tasks.task_at(i),
        "sciworld_agentgym": lambda i: agentgym.task_at(i),
    }
    sets = {
        "AgentEval test": sorted(AGENTEVAL_TEST),
        "AgentTraj train": sorted(AGENTTRAJ_TRAIN),
        "every id": list(range(len(reference))),
    }
    table: dict[str, Any] = {}
    for name, ids in sets.items():
        row: dict[str, Any] = {"ids": len(ids)}
        for env, task_at in here.items():
            row[f"{env} same (task, variation)"] = sum(
                (task_at(i).task_name, task_at(i).variation) == reference[i] for i in ids
            )
        table[name] = row
    # where AgentEval's test tasks lie in sciworld's index
    placed = Counter(
        SciWorldEnv.split_of(tasks.data_idx_of(*reference[i])) or "none" for i in AGENTEVAL_TEST
    )
    table["AgentEval test tasks in sciworld's splits"] = dict(placed)
    table["AgentTraj train ids that are also AgentEval test ids"] = len(set(AGENTTRAJ_TRAIN) & set(AGENTEVAL_TEST))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    table = measure()
    rows = {k: v for k, v in table.items() if isinstance(v, dict) and "ids" in v}
    columns = list(next(iter(rows.values())))
    print("| id set | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(str(row[c]) for c in columns) + " |")
    for name, value in table.items():
        if name not in rows:
            print(f"{name}: {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)


if __name__ == "__main__":
    main()
