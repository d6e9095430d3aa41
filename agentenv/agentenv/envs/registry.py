"""Which environments exist, where their servers listen by default, and which client talks to each.

Environment packages announce their :class:`~agentenv.env.Environment` classes under the entry-point
group ``agentenv.envs``; the core never imports an environment package by name.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentenv.env import Environment

    from .client import EnvClient

ENTRY_POINT_GROUP = "agentenv.envs"

#: servers that host several environments under one process (AgentGym's "lmrlgym" server)
SERVER_GROUPS: dict[str, list[str]] = {"lmrlgym": ["maze", "wordle"]}

#: default port of each server (envs in a group share the group's port)
DEFAULT_PORTS: dict[str, int] = {"lmrlgym": 36001, "babyai": 36002, "textcraft": 36003, "sciworld": 36004}


def server_of(env: str) -> str:
    """The server an env is served by by default (``maze`` -> ``lmrlgym``)."""
    for group, members in SERVER_GROUPS.items():
        if env in members:
            return group
    return env


def default_port(name: str) -> int:
    try:
        return DEFAULT_PORTS[server_of(name)]
    except KeyError:
        raise KeyError(f"no default port for {name!r}; known: {sorted(DEFAULT_PORTS)}") from None


def default_url(env: str) -> str:
    """``AGENTENV_<ENV>_URL`` if set, else ``http://127.0.0.1:<default port>``."""
    override = os.environ.get(f"AGENTENV_{env.upper()}_URL")
    return override or f"http://127.0.0.1:{default_port(env)}"


def installed_envs() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def env_class(env: str) -> type[Environment]:
    """The Environment class an installed env package registers under ``env``."""
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == env]
    if not found:
        raise KeyError(f"no installed environment {env!r}; installed: {installed_envs()}")
    return found[0].load()


def env_classes(name: str) -> list[type[Environment]]:
    """The env classes a server name stands for: a group (``lmrlgym``) or one env."""
    return [env_class(member) for member in SERVER_GROUPS.get(name, [name])]


def client_class(env: str) -> type[EnvClient]:
    """The typed client of ``env`` (the generic :class:`EnvClient` for envs without one)."""
    from . import clients
    from .client import EnvClient

    return clients.BY_ENV.get(env, EnvClient)
