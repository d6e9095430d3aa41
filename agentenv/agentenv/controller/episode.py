"""One episode: an environment session working through one task, and the conversation so far."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentenv.data.trajectory import Trajectory
from agentenv.env import ExpertAction
from agentenv.protocol import ResetResponse, StepResponse

_uids = itertools.count()


class Session(Protocol):
    """What an episode needs from an environment session: an HTTP one (:class:`agentenv.client.EnvSession`)
    or an in-process one (:class:`agentenv.session.LocalSession`); both answer with the wire models."""

    def reset(self, data_idx: int) -> ResetResponse: ...

    def step(self, action: str) -> StepResponse: ...

    def expert(self) -> ExpertAction: ...

    def close(self) -> None: ...


@dataclass
class Episode:
    """The state of one episode while it runs, and its record once it has finished.

    ``trajectory`` holds the whole conversation in AgentTraj form: the env's instruction, the "Ok."
    acknowledgement, then alternating observations and replies.  While the episode runs its last turn is
    the observation the agent must answer.
    """

    env: str
    data_idx: int
    session: Session | None
    trajectory: Trajectory
    #: which of the ``samples_per_task`` samples of this task this is
    sample: int = 0
    #: sampling settings for this episode; ``None`` means the agent's own default
    temperature: float | None = None
    seed: int | None = None
    task_type: str = ""
    rounds: int = 0
    done: bool = False
    score: float = 0.0
    success: bool = False
    #: why the episode ended: "done", "max_rounds", "context_overflow", "invalid_reply" (the server refused
    #: the reply, e.g. as too long) or "error" (the env failed; the episode is not recorded)
    stop_reason: str | None = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: the token ids sampled for each reply before its stop token, by reply number, where the agent keeps them
    #: (``HFAgent(keep_sampled_ids=True)``, as online RL does: it trains only replies whose text re-encodes to
    #: them); never written
    sampled_ids: dict[int, list[int]] = field(default_factory=dict, repr=False)
    #: when it started (``time.monotonic()``): its wall time goes to the trajectory's ``meta["wall_s"]``
    started: float = field(default_factory=time.monotonic)
    uid: int = field(default_factory=lambda: next(_uids))

    @property
    def item_id(self) -> str:
        return self.trajectory.item_id

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    def messages(self) -> list[dict[str, str]]:
        """The conversation as chat messages (``user`` / ``assistant``), ready for a chat template."""
        roles = {"human": "user", "gpt": "assistant"}
        return [{"role": roles.get(t.role, t.role), "content": t.value} for t in self.trajectory.conversations]

    def stop(self, reason: str, error: str | None = None) -> None:
        """Mark the episode finished (the rollout engine records it and frees its slot)."""
        self.stop_reason = reason
        if error is not None:
            self.error = error
