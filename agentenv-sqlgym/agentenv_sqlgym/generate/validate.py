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
    for what, wrong in (("the near miss", draft.near_miss), *(("a wrong query", w) for w in draft.wrong)):
        same = _same_as(database, wrong, distinct)
        if same is None:
            return f"{what} failed: {wrong}"
        if same:
            return f"{what} gives the gold rows: {wrong}"
    if draft.ranking is not None:
        ranking, k = draft.ranking
        keys = database.run(ranking, time_limit_s=TIME_LIMIT_S, row_cap=k + 1).rows
        if len(keys) > k and keys[k - 1] == keys[k]:
            return "the LIMIT cuts through a tie"
    refused = refusal(draft.sql)
    if refused:
        return f"gold refused: {refused}"
    return None


def _run(database: ReadOnlyDatabase, sql: str) -> QueryResult:
    return database.run(sql, time_limit_s=TIME_LIMIT_S, row_cap=100_000)


def _same_as(database: ReadOnlyDatabase, sql: str, gold: set) -> bool | None:
    """Whether ``sql``'s rows, as a set, are ``gold`` (``None`` if it fails).  The first rows often settle
    it (a row outside the gold set), so a long result is only read in full when they do not."""
    first = database.run(sql, time_limit_s=TIME_LIMIT_S, row_cap=4 * len(gold) + 10)
    if not first.ok:
        return None
    if not first.capped or not set(first.rows) <= gold:
        return set(first.rows) == gold
    return same_rows(_run(database, sql).rows, list(gold))
