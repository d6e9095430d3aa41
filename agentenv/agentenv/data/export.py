"""Trajectories as a Hugging Face ``datasets`` folder: parquet shards and a dataset card.

    DIR/README.md                          the card: which files ``load_dataset`` reads, counts, fields
    DIR/data/<env>-00000-of-00001.parquet  the shards of one env (rows of ``trajectory_features()``)
    DIR/.collect/trajectories.jsonl        the episodes as collected (``collect`` resumes from it)

``datasets.load_dataset(DIR)`` reads every env as one ``train`` split (the ``env`` column tells them
apart); ``load_dataset(DIR, "babyai")`` reads one env.  The trainers take ``DIR`` as ``--data``.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from agentenv.data.dataset import trajectory_features, trajectory_to_row
from agentenv.data.trajectory import Trajectory, naming_the_record, trajectory_order, write_text_atomic

#: rows per parquet shard
SHARD_ROWS = 5000
#: where ``collect --out-dataset DIR`` appends its episodes (hidden: ``load_dataset`` never reads it)
RAW_FILE = Path(".collect") / "trajectories.jsonl"
DATA_DIR = "data"


def raw_path(folder: str | os.PathLike) -> Path:
    """The JSONL file ``collect`` appends the episodes of a dataset folder to."""
    return Path(folder) / RAW_FILE


def is_dataset_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder this module wrote (parquet shards under ``data/``)."""
    return Path(path).is_dir() and any((Path(path) / DATA_DIR).glob("*.parquet"))


def check_dataset_target(folder: str | os.PathLike) -> None:
    """Refuse (``ValueError``) a folder that holds anything ``collect`` did not write there: writing a dataset
    replaces the folder's ``README.md`` and ``data/``, which would lose a user's own files."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file: --out-dataset takes a folder")
    if folder.exists() and not raw_path(folder).exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} holds files of its own, and a dataset is written there as README.md and data/: "
                         "give a new or empty folder, or one an earlier `agentenv collect --out-dataset` wrote")


def read_dataset_folder(path: str | os.PathLike, unscored_reward: float = 0.0) -> Iterator[Trajectory]:
    """The trajectories of a dataset folder, env by env (read with pyarrow: no ``datasets`` cache); rows
    without a score (another project's folder) get ``unscored_reward``."""
    import pyarrow.parquet as pq

    from agentenv.data.dataset import row_to_trajectory

    for shard in sorted((Path(path) / DATA_DIR).glob("*.parquet")):
        for number, row in enumerate(pq.read_table(shard).to_pylist(), 1):
            with naming_the_record(f"{shard}: row {number}"):
                trajectory = row_to_trajectory(row, unscored_reward)
            yield trajectory


def write_dataset(
    folder: str | os.PathLike,
    trajectories: Iterable[Trajectory],
    *,
    expert: str = "expert",
    env_versions: Mapping[str, str] | None = None,
    successes_only: bool = True,
) -> dict[str, dict[str, int]]:
    """Write ``trajectories`` as parquet shards per env plus the dataset card (replacing earlier shards).

    Unsuccessful episodes are left out unless ``successes_only`` is false; the card counts them.  Shards that
    already hold exactly these trajectories are left as they are.  Returns ``{env: {"episodes", "kept"}}``."""
    check_dataset_target(folder)
    by_env: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        by_env[t.env].append(t)
    folder = Path(folder)
    counts: dict[str, dict[str, int]] = {}
    stats: dict[str, dict[str, float]] = {}
    kept: dict[str, list[Trajectory]] = {}
    for env in sorted(by_env):
        # in task order, not the order episodes finished in: a dataset collected twice is the same rows
        kept[env] = sorted((t for t in by_env[env] if t.success or not successes_only), key=trajectory_order)
        counts[env] = {"episodes": len(by_env[env]), "kept": len(kept[env])}
        stats[env] = {"rounds": sum(t.meta.get("rounds", 0) for t in kept[env]) / max(len(kept[env]), 1)}
    if not _holds_rows(folder, [t for ts in kept.values() for t in ts]):
        _write_shards(folder, kept)
    splits = sorted({t.split for ts in kept.values() for t in ts} - {""})
    write_text_atomic(folder / "README.md", dataset_card(
        counts, stats, expert=expert, env_versions=env_versions or {}, successes_only=successes_only, splits=splits))
    return counts


def _holds_rows(folder: Path, trajectories: list[Trajectory]) -> bool:
    """Whether the folder's shards hold exactly these trajectories, in any order.  Then they are left as
    they are: a rerun that adds nothing changes no row's place (an export of an earlier version, in the
    order episodes finished, stays the data a BC checkpoint over it was saved on)."""
    if not is_dataset_folder(folder):
        return False

    def rows(ts: Iterable[Trajectory]) -> list[str]:
        return sorted(json.dumps(trajectory_to_row(t), sort_keys=True, ensure_ascii=False) for t in ts)

    try:
        return rows(read_dataset_folder(folder)) == rows(trajectories)
    except Exception:  # shards this version cannot read: written again
        return False


def _write_shards(folder: Path, kept: Mapping[str, list[Trajectory]]) -> None:
    """Each env's trajectories as its parquet shards under ``folder/data``, replacing the earlier ones."""
    import datasets
    import pyarrow.parquet as pq

    tmp = folder / (DATA_DIR + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for env, trajectories in kept.items():
        shards = max(1, -(-len(trajectories) // SHARD_ROWS))
        for k in range(shards):
            rows = [trajectory_to_row(t) for t in trajectories[k * SHARD_ROWS : (k + 1) * SHARD_ROWS]]
            table = datasets.Dataset.from_list(rows, features=trajectory_features())
            pq.write_table(table.data.table, tmp / f"{env}-{k:05d}-of-{shards:05d}.parquet")  # with the features
    # swapped by renames: a kill leaves the old shards whole, or none (a rerun writes them), never some of them
    old = folder / (DATA_DIR + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if (folder / DATA_DIR).exists():
        os.replace(folder / DATA_DIR, old)
    os.replace(tmp, folder / DATA_DIR)
    shutil.rmtree(old, ignore_errors=True)


def dataset_card(
    counts: Mapping[str, Mapping[str, int]],
    stats: Mapping[str, Mapping[str, float]],
    *,
    expert: str,
    env_versions: Mapping[str, str],
    successes_only: bool,
    splits: Iterable[str] = ("train",),
) -> str:
    """The README.md of a dataset folder: YAML configs (all envs, and one per env), then what it holds."""
    import yaml

    configs = [{"config_name": "all", "default": True, "data_files": [{"split": "train", "path": f"{DATA_DIR}/*.parquet"}]}]
    configs += [
        {"config_name": env, "data_files": [{"split": "train", "path": f"{DATA_DIR}/{env}-*.parquet"}]} for env in counts
    ]
    header = {"pretty_name": "AgentGym expert trajectories", "task_categories": ["text-generation"],
              "tags": ["agents", "agentgym", "trajectories"], "configs": configs}
    rows = "\n".join(
        f"| {env} | {env_versions.get(env, '')} | {c['episodes']} | {c['kept']} | {stats[env]['rounds']:.1f} |"
        for env, c in counts.items()
    )
    total = sum(c["kept"] for c in counts.values())
    kept = "successful episodes only" if successes_only else "every episode"
    splits = list(splits)
    where = f"the {' and '.join(splits)} split{'s' if len(splits) > 1 or len(counts) > 1 else ''} of " if splits else ""
    return f"""---
{yaml.safe_dump(header, sort_keys=False)}---

# AgentGym expert trajectories

{total} trajectories of the `{expert}` agent on {where}{len(counts)} environment{'s' if len(counts) != 1 else ''} ({kept}),
written by `agentenv collect --out-dataset` (agentenv {_version()}) on {datetime.date.today().isoformat()}.

| env | env version | episodes played | trajectories | mean rounds |
|---|---|---:|---:|---:|
{rows}

## Loading

```python
import datasets
every_env = datasets.load_dataset("PATH/TO/THIS/FOLDER", split="train")    # an `env` column tells them apart
one_env = datasets.load_dataset("PATH/TO/THIS/FOLDER", "{next(iter(counts), "ENV")}", split="train")
```

`agentenv train bc --data PATH/TO/THIS/FOLDER` trains on it directly.

## Fields

| field | type | meaning |
|---|---|---|
| `item_id` | string | `<env>_<task index>`, as AgentGym names tasks |
| `conversations` | list of `{{from, loss, value}}` | the instruction, `Ok.`, then observations (`human`) and ReAct replies (`gpt`); `loss` marks the turns trained on |
| `reward` | float | the episode's final score |
| `success` | bool | whether the score reaches the env's success score |
| `env` | string | the environment |
| `split` | string | the env's split the task is from |
| `source` | string | the agent that played it |
| `meta` | string (JSON) | `task_type`, `rounds`, `stop_reason`, the per-step `rewards`, the final observation |
"""


def _version() -> str:
    try:
        return version("agentenv")
    except PackageNotFoundError:
        return "unknown"
