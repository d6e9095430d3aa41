"""The task index: deterministic, contiguous splits, AgentGym's exclusions, the table matches the engine."""

from collections import Counter

import pytest
from agentenv_sciworld import SciWorldEnv, tasks
from agentenv_sciworld.tasks import EXCLUDED_TASK_IDS, TASK_TYPES, data_idx_of, task_at


def test_index_covers_every_included_variation_once():
    pairs = [(t.task_name, t.variation) for t in map(task_at, range(tasks.num_tasks()))]
    assert len(pairs) == len(set(pairs)) == 4639
    expected = {(t.name, v) for t in TASK_TYPES for v in range(t.variations)}
    assert set(pairs) == expected
    assert {t.task_id for t in TASK_TYPES}.isdisjoint(EXCLUDED_TASK_IDS)
    assert len(TASK_TYPES) == 23
    with pytest.raises(IndexError):
        task_at(4639)
    with pytest.raises(IndexError):
        task_at(-1)


def test_index_is_deterministic_and_invertible():
    assert task_at(0) == tasks.Task(0, "1-1", "boil", 0, "train")
    assert task_at(1).task_name == "melt"
    assert [task_at(i).task_name for i in range(23)] == [t.name for t in TASK_TYPES]
    assert task_at(23) == tasks.Task(23, "1-1", "boil", 1, "train")
    for idx in (0, 17, 2311, 2312, 3467, 3468, 3513, 4638):
        t = task_at(idx)
        assert data_idx_of(t.task_name, t.variation) == idx
    with pytest.raises(KeyError):
        data_idx_of("grow-plant", 0)  # 5-1 is excluded


def test_splits_are_the_variation_splits_in_order():
    splits = SciWorldEnv.splits
    assert splits["train"] == range(0, 2312)
    assert splits["dev"] == range(2312, 3468)
    assert splits["test_all"] == range(3468, 4639)
    assert splits["test"] == range(3468, 3468 + 46)
    for name, block in (("train", "train"), ("dev", "dev"), ("test_all", "test")):
        assert {task_at(i).block for i in splits[name]} == {block}
    # the small test split: the first two test variations of every task type
    small = [task_at(i) for i in splits["test"]]
    assert Counter(t.task_name for t in small) == {t.name: 2 for t in TASK_TYPES}
    assert {(t.task_name, t.variation) for t in small} == {
        (t.name, v) for t in TASK_TYPES for v in t.test[:2]
    }
    assert SciWorldEnv.split_of(3468) == "test" and SciWorldEnv.split_of(4000) == "test_all"


def test_table_matches_scienceworld_task_list():
    from scienceworld.constants import ID2TASK

    included = [(tid, name) for tid, name in ID2TASK.items() if tid not in EXCLUDED_TASK_IDS]
    assert included == [(t.task_id, t.name) for t in TASK_TYPES]


@pytest.mark.slow
def test_table_matches_engine_variation_splits(env):
    """The variation counts in TASK_TABLE are the engine's (one JVM, 23 loads: a few seconds)."""
    for t in TASK_TYPES:
        env.engine.load(t.name, 0)
        assert env.engine.max_variations(t.name) == t.variations
        assert env.engine.variations() == {"train": list(t.train), "dev": list(t.dev), "test": list(t.test)}
