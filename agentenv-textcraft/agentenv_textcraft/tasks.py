"""Tasks: a goal item plus the crafting commands shown to the agent.

Task ``idx`` crafts ``book.goals[idx % 544]`` (goals sorted by minimum crafting depth, then by item id).
Its listing holds every recipe of every craftable item in the goal's crafting tree (following each
slot's cheapest choice, e.g. ``planks`` -> oak planks) plus up to 10 distractors: other recipes that
take one of the tree's items.  Distractors and line order come from ``random.Random(idx)``, so a task
is the same on every machine and every run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .recipes import Recipe, RecipeBook, item_name

MAX_DISTRACTORS = 10


@dataclass(frozen=True)
class Task:
    goal: str  # item id, e.g. "crafting_table"
    commands: tuple[str, ...]
    data_idx: int | None = None  # None for a task given by goal (AgentGym's /create {goal, commands})

    def observation(self) -> str:
        listing = "\n".join(self.commands)
        return f"Crafting commands:\n{listing}\n\nGoal: craft {item_name(self.goal)}."


def crafting_tree(book: RecipeBook, goal: str) -> list[Recipe]:
    """Every recipe of every craftable item reachable from ``goal`` (depth-first, in recipe order)."""
    recipes: list[Recipe] = []
    seen: set[str] = set()

    def visit(item: str) -> None:
        if item in seen or item not in book.by_output:
            return
        seen.add(item)
        for recipe in book.by_output[item]:
            recipes.append(recipe)
            for ing in recipe.ingredients:
                visit(book.cheapest(ing.options))

    visit(goal)
    return recipes


def distractor_pool(book: RecipeBook, tree: list[Recipe]) -> list[str]:
    """Commands of recipes that take an item of the tree but are not in it (sorted)."""
    items = {r.output for r in tree} | {book.cheapest(i.options) for r in tree for i in r.ingredients}
    needed = {r.command() for r in tree}
    pool = {r.command() for item in items for r in book.uses.get(item, ())}
    return sorted(pool - needed)


def _listing(book: RecipeBook, goal: str, rng: random.Random) -> tuple[str, ...]:
    tree = crafting_tree(book, goal)
    needed = list(dict.fromkeys(r.command() for r in tree))
    pool = distractor_pool(book, tree)
    lines = needed + rng.sample(pool, min(len(pool), MAX_DISTRACTORS))
    rng.shuffle(lines)
    return tuple(lines)


def make_task(book: RecipeBook, data_idx: int) -> Task:
    """Task ``data_idx`` (any non-negative integer; the goal repeats every ``len(book.goals)``)."""
    if data_idx < 0:
        raise ValueError(f"data_idx must be >= 0, got {data_idx}")
    goal = book.goals[data_idx % len(book.goals)]
    return Task(goal, _listing(book, goal, random.Random(data_idx)), data_idx)


def resolve_goal(book: RecipeBook, goal: str) -> str:
    """A goal as AgentGym's ``/create`` sends it (``minecraft:dark_oak_sign`` or ``dark oak sign``)."""
    item = goal.strip().lower().removeprefix("minecraft:").replace(" ", "_")
    if item not in book.craftable:
        raise ValueError(f"{goal!r} is not a craftable item")
    return item


def custom_task(book: RecipeBook, goal: str, commands: str | None = None) -> Task:
    """A task given by its goal.  ``commands`` (newline-separated, as AgentGym's ``/create`` sends them)
    replaces the generated listing; without it the listing is generated with seed 0."""
    if not isinstance(goal, str):
        raise TypeError(f"goal must be an item name such as 'minecraft:stick', got {type(goal).__name__}")
    if commands is not None and not isinstance(commands, str):
        raise TypeError(f"commands must be one newline-separated string, got {type(commands).__name__}")
    item = resolve_goal(book, goal)
    if commands is None:
        return Task(item, _listing(book, item, random.Random(0)))
    return Task(item, tuple(line.strip() for line in commands.splitlines() if line.strip()))
