"""Building the generated task set: every domain's database, its questions, and the fixed splits.

``build(folder, seed)`` writes ``databases/<domain>.sqlite`` (read-only files), ``questions.json`` (one
record per task, in task-index order) and ``manifest.json`` (written last: its presence means the folder
is complete).  Everything follows from the seed, this module's :data:`GENERATOR_VERSION` and Faker's
version (its name pools), so the same three give the same tasks on every machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import time
import uuid
from collections.abc import Iterable
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Any

import faker

from ..database import ReadOnlyDatabase
from .domains import DOMAINS
from .families import FAMILIES, Ask
from .spec import Domain, Draft
from .validate import problem
from .values import vocabulary

#: bump when a change here changes the tasks: the cache keys on it
GENERATOR_VERSION = 1
#: the seed of the task set the env serves
SEED = 32
#: questions per domain, and how each domain's questions are split
SPLIT_SIZES = {"train": 240, "dev": 32, "test": 48}
QUESTIONS_PER_DOMAIN = sum(SPLIT_SIZES.values())
#: a family (or template) that fails this many drafts in a row is given up for the domain
GIVE_UP_AFTER = 40


def database_file(folder: Path, domain: str) -> Path:
    return folder / "databases" / f"{domain}.sqlite"


def build_database(domain: Domain, path: Path, seed: int) -> None:
    """Create and fill ``domain``'s database at ``path``, then make the file read-only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.executescript(domain.ddl)
        domain.populate(db, random.Random(f"{seed}:{domain.name}:data"), vocabulary(seed))
        db.commit()
        violations = db.execute("PRAGMA foreign_key_check").fetchall()
        if violations:
            raise RuntimeError(
                f"{domain.name}: {len(violations)} rows break a foreign key, e.g. {violations[0]}"
            )
        db.execute("ANALYZE")
        db.commit()
    path.chmod(0o444)


def draw_questions(
    domain: Domain, database: ReadOnlyDatabase, seed: int, n: int = QUESTIONS_PER_DOMAIN
) -> list[Draft]:
    """``n`` validated, distinct questions on ``domain``, drawn round-robin from every family and template."""
    ask = Ask(domain, database, random.Random(f"{seed}:{domain.name}:questions"))
    makers = [*FAMILIES, *domain.templates]
    misses = dict.fromkeys(makers, 0)
    kept: list[Draft] = []
    seen: set[str] = set()
    while len(kept) < n and makers:
        for maker in list(makers):
            draft = maker(ask)
            if draft is None or draft.question in seen or draft.sql in seen or problem(draft, database):
                misses[maker] += 1
                if misses[maker] >= GIVE_UP_AFTER:
                    makers.remove(maker)
                continue
            misses[maker] = 0
            seen.update((draft.question, draft.sql))
            kept.append(draft)
            if len(kept) == n:
                break
    if len(kept) < n:
        raise RuntimeError(f"{domain.name}: only {len(kept)} of {n} questions could be drawn")
    return kept


def split_questions(drafts: list[Draft], domain: str, seed: int) -> dict[str, list[Draft]]:
    """A domain's questions shuffled (by the seed) and cut into the fixed splits."""
    order = list(drafts)
    random.Random(f"{seed}:{domain}:splits").shuffle(order)
    splits, start = {}, 0
    for split, size in SPLIT_SIZES.items():
        splits[split] = order[start : start + size]
        start += size
    return splits


def interleave(per_domain: dict[str, dict[str, list[Draft]]]) -> Iterable[tuple[str, str, Draft]]:
    """``(split, domain, draft)`` in task-index order: split by split, the domains taking turns."""
    for split, size in SPLIT_SIZES.items():
        for i in range(size):
            for domain, splits in per_domain.items():
                yield split, domain, splits[split][i]


def build(folder: Path, seed: int = SEED, domains: tuple[Domain, ...] = DOMAINS) -> dict[str, Any]:
    """Write the whole task set into ``folder`` (which should not exist yet); returns the manifest."""
    start = time.perf_counter()
    per_domain: dict[str, dict[str, list[Draft]]] = {}
    for domain in domains:
        path = database_file(folder, domain.name)
        build_database(domain, path, seed)
        with ReadOnlyDatabase(path, time_limit_s=30) as database:
            per_domain[domain.name] = split_questions(
                draw_questions(domain, database, seed), domain.name, seed
            )
    records = [
        {"index": i, "split": split, "db": domain, **asdict(draft)}
        for i, (split, domain, draft) in enumerate(interleave(per_domain))
    ]
    text = json.dumps(records, indent=0, ensure_ascii=False)
    (folder / "questions.json").write_text(text, encoding="utf-8")
    manifest = {
        "generator": GENERATOR_VERSION,
        "seed": seed,
        "faker": faker.VERSION,
        "domains": [d.name for d in domains],
        "split_sizes": {split: size * len(domains) for split, size in SPLIT_SIZES.items()},
        "questions": len(records),
        "fingerprint": hashlib.sha256(text.encode()).hexdigest()[:16],
        "build_seconds": round(time.perf_counter() - start, 2),
        "build_id": f"{os.getpid()}-{uuid.uuid4().hex[:8]}",  # which build wrote it (not part of the tasks)
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest
