"""Which environments are installed, where their servers listen by default, and which client talks to each.

An environment package announces its :class:`~agentenv.env.Environment` classes under the entry-point group
``agentenv.envs`` (``babyai = "agentenv_babyai.env:BabyAIEnv"`` in its pyproject); everything else the core
needs (default port, server group, typed client, AgentGym's wire shapes) is class metadata.  The core names
no environment: a package installed later is served, evaluated and trained on without a change here.
"""

from __future__ import annotations

import difflib
import functools
import logging
import os
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentenv.client import EnvClient
    from agentenv.env import Environment

ENTRY_POINT_GROUP = "agentenv.envs"
log = logging.getLogger("agentenv.registry")


class UnknownEnv(KeyError):
    """A name that is neither an installed environment nor a server group of installed ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def installed_envs() -> list[str]:
    """The names of every installed environment."""
    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def env_class(env: str) -> type[Environment]:
    """The Environment class an installed package registers under ``env``."""
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == env]
    if not found:
        installed = installed_envs()
        raise UnknownEnv(f"no installed environment {env!r} (installed: {', '.join(installed) or 'none'}); {_hint(env, installed)}")
    try:
        cls = found[0].load()
    except Exception as exc:  # a broken or half-installed package: say which, not a traceback
        raise UnknownEnv(f"environment {env!r} is installed but does not load ({found[0].value}): {exc!r}") from exc
    name = getattr(cls, "name", None)
    if name != env:  # served under its name but asked for by the key: every client of it got a 404
        raise UnknownEnv(f"environment {env!r} is installed, but its class ({found[0].value}) is named {name!r}: "
                         "the entry point's key in its pyproject.toml must be the class's name")
    return cls


@functools.cache
def server_groups() -> dict[str, list[str]]:
    """Group name -> the installed envs served together under it (e.g. ``lmrlgym`` -> maze, wordle).  Loads
    every installed env class once."""
    groups: dict[str, list[str]] = {}
    for env in installed_envs():
        try:
            group = env_class(env).server
        except UnknownEnv as exc:  # one broken package must not keep the others from being served
            log.warning("%s", exc)
            continue
        if group:
            groups.setdefault(group, []).append(env)
    return groups


def server_members(name: str) -> list[str]:
    """The envs a server name stands for: an installed env, or a group of them."""
    if name in installed_envs():
        return [name]
    groups = server_groups()
    if name in groups:
        return groups[name]
    known = sorted(set(installed_envs()) | set(groups))
    raise UnknownEnv(
        f"no installed environment or server group {name!r} (known: {', '.join(known) or 'none'}); {_hint(name, known)}"
    )


def _hint(name: str, known: list[str]) -> str:
    """What to do about an unknown env name: install its package, or the known name it is a typo of."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)  # 0.75 took alfworld for sciworld
    install = "install the package that provides it (docs/envs/)"
    return f"did you mean {close[0]!r}? (else {install})" if close else install


def all_servers() -> list[str]:
    """One server name for every installed env: its group where it has one (what ``agentenv up all`` starts);
    envs whose package does not load are left out (with a warning)."""
    servers: list[str] = []
    for env in installed_envs():
        try:
            name = server_of(env)
        except UnknownEnv as exc:
            log.warning("%s", exc)
            continue
        if name not in servers:
            servers.append(name)
    return servers


def server_of(env: str) -> str:
    """The server that serves ``env`` by default: its group, else itself (``maze`` -> ``lmrlgym``)."""
    return env_class(env).server or env


def default_port(name: str) -> int:
    """The default port of an env or a group (a group's members share one; they must agree)."""
    ports = {env_class(env).port for env in server_members(name)}
    if len(ports) != 1 or None in ports:
        raise UnknownEnv(f"{name!r} declares no single default port ({sorted(map(str, ports))}); give --port")
    return ports.pop()


def default_url(env: str) -> str:
    """``AGENTENV_<ENV>_URL`` if set, else ``http://127.0.0.1:<default port>``."""
    override = os.environ.get(f"AGENTENV_{env.upper()}_URL")
    return override or f"http://127.0.0.1:{default_port(env)}"


def client_class(env: str) -> type[EnvClient]:
    """The typed client of ``env`` (the generic :class:`~agentenv.client.EnvClient` for envs without one, or
    for envs not installed here: a remote server needs no local package)."""
    from agentenv.client import EnvClient

    try:
        path = env_class(env).client
    except UnknownEnv:
        return EnvClient
    if not path:
        return EnvClient
    module, _, attr = path.partition(":")
    import importlib

    return getattr(importlib.import_module(module), attr)
