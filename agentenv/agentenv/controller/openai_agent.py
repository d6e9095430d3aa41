"""Any OpenAI-compatible chat endpoint as an agent (a vLLM ``serve`` process, a hosted API ...)."""

from __future__ import annotations

import email.utils
import os
import random
import re
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, wait
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode

#: the longest ``Retry-After`` waited for; an endpoint that asks for more (a daily quota) ends the run
MAX_RETRY_AFTER_S = 300.0

#: how vLLM, OpenAI, SGLang, llama.cpp, TGI and the OpenAI-compatible endpoints of Anthropic and Gemini
#: say that a conversation no longer fits the model's context (lower case)
OVERFLOW_PHRASES = (
    "maximum context length",
    "context_length_exceeded",
    "context length",
    "exceeds the available context size",
    "exceed_context_size",
    "prompt is too long",
    "input token count",
    "`inputs` tokens + `max_new_tokens` must be",
)


def is_retryable(status: int) -> bool:
    """Answers worth retrying: timeouts, conflicts, rate limits, and server-side failures (Cloudflare's
    52x and Anthropic's 529 "overloaded" among them) except "not implemented" ones."""
    return status in (408, 409, 425, 429) or (status >= 500 and status not in (501, 505))


class AgentError(RuntimeError):
    """The model endpoint failed for good (retries spent, or a request it will never accept)."""


class AgentSettingsError(AgentError):
    """The endpoint refuses the agent's settings (``max_tokens`` beyond its context): a rerun needs others."""


class OpenAIAgent(Agent):
    """Chat completions against ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``), one request per episode,
    up to ``concurrency`` at a time.

    A failed request (connection error, timeout, 408/429/5xx) is retried up to ``max_retries`` times with
    exponential backoff and jitter (or after the ``Retry-After`` the endpoint asks for), then raises
    :class:`AgentError`.  An answer that says the conversation no longer fits the context stops that
    episode with reason ``context_overflow``; any other refusal raises at once.  Replies cut at
    ``max_tokens`` are listed (their reply numbers) in the episode's ``meta["truncated_replies"]``.  ``api_key`` defaults to
    ``$OPENAI_API_KEY``.  ``base_url`` may hold a query (Azure's ``?api-version=``).
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
        path = parts.path.rstrip("/").removesuffix("/chat/completions") or "/v1"
        self.model = model
        self.url = urlunsplit((parts.scheme, parts.netloc, f"{path}/chat/completions", parts.query, ""))
        self.name = f"openai:{model}"
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.seed = seed
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.timeout = timeout
        self.extra_body = extra_body or {}
        api_key = (api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY").strip()
        if not (api_key.isascii() and api_key.isprintable()) or " " in api_key:  # never echoed: it would land in logs
            raise ValueError("the API key (api_key or $OPENAI_API_KEY) holds a space, newline or non-ASCII character")
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=timeout,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
        self._slots = threading.BoundedSemaphore(concurrency)  # requests in flight, whoever calls act
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._stops: set[threading.Event] = set()  # one per act call in progress: set, its requests stop
        #: request counts since construction
        self.stats = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._in_flight = 0
        self._warned_truncated = False

    def act(self, episodes: list[Episode]) -> list[str]:
        # a daemon thread a request: a run that stops (Ctrl-C, an endpoint's refusal) exits at once, where a
        # pool's threads are waited for at exit until their requests return (up to --request-timeout)
        # a call that ends early (Ctrl-C in a notebook, a refusal) sets `stop`: its requests are not sent again,
        # nor do they hold their slots through the backoffs, for the agent's next call
        stop = threading.Event()
        with self._lock:
            self._stops.add(stop)
        futures: list[Future[str]] = [Future() for _ in episodes]
        try:
            for episode, future in zip(episodes, futures, strict=True):
                threading.Thread(target=self._answer, args=(episode, future, stop), name="openai-agent", daemon=True).start()
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)  # a refusal ends the run without waiting the rest out
            for future in futures:
                if future in done and future.exception() is not None:
                    raise future.exception()
            return [future.result() for future in futures]
        finally:
            stop.set()
            with self._lock:
                self._stops.discard(stop)

    def _answer(self, episode: Episode, future: Future[str], stop: threading.Event) -> None:
        try:
            with self._slots:
                future.set_result(self._reply(episode, stop))
        except BaseException as exc:
            future.set_exception(exc)

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
        # would hang for minutes): they stop at their next attempt or backoff, and their threads are daemons.
        self._closing.set()
        with self._lock:
            for stop in self._stops:
                stop.set()
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

    def _reply(self, episode: Episode, stop: threading.Event) -> str:
        body = self.request_body(episode)
        for attempt in range(self.max_retries + 1):
            if self._closing.is_set():
                raise AgentError(f"{self.url}: the agent was closed")
            if stop.is_set():
                raise AgentError(f"{self.url}: the call asking for this reply ended (interrupted, or another failed)")
            retry_after = None
            try:
                with self._lock:
                    self._in_flight += 1
                try:
                    response = self._post(body)
                finally:
                    with self._lock:
                        self._in_flight -= 1
            except (httpx.LocalProtocolError, httpx.UnsupportedProtocol) as exc:  # no retry makes it valid
                raise AgentError(f"{self.url}: the request cannot be sent ({type(exc).__name__})") from None
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
                    refusal = response.text.lower()
                    context = re.search(r"maximum context length is (\d+)", refusal)
                    if context is not None and self.max_tokens >= int(context.group(1)):  # no prompt would fit
                        raise AgentSettingsError(
                            f"{self.url}: max_tokens={self.max_tokens} is not below the model's context of "
                            f"{context.group(1)} tokens: lower --max-new-tokens"
                        )
                    if response.status_code == 413 or (
                        response.status_code in (400, 422) and any(p in refusal for p in OVERFLOW_PHRASES)
                    ):
                        episode.stop("context_overflow", failure)
                        return ""
                    if response.status_code in (401, 403):  # no rerun helps: the key must change
                        raise AgentSettingsError(f"{self.url}: {failure}; give its key with --api-key or $OPENAI_API_KEY")
                    if response.status_code == 404:
                        raise AgentSettingsError(
                            f"{self.url}: {failure}; is model {self.model!r} served there (GET .../v1/models "
                            "lists them), and does the URL end where the API begins (.../v1)?"
                        )
                    if not is_retryable(response.status_code):
                        raise AgentError(f"{self.url}: {failure}")
                    retry_after = _retry_after_s(response.headers)
                    if retry_after is not None and retry_after > MAX_RETRY_AFTER_S:
                        raise AgentError(f"{self.url}: asks to retry after {retry_after:.0f} s; {failure}")
            if attempt < self.max_retries:
                with self._lock:
                    self.stats["retries"] += 1
                delay = min(self.max_backoff_s, self.backoff_s * 2**attempt) * random.uniform(0.5, 1.0)
                stop.wait(max(delay, retry_after or 0.0))
        tries = self.max_retries + 1
        raise AgentError(f"{self.url}: gave up after {tries} attempt{'s' * (tries > 1)}; last: {failure}")

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        """POST ``body``, the whole answer within ``timeout``: httpx's timeout bounds each read only, so an
        answer trickled a byte at a time (a proxy's keep-alive bytes, an event stream to a plain request)
        never tripped it, and the run waited forever."""
        deadline = time.monotonic() + self.timeout
        with self._client.stream("POST", self.url, json=body) as response:
            content = bytearray()
            for chunk in response.iter_bytes():
                content += chunk
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(f"no whole answer within {self.timeout:g} s", request=response.request)
        decoded = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in ("content-encoding", "content-length")]
        return httpx.Response(response.status_code, headers=decoded, content=bytes(content), request=response.request)

    def _content(self, data: Any, episode: Episode | None = None) -> str:
        """The reply text of a chat completion; ``ValueError`` when the body is not one.  A ``null``
        content is the model saying nothing (an empty reply).  The episode's ``meta["generated_tokens"]``
        counts the completion tokens the server reports."""
        choices = data.get("choices") if isinstance(data, dict) else None
        message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        if not isinstance(message, dict):
            raise ValueError("no choices[0].message in it")
        content = message.get("content") or ""
        if isinstance(content, list):  # content parts (Mistral's): the text ones
            content = "".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text")
        if not isinstance(content, str):
            raise ValueError(f"choices[0].message.content is a {type(content).__name__}, not text")
        if choices[0].get("finish_reason") == "length" and episode is not None:
            episode.meta.setdefault("truncated_replies", []).append(episode.rounds)
            if not content.strip() and not self._warned_truncated:
                self._warned_truncated = True  # a reasoning model spending max_tokens on its reasoning
                print(
                    f"[agentenv] warning: {self.name} reached max_tokens={self.max_tokens} before replying "
                    "(reasoning, or a long thought): raise --max-new-tokens",
                    file=sys.stderr,
                )
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        with self._lock:
            self.stats["requests"] += 1
            for key in ("prompt_tokens", "completion_tokens"):
                if isinstance(usage.get(key), int):
                    self.stats[key] += usage[key]
        if episode is not None and isinstance(usage.get("completion_tokens"), int):
            episode.meta["generated_tokens"] = episode.meta.get("generated_tokens", 0) + usage["completion_tokens"]
        return content.strip()


def _retry_after_s(headers: httpx.Headers) -> float | None:
    """The wait a 429/503 asks for: ``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date."""
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        if value.strip().replace(".", "", 1).isdigit():
            return float(value)
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None
