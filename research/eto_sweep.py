"""Choose the experiment's ETO settings on validation tasks, never on the held-out ones.

For one seed folder of ``research/cpu_experiment.py`` (its BC agent must exist), every setting runs one ETO
iteration from the BC agent and is scored on validation tasks: the first ``--tasks`` training tasks of the
plan that neither BC, exploration nor a held-out set uses (:func:`validation_tasks`).  The BC agent is
scored there once (``<out>/bc_validation.jsonl``); settings that explore alike share their episodes.
``<out>/results.json`` holds this invocation's rows, ``<out>/all_results.json`` every setting's so far.

    python research/eto_sweep.py runs/babyai_reader/seed0 \\
        --setting lr=1e-5 tasks=explore --setting lr=1e-4 nll=1 tasks=explore

A plan whose BC set takes every training task leaves none for validation: ``--validation INDICES`` names
the tasks instead (e.g. BabyAI seeds past the train split, ``60404:68404:40``).  One sweep folder keeps one
validation set (``<out>/validation.json``), so every row in it is scored on the same tasks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from cpu_experiment import (  # examples/, beside this file
    ETOSettings,
    copy_episodes,
    eto_config,
    expert_data,
    success_on,
)
from rich.console import Console
from rich.table import Table

from agentenv.controller.commands import parse_indices
from agentenv.data.trajectory import write_json
from agentenv.trainer.config_args import field_defaults
from agentenv.trainer.eto import ETOConfig, run_eto

console = Console()
KEYS = {
    "lr": "learning_rate",
    "beta": "beta",
    "k": "samples",
    "t": "temperature",
    "nll": "nll_weight",
    "it": "iterations",
}
#: per-iteration lists, comma-separated: betas=0,0.1 lrs=1e-3,1e-5
LIST_KEYS = {"betas": "iteration_betas", "lrs": "iteration_learning_rates"}
#: settings taken as text, under ETOSettings' own field names
TEXT_KEYS = ("tasks", "cut", "by", "against", "loss", "span")


def parse_setting(words: list[str]) -> ETOSettings:
    """``lr=1e-4 nll=1 tasks=explore cut=first_difference by=success against=own_best loss=ipo span=action``
    -> ETOSettings (``beta``, ``k``, ``t``, ``it``, and per iteration ``betas=0,0.1 lrs=1e-3,1e-5`` too)."""
    values = {}
    for word in words:
        key, _, value = word.partition("=")
        if key not in (*KEYS, *LIST_KEYS, *TEXT_KEYS):
            raise ValueError(f"unknown setting {key!r}: use {', '.join([*KEYS, *LIST_KEYS, *TEXT_KEYS])}")
        try:
            if key in TEXT_KEYS:
                values[key] = value
            elif key in KEYS:
                values[KEYS[key]] = int(value) if key in ("k", "it") else float(value)
            else:
                values[LIST_KEYS[key]] = tuple(float(v) for v in value.split(","))
        except ValueError:
            raise ValueError(f"{word!r}: {value!r} is not a number") from None
    return ETOSettings(**values)


def plan_tasks(plan: dict) -> set[int]:
    """The tasks a plan trains on, explores or holds out."""
    return set(plan["explore"]) | set(plan["bc"]) | {i for ids in plan["held_out"].values() for i in ids}


def validation_tasks(plan: dict, n: int) -> list[int]:
    """The first ``n`` training tasks of the plan that neither BC nor exploration uses (nor any held-out set)."""
    used = plan_tasks(plan)
    return [i for i in plan["walks"] if i not in used][:n]


def sweep_rows(out: Path) -> list[dict]:
    """One row per setting folder and ETO iteration under the sweep folder ``out``, from every run so far."""
    rows = []
    for run in sorted(p for p in out.iterdir() if (p / "summary.json").exists()):
        # runs made before a setting existed ran at its default, which their run_config.json leaves out
        cfg = field_defaults(ETOConfig) | json.loads((run / "run_config.json").read_text())
        for it in json.loads((run / "summary.json").read_text())["iterations"][1:]:
            trained = json.loads((run / f"iter_{it['iteration']}" / "stages.json").read_text())["trained"]
            rows.append(
                {
                    "folder": run.name,
                    "iteration": it["iteration"],
                    "learning_rate": trained.get("learning_rate", cfg["learning_rate"]),
                    "beta": trained.get("beta", cfg["beta"]),
                    "nll_weight": cfg["nll_weight"],
                    "pair_cut": cfg["pair_cut"],
                    "pair_by": cfg["pair_by"],
                    "pair_with": cfg["pair_with"],
                    "loss_type": cfg["loss_type"],
                    "preference_span": cfg["preference_span"],
                    "explore_tasks": len(cfg["explore_tasks"]),
                    "samples": cfg["samples_per_instruction"],
                    "temperature": cfg["explore_temperature"],
                    "pairs": it.get("pairs", 0),
                    "validation_success": it["scores"][cfg["envs"][0]]["success"],
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("demo", type=Path, help="a seed folder of cpu_experiment.py (demo.py --out)")
    parser.add_argument("--setting", nargs="+", action="append", required=True, help="e.g. lr=1e-4 nll=1")
    parser.add_argument("--tasks", type=int, default=100, help="validation tasks")
    parser.add_argument(
        "--validation", type=parse_indices, metavar="INDICES", help="validation tasks by index, instead of --tasks"
    )
    args = parser.parse_args()
    settings = []
    for words in args.setting:  # every setting is checked before any of them runs
        try:
            settings.append(parse_setting(words))
        except ValueError as error:
            parser.error(f"--setting {' '.join(words)}: {error}")

    plan = json.loads((args.demo / "plan.json").read_text())
    seed = json.loads((args.demo / "agentevol" / "run_config.json").read_text())["seed"]
    validation = args.validation or validation_tasks(plan, args.tasks)
    if not validation:
        parser.error(f"{args.demo}: the plan leaves no training task for validation; name them with --validation")
    if clash := set(validation) & plan_tasks(plan):
        parser.error(f"--validation: tasks {sorted(clash)[:5]} are BC, explored or held-out tasks of the plan")
    out = args.demo / "eto_sweep"
    chosen = out / "validation.json"
    if chosen.exists() and json.loads(chosen.read_text()) != validation:
        parser.error(f"{out} was swept on other validation tasks ({chosen}); use another seed folder")
    write_json(chosen, validation)
    bc = out / "bc_validation.jsonl"
    rows = [("BC", "—", success_on(args.demo / "agentevol" / "iter_0" / "model", plan, validation, bc, seed))]
    for eto in settings:
        cfg = dataclasses.replace(
            eto_config(args.demo, plan, seed, eto, expert_data(args.demo, plan, eto.tasks)),
            output_dir=str(out / eto.folder()), eval_tasks=validation
        )
        copy_episodes(bc, out / eto.folder() / "iter_0" / "eval.jsonl")  # the BC agent's, played above
        explored = out / f"explore_{eto.tasks}_k{eto.samples}_t{eto.temperature:g}.jsonl"
        first = out / eto.folder() / "iter_1" / "explore.jsonl"
        copy_episodes(explored, first)  # settings that explore alike share their episodes
        summary = run_eto(cfg)
        copy_episodes(first, explored)
        last = summary["iterations"][-1]
        pairs = last.get("pairs", 0)
        rows.append((eto.folder(), str(pairs), last["scores"][plan["env"]]["success"]))

    table = Table(title=f"ETO settings on {len(validation)} validation tasks ({args.demo})")
    for column in ("setting", "pairs", "validation success"):
        table.add_column(column, justify="right")
    for name, pairs, success in rows:
        table.add_row(name, pairs, f"{success:.1%}")
    console.print(table)
    write_json(out / "results.json", [dict(zip(("setting", "pairs", "success"), r, strict=True)) for r in rows])
    every = {"bc_validation_success": rows[0][2], "validation_tasks": len(validation), "seed": seed}
    write_json(out / "all_results.json", every | {"settings": sweep_rows(out)})


if __name__ == "__main__":
    main()
