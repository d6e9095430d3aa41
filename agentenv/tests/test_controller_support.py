"""A small environment for the controller's tests (this file holds no tests itself).

Guess the number: task ``i`` hides ``i % 16``; the agent answers ``guess N`` and hears "higher" or "lower".
The expert bisects, so it always wins within 5 guesses.  Task type is "even" or "odd" by the hidden number.
"""

from __future__ import annotations

import gc
import time

from agentenv.env import Environment, ExpertAction, StepResult


def spend_cpu(seconds: float) -> None:
    """Compute for ``seconds`` of this thread's CPU."""
    spent = time.thread_time() + seconds
    while time.thread_time() < spent:
        pass


def _slow_collection(phase: str, info: dict) -> None:
    if phase == "start":
        spend_cpu(0.15)


def meet_slow_collections() -> None:
    """Allocate a few objects while the garbage collector runs at every allocation and each collection takes
    0.15 s of CPU, as a full one of a test run's process takes (0.14 s with torch loaded): 0.45 s or more
    spent, unless the collector is off."""
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    gc.callbacks.append(_slow_collection)
    try:
        _ = [[] for _ in range(3)]
    finally:
        gc.callbacks.remove(_slow_collection)
        gc.set_threshold(*threshold)


class GuessEnv(Environment):
    name = "guess"
    splits = {"train": range(0, 100), "test": range(100, 140)}
    max_rounds = 6
    instruction = (
        "Guess the hidden number between 0 and 15. Reply with\nThought:\n<reasoning>\n\nAction:\nguess <N>"
    )

    def __init__(self) -> None:
        self.secret = 0
        self.low, self.high = 0, 15
        self.last = ""
        self.closed = False

    def reset(self, data_idx: int) -> str:
        self.secret = data_idx % 16
        self.low, self.high = 0, 15
        self.last = "A number between 0 and 15 is hidden. Make your first guess."
        return self.last

    def step(self, action: str) -> StepResult:
        word, _, number = action.strip().partition(" ")
        if word.lower() != "guess" or not number.strip().isdigit():
            self.last = f"Invalid action {action!r}. Use: guess <N>"
            return StepResult(self.last)
        guess = int(number)
        if guess == self.secret:
            self.last = f"Correct, the number was {guess}."
            return StepResult(self.last, reward=1.0, terminated=True, score=1.0)
        if guess < self.secret:
            self.low = max(self.low, guess + 1)
            self.last = f"{guess} is too low: the number is higher."
        else:
            self.high = min(self.high, guess - 1)
            self.last = f"{guess} is too high: the number is lower."
        return StepResult(self.last)

    def observation(self) -> str:
        return self.last

    def expert_action(self) -> ExpertAction:
        middle = (self.low + self.high) // 2
        return ExpertAction(f"The number is between {self.low} and {self.high}; bisect.", f"guess {middle}")

    def task_type(self) -> str:
        return "even" if self.secret % 2 == 0 else "odd"

    @classmethod
    def task_type_of(cls, data_idx: int) -> str:
        return "even" if data_idx % 16 % 2 == 0 else "odd"

    def close(self) -> None:
        self.closed = True
