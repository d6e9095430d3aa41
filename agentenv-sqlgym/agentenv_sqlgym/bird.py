"""The real BIRD benchmark, read from its own layout when a user has it.

    <root>/train/train.json   <root>/train/train_databases/<db_id>/<db_id>.sqlite
    <root>/dev/dev.json       <root>/dev/dev_databases/<db_id>/<db_id>.sqlite

Each JSON file is a list of questions with ``db_id``, ``question``, ``evidence`` and ``SQL`` (dev also has
``difficulty``).  As in AgentGym, train question ``i`` is item ``i`` and dev question ``j`` is item
``9428 + j``: the real files give 0-9427 and 9428-10961.  Either half may be absent.
"""

from __future__ import annotations

import functools
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: split name, BIRD's folder name, and the item id of its first question (AgentGym's)
MODES = {"train": ("train", 0), "dev": ("dev", 9428)}
REQUIRED = ("db_id", "question", "SQL")


def questions_file(root: Path, mode: str) -> Path:
    return Path(root) / mode / f"{mode}.json"


def database_path(root: Path, mode: str, db_id: str) -> Path:
    return Path(root) / mode / f"{mode}_databases" / db_id / f"{db_id}.sqlite"


@functools.lru_cache(maxsize=8)
def _questions(path: Path) -> tuple[dict[str, Any], ...]:
    """A BIRD question file, checked: a list of objects with the fields a task needs."""
    with open(path, encoding="utf-8") as file:
        items = json.load(file)
    if not isinstance(items, list):
        raise ValueError(f"{path}: a BIRD question file is a JSON list, not {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in REQUIRED):
            raise ValueError(f"{path}: question {i} lacks one of {REQUIRED} as text")
        if "/" in item["db_id"] or "\\" in item["db_id"] or item["db_id"] in ("", ".", ".."):
            raise ValueError(f"{path}: question {i} names no plain database id: {item['db_id']!r}")
    return tuple(items)


def splits(root: Path) -> dict[str, range]:
    """The BIRD splits present under ``root``; an unreadable folder gives none, with a warning (this runs
    when the env class is imported, which must not fail; loading the tasks then says what is wrong)."""
    found: dict[str, range] = {}
    files = 0
    for split, (mode, start) in MODES.items():
        path = questions_file(root, mode)
        if not path.is_file():
            continue
        files += 1
        try:
            count = len(_questions(path))
        except (OSError, ValueError) as exc:
            warnings.warn(f"BIRD {mode} questions not served: {exc}", stacklevel=2)
            continue
        if split == "train" and count > MODES["dev"][1]:
            warnings.warn(
                f"{path} has {count} questions; AgentGym's ids leave room for 9428: not served", stacklevel=2
            )
            continue
        found[split] = range(start, start + count)
    if not files:
        warnings.warn(
            f"no BIRD questions under {root} (expected train/train.json or dev/dev.json)", stacklevel=2
        )
    return found


@dataclass(frozen=True)
class BirdItem:
    """One BIRD question: its folder (``train`` / ``dev``), its record, and its database file."""

    mode: str
    record: dict[str, Any]
    db_path: Path


class Bird:
    """The questions of a BIRD folder, by AgentGym item id."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.halves: dict[str, tuple[int, tuple[dict[str, Any], ...]]] = {}
        for mode, start in MODES.values():
            path = questions_file(self.root, mode)
            if path.is_file():
                self.halves[mode] = (start, _questions(path))
        if not self.halves:
            raise FileNotFoundError(
                f"no BIRD questions under {self.root} (expected train/train.json or dev/dev.json)"
            )

    def item(self, index: int) -> BirdItem | None:
        for mode, (start, items) in self.halves.items():
            if start <= index < start + len(items):
                record = items[index - start]
                return BirdItem(mode, record, database_path(self.root, mode, record["db_id"]))
        return None


def load(root: Path) -> Bird:
    return Bird(root)
