"""SQLGym for agentenv: BIRD-style text-to-SQL on generated sqlite databases, and on the real BIRD when present."""

from .env import SqlGymEnv

__all__ = ["SqlGymEnv"]
