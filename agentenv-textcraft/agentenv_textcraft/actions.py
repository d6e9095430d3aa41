"""The action grammar: ``get N item``, ``craft N item using N a, N b``, ``inventory``.

Parsing only splits the text; naming items and checking recipes is the environment's job.  The first line
is read, lower-cased, ``minecraft:`` prefixes and underscores dropped, and any other character than letters,
digits, commas and spaces removed (AgentGym's client cleaning), so ``Get 2 minecraft:oak_log.`` and
```` `get 2 oak log` ```` read like ``get 2 oak log``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GRAMMAR = '"get N item", "craft N item using N ingredient, N ingredient, ..." or "inventory"'

_GET = re.compile(r"^get\s+(?:(\d+)\s+)?(.+)$")
_CRAFT = re.compile(r"^craft\s+(?:(\d+)\s+)?(.+?)\s+using\s+(.+)$")
_AMOUNT = re.compile(r"^(\d+)\s+(.+)$")
#: a count this long is nonsense, and ``int()`` refuses numbers over 4,300 digits
_TOO_LONG = re.compile(r"\d{10,}")
_NOT_ACTION_TEXT = re.compile(r"[^a-z0-9, ]+")
#: a count with a sign or a fraction: cleaning the action would drop the "-" or "." and read another number
_NOT_A_COUNT = re.compile(r"(?<![\w.])[-+]\d|\d\.\d")


@dataclass(frozen=True)
class Get:
    count: int
    name: str


@dataclass(frozen=True)
class Craft:
    count: int | None  # the stated output count (informational: the ingredients decide the craft)
    name: str
    ingredients: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Inventory:
    pass


@dataclass(frozen=True)
class Invalid:
    reason: str


Action = Get | Craft | Inventory | Invalid


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def normalise(text: str) -> str:
    """The first line with text, lower-cased, ``minecraft:`` and underscores dropped, and every character
    but letters, digits, commas and spaces removed, as AgentGym's client cleans an action before sending it
    (quotes, backticks, brackets, ``**``, a final ``.`` or ``!``); spaces collapsed."""
    line = _first_line(text).lower().replace("minecraft:", "").replace("_", " ")
    return " ".join(_NOT_ACTION_TEXT.sub("", line).split())


def parse_action(text: str) -> Action:
    """Read one action; anything that is not in the grammar comes back as :class:`Invalid`."""
    if _NOT_A_COUNT.search(_first_line(text)):
        return Invalid("counts are whole numbers from 1 (-5 or 1.5 is none)")
    text = normalise(text)
    if not text:
        return Invalid("the action is empty")
    if text in ("inventory", "check inventory", "look inventory"):
        return Inventory()
    if _TOO_LONG.search(text):
        return Invalid("a number in it is too large")
    if m := _CRAFT.match(text):
        ingredients = []
        for part in m.group(3).split(","):
            part = part.strip()
            amount = _AMOUNT.match(part)
            if not amount:
                return Invalid(f'the ingredient "{part}" has no count (write e.g. "1 {part or "stick"}")')
            ingredients.append((int(amount.group(1)), amount.group(2).strip()))
        count = int(m.group(1)) if m.group(1) else None
        return Craft(count, m.group(2).strip(), tuple(ingredients))
    if text.startswith("craft"):
        return Invalid('a craft command needs "using" and its ingredients')
    if m := _GET.match(text):
        return Get(int(m.group(1)) if m.group(1) else 1, m.group(2).strip())
    return Invalid(f'"{text}" is not a command')
