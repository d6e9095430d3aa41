"""``agentenv bench``: an agent on the benchmark suite of every env at once, one table with 95% intervals.

    agentenv bench --agent expert
    agentenv bench --agent openai:qwen@http://127.0.0.1:8000/v1 --env babyai,textcraft --concurrency 64
    agentenv bench --agent hf:runs/bc --suite v1 --url http://10.0.0.5:36002 --env babyai

The suite (:mod:`agentenv.controller.suites`) names each env's tasks; every installed env plays unless
``--env`` names some.  Without ``--url`` or ``--local`` the servers the envs need start on free ports
(:class:`~agentenv.server.launcher.ServerProcesses`) and stop when the run ends.  The episodes of all envs
share one rollout (``--concurrency`` episodes at once, the envs interleaved) through
:func:`~agentenv.controller.evaluator.evaluate`, so a rerun of the same command resumes.

``--out DIR`` (default ``runs/bench/<suite>_<agent>``) receives ``results.jsonl`` (the episodes),
``results.meta.json`` (agent settings, seeds, prompts, round limits), ``bench.json`` (the table, the
suite's tasks and those settings) and ``bench.md``.  Per env: n, success rate and mean normalised score, each
with its 95% interval (:func:`~agentenv.controller.stats.mean_interval`: Wilson's), mean rounds, tokens
generated, mean seconds per episode; then the average over envs (each env weighs the same;
:func:`~agentenv.controller.stats.average_interval`).

It sits beside the CLI rather than in ``controller/`` because it starts servers: it imports both.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import secrets
import sys
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentenv.cli import HelpWithDefaults, ListOption, round_limit, temperature, whole_number
from agentenv.controller.commands import add_agent_options, agent_options, one_line_errors
from agentenv.controller.stats import average_interval, mean_interval
from agentenv.controller.suites import DEFAULT_SUITE

_positive_int = whole_number(1)
AVERAGE = "average"


@dataclass
class BenchRow:
    """One line of the table: an env, or the average over envs (``env == "average"``; ``"average of k of K
    envs"`` when some env has no episode)."""

    env: str
    n: int
    # the figures are None in the row of an env with no episode (each ended on an environment error)
    success: float | None
    success_low: float | None
    success_high: float | None
    score: float | None  # mean normalised score, 0-1
    score_low: float | None
    score_high: float | None
    rounds: float | None  # mean rounds per episode
    tokens: int | None  # reply tokens generated (None: the agent generates none, like the expert)
    episode_s: float | None  # mean wall seconds per episode


def bench_rows(episodes: dict[str, list[dict[str, Any]]], reward_ranges: dict[str, list[float]]) -> list[BenchRow]:
    """The table from each env's episodes (AgentTraj records, one per task): a row per env, then the average."""
    from agentenv.controller.report import normalised, warn_outside_range

    rows, empty = [], []
    for env, eps in episodes.items():
        if not eps:  # every episode ended on an env error: said in the table, and left out of the average
            empty.append(BenchRow(env, 0, *[None] * 6, rounds=None, tokens=None, episode_s=None))
            continue
        rewards = [float(e["reward"]) for e in eps]
        warn_outside_range(env, rewards, reward_ranges.get(env, (0.0, 1.0)))
        scores = [normalised(r, reward_ranges.get(env, (0.0, 1.0))) for r in rewards]
        tokens = [e["meta"]["generated_tokens"] for e in eps if "generated_tokens" in e.get("meta", {})]
        n = len(eps)
        success, score = sum(bool(e["success"]) for e in eps) / n, sum(scores) / n
        rows.append(BenchRow(
            env, n, success, *mean_interval(success, n), score, *mean_interval(score, n),
            rounds=sum(e["meta"].get("rounds", 0) for e in eps) / n,
            tokens=sum(tokens) if tokens else None,
            episode_s=sum(e["meta"].get("wall_s", 0.0) for e in eps) / n,
        ))
    if rows:
        mean = lambda values: sum(values) / len(values)  # noqa: E731
        tokens = [r.tokens for r in rows if r.tokens is not None]
        label = AVERAGE if not empty else f"{AVERAGE} of {len(rows)} of {len(episodes)} envs"
        rows = rows + empty
        played = [r for r in rows if r.n]
        rows.append(BenchRow(
            label, sum(r.n for r in played), mean([r.success for r in played]),
            *average_interval([(r.success, r.n) for r in played]), mean([r.score for r in played]),
            *average_interval([(r.score, r.n) for r in played]),
            rounds=mean([r.rounds for r in played]), tokens=sum(tokens) if tokens else None,
            episode_s=mean([r.episode_s for r in played]),
        ))
    return rows or empty


COLUMNS = ("env", "n", "success", "95% interval", "score", "95% interval", "rounds", "tokens", "s / episode")


def row_cells(r: BenchRow) -> list[str]:
    if not r.n:
        return [r.env, "0", *["—"] * (len(COLUMNS) - 2)]
    return [
        r.env, str(r.n), f"{r.success:.1%}", f"{r.success_low:.1%} – {r.success_high:.1%}", f"{r.score:.3f}",
        f"{r.score_low:.3f} – {r.score_high:.3f}", f"{r.rounds:.1f}", "—" if r.tokens is None else f"{r.tokens:,}",
        f"{r.episode_s:.2f}",
    ]


def markdown(rows: list[BenchRow], title: str) -> str:
    lines = [f"## {title}", "", "| " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * (len(COLUMNS) - 1)]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def print_table(rows: list[BenchRow], title: str) -> None:
    from rich.table import Table

    from agentenv.controller.report import table_console

    table = Table(title=title)
    for i, name in enumerate(COLUMNS):
        # a narrow terminal folds a cell, never cuts it ("100…")
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    for r in rows:
        # the average's row is set apart (a table of one empty env has none)
        below = len(rows) > 1 and r is rows[-2]
        table.add_row(*row_cells(r), style="bold" if r.env.startswith(AVERAGE) else None, end_section=below)
    table_console().print(table)


# --- the command ------------------------------------------------------------------------------------
def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run the benchmark suite on every env: one table with 95%% intervals (resumable)",
                       formatter_class=HelpWithDefaults)
    p.add_argument("--agent", required=True, help="expert | openai:MODEL@URL | hf:PATH (a model folder, or a Hugging Face Hub name)")
    p.add_argument("--suite", default=DEFAULT_SUITE, help="a shipped suite name, or a suite .json file")
    p.add_argument("--env", action=ListOption, default=[], metavar="ENV",
                   help="environments (default: every installed one)")
    p.add_argument("--url", action=ListOption, default=[], metavar="URL",
                   help="NAME=URL of an env's server, or one URL for all (default: start the servers here)")
    p.add_argument("--local", action="store_true", help="run the envs in this process (no servers)")
    p.add_argument("--out", type=Path, metavar="DIR", help="results folder (default: runs/bench/<suite>_<agent>)")
    p.add_argument("--limit", type=_positive_int, help="only the first this many suite tasks per env (a smoke test)")
    p.add_argument("--concurrency", type=_positive_int, default=16, help="episodes run at once, over all envs")
    p.add_argument("--max-rounds", type=round_limit, help="rounds per episode (default, or 0: each env's own)")
    p.add_argument("--temperature", type=temperature, default=0.0, help="sampling temperature of the agent (0: greedy)")
    p.add_argument("--seed", type=int, default=0, help="seeds the sampling (each episode's seed derives from it)")
    add_agent_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress at all (a log, without it, gets a line every tenth of the run)")
    p.set_defaults(func=run_bench)


def default_out(suite: str, agent: str) -> Path:
    """``runs/bench/<suite>_<agent>``, the agent spec made a file name; a long one is cut and ends in a hash of
    the whole (two checkpoints of one long run folder would share their first 60 characters)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", agent)
    if len(name) > 60:
        name = f"{name[:51]}_{hashlib.sha256(agent.encode()).hexdigest()[:8]}"
    return Path("runs/bench") / f"{suite}_{name}"


def _servers_hint(args: argparse.Namespace, envs: list[str] | None = None) -> str:
    return "is that server up? (without --url, bench starts the servers itself; finished episodes are kept: rerun to resume)"


@one_line_errors(_servers_hint, lambda args: "rerun the same command to resume", also=(RuntimeError, TimeoutError))
def run_bench(args: argparse.Namespace) -> int:
    from agentenv.controller.agents import agent_from_spec, check_agent_spec
    from agentenv.controller.evaluator import EvalTask, evaluate
    from agentenv.controller.suites import load_suite, suite_tasks
    from agentenv.data.trajectory import write_json, write_text_atomic
    from agentenv.registry import installed_envs

    check_agent_spec(args.agent)  # before the servers start: that takes a while
    suite = load_suite(args.suite)
    envs = args.env or installed_envs()
    out = args.out or default_out(suite["name"], args.agent)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a folder (the results, bench.json and bench.md go in it)")
    results = out / "results.jsonl"
    started = time.monotonic()
    with ExitStack() as stack:
        sources = _sources(envs, args, stack)
        per_env = {}
        for env, source in sources.items():
            try:
                per_env[env] = suite_tasks(suite, env, source)[: args.limit]
            except ValueError as exc:
                if args.env:  # named: a mistake; found installed: left out, said so
                    raise
                print(f"warning: {exc}; left out", file=sys.stderr)
        tasks = [EvalTask(env, getattr(sources[env], "base_urls", []), i) for env, i in _interleaved(per_env)]
        agent = stack.enter_context(agent_from_spec(args.agent, **agent_options(args)))
        out.mkdir(parents=True, exist_ok=True)
        try:
            report = evaluate(agent, tasks, results, concurrency=args.concurrency, max_rounds=args.max_rounds,
                              temperature=args.temperature, seed=args.seed, progress=not args.no_progress,
                              print_table=False, sources=sources, title="bench")
        except KeyboardInterrupt:
            print(f"\ninterrupted: rerun the same command to resume ({results})", file=sys.stderr)
            return 130
        ranges = {env: sources[env].info()["reward_range"] for env in per_env}
    rows = bench_rows(_episodes(results, per_env), ranges)
    # a smoke run says so: its table is no suite figure
    title = f"{args.agent} on suite {suite['name']}" + (f" (its first {args.limit} tasks per env)" if args.limit else "")
    print_table(rows, title)
    record = {
        "suite": {k: suite[k] for k in ("name", "split", "seed")}, "agent": args.agent,
        "limit": args.limit, "wall_s": round(time.monotonic() - started, 1),  # this run's (a resumed one's own)
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": results.name,
        "rows": [asdict(r) for r in rows], "tasks": per_env,
        "settings": json.loads(results.with_suffix(".meta.json").read_text()),
    }
    write_json(out / "bench.json", record)
    write_text_atomic(out / "bench.md", markdown(rows, title))
    print(f"wrote {out / 'bench.json'} and bench.md; wall time {record['wall_s']:.0f} s")
    if report.errors:
        print(f"{report.errors} episode(s) failed on an environment error; rerun the same command to retry them",
              file=sys.stderr)
        return 1
    return 0


def _sources(envs: list[str], args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    """Each env's source: in process (``--local``), the servers at ``--url``, else servers started here."""
    from agentenv.controller.commands import env_urls
    from agentenv.controller.sources import LocalEnv, RemoteEnv
    from agentenv.registry import env_class, server_of

    if args.local:
        if args.url:
            raise ValueError("--local and --url exclude each other")
        return {env: stack.enter_context(LocalEnv(env_class(env))) for env in envs}
    if args.url:
        urls = env_urls(envs, args.url)
        return {env: stack.enter_context(RemoteEnv(env, urls[env])) for env in envs}
    from agentenv.server.launcher import ServerProcesses, free_ports

    names = list(dict.fromkeys(server_of(env) for env in envs))
    token = secrets.token_urlsafe(24)  # the servers started here serve this run alone
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    print(f"starting servers: {', '.join(names)}", file=sys.stderr, flush=True)
    started = stack.enter_context(ServerProcesses(names, ports=ports, token=token, startup_timeout_s=300))
    return {env: stack.enter_context(RemoteEnv(env, started[server_of(env)], token=token)) for env in envs}


def _interleaved(per_env: dict[str, list[int]]) -> list[tuple[str, int]]:
    """``(env, task)`` pairs taking one task of each env in turn, so that every env is under way from the start."""
    queues = [[(env, i) for i in ids] for env, ids in per_env.items()]
    return [pair for turn in itertools.zip_longest(*queues) for pair in turn if pair is not None]


def _episodes(results: Path, per_env: dict[str, list[int]]) -> dict[str, list[dict[str, Any]]]:
    """The latest episode (sample 0) of every suite task in the results file, per env."""
    from agentenv.data.trajectory import read_jsonl

    wanted = {f"{env}_{i}": env for env, ids in per_env.items() for i in ids}
    latest = {}
    for e in read_jsonl(results) if results.exists() else []:
        if e["item_id"] in wanted and int(e.get("meta", {}).get("sample", 0)) == 0:
            latest[e["item_id"]] = e
    found: dict[str, list[dict[str, Any]]] = {env: [] for env in per_env}
    for item_id, e in latest.items():
        found[wanted[item_id]].append(e)
    return found
