"""Evaluate an agent over environment tasks: one JSONL line per finished episode, resumable, and a table.

Results go to ``out_path`` (AgentTraj JSONL, appended and flushed per episode), so a killed run resumes:
a rerun with the same arguments skips every (item id, sample) already in the file.  Beside it:
``<stem>.meta.json`` (agent, temperature, seed, max rounds, the prompt, the runs so far) and
``<stem>.report.json`` / ``<stem>.report.md`` (mean normalised score and success rate per env and task type).
"""

from __future__ import annotations

import json
import numbers
import os
import sys
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode
from agentenv.controller.expert import ExpertAgent
from agentenv.controller.progress import LiveProgress
from agentenv.controller.report import EvalReport, build_report, normalised
from agentenv.controller.rollout import Rollout, RolloutTask
from agentenv.controller.selection import check_served
from agentenv.controller.sources import EnvSource, RemoteEnv
from agentenv.data.trajectory import Trajectory, append_trajectory, read_trajectories, write_json
from agentenv.env import info_splits
from agentenv.processes import held_by_this_run, still_held


@dataclass(frozen=True)
class EvalTask:
    """One task to evaluate: an env, the server(s) serving it, and the task index."""

    env: str
    base_urls: Sequence[str] | str
    data_idx: int

    def __post_init__(self) -> None:  # a numpy integer from a sampled array is an index too (JSON refuses it)
        if isinstance(self.data_idx, bool) or not isinstance(self.data_idx, numbers.Integral):
            raise TypeError(f"EvalTask({self.env!r}, ...): a task index is an integer, not {self.data_idx!r}")
        object.__setattr__(self, "data_idx", int(self.data_idx))


def evaluate(
    agent: Agent,
    tasks: Iterable[EvalTask],
    out_path: str | os.PathLike,
    *,
    concurrency: int = 16,
    max_rounds: int | Mapping[str, int] | None = None,
    temperature: float | None = 0.0,
    seed: int = 0,
    samples_per_task: int = 1,
    progress: bool = True,
    print_table: bool = True,
    sources: Mapping[str, EnvSource] | None = None,
    title: str = "eval",
) -> EvalReport:
    """Run ``agent`` on every task ``samples_per_task`` times; append the trajectories to ``out_path``.

    ``max_rounds=None`` takes each env's own limit from its ``/info``.  ``temperature`` and ``seed`` apply to
    every episode (``temperature=None`` leaves the agent's own); each episode's seed is derived from
    ``seed``, its item id and its sample index, so results do not depend on batching or concurrency.
    ``sources`` replaces the HTTP servers of the named envs (e.g. :class:`~agentenv.controller.sources.LocalEnv`);
    ``title`` begins the progress line.  Episodes that end on an environment error are not written (a rerun retries them) and are counted in
    the report's ``errors``; once no server of an env opens a session any more, the run stops with that
    :class:`~agentenv.protocol.ServerUnreachable` (what finished is kept).  Returns the report over every
    requested episode in the file, including ones finished by earlier runs.
    """
    out_path = Path(out_path)
    if out_path.suffix != ".jsonl":
        raise ValueError(f"results file {out_path} must end in .jsonl: episodes are appended one a line")
    if out_path.exists() and not out_path.is_file():  # a pipe would block the reading of what it holds
        raise ValueError(f"results file {out_path} is {'a folder' if out_path.is_dir() else 'no regular file'}: "
                         "give the path of a file")
    tasks = list({(t.env, t.data_idx): t for t in tasks}.values())  # the same task twice is one task
    if blocking := next((p for p in out_path.parents if p.exists() and not p.is_dir()), None):  # mkdir: "File exists"
        raise ValueError(f"results file {out_path}: {blocking} is a file, not a folder: give another path")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    # two runs into one file at once duplicated its episodes and lost records of its .meta.json
    busy = f"{out_path} is being written by another run: wait for it to end, or give another --out"
    with held_by_this_run(out_path, busy), _env_sources(tasks, sources) as envs:
        rollout = Rollout(agent, envs, concurrency=concurrency, max_rounds=max_rounds)
        infos = {env: rollout.info(env) for env in envs}
        _check_served(tasks, envs, infos)
        wanted = {(f"{t.env}_{t.data_idx}", k) for t in tasks for k in range(samples_per_task)}
        held = latest_episodes(_read(out_path))
        previous = [t for t in held if (t.item_id, _sample(t)) in wanted]
        done = {(t.item_id, _sample(t)) for t in previous}
        todo = [
            RolloutTask(t.env, t.data_idx, k, temperature, episode_seed(seed, f"{t.env}_{t.data_idx}", k))
            for t in tasks
            for k in range(samples_per_task)
            if (f"{t.env}_{t.data_idx}", k) not in done
        ]
        settings = {
            "agent": agent.settings(),
            "temperature": temperature,
            "seed": seed,
            "samples_per_task": samples_per_task,
            "max_rounds": {env: rollout.max_rounds(env) for env in envs},
            "concurrency": concurrency,
            "envs": {
                env: {
                    "instruction": info.get("instruction", ""),
                    "version": info.get("version", ""),
                    "reward_range": info.get("reward_range"),
                    "base_urls": getattr(envs[env], "base_urls", []),
                }
                for env, info in infos.items()
            },
        }
        meta_path = out_path.with_suffix(".meta.json")
        run_record = _record_run_start(
            meta_path, settings, n_tasks=len(wanted), n_todo=len(todo), reused=len(previous), held=len(held)
        )
        file_lost = False

        errors = 0
        recorded: list[Trajectory] = []  # this run's episodes, as written
        successes = sum(t.success for t in previous)
        live = LiveProgress(
            f"{title} {agent.name}", total=len(wanted), done=len(done), successes=successes, rollout=rollout,
            agent=agent, enabled=progress,
        )

        def record(ep: Episode) -> None:
            nonlocal errors, file_lost
            if not still_held(out_path):  # another run may write it now: this one must not add to it
                file_lost = True
                raise ValueError(
                    f"{out_path} was deleted or replaced while this run wrote it ({len(recorded)} episodes): the run "
                    "stops, as another run may write that path now. Run again to play what the file lacks"
                )
            if ep.stop_reason == "error":
                errors += 1
                live.write(f"[agentenv] {ep.item_id} (sample {ep.sample}): {ep.error}")
                return
            traj = ep.trajectory
            traj.meta.update(
                normalised_score=normalised(traj.reward, infos[ep.env]["reward_range"]),
                temperature=temperature,
                seed=seed,
            )
            append_trajectory(out_path, traj)
            recorded.append(traj)
            live.finished(traj.success)

        failure = None
        try:
            with live:
                rollout.run(todo, on_finish=record)
        except BaseException as exc:  # recorded in .meta.json, then raised: the caller says what to do
            failure = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"{type(exc).__name__}: {exc}"
            raise
        finally:
            try:
                if not file_lost:  # else the .meta.json beside it may be another run's now
                    _record_run_end(meta_path, run_record, errors, live.done - len(done), failure, rollout.env_capacity)
            except OSError as exc:  # the error that stopped the run (no descriptor or space left) comes first
                if failure is None:
                    raise
                print(f"[agentenv] {meta_path}: the run's end is not recorded: {exc.strerror or exc}", file=sys.stderr)
            for env, room in rollout.env_capacity.items():  # what --concurrency could not get: say so once
                print(
                    f"[agentenv] {env}: its servers had room for {room} sessions, so {room} of its episodes ran "
                    f"at once (--concurrency {concurrency}); `agentenv serve {env} --max-sessions N` holds more",
                    file=sys.stderr,
                )

        # the file as it now is (no other run writes it meanwhile), without reading every conversation again
        every = latest_episodes([*held, *recorded])
        mine = [t for t in every if (t.item_id, _sample(t)) in wanted]
        report = build_report(
            mine, {env: info["reward_range"] for env, info in infos.items()}, errors=errors, settings=settings
        )
        report_json, report_md = report.save(out_path.with_suffix(""))
        if len(every) > len(mine):  # the report (and its .report.json) leaves them out
            print(f"[agentenv] {out_path} also holds {len(every) - len(mine)} episodes this run did not ask for "
                  f"(other tasks or samples: earlier runs'); its report is of this run's {len(mine)}", file=sys.stderr)
        if print_table:
            report.print(title=f"{agent.name}: {out_path}")
            print(f"report: {report_md} (and {report_json.name})")
        return report


def collect(
    env: str,
    base_urls: Sequence[str] | str,
    indices: Iterable[int],
    out_path: str | os.PathLike,
    *,
    concurrency: int = 16,
    max_rounds: int | None = None,
    progress: bool = True,
    print_table: bool = True,
    sources: Mapping[str, EnvSource] | None = None,
) -> EvalReport:
    """Expert trajectories for ``indices`` of ``env`` (``source="expert"``), written like :func:`evaluate`.

    Every finished episode is written, with its ``success`` (``train bc --successes-only`` keeps the
    successful ones; a dataset folder, :func:`agentenv.data.export.write_dataset`, holds only those).
    """
    tasks = [EvalTask(env, base_urls, i) for i in indices]
    with ExpertAgent(concurrency=concurrency) as agent:
        return evaluate(
            agent, tasks, out_path, concurrency=concurrency, max_rounds=max_rounds, temperature=None,
            progress=progress, print_table=print_table, sources=sources, title="collect",
        )


def episode_seed(seed: int, item_id: str, sample: int) -> int:
    """A per-episode seed that depends only on the run's seed, the task and the sample index."""
    return zlib.crc32(f"{seed}:{item_id}:{sample}".encode()) & 0x7FFFFFFF


# --- helpers ---------------------------------------------------------------------------------------
@contextmanager
def _env_sources(tasks: list[EvalTask], given: Mapping[str, EnvSource] | None) -> Iterator[dict[str, EnvSource]]:
    """Each env's source: the ``given`` one, else a :class:`RemoteEnv` on the tasks' URLs, closed on exit."""
    urls: dict[str, list[str]] = {}
    for t in tasks:
        env_urls = urls.setdefault(t.env, [])
        for url in [t.base_urls] if isinstance(t.base_urls, str) else t.base_urls:
            if url not in env_urls:
                env_urls.append(url)
    envs: dict[str, EnvSource] = {}
    own: list[EnvSource] = []
    try:
        for env, env_urls in urls.items():
            if given and env in given:
                envs[env] = given[env]
            elif env_urls:
                envs[env] = RemoteEnv(env, env_urls)
                own.append(envs[env])
            else:
                raise ValueError(f"no server URL for env {env!r}")
        yield envs
    finally:
        for source in own:
            source.close()


def _sample(t: Trajectory) -> int:
    return int(t.meta.get("sample", 0))


def _read(path: Path) -> Iterable[Trajectory]:
    return read_trajectories(path) if path.exists() else []


def _check_served(tasks: list[EvalTask], envs: Mapping[str, EnvSource], infos: Mapping[str, dict[str, Any]]) -> None:
    """Refuse (``ValueError``) a task the env does not serve before anything plays (each rerun played it
    again, an env error every time): those outside its splits are asked of the env."""
    for env, source in envs.items():
        splits = info_splits(infos[env]).values()
        outside = [t.data_idx for t in tasks if t.env == env and not any(t.data_idx in r for r in splits)]
        if outside:
            check_served(source, outside)


def latest_episodes(trajectories: Iterable[Trajectory]) -> list[Trajectory]:
    """One trajectory per (item id, sample index): the last written (a resumed run may append a newer one)."""
    by_key = {(t.item_id, _sample(t)): t for t in trajectories}
    return list(by_key.values())


def _record_run_start(
    meta_path: Path, settings: dict[str, Any], *, n_tasks: int, n_todo: int, reused: int = 0, held: int = 0
) -> dict[str, Any]:
    """Open this run's record in ``.meta.json`` and return what it wrote.  A file holding ``held`` finished
    episodes (``reused`` of them this run's tasks) played with other settings (agent, sampling, round limits)
    is refused, whichever tasks they were: the file and its report would then hold two agents' episodes under
    one's settings."""
    results = meta_path.with_suffix("").with_suffix(".jsonl")
    if held and not meta_path.exists():  # nothing says how they were played: they could be any agent's
        raise ValueError(
            f"{results} holds {held} finished episodes but no {meta_path.name} saying how they were played: give "
            "another --out (or remove the file to start over)"
        )
    try:
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        if not isinstance(meta, dict):
            raise ValueError(f"a JSON {type(meta).__name__}, not an object")
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"{meta_path} is not a run's record ({exc}): give another --out, or remove it") from None
    changed = _changed_since(meta, settings)
    if held and changed:
        raise ValueError(
            f"{results} holds {held} finished episodes of a run with "
            f"{'; '.join(changed)}: this run's would be mixed with them under its settings. Give another --out "
            "(or remove the file and its .meta.json to start over)"
        )
    unrecorded = sorted(set(settings["agent"]) - set(meta["agent"])) if held and "agent" in meta else []
    if unrecorded:  # a file of an earlier version: claim nothing for the episodes it holds
        print(f"[agentenv] warning: {results}: its {held} episodes were written before results recorded the agent's "
              f"{', '.join(unrecorded)}; nothing can check that they match this run's", file=sys.stderr)
        settings = settings | {"agent": {k: v for k, v in settings["agent"].items() if k not in unrecorded}}
    if reused and meta.get("samples_per_task", settings["samples_per_task"]) != settings["samples_per_task"]:
        print(f"[agentenv] {meta_path}: samples per task {meta['samples_per_task']} -> {settings['samples_per_task']}",
              file=sys.stderr)
    runs = meta.get("runs", [])
    run = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), "episodes_requested": n_tasks, "episodes_to_run": n_todo}
    runs.append(run)
    # an env this run leaves out keeps its recorded settings: a later run of it is checked against them
    per_env = {key: {**(meta.get(key) or {}), **settings[key]} for key in ("max_rounds", "envs")}
    record = settings | per_env | {"runs": runs}
    write_json(meta_path, record)
    return record


def _changed_since(meta: dict[str, Any], settings: dict[str, Any]) -> list[str]:
    """What changes the episodes between a results file's recorded settings and a new run's: the agent
    (but its endpoint's URL, and the name of a local model whose weights are the same), temperature, seed
    (unless both are greedy) and the round limit of an env both played."""
    changed = []
    greedy = meta.get("temperature") == 0 and settings["temperature"] == 0  # greedy decoding ignores the seed
    ignored = {"url", "seed"} if greedy else {"url"}
    weights = (meta.get("agent") or {}).get("weights")
    if weights and weights == settings["agent"].get("weights"):  # one model, its folder named otherwise (./m, /x/m)
        ignored.add("name")
    agent = {k: v for k, v in (meta.get("agent") or {}).items() if k not in ignored}
    # a setting the file does not record (written before the agent reported it) cannot be compared
    now = {k: v for k, v in settings["agent"].items() if k not in ignored and k in agent}
    if "agent" in meta and agent != now:
        changed.append(f"agent {agent} (now {now})")
    for name in ("temperature", "seed"):
        if name == "seed" and greedy:
            continue
        if name in meta and meta[name] != settings[name]:
            changed.append(f"{name} {meta[name]!r} (now {settings[name]!r})")
    rounds = meta.get("max_rounds") or {}
    for env, limit in settings["max_rounds"].items():
        if env in rounds and rounds[env] != limit:
            changed.append(f"max rounds {rounds[env]} for {env} (now {limit})")
    return changed


def _record_run_end(
    meta_path: Path, started: dict[str, Any], errors: int, finished: int, failure: str | None, capacity: dict[str, int]
) -> None:
    """Close this run's record in ``.meta.json`` (``started``: what :func:`_record_run_start` wrote): episodes
    it finished, episodes lost to env errors, what stopped it when it did not end by itself (an interrupt, a
    model endpoint that failed), and the envs whose full servers held fewer episodes at once than the run's
    concurrency."""
    run = started["runs"][-1]
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:  # removed while the run wrote: its episodes still need their settings beside them
        print(f"[agentenv] {meta_path} was removed while this run wrote its results: written again as it was "
              "at the run's start, with this run's end", file=sys.stderr)
        meta = started
    ended = {"ended": time.strftime("%Y-%m-%dT%H:%M:%S"), "episodes_finished": finished, "errors": errors}
    meta["runs"][-1] = run | ended | ({"stopped_by": failure} if failure else {}) | (
        {"env_capacity": dict(capacity)} if capacity else {}
    )
    write_json(meta_path, meta)
