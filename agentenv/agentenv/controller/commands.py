"""``agentenv eval``, ``agentenv collect`` and ``agentenv compare``.

    agentenv eval --agent hf:./ckpt --env maze,wordle --split test --concurrency 32 --out runs/eval.jsonl
    agentenv eval --agent openai:qwen@http://127.0.0.1:8000/v1 --env babyai --sample 80 --out b.jsonl
    agentenv eval --agent expert --env textcraft --split test --indices 5:10 --out runs/tc.jsonl
    agentenv collect --env maze wordle --split train --out data/expert.jsonl
    agentenv collect --env maze --local --split train --out data/maze_expert.jsonl
    agentenv collect --env all --out-dataset data/agenttraj     # a Hugging Face datasets folder

Server URLs default to each env's registered port on 127.0.0.1 (or ``$AGENTENV_<ENV>_URL``); ``--url URL``
gives the servers for every env named, ``--url NAME=URL`` for one.  ``--local`` runs the environments in
this process instead (the installed env packages; no server needed).  Servers that require a token get
``$AGENTENV_TOKEN``.  Which tasks: see :mod:`agentenv.controller.selection`.  Both commands resume: rerun the
same command after an interruption.  Every mistake is one line saying what to do (``--debug`` for a
traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from agentenv.cli import HelpWithDefaults, ListOption, round_limit, seconds, temperature, whole_number
from agentenv.controller.sources import EnvSource, LocalEnv, RemoteEnv
from agentenv.protocol import EnvError, ServerHung, ServerUnreachable, Unauthorized

_positive_int = whole_number(1)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate an agent on environments (resumable)",
                       formatter_class=HelpWithDefaults)
    p.add_argument("--agent", required=True, help="expert | openai:MODEL@URL | hf:PATH (a model folder, or a Hugging Face Hub name)")
    _add_task_options(p, default_split="test")
    p.add_argument("--max-rounds", type=round_limit, help="rounds per episode (default, or 0: each env's own)")
    p.add_argument("--temperature", type=temperature, default=0.0, help="sampling temperature of the agent (0: greedy)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the sampling (each episode's seed derives from it, its task and sample) and --sample")
    p.add_argument("--samples", type=_positive_int, default=1, help="episodes per task")
    add_agent_options(p)
    p.set_defaults(func=run_eval)

    p = sub.add_parser("collect", help="collect expert trajectories (resumable)",
                       formatter_class=HelpWithDefaults)
    _add_task_options(p, default_split="train", out_required=False)
    p.add_argument("--out-dataset", type=Path, metavar="DIR",
                   help="write a Hugging Face datasets folder instead (parquet shards and a card); without a task "
                   "option each env plays its standard number of train tasks (its dataset_size); --env all: every env")
    p.add_argument("--max-rounds", type=round_limit, help="rounds per episode (default, or 0: each env's expert's own)")
    p.add_argument("--seed", type=int, default=0, help="seeds --sample")
    p.set_defaults(func=run_collect)

    p = sub.add_parser("compare", help="two agents' episodes on the same tasks: the difference per env, with its interval")
    p.add_argument("files", type=Path, nargs="+", metavar="FILE", help="BASE OTHER pairs of results files (.jsonl)")
    p.add_argument("--json", type=Path, metavar="FILE",
                   help="also write the rows to FILE as JSON; `--json -` prints them on stdout instead of the table")
    p.set_defaults(func=run_compare)


def _add_task_options(p: argparse.ArgumentParser, default_split: str, out_required: bool = True) -> None:
    p.add_argument("--env", "--envs", action=ListOption, old_flag="--envs", required=True, metavar="ENV",
                   help="environments: names, space- or comma-separated; all: every installed env")
    p.add_argument("--url", "--urls", action=ListOption, old_flag="--urls", default=[], metavar="URL",
                   help="server base URLs for every env, or NAME=URL for one (default: each env's own port)")
    p.add_argument("--local", action="store_true", help="run the envs in this process (no servers)")
    p.add_argument("--split", help=f"a split from the env's /info (default: {default_split})")
    p.add_argument("--indices", type=parse_indices,
                   help="positions within --split, or without --split raw task indices: a comma list of N and "
                   "START:STOP[:STEP] ranges")
    p.add_argument("--sample", type=_positive_int,
                   help="a seeded sample of this many of the chosen tasks per env, stratified by task type")
    p.add_argument("--limit", type=_positive_int, help="the first this many of the chosen tasks per env")
    p.add_argument("--concurrency", type=_positive_int, default=16,
                   help="episodes run at once (vLLM: high; llama.cpp and other one-slot servers: 1)")
    p.add_argument("--out", required=out_required, type=_jsonl_path, help="results file (AgentTraj JSONL, .jsonl)")
    p.add_argument("--no-progress", action="store_true", help="no progress at all (a log, without it, gets a line every tenth of the run)")
    p.set_defaults(default_split=default_split)


def _jsonl_path(text: str) -> str:
    if not text.endswith(".jsonl"):
        raise argparse.ArgumentTypeError(f"{text!r} must end in .jsonl: episodes are appended one a line")
    return text


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (a library's may run over several)."""
    return " ".join(str(exc).split())


def one_line_errors(
    servers_hint: Callable[[argparse.Namespace, list[str] | None], str] | None = None,
    resume_hint: Callable[[argparse.Namespace], str] | None = None,
    also: tuple[type[Exception], ...] = (),
):
    """A command's mistakes and lost dependencies (an env not installed, a model folder missing, a server or
    model endpoint down, a token refused) as ``error: ...`` saying what to do and exit status 1, not a
    traceback.  ``servers_hint`` / ``resume_hint`` say what to do when a server / the model endpoint is
    down (``eval``'s by default); ``also``: more exception types that are the user's to fix."""

    def decorate(run):
        @functools.wraps(run)
        def wrapped(args: argparse.Namespace) -> int:
            from agentenv.controller.openai_agent import AgentError, AgentSettingsError
            from agentenv.registry import UnknownEnv

            if getattr(args, "debug", False):  # agentenv --debug: the traceback itself
                return run(args)
            try:
                return run(args)
            except Unauthorized as exc:
                raise SystemExit(f"error: {one_line(exc)} (set AGENTENV_TOKEN to the servers' token)") from None
            except ServerHung as exc:  # it holds its port: "start it" would fail to bind
                raise SystemExit(f"error: {one_line(exc)}; stop that server's process and start it again, then "
                                 "rerun the same command: finished work is kept") from None
            except ServerUnreachable as exc:
                hint = (servers_hint or _servers_hint)(args, [exc.env] if exc.env else None)
                raise SystemExit(f"error: {one_line(exc)}; {hint}") from None
            except AgentSettingsError as exc:  # no "rerun the same command": it needs other settings
                raise SystemExit(f"error: the model endpoint refused the settings: {one_line(exc)}") from None
            except AgentError as exc:
                raise SystemExit(f"error: the model endpoint failed: {one_line(exc)}; "
                                 f"{(resume_hint or _resume_hint)(args)}") from None
            except (UnknownEnv, ValueError, EnvError, *also) as exc:
                raise SystemExit(f"error: {one_line(exc)}") from None

        return wrapped

    return decorate


def start_servers_hint(envs: list[str]) -> str:
    """What to do when a server of one of ``envs`` does not answer."""
    from agentenv.registry import UnknownEnv, server_of

    try:
        servers = sorted({server_of(env) for env in envs})
    except UnknownEnv:
        servers = sorted(envs)
    return f"is its server up? start it with `agentenv up {' '.join(servers) or 'ENV'}`, give its --url, or run with --local"


def _servers_hint(args: argparse.Namespace, envs: list[str] | None = None) -> str:
    """What to do when the server of ``envs`` (default: any of the run's) does not answer during ``eval`` /
    ``collect``."""
    hint = start_servers_hint(envs or args.env)
    if getattr(args, "out", None) and Path(args.out).exists():  # it stopped during the run: say what is kept
        hint += f"; {_resume_hint(args)}"
    return hint


def _resume_hint(args: argparse.Namespace) -> str:
    return resume_advice(args.out)


def resume_advice(out: str | Path) -> str:
    """What a stopped run of results file ``out`` kept, and how to go on."""
    from agentenv.controller.evaluator import latest_episodes
    from agentenv.data.trajectory import read_trajectories

    out = Path(out)
    finished = latest_episodes(read_trajectories(out)) if out.exists() else []  # as the resume reads them
    return f"{len(finished)} episodes are finished in {out}; rerun the same command to resume"


def add_agent_options(p: argparse.ArgumentParser) -> None:
    """How the agent of ``--agent`` generates (eval, bench); :func:`agent_options` reads them."""
    p.add_argument("--max-new-tokens", type=_positive_int, default=512, help="reply token limit (hf, openai)")
    p.add_argument("--batch-size", type=_positive_int, help="generation batch (hf; default: --concurrency)")
    p.add_argument("--device", help="torch device (hf; default: cuda when available, else cpu)")
    p.add_argument("--api-key", help="API key (openai; default: $OPENAI_API_KEY)")
    p.add_argument("--max-retries", type=whole_number(0), default=5,
                   help="tries again of a failed model request, with backoff (openai)")
    p.add_argument("--request-timeout", type=seconds, default=120.0,
                   help="seconds a model request may take, its whole answer (up to twice that where the server "
                        "goes silent mid-answer; openai; a slow server needs more)")


def agent_options(args: argparse.Namespace) -> dict:
    """The options of :func:`agent_from_spec` from the command line (each agent takes those it knows)."""
    return {
        "max_new_tokens": args.max_new_tokens,
        "max_tokens": args.max_new_tokens,
        "batch_size": args.batch_size or args.concurrency,
        "concurrency": args.concurrency,
        "api_key": args.api_key,
        "device": args.device,
        "temperature": args.temperature,
        "seed": args.seed,
        "max_retries": args.max_retries,
        "timeout": args.request_timeout,
    }


@one_line_errors()
def run_eval(args: argparse.Namespace) -> int:
    from agentenv.controller.agents import agent_from_spec
    from agentenv.controller.evaluator import evaluate

    _expand_all(args)
    sources = env_sources(args.env, args)
    try:
        tasks = _tasks(sources, args)
        agent = agent_from_spec(args.agent, **agent_options(args))
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


@one_line_errors()
def run_collect(args: argparse.Namespace) -> int:
    from agentenv.controller.evaluator import evaluate
    from agentenv.controller.expert import ExpertAgent

    if (args.out is None) == (args.out_dataset is None):
        raise ValueError("give --out FILE.jsonl or --out-dataset DIR (one of them)")
    _expand_all(args)
    sizes = {}
    if args.out_dataset is not None:
        from agentenv.data.export import check_dataset_target, raw_path

        check_dataset_target(args.out_dataset)
        args.out = str(raw_path(args.out_dataset))
        if args.indices is None and args.sample is None and args.limit is None:
            sizes = _dataset_sizes(args.env)
    sources = env_sources(args.env, args)
    try:
        tasks = _tasks(sources, args, sizes)
        with ExpertAgent(concurrency=args.concurrency) as agent:

            def run():
                with _holding_dataset(args.out_dataset):  # across the evaluation and the dataset written from it
                    report = evaluate(
                        agent, tasks, args.out, concurrency=args.concurrency, max_rounds=args.max_rounds,
                        temperature=None, progress=not args.no_progress, sources=sources, title="collect",
                    )
                    if args.out_dataset is not None:
                        _write_dataset(args.out_dataset, tasks, agent.name)
                return report

            return _finish(args, run)
    finally:
        for source in sources.values():
            source.close()


def _holding_dataset(folder: Path | None):
    """Hold a dataset folder's results file, so a second collect into it is refused until this one has
    also written the dataset (one started in between replaced the shards under it)."""
    if folder is None:
        return contextlib.nullcontext()
    from agentenv.data.export import raw_path
    from agentenv.processes import held_by_this_run

    raw_path(folder).parent.mkdir(parents=True, exist_ok=True)
    return held_by_this_run(raw_path(folder), f"{folder} is being written by another collect: wait for it to end, "
                                              "or give another --out-dataset", nested=True)


def _expand_all(args: argparse.Namespace) -> None:
    """``--env all``: every installed env."""
    if args.env == ["all"]:
        from agentenv.registry import installed_envs

        args.env = installed_envs()


def _dataset_sizes(envs: list[str]) -> dict[str, int]:
    """Each env's standard number of dataset tasks (its class's ``dataset_size``)."""
    from agentenv.registry import env_class

    return {env: env_class(env).dataset_size for env in envs}


def _write_dataset(folder: Path, tasks: list, expert: str) -> None:
    """Turn every episode collected into the folder (the latest of each task: this run's and earlier runs',
    which may have named other envs or more tasks) into its dataset, and say what it holds."""
    from agentenv.data.export import raw_path, write_dataset
    from agentenv.data.trajectory import read_trajectories

    wanted = {f"{t.env}_{t.data_idx}" for t in tasks}
    latest = {t.item_id: t for t in read_trajectories(raw_path(folder))}
    earlier = Counter(t.split or "no" for item, t in latest.items() if item not in wanted)
    meta = json.loads(raw_path(folder).with_suffix(".meta.json").read_text())  # every env played into it
    versions = {env: str(info.get("version", "")) for env, info in (meta.get("envs") or {}).items()}
    counts = write_dataset(folder, latest.values(), expert=expert, env_versions=versions)
    listing = ", ".join(f"{env} {c['kept']}" for env, c in counts.items())
    kept = sum(c["kept"] for c in counts.values())
    splits = ", ".join(f"{n} of the {split} split" for split, n in sorted(earlier.items()))
    note = f"; from earlier runs into it, episodes of tasks this run did not name: {splits}" if earlier else ""
    print(f"{kept} trajectories in {folder} ({listing}){note}", file=sys.stderr)


@one_line_errors()
def run_compare(args: argparse.Namespace) -> int:
    from agentenv.controller.compare import compare, print_table
    from agentenv.data.trajectory import write_json

    if len(args.files) % 2:
        raise ValueError("give the files in pairs: BASE OTHER [BASE OTHER ...]")
    rows = compare(list(zip(args.files[::2], args.files[1::2], strict=True)))
    if str(args.json) == "-":  # for a pipe: the rows alone
        print(json.dumps(rows, indent=2))
        return 0
    print_table(rows)
    if args.json:
        write_json(args.json, rows)
    return 0


def _finish(args: argparse.Namespace, run) -> int:
    try:
        report = run()
    except KeyboardInterrupt:
        print(f"\ninterrupted: {_resume_hint(args)}", file=sys.stderr)
        return 130
    if report.errors:
        print(f"{report.errors} episode(s) failed on an environment error; {_resume_hint(args)}", file=sys.stderr)
        return 1
    return 0


def env_sources(envs: list[str], args: argparse.Namespace) -> dict[str, EnvSource]:
    """In-process envs for ``--local``, else HTTP servers at ``--url`` / the default URLs."""
    if args.local:
        if args.url:
            raise ValueError("--local and --url exclude each other")
        from agentenv.registry import env_class

        return {env: LocalEnv(env_class(env)) for env in envs}
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
        raise ValueError(f"--url given for env(s) not run: {', '.join(sorted(unknown))} (the envs run: "
                         f"{', '.join(envs)})")
    for url in shared + [u for urls in named.values() for u in urls]:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--url {url!r}: a server's URL starts with http://, e.g. http://127.0.0.1:36001")
    result = {}
    for env in envs:
        urls = named.get(env) or shared
        if not urls:
            from agentenv.registry import UnknownEnv, default_url

            try:
                urls = [default_url(env)]
            except UnknownEnv as exc:
                raise ValueError(f"{exc}; or give its server with --url") from None
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


def _tasks(sources: dict[str, EnvSource], args: argparse.Namespace, sizes: dict[str, int] | None = None) -> list:
    """The run's tasks over every env (:func:`~agentenv.controller.selection.select_tasks`; ``sizes``: a
    sample size per env instead of ``--sample``); a selection that reaches outside the default split is
    announced on stderr."""
    from agentenv.controller.evaluator import EvalTask
    from agentenv.controller.selection import select_tasks

    tasks = []
    for env, source in sources.items():
        chosen = select_tasks(
            env, source, default_split=args.default_split, split=args.split, indices=args.indices,
            sample=(sizes or {}).get(env, args.sample or 0), limit=args.limit or 0, seed=getattr(args, "seed", 0),
        )
        asked = args.sample if env not in (sizes or {}) and not args.limit else 0
        if asked and asked > len(chosen.indices):  # it played them all and said nothing
            chosen.warnings.append(f"{env}: --sample {asked} is more than the {len(chosen.indices)} tasks chosen: all play")
        for warning in chosen.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        tasks += [EvalTask(env, getattr(source, "base_urls", []), i) for i in chosen.indices]
    return tasks
