"""The whole AgentGym story on a CPU: an agent that evolves past its behavioural clone.

The README's ``make demo`` runs ``python examples/demo.py --env babyai --max-rounds 10 --explore-tasks 256
--reader`` (about 15 minutes on 2 CPU cores):

1. start the BabyAI server (``agentenv up babyai``) on a free loopback port;
2. evaluate the expert on the held-out tasks: 200 unseen seeds of two GoTo levels (``--levels``, default
   GoToObjS6 and GoToLocalS8N7), which nothing trains or walks on;
3. collect expert trajectories on a *limited* set of their training seeds (the BC set, 64);
4. build a small Llama (random weights, tokenizer trained on the env's text) and, with ``--reader``, teach
   it to read first: task-reading random walks, no policy in them (:func:`reader_model`), standing in for
   the pretrained LLM a CPU cannot train;
5. AgentEvol: behavioural cloning on the BC set, then iterations of exploring a *wider* set of training
   seeds, keeping the successful trajectories, retraining from the base model, evaluating on the held-out
   seeds after every stage;
6. print the table and save the curve.

With no options it tells the same story on Maze (the Maze + Wordle server; BC on 64 training mazes,
exploring 160, scored on the double-T maze) from random weights, where AgentEvol does not beat BC
(research/results.md says why).  ``--env wordle`` does the same on Wordle (BC on 64 training words,
exploring 160, scored on AgentGym's 300 test words).  Everything lands under ``runs/demo`` (``--out``);
rerunning resumes where a killed run stopped.  Smaller or bigger: ``--bc-tasks``, ``--explore-tasks``,
``--iterations``, ``--hidden``, ``--layers``; ``--base FOLDER`` starts from a model of your own instead of
the random Llama; ``--reading-walks N`` is the reader's first stage alone.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agentenv.cli import whole_number
from agentenv.controller import ExpertAgent, collect, evaluate
from agentenv.controller.evaluator import EvalTask
from agentenv.data.trajectory import read_trajectories, write_json, write_trajectories
from agentenv.data.walks import KINDS, random_walks, walk_tasks
from agentenv.models import random_llama, train_tokenizer
from agentenv.processes import quiet_other_progress_bars
from agentenv.protocol import TOKEN_ENV_VAR
from agentenv.registry import env_class
from agentenv.server.launcher import ServerProcesses
from agentenv.testing import free_port
from agentenv.trainer.agentevol import AgentEvolConfig, run_agentevol
from agentenv.trainer.bc import BCConfig
from agentenv.trainer.launch import run_training
from agentenv.trainer.runs import check_run_config

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
    max_new_tokens: int = 64  # per reply: room for the expert's longest replies


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


def wordle_plan(args: argparse.Namespace) -> Plan:
    """Wordle: BC on the first training words, explore more of them, test on AgentGym's 300 test words
    (never trained on).  The expert's replies list candidate words: 38% of them pass 64 tokens."""
    wordle = env_class("wordle")
    train, test = list(wordle.splits["train"]), list(wordle.splits["test"])
    return Plan(
        env="wordle",
        package="lmrlgym",
        bc=train[: args.bc_tasks],
        explore=train[: args.explore_tasks],
        held_out={"test": test},
        expert_check={"wordle": test},
        walks=train,
        max_rounds=args.max_rounds,
        max_new_tokens=128,
    )


PLANS = {"maze": maze_plan, "babyai": babyai_plan, "wordle": wordle_plan}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The demo's options, from ``argv`` (default: the command line)."""
    parser = argparse.ArgumentParser(
        prog="demo.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("runs/demo"))
    parser.add_argument("--env", choices=sorted(PLANS), default="maze", help="the env the agent learns")
    parser.add_argument(
        "--levels",
        nargs="+",
        default=["GoToObjS6", "GoToLocalS8N7"],
        help="babyai: the levels it learns (names without BabyAI- and -vN)",
    )
    parser.add_argument("--bc-tasks", type=positive, default=64, help="training tasks in the BC set")
    parser.add_argument("--explore-tasks", type=positive, default=160, help="training tasks AgentEvol explores")
    parser.add_argument("--test-tasks", type=positive, default=200, help="babyai: held-out tasks (unseen seeds)")
    parser.add_argument("--samples", type=positive, default=2, help="explored episodes per task (K)")
    parser.add_argument("--max-rounds", type=at_least_0, default=0, help="rounds per episode (0: the env's own)")
    parser.add_argument("--iterations", type=at_least_0, default=1, help="AgentEvol iterations (M)")
    parser.add_argument(
        "--plan-only",
        action="store_true",
        help="write the plan (which tasks each stage uses) to OUT/plan.json and stop, running nothing",
    )
    parser.add_argument(
        "--base-only",
        action="store_true",
        help="stop once the base model is ready (the plan, the expert data and the reading stages' model)",
    )
    parser.add_argument("--epochs", type=positive_float, default=16.0)
    parser.add_argument(
        "--base",
        type=Path,
        help="start from this model folder (e.g. a pretrained one) instead of a new random Llama; "
        "--seed then varies only the data order and the sampling",
    )
    parser.add_argument("--hidden", type=positive, default=128)
    parser.add_argument("--layers", type=positive, default=2)
    parser.add_argument("--seed", type=int, default=0)
    reading = parser.add_mutually_exclusive_group()
    reading.add_argument(
        "--reader",
        action="store_true",
        help="first teach the base to read and to carry its goal: the three stages of task-reading random "
        "walks of research/results.md's reader (make demo; about 7 minutes on 2 CPU cores)",
    )
    parser.add_argument(
        "--reader-walks",
        type=positive,
        nargs=2,
        default=[800, 3000],
        metavar=("N1", "N2"),
        help="--reader: walks in its first two stages' tasks and in its third stage's",
    )
    reading.add_argument(
        "--reading-walks",
        type=at_least_0,
        default=0,
        help="first teach the random base to read: train it on this many random-walk logs of training mazes "
        "whose replies restate the observation (agentenv.data.walks; no policy in them)",
    )
    parser.add_argument(
        "--reading-kind",
        choices=[kind for kind in KINDS if kind != "dynamics"],
        default="reading",
        help="task_reading: the walks' replies also restate the task (the goal) every turn",
    )
    args = parser.parse_args(argv)
    if args.reader and args.env != "babyai":
        parser.error("--reader is BabyAI's reader (3,000 walks over its 40 levels); use --reading-walks")
    if args.reading_walks and args.env == "wordle":
        parser.error("--reading-walks needs random moves; a Wordle guess is free text")
    if args.base is not None and not (args.base / "config.json").is_file():
        parser.error(f"--base {args.base}: not a Hugging Face model folder (no config.json)")
    if args.env == "babyai":
        from agentenv_babyai.levels import LEVELS, short_name

        known = {short_name(level) for level in LEVELS}
        if unknown := [name for name in args.levels if name not in known]:
            parser.error(f"--levels: no BabyAI level is called {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return args


positive, at_least_0 = whole_number(1), whole_number(0)


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def stage(title: str) -> float:
    console.rule(f"[bold]{title}")
    return time.perf_counter()


def base_model(folder: Path, env: str, corpus_files: list[Path], hidden: int, layers: int, seed: int) -> Path:
    """A random Llama whose tokenizer is trained on the env's instruction and the expert trajectories."""
    if folder.exists():
        return folder
    texts = [env_class(env).instruction]
    for path in corpus_files:
        texts += [turn.value for t in read_trajectories(path) for turn in t.conversations]
    tokenizer = train_tokenizer(texts, vocab_size=4096)
    tmp = folder.with_name(folder.name + ".tmp")  # renamed when whole: a kill mid-save leaves no half folder
    shutil.rmtree(tmp, ignore_errors=True)
    random_llama(tmp, tokenizer, hidden=hidden, layers=layers, heads=4, seed=seed)
    return tmp.rename(folder)


def train_on_walks(model: Path, data: Path, out: Path, learning_rate: float, epochs: int, seed: int) -> Path:
    """``model`` behaviour-cloned on random-walk logs, one walk per step (a finished ``out`` is kept)."""
    config = BCConfig(
        model=str(model),
        data=[str(data)],
        output_dir=str(out),
        learning_rate=learning_rate,
        num_epochs=epochs,
        batch_size=1,
        warmup_ratio=0.05,
        max_length=1536,
        seed=seed,
        cpu=True,
    )
    return run_training("bc", config)


def write_walks(path: Path, env: str, tasks: list[int], steps: int, seed: int, kind: str) -> Path:
    """Random-walk logs (agentenv.data.walks) of ``tasks``, written once (a rerun keeps the file)."""
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        write_trajectories(tmp, random_walks(env, tasks, steps, seed, kind))
        tmp.replace(path)
    return path


def reading_model(
    base: Path, out: Path, env: str, tasks: list[int], steps: int, seed: int, kind: str = "reading"
) -> Path:
    """``base`` trained for one epoch at lr 1e-3 on random walks (``steps`` long) of ``tasks`` whose replies
    restate the observation (``kind``: see agentenv.data.walks)."""
    data = write_walks(out / "reading_walks.jsonl", env, tasks, steps, seed, kind)
    return train_on_walks(base, data, out / "reading_model", 1e-3, 1, seed)


def reader_model(base: Path, out: Path, plan: Plan, seed: int, walks: tuple[int, int] = (800, 3000)) -> Path:
    """The "reader" of research/results.md: the random ``base`` taught to read its observations and carry its
    goal, by task-reading random walks (no policy in them) in three stages. It stands in for the
    pretrained LLM a CPU cannot train.

    1. 800 walks in the plan's walk tasks, as long as an episode, one epoch at lr 1e-3 (``--reading-walks``);
    2. two more epochs on the same walks at lr 2e-3;
    3. 3,000 walks of 6 steps in random training tasks of every level (never a held-out one), one epoch at
       lr 2e-3.

    ``walks`` gives the two walk counts (800 and 3,000).
    """
    steps = plan.max_rounds or 15
    stage1 = reading_model(base, out, plan.env, plan.walks[: walks[0]], steps, seed, "task_reading")
    stage2 = train_on_walks(stage1, out / "reading_walks.jsonl", out / "reader_stage2", 2e-3, 2, seed + 1)
    held_out = [i for ids in plan.held_out.values() for i in ids]
    tasks = walk_tasks(plan.env, "train", walks[1], seed, held_out)
    walks = write_walks(out / "level_walks.jsonl", plan.env, tasks, 6, seed, "task_reading")
    return train_on_walks(stage2, walks, out / "reader_model", 2e-3, 1, seed + 2)


def main() -> None:
    quiet_other_progress_bars()  # in a log (make demo > file), transformers' weight-loading bars are noise
    args = parse_args()
    plan = PLANS[args.env](args)  # settings no plan can use stop here, before --out is written
    args.out.mkdir(parents=True, exist_ok=True)
    # a rerun resumes the run in --out: its models and data files are reused by path, so refuse other settings
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k != "out"}
    try:
        check_run_config(args.out, settings, volatile=("iterations", "base_only", "plan_only"))
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None
    started = time.perf_counter()
    write_json(args.out / "plan.json", asdict(plan))
    if args.plan_only:
        console.print(f"plan written to {args.out / 'plan.json'}")
        return
    test_name, test = next(iter(plan.held_out.items()))

    t = stage("1. servers up")
    # the server serves this run alone: it and every client of it (the trainers' too) read the token there
    os.environ.setdefault(TOKEN_ENV_VAR, secrets.token_urlsafe(24))
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
        collect(plan.env, [url], plan.bc, bc_data, concurrency=16, max_rounds=plan.max_rounds or None)
        console.print(f"{bc_data}  [{time.perf_counter() - t:.1f} s]")

        if args.base:
            t = stage(f"4. base model: {args.base}")
            model = args.base
        else:
            t = stage(f"4. base model: random Llama, hidden {args.hidden}, {args.layers} layers")
            model = base_model(
                args.out / "base_model", plan.env, [bc_data], args.hidden, args.layers, args.seed
            )
        if args.reader:
            first, second = args.reader_walks
            console.print(
                f"teaching it to read: {first} + {second} task-reading random walks, in three stages"
            )
            model = reader_model(model, args.out, plan, args.seed, (first, second))
        elif args.reading_walks:
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
            max_new_tokens=plan.max_new_tokens,
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
            table.add_row("expert", row.env, str(row.n), f"{row.success:.1%}", f"{row.score:.2f}")
    for it in summary["iterations"]:
        name = "BC" if it["iteration"] == 0 else f"AgentEvol iteration {it['iteration']}"
        for env, row in (it.get("scores") or {}).items():
            if env != "all":
                table.add_row(name, env, str(row["n"]), f"{row['success']:.1%}", f"{row['score']:.2f}")
    console.print(table)
    console.print(
        f"curve: {args.out / 'agentevol' / 'curve.png'}   total {time.perf_counter() - started:.0f} s"
    )
    write_json(args.out / "demo_summary.json", summary)


if __name__ == "__main__":
    main()
