"""The checks a drafted question passes before it is kept.

Its gold query must run and give a result that is non-empty, not all NULL or zero, and small enough to
read (at most :data:`MAX_GOLD_ROWS` distinct rows).  The result must tell a wrong query from a right one:
the draft's near miss and each of its other wrong queries (the gold query with a condition left out)
must give other rows, and a ``LIMIT`` must not cut through a tie (another right query could keep the
other tied row).  Last, the gold query must pass the same read-only check an agent's query does, or the
expert could not answer with it.
"""

from __future__ import annotations

from ..database import QueryResult, ReadOnlyDatabase, same_rows
from ..statement import refusal
from .spec import Draft

MAX_GOLD_ROWS = 60
TIME_LIMIT_S = 10.0


def problem(draft: Draft, database: ReadOnlyDatabase) -> str | None:
    """Why ``draft`` may not be kept, or ``None``.  (Parsing costs the most, so it comes last.)"""
    gold = _run(database, draft.sql)
    if not gold.ok:
        return f"gold failed: {gold.error}"
    distinct = set(gold.rows)
    if not distinct:
        return "empty gold result"
    if len(distinct) > MAX_GOLD_ROWS:
        return f"gold result of {len(distinct)} rows"
    if all(value in (None, 0, "") for row in distinct for value in row):
        return "gold result is all NULL / zero"
    near = _run(database, draft.near_miss)
    if not near.ok:
        return f"near miss failed: {near.error}"
    if same_rows(near.rows, gold.rows):
        return "the near miss gives the gold rows"
    for wrong in draft.wrong:
        other = _run(database, wrong)
        if not other.ok:
            return f"a wrong query failed: {other.error}"
        if same_rows(other.rows, gold.rows):
            return f"a wrong query gives the gold rows: {wrong}"
    if draft.ranking is not None:
        ranking, k = draft.ranking
        keys = _run(database, ranking).rows
        if len(keys) > k and keys[k - 1] == keys[k]:
            return "the LIMIT cuts through a tie"
    refused = refusal(draft.sql)
    if refused:
        return f"gold refused: {refused}"
    return None


def _run(database: ReadOnlyDatabase, sql: str) -> QueryResult:
    return database.run(sql, time_limit_s=TIME_LIMIT_S, row_cap=100_000)
