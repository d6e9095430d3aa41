"""The CPU experiment of docs/results.md: BC vs AgentEvol vs ETO on held-out Maze tasks, over seeds.

For each seed it runs the demo (``examples/demo.py --seed S``: expert BC set of 64 training mazes, a small
random Llama, BC, one AgentEvol iteration over 160 mazes x 2 samples, evaluation on the 26 held-out
double-T starts), then one ETO iteration from that run's BC agent: the agent explores the 64 BC mazes
greedily, each failure is paired with the expert trajectory of the same maze, DPO against the frozen BC
agent, evaluation on the same test tasks.  Finally it prints and writes the table (mean and spread).

    python examples/cpu_experiment.py --seeds 0 1 2 --out runs/experiment
    python examples/cpu_experiment.py --out runs/experiment_big --hidden 256 --layers 4   # demo.py options

Reruns resume: finished seeds and stages are kept.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agentenv.trainer.eto import ETOConfig, run_eto
from agentenv.trainer.rollouts import (
    EnvSettings,
    close_sources,
    open_sources,
    run_until_complete,
    scores,
    split_indices,
)

console = Console()
#: the held-out test splits every stage is scored on: the double-T maze (AgentGym's) and in-distribution mazes
SPLITS = ("test", "test_procedural")


def success_on(model: Path, split: str, out: Path, seed: int) -> float:
    """Greedy success rate of ``model`` on a Maze split (episodes in ``out``; a rerun resumes them)."""
    cfg = EnvSettings(envs=["maze"], local=True, max_new_tokens=64, concurrency=50)
    sources = open_sources(cfg)
    try:
        tasks = {"maze": split_indices(sources["maze"], split)}
        report = run_until_complete(cfg, model, sources, tasks, out, 1, 0.0, seed)
        return scores(report)["maze"]["success"]
    finally:
        close_sources(sources)


def run_seed(
    seed: int, out: Path, eto_learning_rate: float, eto_beta: float, demo_args: list[str]
) -> dict[str, dict[str, float]]:
    """``{split: {stage: success}}`` for one seed."""
    demo = out / f"seed{seed}"
    subprocess.run(
        [sys.executable, str(Path(__file__).with_name("demo.py")), "--out", str(demo), "--seed", str(seed)]
        + demo_args,
        check=True,
    )
    evol = json.loads((demo / "agentevol" / "summary.json").read_text())
    models = {
        ("BC" if it["iteration"] == 0 else f"AgentEvol {it['iteration']}"): Path(it["model"])
        for it in evol["iterations"]
    }
    eto = run_eto(
        ETOConfig(
            model=str(demo / "agentevol" / "iter_0" / "model"),
            expert_data=[str(demo / "maze_bc.jsonl")],
            output_dir=str(demo / "eto"),
            envs=["maze"],
            local=True,
            iterations=1,
            explore_split="train",
            explore_limit=64,
            eval_split="test",
            learning_rate=eto_learning_rate,
            beta=eto_beta,
            num_epochs=3,
            batch_size=4,
            max_length=1536,
            max_new_tokens=64,
            seed=seed,
            cpu=True,
        )
    )
    models |= {f"ETO {it['iteration']}": Path(it["model"]) for it in eto["iterations"] if it["iteration"] > 0}
    # the model folder sits in its iteration folder (iter_m/model): episodes go beside the run's own eval.jsonl
    return {
        split: {
            stage: success_on(model, split, model.parent / f"eval_{split}.jsonl", seed)
            for stage, model in models.items()
        }
        for split in SPLITS
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=Path("runs/experiment"))
    parser.add_argument("--eto-learning-rate", type=float, default=1e-4)
    parser.add_argument("--eto-beta", type=float, default=0.1)
    # anything else goes to demo.py, e.g. --hidden 256 --layers 4 for a bigger base model
    args, demo_args = parser.parse_known_args()

    results = {
        seed: run_seed(seed, args.out, args.eto_learning_rate, args.eto_beta, demo_args)
        for seed in args.seeds
    }
    tables = {}
    for split in SPLITS:
        per_seed = {seed: results[seed][split] for seed in args.seeds}
        stages = list(dict.fromkeys(stage for by_stage in per_seed.values() for stage in by_stage))
        table = Table(title=f"held-out Maze, split {split}: success rate")
        for column in ("stage", *[f"seed {s}" for s in args.seeds], "mean", "spread (max-min)"):
            table.add_column(column, justify="right")
        rows = []
        for stage in stages:
            values = [per_seed[s][stage] for s in args.seeds if stage in per_seed[s]]
            row = {
                "stage": stage,
                "per_seed": values,
                "mean": statistics.mean(values),
                "spread": max(values) - min(values),
            }
            rows.append(row)
            table.add_row(stage, *[f"{v:.1%}" for v in values], f"{row['mean']:.1%}", f"{row['spread']:.1%}")
        console.print(table)
        tables[split] = rows
    (args.out / "results.json").write_text(json.dumps({"seeds": args.seeds, "splits": tables}, indent=2))


if __name__ == "__main__":
    main()
