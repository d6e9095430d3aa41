"""AgentTraj files as a Hugging Face ``datasets.Dataset``.

Any mix of ``.json`` (a list, as AgentGym releases AgentTraj / AgentTraj-L) and ``.jsonl`` files (one
trajectory a line, as our evaluator writes them), and of dataset folders (``agentenv collect --out-dataset``:
parquet shards, :mod:`agentenv.data.export`), loads into one dataset with a fixed schema, so files with and
without our extra fields (``reward``, ``env``, ...) combine.  ``meta`` travels as a JSON string.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agentenv.data.trajectory import Trajectory, Turn, check_records_file, read_trajectories

PathLike = str | os.PathLike


def trajectory_features():
    """The ``datasets.Features`` of a trajectory row."""
    import datasets

    turn = {"from": datasets.Value("string"), "loss": datasets.Value("bool"), "value": datasets.Value("string")}
    return datasets.Features(
        {
            "item_id": datasets.Value("string"),
            "conversations": datasets.List(turn),
            "reward": datasets.Value("float64"),
            "success": datasets.Value("bool"),
            "env": datasets.Value("string"),
            "split": datasets.Value("string"),
            "source": datasets.Value("string"),
            "meta": datasets.Value("string"),
        }
    )


def trajectory_to_row(t: Trajectory) -> dict[str, Any]:
    d = t.to_json()
    d["meta"] = json.dumps(d.get("meta") or {}, ensure_ascii=False)
    return d


def row_to_trajectory(row: dict[str, Any], unscored_reward: float = 0.0) -> Trajectory:
    """One dataset row as a trajectory; a row without a score (no column, or null) gets ``unscored_reward``,
    as a JSON record does (:meth:`Trajectory.from_json`)."""
    d = {k: v for k, v in row.items() if not (k in ("reward", "success") and v is None)}
    if isinstance(d.get("meta"), str):
        d["meta"] = json.loads(d["meta"] or "{}")
    return Trajectory.from_json(d, unscored_reward)


#: the files an evaluation or Best-of-N run writes beside its trajectories: not trajectories
SIDE_FILES = (".meta.json", ".report.json", ".best_of_n.json")


def expand_paths(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """Files named directly, plus every ``*.json`` / ``*.jsonl`` inside a named folder (sorted), except the
    side files of evaluations (:data:`SIDE_FILES`)."""
    from agentenv.data.export import is_dataset_folder, raw_path

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        _warn_if_being_written(raw_path(p) if p.is_dir() else p)
        if p.is_dir() and raw_path(p).exists() and not is_dataset_folder(p):  # its shards not written yet
            raise ValueError(f"{p} is a dataset folder whose `agentenv collect --out-dataset` has not finished (the "
                             f"episodes so far are in {raw_path(p)}): rerun that collect to finish it")
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix in (".json", ".jsonl") and not q.name.endswith(SIDE_FILES))
            if not found and is_dataset_folder(p.parent):
                raise ValueError(f"{p} holds the shards of the dataset folder {p.parent}: give that folder")
            files += found
        elif p.exists():
            check_records_file(p, "give those, folders of them, or a dataset folder of `agentenv collect "
                                  "--out-dataset`", of="trajectories")
            files.append(p)
        else:
            raise FileNotFoundError(f"no such trajectory file: {p}")
    return files


_warned_of: set[Path] = set()


def _warn_if_being_written(path: Path) -> None:
    """Say (once per file) that an evaluation or collect is still writing ``path``: what it holds so far is
    read, and a finished training run records the files it read, so a rerun after it ends says so."""
    from agentenv.processes import held_by_another_run

    if path not in _warned_of and held_by_another_run(path):
        _warned_of.add(path)
        print(f"[agentenv] warning: {path} is being written by a run now: only the episodes it holds so far are "
              "read (wait for that run to end to read them all)", file=sys.stderr)


def trajectories_to_dataset(trajectories: Iterable[Trajectory]):
    """An in-memory ``datasets.Dataset`` with :func:`trajectory_features`."""
    import datasets

    return datasets.Dataset.from_list([trajectory_to_row(t) for t in trajectories], features=trajectory_features())


def iter_trajectories(paths: PathLike | Iterable[PathLike], unscored_reward: float = 0.0) -> Iterator[Trajectory]:
    """The trajectories of AgentTraj JSON / JSONL files, folders of them, and dataset folders written by
    ``agentenv collect --out-dataset`` (:mod:`agentenv.data.export`)."""
    from agentenv.data.export import is_dataset_folder, read_dataset_folder

    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        if is_dataset_folder(path):
            yield from read_dataset_folder(path, unscored_reward)
        else:
            for f in expand_paths(path):
                yield from read_trajectories(f, unscored_reward)


def load_trajectory_dataset(paths: PathLike | Iterable[PathLike]):
    """Load AgentTraj JSON / JSONL files, folders of them, or dataset folders into one ``datasets.Dataset``."""
    trajectories = list(iter_trajectories(paths))
    if not trajectories:
        names = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        raise ValueError(f"no trajectories in {', '.join(map(str, names))}")
    return trajectories_to_dataset(trajectories)


def dataset_to_trajectories(dataset) -> list[Trajectory]:
    return [row_to_trajectory(row) for row in dataset]


def conversation_turns(conversations: list[dict[str, Any]] | list[Turn]) -> list[Turn]:
    """Accept turns as :class:`Turn` objects or as AgentTraj dicts (``from`` / ``loss`` / ``value``)."""
    return [t if isinstance(t, Turn) else Turn.from_json(t) for t in conversations]
