"""``EnvPool``: sessions of one environment spread over several servers (hosts or processes)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .client import EnvClient, EnvSession
from .errors import ServerFull, ServerUnreachable
from .registry import client_class


class EnvPool:
    """One client per base URL; each new session goes to the server holding the fewest of this pool's
    live sessions, and moves on to the next server when one is full or unreachable."""

    def __init__(self, env: str, base_urls: str | Sequence[str], **client_kwargs: Any) -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ValueError(f"EnvPool({env!r}) needs at least one base URL")
        self.env = env
        cls = client_class(env)
        self.clients: list[EnvClient] = [cls(env, url, **client_kwargs) for url in urls]
        self._live = [0] * len(urls)
        self._lock = threading.Lock()

    def info(self) -> dict[str, Any]:
        return self.clients[0].info()

    def session(self, data_idx: int | None = None) -> EnvSession:
        with self._lock:
            order = sorted(range(len(self.clients)), key=lambda i: self._live[i])
        last_error: Exception | None = None
        for i in order:
            try:
                session = _PooledSession(self, i, self.clients[i].create(data_idx))
            except (ServerFull, ServerUnreachable) as exc:
                last_error = exc
                continue
            with self._lock:
                self._live[i] += 1
            return session
        assert last_error is not None
        raise last_error

    def _released(self, i: int) -> None:
        with self._lock:
            self._live[i] -= 1

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
