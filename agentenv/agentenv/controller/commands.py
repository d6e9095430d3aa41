"""``agentenv eval`` and ``agentenv collect``.

    agentenv eval --agent hf:./ckpt --env maze,wordle --split test --concurrency 32 --out runs/eval.jsonl
    agentenv eval --agent openai:qwen@http://127.0.0.1:8000/v1 --env babyai --indices 0:50 --out b.jsonl
    agentenv eval --agent expert --env maze --split test --url http://10.0.0.5:36001 --out runs/maze_expert.jsonl
    agentenv collect --env textcraft --split train --limit 500 --out data/textcraft_expert.jsonl
    agentenv collect --env maze --local --split train --out data/maze_expert.jsonl

Server URLs default to each env's registered port on 127.0.0.1 (or ``$AGENTENV_<ENV>_URL``); ``--url URL``
(repeatable) gives the servers for every env named, ``--url NAME=URL`` for one.  ``--local`` runs the
environments in this process instead (the installed env packages' entry points; no server needed).
Servers that require a token get ``$AGENTENV_TOKEN``, the variable they read theirs from.  Splits are
read from the server's ``/info``.  Both commands resume: rerun the same command after an interruption.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from agentenv.cli import whole_number
from agentenv.controller.sources import EnvSource, LocalEnv, RemoteEnv
from agentenv.env import info_splits
from agentenv.protocol import EnvError, Unauthorized


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate an agent on env servers (resumable)")
    p.add_argument("--agent", required=True, help="expert | openai:MODEL@URL | hf:PATH")
    p.add_argument("--env", required=True, help="environment name(s), comma-separated")
    _add_task_options(p, default_split="test")
    p.add_argument("--max-rounds", type=_positive_int, help="rounds per episode (default: each env's own)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=_positive_int, default=1, help="episodes per task")
    p.add_argument("--max-new-tokens", type=_positive_int, default=512, help="reply token limit (hf, openai)")
    p.add_argument("--batch-size", type=_positive_int, help="generation batch (hf; default: --concurrency)")
    p.add_argument("--device", help="torch device (hf; default: cuda when available, else cpu)")
    p.add_argument("--api-key", help="API key (openai; default $OPENAI_API_KEY)")
    p.set_defaults(func=run_eval)

    p = sub.add_parser("collect", help="collect expert trajectories (resumable)")
    p.add_argument("--env", required=True, help="environment name")
    _add_task_options(p, default_split="train")
    p.add_argument("--max-rounds", type=_positive_int, help="rounds per episode (default: the env's own)")
    p.set_defaults(func=run_collect)

    p = sub.add_parser("compare", help="two agents' episodes on the same tasks: the difference per env, with its interval")
    p.add_argument("files", type=Path, nargs="+", metavar="FILE", help="BASE OTHER pairs of results files (.jsonl)")
    p.add_argument("--json", type=Path, help="also write the rows here")
    p.set_defaults(func=run_compare)


def _add_task_options(p: argparse.ArgumentParser, default_split: str) -> None:
    p.add_argument("--url", action="append", default=[], help="server base URL (repeatable), or NAME=URL")
    p.add_argument("--local", action="store_true", help="run the envs in this process (no servers)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--split", help=f"a split from the server's /info (default: {default_split})")
    which.add_argument(
        "--indices", type=parse_indices, help="task indices: a comma list of N and START:STOP[:STEP] ranges"
    )
    p.add_argument("--limit", type=_positive_int, help="at most this many tasks per env")
    p.add_argument("--concurrency", type=_positive_int, default=16, help="episodes run at once")
    p.add_argument("--out", required=True, type=_jsonl_path, help="results file (AgentTraj JSONL, .jsonl)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(default_split=default_split)


def _jsonl_path(text: str) -> str:
    if not text.endswith(".jsonl"):
        raise argparse.ArgumentTypeError(f"{text!r} must end in .jsonl: episodes are appended one a line")
    return text


_positive_int = whole_number(1)


def _one_line_errors(run):
    """Bad input, a server that is down or refuses the token: ``error: ...`` and exit status 1, not a
    traceback."""

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except Unauthorized as exc:
            raise SystemExit(f"error: {exc} (set AGENTENV_TOKEN to the servers' token)") from None
        except (ValueError, EnvError) as exc:
            raise SystemExit(f"error: {exc}") from None

    return wrapped


@_one_line_errors
def run_eval(args: argparse.Namespace) -> int:
    from agentenv.controller.agents import agent_from_spec
    from agentenv.controller.evaluator import evaluate

    envs = [e.strip() for e in args.env.split(",") if e.strip()]
    sources = env_sources(envs, args)
    try:
        tasks = _tasks(sources, args)
        agent = agent_from_spec(
            args.agent,
            max_new_tokens=args.max_new_tokens,
            max_tokens=args.max_new_tokens,
            batch_size=args.batch_size or args.concurrency,
            concurrency=args.concurrency,
            api_key=args.api_key,
            device=args.device,
            temperature=args.temperature,
            seed=args.seed,
        )
        with agent:
            return _finish(
                args,
                lambda: evaluate(
                    agent, tasks, args.out, concurrency=args.concurrency, max_rounds=args.max_rounds,
                    temperature=args.temperature, seed=args.seed, samples_per_task=args.samples,
                    progress=not args.no_progress, sources=sources,
                ),
            )
    finally:
        for source in sources.values():
            source.close()


@_one_line_errors
def run_collect(args: argparse.Namespace) -> int:
    from agentenv.controller.evaluator import collect

    sources = env_sources([args.env], args)
    try:
        indices = [t.data_idx for t in _tasks(sources, args)]
        return _finish(
            args,
            lambda: collect(
                args.env, getattr(sources[args.env], "base_urls", []), indices, args.out,
                concurrency=args.concurrency, max_rounds=args.max_rounds, progress=not args.no_progress,
                sources=sources,
            ),
        )
    finally:
        sources[args.env].close()


@_one_line_errors
def run_compare(args: argparse.Namespace) -> int:
    from agentenv.controller.compare import compare, print_table
    from agentenv.data.trajectory import write_json

    if len(args.files) % 2:
        raise ValueError("give the files in pairs: BASE OTHER [BASE OTHER ...]")
    rows = compare(list(zip(args.files[::2], args.files[1::2], strict=True)))
    print_table(rows)
    if args.json:
        write_json(args.json, rows)
    return 0


def _finish(args: argparse.Namespace, run) -> int:
    try:
        report = run()
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished episodes are in {args.out}; rerun the same command to resume", file=sys.stderr)
        return 130
    if report.errors:
        print(f"{report.errors} episode(s) failed on an environment error; rerun to retry them", file=sys.stderr)
        return 1
    return 0


def env_sources(envs: list[str], args: argparse.Namespace) -> dict[str, EnvSource]:
    """In-process envs for ``--local``, else HTTP servers at ``--url`` / the default URLs."""
    if args.local:
        if args.url:
            raise SystemExit("--local and --url exclude each other")
        from agentenv.registry import env_class

        try:
            return {env: LocalEnv(env_class(env)) for env in envs}
        except KeyError as exc:
            raise SystemExit(f"error: {exc.args[0]}") from None
    return {env: RemoteEnv(env, urls) for env, urls in env_urls(envs, args.url).items()}


def env_urls(envs: list[str], url_args: list[str]) -> dict[str, list[str]]:
    """Server URLs per env: ``NAME=URL`` arguments for that env, bare URLs for all, else the registry's default."""
    shared, named = [], {}
    for arg in url_args:
        name, eq, url = arg.partition("=")
        if eq and "/" not in name:
            named.setdefault(name, []).append(url)
        else:
            shared.append(arg)
    unknown = set(named) - set(envs)
    if unknown:
        raise SystemExit(f"--url given for env(s) not evaluated: {', '.join(sorted(unknown))}")
    result = {}
    for env in envs:
        urls = named.get(env) or shared
        if not urls:
            from agentenv.registry import default_url

            try:
                urls = [default_url(env)]
            except KeyError as exc:
                raise SystemExit(f"error: {exc.args[0]}; or give its server with --url") from None
        result[env] = urls
    return result


def parse_indices(text: str) -> list[int]:
    """A comma list of indices and ``START:STOP[:STEP]`` ranges (``"3,7,9"``, ``"0:50:5"``,
    ``"3:40:10,4:40:10"``) as a list of indices, in the order given; the ``--indices`` argument type."""
    indices: list[int] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            parts = [int(p) for p in item.split(":")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{item!r} is not an index or START:STOP[:STEP]") from None
        if len(parts) > 3 or min(parts) < 0 or parts[2:] == [0]:
            raise argparse.ArgumentTypeError(f"bad {item!r}: indices >= 0, START:STOP[:STEP], STEP >= 1")
        indices.extend(range(*parts) if len(parts) > 1 else parts)
    if not indices:
        raise argparse.ArgumentTypeError(f"{text!r} names no task")
    return indices


def _tasks(sources: dict[str, EnvSource], args: argparse.Namespace) -> list:
    from agentenv.controller.evaluator import EvalTask

    tasks = []
    for env, source in sources.items():
        if args.indices is not None:
            indices = args.indices
        else:
            split = args.split or args.default_split
            splits = info_splits(source.info())
            if split not in splits:
                raise SystemExit(f"{env}: no split {split!r} (the server has: {', '.join(splits) or 'none'})")
            indices = list(splits[split])
        if args.limit is not None:
            indices = indices[: args.limit]
        tasks += [EvalTask(env, getattr(source, "base_urls", []), i) for i in indices]
    return tasks
