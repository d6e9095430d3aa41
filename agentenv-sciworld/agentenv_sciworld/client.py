"""ScienceWorld's typed client: the generic protocol plus AgentGym's ``action_hint`` and ``goals`` queries."""

from __future__ import annotations

from typing import Any

from agentenv.client import EnvClient


class SciWorldClient(EnvClient):
    env_name = "sciworld"

    def action_hint(self, sid: int) -> dict[str, Any]:
        """``{possible_actions, possible_objects}`` in the current state."""
        return self.query(sid, "action_hint")

    def goals(self, sid: int) -> dict[str, Any]:
        return self.query(sid, "goals")
