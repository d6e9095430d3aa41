"""SQLGym's tasks by index: the generated set, or the real BIRD under AgentGym's item ids.

A server serves one task set.  Without ``AGENTENV_SQLGYM_BIRD_PATH`` it is the generated one:

| split | indices |
|---|---|
| train | 20000 .. 21919 |
| dev | 21920 .. 22175 |
| test | 22176 .. 22559 |

With it, the indices are AgentGym's: BIRD train is 0 .. 9427 and BIRD dev 9428 .. 10961 (splits
``train`` and ``dev``, as far as the folder has them), as the design of record puts it: BIRD's item ids
when the real dataset is present.  The two ranges never overlap, so ``sqlgym_N`` names one task whichever
set a server serves.  ``/info`` names the task set a server serves (``task_set``).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from . import bird
from .generate.build import SPLIT_SIZES, database_file
from .generate.cache import task_set
from .generate.domains import DOMAINS

#: the first index of the generated set (past BIRD's 10,962 item ids, which the real data keeps)
GENERATED_START = 20_000


def generated_splits() -> dict[str, range]:
    """The generated set's fixed splits (every domain contributes its share to each)."""
    splits, start = {}, GENERATED_START
    for split, size in SPLIT_SIZES.items():
        splits[split] = range(start, start + size * len(DOMAINS))
        start += size * len(DOMAINS)
    return splits


def task_splits(bird_root: Path | None) -> dict[str, range]:
    """The splits served: BIRD's where a BIRD folder is given, else the generated set's."""
    return bird.splits(bird_root) if bird_root else generated_splits()


@dataclass(frozen=True)
class Task:
    """One question on one database, with its gold SQL."""

    index: int
    db_id: str
    db_path: Path
    question: str
    sql: str
    #: BIRD's external-knowledge hint ("evidence"); shown only where the env is asked to
    evidence: str = ""
    #: the result-table category: the kind of SQL (generated) or ``bird_<difficulty>``
    task_type: str = "sqlgym"
    difficulty: str = ""
    #: why the gold SQL answers the question (the expert's thought)
    thought: str = ""
    #: a plausible wrong query whose rows differ (generated tasks only)
    near_miss: str = ""


class Catalog:
    """The tasks of one configuration: BIRD's when a BIRD folder is given, else the generated set (built on
    first use under ``cache_root``)."""

    def __init__(self, bird_root: Path | None = None, cache_root: Path | None = None) -> None:
        self.bird = bird.load(bird_root) if bird_root else None
        self.folder = task_set(cache_root) if self.bird is None else None
        self.generated = (
            json.loads((self.folder / "questions.json").read_text(encoding="utf-8")) if self.folder else []
        )

    def task(self, index: int) -> Task:
        if self.bird is not None:
            return self._bird_task(index)
        if not 0 <= index - GENERATED_START < len(self.generated):
            raise IndexError(f"no generated SQLGym task {index}")
        record = self.generated[index - GENERATED_START]
        return Task(
            index=index,
            db_id=record["db"],
            db_path=database_file(self.folder, record["db"]),
            question=record["question"],
            sql=record["sql"],
            evidence=record["evidence"],
            task_type=record["kind"],
            difficulty=record["difficulty"],
            thought=record["thought"],
            near_miss=record["near_miss"],
        )

    def _bird_task(self, index: int) -> Task:
        found = self.bird.item(index)
        if found is None:
            raise IndexError(f"no BIRD task {index} under {self.bird.root}")
        record = found.record
        difficulty = str(record.get("difficulty") or "")
        evidence = str(record.get("evidence") or "")
        return Task(
            index=index,
            db_id=record["db_id"],
            db_path=found.db_path,
            question=record["question"],
            sql=record["SQL"],
            evidence=evidence,
            task_type=f"bird_{difficulty}" if difficulty else "bird",
            difficulty=difficulty,
            thought=(f"Using the hint ({evidence}), " if evidence else "")
            + f"I write the query on the {record['db_id']} tables that answers the question.",
        )


@functools.lru_cache(maxsize=8)
def catalog(bird_root: Path | None = None, cache_root: Path | None = None) -> Catalog:
    """The catalog of a configuration, loaded once per process."""
    return Catalog(bird_root, cache_root)
