"""The CPU experiment of research/results.md: BC vs AgentEvol vs ETO on held-out tasks, over seeds.

For each seed it runs the demo (``examples/demo.py --seed S``: by default an expert BC set of 64 training
mazes, a small random Llama, BC, one AgentEvol iteration over 160 mazes x 2 samples), then one ETO
iteration from that run's BC agent: the agent explores the BC tasks (greedily, or ``--eto-samples K``
episodes at ``--eto-temperature T``), each failure is paired with the expert trajectory of the same task,
DPO against the frozen BC agent.  Every stage is then scored on every held-out set of the demo's
``plan.json`` (Maze: the double-T ``test`` and ``test_procedural``; BabyAI: unseen seeds of the chosen
levels and AgentGym's ``test`` tasks of them; Wordle: its 300 ``test`` words).  Finally it prints and
writes one table per held-out set (mean and spread).

    python research/cpu_experiment.py --seeds 0 1 2 --out runs/experiment
    python research/cpu_experiment.py --out runs/experiment_big --hidden 256 --layers 4   # demo.py options
    python research/cpu_experiment.py --out runs/wordle --env wordle
    python research/cpu_experiment.py --out runs/babyai --env babyai --max-rounds 10 --explore-tasks 256
    python research/cpu_experiment.py --out runs/babyai_reader --env babyai --max-rounds 10 \
        --explore-tasks 256 --base runs/reader/reader_model --eto-learning-rate 1e-5   # research/babyai_reader.sh
    ... --eto-tasks explore --eto-nll-weight 1     # ETO explores AgentEvol's wider set, with an NLL term
    ... --eto-learning-rate 1e-3 --eto-beta 0 ...  # the control: the NLL term alone (no preference)
    ... --held-out fresh=20404:60404:40            # also score every stage on these tasks

``--eto-*`` options pick ETO's settings (research/eto_sweep.py compares them on validation tasks); each
setting other than the defaults runs in its own folder (``ETOSettings.folder``).

Reruns resume: finished seeds and stages are kept.  The tables go to ``<out>/results_<ETO folder>.json``, one file
per ETO setting, so a control run into the same ``--out`` keeps the experiment's file.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # the demo this experiment repeats
from demo import PLANS, Plan  # noqa: E402
from demo import parse_args as parse_demo_args  # noqa: E402
from rich.console import Console
from rich.table import Table

from agentenv.controller import collect
from agentenv.controller.commands import parse_indices
from agentenv.controller.sources import LocalEnv
from agentenv.data.trajectory import write_json
from agentenv.processes import interrupt_on_sigterm, run_process_group
from agentenv.registry import env_class
from agentenv.trainer.dpo import LOSS_TYPES, PAIR_BY, PAIR_CUTS, PREFERENCE_SPANS, check_objective
from agentenv.trainer.eto import PAIR_WITH, ETOConfig, check_pair_with, run_eto
from agentenv.trainer.rollouts import (
    EnvSettings,
    close_sources,
    open_sources,
    run_until_complete,
    scores,
)

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo.py"
console = Console()
#: DPO settings for a 0.4M-parameter model (the paper's lr 1e-6 is for 7B ones)
ETO_LEARNING_RATE = 1e-4
ETO_BETA = 0.1
#: which of the plan's task sets ETO explores: the BC set, or AgentEvol's wider one
ETO_TASKS = ("bc", "explore")


def demo_plan(demo_args: list[str]) -> Plan:
    """The plan demo.py makes with these options (its ``plan.json`` is written only once it runs)."""
    options = parse_demo_args(demo_args)
    return PLANS[options.env](options)


def reply_tokens(plan: dict) -> int:
    """New tokens per reply for the plan's env (``demo.Plan.max_new_tokens``; plans written before it: 64)."""
    return plan.get("max_new_tokens", 64)


def success_on(model: Path, plan: dict, tasks: list[int], out: Path, seed: int) -> float:
    """Greedy success rate of ``model`` on ``tasks`` of the plan's env (episodes in ``out``; a rerun resumes)."""
    env = plan["env"]
    cfg = EnvSettings(
        envs=[env],
        local=True,
        max_rounds=plan["max_rounds"],
        max_new_tokens=reply_tokens(plan),
        concurrency=50,
    )
    sources = open_sources(cfg)
    try:
        report = run_until_complete(cfg, model, sources, {env: tasks}, out, 1, 0.0, seed)
        return scores(report)[env]["success"]
    finally:
        close_sources(sources)


@dataclass(frozen=True)
class ETOSettings:
    """The experiment's ETO: settings other than the defaults get their own folder (:meth:`folder`)."""

    learning_rate: float = ETO_LEARNING_RATE
    beta: float = ETO_BETA
    samples: int = 1  # explored episodes per task
    temperature: float = 0.0  # exploring temperature (0: greedy)
    nll_weight: float = 0.0  # RPO's NLL term on the expert (chosen) side; 0: pure DPO
    tasks: str = "bc"  # which plan tasks ETO explores: "bc", or "explore" (AgentEvol's wider set)
    cut: str = "trajectory"  # ETO's whole-trajectory pairs, or "first_difference" (step-wise pairs)
    by: str = "reward"  # a pair's winner: the higher reward (ETO), or "success" against failure
    against: str = "expert"  # each explored trajectory against the expert's (ETO), or the agent's "own_best"
    loss: str = "sigmoid"  # DPO's logistic loss, or "ipo" (squared, toward a margin of 1 / (2 beta))
    span: str = "turn"  # the preference on whole agent turns (ETO), or on their "action" lines only
    iterations: int = 1  # may grow on a rerun: the run resumes and adds iterations
    # per-iteration betas / learning rates (the last repeats; empty: beta / learning_rate throughout)
    iteration_betas: tuple[float, ...] = ()
    iteration_learning_rates: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.tasks not in ETO_TASKS or self.cut not in PAIR_CUTS or self.by not in PAIR_BY:
            raise ValueError(
                f"ETO settings: tasks must be one of {ETO_TASKS}, cut one of {PAIR_CUTS}, by one of {PAIR_BY}"
            )
        if self.samples < 1:
            raise ValueError(f"ETO settings: samples must be at least 1, not {self.samples}")
        check_pair_with(self.against, self.samples)
        for beta in self.iteration_betas or (self.beta,):
            check_objective(beta, self.nll_weight, self.loss, self.span)

    def folder(self) -> str:
        name = "eto"
        if (self.learning_rate, self.beta) != (ETO_LEARNING_RATE, ETO_BETA):
            name += f"_lr{self.learning_rate:g}_beta{self.beta:g}"
        if (self.samples, self.temperature) != (1, 0.0):  # explored by sampling rather than greedily
            name += f"_k{self.samples}_t{self.temperature:g}"
        if self.nll_weight:
            name += f"_nll{self.nll_weight:g}"
        if self.tasks != "bc":
            name += f"_{self.tasks}"
        if self.cut != "trajectory":
            name += f"_{self.cut}"
        if self.by != "reward":
            name += f"_by_{self.by}"
        if self.against != "expert":
            name += f"_against_{self.against}"
        if self.loss != "sigmoid":
            name += f"_{self.loss}"
        if self.span != "turn":
            name += f"_{self.span}s"
        if self.iteration_betas:
            name += "_betas" + "-".join(f"{b:g}" for b in self.iteration_betas)
        if self.iteration_learning_rates:
            name += "_lrs" + "-".join(f"{lr:g}" for lr in self.iteration_learning_rates)
        return name


def expert_data(demo: Path, plan: dict, tasks: str) -> Path:
    """The expert trajectories of the plan's ``tasks`` set: the demo's BC set, or collected here (a rerun
    finds them collected: the collector skips finished tasks)."""
    env = plan["env"]
    if tasks == "bc":
        return demo / f"{env}_bc.jsonl"
    path = demo / f"{env}_{tasks}_expert.jsonl"
    with LocalEnv(env_class(env)) as source:
        collect(
            env, [], plan[tasks], path, sources={env: source}, max_rounds=plan["max_rounds"], print_table=False
        )
    return path


def eto_config(demo: Path, plan: dict, seed: int, eto: ETOSettings, experts: Path) -> ETOConfig:
    """ETO from the seed's BC agent (AgentEvol's iteration 0) with the expert trajectories ``experts`` of
    the tasks it explores (:func:`expert_data`), scored on the plan's first held-out set."""
    return ETOConfig(
        model=str(demo / "agentevol" / "iter_0" / "model"),
        expert_data=[str(experts)],
        output_dir=str(demo / eto.folder()),
        envs=[plan["env"]],
        local=True,
        max_rounds=plan["max_rounds"],
        iterations=eto.iterations,
        iteration_betas=list(eto.iteration_betas),
        iteration_learning_rates=list(eto.iteration_learning_rates),
        explore_tasks=plan[eto.tasks],
        samples_per_instruction=eto.samples,
        explore_temperature=eto.temperature,
        eval_tasks=next(iter(plan["held_out"].values())),
        learning_rate=eto.learning_rate,
        beta=eto.beta,
        nll_weight=eto.nll_weight,
        pair_cut=eto.cut,
        pair_by=eto.by,
        pair_with=eto.against,
        loss_type=eto.loss,
        preference_span=eto.span,
        num_epochs=3,
        batch_size=4,
        max_length=1536,
        max_new_tokens=reply_tokens(plan),
        seed=seed,
        cpu=True,
    )


def copy_episodes(episodes: Path, to: Path) -> None:
    """Start an episodes file (``to``, with its ``.meta.json``) from episodes already played with the same
    agent and settings; the evaluator then resumes it and plays only what is missing.  Never overwrites."""
    if to.exists() or not episodes.exists():
        return
    to.parent.mkdir(parents=True, exist_ok=True)
    meta = episodes.with_suffix(".meta.json")  # the evaluator's name for it
    if meta.exists():
        shutil.copy(meta, to.with_suffix(".meta.json"))
    shutil.copy(episodes, to)


def run_eto_from_bc(demo: Path, cfg: ETOConfig) -> dict:
    """:func:`run_eto`, whose iteration 0 (the BC agent, greedy) takes the episodes AgentEvol's iteration 0
    already played on the same tasks instead of playing them again."""
    if json.loads((demo / "agentevol" / "run_config.json").read_text())["eval_tasks"] == cfg.eval_tasks:
        copy_episodes(
            demo / "agentevol" / "iter_0" / "eval.jsonl", Path(cfg.output_dir) / "iter_0" / "eval.jsonl"
        )
    return run_eto(cfg)


def run_seed(
    seed: int, out: Path, eto: ETOSettings, demo_args: list[str], extra_held_out: dict[str, list[int]]
) -> dict[str, dict[str, float]]:
    """``{split: {stage: success}}`` for one seed, over the plan's held-out sets and ``extra_held_out``."""
    demo = out / f"seed{seed}"
    command = [sys.executable, str(DEMO), "--out", str(demo), "--seed", str(seed)]
    if status := run_process_group(command + demo_args):  # interrupted, it stops the demo and its servers
        raise SystemExit(f"seed {seed}: demo.py failed (exit status {status})")
    plan = json.loads((demo / "plan.json").read_text())
    evol = json.loads((demo / "agentevol" / "summary.json").read_text())
    models = {
        ("BC" if it["iteration"] == 0 else f"AgentEvol {it['iteration']}"): Path(it["model"])
        for it in evol["iterations"]
    }
    experts = expert_data(demo, plan, eto.tasks)
    eto_run = run_eto_from_bc(demo, eto_config(demo, plan, seed, eto, experts))
    models |= {
        f"ETO {it['iteration']}": Path(it["model"]) for it in eto_run["iterations"] if it["iteration"] > 0
    }
    # episodes go beside each model (iter_m/model); the first held-out set is the one AgentEvol and ETO
    # already scored every iteration on, so its episodes are the run's own iter_m/eval.jsonl
    first = next(iter(plan["held_out"]))
    return {
        name: {
            stage: success_on(
                model,
                plan,
                tasks,
                model.parent / ("eval.jsonl" if name == first else f"eval_{name}.jsonl"),
                seed,
            )
            for stage, model in models.items()
        }
        for name, tasks in (plan["held_out"] | extra_held_out).items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=Path("runs/experiment"))
    parser.add_argument("--eto-learning-rate", type=float, default=ETO_LEARNING_RATE)
    parser.add_argument("--eto-beta", type=float, default=ETO_BETA)
    parser.add_argument("--eto-samples", type=int, default=1, help="ETO: explored episodes per task")
    parser.add_argument("--eto-temperature", type=float, default=0.0, help="ETO: exploring temperature")
    parser.add_argument("--eto-nll-weight", type=float, default=0.0, help="ETO: RPO's NLL term (0: pure DPO)")
    parser.add_argument(
        "--eto-tasks",
        choices=ETO_TASKS,
        default="bc",
        help="ETO explores the BC tasks, or AgentEvol's wider set (their expert trajectories are collected)",
    )
    parser.add_argument("--eto-iterations", type=int, default=1)
    parser.add_argument(
        "--eto-iteration-betas",
        type=float,
        nargs="+",
        default=[],
        help="ETO: beta per iteration (the last repeats)",
    )
    parser.add_argument(
        "--eto-iteration-learning-rates",
        type=float,
        nargs="+",
        default=[],
        help="ETO: learning rate per iteration (the last repeats)",
    )
    parser.add_argument(
        "--eto-by", choices=PAIR_BY, default="reward", help="ETO pairs: the higher reward wins, or success"
    )
    parser.add_argument(
        "--eto-cut",
        choices=PAIR_CUTS,
        default="trajectory",
        help="ETO pairs: whole trajectories or step-wise",
    )
    parser.add_argument(
        "--eto-against",
        choices=PAIR_WITH,
        default="expert",
        help="ETO pairs: each explored trajectory against the expert's, or against the agent's own best "
        "(needs --eto-samples >= 2)",
    )
    parser.add_argument(
        "--eto-loss",
        choices=LOSS_TYPES,
        default="sigmoid",
        help="ETO: DPO's logistic loss, or IPO's squared one",
    )
    parser.add_argument(
        "--eto-span",
        choices=PREFERENCE_SPANS,
        default="turn",
        help="ETO: the preference on whole agent turns, or on their action lines only",
    )
    parser.add_argument(
        "--held-out",
        action="append",
        default=[],
        metavar="NAME=INDICES",
        help="also score every stage on these tasks (a comma list of indices and START:STOP[:STEP] ranges); "
        "repeatable",
    )
    # anything else goes to demo.py, e.g. --hidden 256 --layers 4 for a bigger base model
    args, demo_args = parser.parse_known_args()

    try:
        eto = ETOSettings(
            learning_rate=args.eto_learning_rate,
            beta=args.eto_beta,
            samples=args.eto_samples,
            temperature=args.eto_temperature,
            nll_weight=args.eto_nll_weight,
            tasks=args.eto_tasks,
            iterations=args.eto_iterations,
            iteration_betas=tuple(args.eto_iteration_betas),
            iteration_learning_rates=tuple(args.eto_iteration_learning_rates),
            cut=args.eto_cut,
            by=args.eto_by,
            against=args.eto_against,
            loss=args.eto_loss,
            span=args.eto_span,
        )
    except ValueError as error:  # settings that cannot train
        parser.error(str(error))
    extra_held_out = {}
    for item in args.held_out:
        name, _, indices = item.partition("=")
        try:
            extra_held_out[name] = parse_indices(indices)
        except argparse.ArgumentTypeError as error:
            parser.error(f"--held-out {item!r}: {error}")
        if not name:  # "=3,4"
            parser.error(f"--held-out {item!r}: use NAME=INDICES")
    # demo.py's options are checked, and its held-out set names known, before any seed runs
    plan = demo_plan(demo_args)
    if clash := set(extra_held_out) & set(plan.held_out):
        parser.error(f"--held-out {sorted(clash)}: the plan already has a held-out set of that name")
    interrupt_on_sigterm()  # a SIGTERM stops the running seed's demo too
    results = {seed: run_seed(seed, args.out, eto, demo_args, extra_held_out) for seed in args.seeds}
    tables = {}
    for split in results[args.seeds[0]]:
        per_seed = {seed: results[seed][split] for seed in args.seeds}
        stages = list(dict.fromkeys(stage for by_stage in per_seed.values() for stage in by_stage))
        table = Table(title=f"held-out {plan.env} tasks, {split}: success rate")
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
    # one file per ETO setting: the experiment and its control share the seeds' BC runs and this folder
    out_file = args.out / f"results_{eto.folder()}.json"
    write_json(out_file, {"env": plan.env, "seeds": args.seeds, "eto": eto.folder(), "splits": tables})
    console.print(f"results: {out_file}")


if __name__ == "__main__":
    main()
