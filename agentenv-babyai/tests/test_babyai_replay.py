"""The BabyAI text env says, byte for byte, what it said before its step was made light (issue 37).

``data/replay_digests.json`` holds, per episode, a SHA-256 over everything the env said: every observation,
available-action list, reward, ``done`` / ``truncated``, and the expert's thought and action.  It was
written by the env before the change, for episodes played with the expert and with seeded random actions
(available ones, primitive ones, illegal and malformed ones) on tasks of all 40 levels, both BabyAI envs
(``babyai`` and ``babyai_agentgym``).  Any change to what the env says fails this test; where a change is
meant, write the file again: ``python agentenv-babyai/tests/test_babyai_replay.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest
from agentenv_babyai import BabyAIEnv
from agentenv_babyai.agentgym import BabyAIAgentGymEnv

DIGESTS = Path(__file__).parent / "data" / "replay_digests.json"
#: tasks of all 40 levels (two seeds each), and train tasks of later seeds
TASKS = [*range(0, 80), *range(4000, 4040)]
AGENTGYM_TASKS = [*range(0, 40), *range(3960, 4000)]
RANDOM_STEPS = 40
#: actions that are never (or rarely) available: illegal, misspelt, AgentGym's spellings, garbage
ODD_ACTIONS = [
    "go to purple ball 3", "pick up red key 1", "go through blue door 1", "toggle and go through grey door 2",
    "toggle", "drop", "PICKUP Red Ball", "go to the red ball", "go through the green closed door", "fly away",
    "", "   ", "Go To Yellow Box 1.", "pick up 'red ball 1'", "check available actions", "go to red ball 99",
]


def expert_episode(env: BabyAIEnv, task: int) -> list:
    said = [env.reset(task), env.available_actions()]
    for _ in range(env.expert_max_rounds or 64):
        move = env.expert_action()
        result = env.step(move.action)
        said += [move.thought, move.action, result.observation, result.reward, result.done, result.truncated,
                 env.available_actions()]
        if result.done:
            break
    return said


def random_episode(env: BabyAIEnv, task: int) -> list:
    rng = random.Random(f"replay {task}")
    said = [env.reset(task), env.available_actions()]
    for _ in range(RANDOM_STEPS):
        roll = rng.random()
        if roll < 0.6:
            action = rng.choice(env.available_actions())
        elif roll < 0.85:
            action = rng.choice(["turn left", "turn right", "move forward"])
        else:
            action = rng.choice(ODD_ACTIONS)
        result = env.step(action)
        said += [action, result.observation, result.reward, result.done, result.truncated, env.available_actions()]
        if result.done:
            break
    return said


def digest(said: list) -> str:
    return hashlib.sha256(json.dumps(said).encode()).hexdigest()


def digests(env_cls: type[BabyAIEnv], tasks: list[int]) -> dict[str, str]:
    env = env_cls()
    try:
        found = {}
        for task in tasks:
            found[f"{env_cls.name} {task} expert"] = digest(expert_episode(env, task))
            found[f"{env_cls.name} {task} random"] = digest(random_episode(env, task))
        return found
    finally:
        env.close()


@pytest.mark.parametrize("env_cls, tasks", [(BabyAIEnv, TASKS), (BabyAIAgentGymEnv, AGENTGYM_TASKS)],
                         ids=["babyai", "babyai_agentgym"])
def test_every_observation_and_action_list_is_what_it_was(env_cls, tasks):
    expected = json.loads(DIGESTS.read_text())
    found = digests(env_cls, tasks)
    changed = [name for name, value in found.items() if expected[name] != value]
    assert not changed, f"{len(changed)} of {len(found)} episodes say something else now: {changed[:10]}"


if __name__ == "__main__":  # write the digests again (only where a change of wording is meant)
    every = digests(BabyAIEnv, TASKS) | digests(BabyAIAgentGymEnv, AGENTGYM_TASKS)
    DIGESTS.write_text(json.dumps(every, indent=0, sort_keys=True) + "\n")
    print(f"{len(every)} episode digests written to {DIGESTS}", file=sys.stderr)
