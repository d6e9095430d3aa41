"""The CPU experiment of docs/results.md: BC vs AgentEvol vs ETO on held-out Maze tasks, over seeds.

For each seed it runs the demo (``examples/demo.py --seed S``: expert BC set of 64 training mazes, a small
random Llama, BC, one AgentEvol iteration over 160 mazes x 2 samples, evaluation on the 26 held-out
double-T starts), then one ETO iteration from that run's BC agent: the agent explores the 64 BC mazes
greedily, each failure is paired with the expert trajectory of the same maze, DPO against the frozen BC
agent, evaluation on the same test tasks.  Finally it prints and writes the table (mean and spread).

    python examples/cpu_experiment.py --seeds 0 1 2 --out runs/experiment

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

console = Console()


def run_seed(seed: int, out: Path, eto_learning_rate: float, eto_beta: float) -> dict[str, float]:
    demo = out / f"seed{seed}"
    subprocess.run([sys.executable, str(Path(__file__).with_name("demo.py")), "--out", str(demo),
                    "--seed", str(seed)], check=True)
    evol = json.loads((demo / "agentevol" / "summary.json").read_text())
    success = {("BC" if it["iteration"] == 0 else f"AgentEvol {it['iteration']}"): it["scores"]["maze"]["success"]
               for it in evol["iterations"]}
    eto = run_eto(ETOConfig(
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
    ))
    for it in eto["iterations"]:
        if it["iteration"] > 0:
            success[f"ETO {it['iteration']}"] = it["scores"]["maze"]["success"]
    return success


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=Path("runs/experiment"))
    parser.add_argument("--eto-learning-rate", type=float, default=1e-4)
    parser.add_argument("--eto-beta", type=float, default=0.1)
    args = parser.parse_args()

    results = {seed: run_seed(seed, args.out, args.eto_learning_rate, args.eto_beta) for seed in args.seeds}
    stages = list(dict.fromkeys(stage for per_seed in results.values() for stage in per_seed))
    table = Table(title="held-out Maze (26 double-T starts): success rate")
    for column in ("stage", *[f"seed {s}" for s in args.seeds], "mean", "spread (max-min)"):
        table.add_column(column, justify="right")
    rows = []
    for stage in stages:
        values = [results[s][stage] for s in args.seeds if stage in results[s]]
        row = {"stage": stage, "per_seed": values, "mean": statistics.mean(values),
               "spread": max(values) - min(values)}
        rows.append(row)
        table.add_row(stage, *[f"{v:.1%}" for v in values], f"{row['mean']:.1%}", f"{row['spread']:.1%}")
    console.print(table)
    (args.out / "results.json").write_text(json.dumps({"seeds": args.seeds, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
