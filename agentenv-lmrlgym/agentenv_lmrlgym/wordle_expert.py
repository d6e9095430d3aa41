"""The Wordle expert: a constraint-filtering solver.

It keeps the answers consistent with all feedback so far and guesses the word that splits them into
the most feedback groups ("most parts"), so whatever the feedback, few candidates remain:

1. no feedback yet: the fixed opener :data:`OPENER`;
2. one or two candidates left: guess a candidate;
3. otherwise: among the candidates, then (only if no candidate separates them all) among the answer
   words that test the most telling letters (:func:`_by_telling_letters`), the guess with the most distinct feedback patterns over the candidates; ties go to the
   smaller largest group, then to a candidate (it may win outright), then alphabetically.

Decisions are cached by feedback history, so the common early states cost nothing after the first time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from .words import answers, feedback, spaced

OPENER = "slate"
#: at most how many candidates, and how many other words, a decision scores exactly ...
SHORTLIST = 60
#: ... and fewer when many candidates remain, so one decision computes about this many feedbacks at
#: most (a few tens of milliseconds: the server runs Wordle inline on its event loop)
FEEDBACK_BUDGET = 8000


@dataclass(frozen=True)
class Decision:
    guess: str
    thought: str
    candidates: int


def _quoted(words: list[str], limit: int = 5) -> str:
    shown = ", ".join(f'"{w}"' for w in words[:limit])
    return shown + (f" and {len(words) - limit} more" if len(words) > limit else "")


@lru_cache(maxsize=1)
def _sorted_answers() -> tuple[str, ...]:
    return tuple(sorted(answers()))


def _split(guess: str, candidates: list[str]) -> tuple[int, int]:
    """(number of feedback groups, size of the largest group) of ``guess`` over ``candidates``."""
    groups = Counter(feedback(guess, w) for w in candidates)
    return len(groups), max(groups.values())


def _by_telling_letters(words: list[str] | tuple[str, ...], candidates: list[str], limit: int) -> list[str]:
    """The ``limit`` words of ``words`` whose letters best tell ``candidates`` apart.

    A letter tells candidates apart when some have it and some do not, so a word scores the sum, over
    its distinct letters, of ``min(candidates with the letter, candidates without it)``.  Only the
    words this cheap score ranks first are then scored exactly, which keeps a decision fast.
    """
    n = len(candidates)
    having = Counter(letter for word in candidates for letter in set(word))
    weight = {letter: min(k, n - k) for letter, k in having.items()}
    scored = sorted((-sum(weight.get(letter, 0) for letter in set(word)), word) for word in words)
    return [word for _, word in scored[:limit]]


def best_guess(candidates: list[str]) -> tuple[str, int, int]:
    """The most-parts guess for ``candidates`` (at least 3): ``(guess, groups, largest group)``.

    Scored exactly: the :data:`SHORTLIST` candidates and, unless one of them gives every candidate its
    own feedback, the :data:`SHORTLIST` other answer words with the most telling letters (fewer of each
    when many candidates remain, see :data:`FEEDBACK_BUDGET`).
    """
    best: tuple[int, int, int, str] | None = None  # (-groups, largest, not a candidate, word)
    size = max(4, min(SHORTLIST, FEEDBACK_BUDGET // (2 * len(candidates))))
    shortlist = candidates if len(candidates) <= size else _by_telling_letters(candidates, candidates, size)
    for word in shortlist:
        groups, largest = _split(word, candidates)
        key = (-groups, largest, 0, word)
        if best is None or key < best:
            best = key
        if groups == len(candidates):  # every candidate gets its own feedback: nothing beats this
            return word, groups, largest
    assert best is not None
    chosen = set(candidates)
    others = [w for w in _sorted_answers() if w not in chosen]
    for word in _by_telling_letters(others, candidates, size):
        groups, largest = _split(word, candidates)
        key = (-groups, largest, 1, word)
        if key < best:
            best = key
    return best[3], -best[0], best[1]


@lru_cache(maxsize=4096)
def candidates_after(history: tuple[tuple[str, str], ...]) -> list[str]:
    """The answers (sorted) consistent with every ``(guess, feedback)`` pair of ``history``."""
    if not history:
        return list(_sorted_answers())
    guess, mark = history[-1]
    return _groups(history[:-1], guess).get(mark, [])


@lru_cache(maxsize=1024)
def _groups(history: tuple[tuple[str, str], ...], guess: str) -> dict[str, list[str]]:
    """The candidates after ``history``, grouped by the feedback ``guess`` would get from each."""
    groups: dict[str, list[str]] = {}
    for word in candidates_after(history):
        groups.setdefault(feedback(guess, word), []).append(word)
    return groups


@lru_cache(maxsize=4096)
def decide(history: tuple[tuple[str, str], ...]) -> Decision:
    """The expert's next guess after the ``(guess, feedback)`` pairs of ``history``."""
    if not history:
        return Decision(
            OPENER,
            f'No feedback yet, so all {len(answers())} answers are possible. I open with "{spaced(OPENER)}": '
            "its five different, common letters split the possible answers into many small groups.",
            len(answers()),
        )
    candidates = candidates_after(history)
    n = len(candidates)
    if n == 0:  # cannot happen for a real answer; answer sensibly anyway
        return Decision(OPENER, "No answer I know fits the feedback; I try a common word.", 0)
    if n == 1:
        word = candidates[0]
        return Decision(
            word, f'Only "{spaced(word)}" is consistent with the feedback, so it must be the answer.', 1
        )
    if n == 2:
        a, b = candidates
        return Decision(
            a,
            f'2 candidates remain consistent with the feedback: "{spaced(a)}" and "{spaced(b)}". I guess '
            f'"{spaced(a)}"; if it is wrong, the answer is "{spaced(b)}".',
            2,
        )
    guess, groups, largest = best_guess(candidates)
    if guess in candidates:
        why = f'"{spaced(guess)}" is one of them'
    else:
        why = f'"{spaced(guess)}" cannot be the answer, but it tells them apart best'
    if groups == n:
        outcome = "so its feedback will single out the answer"
    else:
        outcome = f"so at most {largest} will remain after its feedback"
    return Decision(
        guess,
        f"{n} candidates remain consistent with the feedback ({_quoted(candidates)}). {why}: it splits "
        f"them into {groups} feedback groups, {outcome}.",
        n,
    )
