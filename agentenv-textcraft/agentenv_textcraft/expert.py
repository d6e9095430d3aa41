"""The expert: a crafting-tree planner.

From the current inventory it plans every remaining ``get`` and ``craft`` for the goal: a base item is
fetched in the amount still missing; a crafted item uses its shallowest recipe, run as many times as
needed (``ceil(missing / units per craft)``) in one batched command, after its ingredients are
planned the same way.  Items already held are used first, and items set aside for one ingredient are
never spent on another.  The expert's move is the plan's first step; planning again after every step
lets it recover from whatever another agent did before.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from .recipes import Ingredient, Recipe, RecipeBook, item_name


@dataclass(frozen=True)
class PlanStep:
    action: str
    thought: str


def _units(n: int, item: str) -> str:
    return f"{n} {item_name(item)}"


class _Planner:
    def __init__(self, book: RecipeBook, inventory: Counter[str]):
        self.book = book
        self.held = Counter(inventory)
        self.reserved: Counter[str] = Counter()
        self.steps: list[PlanStep] = []

    def free(self, item: str) -> int:
        return self.held[item] - self.reserved[item]

    def choose_recipe(self, item: str) -> Recipe:
        """A recipe whose ingredients are all at hand if there is one, else the shallowest one."""
        recipes = self.book.by_output[item]
        return min(
            recipes,
            key=lambda r: (
                not all(any(self.free(o) >= ing.count for o in ing.options) for ing in r.ingredients),
                self.book.recipe_depth(r),
                len(r.ingredients),
                r.source,
            ),
        )

    def choose_option(self, ing: Ingredient, need: int) -> str:
        """An accepted item already held in full, else the cheapest one (strictly shallower than the
        recipe's output, so planning always terminates)."""
        for option in ing.options:
            if self.free(option) >= need:
                return option
        return self.book.cheapest(ing.options)

    def obtain(self, item: str, need: int, purpose: str | None) -> None:
        """Plan until ``need`` units of ``item`` are free.  ``purpose`` completes the thought "I need N
        item ..." (None for the goal)."""
        missing = need - self.free(item)
        if missing <= 0:
            return
        have = f" and have {self.free(item)}" if self.free(item) > 0 else ""
        if self.book.is_base(item):
            self.held[item] += missing
            self.steps.append(
                PlanStep(
                    f"get {_units(missing, item)}",
                    f"I need {_units(need, item)} {purpose}{have}. {item_name(item).capitalize()} is a "
                    f"base item, so I get {missing} directly.",
                )
            )
            return
        recipe = self.choose_recipe(item)
        batches = math.ceil(missing / recipe.count)
        chosen: list[tuple[Ingredient, str, int]] = []
        for ing in recipe.ingredients:
            option = self.choose_option(ing, ing.count * batches)
            self.obtain(option, ing.count * batches, f"for the {item_name(item)}")
            self.reserved[option] += ing.count * batches
            chosen.append((ing, option, ing.count * batches))
        for _, option, n in chosen:
            self.reserved[option] -= n
            self.held[option] -= n
        made = batches * recipe.count
        self.held[item] += made
        inputs = ", ".join(_units(n, option) for _, option, n in chosen)
        notes = "".join(
            f" The command asks for {item_name(ing.label)}; any kind will do, so I use {item_name(option)}."
            for ing, option, _ in chosen
            if ing.tag is not None
        )
        times = f" (the recipe makes {recipe.count}, so I run it {batches} times)" if batches > 1 else ""
        if purpose is None:
            thought = f"The goal is {item_name(item)}, and I have what it takes: I craft it from {inputs}."
        else:
            thought = f"I need {_units(need, item)} {purpose}{have}; I craft {made} from {inputs}{times}."
        self.steps.append(PlanStep(f"craft {_units(made, item)} using {inputs}", thought + notes))


def plan(book: RecipeBook, goal: str, inventory: Counter[str] | dict[str, int]) -> list[PlanStep]:
    """Every remaining step to hold one ``goal`` item, starting from ``inventory``."""
    planner = _Planner(book, Counter(inventory))
    planner.obtain(goal, 1, None)
    return planner.steps
