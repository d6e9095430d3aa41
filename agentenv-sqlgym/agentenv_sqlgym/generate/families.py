"""Question families: each draws one question with its gold SQL from any domain's metadata.

A family is a function of an :class:`Ask` (the domain, its database, a seeded generator) that returns a
:class:`~agentenv_sqlgym.generate.spec.Draft`, or ``None`` when the domain has nothing it applies to.
Values come from the data (a name that occurs once, a threshold between existing values), so the gold
result is rarely empty.  Each draft also states what a wrong answer looks like: a plausible near miss,
and the gold query with each of its conditions left out; :mod:`~agentenv_sqlgym.generate.validate`
rejects the drafts whose gold rows one of them matches.  Gold SQL is written as BIRD writes it (``T1`` /
``T2`` aliases, one line).
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..database import ReadOnlyDatabase
from .spec import Attribute, Domain, Draft, Entity, Link

T = TypeVar("T")


def lit(value: Any) -> str:
    """A Python value as a SQL literal."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return repr(round(value, 6))
    return str(value)


def quoted(value: Any) -> str:
    """A value as a question quotes it: strings in single quotes, numbers bare."""
    return (
        f"'{value}'" if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)
    )


def article(phrase: str) -> str:
    """``phrase`` with "a" or "an" before it."""
    return f"{'an' if phrase[:1].lower() in 'aeiou' else 'a'} {phrase}"


def where(*conditions: str) -> str:
    """`` WHERE a AND b`` of the non-empty conditions ('' when none)."""
    kept = [c for c in conditions if c]
    return f" WHERE {' AND '.join(kept)}" if kept else ""


class Ask:
    """What a family draws from: the domain, its database (read-only) and a seeded generator."""

    def __init__(self, domain: Domain, database: ReadOnlyDatabase, rng: random.Random) -> None:
        self.domain, self.database, self.rng = domain, database, rng
        self._rows: dict[str, list[tuple[Any, ...]]] = {}

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of a query the generator itself writes (an error there is a bug: it raises)."""
        if sql not in self._rows:
            result = self.database.run(sql, time_limit_s=30, row_cap=1_000_000)
            if not result.ok:
                raise RuntimeError(f"{self.domain.name}: {sql!r} failed: {result.error}")
            self._rows[sql] = result.rows
        return self._rows[sql]

    def values(self, table: str, column: str, condition: str = "") -> list[Any]:
        """The distinct non-NULL values of a column (``table`` may be a join), sorted."""
        return [
            r[0]
            for r in self.rows(
                f"SELECT DISTINCT {column} FROM {table}{where(f'{column} IS NOT NULL', condition)} ORDER BY 1"
            )
        ]

    def has_nulls(self, table: str, column: str) -> bool:
        return self.rows(f"SELECT COUNT(*) FROM {table} WHERE {column} IS NULL")[0][0] > 0

    def unique_labels(self, entity: Entity) -> list[str]:
        """Labels that name exactly one row (a question naming one of them means one thing)."""
        return [
            r[0]
            for r in self.rows(
                f"SELECT {entity.label} FROM {entity.table} WHERE {entity.label} IS NOT NULL "
                f"GROUP BY {entity.label} HAVING COUNT(*) = 1 ORDER BY 1"
            )
        ]

    def pick(self, items: Sequence[T]) -> T | None:
        return self.rng.choice(items) if items else None

    # --- the domain's metadata, as families need it ---------------------------------------------------
    def labelled(self, need: Callable[[Entity], Sequence[Any]] = lambda e: (True,)) -> list[Entity]:
        return [e for e in self.domain.entities if e.label and need(e)]

    def links(self, *, child_label: bool = False) -> list[Link]:
        """Links whose parent has a label (and whose child has one, if asked)."""
        return [
            link
            for link in self.domain.links
            if self.domain.entity(link.parent).label
            and (self.domain.entity(link.child).label or not child_label)
        ]

    def role(self, link: Link) -> str:
        return link.role or self.domain.entity(link.parent).singular

    def category_value(self, entity: Entity, alias: str = "") -> tuple[Attribute, Any, str] | None:
        """A category of ``entity``, one of its values, and the condition ``column = value``."""
        category = self.pick(entity.categories)
        if category is None:
            return None
        value = self.pick(self.values(entity.table, category.column))
        column = f"{alias}.{category.column}" if alias else category.column
        return category, value, f"{column} = {lit(value)}"

    def narrowed(self, entity: Entity, alias: str = "", chance: float = 1.0) -> tuple[str, str]:
        """A condition on one of ``entity``'s categories and the sentence opening that states it ("Among the
        customers whose city is 'Leeds', "), or two empty strings."""
        found = self.category_value(entity, alias) if self.rng.random() < chance else None
        if found is None:
            return "", ""
        category, value, condition = found
        return condition, f"Among the {entity.plural} whose {category.phrase} is {quoted(value)}, "


def _threshold(ask: Ask, ordered_desc: list[Any], most: int = 15) -> Any | None:
    """A value of a descending list with between 1 and ``most`` values above it."""
    if len(ordered_desc) < 3:
        return None
    return ordered_desc[ask.rng.randint(1, min(most, len(ordered_desc) - 2))]


def _names(entity: Entity) -> str:
    return f"{entity.label_phrase}s"


def _list_those(entity: Entity, among: str) -> str:
    """ "List the names of the customers" or, after an "Among ..." opening, "list the names of those"."""
    return (
        f"list the {_names(entity)} of those"
        if among
        else f"List the {_names(entity)} of the {entity.plural}"
    )


# --- lookups and filters --------------------------------------------------------------------------------


def lookup(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.numbers + e.categories))
    if entity is None:
        return None
    attribute = ask.pick(entity.numbers + entity.categories)
    name, other = ask.pick(ask.unique_labels(entity)), ask.pick(ask.unique_labels(entity))
    if name is None or other == name:
        return None
    return Draft(
        question=f"What is the {attribute.phrase} of the {entity.singular} {entity.named} {quoted(name)}?",
        sql=f"SELECT {attribute.column} FROM {entity.table} WHERE {entity.label} = {lit(name)}",
        near_miss=f"SELECT {attribute.column} FROM {entity.table} WHERE {entity.label} = {lit(other)}",
        kind="lookup",
        difficulty="simple",
        thought=f"The {entity.plural} are in table {entity.table}; I read {attribute.column} of the row whose "
        f"{entity.label} is {quoted(name)}.",
    )


def count_category(ask: Ask) -> Draft | None:
    entity = ask.pick([e for e in ask.domain.entities if e.categories])
    if entity is None:
        return None
    category, value, condition = ask.category_value(entity)
    return Draft(
        question=f"How many {entity.plural} have the {category.phrase} {quoted(value)}?",
        sql=f"SELECT COUNT(*) FROM {entity.table} WHERE {condition}",
        near_miss=f"SELECT COUNT(*) FROM {entity.table} WHERE {category.column} <> {lit(value)}",
        wrong=(f"SELECT COUNT(*) FROM {entity.table}",),
        kind="filter",
        difficulty="simple",
        evidence=f"{category.phrase} {quoted(value)} refers to {condition}",
        thought=f"I count the rows of {entity.table} whose {category.column} is {quoted(value)}.",
    )


def category_and_threshold(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.categories and e.numbers))
    if entity is None:
        return None
    category, value, condition = ask.category_value(entity)
    number = ask.pick(entity.numbers)
    x = _threshold(ask, sorted(ask.values(entity.table, number.column, condition), reverse=True))
    if x is None:
        return None
    head = f"SELECT {entity.label} FROM {entity.table}"
    above = f"{number.column} > {lit(x)}"
    return Draft(
        question=f"List the {_names(entity)} of the {entity.plural} whose {category.phrase} is {quoted(value)} "
        f"and whose {number.phrase} is above {quoted(x)}.",
        sql=f"{head}{where(condition, above)}",
        near_miss=f"{head}{where(condition, f'{number.column} >= {lit(x)}')}",
        wrong=(f"{head}{where(condition)}", f"{head}{where(above)}"),
        kind="filter",
        difficulty="moderate",
        evidence=f"above {quoted(x)} refers to {above}",
        thought=f"Two conditions on {entity.table}: {condition} and {above}; I return {entity.label}.",
    )


def number_between(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.numbers))
    if entity is None:
        return None
    number = ask.pick(entity.numbers)
    values = ask.values(entity.table, number.column)
    if len(values) < 6:
        return None
    i = ask.rng.randint(0, len(values) - 4)
    low, high = values[i], values[min(len(values) - 1, i + ask.rng.randint(2, 4))]
    head = f"SELECT {entity.label} FROM {entity.table}"
    return Draft(
        question=f"List the {_names(entity)} of the {entity.plural} whose {number.phrase} is between {quoted(low)} "
        f"and {quoted(high)}, both included.",
        sql=f"{head} WHERE {number.column} BETWEEN {lit(low)} AND {lit(high)}",
        near_miss=f"{head} WHERE {number.column} > {lit(low)} AND {number.column} < {lit(high)}",
        kind="filter",
        difficulty="simple",
        thought=f"A range condition on {entity.table}.{number.column}, both ends included: BETWEEN.",
    )


def count_in_year(ask: Ask) -> Draft | None:
    entity = ask.pick([e for e in ask.domain.entities if e.dates])
    if entity is None:
        return None
    date = ask.pick(entity.dates)
    year = ask.pick(sorted({v[:4] for v in ask.values(entity.table, date.column)}))
    if year is None:
        return None
    in_year = f"strftime('%Y', {date.column}) = {lit(year)}"
    return Draft(
        question=f"How many {entity.plural} have {article(date.phrase)} in {year}?",
        sql=f"SELECT COUNT(*) FROM {entity.table} WHERE {in_year}",
        near_miss=f"SELECT COUNT(*) FROM {entity.table} WHERE strftime('%Y', {date.column}) = {lit(str(int(year) + 1))}",
        wrong=(f"SELECT COUNT(*) FROM {entity.table}",),
        kind="filter",
        difficulty="moderate",
        evidence=f"in {year} refers to {in_year}",
        thought=f"Dates are ISO text, so the year of {date.column} is strftime('%Y', {date.column}); I count "
        f"the {entity.table} rows of {year}.",
    )


def listed_in_month(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.dates))
    if entity is None:
        return None
    date = ask.pick(entity.dates)
    month = ask.pick(sorted({v[:7] for v in ask.values(entity.table, date.column)}))
    if month is None:
        return None
    year, number = month.split("-")
    name = f"{calendar.month_name[int(number)]} {year}"
    head = f"SELECT {entity.label} FROM {entity.table}"
    return Draft(
        question=f"List the {_names(entity)} of the {entity.plural} whose {date.phrase} is in {name}.",
        sql=f"{head} WHERE strftime('%Y-%m', {date.column}) = {lit(month)}",
        near_miss=f"{head} WHERE strftime('%m', {date.column}) = {lit(number)}",
        kind="filter",
        difficulty="moderate",
        evidence=f"in {name} refers to strftime('%Y-%m', {date.column}) = {lit(month)}",
        thought=f"The month {name} is strftime('%Y-%m', {date.column}) = {lit(month)} on ISO dates; the year matters.",
    )


def count_missing(ask: Ask) -> Draft | None:
    entity = ask.pick([e for e in ask.domain.entities if e.optional])
    if entity is None:
        return None
    optional = ask.pick(entity.optional)
    narrow, among = ask.narrowed(entity, chance=0.5)
    missing = f"{optional.column} IS NULL"
    ask_how_many = (
        f"how many have no {optional.phrase} recorded?"
        if among
        else (f"How many {entity.plural} have no {optional.phrase} recorded?")
    )
    head = f"SELECT COUNT(*) FROM {entity.table}"
    return Draft(
        question=f"{among}{ask_how_many}",
        sql=f"{head}{where(missing, narrow)}",
        near_miss=f"{head}{where(f'{optional.column} IS NOT NULL', narrow)}",
        wrong=(f"{head}{where(narrow)}", f"{head}{where(missing)}"),
        kind="filter",
        difficulty="moderate",
        evidence=f"no {optional.phrase} recorded refers to {missing}",
        thought=f"A missing {optional.phrase} is a NULL {optional.column}: IS NULL, not = ''.",
    )


# --- joins ------------------------------------------------------------------------------------------------


def _join(ask: Ask, link: Link) -> str:
    parent = ask.domain.entity(link.parent)
    return f"{link.child} AS T1 INNER JOIN {link.parent} AS T2 ON T1.{link.column} = T2.{parent.key}"


def _wrong_join(ask: Ask, link: Link) -> str:
    """The classic slip: joining the two tables' own keys instead of the foreign key."""
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    return f"{link.child} AS T1 INNER JOIN {link.parent} AS T2 ON T1.{child.key} = T2.{parent.key}"


def joined_list(ask: Ask) -> Draft | None:
    link = ask.pick(ask.links(child_label=True))
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    name = ask.pick(ask.unique_labels(parent))
    named = f"T2.{parent.label} = {lit(name)}"
    return Draft(
        question=f"List the {_names(child)} of the {child.plural} whose {ask.role(link)} is {quoted(name)}.",
        sql=f"SELECT T1.{child.label} FROM {_join(ask, link)} WHERE {named}",
        near_miss=f"SELECT T1.{child.label} FROM {_wrong_join(ask, link)} WHERE {named}",
        wrong=(f"SELECT T1.{child.label} FROM {_join(ask, link)}",),
        kind="join",
        difficulty="moderate",
        thought=f"{link.child}.{link.column} refers to {link.parent}.{parent.key}; I join them and keep the "
        f"{link.parent} row named {quoted(name)}.",
    )


def joined_count(ask: Ask) -> Draft | None:
    link = ask.pick(ask.links())
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    name = ask.pick(ask.unique_labels(parent))
    named = f"T2.{parent.label} = {lit(name)}"
    extra, also = "", ""
    found = ask.category_value(child, "T1") if ask.rng.random() < 0.5 else None
    if found:
        category, value, extra = found
        also = f" with the {category.phrase} {quoted(value)}"
    return Draft(
        question=f"How many {child.plural}{also} have {quoted(name)} as their {ask.role(link)}?",
        sql=f"SELECT COUNT(*) FROM {_join(ask, link)}{where(named, extra)}",
        near_miss=f"SELECT COUNT(*) FROM {_wrong_join(ask, link)}{where(named, extra)}",
        wrong=(f"SELECT COUNT(*) FROM {_join(ask, link)}{where(named)}",) if extra else (),
        kind="join",
        difficulty="challenging" if extra else "moderate",
        thought=f"I join {link.child} to {link.parent} on {link.column} and count the rows of {quoted(name)}"
        + (f" with {extra}." if extra else "."),
    )


def bridged_list(ask: Ask) -> Draft | None:
    bridge = ask.pick(ask.domain.bridges)
    if bridge is None:
        return None
    forward = ask.rng.random() < 0.5
    given_link, wanted_link = (bridge.left, bridge.right) if forward else (bridge.right, bridge.left)
    given, wanted = ask.domain.entity(given_link.parent), ask.domain.entity(wanted_link.parent)
    name = ask.pick(ask.unique_labels(given))
    joins = (
        f"FROM {bridge.table} AS T1 INNER JOIN {given.table} AS T2 ON T1.{given_link.column} = T2.{given.key} "
        f"INNER JOIN {wanted.table} AS T3 ON T1.{wanted_link.column} = T3.{wanted.key}"
    )
    wrong_joins = joins.replace(f"T1.{wanted_link.column} = T3", f"T1.{given_link.column} = T3")
    named = f"WHERE T2.{given.label} = {lit(name)}"
    return Draft(
        question=(bridge.rights_of_left if forward else bridge.lefts_of_right).format(v=quoted(name)),
        sql=f"SELECT DISTINCT T3.{wanted.label} {joins} {named}",
        near_miss=f"SELECT DISTINCT T3.{wanted.label} {wrong_joins} {named}",
        kind="join",
        difficulty="challenging",
        thought=f"{bridge.table} links {given.plural} to {wanted.plural}: I join it to both and keep the "
        f"{given.singular} {quoted(name)}.",
    )


# --- aggregates -------------------------------------------------------------------------------------------


def count_per_category(ask: Ask) -> Draft | None:
    entity = ask.pick([e for e in ask.domain.entities if e.categories])
    if entity is None:
        return None
    category = ask.pick(entity.categories)
    if ask.has_nulls(entity.table, category.column) or len(ask.values(entity.table, category.column)) > 12:
        return None
    gold = f"SELECT {category.column}, COUNT(*) FROM {entity.table} GROUP BY {category.column}"
    return Draft(
        question=f"For each {category.phrase}, how many {entity.plural} are there? Give the {category.phrase} "
        "and the count.",
        sql=gold,
        near_miss=f"{gold} ORDER BY COUNT(*) DESC LIMIT 1",
        kind="aggregate",
        difficulty="moderate",
        thought=f"One group per {category.column} of {entity.table}, counting its rows.",
    )


def average_per_parent(ask: Ask) -> Draft | None:
    link = ask.pick([lk for lk in ask.links() if ask.domain.entity(lk.child).numbers])
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    number = ask.pick(child.numbers)
    found = ask.category_value(parent, "T2")
    narrow, also = "", ""
    if found:
        category, value, narrow = found
        also = f" whose {category.phrase} is {quoted(value)}"
    tail = f"FROM {_join(ask, link)}{where(narrow)} GROUP BY T2.{parent.key}"
    return Draft(
        question=f"For each {ask.role(link)}{also}, give the {parent.label_phrase} and the average "
        f"{number.phrase} of the {child.plural}, rounded to two decimals.",
        sql=f"SELECT T2.{parent.label}, ROUND(AVG(T1.{number.column}), 2) {tail}",
        near_miss=f"SELECT T2.{parent.label}, ROUND(SUM(T1.{number.column}), 2) {tail}",
        kind="aggregate",
        difficulty="challenging",
        evidence=f"average {number.phrase} refers to AVG({number.column})",
        thought=f"I join {link.child} to {link.parent}, group by the {link.parent} row and take "
        f"ROUND(AVG({number.column}), 2).",
    )


def more_than_n(ask: Ask) -> Draft | None:
    link = ask.pick(ask.links())
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    counts = [
        r[0] for r in ask.rows(f"SELECT COUNT(*) FROM {link.child} GROUP BY {link.column} ORDER BY 1 DESC")
    ]
    n = _threshold(ask, counts)
    if n is None:
        return None
    role = ask.role(link)
    head = f"SELECT T2.{parent.label} FROM {_join(ask, link)} GROUP BY T2.{parent.key}"
    question = (
        f"Which {parent.plural} have more than {n} {child.plural}? List their {_names(parent)}."
        if role == parent.singular
        else f"Which {parent.plural} are the {role} of more than {n} {child.plural}? List their {_names(parent)}."
    )
    return Draft(
        question=question,
        sql=f"{head} HAVING COUNT(*) > {n}",
        near_miss=f"{head} HAVING COUNT(*) >= {n}",
        wrong=(head,),
        kind="aggregate",
        difficulty="challenging",
        thought=f"I count the {link.child} rows per {link.parent} row (GROUP BY) and keep counts above {n} (HAVING).",
    )


# --- ordering and limits ---------------------------------------------------------------------------------


def top_k(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.numbers))
    if entity is None:
        return None
    number = ask.pick(entity.numbers)
    k = ask.rng.choice((1, 3, 5))
    highest = ask.rng.random() < 0.6
    order, flip, word = ("DESC", "ASC", "highest") if highest else ("ASC", "DESC", "lowest")
    known = (
        f" WHERE {number.column} IS NOT NULL"
        if not highest and ask.has_nulls(entity.table, number.column)
        else ""
    )
    tail = f"FROM {entity.table}{known} ORDER BY {number.column}"
    which = f"Which {entity.singular} has" if k == 1 else f"Which {k} {entity.plural} have"
    give = f"Give the {entity.label_phrase}" if k == 1 else f"List their {_names(entity)}"
    return Draft(
        question=f"{which} the {word} {number.phrase}? {give}.",
        sql=f"SELECT {entity.label} {tail} {order} LIMIT {k}",
        near_miss=f"SELECT {entity.label} {tail} {flip} LIMIT {k}",
        wrong=(f"SELECT {entity.label} {tail} {order}",),
        ranking=(f"SELECT {number.column} {tail} {order}", k),
        kind="order_limit",
        difficulty="moderate",
        evidence=f"the {word} {number.phrase} refers to ORDER BY {number.column} {order}",
        thought=f"I sort {entity.table} by {number.column} {order} and keep the first {k}"
        + (", leaving out NULLs (SQLite sorts them first)." if known else "."),
    )


def top_parent(ask: Ask) -> Draft | None:
    link = ask.pick(ask.links())
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    narrow, also = "", ""
    found = ask.category_value(child, "T1") if ask.rng.random() < 0.7 else None
    if found:
        category, value, narrow = found
        also = f" with the {category.phrase} {quoted(value)}"
    if child.numbers and ask.rng.random() < 0.4:
        number = ask.pick(child.numbers)
        measure, what = (
            f"SUM(T1.{number.column})",
            f"the highest total {number.phrase} over its {child.plural}{also}",
        )
    else:
        measure, what = "COUNT(*)", f"the most {child.plural}{also}"
    tail = f"FROM {_join(ask, link)}{where(narrow)} GROUP BY T2.{parent.key} ORDER BY {measure}"
    return Draft(
        question=f"Which {ask.role(link)} has {what}? Give the {parent.label_phrase}.",
        sql=f"SELECT T2.{parent.label} {tail} DESC LIMIT 1",
        near_miss=f"SELECT T2.{parent.label} {tail} ASC LIMIT 1",
        wrong=(f"SELECT T2.{parent.label} {tail.replace(where(narrow), '')} DESC LIMIT 1",) if narrow else (),
        ranking=(f"SELECT {measure} {tail} DESC", 1),
        kind="order_limit",
        difficulty="challenging",
        thought=f"I group the joined {link.child} rows by {link.parent}, order by {measure} descending and keep one.",
    )


# --- nested queries -----------------------------------------------------------------------------------------


def above_group_average(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.categories and e.numbers))
    if entity is None:
        return None
    category, value, within = ask.category_value(entity)
    number = ask.pick(entity.numbers)
    head = f"SELECT {entity.label} FROM {entity.table}"
    return Draft(
        question=f"Among the {entity.plural} whose {category.phrase} is {quoted(value)}, list the {_names(entity)} of "
        f"those whose {number.phrase} is above the average {number.phrase} of that group.",
        sql=f"{head} WHERE {within} AND {number.column} > (SELECT AVG({number.column}) FROM {entity.table} WHERE {within})",
        near_miss=f"{head} WHERE {within} AND {number.column} > (SELECT AVG({number.column}) FROM {entity.table})",
        wrong=(f"{head} WHERE {within}",),
        kind="nested",
        difficulty="challenging",
        thought=f"A subquery computes the group's AVG({number.column}) with the same {category.column} filter; the "
        "outer query keeps the rows above it.",
    )


def without_children(ask: Ask) -> Draft | None:
    link = ask.pick(ask.links())
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    inner_where, also = f"{link.column} IS NOT NULL", ""
    found = ask.category_value(child) if ask.rng.random() < 0.5 else None
    if found:
        category, value, condition = found
        inner_where += f" AND {condition}"
        also = f" with the {category.phrase} {quoted(value)}"
    narrow, among = ask.narrowed(parent, chance=0.7)
    inner = f"SELECT {link.column} FROM {link.child} WHERE {inner_where}"
    role = ask.role(link)
    lacking = (
        f"that have no {child.plural}{also}"
        if role == parent.singular
        else f"that are not the {role} of any {child.singular}{also}"
    )
    head = f"SELECT {parent.label} FROM {parent.table}"
    return Draft(
        question=f"{among}{_list_those(parent, among)} {lacking}.",
        sql=f"{head}{where(narrow, f'{parent.key} NOT IN ({inner})')}",
        near_miss=f"{head}{where(narrow, f'{parent.key} IN ({inner})')}",
        wrong=(f"{head}{where(narrow)}",),
        kind="nested",
        difficulty="challenging",
        thought=f"The {parent.table} rows whose {parent.key} is NOT IN the {link.column} values of {link.child} "
        "(NULLs left out of the subquery, or NOT IN finds nothing).",
    )


def max_within_group(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.categories and e.numbers))
    if entity is None:
        return None
    category, value, within = ask.category_value(entity)
    number = ask.pick(entity.numbers)
    head = f"SELECT {entity.label} FROM {entity.table} WHERE {within} AND {number.column} = "
    return Draft(
        question=f"Which {entity.singular} whose {category.phrase} is {quoted(value)} has the highest "
        f"{number.phrase}? Give the {entity.label_phrase}.",
        sql=f"{head}(SELECT MAX({number.column}) FROM {entity.table} WHERE {within})",
        near_miss=f"{head}(SELECT MIN({number.column}) FROM {entity.table} WHERE {within})",
        wrong=(f"{head}(SELECT MAX({number.column}) FROM {entity.table})",),
        kind="nested",
        difficulty="moderate",
        thought=f"A subquery finds MAX({number.column}) within the group; the outer query returns the row(s) with it.",
    )


# --- set operations ----------------------------------------------------------------------------------------


def both_and_but_not(ask: Ask) -> Draft | None:
    link = ask.pick([lk for lk in ask.links() if ask.domain.entity(lk.child).categories])
    if link is None:
        return None
    child, parent = ask.domain.entity(link.child), ask.domain.entity(link.parent)
    category = ask.pick(child.categories)
    values = ask.values(child.table, category.column)
    if len(values) < 2:
        return None
    a, b = ask.rng.sample(values, 2)
    narrow, among = ask.narrowed(parent, "T2", chance=0.8)
    left = (
        f"SELECT T2.{parent.label} FROM {_join(ask, link)}{where(narrow, f'T1.{category.column} = {lit(a)}')}"
    )
    right = (
        f"SELECT T2.{parent.label} FROM {_join(ask, link)}{where(narrow, f'T1.{category.column} = {lit(b)}')}"
    )
    has = "have" if ask.role(link) == parent.singular else f"are the {ask.role(link)} of"
    with_a = f"{child.plural} with the {category.phrase} {quoted(a)}"
    if ask.rng.random() < 0.5:
        question = f"{among}{_list_those(parent, among)} that {has} both {with_a} and {child.plural} with the {category.phrase} {quoted(b)}."
        gold, near, how = f"{left} INTERSECT {right}", f"{left} UNION {right}", "INTERSECT"
    else:
        question = f"{among}{_list_those(parent, among)} that {has} {with_a} but none with the {category.phrase} {quoted(b)}."
        gold, near, how = f"{left} EXCEPT {right}", f"{left} INTERSECT {right}", "EXCEPT"
    return Draft(
        question=question,
        sql=gold,
        near_miss=near,
        wrong=(left, right),
        kind="set_operation",
        difficulty="challenging",
        thought=f"Two joined queries, one per {category.column} value, combined with {how}.",
    )


def either_condition(ask: Ask) -> Draft | None:
    entity = ask.pick(ask.labelled(lambda e: e.categories and e.numbers))
    if entity is None:
        return None
    category, value, condition = ask.category_value(entity)
    number = ask.pick(entity.numbers)
    x = _threshold(ask, sorted(ask.values(entity.table, number.column), reverse=True), most=10)
    if x is None:
        return None
    left = f"SELECT {entity.label} FROM {entity.table} WHERE {condition}"
    right = f"SELECT {entity.label} FROM {entity.table} WHERE {number.column} > {lit(x)}"
    return Draft(
        question=f"List the {_names(entity)} of the {entity.plural} whose {category.phrase} is {quoted(value)} or "
        f"whose {number.phrase} is above {quoted(x)}.",
        sql=f"{left} UNION {right}",
        near_miss=f"{left} INTERSECT {right}",
        wrong=(left, right),
        kind="set_operation",
        difficulty="moderate",
        thought="Either condition qualifies a row: the UNION of the two filtered queries.",
    )


#: every family, in the order a domain's questions are drawn round-robin
FAMILIES: tuple[Callable[[Ask], Draft | None], ...] = (
    lookup,
    count_category,
    category_and_threshold,
    number_between,
    count_in_year,
    listed_in_month,
    count_missing,
    joined_list,
    joined_count,
    bridged_list,
    count_per_category,
    average_per_parent,
    more_than_n,
    top_k,
    top_parent,
    above_group_average,
    without_children,
    max_within_group,
    both_and_but_not,
    either_condition,
)
