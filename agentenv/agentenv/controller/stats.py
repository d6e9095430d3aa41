"""95% confidence intervals for a benchmark table: Wilson's for a success rate, the bootstrap for a mean.

The bootstrap of values that are all equal (an expert's scores) is that value alone: it measures the
spread seen, and there was none; Wilson's interval still allows for failures not seen.

Both say how far a figure could move on another draw of tasks of the same kind.  The paired difference
between two agents on the same tasks is :mod:`agentenv.controller.compare`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z_95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for ``successes`` out of ``n`` (``(0, 1)`` when ``n`` is 0).  Unlike the
    normal approximation it stays inside 0-1 and is not empty at 0% or 100%."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def average_rate_interval(counts: Sequence[tuple[int, int]], z: float = Z_95) -> tuple[float, float]:
    """An interval for the average of several success rates (``(successes, n)`` per env, each env weighing
    the same): the average plus or minus ``z`` standard errors, each env's variance ``p(1 - p) / n`` taken at
    its Agresti-Coull estimate ``p = (x + z²/2) / (n + z²)``, so that envs at 0% or 100% still count as
    uncertain; clipped to 0-1."""
    counts = [(x, n) for x, n in counts if n > 0]
    if not counts:
        return 0.0, 1.0
    if len(counts) == 1:  # the average of one env is that env's rate: its row's interval
        return wilson(*counts[0], z)
    mean = sum(x / n for x, n in counts) / len(counts)
    variance = 0.0
    for x, n in counts:
        adjusted = (x + z * z / 2) / (n + z * z)
        variance += adjusted * (1 - adjusted) / n
    half = z * math.sqrt(variance) / len(counts)
    return max(0.0, mean - half), min(1.0, mean + half)


def paired_difference_interval(only_base: int, only_other: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """An interval for the difference of two success rates measured on the same ``n`` tasks, from the tasks
    only one of them solved: Agresti and Min's (2005), the normal interval after adding one half to each
    cell of the 2x2 table.  Unlike the plain one (``sd / sqrt(n)`` of the per-task differences) it is not
    empty when the two agree on every task, keeps its coverage when few tasks differ, and stays in -1..1."""
    if n <= 0:
        return -1.0, 1.0
    b, c, m = only_base + 0.5, only_other + 0.5, n + 2
    centre = (c - b) / m
    half = z * math.sqrt(max(0.0, (b + c) - (c - b) ** 2 / m)) / m
    return max(-1.0, centre - half), min(1.0, centre + half)


def bootstrap_mean(values: Sequence[float], *, resamples: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values`` (``resamples`` draws with replacement,
    seeded: the same values give the same interval)."""
    return bootstrap_mean_of_means([values], resamples=resamples, seed=seed, level=level)


def bootstrap_mean_of_means(
    groups: Sequence[Sequence[float]], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """The percentile bootstrap interval of the average of the groups' means (each group resampled on its
    own: the "average over envs" row, where every env weighs the same whatever its number of tasks)."""
    groups = [np.asarray(g, dtype=float) for g in groups if len(g)]
    if not groups:
        raise ValueError("no values to bootstrap")
    rng = np.random.default_rng(seed)
    means = np.mean([g[rng.integers(0, len(g), (resamples, len(g)))].mean(axis=1) for g in groups], axis=0)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)
