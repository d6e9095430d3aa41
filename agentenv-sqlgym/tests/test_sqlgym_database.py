"""The read-only connection on its own, below the parser's check: what SQLite itself refuses or stops."""

import hashlib
import sqlite3

import pytest
from agentenv_sqlgym.database import MAX_VALUE_BYTES, ReadOnlyDatabase, format_rows, same_rows


@pytest.fixture(scope="module")
def db_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "t.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"row {i}") for i in range(5000)])
    return path


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (99999, 'x')",
        "UPDATE t SET b = 'x'",
        "DELETE FROM t",
        "DROP TABLE t",
        "CREATE TABLE u (a)",
        "CREATE TEMP TABLE u (a)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = WAL",
        "PRAGMA query_only = OFF",
        "VACUUM",
        "BEGIN",
        "SELECT load_extension('/nonexistent')",
    ],
)
def test_writes_attach_and_pragmas_fail_on_the_connection_itself(db_file, sql):
    before = digest(db_file)
    with ReadOnlyDatabase(db_file) as db:
        result = db.run(sql)
        assert not result.ok and result.rows == []
        assert db.run("SELECT COUNT(*) FROM t").rows == [(5000,)]  # the connection still works
    assert digest(db_file) == before


def test_a_runaway_query_is_stopped_at_its_time_limit(db_file):
    with ReadOnlyDatabase(db_file, time_limit_s=0.3) as db:
        forever = db.run(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT MAX(i) FROM n"
        )
        assert forever.timed_out and "time limit of 0.3 s" in forever.error
        cross = db.run("SELECT COUNT(*) FROM t AS x, t AS y, t AS z")
        assert cross.timed_out
        assert db.run("SELECT COUNT(*) FROM t").rows == [(5000,)]  # the next statement gets its own limit


def test_a_call_sqlite_cannot_interrupt_still_counts_as_past_its_limit(db_file):
    """SQLite checks the time between its own steps: a C function that runs long is not stopped, but a
    result that came after the limit is a timeout, not an answer."""
    with ReadOnlyDatabase(db_file, time_limit_s=0.05) as db:
        slow = db.run("SELECT length(printf('%.*c', 100000000, 'x'))")  # one call, about 0.4 s here
        assert slow.timed_out and not slow.ok and slow.rows == [] and "time limit of 0.05 s" in slow.error


def test_a_huge_result_is_capped(db_file):
    with ReadOnlyDatabase(db_file, row_cap=100) as db:
        result = db.run("SELECT * FROM t AS x, t AS y")  # 25 million rows
        assert result.ok and result.capped and len(result.rows) == 100
        assert "more than 100 rows (capped)" in format_rows(result)
        assert not db.run("SELECT * FROM t WHERE a < 100").capped


def test_no_value_may_grow_past_its_limit(db_file):
    with ReadOnlyDatabase(db_file) as db:
        assert "too big" in db.run(f"SELECT zeroblob({MAX_VALUE_BYTES + 1})").error
        assert "too big" in db.run(f"SELECT hex(zeroblob({MAX_VALUE_BYTES}))").error


def test_errors_are_results_not_exceptions(db_file):
    with ReadOnlyDatabase(db_file) as db:
        assert "no such table" in db.run("SELECT * FROM missing").error
        assert "one statement" in db.run("SELECT 1; SELECT 2").error
        assert db.run("SELECT 'a\x00b'").error  # a NUL in the text


def test_results_compare_as_sets():
    assert same_rows([(1, "a"), (2, "b"), (2, "b")], [(2, "b"), (1, "a")])
    assert not same_rows([(1, "a")], [(1, "a"), (2, "b")])
    assert not same_rows([("a", 1)], [(1, "a")])  # the columns' order counts
    assert same_rows([(1, None)], [(1.0, None)])


def test_a_missing_file_is_not_created(tmp_path):
    with pytest.raises(FileNotFoundError):
        ReadOnlyDatabase(tmp_path / "nope.sqlite")
    assert not (tmp_path / "nope.sqlite").exists()
