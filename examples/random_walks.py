"""Random-walk logs of an environment, as a pretraining corpus that teaches no policy.

The moves are drawn uniformly from ``available_actions()``.  Three kinds of log:

- ``dynamics`` (default): loss on the observations, none on the moves — the model learns what an
  observation looks like and what a move does to it;
- ``reading``: every reply restates the observation it answers, then names the random move, in the ReAct
  format ("Thought:\n<observation> I take a random step: move up.\n\nAction:\nmove up"), loss on the
  replies — the model learns to read its observation into its thought, which a pretrained LLM can already
  do and a random-weight one cannot;
- ``task_reading``: as ``reading``, and every reply first restates the task — the first line of the
  walk's first observation (BabyAI's "Your goal: go to the red ball") — so the model learns to carry the
  goal from the start of the episode into every thought.

docs/results.md uses them to give a random-weight model that prior competence before behavioural cloning.

    python examples/random_walks.py --env maze --split train --steps 15 --kind reading --out runs/walks.jsonl
    python examples/random_walks.py --env babyai --kind task_reading --sample 3000 --steps 6 \
        --exclude runs/babyai/seed0/plan.json --out runs/babyai_walks.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable
from pathlib import Path

from agentenv.data.trajectory import Trajectory, Turn, write_trajectories
from agentenv.registry import env_class, installed_envs

KINDS = ("dynamics", "reading", "task_reading")


def random_walks(
    env_name: str, indices: Iterable[int], steps: int, seed: int = 0, kind: str = "dynamics"
) -> list[Trajectory]:
    """One walk of at most ``steps`` uniformly random available actions per task, in AgentTraj form."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    reading = kind in ("reading", "task_reading")
    cls = env_class(env_name)
    rng = random.Random(seed)
    walks = []
    env = cls()  # one env, reset per task: a JVM-backed env (SciWorld) starts once, not per walk
    try:
        for idx in indices:
            walk = Trajectory.start(env_name, idx, cls.instruction, source=f"random_walk_{kind}")
            observation = env.reset(idx)
            task = observation.splitlines()[0] + " " if kind == "task_reading" else ""
            for _ in range(steps):
                walk.conversations.append(Turn("human", observation, loss=not reading))
                action = rng.choice(env.available_actions())
                reply = f"Thought:\n{task}{observation} I take a random step: {action}.\n\nAction:\n{action}"
                walk.conversations.append(
                    Turn("gpt", reply if reading else f"Action:\n{action}", loss=reading)
                )
                result = env.step(action)
                observation = result.observation
                if result.done:
                    break
            if not reading:  # the last observation is the last thing a dynamics log predicts
                walk.conversations.append(Turn("human", observation, loss=True))
            walks.append(walk)
    finally:
        env.close()
    return walks


def walk_tasks(
    env_name: str, split: str = "train", sample: int = 0, seed: int = 0, held_out: Iterable[int] = ()
) -> list[int]:
    """The tasks of ``split``'s index range that are not ``held_out``; ``sample`` > 0 draws that many of them
    (sorted).

    The whole range, also indices the split leaves out (BabyAI's train tasks that repeat a test task): the
    walks hold no policy, the plan's held-out tasks are excluded here, and the draw, hence the reader of
    docs/results.md, stays the one it was before the split left them out.
    """
    excluded = set(held_out)
    span = env_class(env_name).splits[split]
    tasks = [i for i in range(span.start, span.stop) if i not in excluded]
    if sample:
        tasks = sorted(random.Random(seed).sample(tasks, sample))
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="maze", choices=installed_envs())
    parser.add_argument("--split", default="train")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", choices=KINDS, default="dynamics")
    parser.add_argument("--sample", type=int, default=0, help="walk in this many random tasks of the split")
    parser.add_argument("--exclude", type=Path, help="a demo's plan.json: never walk in its held-out tasks")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.split not in env_class(args.env).splits:
        parser.error(f"--split: {args.env} has no split {args.split!r} (it has {', '.join(env_class(args.env).splits)})")
    held_out = []
    if args.exclude:
        held_out = [i for ids in json.loads(args.exclude.read_text())["held_out"].values() for i in ids]
    tasks = walk_tasks(args.env, args.split, args.sample, args.seed, held_out)
    walks = random_walks(args.env, tasks, args.steps, args.seed, args.kind)
    write_trajectories(args.out, walks)
    print(f"{len(walks)} walks -> {args.out}")


if __name__ == "__main__":
    main()
