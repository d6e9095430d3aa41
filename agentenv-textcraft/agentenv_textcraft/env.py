"""TextCraft: craft a Minecraft item from the crafting commands listed in the first observation.

The agent fetches base items with ``get N item``, crafts with ``craft N item using N a, N b``, and
looks at what it holds with ``inventory``.  The episode ends with reward 1 as soon as the goal item is
in the inventory, or with reward 0 after :attr:`TextCraftEnv.max_steps` actions.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any, ClassVar

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire

from .actions import GRAMMAR, Craft, Get, Invalid, Inventory, parse_action
from .expert import plan
from .recipes import TAGS, Ingredient, Recipe, RecipeBook, item_name, recipe_book
from .tasks import Task, custom_task, make_task

#: the number of distinct goals; task ``idx`` crafts goal ``idx % NUM_GOALS``
NUM_GOALS = 544
MAX_GET = 1000

TASK_TEXT = """\
You are crafting items in a text version of Minecraft. The first observation lists crafting commands \
of the form "craft [target] using [ingredients]" and names the goal item.
Each round you see an observation and reply with one action. The actions are:
- get N item: take N units of a base item (an item no listed command makes), e.g. "get 2 oak log";
- craft N item using N ingredient, N ingredient: craft with one of the listed commands, e.g. \
"craft 4 oak planks using 1 oak log" or "craft 1 golden carrot using 8 gold nugget, 1 carrot". You \
may run a command several times at once by multiplying every count, e.g. "craft 8 stick using 4 oak planks";
- inventory: list what you hold.
Always give the quantities. Use only the listed crafting commands. When a command names a generic \
ingredient such as "planks" or "oak logs", use a specific kind of it, e.g. "dark oak planks" or "oak log".
The task is done as soon as the goal item is in your inventory."""


class TextCraftEnv(EpisodicEnv):
    """One TextCraft episode at a time over the shared :class:`RecipeBook`."""

    name: ClassVar[str] = "textcraft"
    #: train on the shallower goals, test on the 100 deepest ones (see docs/envs/textcraft.md)
    splits: ClassVar[dict[str, range]] = {"train": range(0, 444), "test": range(444, 544)}
    max_rounds: ClassVar[int] = 20  # AgentGym's evaluation setting
    #: actions per episode before it ends unsolved (a server-side guard; agents stop at max_rounds)
    max_steps: ClassVar[int] = 50
    task_text: ClassVar[str] = TASK_TEXT
    port: ClassVar[int] = 36003
    wire: ClassVar[Wire] = Wire(
        shapes={
            "create": ("id", "observation", "done", "reward"),
            "reset": ("id", "observation", "done", "reward"),
            "step": ("observation", "reward", "done"),
        },
    )

    def __init__(self, book: RecipeBook | None = None):
        super().__init__()
        self.book = book or recipe_book()
        self.task: Task | None = None
        self.inventory: Counter[str] = Counter()

    # --- tasks ------------------------------------------------------------------------------------
    def start(self, data_idx: int) -> str:
        return self._start(make_task(self.book, data_idx))

    def reset_to_goal(self, goal: str, commands: str | None = None) -> str:
        """Start a task given by its goal item (AgentGym's ``/create {goal, commands}``)."""
        return self.begin(self._start(custom_task(self.book, goal, commands)))

    def create(self, /, commands: str | None = None, goal: str | None = None, **_ignored: Any) -> str:
        """AgentGym's ``/create``: start the given goal, or task 0.  ``minecraft_dir`` (a client-side
        path) lands in ``_ignored``: a server never reads a path a client sends."""
        return self.reset(0) if goal is None or goal == "" else self.reset_to_goal(goal, commands)

    def _start(self, task: Task) -> str:
        self.task = task
        self.inventory = Counter()
        return task.observation()

    # --- acting -------------------------------------------------------------------------------------
    def act(self, action: str) -> StepResult:
        parsed = parse_action(action)
        if isinstance(parsed, Get):
            text = self._get(parsed)
        elif isinstance(parsed, Craft):
            text = self._craft(parsed)
        elif isinstance(parsed, Inventory):
            text = self._inventory_text()
        else:
            assert isinstance(parsed, Invalid)
            text = f"Invalid action: {parsed.reason}. Use {GRAMMAR}."
        if self.inventory[self.task.goal] > 0:
            return StepResult(text, 1.0, terminated=True, info={"steps": self.steps})
        return StepResult(text, info={"steps": self.steps})

    def _resolve(self, name: str) -> str | None:
        """An item id, ``#tag`` or None for a name as written in an action (a plural -s is tolerated)."""
        found = self._meanings(name)
        return found[0] if found else None

    def _meanings(self, name: str) -> list[str]:
        """Every item id or ``#tag`` a name as written may mean, the likeliest first: ``oak logs`` is the tag
        of oak logs and, a plural, the item ``oak log``; an item's own name means that item alone
        (``nether bricks`` is no ``nether brick``)."""
        names = self.book.names
        if name in names and not names[name].startswith("#"):
            return [names[name]]
        found = [names[c] for c in (name, name.removesuffix("s"), name.removesuffix("es"), name + "s") if c in names]
        return list(dict.fromkeys(found))

    def _get(self, action: Get) -> str:
        target = self._resolve(action.name)
        if not 1 <= action.count <= MAX_GET:
            return f"Invalid action: you can get between 1 and {MAX_GET} items at once."
        if target is None:
            return f"Could not find {action.name}: there is no such item."
        if target.startswith("#"):  # a tag such as "oak logs": fetch its simplest base member
            bases = [m for m in TAGS[target[1:]] if self.book.is_base(m)]
            if not bases:
                return (
                    f"Could not find {action.name}: it is crafted, not fetched; craft a specific kind of it."
                )
            target = bases[0]
        if not self.book.is_base(target):
            return f"Could not find {item_name(target)}: it is crafted, not fetched; use a crafting command."
        self.inventory[target] += action.count
        return f"Got {action.count} {item_name(target)}"

    def _craft(self, action: Craft) -> str:
        target = self._resolve(action.name)
        if target is None or target.startswith("#"):
            return f"Could not find a recipe for {action.name}: there is no such item."
        if target not in self.book.by_output:
            return f"Could not find a recipe for {item_name(target)}: it is a base item; get it instead."
        given: list[tuple[int, list[str]]] = []
        for count, name in action.ingredients:
            meanings = self._meanings(name)
            if not meanings:
                return f"Could not find a recipe for {item_name(target)}: there is no item called {name}."
            given.append((count, meanings))
        matches = [m for r in self.book.by_output[target] if (m := self._match(r, given)) is not None]
        written = ", ".join(f"{n} {name}" for n, name in action.ingredients)
        if not matches:
            return (
                f"Could not find a recipe for {item_name(target)} using {written}. Check the ingredients "
                "and their counts against the crafting commands."
            )
        for recipe, batches, needs in matches:
            if all(self.inventory[item] >= n for item, n in needs.items()):
                self.inventory.subtract(needs)
                self.inventory = +self.inventory  # drop items used up
                made = batches * recipe.count
                self.inventory[target] += made
                return f"Crafted {made} {item_name(target)}"
        _, _, needs = matches[0]
        short = ", ".join(
            f"{n} {item_name(item)} (you have {self.inventory[item]})"
            for item, n in needs.items()
            if self.inventory[item] < n
        )
        return f"Could not find enough items to craft {item_name(target)}: you need {short}."

    def _match(self, recipe: Recipe, given: list[tuple[int, list[str]]]) -> tuple[Recipe, int, Counter[str]] | None:
        """If the given ingredients are ``k`` runs of ``recipe`` (in any order): ``(recipe, k, items
        needed)``, preferring an assignment the inventory can pay for.

        A tag written as such (``4 planks``), or a narrower one whose items all fit the slot (``3 oak logs``
        for ``logs``), stands for whichever of its items the inventory holds enough of.
        """
        if len(given) != len(recipe.ingredients):
            return None
        fallback = None
        for slots in itertools.permutations(recipe.ingredients):
            pairs = list(zip(given, slots, strict=True))
            if any(n % ing.count for (n, _), ing in pairs):
                continue
            runs = {n // ing.count for (n, _), ing in pairs}
            if len(runs) != 1 or 0 in runs:
                continue
            needs: Counter[str] = Counter()
            for (n, meanings), ing in pairs:
                name = self._fit(meanings, ing, n, needs)
                if name is None:
                    break
                needs[name] += n
            else:
                found = (recipe, runs.pop(), needs)
                if all(self.inventory[i] >= n for i, n in needs.items()):
                    return found
                fallback = fallback or found
        return fallback

    def _fit(self, meanings: list[str], slot: Ingredient, n: int, needs: Counter[str]) -> str | None:
        """The item a written ingredient (its ``meanings``) puts in ``slot``, or None."""
        for meaning in meanings:
            if not meaning.startswith("#"):
                if meaning in slot.options:
                    return meaning
                continue
            members = slot.options if meaning[1:] == slot.tag else TAGS[meaning[1:]]
            if set(members) <= set(slot.options):
                held = [o for o in members if self.inventory[o] - needs[o] >= n]
                return held[0] if held else self.book.cheapest(members)
        return None

    # --- views --------------------------------------------------------------------------------------
    def _inventory_text(self) -> str:
        if not self.inventory:
            return "Inventory: You are not carrying anything."
        return "Inventory: " + " ".join(f"[{item_name(i)}] ({n})" for i, n in self.inventory.items())

    def expert_action(self) -> ExpertAction:
        steps = plan(self.book, self.task.goal, self.inventory)
        return ExpertAction(steps[0].thought, steps[0].action)

    def task_type(self) -> str:
        if self.task is None:
            return self.name
        return f"depth_{self.book.depth[self.task.goal]}"

    @classmethod
    def task_type_of(cls, data_idx: int) -> str:
        book = recipe_book()
        return f"depth_{book.depth[book.goals[data_idx % len(book.goals)]]}"

    def detail(self) -> dict[str, Any]:
        task = self.task
        return super().detail() | {
            "goal": item_name(task.goal) if task else None,
            "commands": "\n".join(task.commands) if task else None,
            "inventory": {item_name(i): n for i, n in self.inventory.items()},
        }
