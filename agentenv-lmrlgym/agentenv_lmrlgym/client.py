"""Wordle's typed client: the generic protocol plus AgentGym's ``filtered_vocab`` query."""

from __future__ import annotations

from agentenv.client import EnvClient


class WordleClient(EnvClient):
    env_name = "wordle"

    def filtered_vocab(self, sid: int) -> list[str]:
        """The words still consistent with the feedback so far."""
        return self.query(sid, "filtered_vocab")
