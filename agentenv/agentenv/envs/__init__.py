"""Typed HTTP clients for environment servers, a pool over several servers, and the env registry."""

from .client import EnvClient, EnvSession, ResetResult, StepResult
from .clients import BabyAIClient, MazeClient, SciWorldClient, TextCraftClient, WordleClient
from .errors import (
    BadRequest,
    EnvCrashed,
    EnvError,
    EpisodeFinished,
    ServerFull,
    ServerUnreachable,
    SessionNotFound,
    Unauthorized,
)
from .pool import EnvPool
from .registry import client_class, default_url, env_class

__all__ = [
    "BabyAIClient",
    "BadRequest",
    "EnvClient",
    "EnvCrashed",
    "EnvError",
    "EnvPool",
    "EnvSession",
    "EpisodeFinished",
    "MazeClient",
    "ResetResult",
    "SciWorldClient",
    "ServerFull",
    "ServerUnreachable",
    "SessionNotFound",
    "StepResult",
    "TextCraftClient",
    "Unauthorized",
    "WordleClient",
    "client_class",
    "default_url",
    "env_class",
]
