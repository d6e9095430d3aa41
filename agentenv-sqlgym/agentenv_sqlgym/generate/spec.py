"""What a generated domain declares: its tables, how to fill them, and how questions may speak of them.

A :class:`Domain` is one sqlite database: DDL, a ``populate`` function, and the metadata the question
families read (which tables hold nameable things, which columns are numbers, categories, dates or
nullable, which foreign keys link them, and with which words), plus bespoke question templates.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .families import Ask
    from .values import Vocabulary

#: the kinds of question, roughly by the SQL they need
KINDS = ("lookup", "filter", "join", "aggregate", "order_limit", "nested", "set_operation")
#: BIRD's three difficulty levels
DIFFICULTIES = ("simple", "moderate", "challenging")


@dataclass(frozen=True)
class Attribute:
    """A column a question may ask about, and how a question calls it ("blood type")."""

    column: str
    phrase: str


@dataclass(frozen=True)
class Entity:
    """A table whose rows questions speak of: "the patient named 'Ann Lee'"."""

    table: str
    key: str
    singular: str
    plural: str
    #: the column that names a row (``None``: rows have no name, e.g. orders), and how it reads
    label: str | None = None
    label_phrase: str = "name"
    named: str = "named"
    numbers: tuple[Attribute, ...] = ()
    #: columns with a few distinct values (NULL in some rows, maybe)
    categories: tuple[Attribute, ...] = ()
    #: ISO date columns ("YYYY-MM-DD")
    dates: tuple[Attribute, ...] = ()
    #: columns that are NULL for some rows, and what that means ("no email address")
    optional: tuple[Attribute, ...] = ()


@dataclass(frozen=True)
class Link:
    """A foreign key: ``child.column`` references ``parent``'s key; ``role`` is the parent seen from the
    child ("home team" for matches.home_team_id)."""

    child: str
    column: str
    parent: str
    role: str | None = None


@dataclass(frozen=True)
class Bridge:
    """A table joining two entities many-to-many, with the question wording each way ({v}: the name)."""

    table: str
    left: Link
    right: Link
    #: "List the names of the actors cast in the movie {v}."  (rights of a left)
    rights_of_left: str
    #: "List the titles of the movies the actor {v} was cast in."  (lefts of a right)
    lefts_of_right: str


@dataclass
class Draft:
    """A question before validation: its text, gold SQL and a plausible wrong query."""

    question: str
    sql: str
    #: a plausible wrong query (a reversed comparison, a wrong join ...) whose rows differ from the gold's
    near_miss: str
    kind: str
    difficulty: str
    evidence: str = ""
    #: why the gold query answers the question (the expert's thought)
    thought: str = ""
    #: more queries whose rows must differ from the gold's: the gold query with one condition left out
    wrong: tuple[str, ...] = ()
    #: for a gold query ending in ``ORDER BY ... LIMIT k``: a query listing the sort keys in that order, and
    #: k, so that a tie across the cut (another right query could keep the other tied row) is caught
    ranking: tuple[str, int] | None = None


Template = Callable[["Ask"], "Draft | None"]


@dataclass(frozen=True)
class Domain:
    name: str
    ddl: str
    populate: Callable[[sqlite3.Connection, random.Random, Vocabulary], None]
    entities: tuple[Entity, ...]
    links: tuple[Link, ...] = ()
    bridges: tuple[Bridge, ...] = ()
    #: hand-written question templates of this domain (several SQL idioms the families do not cover)
    templates: tuple[Template, ...] = field(default=())

    def entity(self, table: str) -> Entity:
        for entity in self.entities:
            if entity.table == table:
                return entity
        raise KeyError(f"{self.name} has no entity table {table!r}")
