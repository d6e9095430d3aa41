"""How well a BabyAI GoTo agent reads its observation, from an evaluation file (AgentTraj JSONL).

For every agent turn it checks whether the thought restates the mission's object ("The goal asks me to go
to the blue ball", the expert's wording), whether the action is one the observation offered, and — on the
turns where the mission's object is in sight (a "go to <object> N" action is offered) — whether the agent
takes it.  The last one is the whole skill of the GoTo levels; a model that cannot copy the object's
colour and type from the mission reaches it only by luck (research/results.md).

    python research/probes/babyai_thought_fidelity.py runs/babyai/seed0/agentevol/iter_0/eval.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from agentenv.data.trajectory import read_trajectories

MISSION = re.compile(r"Your goal: go to (?:the|a) (\w+ \w+)")
RESTATED = re.compile(r"go to the (\w+ \w+)")
ACTIONS = re.compile(r"Available actions: (\[.*\])")
ACTION = re.compile(r"Action:\s*(.+)\s*$")


def fidelity(path: Path) -> dict[str, float]:
    turns = restated = offered = in_sight = taken = 0
    for t in read_trajectories(path):
        c = t.conversations
        mission = MISSION.search(c[2].value)
        if not mission:
            continue
        goal = mission.group(1)
        for observation, reply in zip(c[2::2], c[3::2], strict=False):
            actions = ACTIONS.search(observation.value)
            said, action = RESTATED.search(reply.value), ACTION.search(reply.value)
            if not actions or not action:
                continue
            available = json.loads(actions.group(1))
            chosen = action.group(1).strip()
            turns += 1
            restated += bool(said and said.group(1) == goal)
            offered += chosen in available
            targets = [a for a in available if a.startswith(f"go to {goal} ")]
            if targets:
                in_sight += 1
                taken += chosen in targets
    return {
        "turns": turns,
        "goal_restated": restated / max(turns, 1),
        "action_offered": offered / max(turns, 1),
        "turns_goal_in_sight": in_sight,
        "goes_to_goal_in_sight": taken / max(in_sight, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args()
    for path in args.files:
        f = fidelity(path)
        print(
            f"{path}: {f['turns']} turns, goal restated {f['goal_restated']:.1%}, action offered "
            f"{f['action_offered']:.1%}; goal in sight on {f['turns_goal_in_sight']} turns, "
            f"goes to it {f['goes_to_goal_in_sight']:.1%}"
        )


if __name__ == "__main__":
    main()
