"""WebShop's typed client: the generic protocol plus AgentGym's ``instruction_text`` and ``state`` queries."""

from __future__ import annotations

from typing import Any

from agentenv.client import EnvClient


class WebShopClient(EnvClient):
    env_name = "webshop"

    def instruction_text(self, sid: int) -> str:
        """``Instruction: ...`` of the session's goal."""
        return self.query(sid, "instruction_text")

    def state(self, sid: int) -> dict[str, Any]:
        """``{url, html, instruction_text}`` of the session's current page."""
        return self.query(sid, "state")
