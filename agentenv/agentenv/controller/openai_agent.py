"""Any OpenAI-compatible chat endpoint as an agent (a vLLM ``serve`` process, a hosted API ...)."""

from __future__ import annotations

import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode

#: answers worth retrying: timeouts, rate limits, server-side failures
RETRY_STATUSES = {408, 429, 500, 502, 503, 504}


class AgentError(RuntimeError):
    """The model endpoint failed for good (retries spent, or a request it will never accept)."""


class OpenAIAgent(Agent):
    """Chat completions against ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``), one request per episode,
    up to ``concurrency`` at a time.

    A failed request (connection error, timeout, 408/429/5xx) is retried up to ``max_retries`` times with
    exponential backoff and jitter, then raises :class:`AgentError`.  A 400 that says the context is too
    long stops that episode with reason ``context_overflow``.  ``api_key`` defaults to ``$OPENAI_API_KEY``.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 512,
        seed: int = 0,
        concurrency: int = 16,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        timeout: float = 120.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base URL {base_url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1")
        if not parts.path.strip("/"):
            base_url = base_url.rstrip("/") + "/v1"
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.name = f"openai:{model}"
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.seed = seed
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.extra_body = extra_body or {}
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=timeout,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="openai-agent")
        self._lock = threading.Lock()
        self._closing = threading.Event()
        #: request counts since construction
        self.stats = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._in_flight = 0

    def act(self, episodes: list[Episode]) -> list[str]:
        return list(self._pool.map(self._reply, episodes))

    def settings(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "url": self.url,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def progress(self) -> dict[str, int | None]:
        return {"in_flight": self._in_flight, "tokens": self.stats["completion_tokens"]}

    def close(self) -> None:
        # Don't wait out the retries of requests in flight (an interrupted run against a stalled endpoint
        # would hang for minutes): they stop at their next attempt or backoff.
        self._closing.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()

    def request_body(self, episode: Episode) -> dict[str, Any]:
        temperature = self.temperature if episode.temperature is None else episode.temperature
        body = {
            "model": self.model,
            "messages": episode.messages(),
            "temperature": temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed if episode.seed is None else episode.seed,
        }
        return body | self.extra_body

    def _reply(self, episode: Episode) -> str:
        body = self.request_body(episode)
        for attempt in range(self.max_retries + 1):
            if self._closing.is_set():
                raise AgentError(f"{self.url}: the agent was closed")
            try:
                with self._lock:
                    self._in_flight += 1
                try:
                    response = self._client.post(self.url, json=body)
                finally:
                    with self._lock:
                        self._in_flight -= 1
            except httpx.TransportError as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        return self._content(response.json(), episode)
                    except ValueError as exc:  # a proxy's error page, a cut body: retried like a server error
                        failure = f"HTTP 200 with a malformed body ({exc}): {response.text[:300]}"
                else:
                    failure = f"HTTP {response.status_code}: {response.text[:300]}"
                    if response.status_code == 400 and _is_context_overflow(response.text):
                        episode.stop("context_overflow", failure)
                        return ""
                    if response.status_code not in RETRY_STATUSES:
                        raise AgentError(f"{self.url}: {failure}")
            if attempt < self.max_retries:
                with self._lock:
                    self.stats["retries"] += 1
                delay = min(self.max_backoff_s, self.backoff_s * 2**attempt)
                self._closing.wait(delay * random.uniform(0.5, 1.0))
        raise AgentError(f"{self.url}: gave up after {self.max_retries + 1} attempts; last: {failure}")

    def _content(self, data: Any, episode: Episode | None = None) -> str:
        """The reply text of a chat completion; ``ValueError`` when the body is not one.  A ``null``
        content is the model saying nothing (an empty reply).  The episode's ``meta["generated_tokens"]``
        counts the completion tokens the server reports."""
        choices = data.get("choices") if isinstance(data, dict) else None
        message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        if not isinstance(message, dict):
            raise ValueError("no choices[0].message in it")
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise ValueError(f"choices[0].message.content is a {type(content).__name__}, not text")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        with self._lock:
            self.stats["requests"] += 1
            for key in ("prompt_tokens", "completion_tokens"):
                if isinstance(usage.get(key), int):
                    self.stats[key] += usage[key]
        if episode is not None and isinstance(usage.get("completion_tokens"), int):
            episode.meta["generated_tokens"] = episode.meta.get("generated_tokens", 0) + usage["completion_tokens"]
        return content.strip()


def _is_context_overflow(text: str) -> bool:
    text = text.lower()
    return "context" in text and ("length" in text or "too long" in text or "maximum" in text)
