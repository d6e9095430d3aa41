"""BabyAI's typed client: the generic protocol plus the grid as a picture."""

from __future__ import annotations

from agentenv.client import EnvClient


class BabyAIClient(EnvClient):
    env_name = "babyai"

    def render(self, sid: int) -> bytes:
        """A PNG image of the grid."""
        return self.query(sid, "render")
