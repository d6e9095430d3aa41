"""The read-only connection on its own, below the parser's check: what SQLite itself refuses or stops."""

import hashlib
import sqlite3
import subprocess
import sys

import pytest
from agentenv_sqlgym.database import MAX_VALUE_BYTES, GoldResults, ReadOnlyDatabase, format_rows, same_rows


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


def test_the_layers_below_the_authorizer_refuse_writes_on_their_own(db_file):
    """Without the authorizer, the read-only file still refuses a write to it, and ``query_only`` alone
    refuses what the read-only file allows: a temporary table, which lives outside the file."""
    before = digest(db_file)
    with ReadOnlyDatabase(db_file) as db:
        db.connection.set_authorizer(None)
        for sql in ["INSERT INTO t VALUES (99999, 'x')", "CREATE TEMP TABLE u (a)"]:
            assert "attempt to write a readonly database" in db.run(sql).error
        assert db.run("SELECT COUNT(*) FROM t").rows == [(5000,)]
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


def test_closing_while_a_query_runs_stops_the_query_before_the_connection_closes(db_file):
    """A session that ran past the server's deadline is closed from another thread while its query runs:
    closing the connection under the query crashed the process in sqlite (SIGSEGV) or failed the query
    with a closed database.  Run in a process of its own, so that a crash fails this test alone."""
    script = f"""
import threading, time
from agentenv_sqlgym.database import ReadOnlyDatabase
for _ in range(20):
    db = ReadOnlyDatabase({str(db_file)!r}, time_limit_s=60)
    out = []
    query = threading.Thread(target=lambda: out.append(db.run("SELECT COUNT(*) FROM t AS x, t AS y, t AS z")))
    query.start()
    time.sleep(0.05)
    db.close()
    query.join(10)
    assert not query.is_alive() and out[0].interrupted and not out[0].ok, out
    after = db.run("SELECT 1")
    assert after.interrupted and after.error == "the database was closed", after
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-3000:]


def test_a_gold_result_a_close_interrupted_is_not_remembered(db_file):
    """A gold query stopped by its session's close answered that task "gold_failed" for the process's life."""
    gold = GoldResults()
    closed = ReadOnlyDatabase(db_file)
    closed.close()
    assert gold.get(closed, "SELECT COUNT(*) FROM t", time_limit_s=5, row_cap=10).interrupted
    with ReadOnlyDatabase(db_file) as db:
        assert gold.get(db, "SELECT COUNT(*) FROM t", time_limit_s=5, row_cap=10).rows == [(5000,)]


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
