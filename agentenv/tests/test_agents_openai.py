"""OpenAIAgent against a small OpenAI-compatible server this test starts on a loopback port."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from contextlib import contextmanager

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentenv.controller.openai_agent import AgentError, AgentSettingsError, OpenAIAgent
from agentenv.controller.rollout import Rollout, RolloutTask
from agentenv.controller.sources import LocalEnv
from agentenv.testing import refusing_url

from test_controller_support import GuessEnv


class FakeModelServer:
    """``POST /v1/chat/completions``: guesses 0, 1, 2 ... in turn (the number of replies so far).

    ``fail_first`` requests get a 500; a conversation containing "TOO LONG" gets the 400 vLLM sends for an
    overlong prompt; model "missing" gets a 404; ``delay_s`` makes every answer slow.
    """

    def __init__(self, fail_first: int = 0, always_fail: bool = False, delay_s: float = 0.0) -> None:
        self.fail_first, self.always_fail, self.delay_s = fail_first, always_fail, delay_s
        self.requests: list[dict] = []
        self.auth: set[str] = set()
        self.in_flight = self.max_in_flight = 0
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.complete)

    async def complete(self, request: Request):
        body = await request.json()
        self.requests.append(body)
        self.auth.add(request.headers.get("authorization", ""))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        if self.always_fail or len(self.requests) <= self.fail_first:
            return JSONResponse({"error": {"message": "internal error"}}, status_code=500)
        if body["model"] == "missing":
            return JSONResponse({"error": {"message": "model not found"}}, status_code=404)
        if any("TOO LONG" in m["content"] for m in body["messages"]):
            message = "This model's maximum context length is 4096 tokens. However, you requested 4600 tokens."
            return JSONResponse({"object": "error", "message": message}, status_code=400)
        guesses = sum(m["role"] == "assistant" for m in body["messages"]) - 1  # minus the "Ok."
        content = f"Thought:\nTry the next number.\n\nAction:\nguess {guesses}"
        return {
            "id": "cmpl-1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


@contextmanager
def serving(app: FastAPI, start_after_s: float = 0.0):
    """Serve ``app`` on a free loopback port; with ``start_after_s``, the port refuses connections until then."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    def run():
        time.sleep(start_after_s)  # bound but not listening: connections are refused meanwhile
        server.run(sockets=[sock])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10 + start_after_s
    while start_after_s == 0 and not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True  # also stops a delayed server right after it starts
        thread.join(timeout=start_after_s + 10)
        sock.close()


def run_guess(agent, indices, max_rounds=6, concurrency=8):
    source = LocalEnv(GuessEnv)
    rollout = Rollout(agent, {"guess": source}, concurrency=concurrency, max_rounds=max_rounds)
    episodes = {ep.data_idx: ep for ep in rollout.run([RolloutTask("guess", i) for i in indices])}
    assert source.live_sessions == 0
    return episodes


def test_plays_episodes_through_the_endpoint():
    fake = FakeModelServer()
    with serving(fake.app) as url:
        with OpenAIAgent("tiny", f"{url}/v1", api_key="sk-test", temperature=0.5, max_tokens=64) as agent:
            episodes = run_guess(agent, range(10))
    # the fake guesses 0, 1, 2 ...: tasks hiding 0..5 are solved within 6 rounds, the others run out
    assert {i for i, ep in episodes.items() if ep.success} == set(range(6))
    assert all(episodes[i].stop_reason == "max_rounds" and episodes[i].rounds == 6 for i in range(6, 10))
    assert episodes[3].rounds == 4
    body = fake.requests[0]
    assert body["model"] == "tiny" and body["temperature"] == 0.5 and body["max_tokens"] == 64
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][0]["content"] == GuessEnv.instruction
    assert fake.auth == {"Bearer sk-test"}
    assert agent.stats["requests"] == len(fake.requests) and agent.stats["completion_tokens"] == 5 * len(fake.requests)
    # each episode's trajectory counts its own completion tokens (4 replies of 5) and its wall time
    assert episodes[3].trajectory.meta["generated_tokens"] == 20 and episodes[3].trajectory.meta["wall_s"] > 0


def test_requests_run_concurrently():
    fake = FakeModelServer(delay_s=0.2)
    with serving(fake.app) as url, OpenAIAgent("tiny", url, concurrency=8) as agent:
        run_guess(agent, range(8), max_rounds=1)
    assert fake.max_in_flight > 1


def test_transient_errors_are_retried():
    fake = FakeModelServer(fail_first=3)
    with serving(fake.app) as url, OpenAIAgent("tiny", url, backoff_s=0.01, concurrency=1) as agent:
        episodes = run_guess(agent, [2], concurrency=1)
    assert episodes[2].success and episodes[2].rounds == 3
    assert agent.stats["retries"] == 3 and len(fake.requests) == 3 + 3


def test_retries_are_bounded():
    fake = FakeModelServer(always_fail=True)
    with serving(fake.app) as url, OpenAIAgent("tiny", url, max_retries=2, backoff_s=0.01) as agent:
        with pytest.raises(AgentError, match="gave up after 3 attempts"):
            run_guess(agent, [0])
    assert len(fake.requests) == 3


def test_client_errors_fail_at_once():
    fake = FakeModelServer()
    with serving(fake.app) as url, OpenAIAgent("missing", url, backoff_s=0.01) as agent:
        with pytest.raises(AgentError, match="404"):
            run_guess(agent, [0])
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refused_key_or_an_unknown_model_needs_other_settings_not_a_rerun(tmp_path, status):
    """They ended with "rerun the same command to resume", which fails the same way."""
    from agentenv.cli import main

    app = scripted_app((status, {"error": {"message": "no"}}, {}))
    with serving(app) as url, pytest.raises(SystemExit) as stop:
        main(["eval", "--agent", f"openai:tiny@{url}/v1", "--env", "maze", "--local", "--indices", "18",
              "--out", str(tmp_path / "out.jsonl"), "--no-progress"])
    assert str(stop.value).startswith(f"error: the model endpoint refused the settings: {url}/v1/chat/completions: "
                                      f"HTTP {status}")
    assert ("--api-key" if status != 404 else "is model 'tiny' served there") in str(stop.value)
    assert "rerun" not in str(stop.value)


def test_context_overflow_stops_the_episode(capsys):
    class Verbose(GuessEnv):
        def reset(self, data_idx):
            super().reset(data_idx)
            return "TOO LONG " * 20 if data_idx == 1 else self.last

    fake = FakeModelServer()
    with serving(fake.app) as url, OpenAIAgent("tiny", url) as agent:
        rollout = Rollout(agent, {"guess": LocalEnv(Verbose)}, concurrency=2)
        episodes = {ep.data_idx: ep for ep in rollout.run([RolloutTask("guess", 0), RolloutTask("guess", 1)])}
    assert episodes[1].stop_reason == "context_overflow" and episodes[1].rounds == 0
    assert episodes[0].success
    # an overflow before any reply is the endpoint's context, not the agent: said once, with what to do
    assert "the first prompt of guess_1 does not fit openai:tiny's context" in capsys.readouterr().err


def test_connection_errors_are_retried_until_the_server_answers():
    fake = FakeModelServer()
    with serving(fake.app, start_after_s=1.5) as url:  # slack for a loaded machine to send both first requests
        with OpenAIAgent("tiny", url, backoff_s=0.1, max_retries=8, concurrency=2) as agent:
            episodes = run_guess(agent, [0, 1], concurrency=2)
    assert episodes[0].success and episodes[1].success
    assert agent.stats["retries"] >= 2  # both first requests were refused at least once


def test_connection_retries_are_bounded():
    with refusing_url() as url, OpenAIAgent("tiny", url, max_retries=2, backoff_s=0.01) as agent:
        with pytest.raises(AgentError, match="gave up after 3 attempts; last: ConnectError"):
            run_guess(agent, [0])
    assert agent.stats["retries"] == 2


def test_close_does_not_wait_out_the_retries():
    """An interrupted run closes the agent; requests in flight stop at their next backoff, not after all retries."""
    fake = FakeModelServer(always_fail=True)
    with serving(fake.app) as url:
        agent = OpenAIAgent("tiny", url, max_retries=5, backoff_s=60, max_backoff_s=60, concurrency=2)
        outcome: list[BaseException] = []

        def act():
            try:
                run_guess(agent, [0, 1], concurrency=2)
            except BaseException as exc:  # noqa: BLE001 - the test inspects it
                outcome.append(exc)

        thread = threading.Thread(target=act, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while agent.stats["retries"] < 2 and time.monotonic() < deadline:  # both requests are in backoff
            time.sleep(0.01)
        closer = threading.Thread(target=agent.close, daemon=True)
        closer.start()
        closer.join(timeout=10)
        thread.join(timeout=10)
        assert not closer.is_alive() and not thread.is_alive(), "close waited for the 60 s backoffs"
    assert isinstance(outcome[0], AgentError) and "closed" in str(outcome[0])
    assert len(fake.requests) == 2


def test_an_interrupted_call_stops_its_requests_and_frees_their_slots():
    """In a notebook the agent outlives an interrupted cell: its requests went on being retried in the
    background, holding the slots the next cell's requests wait for."""
    import signal

    fake = FakeModelServer(always_fail=True)
    with serving(fake.app) as url:
        agent = OpenAIAgent("tiny", url, max_retries=5, backoff_s=0.5, max_backoff_s=0.5, concurrency=2)
        main = threading.main_thread().ident
        timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            run_guess(agent, [0, 1], concurrency=2)
        time.sleep(1.5)  # three backoffs: the requests would have been sent again by now
        sent = len(fake.requests)
        time.sleep(1.0)
        assert len(fake.requests) == sent <= 4
        fake.always_fail = False
        started = time.monotonic()
        assert len(run_guess(agent, [0, 1], max_rounds=1, concurrency=2)) == 2  # the slots are free
        assert time.monotonic() - started < 5
        agent.close()


@pytest.mark.parametrize(
    "bad_body",
    ["{not json", "<html>bad gateway</html>", "[1, 2]", '{"choices": []}', '{"choices": ["hi"]}',
     '{"choices": [{"message": {"content": 7}}]}'],
)
def test_a_malformed_answer_is_retried_like_a_server_error(bad_body):
    """A 200 whose body is no chat completion (a proxy's page, a cut body, no choices) is retried, and in
    the end is an AgentError naming it, never a raw decoding error or an empty action sent to the env."""
    from fastapi.responses import Response

    fake = FakeModelServer()
    calls = []

    async def flaky(request: Request):
        calls.append(1)
        if len(calls) <= 2:
            return Response(bad_body, media_type="application/json")
        return await fake.complete(request)

    app = FastAPI()
    app.post("/v1/chat/completions")(flaky)
    with serving(app) as url, OpenAIAgent("tiny", url, backoff_s=0.01, concurrency=1) as agent:
        episodes = run_guess(agent, [0], concurrency=1)
        assert episodes[0].success and agent.stats["retries"] == 2
    always_bad = FastAPI()
    always_bad.post("/v1/chat/completions")(lambda: Response(bad_body, media_type="application/json"))
    with serving(always_bad) as url, OpenAIAgent("tiny", url, max_retries=1, backoff_s=0.01) as agent:
        with pytest.raises(AgentError, match="malformed body"):
            run_guess(agent, [0])


def test_a_null_content_is_an_empty_reply_and_odd_usage_is_ignored():
    answer = {"choices": [{"message": {"role": "assistant", "content": None}}], "usage": {"prompt_tokens": "x"}}
    app = FastAPI()
    app.post("/v1/chat/completions")(lambda: answer)
    with serving(app) as url, OpenAIAgent("tiny", url) as agent:
        episodes = run_guess(agent, [0], max_rounds=1)
        assert episodes[0].trajectory.conversations[-1].value == "" and agent.stats["prompt_tokens"] == 0


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost:8000", "ftp://host/v1", "http:///v1"])
def test_a_base_url_that_is_not_http_is_refused_up_front(url):
    with pytest.raises(ValueError, match="not an http"):
        OpenAIAgent("tiny", url)


def scripted_app(*answers):
    """An endpoint answering its requests with ``answers`` in turn ((status, body, headers), the last one
    repeated); ``app.times`` records when each request came."""
    app = FastAPI()
    app.times = []

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        app.times.append(time.monotonic())
        status, body, headers = answers[min(len(app.times), len(answers)) - 1]
        return JSONResponse(body, status_code=status, headers=headers)

    return app


def completion(content, finish_reason="stop"):
    message = {"role": "assistant", "content": content}
    return 200, {"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}, {}


@pytest.mark.parametrize(
    "status, message",
    [
        (400, "This model's maximum context length is 4096 tokens. However, you requested 4512 tokens."),  # vLLM
        (400, "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context length is "
              "4096 tokens and your request has 3700 input tokens (512 > 4096 - 3700)."),  # vLLM 0.10+
        (400, "request (4476 tokens) exceeds the available context size (4096 tokens)"),  # llama.cpp
        (400, "prompt is too long: 215000 tokens > 200000 maximum"),  # Anthropic's OpenAI endpoint
        (400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."),  # Gemini
        (422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 + 512"),  # TGI
        (413, "Payload Too Large"),
    ],
)
def test_every_backends_context_overflow_ends_only_that_episode(status, message):
    """Each backend words the overflow its own way; any other refusal would stop the whole run (and a rerun
    would meet the same task first, never getting past it)."""
    app = scripted_app((status, {"error": {"message": message}}, {}))
    with serving(app) as url, OpenAIAgent("tiny", url, max_tokens=512) as agent:
        episodes = run_guess(agent, [0], max_rounds=2)
    assert episodes[0].stop_reason == "context_overflow" and message[:20] in episodes[0].error


def test_max_tokens_beyond_the_whole_context_is_a_settings_error_not_an_overflow(tmp_path):
    """Else every episode would be recorded as overflowing at round 0, and a rerun with a smaller
    --max-new-tokens would find them all done."""
    message = "'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum context length is 4096"
    app = scripted_app((400, {"error": {"message": message}}, {}))
    with serving(app) as url, OpenAIAgent("tiny", url, max_tokens=8192) as agent:
        with pytest.raises(AgentSettingsError, match="max_tokens=8192 is not below the model's context of 4096"):
            run_guess(agent, [0])
    from agentenv.cli import main

    with serving(scripted_app((400, {"error": {"message": message}}, {}))) as url, pytest.raises(SystemExit) as stop:
        main(["eval", "--agent", f"openai:tiny@{url}/v1", "--env", "maze", "--local", "--indices", "18",
              "--out", str(tmp_path / "out.jsonl"), "--max-new-tokens", "8192"])
    assert str(stop.value).endswith("lower --max-new-tokens")  # not "rerun the same command to resume"


def test_retry_after_is_waited_for_and_a_long_one_ends_the_run():
    limited = (429, {"error": {"message": "Rate limit"}}, {"Retry-After": "1"})
    app = scripted_app(limited, completion("Action: guess 0"))
    with serving(app) as url, OpenAIAgent("tiny", url, backoff_s=0.01) as agent:
        episodes = run_guess(agent, [0], max_rounds=1)
    assert episodes[0].success and app.times[1] - app.times[0] >= 0.95  # not the 10 ms backoff
    app = scripted_app((429, {"error": {"message": "Daily quota"}}, {"retry-after-ms": "3600000"}))
    with serving(app) as url, OpenAIAgent("tiny", url, backoff_s=0.01) as agent:
        with pytest.raises(AgentError, match="asks to retry after 3600 s"):
            run_guess(agent, [0])
    assert len(app.times) == 1


@pytest.mark.parametrize("status", [520, 524, 529, 409])
def test_transient_statuses_of_proxies_and_hosted_apis_are_retried(status):
    """Cloudflare's 52x and Anthropic's 529 "overloaded" pass; 501 "not implemented" never will."""
    app = scripted_app((status, {"error": {"message": "overloaded"}}, {}), completion("Action: guess 0"))
    with serving(app) as url, OpenAIAgent("tiny", url, backoff_s=0.01) as agent:
        assert run_guess(agent, [0], max_rounds=1)[0].success and agent.stats["retries"] == 1
    app = scripted_app((501, {"error": {"message": "no"}}, {}))
    with serving(app) as url, OpenAIAgent("tiny", url, backoff_s=0.01) as agent, pytest.raises(AgentError, match="501"):
        run_guess(agent, [0])


def test_an_api_key_with_a_newline_is_refused_without_echoing_it(monkeypatch):
    """httpx cannot send it, and retried it as a network failure before printing it in the error (and the
    run's .meta.json).  Surrounding whitespace (a key file's newline) is stripped."""
    for key in ("sk-SECRET\x00x", "sk-SECRET x"):  # a space inside too, as the message says
        with pytest.raises(ValueError, match="API key") as refused:
            OpenAIAgent("tiny", "http://127.0.0.1:9/v1", api_key=key)
        assert "SECRET" not in str(refused.value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SECRET\n")
    with OpenAIAgent("tiny", "http://127.0.0.1:9/v1") as agent:
        assert agent._client.headers["authorization"] == "Bearer sk-SECRET"


def test_replies_cut_at_max_tokens_are_listed_and_a_reasoning_only_one_is_warned_of(capsys):
    """A reasoning model that spends max_tokens thinking answers content null: it would score 0% silently."""
    answer = completion(None, finish_reason="length")
    answer[1]["choices"][0]["message"]["reasoning_content"] = "Let me think. " * 50
    with serving(scripted_app(answer)) as url, OpenAIAgent("tiny", url, max_tokens=64) as agent:
        episodes = run_guess(agent, [0, 1], max_rounds=3)
    assert [ep.trajectory.meta["truncated_replies"] for ep in episodes.values()] == [[0, 1, 2], [0, 1, 2]]
    assert capsys.readouterr().err.count("reached max_tokens=64 before replying") == 1
    with serving(scripted_app(completion("Action: guess 0"))) as url, OpenAIAgent("tiny", url) as agent:
        assert "truncated_replies" not in run_guess(agent, [0], max_rounds=1)[0].trajectory.meta


def test_content_parts_are_joined():
    answer = completion([{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Action: guess 0"}])
    with serving(scripted_app(answer)) as url, OpenAIAgent("tiny", url) as agent:
        assert run_guess(agent, [0], max_rounds=1)[0].success


@pytest.mark.parametrize(
    "base, url",
    [
        ("http://h:8000/v1/chat/completions", "http://h:8000/v1/chat/completions"),  # the full endpoint pasted
        ("http://h:8000/v1/", "http://h:8000/v1/chat/completions"),
        ("https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-06-01",
         "https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-06-01"),
    ],
)
def test_base_url_forms(base, url):
    with OpenAIAgent("tiny", base) as agent:
        assert agent.url == url


def test_eval_request_timeout_reaches_the_agent(tmp_path):
    """A slow server (a CPU llama.cpp writing a long reply) needs more than the default 120 s per request;
    --request-timeout sets it.  Here a short one against a slow server: the run stops with one line."""
    from agentenv.cli import main

    fake = FakeModelServer(delay_s=3.0)
    with serving(fake.app) as url, pytest.raises(SystemExit, match="gave up after 1 attempt; last: ReadTimeout"):
        main(["eval", "--agent", f"openai:tiny@{url}/v1", "--env", "maze", "--local", "--indices", "18",
              "--out", str(tmp_path / "out.jsonl"), "--request-timeout", "1", "--max-retries", "0"])
    assert len(fake.requests) == 1

    fake = FakeModelServer(delay_s=3.0)  # best-of-n takes them too (it refused them as unknown options)
    with serving(fake.app) as url, pytest.raises(SystemExit, match="gave up after 1 attempt; last: ReadTimeout"):
        main(["best-of-n", "--agent", f"openai:tiny@{url}/v1", "--env", "maze", "--local", "--limit", "1", "--n", "2",
              "--out", str(tmp_path / "bon.jsonl"), "--request-timeout", "1", "--max-retries", "0"])


@pytest.mark.parametrize("stop", ["a refusal", "Ctrl-C"])
def test_a_stopped_run_exits_without_waiting_for_requests_in_flight(tmp_path, stop):
    """The agent's requests ran on a thread pool, whose threads Python waits for at exit: a run stopped by
    an endpoint's refusal or a Ctrl-C printed its error at once and exited only when every request still in
    flight had returned (here 40 s; up to --request-timeout)."""
    import signal
    import subprocess
    import sys

    requests: list[int] = []
    released = threading.Event()  # the slow requests' end, once the test has its answer
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete():
        requests.append(1)
        if stop == "a refusal" and len(requests) == 2:
            return JSONResponse({"object": "error", "message": "invalid value for top_p"}, status_code=400)
        for _ in range(400):  # 40 s
            if released.is_set():
                break
            await asyncio.sleep(0.1)
        return JSONResponse({"object": "error", "message": "too late"}, status_code=400)

    with serving(app) as url:
        command = [sys.executable, "-m", "agentenv.cli", "eval", "--agent", f"openai:tiny@{url}/v1", "--env", "maze",
                   "--local", "--limit", "3", "--concurrency", "3", "--out", str(tmp_path / "out.jsonl")]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(requests) < 3 and time.monotonic() < deadline:  # every request is in flight
            time.sleep(0.05)
        started = time.monotonic()
        if stop == "Ctrl-C":
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - started
        released.set()
    assert took < 20, f"exited {took:.0f} s after the run stopped: {err[-500:]}"
    assert err.strip().splitlines()[-1].startswith("error: the model endpoint failed" if stop == "a refusal" else "interrupted")
    assert "Traceback" not in err


def test_an_answer_trickled_a_byte_at_a_time_is_timed_out_as_a_whole():
    """httpx's timeout bounds each read: an endpoint (or a proxy's keep-alive bytes) sending a byte every
    0.2 s never tripped --request-timeout, and the run waited forever."""
    from fastapi.responses import StreamingResponse

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def trickle():
        async def forever():
            while True:
                yield b" "
                await asyncio.sleep(0.2)

        return StreamingResponse(forever(), media_type="application/json")

    with serving(app) as url, OpenAIAgent("tiny", url, max_retries=1, backoff_s=0.01, timeout=1.0) as agent:
        started = time.monotonic()
        with pytest.raises(AgentError, match="gave up after 2 attempts; last: ReadTimeout: no whole answer within 1 s"):
            run_guess(agent, [0])
        assert time.monotonic() - started < 5
