"""Typed clients: the generic protocol plus each environment's own queries."""

from __future__ import annotations

from typing import Any

from .client import EnvClient


class MazeClient(EnvClient):
    env_name = "maze"


class WordleClient(EnvClient):
    env_name = "wordle"

    def filtered_vocab(self, sid: int) -> list[str]:
        """The words still consistent with the feedback so far."""
        return self.query(sid, "filtered_vocab")


class BabyAIClient(EnvClient):
    env_name = "babyai"

    def render(self, sid: int) -> bytes:
        """A PNG image of the grid."""
        return self.query(sid, "render")


class TextCraftClient(EnvClient):
    env_name = "textcraft"


class SciWorldClient(EnvClient):
    env_name = "sciworld"

    def action_hint(self, sid: int) -> dict[str, Any]:
        """``{possible_actions, possible_objects}`` in the current state."""
        return self.query(sid, "action_hint")

    def goals(self, sid: int) -> dict[str, Any]:
        return self.query(sid, "goals")


BY_ENV: dict[str, type[EnvClient]] = {
    cls.env_name: cls for cls in (MazeClient, WordleClient, BabyAIClient, TextCraftClient, SciWorldClient)
}
