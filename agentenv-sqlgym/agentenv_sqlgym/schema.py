"""The schema description an episode starts with, read from the database file itself.

The sentences are AgentGym's (its BIRD prompt): ``{db} contains tables such as t1, t2. Table t1 has columns
such as c1, c2. c1 is the primary key. ... The c of t2 is the foreign key of k of t1.``  AgentGym wrote
BIRD's natural-language column names from ``*_tables.json`` (lower-cased); here the real names are read
from the file, since the SQL has to use them, and a name that is not a plain identifier is written
double-quoted, as SQL would need it.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from contextlib import closing
from pathlib import Path

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def sql_name(name: str) -> str:
    """``name`` as SQL writes it: bare when a plain identifier, else double-quoted."""
    return name if _PLAIN.fullmatch(name) else '"' + name.replace('"', '""') + '"'


@functools.lru_cache(maxsize=256)
def describe_schema(path: str | Path, db_name: str) -> str:
    """The description of the sqlite file at ``path``, named ``db_name``."""
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
            )
        ]
        sentences = [f"{db_name} contains tables such as {', '.join(sql_name(t) for t in tables)}."]
        primary_keys: dict[str, list[str]] = {}
        foreign_keys: list[str] = []
        for table in tables:
            columns = connection.execute(f"PRAGMA table_info({sql_name(table)})").fetchall()
            keys = [c[1] for c in sorted((c for c in columns if c[5]), key=lambda c: c[5])]
            primary_keys[table] = keys
            sentences.append(
                f"Table {sql_name(table)} has columns such as {', '.join(sql_name(c[1]) for c in columns)}."
            )
            if keys:
                sentences.append(f"{', '.join(sql_name(k) for k in keys)} is the primary key.")
        for table in tables:
            for fk in connection.execute(f"PRAGMA foreign_key_list({sql_name(table)})").fetchall():
                parent, column, target = fk[2], fk[3], fk[4]
                if target is None:  # REFERENCES parent without a column: the parent's primary key
                    target = (primary_keys.get(parent) or ["rowid"])[0]
                foreign_keys.append(
                    f"The {sql_name(column)} of {sql_name(table)} is the foreign key of {sql_name(target)} of {sql_name(parent)}."
                )
    return " ".join(sentences + foreign_keys)
