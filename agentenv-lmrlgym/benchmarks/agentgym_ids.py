"""How many of AgentGym's Maze and Wordle test ids name the same task here.

The reference is rebuilt from the facts of AgentGym's servers (its ``agentenv-lmrlgym`` over LMRL-Gym),
written down here apart from this package's code:

- **Maze** ``game`` ``g``: LMRL-Gym's double-T maze (from mazelab), goal (8, 6), start
  ``AGENTGYM_STARTS[g]``; its first observation reads ``The goal is at position 8, 6. Your current
  position is at position R, C. `` and the walls right / left / above / below the agent.  Compared: this
  env's first observation, word for word.
- **Wordle** ``seed`` ``s``: LMRL-Gym's game over its 40-word vocabulary (``tweet_words.txt``) with
  ``random.Random(s)``; it has no fixed hidden word: at every valid guess it draws a word consistent with
  the feedback so far from that generator.  Compared: its first draw, ``Random(s).choice(words)``, with the
  answer of task ``s`` here.

    python agentenv-lmrlgym/benchmarks/agentgym_ids.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from agentenv_lmrlgym.maze import MazeEnv
from agentenv_lmrlgym.words import answers

#: AgentEval's Maze and Wordle test items: ids 0..24 of each
AGENTEVAL_TEST = range(25)

#: LMRL-Gym's double-T maze: 1 wall, 0 open
DOUBLE_T = (
    "1111111111111",
    "1000001000001",
    "1110111110111",
    "1110111110111",
    "1110111110111",
    "1110000000111",
    "1111110111111",
    "1111110111111",
    "1111110111111",
    "1111111111111",
)
GOAL = (8, 6)
#: AgentGym's Maze start positions, by ``game``
AGENTGYM_STARTS = (
    (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 7), (1, 8), (1, 9), (1, 10), (1, 11), (2, 3), (3, 3), (4, 3),
    (5, 3), (5, 4), (5, 5), (5, 6), (6, 6), (7, 6), (5, 7), (5, 8), (5, 9), (4, 9), (3, 9), (2, 9), (8, 6),
)  # fmt: skip
#: LMRL-Gym's Wordle vocabulary (``llm_rl_scripts/wordle/vocab/tweet_words.txt``), in its order
TWEET_WORDS = (
    "panic solar shire proxy point robot prick wince crimp knoll sugar whack mount perky could wrung light "
    "those moist shard pleat aloft skill elder frame humor pause ulcer ultra robin cynic aroma caulk shake "
    "dodge swill tacit other thorn trove"
).split()


def agentgym_maze_observation(game: int) -> str:
    row, col = AGENTGYM_STARTS[game]
    sides = {"to your right": (0, 1), "to your left": (0, -1), "above you": (-1, 0), "below you": (1, 0)}
    walls = [side for side, (dr, dc) in sides.items() if DOUBLE_T[row + dr][col + dc] == "1"]
    if not walls:
        said = "There are no walls near you."
    elif len(walls) == 1:
        said = f"There is a wall {walls[0]}."
    else:
        said = f"There are walls {', '.join(walls)}."
    return f"The goal is at position {GOAL[0]}, {GOAL[1]}. Your current position is at position {row}, {col}. {said}"


def measure() -> dict[str, Any]:
    maze = MazeEnv()
    same_maze = sum(maze.reset(g) == agentgym_maze_observation(g) for g in AGENTEVAL_TEST)
    words = answers()
    first_draws = [random.Random(s).choice(TWEET_WORDS) for s in AGENTEVAL_TEST]
    return {
        "maze": {"ids": len(AGENTEVAL_TEST), "same first observation": same_maze},
        "wordle": {
            "ids": len(AGENTEVAL_TEST),
            "same word (AgentGym's first draw)": sum(words[s] == w for s, w in zip(AGENTEVAL_TEST, first_draws, strict=True)),
            "AgentGym's vocabulary": len(TWEET_WORDS),
            "of it among the answers here": sum(w in set(words) for w in TWEET_WORDS),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    table = measure()
    for env, row in table.items():
        print(f"{env}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)


if __name__ == "__main__":
    main()
