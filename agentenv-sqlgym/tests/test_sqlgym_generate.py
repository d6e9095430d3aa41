"""The generated task set: its databases, its questions and splits, and how it is built and cached."""

import json
import sqlite3
import stat
import subprocess
import sys
from collections import Counter
from contextlib import closing

import pytest
from agentenv_sqlgym import SqlGymEnv
from agentenv_sqlgym.database import ReadOnlyDatabase, same_rows
from agentenv_sqlgym.generate.build import (
    SEED,
    build_database,
    database_file,
    draw_questions,
    split_questions,
)
from agentenv_sqlgym.generate.cache import key
from agentenv_sqlgym.generate.domains import DOMAINS
from agentenv_sqlgym.generate.spec import DIFFICULTIES, KINDS
from agentenv_sqlgym.tasks import GENERATED_START, catalog


@pytest.fixture(scope="module")
def built():
    found = catalog(SqlGymEnv.bird_path, SqlGymEnv.cache_root)
    return found.folder, found.generated


def test_the_set_has_2560_questions_in_fixed_disjoint_splits(built):
    _, records = built
    assert len(records) == 2560 >= 2000
    assert SqlGymEnv.splits == {"train": range(20000, 21920), "dev": range(21920, 22176), "test": range(22176, 22560)}
    for split, ids in SqlGymEnv.splits.items():
        indices = [i - GENERATED_START for i in ids]  # the set's records, by their place in it
        assert {records[i]["split"] for i in indices} == {split}
        assert {r["difficulty"] for r in (records[i] for i in indices)} == set(DIFFICULTIES)
        assert {r["kind"] for r in (records[i] for i in indices)} == set(KINDS)
        assert Counter(records[i]["db"] for i in indices) == {d.name: len(indices) // 8 for d in DOMAINS}
    assert len({r["question"] for r in records}) == len(
        records
    )  # no question repeats, within or across splits


def test_eight_domains_of_related_tables_with_nulls_and_dates(built):
    folder, _ = built
    assert len(DOMAINS) >= 8
    for domain in DOMAINS:
        path = database_file(folder, domain.name)
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)  # a read-only file
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                )
            ]
            assert len(tables) >= 4
            foreign_keys = sum(len(db.execute(f"PRAGMA foreign_key_list({t})").fetchall()) for t in tables)
            assert foreign_keys >= 3 and db.execute("PRAGMA foreign_key_check").fetchall() == []
            assert max(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables) >= 3000
            columns = [(t, c[1]) for t in tables for c in db.execute(f"PRAGMA table_info({t})")]
            nulls = [
                c for t, c in columns if db.execute(f"SELECT 1 FROM {t} WHERE {c} IS NULL LIMIT 1").fetchone()
            ]
            dates = [
                c
                for t, c in columns
                if db.execute(f"SELECT {c} FROM {t} LIMIT 1").fetchone()[0].__class__ is str
                and db.execute(
                    f"SELECT COUNT(*) FROM {t} WHERE {c} GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'"
                ).fetchone()[0]
                > 0
            ]
            assert nulls and dates, domain.name


def test_every_gold_result_is_non_empty_and_differs_from_its_near_miss(built):
    folder, records = built
    databases = {d.name: ReadOnlyDatabase(database_file(folder, d.name)) for d in DOMAINS}
    try:
        for record in records:
            db = databases[record["db"]]
            gold, near = db.run(record["sql"]), db.run(record["near_miss"])
            assert gold.ok and gold.rows and not gold.capped, record
            assert near.ok and not same_rows(near.rows, gold.rows), record
    finally:
        for db in databases.values():
            db.close()


def test_a_domain_rebuilt_from_the_seed_is_the_same(built, tmp_path):
    """Deterministic from a seed: the football database and its questions, built again, equal the cached ones."""
    folder, records = built
    football = next(d for d in DOMAINS if d.name == "football")
    path = tmp_path / "football.sqlite"
    build_database(football, path, SEED)
    with (
        closing(sqlite3.connect(path)) as again,
        closing(sqlite3.connect(database_file(folder, "football"))) as cached,
    ):
        assert list(again.iterdump()) == list(cached.iterdump())
    with ReadOnlyDatabase(path) as db:
        splits = split_questions(draw_questions(football, db, SEED), "football", SEED)
    for split, drafts in splits.items():
        cached_questions = [r["question"] for r in records if r["db"] == "football" and r["split"] == split]
        assert [d.question for d in drafts] == cached_questions


BUILD_ONE_DOMAIN = """
import json, sys
from pathlib import Path
from agentenv_sqlgym.generate.cache import task_set
from agentenv_sqlgym.generate.domains import DOMAINS
folder = task_set(Path(sys.argv[1]), domains=tuple(d for d in DOMAINS if d.name == "football"))
print(json.loads((folder / "manifest.json").read_text())["build_id"])
"""


def test_two_processes_building_at_once_build_once(tmp_path):
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD_ONE_DOMAIN, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300)[0].strip() for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert outputs[0] == outputs[1] and outputs[0]  # both read the one build
    football = tuple(d for d in DOMAINS if d.name == "football")
    assert sorted(p.name for p in tmp_path.iterdir()) == [key(SEED, football), f"{key(SEED, football)}.lock"]
    manifest = json.loads((tmp_path / key(SEED, football) / "manifest.json").read_text())
    assert manifest["questions"] == 320 and manifest["domains"] == ["football"]
