"""When a tool result reaches a gold subgoal, and when a ``finish`` answer is the gold answer."""

from __future__ import annotations

import math
from typing import Any

#: two places closer than this are one place (AgentBoard's Weather rule)
SAME_PLACE_KM = 50.0


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance (haversine, Earth radius 6371 km)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(a)))


def same_value(a: Any, b: Any, *, places: bool = False) -> bool:
    """Structural equality of JSON values, numbers within 1e-6; with ``places``, objects that carry a
    ``latitude`` and a ``longitude`` match within :data:`SAME_PLACE_KM` when the rest of them is equal."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        if places and _is_place(a) and _is_place(b):
            near = distance_km(a["latitude"], a["longitude"], b["latitude"], b["longitude"]) < SAME_PLACE_KM
            rest_a = {k: v for k, v in a.items() if k not in ("latitude", "longitude")}
            rest_b = {k: v for k, v in b.items() if k not in ("latitude", "longitude")}
            return near and same_value(rest_a, rest_b, places=places)
        return a.keys() == b.keys() and all(same_value(a[k], b[k], places=places) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y, places=places) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _is_place(value: dict[str, Any]) -> bool:
    return all(isinstance(value.get(k), (int, float)) and not isinstance(value.get(k), bool)
               for k in ("latitude", "longitude"))


def same_answer(given: Any, gold: Any) -> bool:
    """Whether a ``finish`` answer is the gold one.

    Strings compare case-insensitively, without surrounding quotes, spaces or a final full stop; a number
    matches what rounds to the gold, less than half a unit of its last decimal away (18.5 takes 18.46..18.54
    but not 18.45; 444 takes 443.6..444.4),
    whether given as a number or as a string; lists compare as multisets (AgentBoard sorts list answers).
    """
    if isinstance(gold, list):
        if isinstance(given, str):
            given = [part for part in (p.strip() for p in given.strip("[]").split(",")) if part]
        if not isinstance(given, list) or len(given) != len(gold):
            return False
        remaining = list(gold)
        for item in given:
            hit = next((i for i, g in enumerate(remaining) if same_answer(item, g)), None)
            if hit is None:
                return False
            remaining.pop(hit)
        return True
    if isinstance(gold, bool) or isinstance(given, bool):
        return _text(given) == _text(gold)
    gold_number, given_number = _number(gold), _number(given)
    if gold_number is not None and given_number is not None and not isinstance(gold, str):
        half = _half_unit(gold)  # what rounds to the gold, a tie not (the margin: floats' representation)
        return given_number == gold_number or abs(given_number - gold_number) < half * (1 - 1e-6)
    return _text(given) == _text(gold)


def _text(value: Any) -> str:
    text = str(value).strip().removesuffix(".").strip().strip("'\"").strip()
    return " ".join(text.split()).casefold()


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        try:
            number = float(value.strip().replace(",", ""))
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _half_unit(gold: float) -> float:
    if isinstance(gold, int):
        return 0.5
    text = repr(float(gold))
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 6
    return 0.5 * 10 ** -decimals
