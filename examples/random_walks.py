"""Random-walk logs of an environment, as a pretraining corpus: loss on the observations, none on the moves.

Training a model on these teaches it the environment's dynamics (what an observation looks like, what a
move does to it) and no policy: the moves are drawn uniformly from ``available_actions()``.  docs/results.md
uses it to give a random-weight model some prior competence before behavioural cloning.

    python examples/random_walks.py --env maze --split train --steps 15 --out runs/maze_walks.jsonl
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterable
from pathlib import Path

from agentenv.data.trajectory import Trajectory, Turn, write_trajectories
from agentenv.envs.registry import env_class


def random_walks(env_name: str, indices: Iterable[int], steps: int, seed: int = 0) -> list[Trajectory]:
    """One walk of at most ``steps`` uniformly random available actions per task, in AgentTraj form."""
    cls = env_class(env_name)
    rng = random.Random(seed)
    walks = []
    for idx in indices:
        env = cls()
        walk = Trajectory.start(env_name, idx, cls.instruction, source="random_walk")
        walk.conversations.append(Turn("human", env.reset(idx), loss=True))
        for _ in range(steps):
            action = rng.choice(env.available_actions())
            result = env.step(action)
            walk.conversations += [
                Turn("gpt", f"Action:\n{action}", loss=False),
                Turn("human", result.observation, loss=True),
            ]
            if result.done:
                break
        env.close()
        walks.append(walk)
    return walks


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="maze")
    parser.add_argument("--split", default="train")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    walks = random_walks(args.env, env_class(args.env).splits[args.split], args.steps, args.seed)
    write_trajectories(args.out, walks)
    print(f"{len(walks)} walks -> {args.out}")


if __name__ == "__main__":
    main()
