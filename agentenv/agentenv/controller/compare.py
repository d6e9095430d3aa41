"""``agentenv compare``: how much of a success-rate difference between two agents is the luck of the tasks.

    agentenv compare BASE.jsonl OTHER.jsonl [BASE.jsonl OTHER.jsonl ...] [--json OUT]

Each pair of episode files (the evaluator's AgentTraj JSONL, greedy, one episode per task) holds two
agents' episodes on the same tasks.  Per pair, and per env within it, it prints both success rates, the
tasks only one of them solved, and the difference with its 95% interval over tasks (paired: Tango's score
interval from the tasks only one agent solved, :func:`~agentenv.controller.stats.paired_difference_interval`;
``all`` pools the tasks of every env, where ``bench``'s average weighs each env the same).  The interval says how far the difference could move on
another draw of tasks of the same kind; it says nothing about another training seed, which is what an
experiment's spread over seeds measures.
"""

from __future__ import annotations

import collections
import os
import statistics
import sys
from collections.abc import Iterable
from pathlib import Path

from rich.table import Table

from agentenv.controller.report import table_console
from agentenv.controller.stats import paired_difference_interval
from agentenv.data.trajectory import check_records_file, read_records


def successes(path: Path) -> dict[str, bool]:
    """``{item_id: success}`` of an episodes file (one episode per task)."""
    if not path.is_file():
        raise ValueError(f"{path}: {'a folder, not an' if path.is_dir() else 'no such'} episodes file")
    check_records_file(path, "give the results files of `agentenv eval` (or .json lists of episodes)")
    result: dict[str, bool] = {}
    for number, episode in enumerate(read_records(path, "episodes"), 1):  # JSONL, or a .json list
        if not isinstance(episode, dict) or not {"item_id", "success"} <= episode.keys():
            raise ValueError(f"{path}: record {number} is not an episode: it needs item_id and success")
        if episode["item_id"] in result:
            meta = episode.get("meta")
            sample = meta.get("sample", 0) if isinstance(meta, dict) else 0
            hint = ("it holds several samples per task (eval --samples): compare two greedy runs of one sample each"
                    if sample else "compare takes one episode per task")
            raise ValueError(f"{path}: record {number} plays {episode['item_id']} again; {hint}")
        if episode["success"] not in (True, False, None):  # bool("false") is True; as Trajectory reads it
            raise ValueError(f"{path}: record {number} has success {episode['success']!r}; it is true or false")
        result[episode["item_id"]] = bool(episode["success"])
    return result


def paired_difference(base: dict[str, bool], other: dict[str, bool]) -> dict[str, float]:
    """Success rates, one-sided wins and ``other - base`` with its 95% interval, over the shared tasks."""
    tasks = sorted(base.keys() & other.keys())
    if len(tasks) < 2:
        raise ValueError(f"the two files share {len(tasks)} task(s); a difference's interval needs 2 or more")
    diffs = [int(other[t]) - int(base[t]) for t in tasks]
    low, high = paired_difference_interval(diffs.count(-1), diffs.count(1), len(diffs))
    return {
        "tasks": len(tasks),
        "base": statistics.mean(int(base[t]) for t in tasks),
        "other": statistics.mean(int(other[t]) for t in tasks),
        "only_base": diffs.count(-1),
        "only_other": diffs.count(1),
        "difference": statistics.mean(diffs),
        "low": low,
        "high": high,
    }


def short_names(files: list[Path]) -> dict[Path, str]:
    """Each file's path below the files' common folder, without the file name when they all share it."""
    full = {f: f.resolve() for f in files}  # the names given may mix absolute and relative paths
    common = Path(os.path.commonpath([f.parent for f in full.values()]))
    same_name = len({f.name for f in files}) == 1
    return {f: str((full[f].parent if same_name else full[f]).relative_to(common)) for f in files}


def env_of(item_id: str) -> str:
    """The env of an AgentTraj item id (``babyai_12`` -> ``babyai``)."""
    return item_id.rpartition("_")[0] or item_id


def compare(pairs: list[tuple[Path, Path]]) -> list[dict[str, object]]:
    """One row per pair of files and env in them (and ``all`` where a pair holds several envs), over the
    tasks both files hold; the tasks only one holds, and an env with fewer than 2 shared tasks, are left
    out with a warning (a half-finished run against a finished one is compared on the half)."""
    rows = []
    for base_file, other_file in pairs:
        if Path(base_file).resolve() == Path(other_file).resolve():
            raise ValueError(f"{base_file} is compared with itself: give two agents' episode files")
        base, other = successes(base_file), successes(other_file)
        shared = base.keys() & other.keys()
        if not shared:
            raise ValueError(f"{base_file} and {other_file} share no task ({tasks_by_env(base)} against "
                             f"{tasks_by_env(other)}): compare two agents' episodes on the same tasks")
        for file, episodes in ((base_file, base), (other_file, other)):
            alone = {t: s for t, s in episodes.items() if t not in shared}
            if alone:
                _warn(f"{file}: {len(alone)} of its {len(episodes)} tasks are not in the other file "
                      f"({tasks_by_env(alone)}); left out")
        per_env = collections.Counter(env_of(t) for t in shared)
        for env in sorted(e for e, n in per_env.items() if n < 2):
            _warn(f"{base_file} and {other_file}, {env}: 1 shared task; a difference's interval needs 2 or more, left out")
        envs = sorted(e for e, n in per_env.items() if n >= 2)
        if not envs:
            raise ValueError(f"{base_file} and {other_file} share {len(shared)} task(s) ({tasks_by_env(shared)}); "
                             "a difference's interval needs 2 or more of one env")
        for env in envs + (["all"] if len(envs) > 1 else []):
            pooled = set(envs) if env == "all" else {env}
            row = paired_difference({t: s for t, s in base.items() if env_of(t) in pooled},
                                    {t: s for t, s in other.items() if env_of(t) in pooled})
            rows.append({"base_file": str(base_file), "other_file": str(other_file), "env": env, **row})
    return rows


def _warn(message: str) -> None:
    print(f"[agentenv] {message}", file=sys.stderr)


def tasks_by_env(item_ids: Iterable[str]) -> str:
    """``babyai: 8, maze: 4``: how many tasks of each env ``item_ids`` (a file's episodes, by id) name."""
    counts = collections.Counter(env_of(t) for t in item_ids)
    return ", ".join(f"{env}: {n}" for env, n in sorted(counts.items())) or "none"


def print_table(rows: list[dict[str, object]]) -> None:
    label = short_names([Path(f) for row in rows for f in (row["base_file"], row["other_file"])])
    table = Table(title="other - base, paired over tasks (all: every env's tasks pooled)")
    # a narrow terminal folds a cell, never cuts it ("0.…")
    for column in ("base", "other", "env"):
        table.add_column(column, overflow="fold")
    for column in ("tasks", "base %", "other %", "only base", "only other", "difference", "95% interval"):
        table.add_column(column, justify="right", overflow="fold")
    for row in rows:
        table.add_row(label[Path(row["base_file"])], label[Path(row["other_file"])], row["env"], str(row["tasks"]),
                      f"{row['base']:.1%}", f"{row['other']:.1%}", str(row["only_base"]), str(row["only_other"]),
                      f"{row['difference']:+.1%}", f"{row['low']:+.1%} – {row['high']:+.1%}")
    table_console().print(table)
