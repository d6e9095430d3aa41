"""Can a model read? Greedy replies of a model to task-reading walks in held-out BabyAI GoTo tasks.

The walks are ``agentenv.data.walks --kind task_reading`` logs: every reply restates the mission's
goal line and then the observation it answers.  The probe feeds a model each walk up to one of its replies
and checks whether the model's own reply restates the goal's object ("go to the blue ball") and the
observation's "You see ..." line.  A pretrained LLM does both; it tells whether the reading pretraining of
a random-weight model has taught it to copy (research/results.md).

    python research/probes/babyai_reading_probe.py runs/reader/reader_model --plan runs/reader/plan.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import torch
from babyai_thought_fidelity import MISSION  # beside this file
from transformers import AutoModelForCausalLM, AutoTokenizer

from agentenv.data.walks import random_walks

YOU_SEE = re.compile(r"You see [^\n]*")


def probe(model_dir: Path, tasks: list[int], steps: int = 3, seed: int = 5) -> dict[str, float]:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    replies = goal_copied = view_copied = 0
    for walk in random_walks("babyai", tasks, steps, seed, kind="task_reading"):
        messages = [
            {"role": "user" if t.role == "human" else "assistant", "content": t.value}
            for t in walk.conversations
        ]
        goal = MISSION.search(messages[2]["content"]).group(1)
        for k in range(3, len(messages), 2):  # messages[k] is a reply; the model writes its own instead
            ids = tokenizer.apply_chat_template(messages[:k], add_generation_prompt=True, return_tensors="pt")
            ids = ids if isinstance(ids, torch.Tensor) else ids["input_ids"]
            with torch.no_grad():
                out = model.generate(ids, max_new_tokens=60, do_sample=False)
            text = tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
            replies += 1
            goal_copied += f"go to the {goal}" in text
            view_copied += YOU_SEE.search(messages[k - 1]["content"]).group(0) in text
    return {
        "replies": replies,
        "goal_copied": goal_copied / max(replies, 1),
        "view_copied": view_copied / max(replies, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--plan", type=Path, required=True, help="a BabyAI demo's plan.json")
    parser.add_argument("--tasks", type=int, default=20, help="walks in the first N unseen seeds")
    args = parser.parse_args()
    tasks = json.loads(args.plan.read_text())["held_out"]["unseen_seeds"][: args.tasks]
    for model_dir in args.models:
        p = probe(model_dir, tasks)
        print(
            f"{model_dir}: {p['replies']} replies, goal copied {p['goal_copied']:.0%}, "
            f"'You see' line copied {p['view_copied']:.0%}"
        )


if __name__ == "__main__":
    main()
