"""The crafting-tree planner solves every goal, with correct quantities and reasons."""

import random
from collections import Counter

import pytest
from agentenv_textcraft import NUM_GOALS, TextCraftEnv
from agentenv_textcraft.expert import plan


def play_expert(env: TextCraftEnv) -> list[tuple[str, str, str]]:
    """Run the expert to the end; return (thought, action, observation) per step."""
    steps = []
    while not env.done:
        move = env.expert_action()
        result = env.step(move.action)
        steps.append((move.thought, move.action, result.observation))
    return steps


def test_expert_solves_every_goal_within_max_rounds_with_legal_actions():
    env = TextCraftEnv()
    for idx in range(NUM_GOALS):
        env.reset(idx)
        steps = play_expert(env)
        assert env.score == 1.0, idx
        assert len(steps) <= env.max_rounds, (idx, len(steps))
        for thought, action, observation in steps:
            assert observation.startswith(("Got ", "Crafted ")), (idx, action, observation)
            item = action.split(" using ")[0].split(" ", 2)[2]  # "get 2 oak log" -> "oak log"
            assert item in thought.lower(), (thought, action)


def test_plan_quantities_follow_output_counts():
    env = TextCraftEnv()
    env.reset_to_goal("crafting_table")
    assert [s.action for s in plan(env.book, "crafting_table", Counter())] == [
        "get 1 oak log",
        "craft 4 oak planks using 1 oak log",
        "craft 1 crafting table using 4 oak planks",
    ]
    # a chest needs 8 planks: two runs of the planks recipe, batched in one command
    assert [s.action for s in plan(env.book, "chest", Counter())] == [
        "get 2 oak log",
        "craft 8 oak planks using 2 oak log",
        "craft 1 chest using 8 oak planks",
    ]


def test_plan_uses_what_is_held_and_keeps_set_aside_items():
    env = TextCraftEnv()
    # 4 held birch planks fill the crafting table's planks slot: nothing to fetch
    assert [s.action for s in plan(env.book, "crafting_table", Counter(birch_planks=4))] == [
        "craft 1 crafting table using 4 birch planks"
    ]
    # 2 held oak planks are not enough for 4: one more run of the planks recipe, then the table
    steps = [s.action for s in plan(env.book, "crafting_table", Counter(oak_planks=2))]
    assert steps == [
        "get 1 oak log",
        "craft 4 oak planks using 1 oak log",
        "craft 1 crafting table using 4 oak planks",
    ]


def test_thoughts_state_the_reason():
    env = TextCraftEnv()
    env.reset_to_goal("crafting_table")
    thoughts = [t for t, _, _ in play_expert(env)]
    assert thoughts[0] == "I need 1 oak log for the oak planks. Oak log is a base item, so I get 1 directly."
    assert thoughts[1] == (
        "I need 4 oak planks for the crafting table; I craft 4 from 1 oak log. "
        "The command asks for oak logs; any kind will do, so I use oak log."
    )
    assert thoughts[2] == (
        "The goal is crafting table, and I have what it takes: I craft it from 4 oak planks. "
        "The command asks for planks; any kind will do, so I use oak planks."
    )


@pytest.mark.parametrize("seed", range(5))
def test_expert_recovers_after_random_actions(seed):
    """Another agent played first (random gets, crafts, garbage): the expert still finishes."""
    rng = random.Random(seed)
    env = TextCraftEnv()
    env.reset(rng.randrange(NUM_GOALS))
    lines = list(env.task.commands)
    for _ in range(8):
        roll = rng.random()
        if roll < 0.4:
            env.step(rng.choice(lines))  # a listed command, usually without the ingredients
        elif roll < 0.8:
            env.step(
                f"get {rng.randint(1, 5)} {rng.choice(['oak log', 'stick', 'string', 'iron ingot', 'redstone'])}"
            )
        else:
            env.step("flail wildly")
    if not env.done:
        play_expert(env)
    assert env.score == 1.0
