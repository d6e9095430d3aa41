"""Does step-wise DPO collapse because of the turns made with the goal out of sight?

Experiment 4 (research/results.md) blamed its step-wise pairs whose two replies are both turns ("turn left"
against "turn right" with the goal out of sight, where the expert chooses from a map the agent lacks).
This drops those pairs from an ETO iteration's step-wise pair file, runs the same DPO step from the same
BC agent on the rest, and scores it on the sweep's validation tasks, with the reading measures of
``thought_fidelity.py``.

    python research/probes/babyai_turn_pairs.py runs/babyai_reader/seed0 \\
        runs/babyai_reader/seed0/eto_sweep/eto_lr1e-05_beta0.1_explore_first_difference/iter_1/pairs.jsonl \\
        --learning-rates 1e-4 3e-5
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/: the experiment's drivers
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the demo they build on
from babyai_thought_fidelity import fidelity  # noqa: E402  (beside this file)
from cpu_experiment import success_on  # noqa: E402
from eto_sweep import validation_tasks  # noqa: E402

from agentenv.react import extract_action  # noqa: E402
from agentenv.trainer.dpo import DPOConfig, read_pairs, train_dpo, write_pairs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("demo", type=Path, help="a seed folder of research/cpu_experiment.py")
    parser.add_argument("pairs", type=Path, help="an ETO iteration's step-wise pairs.jsonl")
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[1e-4, 3e-5])
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--tasks", type=int, default=100, help="validation tasks")
    parser.add_argument("--out", type=Path, help="default: <demo>/turn_pairs")
    args = parser.parse_args()

    out = args.out or args.demo / "turn_pairs"
    pairs = list(read_pairs(args.pairs))
    kept = [
        p
        for p in pairs
        if not ("turn" in extract_action(p.chosen[-1].value) and "turn" in extract_action(p.rejected[-1].value))
    ]
    write_pairs(out / "pairs.jsonl", kept)
    print(f"{len(kept)} of {len(pairs)} pairs kept (turn against turn dropped)")

    plan = json.loads((args.demo / "plan.json").read_text())
    seed = json.loads((args.demo / "agentevol" / "run_config.json").read_text())["seed"]
    tasks = validation_tasks(plan, args.tasks)
    for lr in args.learning_rates:
        model = train_dpo(
            DPOConfig(
                model=str(args.demo / "agentevol" / "iter_0" / "model"),
                output_dir=str(out / f"dpo_lr{lr:g}"),
                pairs=[str(out / "pairs.jsonl")],
                learning_rate=lr,
                beta=args.beta,
                num_epochs=3,
                batch_size=4,
                max_length=1536,
                seed=seed,
                cpu=True,
            )
        )
        episodes = out / f"eval_lr{lr:g}.jsonl"
        success = success_on(model, plan, tasks, episodes, seed)
        reading = fidelity(episodes)
        print(f"lr {lr:g}: validation success {success:.1%}; {json.dumps(reading)}")


if __name__ == "__main__":
    main()
