"""Best-of-N evaluation: N sampled episodes per task; a task succeeds when any of them does.

Reported per env (and overall): the mean success of single samples (what one episode scores on average),
the Best-of-N success rate, and the mean of each task's best normalised score.  The episodes are an
ordinary resumable evaluation file (``out``), so an interrupted run continues where it stopped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from agentenv.controller.report import normalised
from agentenv.controller.sources import EnvSource
from agentenv.data.trajectory import Trajectory, write_json, write_text_atomic
from agentenv.trainer.rollouts import EnvSettings, close_sources, open_sources, split_indices


@dataclass(kw_only=True)
class BestOfNConfig(EnvSettings):
    """Best-of-N settings."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {
        "Best-of-N": ("agent", "out", "n", "temperature", "seed", "split", "limit", "api_key", "max_retries",
                      "request_timeout"),
    }

    #: the agent: hf:PATH, openai:MODEL@URL or expert
    agent: str
    #: results file (AgentTraj JSONL); the summary goes beside it as <stem>.best_of_n.json
    out: str
    #: samples per task (N)
    n: int = 4
    #: sampling temperature (N samples at 0 would all be the same episode)
    temperature: float = 0.7
    #: seeds each episode's sampling (with its task and sample number)
    seed: int = 0
    #: the split whose tasks are played, in every env
    split: str = "test"
    #: at most this many tasks per env (0: the whole split)
    limit: int = 0
    #: API key for openai: agents (default: $OPENAI_API_KEY)
    api_key: str = ""
    #: tries again of a failed model request, with backoff (openai: agents)
    max_retries: int = 5
    #: seconds a model request may take, its whole answer (up to twice that where the server goes silent
    #: mid-answer; openai: agents; a slow server needs more)
    request_timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be at least 1, not {self.n}")
        if self.limit < 0:
            raise ValueError(f"limit must not be negative (0: the whole split), not {self.limit}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must not be negative, not {self.max_retries}")
        if not self.request_timeout > 0:
            raise ValueError(f"request_timeout must be a positive number of seconds, not {self.request_timeout}")
        super().__post_init__()


@dataclass
class BestOfNRow:
    env: str
    tasks: int
    samples: int
    #: mean success of single episodes
    sample_success: float
    #: fraction of tasks where at least one of the N episodes succeeded
    best_of_n_success: float
    #: mean over tasks of the best normalised score among its episodes
    best_of_n_score: float
    #: tasks left out for having fewer than N episodes (lost to environment errors; a rerun plays them)
    incomplete: int = 0


def best_of_n(
    trajectories: Iterable[Trajectory],
    reward_ranges: Mapping[str, tuple[float, float] | list[float]] | None = None,
    n: int | None = None,
) -> list[BestOfNRow]:
    """Aggregate sampled episodes per task: one row per env, sorted, then the overall row (``env="all"``).
    With ``n``, a task with fewer episodes (the others ended on an environment error) is left out of the
    figures, which are over N tries, and counted in ``incomplete``."""
    reward_ranges = reward_ranges or {}
    per_task: dict[tuple[str, str], list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        per_task[(t.env, t.item_id)].append(t)
    groups: dict[str, list[list[Trajectory]]] = defaultdict(list)
    short: dict[str, int] = defaultdict(int)
    for (env, _), samples in per_task.items():
        for group in (env, "all"):
            if n is not None and len(samples) < n:
                short[group] += 1
            else:
                groups[group].append(samples)
    rows = []
    for env in sorted(groups.keys() | short.keys(), key=lambda e: (e == "all", e)):
        tasks = groups[env]
        episodes = [t for samples in tasks for t in samples]
        if not tasks:
            rows.append(BestOfNRow(env, 0, 0, 0.0, 0.0, 0.0, incomplete=short[env]))
            continue
        rows.append(
            BestOfNRow(
                env=env,
                tasks=len(tasks),
                incomplete=short[env],
                samples=len(episodes),
                sample_success=sum(t.success for t in episodes) / len(episodes),
                best_of_n_success=sum(any(t.success for t in samples) for samples in tasks) / len(tasks),
                best_of_n_score=sum(
                    max(normalised(t.reward, reward_ranges.get(t.env, (0.0, 1.0))) for t in samples)
                    for samples in tasks
                )
                / len(tasks),
            )
        )
    return rows


def markdown(rows: list[BestOfNRow], n: int) -> str:
    lines = [
        f"| env | tasks | samples | single-sample success | best-of-{n} success | best-of-{n} score |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.env} | {r.tasks} | {r.samples} | {100 * r.sample_success:.1f}% | "
            f"{100 * r.best_of_n_success:.1f}% | {r.best_of_n_score:.3f} |"
        )
    incomplete = rows[-1].incomplete if rows else 0
    if incomplete:
        lines.append(f"\n{incomplete} task(s) with fewer than {n} episodes (environment errors) are left out: "
                     "rerun the same command to play them")
    return "\n".join(lines) + "\n"


def print_table(rows: list[BestOfNRow], n: int) -> None:
    """The rows as a rich table on stdout."""
    from rich.table import Table

    from agentenv.controller.report import table_console

    table = Table(title=f"best of {n} samples per task")
    table.add_column("env")
    for name in ("tasks", "samples", "single-sample success", f"best-of-{n} success", f"best-of-{n} score"):
        table.add_column(name, justify="right", overflow="fold")
    for r in rows:
        table.add_row(r.env, str(r.tasks), str(r.samples), f"{r.sample_success:.1%}", f"{r.best_of_n_success:.1%}",
                      f"{r.best_of_n_score:.3f}")
    console = table_console()
    console.print(table)
    incomplete = rows[-1].incomplete if rows else 0
    if incomplete:
        console.print(f"{incomplete} task(s) with fewer than {n} episodes (environment errors) are left out: "
                      "rerun the same command to play them")


def run_best_of_n(
    cfg: BestOfNConfig, *, sources: Mapping[str, EnvSource] | None = None, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) the N samples per task and return the summary (also in ``<stem>.best_of_n.json``)."""
    from agentenv.controller.agents import agent_from_spec, check_agent_spec
    from agentenv.controller.evaluator import EvalTask, evaluate, latest_episodes
    from agentenv.data.trajectory import read_trajectories

    check_agent_spec(cfg.agent)  # before the env sources open: starting local servers takes a while
    envs = open_sources(cfg, sources)
    try:
        tasks = [
            EvalTask(env, getattr(src, "base_urls", []), i)
            for env, src in envs.items()
            for i in split_indices(src, cfg.split, cfg.limit)
        ]
        agent = agent_from_spec(
            cfg.agent,
            max_new_tokens=cfg.max_new_tokens,
            max_tokens=cfg.max_new_tokens,
            batch_size=cfg.agent_batch_size or cfg.concurrency,
            concurrency=cfg.concurrency,
            api_key=cfg.api_key or None,
            max_retries=cfg.max_retries,
            timeout=cfg.request_timeout,
            temperature=cfg.temperature,
            seed=cfg.seed,
        )
        with agent:
            report = evaluate(
                agent,
                tasks,
                cfg.out,
                concurrency=cfg.concurrency,
                max_rounds=cfg.max_rounds or None,
                temperature=cfg.temperature,
                seed=cfg.seed,
                samples_per_task=cfg.n,
                progress=progress,
                print_table=False,  # the samples' table: the best-of-N table below says more
                sources=envs,
                title=f"best-of-{cfg.n}",
            )
        wanted = {(f"{t.env}_{t.data_idx}", k) for t in tasks for k in range(cfg.n)}
        episodes = [t for t in latest_episodes(read_trajectories(cfg.out)) if (t.item_id, t.meta.get("sample", 0)) in wanted]
        ranges = {env: src.info()["reward_range"] for env, src in envs.items()}
        rows = best_of_n(episodes, ranges, cfg.n)
    finally:
        close_sources(envs, sources)
    summary = {
        "agent": cfg.agent,
        "n": cfg.n,
        "temperature": cfg.temperature,
        "seed": cfg.seed,
        "split": cfg.split,
        "errors": report.errors,
        "rows": [asdict(r) for r in rows],
    }
    out = Path(cfg.out)
    write_json(out.with_name(out.stem + ".best_of_n.json"), summary)
    write_text_atomic(out.with_name(out.stem + ".best_of_n.md"), markdown(rows, cfg.n))
    if progress:
        print_table(rows, cfg.n)
    return summary
