"""The expert agent: each environment's own solver, asked over ``GET /expert`` one move at a time."""

from __future__ import annotations

import time
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
        self._pool: ThreadPoolExecutor | None = None
        #: when this round's expert calls (env server calls) were sent; None between rounds
        self.env_calls_since: float | None = None

    def act(self, episodes: list[Episode]) -> list[str]:
        self.env_calls_since = time.monotonic()
        try:
            if len(episodes) <= 1:
                return [self._reply(ep) for ep in episodes]
            if self._pool is None:
                # named as the rollout's threads: after Ctrl-C a call to a server that stopped answering is
                # left behind with theirs (agentenv.processes.exit_past_abandoned_calls), not waited for
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="rollout-expert")
            return list(self._pool.map(self._reply, episodes))
        finally:
            self.env_calls_since = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    @staticmethod
    def _reply(episode: Episode) -> str:
        try:
            move = episode.session.expert()
        except Exception as exc:  # one env's failure ends that episode, not the run
            episode.stop("error", f"expert: {exc}")
            return ""
        return format_react(move.thought, move.action)
