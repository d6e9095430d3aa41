"""Which tasks a run plays: positions within a split, raw indices with a warning, a stratified sample."""

from __future__ import annotations

from collections import Counter

import pytest

from agentenv.controller.selection import select_tasks, stratified_sample
from agentenv.controller.sources import LocalEnv
from agentenv.protocol import BadRequest
from agentenv.testing import running_server

from test_controller_support import GuessEnv  # train 0..99, test 100..139; task type even / odd

SOURCE = LocalEnv(GuessEnv)


def test_indices_with_a_split_are_positions_within_it():
    chosen = select_tasks("guess", SOURCE, default_split="test", split="test", indices=[5, 6, 7, 8, 9])
    assert chosen.indices == [105, 106, 107, 108, 109] and not chosen.warnings
    with pytest.raises(ValueError, match="the test split has 40 tasks, so positions 40, 41 are past its end"):
        select_tasks("guess", SOURCE, default_split="test", split="test", indices=[39, 40, 41])


def test_raw_indices_outside_the_default_split_are_named_with_their_split():
    chosen = select_tasks("guess", SOURCE, default_split="test", indices=[0, 1, 100])
    assert chosen.indices == [0, 1, 100]
    (warning,) = chosen.warnings
    assert "tasks 0, 1 are in its train split, not test" in warning and "--split test --indices" in warning


def test_raw_indices_the_env_does_not_serve_are_refused_before_anything_plays():
    """An index outside every split was played anyway: every episode an env error, and a rerun failed the same
    way.  The env's own rule decides (BabyAI serves seeds beyond its splits)."""
    with pytest.raises(ValueError, match=r"^guess: task index 99999 is outside every guess split"):
        select_tasks("guess", SOURCE, default_split="test", indices=[100, 99999])
    babyai = pytest.importorskip("agentenv_babyai")
    with LocalEnv(babyai.BabyAIEnv) as source:
        chosen = select_tasks("babyai", source, default_split="test", indices=[500_000])
        assert chosen.indices == [500_000] and "in no split" in chosen.warnings[0]


def test_an_unknown_split_is_refused():
    with pytest.raises(ValueError, match=r"guess: no split 'dev' \(it has: train, test\)"):
        select_tasks("guess", SOURCE, default_split="test", split="dev")


def test_a_sample_keeps_the_type_mix_and_is_seeded():
    chosen = select_tasks("guess", SOURCE, default_split="train", sample=20, seed=3)
    assert len(chosen.indices) == 20 and chosen.indices == sorted(chosen.indices)
    assert Counter(GuessEnv.task_type_of(i) for i in chosen.indices) == {"even": 10, "odd": 10}
    assert select_tasks("guess", SOURCE, default_split="train", sample=20, seed=3).indices == chosen.indices
    assert select_tasks("guess", SOURCE, default_split="train", sample=20, seed=4).indices != chosen.indices
    limited = select_tasks("guess", SOURCE, default_split="train", sample=20, seed=3, limit=5)
    assert limited.indices == chosen.indices[:5]
    assert select_tasks("guess", SOURCE, default_split="test", sample=1000).indices == list(range(100, 140))


def test_a_sample_beyond_the_tasks_is_named_when_the_user_asked_for_it(capsys):
    """`--sample 1000` of 40 tasks played all 40 and said nothing; a dataset's own size (collect
    --out-dataset with no task option) is no --sample of the user's."""
    import argparse

    from agentenv.controller.commands import _tasks

    args = argparse.Namespace(default_split="test", split=None, indices=None, sample=1000, limit=None, seed=0)
    assert len(_tasks({"guess": SOURCE}, args)) == 40
    assert "warning: guess: --sample 1000 is more than the 40 tasks chosen: all play" in capsys.readouterr().err
    assert len(_tasks({"guess": SOURCE}, argparse.Namespace(**vars(args) | {"sample": None}), {"guess": 1000})) == 40
    assert capsys.readouterr().err == ""


def test_a_small_sample_still_covers_every_type_and_a_skewed_mix_keeps_its_shares():
    types = ["rare"] + ["common"] * 99
    picked = stratified_sample(list(range(100)), types, 2, seed=0)
    assert 0 in picked and len(picked) == 2  # the one rare task is drawn
    picked = stratified_sample(list(range(100)), ["a"] * 75 + ["b"] * 25, 8, seed=0)
    assert sum(i < 75 for i in picked) == 6 and len(picked) == 8
    untyped = stratified_sample(list(range(10)), [None] * 10, 4, seed=1)
    assert len(untyped) == 4


def test_task_types_come_over_http_too():
    from agentenv.controller.sources import RemoteEnv

    with running_server(GuessEnv) as url, RemoteEnv("guess", url) as source:
        assert source.task_types([1, 2, 3]) == ["odd", "even", "odd"]
        chosen = select_tasks("guess", source, default_split="test", sample=4, seed=0)
        assert Counter(GuessEnv.task_type_of(i) for i in chosen.indices) == {"even": 2, "odd": 2}
        # an index the env does not serve is refused as its reset refuses it, so a run can check its tasks first
        with pytest.raises(BadRequest, match=r"task index 999 is outside every guess split"):
            source.task_types([1, 999])
    with pytest.raises(BadRequest, match=r"task index 999 is outside every guess split"):
        SOURCE.task_types([999])


def test_a_trainer_s_task_list_is_checked_by_the_env_itself():
    """Indices outside every split played as no task (GRPO: every reward None, the run marked done); the
    env's own rule decides, so BabyAI's held-out seeds beyond its splits still play."""
    from agentenv.trainer.rollouts import task_indices

    assert task_indices(SOURCE, "test", [3, 120]) == [3, 120]
    with pytest.raises(ValueError, match=r"^guess: task index 999 is outside every guess split"):
        task_indices(SOURCE, "test", [3, 999])
    babyai = pytest.importorskip("agentenv_babyai")
    with LocalEnv(babyai.BabyAIEnv) as source:
        assert task_indices(source, "test", [500_000]) == [500_000]
