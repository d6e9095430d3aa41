"""Prompt lookup: draft tokens for greedy decoding copied from the conversation itself.

An agent's reply often repeats what the conversation already holds (an action from the list of available
ones, the format of its last reply).  The draft for the next tokens is what followed the latest earlier
occurrence of the conversation's last two tokens; the model then checks every draft token in one forward and
keeps those it would have chosen itself, so greedy replies are the ones it gives without drafts.
"""

from __future__ import annotations


class PromptLookup:
    """One episode's tokens so far (prompt and reply) and, for each pair of consecutive tokens, where the token
    after their latest occurrence lies.  It follows the episode from round to round: only what is new is
    indexed."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self._after: dict[tuple[int, int], int] = {}

    def sync(self, tokens: list[int], same: int) -> None:
        """Follow ``tokens``, of which the first ``same`` are known to be those held.  Entries from the part
        cut off may remain: a draft is only a guess, checked by the model."""
        del self.tokens[same:]
        start = len(self.tokens)
        self.tokens.extend(tokens[start:])
        held, after = self.tokens, self._after
        for i in range(max(start, 2), len(held)):
            after[held[i - 2], held[i - 1]] = i

    def append(self, token: int) -> None:
        held = self.tokens
        held.append(token)
        if len(held) >= 3:
            self._after[held[-3], held[-2]] = len(held) - 1

    def draft(self, k: int) -> list[int]:
        """Up to ``k`` tokens that followed the last two tokens where they occurred before."""
        held = self.tokens
        if k <= 0 or len(held) < 2:
            return []
        at = self._after.get((held[-2], held[-1]))
        return [] if at is None else held[at : at + k]
