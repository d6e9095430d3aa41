"""The task index: ``data_idx`` -> one ScienceWorld ``(task, variation)`` pair.

As in AgentGym, the index runs over every variation of every task except task ids 5-1, 5-2, 9-1, 9-2,
9-3, 10-1 and 10-2 (grow-plant, grow-fruit, the three inclined-plane tasks and the two mendelian-genetics
tasks): 23 task types, 4,639 variations.  Unlike AgentGym (task after task), the index is laid out by
ScienceWorld's own variation splits, so that every split is one contiguous index range:

- all **train** variations first, then all **dev** variations, then all **test** variations;
- inside each block, round-robin over the 23 task types in ``tasks.json`` order: the first variation of
  that split of every task, then the second of every task, and so on (a task with fewer variations
  drops out when it has none left).  Any prefix of a block is therefore spread evenly over task types.

The splits the env serves are ``train``, ``dev``, ``test_all`` (the whole test block) and ``test``, the
first :data:`TEST_PER_TASK` test variations of every task type (the start of the test block), which an
expert or model evaluation covers in minutes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

#: task ids AgentGym leaves out of the index
EXCLUDED_TASK_IDS = frozenset({"5-1", "5-2", "9-1", "9-2", "9-3", "10-1", "10-2"})

#: ``(task id, task name, train, dev, test variation counts)`` in ``tasks.json`` order, for
#: ``scienceworld`` 1.2.3.  Each task's variations are split contiguously: train ``0..a-1``, dev
#: ``a..a+b-1``, test after that.  ``tests/test_tasks.py`` checks this table against the engine.
TASK_TABLE: tuple[tuple[str, str, int, int, int], ...] = (
    ("1-1", "boil", 14, 7, 9),
    ("1-2", "melt", 14, 7, 9),
    ("1-3", "freeze", 14, 7, 9),
    ("1-4", "change-the-state-of-matter-of", 14, 7, 9),
    ("2-1", "use-thermometer", 270, 135, 135),
    ("2-2", "measure-melting-point-known-substance", 218, 109, 109),
    ("2-3", "measure-melting-point-unknown-substance", 150, 75, 75),
    ("3-1", "power-component", 10, 5, 5),
    ("3-2", "power-component-renewable-vs-nonrenewable-energy", 10, 5, 5),
    ("3-3", "test-conductivity", 450, 225, 225),
    ("3-4", "test-conductivity-of-unknown-substances", 300, 150, 150),
    ("4-1", "find-living-thing", 150, 75, 75),
    ("4-2", "find-non-living-thing", 150, 75, 75),
    ("4-3", "find-plant", 150, 75, 75),
    ("4-4", "find-animal", 150, 75, 75),
    ("6-1", "chemistry-mix", 16, 8, 8),
    ("6-2", "chemistry-mix-paint-secondary-color", 18, 9, 9),
    ("6-3", "chemistry-mix-paint-tertiary-color", 18, 9, 9),
    ("7-1", "lifespan-longest-lived", 62, 31, 32),
    ("7-2", "lifespan-shortest-lived", 62, 31, 32),
    ("7-3", "lifespan-longest-lived-then-shortest-lived", 62, 31, 32),
    ("8-1", "identify-life-stages-1", 6, 3, 5),
    ("8-2", "identify-life-stages-2", 4, 2, 4),
)

#: the blocks of the index, in order
BLOCKS = ("train", "dev", "test")
#: test variations per task type in the small ``test`` split
TEST_PER_TASK = 2


@dataclass(frozen=True)
class TaskType:
    """One ScienceWorld task and its variation splits."""

    task_id: str
    name: str
    train: range
    dev: range
    test: range

    @property
    def variations(self) -> int:
        return self.test.stop


@dataclass(frozen=True)
class Task:
    """What ``data_idx`` names: a task variation, and the block of the index it lies in."""

    data_idx: int
    task_id: str
    task_name: str
    variation: int
    block: str


def _task_type(task_id: str, name: str, train: int, dev: int, test: int) -> TaskType:
    return TaskType(
        task_id, name, range(train), range(train, train + dev), range(train + dev, train + dev + test)
    )


TASK_TYPES: tuple[TaskType, ...] = tuple(_task_type(*row) for row in TASK_TABLE)
TASK_NAMES: tuple[str, ...] = tuple(t.name for t in TASK_TYPES)


@cache
def index() -> tuple[tuple[TaskType, int, str], ...]:
    """Every ``(task type, variation, block)`` in index order (built once; 4,639 entries)."""
    entries: list[tuple[TaskType, int, str]] = []
    for block in BLOCKS:
        per_task = [(t, getattr(t, block)) for t in TASK_TYPES]
        for rank in range(max(len(variations) for _, variations in per_task)):
            for task_type, variations in per_task:
                if rank < len(variations):
                    entries.append((task_type, variations[rank], block))
    return tuple(entries)


def block_ranges() -> dict[str, range]:
    """The index range of each block (``train``, ``dev``, ``test``)."""
    ranges, start = {}, 0
    for block in BLOCKS:
        size = sum(len(getattr(t, block)) for t in TASK_TYPES)
        ranges[block] = range(start, start + size)
        start += size
    return ranges


def splits() -> dict[str, range]:
    """The splits the env serves: ``train``, ``dev``, ``test`` (small, fixed) and ``test_all``."""
    blocks = block_ranges()
    test = blocks["test"]
    return {
        "train": blocks["train"],
        "dev": blocks["dev"],
        "test": range(test.start, test.start + TEST_PER_TASK * len(TASK_TYPES)),
        "test_all": test,
    }


def num_tasks() -> int:
    return sum(t.variations for t in TASK_TYPES)


def task_at(data_idx: int) -> Task:
    """The task variation ``data_idx`` names (an IndexError outside ``0 .. num_tasks() - 1``)."""
    entries = index()
    if not 0 <= data_idx < len(entries):
        raise IndexError(f"sciworld task index {data_idx} is outside 0..{len(entries) - 1}")
    task_type, variation, block = entries[data_idx]
    return Task(data_idx, task_type.task_id, task_type.name, variation, block)


@cache
def _positions() -> dict[tuple[str, int], int]:
    return {(t.name, v): i for i, (t, v, _) in enumerate(index())}


def data_idx_of(task_name: str, variation: int) -> int:
    """The index of a ``(task name, variation)`` pair (a KeyError for an excluded or unknown one)."""
    try:
        return _positions()[(task_name, variation)]
    except KeyError:
        raise KeyError(f"({task_name!r}, {variation}) is not in the sciworld task index") from None
