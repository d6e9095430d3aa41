"""The whole AgentGym story on a CPU, in about seven minutes (the README's `make demo`).

1. start the Maze + Wordle server (``agentenv up lmrlgym``) on free loopback ports;
2. evaluate the experts on held-out test tasks;
3. collect expert trajectories on a *limited* set of training mazes (the BC set);
4. build a small Llama (random weights, tokenizer trained on the env's text) as the base model;
5. AgentEvol: behavioural cloning on the BC set, then iterations of exploring a *wider* set of training
   mazes, keeping the rewarded trajectories, retraining from the base model, evaluating on the held-out
   double-T maze after every stage;
6. print the table and save the curve.

Everything lands under ``runs/demo`` (``--out``); rerunning resumes where a killed run stopped.
Smaller or bigger: ``--bc-tasks``, ``--explore-tasks``, ``--iterations``, ``--hidden``, ``--layers``;
``--base FOLDER`` starts from a model of your own instead of the random Llama;
``--reading-walks N`` first teaches the random base to read its observations (docs/results.md).
``--env babyai`` tells the same story on BabyAI levels (``--levels``, default GoToObjS6 and
GoToLocalS8N7): BC and exploration on their first training seeds, held-out scores on their last
``--test-tasks`` training seeds, which nothing trains on.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from random_walks import KINDS, random_walks  # examples/, beside this file
from rich.console import Console
from rich.table import Table

from agentenv.controller import ExpertAgent, collect, evaluate
from agentenv.controller.evaluator import EvalTask
from agentenv.data.trajectory import read_trajectories, write_trajectories
from agentenv.envs.registry import env_class
from agentenv.models import random_llama, train_tokenizer
from agentenv.server.launcher import ServerProcesses
from agentenv.server.testing import free_port
from agentenv.trainer.agentevol import AgentEvolConfig, run_agentevol
from agentenv.trainer.bc import BCConfig
from agentenv.trainer.launch import run_training

console = Console()


@dataclass
class Plan:
    """Which tasks each stage uses (written to ``plan.json`` so that other scripts score the same ones)."""

    env: str
    package: str  # the server package that serves it (``agentenv up PACKAGE``)
    bc: list[int]  # the BC set: training tasks the expert demonstrates
    explore: list[int]  # the wider set AgentEvol explores
    held_out: dict[str, list[int]]  # named held-out task sets; the first is scored after every stage
    expert_check: dict[str, list[int]]  # env -> tasks the experts are evaluated on (stage 2)
    walks: list[int]  # training tasks the --reading-walks pretraining may walk in
    max_rounds: int = 0


def maze_plan(args: argparse.Namespace) -> Plan:
    """Maze: BC on the first training mazes, explore more of them, test on the double-T maze (AgentGym's)
    and on 200 procedural mazes held out from training."""
    maze = env_class("maze")
    train = list(maze.splits["train"])
    test = list(maze.splits["test"])
    return Plan(
        env="maze",
        package="lmrlgym",
        bc=train[: args.bc_tasks],
        explore=train[: args.explore_tasks],
        held_out={"test": test, "test_procedural": list(maze.splits["test_procedural"])},
        expert_check={"maze": test, "wordle": list(env_class("wordle").splits["test"])[:50]},
        walks=train,
        max_rounds=args.max_rounds,
    )


def babyai_plan(args: argparse.Namespace) -> Plan:
    """BabyAI, limited to ``--levels``: BC on the first training seeds, explore more, test on the last
    ``--test-tasks`` training seeds (never trained on) and on AgentGym's test tasks of those levels."""
    from agentenv_babyai.levels import level_of, short_name

    babyai = env_class("babyai")

    def of_levels(indices: range) -> list[int]:
        return [i for i in indices if short_name(level_of(i)[0]) in args.levels]

    train, test = of_levels(babyai.splits["train"]), of_levels(babyai.splits["test"])
    if not train:
        raise SystemExit(f"no BabyAI level is called {args.levels}")
    cut = len(train) - args.test_tasks  # the last --test-tasks seeds are held out
    seen, unseen = train[:cut], train[cut:]
    if max(args.bc_tasks, args.explore_tasks) > len(seen):
        raise SystemExit(f"{len(train)} training tasks: too few for these BC, explore and test sets")
    return Plan(
        env="babyai",
        package="babyai",
        bc=seen[: args.bc_tasks],
        explore=seen[: args.explore_tasks],
        held_out={"unseen_seeds": unseen, "test": test},
        expert_check={"babyai": unseen},
        walks=seen,
        max_rounds=args.max_rounds,
    )


PLANS = {"maze": maze_plan, "babyai": babyai_plan}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("runs/demo"))
    parser.add_argument("--env", choices=sorted(PLANS), default="maze", help="the env the agent learns")
    parser.add_argument(
        "--levels",
        nargs="+",
        default=["GoToObjS6", "GoToLocalS8N7"],
        help="babyai: the levels it learns (names without BabyAI- and -vN)",
    )
    parser.add_argument("--bc-tasks", type=int, default=64, help="training tasks in the BC set")
    parser.add_argument("--explore-tasks", type=int, default=160, help="training tasks AgentEvol explores")
    parser.add_argument("--test-tasks", type=int, default=200, help="babyai: held-out tasks (unseen seeds)")
    parser.add_argument("--samples", type=int, default=2, help="explored episodes per task (K)")
    parser.add_argument("--max-rounds", type=int, default=0, help="rounds per episode (0: the env's own)")
    parser.add_argument("--iterations", type=int, default=1, help="AgentEvol iterations (M)")
    parser.add_argument(
        "--base-only",
        action="store_true",
        help="stop once the base model is ready (the plan, the expert data and --reading-walks' model)",
    )
    parser.add_argument("--epochs", type=float, default=16.0)
    parser.add_argument(
        "--base",
        type=Path,
        help="start from this model folder (e.g. a pretrained one) instead of a new random Llama; "
        "--seed then varies only the data order and the sampling",
    )
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reading-walks",
        type=int,
        default=0,
        help="first teach the random base to read: train it on this many random-walk logs of training mazes "
        "whose replies restate the observation (examples/random_walks.py; no policy in them)",
    )
    parser.add_argument(
        "--reading-kind",
        choices=[kind for kind in KINDS if kind != "dynamics"],
        default="reading",
        help="task_reading: the walks' replies also restate the task (the goal) every turn",
    )
    return parser.parse_args()


def stage(title: str) -> float:
    console.rule(f"[bold]{title}")
    return time.perf_counter()


def base_model(folder: Path, env: str, corpus_files: list[Path], hidden: int, layers: int, seed: int) -> Path:
    """A random Llama whose tokenizer is trained on the env's instruction and the expert trajectories."""
    if (folder / "config.json").exists():
        return folder
    texts = [env_class(env).instruction]
    for path in corpus_files:
        texts += [turn.value for t in read_trajectories(path) for turn in t.conversations]
    tokenizer = train_tokenizer(texts, vocab_size=4096)
    return random_llama(folder, tokenizer, hidden=hidden, layers=layers, heads=4, seed=seed)


def reading_model(
    base: Path, out: Path, env: str, tasks: list[int], steps: int, seed: int, kind: str = "reading"
) -> Path:
    """``base`` trained for one epoch on random walks (``steps`` long) of ``tasks`` whose replies restate
    the observation (``kind``: see examples/random_walks.py)."""
    data = out / "reading_walks.jsonl"
    if not data.exists():
        tmp = data.with_suffix(".tmp")
        write_trajectories(tmp, random_walks(env, tasks, steps, seed, kind))
        tmp.replace(data)
    config = BCConfig(
        model=str(base),
        data=[str(data)],
        output_dir=str(out / "reading_model"),
        learning_rate=1e-3,
        num_epochs=1,
        batch_size=1,
        warmup_ratio=0.05,
        max_length=1536,
        seed=seed,
        cpu=True,
    )
    return run_training("bc", config)


def main() -> None:
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    plan = PLANS[args.env](args)
    (args.out / "plan.json").write_text(json.dumps(asdict(plan)))
    test_name, test = next(iter(plan.held_out.items()))

    t = stage("1. servers up")
    with ServerProcesses([plan.package], ports={plan.package: free_port()}) as urls:
        url = urls[plan.package]
        console.print(f"{plan.package} server at {url}  [{time.perf_counter() - t:.1f} s]")

        t = stage("2. experts on held-out test tasks")
        tasks = [EvalTask(env, [url], i) for env, indices in plan.expert_check.items() for i in indices]
        expert = evaluate(
            ExpertAgent(),
            tasks,
            args.out / "expert_eval.jsonl",
            concurrency=16,
            max_rounds=plan.max_rounds or None,
        )
        console.print(f"[{time.perf_counter() - t:.1f} s]")

        t = stage(f"3. expert trajectories on {len(plan.bc)} training tasks (the BC set)")
        bc_data = args.out / f"{plan.env}_bc.jsonl"
        collect(plan.env, [url], plan.bc, bc_data, concurrency=16)
        console.print(f"{bc_data}  [{time.perf_counter() - t:.1f} s]")

        if args.base:
            t = stage(f"4. base model: {args.base}")
            model = args.base
        else:
            t = stage(f"4. base model: random Llama, hidden {args.hidden}, {args.layers} layers")
            model = base_model(
                args.out / "base_model", plan.env, [bc_data], args.hidden, args.layers, args.seed
            )
        if args.reading_walks:
            console.print(f"teaching it to read: {args.reading_walks} random-walk logs")
            walks = plan.walks[: args.reading_walks]
            model = reading_model(
                model, args.out, plan.env, walks, plan.max_rounds or 15, args.seed, args.reading_kind
            )
        console.print(f"{model}  [{time.perf_counter() - t:.1f} s]")
        if args.base_only:
            return

        t = stage(
            f"5. AgentEvol: BC, then {args.iterations} iteration(s) exploring {len(plan.explore)} tasks, "
            f"scored on {len(test)} held-out tasks ({test_name})"
        )
        config = AgentEvolConfig(
            model=str(model),
            data=[str(bc_data)],
            output_dir=str(args.out / "agentevol"),
            envs=[plan.env],
            urls=[url],
            max_rounds=plan.max_rounds,
            iterations=args.iterations,
            explore_tasks=plan.explore,
            samples_per_instruction=args.samples,
            explore_temperature=0.7,
            eval_tasks=test,
            learning_rate=2e-3,
            num_epochs=args.epochs,
            batch_size=4,
            max_new_tokens=64,
            warmup_ratio=0.05,
            max_length=1536,
            seed=args.seed,
            cpu=True,
        )
        summary = run_agentevol(config)
        console.print(f"[{time.perf_counter() - t:.1f} s]")

    table = Table(title="AgentGym demo: success on held-out test tasks")
    for column, justify in (
        ("agent", "left"),
        ("env", "left"),
        ("tasks", "right"),
        ("success", "right"),
        ("mean score", "right"),
    ):
        table.add_column(column, justify=justify)
    for row in expert.rows:
        if row.task_type == "all" and row.env != "all":
            table.add_row("expert", row.env, str(row.n), f"{row.success:.0%}", f"{row.score:.2f}")
    for it in summary["iterations"]:
        name = "BC" if it["iteration"] == 0 else f"AgentEvol iteration {it['iteration']}"
        for env, row in (it.get("scores") or {}).items():
            if env != "all":
                table.add_row(name, env, str(row["n"]), f"{row['success']:.0%}", f"{row['score']:.2f}")
    console.print(table)
    console.print(
        f"curve: {args.out / 'agentevol' / 'curve.png'}   total {time.perf_counter() - started:.0f} s"
    )
    (args.out / "demo_summary.json").write_text(json.dumps(summary, indent=2, default=str))


if __name__ == "__main__":
    main()
