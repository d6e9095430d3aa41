"""The expert agent: each environment's own solver, asked over ``GET /expert`` one move at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode
from agentenv.react import format_react


class ExpertAgent(Agent):
    """Replies with the env expert's next move as ``Thought:\\n...\\n\\nAction:\\n...``.

    Trajectories it produces are the expert data (``source="expert"``) that behavioural cloning trains on.
    """

    name = "expert"

    def __init__(self, concurrency: int = 16) -> None:
        self.concurrency = concurrency

    def act(self, episodes: list[Episode]) -> list[str]:
        if len(episodes) <= 1:
            return [self._reply(ep) for ep in episodes]
        with ThreadPoolExecutor(min(self.concurrency, len(episodes))) as pool:
            return list(pool.map(self._reply, episodes))

    @staticmethod
    def _reply(episode: Episode) -> str:
        try:
            move = episode.session.expert()
        except Exception as exc:  # one env's failure ends that episode, not the run
            episode.stop("error", f"expert: {exc}")
            return ""
        return format_react(move.thought, move.action)
