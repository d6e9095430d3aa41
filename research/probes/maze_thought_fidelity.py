"""How faithful a Maze agent's thoughts are, from an evaluation file (AgentTraj JSONL).

For every agent turn that answers a position observation it checks whether the thought restates the goal
and the position it was just given ("The goal is at position R, C and I am at position R, C", the expert's
wording) and whether the move the thought announces ("So I move X.") is the action it takes.  A model
that cannot copy those four numbers can only walk the maze by luck, and its successful episodes teach
garbled thoughts to whatever trains on them (research/results.md).

    python research/probes/maze_thought_fidelity.py runs/experiment/seed0/agentevol/iter_0/eval.jsonl
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from agentenv.data.trajectory import read_trajectories

OBSERVED = re.compile(r"goal is at position (\d+), (\d+)\. Your current position is at position (\d+), (\d+)")
RESTATED = re.compile(r"goal is at position (\d+), (\d+) and I am at position (\d+), (\d+)")
ANNOUNCED = re.compile(r"So I (move \w+)\.\s*Action:\s*(move \w+)")


def fidelity(path: Path) -> dict[str, float]:
    turns = goal = both = agrees = 0
    for t in read_trajectories(path):
        c = t.conversations
        for observation, reply in zip(c[2::2], c[3::2], strict=False):
            seen = OBSERVED.search(observation.value)
            if not seen:
                continue
            said, move = RESTATED.search(reply.value), ANNOUNCED.search(reply.value)
            turns += 1
            goal += bool(said and said.groups()[:2] == seen.groups()[:2])
            both += bool(said and said.groups() == seen.groups())
            agrees += bool(move and move.group(1) == move.group(2))
    n = max(turns, 1)
    return {
        "turns": turns,
        "goal_restated": goal / n,
        "goal_and_position_restated": both / n,
        "announced_move_taken": agrees / n,
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
            f"{path}: {f['turns']} turns, goal restated {f['goal_restated']:.1%}, goal and position "
            f"{f['goal_and_position_restated']:.1%}, announced move taken {f['announced_move_taken']:.1%}"
        )


if __name__ == "__main__":
    main()
