"""Where episodes get their environment sessions: HTTP servers, or env objects in this process."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from agentenv.controller.episode import Session
from agentenv.env import Environment
from agentenv.session import LocalSession, task_index


class EnvSource(Protocol):
    """Opens sessions of one environment and tells its static facts (the ``/info`` document)."""

    name: str

    def info(self) -> dict[str, Any]:
        """The env's ``/info`` document."""
        ...

    def session(self) -> Session:
        """A new session (an :class:`~agentenv.client.EnvSession` or a :class:`~agentenv.session.LocalSession`);
        closing it frees its place."""
        ...

    def close(self) -> None: ...


class _ClosedOnExit:
    """``with source: ...`` closes the source at the end, like ``with httpx.Client() as client``."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class RemoteEnv(_ClosedOnExit):
    """An environment served over HTTP by one or more servers; new sessions are spread over them."""

    def __init__(self, name: str, base_urls: str | Sequence[str], **client_kwargs: Any) -> None:
        from agentenv.client import EnvPool

        self.name = name
        self.base_urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        self.pool = EnvPool(name, self.base_urls, **client_kwargs)
        self._info: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self.pool.info()
            # a server whose calls may run longer than the clients wait (BabyAI's expert, ALFWorld's start,
            # a gold SQL query): each client waits for the server's deadline, which answers 504 itself
            if (deadline := self._info.get("call_deadline_s")) is not None:
                for client in self.pool.clients:
                    client.wait_at_least(float(deadline) + 30.0)
        return self._info

    def session(self) -> Session:
        return self.pool.session()

    def task_types(self, indices: list[int]) -> list[str | None]:
        return self.pool.clients[0].task_types(indices)

    def close(self) -> None:
        self.pool.close()


class LocalEnv(_ClosedOnExit):
    """An :class:`~agentenv.env.Environment` subclass run in this process (tests, benchmarks, ``--local``):
    its sessions are :class:`~agentenv.session.LocalSession` objects, which follow a server's rules."""

    def __init__(self, env_cls: type[Environment]) -> None:
        self.env_cls = env_cls
        self.name = env_cls.name
        self._ids = itertools.count()
        self._open: set[LocalSession] = set()
        self._shared: contextlib.ExitStack | None = None
        self._lock = threading.Lock()

    @property
    def live_sessions(self) -> int:
        with self._lock:
            return sum(not s.closed for s in self._open)

    def info(self) -> dict[str, Any]:
        return self.env_cls.metadata() | {"live_sessions": self.live_sessions}

    def task_types(self, indices: list[int]) -> list[str | None]:
        return [self.env_cls.task_type_of(task_index(self.env_cls, i)) for i in indices]

    def session(self) -> Session:
        with self._lock:
            if self._shared is None:  # what the class's sessions share, held until this source closes
                self._shared = contextlib.ExitStack()
                self._shared.enter_context(self.env_cls.shared())
        session = LocalSession(self.env_cls, next(self._ids))
        with self._lock:
            self._open = {s for s in self._open if not s.closed} | {session}
        return session

    def close(self) -> None:
        """Close the sessions still open, then what they shared."""
        with self._lock:
            left, self._open = self._open, set()
            shared, self._shared = self._shared, None
        for session in left:
            session.close()
        if shared is not None:
            shared.close()
