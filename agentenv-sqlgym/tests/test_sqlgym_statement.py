"""The SQL of a reply, and the parser's check that only one read-only query goes through."""

import pytest
from agentenv_sqlgym.statement import MAX_SQL_CHARS, refusal, sql_of_reply


@pytest.mark.parametrize(
    ("reply", "sql"),
    [
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("I think:\n```sql\nSELECT 1\n```\nor better\n```SQL\nSELECT 2;\n```", "SELECT 2;"),
        ("```sql SELECT 3```", "SELECT 3"),  # on one line
        ("```\nSELECT 4\n```", "SELECT 4"),  # no language tag
        ("```sqlite\nSELECT 5\n```", "SELECT 5"),
        ("```sql\nSELECT 6\n``` and some ```python\nprint()\n```", "SELECT 6"),  # the sql block wins
        ("```sql\nSELECT 7", "SELECT 7"),  # an unclosed fence runs to the end
        ("```SELECT\n8```", "SELECT\n8"),  # a query's first line is no language tag
        ("  SELECT 9  ", "SELECT 9"),  # a bare action
    ],
)
def test_sql_is_taken_from_the_fenced_block_or_the_bare_action(reply, sql):
    assert sql_of_reply(reply) == sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "select name from t where a = 'x;y' order by 1 limit 3",
        "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
        "SELECT 1 UNION SELECT 2",
        "SELECT 1 INTERSECT SELECT 1 EXCEPT SELECT 2",
        "SELECT a FROM t WHERE b IN (SELECT b FROM u)",
        "SELECT CAST(SUM(IIF(a = 1, 1, 0)) AS REAL) * 100 / COUNT(*) FROM t WHERE strftime('%Y', d) = '2020'",
        "SELECT `a b`, \"c d\" FROM t WHERE x GLOB 'y*' AND z LIKE '%w%'",
        "SELECT 1;",
        "SELECT 1; -- the answer",  # a comment after the ";" (sqlglot parses it as a statement of its own)
    ],
)
def test_queries_pass(sql):
    assert refusal(sql) is None


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("INSERT INTO t VALUES (1)", "INSERT statement"),
        ("UPDATE t SET a = 1", "UPDATE statement"),
        ("DELETE FROM t", "DELETE statement"),
        ("DROP TABLE t", "DROP statement"),
        ("CREATE TABLE x (a)", "CREATE statement"),
        ("ALTER TABLE t ADD b", "ALTER statement"),
        (
            "REPLACE INTO t VALUES (1)",
            ("REPLACE statement", "does not parse"),
        ),  # sqlglot < 25 cannot parse it
        ("ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH statement"),
        ("DETACH x", "DETACH statement"),
        ("PRAGMA user_version = 5", "PRAGMA statement"),
        ("PRAGMA journal_mode = WAL", "PRAGMA statement"),
        ("VACUUM", "VACUUM statement"),
        ("BEGIN", "statement"),
        ("WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a", "INSERT statement"),
        ("SELECT * INTO x FROM t", "SELECT INTO statement"),
        ("SELECT load_extension('/tmp/evil.so')", "load_extension"),
        ("SELECT 1; DROP TABLE t", "one statement"),
        ("SELECT 1; SELECT 2", "this reply has 2"),
        ("", "no SQL found"),
        ("   \n ", "no SQL found"),
        ("SELECT FROM WHERE (", "does not parse"),
        ("(" * 5000, "does not parse"),
        ("SELECT 1 -- \x00", "NUL"),
        ("SELECT " + "1 + " * MAX_SQL_CHARS + "1", "characters long"),
        ("Thought: I am not sure.", "does not parse"),
        ("Thought: hi", "not a query"),
    ],
)
def test_everything_else_is_refused_with_a_reason(sql, why):
    reason = refusal(sql)
    assert reason is not None and any(part in reason for part in (why if isinstance(why, tuple) else (why,)))
