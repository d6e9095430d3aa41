"""Running one query on a sqlite file that nothing can change.

:class:`ReadOnlyDatabase` is one connection, locked down in layers below :func:`~agentenv_sqlgym.statement.refusal`:

- opened with a ``file:...?mode=ro`` URI (SQLite itself refuses every write) and ``PRAGMA query_only``;
- an authorizer allows reading and calling functions only (no ATTACH, no PRAGMA, no write of any kind,
  no ``load_extension``), and no database may be attached at all (``SQLITE_LIMIT_ATTACHED`` is 0);
- one statement per call (Python's ``sqlite3`` refuses more), a time limit per statement (a progress
  handler interrupts the statement past its deadline), a cap on the rows and bytes fetched, and a cap on
  the size of any one value, so a query cannot build a gigabyte string.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .statement import FORBIDDEN_FUNCTIONS

#: SQLite virtual-machine instructions between two looks at the clock
PROGRESS_EVERY = 10_000
#: the largest string or blob a query may make (SQLite's own limit, lowered)
MAX_VALUE_BYTES = 1_000_000
#: the most bytes one result may hold (its rows written out), whatever its row count
MAX_RESULT_BYTES = 8_000_000

_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}


def _authorize(
    action: int, arg1: str | None, arg2: str | None, database: str | None, trigger: str | None
) -> int:
    """SQLite's authorizer: reading and calling (allowed) functions only."""
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in FORBIDDEN_FUNCTIONS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


@dataclass
class QueryResult:
    """What one query gave: its rows, or an error; ``capped`` when more rows existed than were kept."""

    columns: tuple[str, ...] = ()
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    capped: bool = False
    error: str | None = None
    timed_out: bool = False
    #: stopped because the database was closed meanwhile (a session ended under it): says nothing of the query
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class ReadOnlyDatabase:
    """One read-only connection to a sqlite file.  Calls are serialised by the caller (one session);
    :meth:`close` may come from another thread while a query runs (a session ended past its deadline): it
    interrupts the query and closes the connection once the query has let go of it."""

    def __init__(self, path: str | Path, *, time_limit_s: float = 5.0, row_cap: int = 10_000) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no database file at {self.path}")
        self.time_limit_s, self.row_cap = time_limit_s, row_cap
        self._deadline = float("inf")
        self._timed_out = False
        # closing a connection a query still runs on crashes sqlite; run() holds this while it uses it
        self._in_use = threading.Lock()
        self._closing = False
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        self.connection = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        try:
            self.connection.execute("PRAGMA query_only = ON")
            if hasattr(self.connection, "setlimit"):  # Python >= 3.11
                self.connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
                self.connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            self.connection.set_authorizer(_authorize)
            self.connection.set_progress_handler(self._past_deadline, PROGRESS_EVERY)
        except BaseException:
            self.connection.close()
            raise

    def _past_deadline(self) -> int:
        if self._closing:  # a close that came between run()'s look at it and the statement's start
            return 1
        if time.monotonic() > self._deadline:
            self._timed_out = True
            return 1  # a non-zero answer interrupts the statement
        return 0

    def run(self, sql: str, *, time_limit_s: float | None = None, row_cap: int | None = None) -> QueryResult:
        """Run one statement; never raises on a bad one (its error is in the result)."""
        limit = self.time_limit_s if time_limit_s is None else time_limit_s
        cap = self.row_cap if row_cap is None else row_cap
        with self._in_use:
            if self._closing:
                return QueryResult(error="the database was closed", interrupted=True)
            return self._run(sql, limit, cap)

    def _run(self, sql: str, limit: float, cap: int) -> QueryResult:
        start = time.monotonic()
        self._deadline, self._timed_out = start + limit, False
        result = QueryResult()
        try:
            cursor = self.connection.execute(sql)
            result.columns = tuple(d[0] for d in cursor.description or ())
            size = 0
            for row in cursor:
                if len(result.rows) >= cap or size > MAX_RESULT_BYTES:
                    result.capped = True
                    break
                result.rows.append(row)
                size += len(repr(row))  # a C-speed upper bound on the row's bytes
            cursor.close()
        except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
            result.rows, result.capped = [], False
            if self._closing:
                result.interrupted = True
                result.error = "the database was closed while the query ran"
            elif self._timed_out:
                result.timed_out = True
                result.error = f"the query ran past its time limit of {limit:g} s and was stopped"
            else:
                result.error = str(exc) or type(exc).__name__
        finally:
            self._deadline = float("inf")
        result.seconds = time.monotonic() - start
        if result.ok and result.seconds > limit:  # a long C function call, which SQLite cannot interrupt
            result.rows, result.capped, result.timed_out = [], False, True
            result.error = f"the query ran past its time limit of {limit:g} s"
        return result

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        with contextlib.suppress(sqlite3.ProgrammingError):  # closed already, by a close beside this one
            self.connection.interrupt()  # safe from any thread; a query running now stops at its next step
        with self._in_use:
            self.connection.close()

    def __enter__(self) -> ReadOnlyDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def same_rows(got: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> bool:
    """BIRD's rule: the rows as sets (order and duplicates ignored) are equal."""
    return set(got) == set(expected)


class GoldResults:
    """Gold query results, computed once per process for each (database, query); thread-safe, bounded."""

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self._results: OrderedDict[tuple[str, str], QueryResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, database: ReadOnlyDatabase, sql: str, *, time_limit_s: float, row_cap: int) -> QueryResult:
        key = (str(database.path), sql)
        with self._lock:
            if key in self._results:
                self._results.move_to_end(key)
                return self._results[key]
        result = database.run(sql, time_limit_s=time_limit_s, row_cap=row_cap)
        if result.interrupted:  # the session closed under it: the next one runs it again
            return result
        with self._lock:
            self._results[key] = result
            while len(self._results) > self.size:
                self._results.popitem(last=False)
        return result


def format_rows(result: QueryResult, *, shown: int = 10, width: int = 200) -> str:
    """A result as the observation shows it: the count, the columns and the first rows, one per line."""
    n = len(result.rows)
    count = f"more than {n} rows (capped)" if result.capped else f"{n} row{'s' if n != 1 else ''}"
    lines = [
        f"The query returned {count}"
        + (f" with columns ({', '.join(result.columns)})" if result.columns else "")
        + ":"
    ]
    for row in result.rows[:shown]:
        text = repr(row)
        lines.append(text if len(text) <= width else text[: width - 3] + "...")
    if n > shown:
        lines.append(f"... ({n - shown} more)")
    return "\n".join(lines)
