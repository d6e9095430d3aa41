"""``EnvPool``: sessions of one environment spread over several servers (hosts or processes)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from agentenv.protocol import ServerFull, ServerUnreachable
from agentenv.registry import client_class

from .client import EnvClient, EnvSession


class EnvPool:
    """One client per base URL; each new session goes to the server holding the fewest of this pool's
    live sessions, and moves on to the next server when one is full or unreachable.

    A server that could not be reached is tried after all the others for ``cool_off_s`` seconds, so a
    dead one does not cost every new session its client's retries.
    """

    def __init__(
        self, env: str, base_urls: str | Sequence[str], *, cool_off_s: float = 30.0, **client_kwargs: Any
    ) -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ValueError(f"EnvPool({env!r}) needs at least one base URL")
        self.env = env
        self.cool_off_s = cool_off_s
        cls = client_class(env)
        self.clients: list[EnvClient] = [cls(env, url, **client_kwargs) for url in urls]
        self._live = [0] * len(urls)
        self._down_until = [0.0] * len(urls)  # time.monotonic() until which a server counts as down
        self._lock = threading.Lock()

    def info(self) -> dict[str, Any]:
        """The ``/info`` document of the first server that answers (servers that are up first)."""
        with self._lock:
            now = time.monotonic()
            order = sorted(range(len(self.clients)), key=lambda i: self._down_until[i] > now)
        for i in order:
            try:
                return self.clients[i].info()
            except ServerUnreachable as exc:
                self._mark_down(i)
                last_error = exc
        raise last_error

    def session(self, data_idx: int | None = None) -> EnvSession:
        """A new session on the server holding the fewest; when none opens one, :class:`ServerFull` if some
        server is up but full, else :class:`ServerUnreachable`."""
        tried: set[int] = set()
        full: ServerFull | None = None
        unreachable: ServerUnreachable | None = None
        for _ in self.clients:
            i = self._reserve(excluding=tried)
            try:
                sid = self.clients[i].create(data_idx)
            except ServerFull as exc:
                full = full or exc
            except ServerUnreachable as exc:
                self._mark_down(i)
                unreachable = unreachable or exc
            except BaseException:
                self._released(i)
                raise
            else:
                return _PooledSession(self, i, sid)
            self._released(i)
            tried.add(i)
        raise full or unreachable

    def _reserve(self, excluding: set[int]) -> int:
        """The server for a new session, its session counted before it is opened so that callers opening
        sessions at the same time spread out: servers that are up first, then the fewest live sessions."""
        with self._lock:
            now = time.monotonic()
            left = [i for i in range(len(self.clients)) if i not in excluding]
            i = min(left, key=lambda i: (self._down_until[i] > now, self._live[i]))
            self._live[i] += 1
            return i

    def _released(self, i: int) -> None:
        with self._lock:
            self._live[i] -= 1

    def _mark_down(self, i: int) -> None:
        with self._lock:
            self._down_until[i] = time.monotonic() + self.cool_off_s

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _PooledSession(EnvSession):
    def __init__(self, pool: EnvPool, index: int, sid: int) -> None:
        super().__init__(pool.clients[index], sid)
        self._pool, self._index = pool, index

    def close(self) -> None:
        if self.closed:
            return
        try:
            super().close()
        finally:
            self._pool._released(self._index)
