"""The SQL of a reply, and the check that lets only one read-only query through.

A reply carries its SQL in a fenced block (```sql ... ```), as AgentGym's prompt asks; a reply without
one is taken as bare SQL.  :func:`refusal` parses the statement with sqlglot's SQLite dialect and
explains why it may not run: nothing parses, more than one statement, or anything but a ``SELECT``
(with ``WITH``, set operations and subqueries).  The connection it then runs on is read-only as well
(:mod:`agentenv_sqlgym.database`): this check is the first of several locks, and the one that explains.
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp


class _QuietFallback(logging.Filter):
    """Drops sqlglot's warning for each statement it keeps as raw text: a refused statement is no event."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_QuietFallback())

#: the longest statement parsed; longer ones are refused before parsing
MAX_SQL_CHARS = 20_000

#: a fenced block of a reply; an unclosed fence runs to the end of the reply
_FENCE = re.compile(r"```(?P<body>.*?)(?:```|\Z)", re.DOTALL)
#: a block's language tag: a lone word on the fence's line (```sql), or "sql" before the query (```sql SELECT)
_LANGUAGE = re.compile(r"^[^\S\n]*(?:(?P<word>[A-Za-z0-9_+-]+)[^\S\n]*\n|(?P<sql>sql)\s)", re.IGNORECASE)

#: what a query may be at its top: a SELECT (its WITH clause included) or a set operation of SELECTs
_QUERIES: tuple[type[exp.Expression], ...] = (exp.Select, exp.Union, exp.Intersect, exp.Except)

#: nodes no part of a query may hold (looked up by name: sqlglot's versions add and rename classes)
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Create",
        "Drop",
        "Alter",
        "AlterTable",
        "Command",
        "Pragma",
        "Attach",
        "Detach",
        "Transaction",
        "Commit",
        "Rollback",
        "Into",
        "Set",
        "Use",
        "Analyze",
    )
    if isinstance(getattr(exp, name, None), type)
)

#: SQLite functions a query may not call (the connection refuses them too)
FORBIDDEN_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"})

#: keywords that start a statement which is not a query: refused before parsing, by name
STATEMENT_KEYWORDS = frozenset(
    "INSERT UPDATE DELETE REPLACE CREATE DROP ALTER ATTACH DETACH PRAGMA VACUUM BEGIN COMMIT ROLLBACK END "
    "SAVEPOINT RELEASE REINDEX ANALYZE EXPLAIN".split()
)


def sql_of_reply(action: str) -> str:
    """The SQL in an action: the last ```sql block, else the last ``` block, else the whole text."""
    blocks = [_split_language(match.group("body")) for match in _FENCE.finditer(action)]
    sql_blocks = [body for language, body in blocks if language == "sql"]
    chosen = sql_blocks or [body for _, body in blocks]
    return (chosen[-1] if chosen else action).strip()


def _split_language(block: str) -> tuple[str, str]:
    """``(language tag, code)`` of a fenced block's text."""
    tag = _LANGUAGE.match(block)
    if tag is None or (tag.group("word") or "").lower() in ("select", "with"):  # a query's first line
        return "", block
    return (tag.group("word") or tag.group("sql")).lower(), block[tag.end() :]


def refusal(sql: str) -> str | None:
    """Why ``sql`` may not run, or ``None`` when it is a single read-only query."""
    return parse_query(sql)[1]


#: what sqlglot parses a trailing comment into (versions without it have no such node)
_EMPTY = tuple(t for t in (getattr(exp, "Semicolon", None),) if t is not None)


def parse_query(sql: str) -> tuple[exp.Expression | None, str | None]:
    """``(syntax tree, None)`` for a single read-only query, else ``(None, why it may not run)``."""
    if not sql.strip():
        return None, 'no SQL found: write one SELECT statement in a ```sql block after "Action:"'
    if len(sql) > MAX_SQL_CHARS:
        return None, f"the statement is {len(sql)} characters long; at most {MAX_SQL_CHARS} are accepted"
    if "\x00" in sql:
        return None, "the statement contains a NUL character"
    leading = sql.split(None, 1)[0].upper()
    if leading in STATEMENT_KEYWORDS:  # named before parsing: some sqlglot versions cannot parse them all
        return (
            None,
            f"only a SELECT query (or WITH ... SELECT) may run; this is {_article(leading)} {leading} statement",
        )
    try:
        # a comment after the last ";" parses as a statement of its own (exp.Semicolon): it runs nothing
        statements = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None and not isinstance(s, _EMPTY)]
    except sqlglot.errors.ParseError as exc:
        return None, f"the SQL does not parse: {_first_error(exc)}"
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError) as exc:
        return None, f"the SQL does not parse: {type(exc).__name__}"
    if not statements:
        return None, "no SQL statement found"
    if len(statements) > 1:
        return None, f"only one statement may run at a time; this reply has {len(statements)}"
    tree = statements[0]
    if not isinstance(tree, _QUERIES):
        return None, f"only a SELECT query (or WITH ... SELECT) may run; this is {_what(tree)}"
    forbidden = tree.find(*_FORBIDDEN_NODES)
    if forbidden is not None:
        return None, f"only a SELECT query may run; it contains {_what(forbidden)}"
    for call in tree.find_all(exp.Func):
        name = (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).lower()
        if name in FORBIDDEN_FUNCTIONS:
            return None, f"the function {name}() may not be called"
    return tree, None


def _what(node: exp.Expression) -> str:
    """``an INSERT statement``, ``a SELECT INTO statement`` ... for a refusal."""
    if isinstance(node, exp.Command):  # a statement sqlglot keeps as raw text
        keyword = str(node.this).split()[0].upper() if str(node.this).strip() else "COMMAND"
    elif isinstance(node, _FORBIDDEN_NODES):
        keyword = {"Into": "SELECT INTO", "AlterTable": "ALTER"}.get(
            type(node).__name__, type(node).__name__.upper()
        )
    else:
        return "not a query"
    return f"{_article(keyword)} {keyword} statement"


def _article(word: str) -> str:
    return "an" if word[:1] in "AEIOU" else "a"


def _first_error(exc: sqlglot.errors.ParseError) -> str:
    errors = getattr(exc, "errors", None) or []
    if errors and isinstance(errors[0], dict) and errors[0].get("description"):
        first = errors[0]
        where = f" (line {first.get('line')}, column {first.get('col')})" if first.get("line") else ""
        return f"{first['description']}{where}"
    return str(exc).splitlines()[0][:300]
