"""HTTP clients of environment servers: ``EnvClient`` (one server), ``EnvSession`` (one live session) and
``EnvPool`` (sessions spread over several servers).  Typed clients of single environments live in their
packages (``Environment.client``); :func:`agentenv.registry.client_class` finds them."""

from agentenv.protocol import (
    BadRequest,
    BodyTooLarge,
    CallTimedOut,
    ClientClosed,
    EnvCrashed,
    EnvError,
    EnvNotServed,
    EpisodeFinished,
    EpisodeNotRunning,
    ServerFull,
    ServerHung,
    ServerUnreachable,
    SessionNotFound,
    Unauthorized,
)

from .client import EnvClient, EnvSession
from .pool import EnvPool

__all__ = [
    "BadRequest",
    "BodyTooLarge",
    "CallTimedOut",
    "ClientClosed",
    "EnvClient",
    "EnvCrashed",
    "EnvError",
    "EnvNotServed",
    "EnvPool",
    "EnvSession",
    "EpisodeFinished",
    "EpisodeNotRunning",
    "ServerFull",
    "ServerHung",
    "ServerUnreachable",
    "SessionNotFound",
    "Unauthorized",
]
