"""TextCraftEnv in-process: task mapping, the action grammar, tags, illegal actions, the step cap."""

import pytest
from agentenv_textcraft import NUM_GOALS, TextCraftEnv, recipe_book


@pytest.fixture
def env():
    return TextCraftEnv()


def start(env: TextCraftEnv, goal: str) -> str:
    return env.reset_to_goal(goal)


def test_same_index_same_task_in_any_env():
    a, b = TextCraftEnv(), TextCraftEnv()
    for idx in (0, 1, 137, 543, 544, 2000):
        assert a.reset(idx) == b.reset(idx)
        assert a.detail()["commands"] == b.detail()["commands"]


def test_goal_is_idx_mod_544_th_goal(env):
    goals = recipe_book().goals
    for idx in (0, 5, 543, 544, 545, 544 * 3 + 17):
        observation = env.reset(idx)
        goal = goals[idx % NUM_GOALS]
        assert env.task.goal == goal
        assert observation.startswith("Crafting commands:\n")
        assert observation.endswith(f"\n\nGoal: craft {goal.replace('_', ' ')}.")
    with pytest.raises(ValueError):
        env.reset(-1)


def test_listing_holds_the_needed_recipes_and_at_most_10_distractors(env):
    env.reset(543)
    lines = env.task.commands
    from agentenv_textcraft.tasks import crafting_tree

    needed = {r.command() for r in crafting_tree(env.book, env.task.goal)}
    assert needed <= set(lines)
    assert 0 < len(set(lines) - needed) <= 10
    assert len(lines) == len(set(lines))


def test_listing_varies_with_the_lap(env):
    """idx and idx + 544 share the goal; their distractors / order are drawn with their own seed."""
    first, second = env.reset(300), env.reset(300 + NUM_GOALS)
    assert first.splitlines()[-1] == second.splitlines()[-1]
    assert first != second


def test_get_craft_inventory_and_reward(env):
    start(env, "crafting_table")
    assert env.step("inventory").observation == "Inventory: You are not carrying anything."
    result = env.step("get 1 oak log")
    assert (result.observation, result.reward, result.done) == ("Got 1 oak log", 0.0, False)
    assert env.step("craft 4 oak planks using 1 oak log").observation == "Crafted 4 oak planks"
    assert env.step("inventory").observation == "Inventory: [oak planks] (4)"
    result = env.step("craft 1 crafting table using 4 oak planks")
    assert (result.observation, result.reward, result.done, result.score) == (
        "Crafted 1 crafting table",
        1.0,
        True,
        1.0,
    )
    after = env.step("inventory")
    assert after.done and after.reward == 0.0


def test_tag_ingredients_accept_any_member(env):
    start(env, "campfire")  # 3 logs, 3 stick, 1 coals
    for action in ("get 1 stripped spruce log", "get 2 crimson stem", "get 1 charcoal", "get 1 birch log"):
        assert env.step(action).observation.startswith("Got")
    assert env.step("craft 4 birch planks using 1 birch log").observation == "Crafted 4 birch planks"
    assert env.step("craft 4 stick using 2 birch planks").observation == "Crafted 4 stick"
    # a tag slot is filled by one kind of log: two kinds are two ingredients, which no recipe takes
    refused = env.step("craft 1 campfire using 1 stripped spruce log, 2 crimson stem, 3 stick, 1 charcoal")
    assert refused.observation.startswith("Could not find a recipe for campfire")
    assert env.step("get 1 crimson stem").observation == "Got 1 crimson stem"
    done = env.step("craft 1 campfire using 3 crimson stem, 3 stick, 1 charcoal")
    assert done.observation == "Crafted 1 campfire" and done.reward == 1.0


def test_tag_written_as_listed(env):
    """The listing says "1 oak logs" / "4 planks": writing the tag itself works too."""
    start(env, "crafting_table")
    assert env.step("get 1 oak logs").observation == "Got 1 oak log"
    assert env.step("craft 4 oak planks using 1 oak logs").observation == "Crafted 4 oak planks"
    assert env.step("craft 1 crafting table using 4 planks").reward == 1.0


def test_a_plural_that_names_a_narrower_tag_fills_a_slot_of_a_wider_one(env):
    """'3 oak logs' is both the tag of oak logs and the plural of 'oak log': in campfire's 'logs' slot it was
    refused as the wrong tag ('Check the ingredients and their counts'), while '3 oak log' crafted."""
    start(env, "campfire")  # 3 logs, 3 stick, 1 coals
    for action in ("get 6 oak log", "get 1 coal", "craft 4 oak planks using 1 oak log", "craft 4 sticks using 2 oak planks"):
        env.step(action)
    done = env.step("craft 1 campfire using 3 sticks, 1 coal, 3 oak logs")
    assert done.observation == "Crafted 1 campfire" and done.reward == 1.0
    start(env, "torch")  # a slot of the item coal: "coals" (a tag, and the plural) is the item too
    for action in ("get 1 coal", "get 1 oak log", "craft 4 oak planks using 1 oak log", "craft 4 sticks using 2 oak planks"):
        env.step(action)
    assert env.step("craft 4 torch using 1 coals, 1 stick").reward == 1.0
    start(env, "nether_brick_fence")  # 4 nether bricks (a block), 2 nether brick (an ingot): names of their own
    for action in ("get 4 nether bricks", "get 2 nether brick"):
        env.step(action)
    swapped = env.step("craft 6 nether brick fence using 4 nether brick, 2 nether bricks")
    assert swapped.observation.startswith("Could not find a recipe") and not swapped.done


def test_planks_of_another_wood_fill_a_planks_slot(env):
    start(env, "crafting_table")
    env.step("get 1 warped stem")
    assert env.step("craft 4 warped planks using 1 warped stem").observation == "Crafted 4 warped planks"
    assert env.step("craft 1 crafting table using 4 warped planks").done


def test_batched_craft_multiplies_every_count(env):
    start(env, "chest")
    env.step("get 2 oak log")
    assert env.step("craft 8 oak planks using 2 oak log").observation == "Crafted 8 oak planks"
    refused = env.step("craft 1 chest using 7 oak planks")  # 7 is not a whole number of runs of 8
    assert refused.observation.startswith("Could not find a recipe for chest using 7 oak planks")
    assert env.step("craft 1 chest using 8 oak planks").reward == 1.0


def test_ingredient_choice_list(env):
    start(env, "torch")  # 1 coal or charcoal + 1 stick -> 4 torch
    env.step("get 2 bamboo")
    env.step("craft 1 stick using 2 bamboo")
    env.step("get 1 charcoal")
    result = env.step("craft 4 torch using 1 stick, 1 charcoal")  # any order
    assert result.observation == "Crafted 4 torch" and result.done


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("", "Invalid action"),
        ("dance", "Invalid action"),
        ("craft a crafting table", "Invalid action"),
        ("craft 1 crafting table using planks", "Invalid action"),
        ("get 0 oak log", "Invalid action"),
        ("get -5 oak log", "Invalid action: counts are whole numbers from 1"),  # was "Got 5 oak log"
        ("get 1.5 oak log", "Invalid action: counts are whole numbers from 1"),  # was "Got 15 oak log"
        ("craft 4 oak planks using -1 oak log", "Invalid action: counts are whole numbers from 1"),
        (f"get {'9' * 5000} oak log", "Invalid action: a number in it is too large"),
        (f"craft {'9' * 5000} stick using 2 oak planks", "Invalid action: a number in it is too large"),
        (f"craft 1 stick using {'9' * 5000} oak planks", "Invalid action: a number in it is too large"),
        ("get 1 unobtainium", "Could not find unobtainium"),
        ("get 4 oak planks", "Could not find oak planks: it is crafted"),
        ("get 4 planks", "Could not find planks: it is crafted"),
        ("craft 1 unobtainium using 1 oak log", "Could not find a recipe for unobtainium"),
        ("craft 1 oak log using 1 oak planks", "Could not find a recipe for oak log: it is a base item"),
        (
            "craft 1 crafting table using 3 oak planks",
            "Could not find a recipe for crafting table using 3 oak planks",
        ),
        ("craft 1 crafting table using 4 oak log", "Could not find a recipe for crafting table"),
        ("craft 1 crafting table using 4 oak planks", "Could not find enough items to craft crafting table"),
        (
            "craft 4 oak planks using 1 oak log",
            "Could not find enough items to craft oak planks: you need 1 oak log",
        ),
    ],
)
def test_illegal_and_garbled_actions_say_why_and_keep_the_session(env, action, message):
    start(env, "crafting_table")
    result = env.step(action)
    assert result.observation.startswith(message), result.observation
    assert (result.reward, result.done) == (0.0, False)
    assert env.observation() == result.observation
    # the session keeps working: the expert still finishes the task
    while not env.done:
        env.step(env.expert_action().action)
    assert env.score == 1.0


def test_actions_are_normalised(env):
    start(env, "crafting_table")
    assert env.step("Get 1 minecraft:oak_log.").observation == "Got 1 oak log"
    assert env.step("  CRAFT 4 Oak_Planks using 1 oak logs ").observation == "Crafted 4 oak planks"
    # cleaned as AgentGym's client cleans an action: its first line, letters, digits, commas and spaces
    for written in ("`get 1 oak log`", '"get 1 oak log"', "**get 1 oak log**", "[get 1 oak log]", "get 1 oak log!",
                    "get 1 oak log\nThis gives me a log to craft planks."):
        assert env.step(written).observation == "Got 1 oak log", written


def test_step_cap_ends_the_episode_unsolved(env):
    start(env, "crafting_table")
    for _ in range(env.max_steps - 1):
        assert not env.step("inventory").done
    last = env.step("inventory")
    assert last.done and last.reward == 0.0 and "actions used" in last.observation
    assert env.max_steps > env.max_rounds


def test_create_resets_to_task_0_or_the_given_goal_and_ignores_minecraft_dir(env):
    assert env.create(minecraft_dir="/etc/") == TextCraftEnv().reset(0)
    observation = env.create(goal="minecraft:dark_oak_sign", minecraft_dir="/nonexistent")
    assert observation.endswith("Goal: craft dark oak sign.")
    given = env.create(commands="craft 1 stick using 2 bamboo", goal="minecraft:stick")
    assert given == "Crafting commands:\ncraft 1 stick using 2 bamboo\n\nGoal: craft stick."
    with pytest.raises(ValueError):
        env.create(goal="minecraft:oak_log")  # a base item is not a goal


@pytest.mark.parametrize(
    "fields",
    [{"goal": 5}, {"goal": ["minecraft:stick"]}, {"goal": "minecraft:stick", "commands": 7}],
)
def test_create_refuses_mistyped_fields_with_a_type_error(env, fields):
    with pytest.raises(TypeError, match="must be"):
        env.create(**fields)


def test_detail_and_task_type(env):
    env.reset(543)
    detail = env.detail()
    assert detail["task_type"] == env.task_type() == "depth_4"
    assert detail["data_idx"] == 543 and detail["done"] is False and detail["inventory"] == {}


def test_task_type_of_an_index_is_what_the_task_says_it_is():
    env = TextCraftEnv()
    for idx in (0, 150, 443, 444, 543, 544 + 7):
        env.reset(idx)
        assert TextCraftEnv.task_type_of(idx) == env.task_type()
