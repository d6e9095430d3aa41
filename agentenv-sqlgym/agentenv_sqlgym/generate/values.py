"""Realistic values for the generated databases: people, places and dates, drawn from one seed.

Faker is slow per call (a weighted draw rebuilds its tables each time), so it is asked once per build for
pools of first names, surnames, cities and countries, drawn with its frequency weights; the domains then
combine pool entries with their own seeded ``random.Random``.  The same seed and Faker version give the
same pools, so the same databases.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from faker import Faker

T = TypeVar("T")


@dataclass(frozen=True)
class Vocabulary:
    female_first_names: tuple[str, ...]
    male_first_names: tuple[str, ...]
    surnames: tuple[str, ...]
    cities: tuple[str, ...]
    countries: tuple[str, ...]
    streets: tuple[str, ...]

    def person(self, rng: random.Random, gender: str | None = None) -> str:
        """A full name; ``gender`` "F" or "M" picks the first name's pool (else either)."""
        gender = gender or rng.choice("FM")
        first = rng.choice(self.female_first_names if gender == "F" else self.male_first_names)
        return f"{first} {rng.choice(self.surnames)}"

    def email(self, rng: random.Random, name: str, domain: str = "example.com") -> str:
        first, _, last = name.lower().partition(" ")
        return f"{first[0]}{last.replace(' ', '').replace(chr(39), '')}{rng.randint(1, 99)}@{domain}"


def _pool(draw, n: int, max_len: int = 30, tries: int = 20) -> tuple[str, ...]:
    """Up to ``n`` distinct values from ``draw()``, in first-drawn order."""
    seen: dict[str, None] = {}
    for _ in range(n * tries):
        if len(seen) >= n:
            break
        value = draw()
        if len(value) <= max_len and "'" not in value:
            seen.setdefault(value, None)
    return tuple(seen)


@functools.lru_cache(maxsize=4)
def vocabulary(seed: int) -> Vocabulary:
    """The pools for ``seed`` (Faker's en_US provider)."""
    fake = Faker("en_US")
    fake.seed_instance(seed)
    return Vocabulary(
        female_first_names=_pool(fake.first_name_female, 220),
        male_first_names=_pool(fake.first_name_male, 220),
        surnames=_pool(fake.last_name, 420),
        cities=_pool(fake.city, 120, max_len=20),
        countries=_pool(fake.country, 45, max_len=16),
        streets=_pool(fake.street_name, 60),
    )


def day(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    """A uniform day in ``[start, end]``."""
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def iso(date: dt.date) -> str:
    return date.isoformat()


def lognormal(rng: random.Random, median: float, spread: float, digits: int = 2) -> float:
    """A right-skewed positive amount (prices, salaries, balances) around ``median``."""
    return round(median * math.exp(rng.gauss(0.0, spread)), digits)


def weighted(rng: random.Random, choices: dict[str, float]) -> str:
    """One key of ``choices``, drawn by its weight."""
    return rng.choices(list(choices), weights=list(choices.values()))[0]


def unique(rng: random.Random, make, n: int, tries: int = 50) -> list[str]:
    """``n`` distinct values of ``make(rng)`` (fewer only if it cannot make that many)."""
    seen: dict[str, None] = {}
    for _ in range(n * tries):
        if len(seen) >= n:
            break
        seen.setdefault(make(rng), None)
    return list(seen)


def picker(rng: random.Random, items: Sequence[T], weights: Sequence[float]) -> Callable[..., list[T]]:
    """``pick(k=1)`` drawing ``k`` of ``items`` by weight; the cumulative weights are summed once, so a draw
    costs O(log n) instead of ``rng.choices``' O(n) per call with plain weights (same draws either way)."""
    cumulative = list(itertools.accumulate(weights))
    return lambda k=1: rng.choices(items, cum_weights=cumulative, k=k)
