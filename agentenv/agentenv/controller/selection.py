"""Which tasks a run plays: a split, positions within it, a seeded sample stratified by task type, a limit.

- ``split`` alone: every task of the split (its ``/info`` index list);
- ``split`` with ``indices``: the tasks at those *positions* of the split (``--split test --indices 5:10`` is
  the test split's sixth to tenth task), refused when a position is past the split's end;
- ``indices`` alone: raw task indices, as AgentGym names tasks; a warning names the split of any that lie
  outside the run's default split (TextCraft's tasks 0-1 are train tasks, not test ones), and one the env
  does not serve is refused before anything is played;
- ``sample``: that many of the chosen tasks, drawn with ``seed``, in proportion to their task types (every
  type at least once when the sample is large enough), kept in the split's order;
- ``limit``: the first that many.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentenv.env import info_splits
from agentenv.protocol import BadRequest


@dataclass
class TaskSelection:
    """The tasks of one env a run plays, and what the user should know about them."""

    env: str
    indices: list[int]
    warnings: list[str] = field(default_factory=list)


def select_tasks(
    env: str,
    source: Any,
    *,
    default_split: str,
    split: str | None = None,
    indices: Sequence[int] | None = None,
    sample: int = 0,
    limit: int = 0,
    seed: int = 0,
) -> TaskSelection:
    """The tasks of ``env`` (an :class:`~agentenv.controller.sources.EnvSource`) the options name; a
    ``ValueError`` says what cannot be chosen."""
    splits = info_splits(source.info())
    warnings: list[str] = []
    if split is not None and split not in splits:
        raise ValueError(f"{env}: no split {split!r} (it has: {', '.join(splits) or 'none'})")
    if split is not None and indices is not None:
        tasks = list(splits[split])
        past = [i for i in indices if i >= len(tasks)]
        if past:
            raise ValueError(
                f"{env}: the {split} split has {len(tasks)} tasks, so positions {listing(past)} are past its end "
                f"(--indices counts within --split)"
            )
        chosen = [tasks[i] for i in indices]
    elif indices is not None:
        chosen = list(indices)
        elsewhere: dict[str, list[int]] = defaultdict(list)
        for idx in chosen:
            if idx not in splits.get(default_split, ()):
                elsewhere[next((name for name, r in splits.items() if idx in r), "no")].append(idx)
        if elsewhere.get("no"):
            check_served(source, elsewhere["no"])
        for name, found in elsewhere.items():
            warnings.append(
                f"{env}: tasks {listing(found)} are in {'its ' + name if name != 'no' else 'no'} split, not "
                f"{default_split}; for positions within a split give --split too (--split {default_split} --indices ...)"
            )
    else:
        chosen = list(splits[split or default_split])
    if sample and sample < len(chosen):
        chosen = stratified_sample(chosen, task_types(source, chosen), sample, seed)
    if limit:
        chosen = chosen[:limit]
    return TaskSelection(env, chosen, warnings)


def check_served(source: Any, indices: Sequence[int]) -> None:
    """A ``ValueError`` when the env does not serve one of ``indices``: asked of the env, which refuses such
    an index as its reset would, before anything is played."""
    try:
        task_types(source, indices)
    except BadRequest as exc:
        raise ValueError(f"{source.name}: {exc.message}") from None


def task_types(source: Any, indices: Sequence[int]) -> list[str | None]:
    """Each task's type, where the source can tell it without playing the task (else ``None``)."""
    ask = getattr(source, "task_types", None)
    return list(ask(list(indices))) if ask is not None else [None] * len(indices)


def stratified_sample(indices: Sequence[int], types: Sequence[str | None], n: int, seed: int) -> list[int]:
    """``n`` of ``indices`` drawn with ``seed``, each type in proportion to its share (largest remainders
    round; every type gets one when ``n`` allows), returned in the order given."""
    groups: dict[str | None, list[int]] = defaultdict(list)
    for idx, kind in zip(indices, types, strict=True):
        groups[kind].append(idx)
    total = len(indices)
    quota = {kind: n * len(members) / total for kind, members in groups.items()}
    counts = {kind: int(q) for kind, q in quota.items()}
    if n >= len(groups):
        for kind in counts:
            counts[kind] = max(counts[kind], 1)
    left = n - sum(counts.values())
    for kind in sorted(quota, key=lambda k: quota[k] - int(quota[k]), reverse=True):
        if left <= 0:
            break
        if counts[kind] < len(groups[kind]):
            counts[kind] += 1
            left -= 1
    while sum(counts.values()) > n:  # the minimum of one each overshot: trim the largest groups
        counts[max(counts, key=lambda k: counts[k])] -= 1
    rng = random.Random(seed)
    picked = {idx for kind, members in groups.items() for idx in rng.sample(members, min(counts[kind], len(members)))}
    return [idx for idx in indices if idx in picked]


def listing(values: Sequence[int], most: int = 6) -> str:
    """The first ``most`` values, and how many more (``1, 2, 3 and 4 more``)."""
    shown = ", ".join(map(str, values[:most]))
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")
