"""The server kit over real HTTP: a toy environment served by uvicorn on a loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import ssl
import threading
import time
from typing import Any, ClassVar

import httpx
import pytest
from fastapi import APIRouter, Body, FastAPI
from fastapi.responses import JSONResponse

from agentenv.client import EnvClient, EnvCrashed, EpisodeFinished, ServerFull, SessionNotFound
from agentenv.env import Environment, EpisodicEnv, ExpertAction, StepResult, Wire
from agentenv.protocol import CreateRequest, StepRequest
from agentenv.server.app import create_app
from agentenv.server.errors import install_error_handlers
from agentenv.server.routing import BodyRoute, add_routes
from agentenv.server.sessions import SessionPool
from agentenv.session import LocalSession
from agentenv.testing import running_server


class CounterEnv(Environment):
    """Count up to the task's target with ``add N``; ``nap`` sleeps, ``explode`` crashes the env."""

    name: ClassVar[str] = "counter"
    splits: ClassVar[dict[str, range]] = {"train": range(0, 10), "test": range(10, 20)}
    max_rounds: ClassVar[int] = 10
    instruction: ClassVar[str] = "Reach the target with `add N`."
    wire: ClassVar[Wire] = Wire(reset_field="game", queries={"target": "target_value"})

    closed: ClassVar[int] = 0
    in_flight: ClassVar[int] = 0
    most_in_flight: ClassVar[int] = 0
    guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self.target = self.total = 0
        self.busy = 0
        self.most_busy = 0

    def reset(self, data_idx: int) -> str:
        self.target, self.total = data_idx % 5 + 1, 0
        return f"Target {self.target}."

    def step(self, action: str) -> StepResult:
        if action == "explode":
            raise RuntimeError("boom")
        if action == "nap":
            return self._nap()
        if not action.startswith("add ") or not action[4:].isdigit():
            return StepResult(f"Invalid action {action!r}: use `add N`.")
        self.total += int(action[4:])
        done = self.total >= self.target
        reward = 1.0 if self.total == self.target else 0.0
        return StepResult(f"Total {self.total}.", reward, done, reward)  # (observation, reward, terminated, score)

    def _nap(self) -> StepResult:
        cls = type(self)
        with cls.guard:
            cls.in_flight += 1
            cls.most_in_flight = max(cls.most_in_flight, cls.in_flight)
        self.busy += 1
        self.most_busy = max(self.most_busy, self.busy)
        time.sleep(0.3)  # long enough for naps sent together to meet on a loaded machine
        self.busy -= 1
        with cls.guard:
            cls.in_flight -= 1
        return StepResult(f"Napped (most at once here: {self.most_busy}).")

    def observation(self) -> str:
        return f"Total {self.total} of {self.target}."

    def expert_action(self) -> ExpertAction:
        return ExpertAction(f"I need {self.target - self.total} more.", f"add {self.target - self.total}")

    def target_value(self) -> int:
        return self.target

    def close(self) -> None:
        with type(self).guard:
            type(self).closed += 1


def on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class InlineCounterEnv(CounterEnv):
    """A non-blocking env: its steps run on the server's event loop, its expert never does."""

    name: ClassVar[str] = "inline_counter"
    blocking: ClassVar[bool] = False
    ran_on_loop: ClassVar[dict[str, bool]] = {}

    def step(self, action: str) -> StepResult:
        type(self).ran_on_loop["step"] = on_event_loop()
        return super().step(action)

    def expert_action(self) -> ExpertAction:
        type(self).ran_on_loop["expert"] = on_event_loop()
        return super().expert_action()

    def target_value(self) -> int:
        type(self).ran_on_loop["query"] = on_event_loop()
        return super().target_value()


def test_a_non_blocking_envs_steps_run_inline_but_its_expert_and_queries_in_a_worker_thread():
    with running_server(InlineCounterEnv) as url, EnvClient("inline_counter", url) as client:
        with client.session(data_idx=2) as session:
            session.step(f"Action:\n{session.expert().action}")
            assert client.http.get(f"{url}/inline_counter/target", params={"id": session.id}).json() == 3
    assert InlineCounterEnv.ran_on_loop == {"step": True, "expert": False, "query": False}


def test_a_slow_call_on_the_event_loop_is_logged_once_a_minute(caplog):
    """A ``blocking = False`` env whose step takes 0.3 s holds every request that long; the server says so
    (it said nothing), once, not at every slow call."""
    with caplog.at_level("WARNING", logger="agentenv.server"):
        with running_server(InlineCounterEnv) as url, EnvClient("inline_counter", url) as client:
            with client.session(data_idx=2) as session:
                session.step("add 1")
                assert "event loop" not in caplog.text
                session.step("nap")
                session.step("nap")
    said = [r.getMessage() for r in caplog.records if "on the event loop" in r.getMessage()]
    assert len(said) == 1, said
    assert said[0].startswith("inline_counter: a call took 3") and "should keep blocking = True" in said[0]


class CollectedInlineCounterEnv(InlineCounterEnv):
    """Its steps meet garbage collections of 0.15 s each, were the collector on."""

    name: ClassVar[str] = "collected_inline_counter"

    def step(self, action: str) -> StepResult:
        from test_controller_support import meet_slow_collections

        meet_slow_collections()
        return super().step(action)


def test_a_garbage_collection_is_not_logged_as_a_slow_call_of_the_env(caplog):
    with caplog.at_level("WARNING", logger="agentenv.server"):
        with running_server(CollectedInlineCounterEnv) as url, EnvClient("collected_inline_counter", url) as client:
            with client.session(data_idx=2) as session:
                session.step("add 1")
    assert "event loop" not in caplog.text


@pytest.fixture(scope="module")
def server():
    with running_server(CounterEnv, max_sessions=400) as url:
        yield url


@pytest.fixture()
def http(server):
    with httpx.Client(base_url=server, timeout=30) as client:
        yield client


def test_whole_episode_with_the_typed_client(server):
    with EnvClient("counter", server) as client:
        with client.session() as session:
            first = session.reset(3)
            assert first.observation == "Target 4." and first.data_idx == 3
            while True:
                move = session.expert()
                result = session.step(f"Thought:\n{move.thought}\n\nAction:\n{move.action}")
                if result.done:
                    break
            assert result.reward == 1.0 and result.success is True and result.score == 1.0
            with pytest.raises(EpisodeFinished):
                session.step("add 1")
            assert session.query("target") == 4
        assert client.info()["live_sessions"] == 0


def test_single_env_server_answers_at_root_and_under_its_name(http):
    sid = http.post("/create").json()["id"]
    assert http.post("/counter/reset", json={"id": sid, "game": 1}).json()["observation"] == "Target 2."
    same = http.post("/reset", json={"id": sid, "game": 1, "data_idx": 1})  # both names, one task: our form
    assert same.json()["observation"] == "Target 2." and same.json()["id"] == sid
    refused = http.post("/reset", json={"id": sid, "game": 3, "data_idx": 1})
    assert refused.status_code == 422 and refused.json()["error"] == (
        "data_idx 1 and game 3 name different tasks: send one of them")
    assert http.post("/step", json={"id": sid, "action": "add 2"}).json()["done"] is True
    assert http.get("/counter/observation", params={"id": sid}).json() == "Total 2 of 2."
    assert http.post("/close", json={"env_idx": sid}).json() == {"closed": True, "id": sid}


@pytest.mark.parametrize(
    ("method", "route", "body", "status"),
    [
        ("POST", "/counter/step", {"id": 999_999, "action": "add 1"}, 404),
        ("GET", "/counter/observation?id=999999", None, 404),
        ("POST", "/counter/close", {"id": 999_999}, 404),
        ("GET", "/counter/nowhere", None, 404),
        ("POST", "/counter/step", {"id": 0}, 422),
        ("POST", "/counter/step", {"action": "add 1"}, 422),  # no session id: a missing field
        ("POST", "/counter/step", {"env_idx": None, "action": "add 1"}, 422),
        ("GET", "/counter/observation", None, 422),
        ("GET", "/counter/observation?id=999999.0", None, 422),  # a query's id too is digits only
        ("GET", "/counter/observation?id=+999999", None, 422),
        ("POST", "/counter/step", {"id": "zero", "action": "add 1"}, 422),
        ("POST", "/counter/create", {"data_idx": 5000}, 422),
        ("POST", "/counter/create", {"data_idx": "three"}, 422),
        # a bool or float is no integer, by either name of the task index or the session
        ("POST", "/counter/create", {"data_idx": True}, 422),
        ("POST", "/counter/create", {"game": True}, 422),
        ("POST", "/counter/create", {"data_idx": 1, "game": 2}, 422),  # two names, two tasks: which one?
        ("POST", "/counter/create", {"data_idx": 1.0}, 422),
        ("POST", "/counter/step", {"id": True, "action": "add 1"}, 422),
        ("POST", "/counter/close", {"env_idx": True}, 422),
    ],
)
def test_errors_are_status_codes_with_a_json_body(http, method, route, body, status):
    answer = http.request(method, route, json=body)
    assert answer.status_code == status
    assert isinstance(answer.json()["error"], str) and answer.json()["error"]


def test_malformed_json_and_oversize_bodies(http):
    bad = http.post("/counter/step", content=b"{not json", headers={"content-type": "application/json"})
    assert bad.status_code == 422 and "error" in bad.json()
    huge = http.post("/counter/step", json={"id": 0, "action": "x" * 1_200_000})
    assert huge.status_code == 413 and "error" in huge.json()


def test_a_chunked_body_is_counted_as_it_comes(http):
    """No Content-Length (chunked): the body is counted as it streams in, refused past the limit, else served."""
    sid = http.post("/counter/create", json={"data_idx": 0}).json()["id"]
    try:
        def chunks(body: bytes):
            yield from (body[i : i + 65_536] for i in range(0, len(body), 65_536))

        small = f'{{"id": {sid}, "action": "add 1"}}'.encode()
        served = http.post("/counter/step", content=chunks(small), headers={"content-type": "application/json"})
        assert "content-length" not in served.request.headers and served.status_code == 200
        huge = f'{{"id": {sid}, "action": "{"x" * 1_200_000}"}}'.encode()
        refused = http.post("/counter/step", content=chunks(huge), headers={"content-type": "application/json"})
        assert refused.status_code == 413 and "error" in refused.json()
    finally:
        http.post("/counter/close", json={"id": sid})


def _answer_then_close(raw: socket.socket) -> bytes:
    """All a raw connection gets until the server closes it (after an answer that ends the connection)."""
    answer = b""
    while chunk := raw.recv(65536):
        answer += chunk
    return answer


def test_a_body_that_stops_coming_is_answered_408_and_its_connection_closed(monkeypatch):
    """A client that sent part of a body and stopped held its connection (and a descriptor) for ever: 2,000 of
    them held 2,019 descriptors; at the process's limit no one else was answered."""
    from agentenv.server import limits, workers

    monkeypatch.setattr(limits, "BODY_TIMEOUT_S", 0.5)
    with running_server(CounterEnv) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 50\r\n\r\n{")
            answer = _answer_then_close(raw)
        assert answer.startswith(b"HTTP/1.1 408 ") and b"did not come whole within 0.5 s" in answer

    async def never() -> dict:
        await asyncio.sleep(60)
        return {}

    started = time.monotonic()  # a --workers server's router reads the body first: the same deadline
    _, _, complete = asyncio.run(workers._read_body({}, never, 1000))
    assert not complete and time.monotonic() - started < 5


def test_a_request_head_that_never_comes_whole_is_answered_408_and_its_connection_closed(monkeypatch):
    """uvicorn times a connection out only between requests: one that sent nothing, or a request line and
    then a header byte now and then, held its connection (and a descriptor) for ever.  A head has a deadline
    from the connection's start or the request's first byte, whatever trickles in; a whole request is
    answered as usual, and the next one on its connection gets its own time."""
    from agentenv.server import connections

    monkeypatch.setattr(connections, "HEAD_TIMEOUT_S", 1.0)
    with running_server(CounterEnv) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as silent:
            started = time.monotonic()
            answer = _answer_then_close(silent)
            assert answer.startswith(b"HTTP/1.1 408 ") and b"did not come whole within 1 s" in answer
            assert 0.9 < time.monotonic() - started < 5
        with socket.create_connection((host, int(port)), timeout=10) as trickle:
            trickle.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            started = time.monotonic()
            with contextlib.suppress(OSError):  # the server may close it between two bytes
                for byte in b"X-Slow: " + b"a" * 40:
                    trickle.sendall(bytes([byte]))
                    time.sleep(0.1)
            assert _answer_then_close(trickle).startswith(b"HTTP/1.1 408 ") and time.monotonic() - started < 5
        with socket.create_connection((host, int(port)), timeout=10) as kept:
            for _ in range(2):  # each within its time; together longer than one head's deadline
                time.sleep(0.6)
                kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert kept.recv(65536).startswith(b"HTTP/1.1 200 ")


def test_a_request_that_is_not_http_is_answered_400_with_a_json_error():
    """uvicorn answers what httptools cannot parse in plain text; every server here answers it as any other
    error: a status, a JSON body, and the connection closed."""
    with running_server(CounterEnv) as url:
        host, port = url.removeprefix("http://").split(":")
        for garbage in (b"HELLO\r\n\r\n", b"GET /health HTTP/1.1\r\nbad header\r\n\r\n", b"\x16\x03\x01\x02\x00\x01"):
            with socket.create_connection((host, int(port)), timeout=10) as raw:
                raw.sendall(garbage)
                answer = _answer_then_close(raw)
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400 ") and b"content-type: application/json" in head.lower(), answer
            assert "Invalid HTTP request" in json.loads(body)["error"]
        with httpx.Client() as http:  # and the server goes on serving
            assert http.get(f"{url}/health").status_code == 200


def test_a_body_read_ends_at_its_deadline_and_for_no_other_reason():
    """The body deadline is one check a second over every read waiting (an asyncio.timeout per read cost
    ~15 us a request): a read past its deadline is None, another's cancellation still cancels, and a read
    that ended leaves nothing watched."""
    from agentenv.server import limits

    async def never() -> dict:
        await asyncio.sleep(60)
        return {}

    async def ready() -> dict:
        return {"type": "http.request", "body": b"{}"}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert await limits.body_message(ready, loop.time() + 30) == {"type": "http.request", "body": b"{}"}
        started = loop.time()
        assert await limits.body_message(never, started + 0.2) is None and loop.time() - started < 3
        read = asyncio.create_task(limits.body_message(never, loop.time() + 30))
        await asyncio.sleep(0.05)
        read.cancel()
        with pytest.raises(asyncio.CancelledError):
            await read
        reads = limits._reads[loop]
        assert not reads.deadlines and not reads.expired

    asyncio.run(main())


def test_step_before_reset_and_after_done_is_409(http):
    sid = http.post("/counter/create").json()["id"]
    try:
        assert http.post("/counter/step", json={"id": sid, "action": "add 1"}).status_code == 409
        http.post("/counter/reset", json={"id": sid, "data_idx": 0})
        assert http.post("/counter/step", json={"id": sid, "action": "add 1"}).json()["done"] is True
        late = http.post("/counter/step", json={"id": sid, "action": "add 1"})
        assert late.status_code == 409 and "reset" in late.json()["error"]
    finally:
        http.post("/counter/close", json={"id": sid})


def test_illegal_action_is_an_observation_not_an_error(http):
    sid = http.post("/counter/create", json={"data_idx": 4}).json()["id"]
    answer = http.post("/counter/step", json={"id": sid, "action": "jump"})
    assert answer.status_code == 200 and answer.json()["reward"] == 0 and "Invalid action" in answer.json()["observation"]
    assert http.post("/counter/step", json={"id": sid, "action": "add 5"}).json()["reward"] == 1
    http.post("/counter/close", json={"id": sid})


def test_env_crash_is_500_and_ends_only_that_session(http):
    crashed = http.post("/counter/create", json={"data_idx": 4}).json()["id"]
    healthy = http.post("/counter/create", json={"data_idx": 4}).json()["id"]
    closed_before = CounterEnv.closed
    answer = http.post("/counter/step", json={"id": crashed, "action": "explode"})
    assert answer.status_code == 500 and "boom" in answer.json()["error"]
    assert CounterEnv.closed == closed_before + 1
    assert http.post("/counter/step", json={"id": crashed, "action": "add 1"}).status_code == 404
    assert http.post("/counter/step", json={"id": healthy, "action": "add 1"}).status_code == 200
    http.post("/counter/close", json={"id": healthy})


def test_an_env_that_cannot_be_created_for_want_of_descriptors_is_a_full_server_not_a_crash():
    """Out of file descriptors (or memory, or threads), creating an env was answered as its crash (500): a
    client gave up the episode.  It is now 429, which the rollout waits on and retries, and the server
    lives on."""
    import errno

    from fastapi.testclient import TestClient

    class Starved(CounterEnv):
        name = "starved"
        starving: ClassVar[bool] = True

        def __init__(self) -> None:
            if Starved.starving:
                raise OSError(errno.EMFILE, "Too many open files")
            super().__init__()

    with TestClient(create_app([Starved]), base_url="http://127.0.0.1") as http:
        refused = http.post("/create", json={})
        assert refused.status_code == 429
        assert refused.json()["error"].startswith("could not create a starved env: the server is out of file "
                                                  "descriptors (OSError: [Errno 24] Too many open files)")
        Starved.starving = False
        assert http.post("/create", json={}).status_code == 200


class UnfitValuesEnv(CounterEnv):
    """Returns what the protocol cannot carry: a dict for task 0's first observation, a list for a step's
    observation after ``add 2``, a list from ``/observation``, a word for a reward after ``add 3``, a tuple after
    ``add 7`` and a score outside the reward range after ``add 8``."""

    name: ClassVar[str] = "unfit"

    def reset(self, data_idx: int) -> Any:
        first = super().reset(data_idx)
        return {"text": first} if data_idx == 0 else first

    def step(self, action: str) -> StepResult:
        result = super().step(action)
        if action == "add 2":
            return StepResult(["list", result.observation])
        if action == "add 7":
            return (result.observation, 0.0, False, {})  # type: ignore[return-value]  # AgentGym's step tuple
        if action == "add 8":
            return StepResult(result.observation, 0.0, score=5.0)
        return StepResult(result.observation, "much") if action == "add 3" else result

    def observation(self) -> Any:
        return ["list"]


@pytest.mark.parametrize("blocking", [True, False])
def test_a_value_the_protocol_cannot_carry_is_an_env_crash_that_names_it(blocking):
    """An env returning an observation that is not a string (or a reward that is no number) was answered
    '500 internal server error: ValidationError', kept its session live (a create leaked a place the client
    never got the id of), and /observation passed a list on as JSON."""
    env_cls = type("UnfitValues", (UnfitValuesEnv,), {"blocking": blocking})
    with running_server(env_cls) as url, httpx.Client(base_url=f"{url}/unfit") as http:
        created = http.post("/create", json={"data_idx": 0})
        assert created.status_code == 500
        assert created.json()["error"].startswith("unfit env's reset returned observation of type dict")
        assert http.get("/info").json()["live_sessions"] == 0
        for action, message in [("add 2", "step returned observation of type list"),
                                ("add 3", "step returned reward of type str"),
                                ("add 7", "step returned a tuple (a StepResult is needed)"),
                                ("add 8", "step returned score 5, outside its reward_range (0, 1)")]:
            sid = http.post("/create", json={"data_idx": 6}).json()["id"]
            answer = http.post("/step", json={"id": sid, "action": action})
            assert answer.status_code == 500 and answer.json()["error"].startswith(f"unfit env's {message}")
            assert http.post("/step", json={"id": sid, "action": "add 1"}).status_code == 404  # closed
        sid = http.post("/create", json={"data_idx": 6}).json()["id"]
        observed = http.get("/observation", params={"id": sid})
        assert observed.status_code == 500 and "observation returned observation of type list" in observed.json()["error"]
        assert http.get("/info").json()["live_sessions"] == 0


def test_an_episodic_envs_act_that_returns_no_step_result_is_named_so():
    """A newcomer's ``act`` returning AgentGym's tuple crashed as "'tuple' object has no attribute 'score'", and
    a reward given as a string as "unsupported operand type(s) for +"."""

    class Sloppy(EpisodicEnv):
        name: ClassVar[str] = "sloppy"
        splits: ClassVar[dict[str, range]] = {"test": range(3)}
        instruction: ClassVar[str] = "Say anything."

        def start(self, data_idx: int) -> str:
            return "Say something."

        def act(self, action: str) -> StepResult:
            return (action, 1.0, True, {}) if action == "tuple" else StepResult(action, "1.0", True)  # type: ignore

        def expert_action(self) -> ExpertAction:
            return ExpertAction("", "tuple")

    for action, message in [("tuple", "Sloppy.act returned a tuple: it must return a StepResult"),
                            ("string", "Sloppy.act returned a reward of type str: a number is needed")]:
        session = LocalSession(Sloppy)
        session.reset(0)
        with pytest.raises(EnvCrashed, match=message):
            session.step(action)
        assert session.closed


def test_a_misspelt_route_in_wire_shapes_is_refused():
    with pytest.raises(ValueError, match=r"Wire.shapes has routes \['stepp'\]: its routes are"):
        Wire(shapes={"stepp": ("observation",)})


def test_capacity_answers_429_and_never_shares_a_session():
    with running_server(CounterEnv, max_sessions=2) as url, EnvClient("counter", url) as client:
        first, second = client.session(), client.session()
        with pytest.raises(ServerFull):
            client.create()
        assert first.id != second.id
        first.close()
        third = client.session()
        assert third.id not in (first.id, second.id)  # ids are never reused
        second.close()
        third.close()


def test_token_guards_every_route_but_health():
    with running_server(CounterEnv, token="s3cret") as url:
        assert httpx.get(f"{url}/counter/health").status_code == 200
        refused = httpx.post(f"{url}/counter/create")
        assert refused.status_code == 401 and "error" in refused.json()
        # the root too: it answered without the token, naming the envs
        assert httpx.get(f"{url}/").status_code == 401
        assert httpx.get(f"{url}/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        with EnvClient("counter", url, token="s3cret") as client:
            client.session().close()


@pytest.mark.parametrize("authorization", ["bearer s3cret", "BEARER s3cret", "Bearer  s3cret"])
def test_the_bearer_scheme_is_case_insensitive(authorization):
    with running_server(CounterEnv, token="s3cret") as url:
        created = httpx.post(f"{url}/counter/create", headers={"Authorization": authorization})
        assert created.status_code == 200


@pytest.mark.parametrize(
    "authorization", ["", "s3cret", "Bearer", "Bearer s3cre", "Basic s3cret", "Bearers3cret"]
)
def test_a_wrong_authorization_is_401(authorization):
    with running_server(CounterEnv, token="s3cret") as url:
        refused = httpx.post(f"{url}/counter/create", headers={"Authorization": authorization})
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("body", [b"{not json", b'{"data_idx": "seven"}', b"[]"])
def test_a_malformed_body_without_the_token_is_401_not_a_schema_hint(body):
    with running_server(CounterEnv, token="s3cret") as url:
        refused = httpx.post(f"{url}/counter/create", content=body, headers={"Content-Type": "application/json"})
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert "data_idx" not in refused.text
        malformed = httpx.post(
            f"{url}/counter/create",
            content=body,
            headers={"Content-Type": "application/json", "Authorization": "Bearer s3cret"},
        )
        assert malformed.status_code == 422 and malformed.json()["error"].startswith("malformed request")


def test_a_server_with_a_token_serves_no_docs():
    with running_server(CounterEnv, token="s3cret") as url:
        for route in ("/openapi.json", "/docs", "/redoc"):
            answer = httpx.get(url + route)
            assert answer.status_code in (401, 404) and "error" in answer.json(), route
    with running_server(CounterEnv) as url:  # an open server keeps them
        assert httpx.get(f"{url}/openapi.json").status_code == 200


class SleepyEnv(CounterEnv):
    """``sleep S`` takes S seconds."""

    name: ClassVar[str] = "sleepy"

    def step(self, action: str) -> StepResult:
        if action.startswith("sleep "):
            time.sleep(float(action.removeprefix("sleep ")))
            return StepResult("Slept.")
        return super().step(action)


def test_idle_time_counts_from_the_end_of_the_last_request():
    with running_server(SleepyEnv, ttl_s=2.0) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create", json={"data_idx": 0}).json()["id"]
        assert http.post("/step", json={"id": sid, "action": "sleep 5"}).status_code == 200  # 2.5 TTLs long
        time.sleep(0.2)  # idle, but well short of a whole TTL (slack for a loaded machine)
        assert http.post("/step", json={"id": sid, "action": "add 1"}).status_code == 200
        deadline = time.monotonic() + 10  # left alone, it is reaped
        while http.get("/info").json()["live_sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert http.post("/step", json={"id": sid, "action": "add 1"}).status_code == 404


def test_close_and_ttl_reaping_free_the_env():
    with running_server(CounterEnv, ttl_s=1.0) as url, EnvClient("counter", url) as client:
        closed_before = CounterEnv.closed
        session = client.session(data_idx=1)
        session.close()
        assert CounterEnv.closed == closed_before + 1
        idle = client.session(data_idx=1)
        deadline = time.monotonic() + 10
        while client.info()["live_sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.info()["live_sessions"] == 0
        assert CounterEnv.closed == closed_before + 2
        with pytest.raises(SessionNotFound):
            idle.step("add 1")


def test_steps_of_one_session_are_serialised_while_sessions_run_in_parallel(server):
    async def naps(ids: list[int]) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=f"{server}/counter", timeout=30) as client:
            calls = [client.post("/step", json={"id": sid, "action": "nap"}) for sid in ids]
            return [r.json() for r in await asyncio.gather(*calls)]

    with EnvClient("counter", server) as client:
        one, two, three = (client.session(data_idx=0) for _ in range(3))
        CounterEnv.most_in_flight = 0
        same = asyncio.run(naps([one.id] * 4))
        assert all(answer["observation"].endswith("here: 1).") for answer in same)
        assert CounterEnv.most_in_flight == 1
        asyncio.run(naps([one.id, two.id, three.id]))
        assert CounterEnv.most_in_flight > 1
        for session in (one, two, three):
            session.close()


class ParkedEnv(CounterEnv):
    """``park`` waits in its worker thread until the test lets it go (a slow SQL query, a long JVM call)."""

    name: ClassVar[str] = "parked"
    release: ClassVar[threading.Event] = threading.Event()
    parked: ClassVar[threading.Semaphore] = threading.Semaphore(0)

    def step(self, action: str) -> StepResult:
        if action == "park":
            ParkedEnv.parked.release()
            ParkedEnv.release.wait(60)
            return StepResult("Let go.")
        return super().step(action)


def test_sessions_busy_in_more_worker_threads_than_the_default_forty_leave_others_a_thread():
    """One client's 50 slow calls held every worker thread (anyio's default is 40): every other session's
    calls waited for them."""
    ParkedEnv.release.clear()
    with running_server(ParkedEnv, max_sessions=60) as url, httpx.Client(base_url=url, timeout=30) as http:
        ids = [http.post("/create", json={"data_idx": 1}).json()["id"] for _ in range(51)]
        for sid in ids:
            assert http.post("/reset", json={"id": sid, "data_idx": 1}).status_code == 200
        busy = [threading.Thread(target=httpx.post, args=(f"{url}/step",), kwargs={
            "json": {"id": sid, "action": "park"}, "timeout": 60}) for sid in ids[:50]]
        try:
            for thread in busy:
                thread.start()
            for _ in busy:  # every call is in its env, each holding a worker thread
                assert ParkedEnv.parked.acquire(timeout=30)
            answer = http.post("/step", json={"id": ids[50], "action": "add 2"}, timeout=10)
            assert answer.status_code == 200 and answer.json()["done"]
        finally:
            ParkedEnv.release.set()
            for thread in busy:
                thread.join(60)


def test_300_concurrent_sessions_all_work(server):
    # One client per episode, like 300 separate agents (httpx's pool gets slow past ~100 connections);
    # sharing one TLS context spares each client building its own.
    tls = ssl.create_default_context()

    async def episode(k: int) -> tuple[int, float]:
        async with httpx.AsyncClient(base_url=f"{server}/counter", timeout=60, verify=tls) as client:
            sid = (await client.post("/create")).json()["id"]
            await client.post("/reset", json={"id": sid, "data_idx": k % 20})
            step = (await client.post("/step", json={"id": sid, "action": f"add {k % 5 + 1}"})).json()
            assert (await client.post("/close", json={"id": sid})).json()["closed"] is True
            return sid, step["reward"]

    async def main() -> list[tuple[int, float]]:
        return await asyncio.gather(*(episode(k) for k in range(300)))

    results = asyncio.run(main())
    assert len({sid for sid, _ in results}) == 300
    assert all(reward == 1.0 for _, reward in results)
    assert httpx.get(f"{server}/counter/info").json()["live_sessions"] == 0


def test_info_lists_the_env_facts(http):
    info = http.get("/counter/info").json()
    assert info["env"] == "counter" and info["splits"] == {"train": [0, 10], "test": [10, 20]}
    assert info["max_rounds"] == 10 and info["max_sessions"] == 400


def test_the_splits_read_back_from_info_hold_numpy_and_python_indices_alike():
    import numpy as np

    from agentenv.env import info_splits

    train = info_splits({"splits": {"train": [0, 10]}, "split_excluded": {"train": [3]}})["train"]
    assert list(train) == [0, 1, 2, 4, 5, 6, 7, 8, 9] and len(train) == 9
    assert 4 in train and np.int64(4) in train and np.int32(9) in train
    assert 3 not in train and np.int64(3) not in train and 10 not in train and True not in train and 4.0 not in train


def test_reaping_spares_a_session_used_while_an_earlier_one_closes():
    """The reaper closes idle sessions one after another, and a close may take seconds (a JVM shutting
    down): a session a client comes back to meanwhile is no longer idle and stays."""
    closing, release = threading.Event(), threading.Event()

    class SlowCloseEnv(CounterEnv):
        name: ClassVar[str] = "slow_close"

        def close(self) -> None:
            closing.set()
            release.wait(10)

    async def main() -> tuple[int, list[int], int]:
        pool = SessionPool(SlowCloseEnv, max_sessions=4, ttl_s=60)
        first, second = await pool.create(), await pool.create()
        first.last_used = second.last_used = time.monotonic() - 120  # both idle past the TTL
        reaping = asyncio.create_task(pool.reap())
        assert await asyncio.to_thread(closing.wait, 10)  # closing the first one
        pool.get(second.id)  # a client's request for the second
        release.set()
        return await reaping, list(pool.slots), second.id

    reaped, live, second_id = asyncio.run(main())
    assert reaped == 1 and live == [second_id]


class GatewayError(Exception):
    """Like py4j's ``Py4JJavaError``: printable only while its env (the JVM gateway) is open."""

    def __init__(self, env: GatewayEnv) -> None:
        self.env = env

    def __str__(self) -> str:
        if self.env.gateway_closed:
            raise RuntimeError("gateway is not connected")
        return "java.lang.IllegalStateException: no task loaded"


class GatewayEnv(CounterEnv):
    name: ClassVar[str] = "gateway"

    def __init__(self) -> None:
        super().__init__()
        self.gateway_closed = False

    def step(self, action: str) -> StepResult:
        if action == "java":
            raise GatewayError(self)
        return super().step(action)

    def close(self) -> None:
        self.gateway_closed = True


def test_a_crash_is_described_before_its_env_is_closed_and_the_connection_is_kept():
    with running_server(GatewayEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create", json={"data_idx": 0}).json()["id"]
        crash = http.post("/step", json={"id": sid, "action": "java"})
        assert crash.status_code == 500
        assert crash.json()["error"] == (
            "gateway env crashed: GatewayError: java.lang.IllegalStateException: no task loaded; "
            f"session {sid} closed"
        )
        time.sleep(0.2)  # time for a server that drops the connection to have dropped it
        after = http.get("/info")
        assert after.status_code == 200
        assert after.extensions["network_stream"] is crash.extensions["network_stream"]


def test_a_bug_in_the_kit_is_a_json_500_that_keeps_the_connection():
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/bug")
    async def bug() -> None:
        raise RuntimeError("a kit bug")

    with running_server(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        first = http.get("/bug")
        assert first.status_code == 500 and first.json() == {"error": "internal server error: RuntimeError"}
        time.sleep(0.2)
        second = http.get("/bug")
        assert second.status_code == 500
        assert second.extensions["network_stream"] is first.extensions["network_stream"]


class TargetEnv(CounterEnv):
    """``POST /create {"target": n}`` starts a task with that target."""

    name: ClassVar[str] = "target"

    def create(self, /, target: Any = None, **_ignored: Any) -> str | None:
        if target is None:
            return None
        if not isinstance(target, int):
            raise TypeError(f"target must be an integer, got {type(target).__name__}")
        if target < 1:
            raise ValueError(f"target must be at least 1, got {target}")
        self.target, self.total = target, 0
        return f"Target {target}."


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"target": "three"}, "TypeError: target must be an integer"),
        ({"target": 0}, "ValueError: target must be"),
    ],
)
def test_create_fields_the_env_rejects_are_422_and_free_the_slot(body, message):
    with running_server(TargetEnv, max_sessions=1) as url, httpx.Client(base_url=url, timeout=30) as http:
        closed_before = TargetEnv.closed
        refused = http.post("/create", json=body)
        assert refused.status_code == 422 and message in refused.json()["error"]
        assert http.get("/info").json()["live_sessions"] == 0 and TargetEnv.closed == closed_before + 1
        sid = http.post("/create", json={"target": 3, "self": 1}).json()["id"]  # "self" is just another field
        # a create that starts a task counts as a reset
        assert http.get("/target", params={"id": sid}).json() == 3
        assert http.post("/step", json={"id": sid, "action": "add 3"}).json()["done"] is True


def test_a_create_field_named_self_is_ignored(http):
    created = http.post("/counter/create", json={"self": 1})
    assert created.status_code == 200
    http.post("/counter/close", json={"id": created.json()["id"]})


def test_queries_before_the_first_reset_are_409_and_keep_the_session(http):
    sid = http.post("/counter/create").json()["id"]
    try:
        early = http.get("/counter/target", params={"id": sid})
        assert early.status_code == 409 and "reset" in early.json()["error"]
        http.post("/counter/reset", json={"id": sid, "data_idx": 2})
        assert http.get("/counter/target", params={"id": sid}).json() == 3
    finally:
        http.post("/counter/close", json={"id": sid})


class OpenQueryEnv(CounterEnv):
    name: ClassVar[str] = "open_query"
    wire: ClassVar[Wire] = Wire(queries={"target": "target_value"}, queries_before_reset=frozenset({"target"}))


def test_an_env_may_answer_a_query_before_the_first_reset():
    with running_server(OpenQueryEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create").json()["id"]
        assert http.get("/target", params={"id": sid}).json() == 0


def test_starting_a_server_on_a_port_another_server_holds_fails():
    from agentenv.server.launcher import ServerProcesses

    with running_server(CounterEnv) as url:  # answers /health as a counter server would
        port = int(url.rsplit(":", 1)[1])
        with pytest.raises(RuntimeError, match=f"port {port} on 127.0.0.1 already serves counter \\(an agentenv "
                                               "server\\): use it as it is, stop it, or give --port"):
            ServerProcesses(["counter"], ports={"counter": port}, startup_timeout_s=30).start()
        with pytest.raises(RuntimeError, match=f"port {port} on 127.0.0.1 already serves counter \\(an agentenv "
                                               "server\\): stop it, or give --port"):  # not the env asked for
            ServerProcesses(["guess"], ports={"guess": port}, startup_timeout_s=30).start()
    with socket.create_server(("127.0.0.1", 0)) as other:  # something else holds the port
        port = other.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"port {port} on 127.0.0.1 is already in use: stop what listens"):
            ServerProcesses(["counter"], ports={"counter": port}, startup_timeout_s=30).start()


def test_a_server_that_exits_while_starting_is_not_blamed_on_its_port(capfd):
    """Every exit at start-up was "is port N already in use?", with the port free (a missing dependency,
    a process or file limit): the server's own error, printed above, says why."""
    from agentenv.server.launcher import CannotServe, ServerProcesses
    from agentenv.testing import free_port

    port = free_port()
    with pytest.raises(CannotServe, match="server 'maze' exited with status 2 while starting: its own error is above"):
        ServerProcesses(["maze"], ports={"maze": port}, extra_args=["--max-sessions", "0"], startup_timeout_s=60).start()
    assert "--max-sessions: must be at least 1" in capfd.readouterr().err


def test_serve_refuses_a_blank_token_and_a_host_it_cannot_resolve():
    """A blank --token was taken (for --host 0.0.0.0 too: every client then refused), and a host that does
    not resolve printed the resolver's own error, not the hint meant for it."""
    import subprocess
    import sys

    from agentenv.testing import free_port

    for argv, message in [
        (["--token", " "], "error: the token is blank: give one, or none for a loopback server open to its host's users"),
        (["--host", "0.0.0.0", "--token", " "], "error: the token is blank"),
        (["--host", "nosuch.invalid"], "error: cannot resolve host 'nosuch.invalid': give --host 127.0.0.1"),
    ]:
        command = [sys.executable, "-m", "agentenv.cli", "serve", "maze", "--port", str(free_port()), *argv]
        try:  # a server that starts would serve until stopped
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"{argv}: it served") from exc
        assert done.returncode == 1 and done.stderr.startswith(message), done.stderr


def test_servers_started_on_an_ipv6_loopback_are_reached_there():
    """`up --host ::1` failed: the URLs were built without brackets (``http://::1:47260``)."""
    from agentenv.client import EnvClient
    from agentenv.server.launcher import ServerProcesses, free_ports

    port = free_ports(1, "::1")[0]
    with ServerProcesses(["lmrlgym"], host="::1", ports={"lmrlgym": port}, startup_timeout_s=60) as urls:
        assert urls == {"lmrlgym": f"http://[::1]:{port}"}
        with EnvClient("maze", urls["lmrlgym"]) as client:
            assert client.info()["env"] == "maze"


def test_ports_drawn_together_are_distinct_and_free():
    from agentenv.server.launcher import free_ports

    for _ in range(200):  # one at a time, the kernel handed the same just-freed port to two servers (CI)
        ports = free_ports(12)
        assert len(set(ports)) == 12
    for port in ports:
        socket.create_server(("127.0.0.1", port)).close()


def test_health_names_the_server_process():
    with running_server(CounterEnv) as url:
        assert httpx.get(f"{url}/health").json() == {"status": "ok", "env": "counter", "pid": os.getpid()}


def test_up_forwards_ttl_and_hands_the_token_over_off_the_command_line(monkeypatch):
    import signal

    from agentenv import cli
    from agentenv.server import launcher

    started: dict[str, Any] = {}

    class Started(Exception):
        pass

    class FakeProcesses:
        def __init__(self, names: list[str], **kwargs: Any) -> None:
            started.update(kwargs, names=names)

        def start(self) -> None:
            raise Started

    monkeypatch.setattr(launcher, "ServerProcesses", FakeProcesses)
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    with pytest.raises(Started):
        cli.main(["--debug", "up", "counter", "--ttl", "30", "--token", "s3cret"])  # --debug: the exception itself
    assert started["token"] == "s3cret" and "s3cret" not in started["extra_args"]
    assert started["extra_args"][started["extra_args"].index("--ttl") + 1] == "30.0"


class ToolStyleEnv(CounterEnv):
    """An "env_idx" family env that speaks like AgentGym's tool envs: ``/create`` answers a bare int and
    ``/reset {env_idx, id}`` names the task with ``id`` and answers the observation string."""

    name: ClassVar[str] = "tool_style"
    wire: ClassVar[Wire] = Wire(family="env_idx", reset_field="id", reset_answer="observation")


def test_an_env_idx_family_env_speaks_agentgyms_form_beside_the_uniform_one():
    with running_server(ToolStyleEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create", json={"id": 3}).json()
        assert isinstance(sid, int)
        # AgentGym's form: env_idx names the session, id the task; the answer is the observation itself
        assert http.post("/reset", json={"env_idx": sid, "id": 3}).json() == "Target 4."
        step = http.post("/step", json={"env_idx": sid, "action": "add 4"}).json()
        assert step["done"] is True and step["reward"] == 1.0 and step["terminated"] and not step["truncated"]
        assert http.get("/observation", params={"env_idx": sid}).json() == "Total 4 of 4."
        # the uniform form on the same server: id names the session, data_idx the task, answers are objects
        with EnvClient("tool_style", url) as client, client.session(data_idx=2) as session:
            assert session.reset(2).observation == "Target 3."
            assert session.step("add 3").success is True
        assert http.post("/close", json={"env_idx": sid}).json()["closed"] is True


def test_the_root_answers_and_queries_take_get_and_post(http):
    assert http.get("/").json() == "This is environment counter."
    sid = http.post("/counter/create", json={"data_idx": 2}).json()["id"]
    try:
        assert http.get("/counter/target", params={"id": sid}).json() == 3
        assert http.post("/counter/target", json={"id": sid}).json() == 3  # AgentGym's POST form (BabyAI's render)
        refused = http.post("/counter/target", json={"id": sid, "extra": 1})  # the method takes no argument
        assert refused.status_code == 422
        assert refused.json()["error"] == "counter's target query: got an unexpected keyword argument 'extra'"
        # the session lives on (a mistyped argument of BabyAI's /render ended it)
        assert http.get("/counter/target", params={"id": sid}).json() == 3
    finally:
        http.post("/counter/close", json={"id": sid})


class StallingEnv(CounterEnv):
    """``stall`` waits on a child process (as an env waits on its JVM) that never answers; closing the env
    ends the child, which ends the wait."""

    name: ClassVar[str] = "stalling"

    def __init__(self) -> None:
        import subprocess

        super().__init__()
        self.child = subprocess.Popen(["sleep", "600"], stdout=subprocess.PIPE)

    def step(self, action: str) -> StepResult:
        if action == "stall":
            self.child.stdout.read()  # blocks until the child is gone
            return StepResult("The child answered.")
        return super().step(action)

    def close(self) -> None:
        self.child.kill()
        self.child.wait()


def test_a_stalled_call_answers_504_within_its_deadline_and_its_process_is_gone():
    import psutil

    with running_server(StallingEnv, deadline_s=0.5, max_sessions=1) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create", json={"data_idx": 0}).json()["id"]
        child = max(psutil.Process().children(recursive=True), key=lambda p: p.create_time())
        started = time.monotonic()
        stalled = http.post("/step", json={"id": sid, "action": "stall"})
        assert stalled.status_code == 504 and time.monotonic() - started < 5
        assert "took over 0.5 s" in stalled.json()["error"]
        child.wait(timeout=10)  # the child the call waited on was ended
        assert not child.is_running()
        gone = http.post("/step", json={"id": sid, "action": "add 1"})
        assert gone.status_code == 404 and "deadline" in gone.json()["error"]
        deadline = time.monotonic() + 10  # its place is free once the stuck call has returned
        while (created := http.post("/create", json={})).status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert created.status_code == 200


def test_a_client_gone_before_its_body_came_is_no_internal_error(server, caplog):
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 50\r\n\r\n{")
        time.sleep(0.3)  # the route is reading the body
    with httpx.Client(base_url=server, timeout=30) as http:  # the server goes on, and has had time to log
        assert http.get("/health").status_code == 200
    time.sleep(0.3)
    assert "internal error" not in caplog.text


def test_capacity_counts_a_timed_out_session_until_its_call_returns():
    release = threading.Event()

    class Hanging(CounterEnv):
        name: ClassVar[str] = "hanging"

        def step(self, action: str) -> StepResult:
            release.wait(30)  # not ended by close: the call holds its thread until released
            return StepResult("Released.")

    with running_server(Hanging, deadline_s=0.3, max_sessions=1) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create", json={"data_idx": 0}).json()["id"]
        assert http.post("/step", json={"id": sid, "action": "wait"}).status_code == 504
        full = http.post("/create", json={})  # its thread is still held
        assert full.status_code == 429 and "1 of them ended past the deadline, still freeing" in full.json()["error"]
        info = http.get("/info").json()  # /info said 0 live sessions while creates were refused as full
        assert (info["live_sessions"], info["ending_sessions"], info["max_sessions"]) == (0, 1, 1)
        release.set()
        deadline = time.monotonic() + 10
        while (created := http.post("/create", json={})).status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert created.status_code == 200 and http.get("/info").json()["ending_sessions"] == 0


def test_a_call_its_session_was_closed_under_is_no_crash(caplog):
    """A server closes a session whose call ran past its deadline while the call still runs: the call's
    end (an error the close caused, or an answer nobody reads) is no env crash, and is logged as none."""
    from agentenv.protocol import SessionNotFound
    from agentenv.session import LocalSession

    class ClosedUnder(CounterEnv):
        name: ClassVar[str] = "closed_under"
        session: ClassVar[LocalSession | None] = None

        def step(self, action: str) -> StepResult:
            type(self).session.close()  # as the server's close, from its own thread, lands mid-call
            if action == "fail":
                raise RuntimeError("the JVM went away")
            return StepResult("An answer nobody reads.")

    for action in ("fail", "answer"):
        with LocalSession(ClosedUnder) as session:
            ClosedUnder.session = session
            session.reset(0)
            with caplog.at_level("ERROR"), pytest.raises(SessionNotFound, match="was closed while a call ran"):
                session.step(action)
    assert "crashed" not in caplog.text


def test_session_ids_after_a_restart_never_equal_ids_before_it():
    with running_server(CounterEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        before = [http.post("/create", json={}).json()["id"] for _ in range(3)]
    with running_server(CounterEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        after = [http.post("/create", json={}).json()["id"] for _ in range(3)]
        stale = http.post("/step", json={"id": before[0], "action": "add 1"})
        assert stale.status_code == 404
    assert min(after) > max(before) and after == sorted(after) and all(i < 2**53 for i in after)


def test_an_idle_client_keeps_its_session_until_a_full_server_needs_the_place():
    """AgentGym's trainers hold their env clients idle through a training epoch.  Time scaled down: the
    TTL is a day by default, a full server makes room by closing the least recently used session idle
    longer than --evict-idle, and a client coming back to a closed session is told why."""
    with running_server(CounterEnv, max_sessions=2, ttl_s=30, evict_idle_s=0.5) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        trainer = http.post("/create", json={"data_idx": 1}).json()["id"]
        time.sleep(1.0)  # idle past --evict-idle: kept, the server is not full
        assert http.post("/step", json={"id": trainer, "action": "add 1"}).status_code == 200
        other = http.post("/create", json={"data_idx": 1}).json()["id"]
        time.sleep(1.0)
        http.post("/step", json={"id": other, "action": "add 1"})
        time.sleep(0.7)  # both idle past --evict-idle now: the trainer 1.7 s, the other 0.7 s
        newcomer = http.post("/create", json={})
        assert newcomer.status_code == 200  # the full server closed the least recently used session for it
        evicted = http.post("/step", json={"id": trainer, "action": "add 1"})
        assert evicted.status_code == 404 and "idle" in evicted.json()["error"]
        assert "create a new session" in evicted.json()["error"]
        assert http.post("/step", json={"id": other, "action": "add 1"}).status_code == 200


def test_an_idle_session_past_the_ttl_is_reaped_and_its_id_says_so():
    with running_server(CounterEnv, ttl_s=0.3) as url, httpx.Client(base_url=url, timeout=30) as http:
        sid = http.post("/create", json={}).json()["id"]
        deadline = time.monotonic() + 10
        while http.get("/info").json()["live_sessions"] and time.monotonic() < deadline:
            time.sleep(0.05)
        reaped = http.post("/reset", json={"id": sid, "data_idx": 1})
        assert reaped.status_code == 404 and "idle longer than 0.3 s" in reaped.json()["error"]


def test_a_body_the_json_parser_rejects_is_422_after_the_token_check():
    with running_server(CounterEnv, token="sesame") as url:
        json_type = {"content-type": "application/json"}
        assert httpx.post(f"{url}/step", content=b"\xff", headers=json_type).status_code == 401
        parsed = httpx.post(f"{url}/step", content=b"\xff", headers=json_type | {"Authorization": "Bearer sesame"})
        assert parsed.status_code == 422 and parsed.json()["error"].startswith("malformed request")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "counter", "--port", "99999"], "a port is at most 65535"),
        (["serve", "counter", "--max-sessions", "0"], "must be at least 1"),
        (["serve", "counter", "--ttl", "0"], "must be more than 0 seconds"),
        (["serve", "counter", "--deadline", "-1"], "must be more than 0 seconds"),
        (["up", "counter", "--port", "counter"], "takes NAME=PORT"),
    ],
)
def test_serve_options_are_checked(argv, message, capsys):
    from agentenv.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.fixture(scope="module")
def body_route_server():
    """One endpoint twice: served by :class:`BodyRoute` (``/lean``) and by FastAPI itself (``/plain``)."""
    app = FastAPI()
    install_error_handlers(app)
    for prefix, route_class in (("/lean", BodyRoute), ("/plain", APIRouter().route_class)):
        router = APIRouter(route_class=route_class)

        @router.post("/step")
        async def step(body: StepRequest) -> Any:
            return JSONResponse({"id": body.id, "env_idx": body.env_idx, "action": body.action})

        @router.post("/create")
        async def create(body: CreateRequest | None = Body(None)) -> Any:
            return JSONResponse(None if body is None else body.model_dump(exclude_none=True))

        add_routes(app, router.routes, prefix)
    with running_server(app) as url:
        yield url


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/step", b'{"id": 3, "action": "add 1"}'),
        ("/step", b'{"env_idx": 3, "action": "add 1", "extra": [1]}'),
        ("/step", b'{"id": 3}'),
        ("/step", b'{"id": "three", "action": "add 1"}'),
        ("/step", b'{"id": true, "action": "add 1"}'),
        ("/step", b'{"id": 3, "action": 7}'),
        ("/step", b"[]"),
        ("/step", b"null"),
        ("/step", b""),
        ("/step", b"{not json"),
        ("/step", b"\xff"),
        ("/create", b""),
        ("/create", b"{}"),
        ("/create", b'{"data_idx": 2}'),
        ("/create", b'{"data_idx": "two"}'),
        ("/create", b"null"),
        ("/create", b"[1]"),
    ],
)
def test_a_body_route_answers_as_fastapi_does(body_route_server, route, body):
    json_type = {"content-type": "application/json"}
    lean = httpx.post(f"{body_route_server}/lean{route}", content=body, headers=json_type)
    plain = httpx.post(f"{body_route_server}/plain{route}", content=body, headers=json_type)
    assert lean.status_code == plain.status_code
    if lean.status_code == 200:
        assert lean.json() == plain.json()
    else:  # the same fields named (pydantic's JSON and Python wording differ; a JSON error's position too)
        assert lean.status_code == 422 and lean.json()["error"].startswith("malformed request")
        assert fields_named(lean.json()["error"]) == fields_named(plain.json()["error"])


def fields_named(message: str) -> set[str]:
    """``{"body.action", ...}`` of ``malformed request: body.action: Field required; ...``, numbers left out
    (FastAPI's "There was an error parsing the body" names no field: the body)."""
    parts = message.removeprefix("malformed request: ").split("; ")
    return {".".join(p for p in part.split(":")[0].split(".") if not p.isdigit()) if ":" in part else "body"
            for part in parts}

def test_the_routes_of_every_step_come_first_and_skip_fastapis_solver_only_without_a_token():
    for token, lean in ((None, True), ("s3cret", False)):
        app = create_app(CounterEnv, token=token)
        paths = [route.path for route in app.router.routes if isinstance(route, BodyRoute)]
        assert paths[:8] == ["/counter/step", "/step", "/counter/reset", "/reset", "/counter/create", "/create",
                             "/counter/close", "/close"]
        step = next(r for r in app.router.routes if getattr(r, "path", "") == "/step")
        assert step.app.__qualname__.startswith("BodyRoute.body_app") is lean


TRACED_APPS = """
from fastapi.testclient import TestClient
from opentelemetry import trace
from agentenv.server.app import create_app
from agentenv_lmrlgym.maze import MazeEnv

class Recording(trace.TracerProvider):
    asked = 0
    def get_tracer(self, *args, **kwargs):
        Recording.asked += 1
        return trace.NoOpTracer()

before = create_app(MazeEnv)  # OpenTelemetry not set up yet
provider = Recording()
trace.set_tracer_provider(provider)
after = create_app(MazeEnv)
for app in (before, after):
    with TestClient(app) as http:
        assert http.get("/info").status_code == 200
    print(Recording.asked)
"""


def test_a_server_traces_requests_when_opentelemetry_is_set_up_as_it_is_made():
    """FastAPI's own OpenTelemetry looked the global providers up on every request; a server decides once."""
    import subprocess
    import sys

    pytest.importorskip("fastapi.telemetry")
    done = subprocess.run([sys.executable, "-c", TRACED_APPS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1"]  # the app made before the provider never asked it for a tracer


def test_a_loopback_server_answers_to_loopback_names_and_pages_only():
    """A page elsewhere could drive a tokenless loopback server: through DNS rebinding (its own name pointed at
    127.0.0.1), a cross-site form or plain-text POST, or a cross-site WebSocket (browsers send no CORS preflight
    for those)."""
    from fastapi.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from agentenv.server.auth import _host_of, _refusal, is_loopback

    assert [is_loopback(_host_of(n)) for n in ("[::1]:8000", "127.0.0.2", "10.0.0.1:80", "example.org")] == [
        True, True, False, False]
    assert is_loopback("::1") and is_loopback("localhost") and not is_loopback("0.0.0.0")
    app = create_app(CounterEnv, loopback_only=True)
    for name in ("127.0.0.1", "localhost", "127.0.0.1:8000"):  # an older TestClient cannot take [::1]
        with TestClient(app, base_url=f"http://{name}") as http:
            assert http.post("/create", json={"data_idx": 1}).status_code == 200
    with TestClient(app, base_url="http://attacker.example") as http:
        refused = http.post("/create", json={"data_idx": 1})
        assert refused.status_code == 400 and "loopback address only" in refused.json()["error"]
    with TestClient(app, base_url="http://127.0.0.1") as http:  # a page's form or plain-text fetch: no preflight
        for origin in ("http://evil.example", "null"):
            refused = http.post("/create", content='{"data_idx": 1}', headers={"origin": origin,
                                                                              "content-type": "text/plain"})
            assert refused.status_code == 403 and f"page of {origin} is refused" in refused.json()["error"]
        assert http.get("/info", headers={"origin": "http://evil.example"}).status_code == 403
        assert http.post("/create", json={"data_idx": 1}, headers={"origin": "http://localhost:3000"}).status_code == 200
        unclosed = http.post("/create", json={"data_idx": 1}, headers={"host": "[::1"})  # was a 500: urlsplit raised
        assert unclosed.status_code == 400 and "loopback address only" in unclosed.json()["error"]
        assert http.post("/create", json={"data_idx": 1}, headers={"origin": "http://[::1"}).status_code == 403
        cached = _refusal.cache_info().currsize  # answers are cached per Host and Origin, for short ones only
        assert http.post("/create", json={"data_idx": 1}, headers={"host": "a" * 600}).status_code == 400
        assert _refusal.cache_info().currsize == cached
    pytest.importorskip("openenv")
    with TestClient(app, base_url="http://127.0.0.1") as http:
        with pytest.raises(WebSocketDisconnect), http.websocket_connect(
            "ws://127.0.0.1/openenv/ws", headers={"origin": "http://evil.example"}
        ) as socket:
            socket.send_text('{"type": "reset", "data": {"data_idx": 1}}')
            socket.receive_text()
        with http.websocket_connect("ws://127.0.0.1/openenv/ws", headers={"origin": "http://localhost:3000"}) as socket:
            socket.send_text('{"type": "reset", "data": {"data_idx": 1}}')
            assert '"observation"' in socket.receive_text()


class NonFiniteEnv(CounterEnv):
    """A NaN reward after ``add 4``, an infinite score after ``add 5``; an expert move that is a tuple."""

    name: ClassVar[str] = "nonfinite"

    def step(self, action: str) -> StepResult:
        result = super().step(action)
        if action == "add 4":
            return StepResult(result.observation, float("nan"))
        return StepResult(result.observation, 0.0, score=float("inf")) if action == "add 5" else result

    def expert_action(self) -> Any:
        return ("a thought", "add 1")


def test_a_reward_that_is_no_finite_number_and_an_expert_move_of_another_type_are_env_crashes():
    """A NaN reward was answered 200 with reward null (which no client reads; in process it was NaN), and an
    expert move returned as a tuple was a 500 without a word that kept the session live."""
    with running_server(NonFiniteEnv) as url, EnvClient("nonfinite", url) as client:
        for action, message in [("add 4", "step returned reward nan"), ("add 5", "step returned score inf")]:
            with client.session(6) as session:
                with pytest.raises(EnvCrashed, match=f"nonfinite env's {message} \\(a finite number is needed\\)"):
                    session.step(action)
                with pytest.raises(SessionNotFound):
                    session.step("add 1")
        with client.session(6) as session:
            with pytest.raises(EnvCrashed, match=r"expert_action returned a tuple \(an ExpertAction with an action"):
                session.expert()
            with pytest.raises(SessionNotFound):
                session.step("add 1")
        assert client.info()["live_sessions"] == 0


def test_a_client_closes_the_sessions_it_left_open():
    """Sessions opened through a client stayed on the server after the client closed, was collected, or its
    script ended: a notebook cell that raised held the places until the idle eviction (10 minutes)."""
    import gc
    import subprocess
    import sys

    with running_server(CounterEnv) as url, httpx.Client(base_url=f"{url}/counter") as http:
        def live() -> int:
            return http.get("/info").json()["live_sessions"]

        client = EnvClient("counter", url)
        closes: list[str] = []
        client.http.event_hooks["request"].append(lambda r: closes.append(r.url.path) if r.url.path.endswith("/close") else None)
        kept = client.session(1)
        client.session(2)
        kept.close()
        assert live() == 1 and len(closes) == 1
        client.close()
        assert live() == 0
        assert len(closes) == 2  # the session closed before is not closed again (a long run closed thousands)

        def forgotten() -> None:
            EnvClient("counter", url).session(3)

        forgotten()
        gc.collect()
        assert live() == 0
        script = f"from agentenv.client import EnvClient\nEnvClient('counter', {url!r}).create(4)\n"
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
        assert live() == 0

        client = EnvClient("counter", url)
        with pytest.raises(TypeError, match="a task index is an integer, not '3'"):
            client.create("3")
        numpy = pytest.importorskip("numpy")
        sid = client.create(numpy.int64(3))  # an index drawn with numpy: the JSON encoder refused it
        assert client.reset(sid, numpy.int32(4)).observation == "Target 5."
        client.close()
        assert live() == 0


class NoInstructionEnv(CounterEnv):
    name: ClassVar[str] = "noinstruction"
    instruction: ClassVar[str] = ""


def test_a_server_is_not_made_for_an_env_whose_facts_it_cannot_serve():
    """create_app served an env with no instruction (or an empty split): /create answered 200, /info 500."""
    with pytest.raises(ValueError, match="noinstruction: instruction must be a non-empty string"):
        create_app(NoInstructionEnv)
    listed = type("ListedSplit", (CounterEnv,), {"name": "listedsplit", "splits": {"test": list(range(3))}})
    with pytest.raises(ValueError, match=r"listedsplit: splits\['test'\] must be a range \(or TaskRange\), not \[0, 1, 2\]"):
        create_app(listed)


def test_a_url_without_its_scheme_is_refused_at_once():
    """'127.0.0.1:36001' was retried four times as a connection failure, then reported unreachable."""
    with pytest.raises(ValueError, match="a server URL begins with http:// or https://, not '127.0.0.1:36001'"):
        EnvClient("counter", "127.0.0.1:36001")


def test_the_projects_runs_wait_for_a_servers_call_deadline():
    """BabyAI's calls may take 180 s, but every client of a run gave up after its 60 s timeout and retried."""
    from agentenv.controller.sources import RemoteEnv

    with running_server(CounterEnv, deadline_s=100.0) as url:
        assert EnvClient("counter", url).info()["call_deadline_s"] == 100.0
        with RemoteEnv("counter", url) as source:
            source.info()
            timeout = source.pool.clients[0].http.timeout
            assert (timeout.read, timeout.connect) == (130.0, 60.0)  # a dead host is found as soon as before


def test_a_session_opened_while_its_client_closes_is_closed_too():
    """A create in another thread during close() was added after the client had taken its list: left open."""
    from agentenv.client import ClientClosed, EnvSession

    with running_server(CounterEnv) as url, httpx.Client(base_url=f"{url}/counter") as http:
        client = EnvClient("counter", url)
        session = client.session(1)
        client._sessions.closed = True  # as close() marks it first, while another thread's create is answered
        with pytest.raises(ClientClosed, match="was closed while a session was being opened"):
            client.create(2)
        client._sessions.closed = False
        client.close()
        session.close()  # closed with its client: no RuntimeError from the closed connection pool
        assert session.closed and http.get("/info").json()["live_sessions"] == 0
        # a call through the closed client is the client's own typed error (httpx's bare RuntimeError before)
        for call in (client.info, lambda: client.session(1), lambda: EnvSession(client, 5).step("x")):
            with pytest.raises(ClientClosed, match="counter/.*: this client was closed; make a new one"):
                call()


def test_serve_from_python_refuses_what_it_cannot_do_and_leaves_the_signals_as_they_were():
    """``agentenv.server.serve`` called from a notebook: a port in use raised SystemExit (past ``except
    Exception``), a running event loop failed inside uvicorn after "serving ..." was printed, workers > 1
    off the main thread failed in ``signal``, and a supervisor left SIGTERM raising KeyboardInterrupt."""
    import asyncio
    import signal
    import threading

    from agentenv.processes import sigterm_interrupts
    from agentenv.server import CannotServe, serve

    with running_server(CounterEnv) as url:
        port = int(url.rsplit(":", 1)[1])
        with pytest.raises(CannotServe, match=f"port {port} on 127.0.0.1 already serves counter"):
            serve("maze", port=port)

    async def in_a_notebook():
        serve("maze", port=port)

    with pytest.raises(CannotServe, match="this thread runs an event loop .* agentenv.server.ServerProcesses"):
        asyncio.run(in_a_notebook())
    failed: list[BaseException] = []
    thread = threading.Thread(target=lambda: failed.extend(_raised(serve, "maze", port=port, workers=2)))
    thread.start()
    thread.join(30)
    assert isinstance(failed[0], CannotServe) and "main thread" in str(failed[0])

    before = signal.getsignal(signal.SIGTERM)
    with sigterm_interrupts():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def _raised(call, *args, **kwargs) -> list[BaseException]:
    try:
        call(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the test inspects it
        return [exc]
    return []


def test_an_env_that_cannot_start_says_why_in_one_line():
    """A missing dependency found by an env's shared set-up (Wordle's word lists, installed apart) printed
    uvicorn's 30-line traceback; every episode of a lazier env failed instead."""
    import subprocess
    import sys

    from agentenv.testing import free_port

    script = (
        "import contextlib, uvicorn\n"
        "from agentenv.server import create_app\n"
        "from test_controller_support import GuessEnv\n"
        "class Broken(GuessEnv):\n"
        "    name = 'broken'\n"
        "    @classmethod\n"
        "    @contextlib.contextmanager\n"
        "    def shared(cls):\n"
        "        raise RuntimeError('Broken needs its word lists: pip install them')\n"
        "        yield\n"
        "from agentenv.server.launcher import run_announced\n"
        f"config = uvicorn.Config(create_app([Broken]), host='127.0.0.1', port={free_port()}, log_level='warning')\n"
        "run_announced(config, 'serving /broken/ (what serve prints once it listens)')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(__file__))
    assert done.returncode == 3
    # nothing says "serving" first: it is printed once the server listens (it came before its start-up)
    assert done.stderr.splitlines() == ["error: broken cannot start: Broken needs its word lists: pip install them",
                                        "ERROR:    Application startup failed. Exiting."]


def test_clients_left_open_on_a_server_that_stopped_answering_wait_for_it_once(monkeypatch):
    """Each client's close (or its finalizer, at the end of a script) waited 5 s for a hung server in turn:
    30 s for six clients (and a client holding several sessions may wait for the first alone)."""
    import threading
    import time

    from agentenv.client import client as client_module

    monkeypatch.setattr(client_module, "SESSIONS_CLOSE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(client_module, "_silent_since", {})
    answer = threading.Event()

    class Stuck(CounterEnv):
        def close(self):
            answer.wait(30)
            super().close()

    with running_server(Stuck) as url:
        clients = [EnvClient("counter", url) for _ in range(6)]
        for client in clients:
            client.create()
        for _ in range(3):  # the first holds four: it too waits once, not once a session
            clients[0].create()
        started = time.monotonic()
        for client in clients:
            client._finalizer()  # what the end of the script runs for each
        waited = time.monotonic() - started
        answer.set()
    assert waited < 2.0, f"{waited:.1f} s: each client waited for the server"
