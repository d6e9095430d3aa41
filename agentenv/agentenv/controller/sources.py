"""Where episodes get their environment sessions: HTTP servers, or env objects in this process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agentenv.controller.episode import Session
from agentenv.env import Environment, ExpertAction
from agentenv.envs.client import ResetResult, StepResult
from agentenv.react import extract_action


class EnvSource(Protocol):
    """Opens sessions of one environment and tells its static facts (the ``/info`` document)."""

    name: str

    def info(self) -> dict[str, Any]: ...

    def session(self) -> Session: ...

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
        from agentenv.envs import EnvPool

        self.name = name
        self.base_urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        self.pool = EnvPool(name, self.base_urls, **client_kwargs)
        self._info: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self.pool.info()
        return self._info

    def session(self) -> Session:
        return self.pool.session()

    def close(self) -> None:
        self.pool.close()


class LocalSession:
    """One in-process env object behind the same methods as ``agentenv.envs.EnvSession``.

    Like a server, it takes a whole ReAct reply or a bare action and steps the env with the action.
    """

    def __init__(self, env: Environment, on_close: Callable[[], None] | None = None) -> None:
        self.env = env
        self.done = True
        self.closed = False
        self._on_close = on_close

    def reset(self, data_idx: int) -> ResetResult:
        observation = self.env.reset(data_idx)
        self.done = False
        return ResetResult(observation, data_idx, self.env.task_type())

    def step(self, action: str) -> StepResult:
        if self.done:
            raise RuntimeError("step after the episode ended: reset first")
        result = self.env.step(extract_action(action))
        self.done = result.done
        success = self.env.is_success(result.score)
        return StepResult(result.observation, result.reward, result.score, result.done, success, result.info)

    def expert(self) -> ExpertAction:
        return self.env.expert_action()

    def observation(self) -> str:
        return self.env.observation()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.env.close()
        if self._on_close is not None:
            self._on_close()


class LocalEnv(_ClosedOnExit):
    """An :class:`~agentenv.env.Environment` subclass run in this process (tests, benchmarks)."""

    def __init__(self, env_cls: type[Environment]) -> None:
        self.env_cls = env_cls
        self.name = env_cls.name
        self.live_sessions = 0
        self._lock = threading.Lock()

    def info(self) -> dict[str, Any]:
        return self.env_cls.metadata() | {"live_sessions": self.live_sessions}

    def session(self) -> Session:
        session = LocalSession(self.env_cls(), on_close=self._closed)
        with self._lock:
            self.live_sessions += 1
        return session

    def _closed(self) -> None:
        with self._lock:
            self.live_sessions -= 1

    def close(self) -> None:
        pass
