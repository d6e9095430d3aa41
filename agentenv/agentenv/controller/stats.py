"""95% confidence intervals for result tables: a success rate's, a mean score's, an average over envs', and a
paired difference's between two agents on the same tasks.

Each says how far a figure could move on another draw of tasks of the same kind, so ``n`` is always the
number of tasks: several samples of one task are one task's mean, not independent draws.  None is
computed by resampling, so a table reads the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z_95 = 1.959963984540054  # the standard normal's 97.5% quantile


def mean_interval(mean: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for the mean of ``n`` values in 0-1 (``(0, 1)`` when ``n`` is 0).

    For successes (values 0 or 1) this is Wilson's interval of the rate: unlike the normal approximation it
    stays inside 0-1 and is not empty at 0% or 100%.  For scores between 0 and 1 it is on the safe side:
    0-or-1 values spread the most of any with that mean, so it is as wide as the widest spread the mean
    allows (a bootstrap of scores all at 1 would be empty).  A mean outside 0-1 (rewards past the env's
    range) is taken as 0 or 1."""
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, mean))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for ``successes`` out of ``n`` (``(0, 1)`` when ``n`` is 0)."""
    if n > 0 and not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    return mean_interval(successes / n if n > 0 else 0.0, n, z)


def average_interval(groups: Sequence[tuple[float, int]], z: float = Z_95) -> tuple[float, float]:
    """An interval for the average of several envs' means (``(mean in 0-1, tasks)`` per env, each env
    weighing the same): the average plus or minus ``z`` standard errors, each env's variance ``p(1 - p) / n``
    taken at its Agresti-Coull estimate ``p = (n * mean + z²/2) / (n + z²)``, so that envs at 0 or 1 still
    count as uncertain; clipped to 0-1.  For scores, as for :func:`mean_interval`, on the safe side."""
    groups = [(min(1.0, max(0.0, m)), n) for m, n in groups if n > 0]
    if not groups:
        return 0.0, 1.0
    if len(groups) == 1:  # the average of one env is that env's mean: its row's interval
        return mean_interval(*groups[0], z)
    mean = sum(m for m, _ in groups) / len(groups)
    variance = 0.0
    for m, n in groups:
        adjusted = (n * m + z * z / 2) / (n + z * z)
        variance += adjusted * (1 - adjusted) / n
    half = z * math.sqrt(variance) / len(groups)
    return max(0.0, mean - half), min(1.0, mean + half)


def paired_difference_interval(only_base: int, only_other: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """An interval for ``other - base``, two success rates on the same ``n`` tasks, from the tasks only one
    of them solved: Tango's (1998) score interval, every difference its score test does not reject.

    Unlike the plain one (``sd / sqrt(n)`` of the per-task differences) it is not empty when the two agree
    on every task and stays in -1..1; unlike Agresti and Min's (a half added to each cell), it keeps its
    coverage when only one agent solved tasks the other did not (about 87% there, against 95%)."""
    if n <= 0:
        return -1.0, 1.0
    if not (0 <= only_base and 0 <= only_other and only_base + only_other <= n):
        raise ValueError(f"{only_base} + {only_other} tasks solved by one agent only, out of {n}")
    b, c = only_other, only_base  # Tango's n12 and n21: the difference is (n12 - n21) / n

    def score(delta: float) -> float:  # the score statistic at difference ``delta``; falls as delta rises
        # the restricted maximum-likelihood estimate of P(only base) under ``delta``
        qb = -b - c + (2 * n - b + c) * delta
        qc = -c * delta * (1 - delta)
        p21 = (math.sqrt(max(0.0, qb * qb - 8 * n * qc)) - qb) / (4 * n)
        variance = n * (2 * p21 + delta * (1 - delta))
        if variance <= 0:  # only at delta = +-1 with every task one-sided that way
            return 0.0 if b - c == n * delta else math.copysign(math.inf, b - c - n * delta)
        return (b - c - n * delta) / math.sqrt(variance)

    def root(target: float, low: float, high: float) -> float:  # where score(delta) = target, by bisection
        for _ in range(100):
            middle = (low + high) / 2
            low, high = (middle, high) if score(middle) > target else (low, middle)
        return (low + high) / 2

    estimate = (b - c) / n
    lower = -1.0 if estimate <= -1 else root(z, -1.0, estimate)
    upper = 1.0 if estimate >= 1 else root(-z, estimate, 1.0)
    return lower, upper
