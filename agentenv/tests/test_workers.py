"""A server on several processes (``--workers``): real workers on one loopback port, real clients.

Every session's answers must be its own (the observations name the session's task and count its steps),
whether a client keeps its connections alive or opens a fresh one for every request (then most requests
land on a worker that does not own the session and are forwarded); capacity, TTL, deadlines and ``/info``
hold over all workers; stopping the server leaves no process behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import httpx
import psutil
import pytest

from agentenv.client import EnvClient
from agentenv.env import Environment, ExpertAction, StepResult, Wire
from agentenv.server import limits, workers
from agentenv.server.app import create_app
from agentenv.server.launcher import ServerProcesses
from agentenv.server.workers import owner_of, serve_workers, share, worker_session_ids
from agentenv.testing import free_port


class TallyEnv(Environment):
    """Observations name the task and count the steps: ``task 7 step 3: <action>``; ``nap`` sleeps 5 s."""

    name: ClassVar[str] = "tally"
    splits: ClassVar[dict[str, range]] = {"test": range(0, 10_000)}
    max_rounds: ClassVar[int] = 1000
    instruction: ClassVar[str] = "Say anything."

    def __init__(self) -> None:
        self.task = self.steps = 0
        self.last = ""

    def reset(self, data_idx: int) -> str:
        self.task, self.steps = data_idx, 0
        self.last = f"task {data_idx} step 0"
        return self.last

    def step(self, action: str) -> StepResult:
        if action == "nap":
            time.sleep(5)
        self.steps += 1
        self.last = f"task {self.task} step {self.steps}: {action}"
        return StepResult(self.last)

    def observation(self) -> str:
        return self.last

    def expert_action(self) -> ExpertAction:
        return ExpertAction("", "say hi")


class TicketEnv(TallyEnv):
    """AgentGym's "env_idx" family: ``env_idx`` names the session, ``id`` the task (as the tool envs do)."""

    name: ClassVar[str] = "ticket"
    wire: ClassVar[Wire] = Wire(family="env_idx", reset_field="id")


@contextlib.contextmanager
def serving(envs: list[type[Environment]], workers: int = 2, **settings: object) -> Iterator[str]:
    """``serve_workers`` in a process of its own (as ``agentenv serve --workers`` runs it); on exit it is
    sent SIGTERM, and every process it started must be gone."""
    port = free_port()
    supervisor = multiprocessing.get_context("spawn").Process(
        target=serve_workers, args=(envs,), kwargs={"host": "127.0.0.1", "port": port, "workers": workers, **settings}
    )
    supervisor.start()
    url = f"http://127.0.0.1:{port}"
    tree: list[psutil.Process] = []
    try:
        _wait_healthy(url, supervisor.pid)
        tree = psutil.Process(supervisor.pid).children(recursive=True)
        assert len([p for p in tree if "resource_tracker" not in " ".join(p.cmdline())]) == workers
        yield url
    finally:
        os.kill(supervisor.pid, signal.SIGTERM)
        supervisor.join(30)
        assert supervisor.exitcode == 0
        _, alive = psutil.wait_procs(tree, timeout=10)
        assert not alive, f"left behind: {alive}"


def _wait_healthy(url: str, pid: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/health", timeout=5).json()["pid"] == pid:  # the supervisor's, from any worker
                return
        time.sleep(0.2)
    raise TimeoutError(f"no healthy server at {url}")


def test_worker_ids_name_their_worker_never_repeat_and_stay_below_2_53():
    firsts = []
    for count in (1, 2, 3, 7):
        for index in range(count):
            ids = worker_session_ids(index, count)
            taken = [next(ids) for _ in range(50)]
            assert all(owner_of(i, count) == index for i in taken)
            assert taken == sorted(set(taken)) and all(i < 2**53 for i in taken)
            firsts.append(taken[0])
    assert worker_session_ids(0, 2).__next__() > max(firsts) - 10  # they start at the time of starting
    assert [sum(share(total, i, n) for i in range(n)) for total in (0, 1, 5, 512) for n in (1, 2, 3)] == [
        total for total in (0, 1, 5, 512) for _ in (1, 2, 3)
    ]


def _play(http: httpx.Client, url: str, env: str, task: int, steps: int) -> tuple[int, list[str]]:
    """Create a session on ``task`` and step it."""
    observations = []
    sid = http.post(f"{url}/{env}/create", json={"data_idx": task}).json()["id"]
    for k in range(steps):
        answer = http.post(f"{url}/{env}/step", json={"id": sid, "action": f"say {k}"})
        assert answer.status_code == 200, answer.text
        observations.append(answer.json()["observation"])
    observations.append(http.get(f"{url}/{env}/observation", params={"id": sid}).json())
    return sid, observations


@pytest.mark.parametrize("fresh", [False, True], ids=["keep-alive", "fresh-connections"])
def test_every_answer_belongs_to_its_own_session(fresh):
    """One client's keep-alive pool for all sessions (as ``EnvClient``: a connection serves whichever session
    asks next), or a new connection for every request (as AgentGym's clients, ``requests.post``)."""
    # 16 sessions in 16 places (8 per worker): both workers own sessions whichever worker the kernel hands each
    # connection (with room to spare, all 8 keep-alive connections landed on one worker in ~1% of runs)
    with serving([TallyEnv, TicketEnv], max_sessions=16) as url, \
            httpx.Client(timeout=60, headers={"Connection": "close"} if fresh else {}) as http:
        tasks = list(range(100, 116))
        with ThreadPoolExecutor(8) as pool:
            played = list(pool.map(lambda t: _play(http, url, "tally", t, 12), tasks))
        sids = [sid for sid, _ in played]
        assert len(set(sids)) == len(sids) and {owner_of(s, 2) for s in sids} == {0, 1}
        for task, (_, observations) in zip(tasks, played, strict=True):
            expected = [f"task {task} step {k + 1}: say {k}" for k in range(12)]
            assert observations == expected + [expected[-1]]
        info = httpx.get(f"{url}/tally/info").json()
        assert (info["live_sessions"], info["max_sessions"]) == (16, 16)

        # the env_idx family: env_idx names the session, id the task, in AgentGym's bodies
        for _ in range(6):
            sid = httpx.post(f"{url}/ticket/create", json={}).json()
            assert isinstance(sid, int)
            reset = httpx.post(f"{url}/ticket/reset", json={"env_idx": sid, "id": 7})
            assert reset.status_code == 200 and reset.json()["observation"] == "task 7 step 0"
            step = httpx.post(f"{url}/ticket/step", json={"env_idx": sid, "id": 3, "action": "hi"})
            assert step.json()["observation"] == "task 7 step 1: hi"
            assert httpx.post(f"{url}/ticket/close", json={"env_idx": sid}).status_code == 200
        assert httpx.get(f"{url}/ticket/info").json()["live_sessions"] == 0

        closed = [httpx.post(f"{url}/tally/close", json={"id": s}).json() for s in sids]
        assert closed == [{"closed": True, "id": s} for s in sids]
        assert httpx.get(f"{url}/tally/info").json()["live_sessions"] == 0
        gone = httpx.post(f"{url}/tally/step", json={"id": sids[0], "action": "x"})
        assert gone.status_code == 404 and str(sids[0]) in gone.json()["error"]


def test_capacity_is_the_servers_in_total():
    with serving([TallyEnv], max_sessions=5) as url:
        with ThreadPoolExecutor(5) as pool:  # at once, on fresh connections: some land on a full worker
            created = list(pool.map(lambda _: httpx.post(f"{url}/create", json={"data_idx": 1}, timeout=60), range(5)))
        assert [c.status_code for c in created] == [200] * 5
        sids = [c.json()["id"] for c in created]
        for _ in range(4):  # whichever worker a create lands on
            full = httpx.post(f"{url}/create", json={})
            assert full.status_code == 429 and "5 tally sessions over 2 workers" in full.json()["error"]
        info = httpx.get(f"{url}/info").json()
        assert (info["live_sessions"], info["max_sessions"]) == (5, 5)
        assert httpx.post(f"{url}/close", json={"id": sids[0]}).status_code == 200
        again = [httpx.post(f"{url}/create", json={}) for _ in range(2)]
        assert [a.status_code for a in again] == [200, 429]


def _worker_socket(url: str, worker: int) -> str:
    """The unix socket worker ``worker`` of the server at ``url`` listens on (its private folder is found by
    asking each candidate's /health for a pid of this server's workers)."""
    import glob

    pids = {p.pid for p in psutil.Process(httpx.get(f"{url}/health").json()["pid"]).parent().children()}
    for path in glob.glob(os.path.join(os.environ.get("TMPDIR", "/tmp"), "agentenv-workers-*", f"{worker}.sock")):
        with contextlib.suppress(httpx.HTTPError, OSError), httpx.Client(transport=httpx.HTTPTransport(uds=path)) as http:
            if http.get("http://127.0.0.1/health").json()["pid"] in pids:
                return path
    raise AssertionError("no worker socket found")


def test_a_free_place_on_any_worker_comes_before_an_eviction():
    """Workers 0 and 1 each held an idle session, worker 2 none: a create that reached worker 0 was passed
    to worker 1, which evicted its idle session, though worker 2 had room."""
    with serving([TallyEnv], workers=3, max_sessions=3, evict_idle_s=0.5) as url, httpx.Client(timeout=60) as http:
        # one place a worker: three sessions take one on each, whichever worker each create lands on
        created = [http.post(f"{url}/create", json={"data_idx": 1}).json()["id"] for _ in range(3)]
        sids = {sid % 3: sid for sid in created}
        assert sorted(sids) == [0, 1, 2]
        assert http.post(f"{url}/close", json={"id": sids[2]}).status_code == 200
        time.sleep(1.0)  # the other two are idle past evict_idle_s
        with httpx.Client(transport=httpx.HTTPTransport(uds=_worker_socket(url, 0)), timeout=60) as worker0:
            new = worker0.post("http://127.0.0.1/create", json={"data_idx": 1}).json()["id"]
        assert new % 3 == 2
        for w in (0, 1):
            assert http.get(f"{url}/observation", params={"id": sids[w]}).status_code == 200


def test_an_idle_session_on_another_worker_is_evicted_when_every_worker_is_full():
    """Worker 1 held a session idle past --evict-idle, worker 0 a busy one: a create that reached worker 0
    was refused (429) about half the time, as only worker 0 itself could evict."""
    with serving([TallyEnv], workers=2, max_sessions=2, evict_idle_s=0.5) as url, httpx.Client(timeout=60) as http:
        created = [http.post(f"{url}/create", json={"data_idx": 1}).json()["id"] for _ in range(2)]
        sids = {sid % 2: sid for sid in created}
        assert sorted(sids) == [0, 1]
        time.sleep(1.0)  # both idle past evict_idle_s; worker 0's is then in use (a step in flight: never evicted)
        napping = threading.Thread(target=lambda: http.post(f"{url}/step", json={"id": sids[0], "action": "nap"}))
        napping.start()
        time.sleep(0.5)
        with httpx.Client(transport=httpx.HTTPTransport(uds=_worker_socket(url, 0)), timeout=60) as worker0:
            answer = worker0.post("http://127.0.0.1/create", json={"data_idx": 1})
        napping.join()
        assert answer.status_code == 200 and answer.json()["id"] % 2 == 1
        assert http.get(f"{url}/observation", params={"id": sids[1]}).status_code == 404  # the idle one went
        assert http.get(f"{url}/observation", params={"id": sids[0]}).status_code == 200


def test_deadlines_and_idle_reaping_per_worker_over_one_url():
    with serving([TallyEnv], max_sessions=2, deadline_s=0.5, ttl_s=8.0) as url, httpx.Client(timeout=60) as http:
        stuck, other = (http.post(f"{url}/create", json={"data_idx": t}).json()["id"] for t in (1, 2))
        assert {owner_of(stuck, 2), owner_of(other, 2)} == {0, 1}  # one worker each: both are full
        assert http.post(f"{url}/step", json={"id": stuck, "action": "nap"}).status_code == 504
        assert http.post(f"{url}/step", json={"id": stuck, "action": "x"}).status_code == 404
        # the stuck call holds its place until it returns (5 s): the server stays full meanwhile
        assert http.post(f"{url}/create", json={}).status_code == 429
        deadline = time.monotonic() + 60
        while http.get(f"{url}/info").json()["live_sessions"] and time.monotonic() < deadline:
            time.sleep(0.2)  # `other`, idle over the TTL, is reaped by its worker
        reaped = http.post(f"{url}/step", json={"id": other, "action": "x"})
        assert reaped.status_code == 404 and "idle longer than 8 s" in reaped.json()["error"]
        assert [http.post(f"{url}/create", json={}).status_code for _ in range(3)] == [200, 200, 429]


def test_the_token_is_checked_by_the_worker_that_answers():
    with serving([TallyEnv], token="s3cret") as url:
        headers = {"Authorization": "Bearer s3cret"}
        sids = [httpx.post(f"{url}/create", json={}, headers=headers).json()["id"] for _ in range(6)]
        for sid in sids:
            assert httpx.post(f"{url}/step", json={"id": sid, "action": "x"}).status_code == 401
            assert httpx.get(f"{url}/info").status_code == 401
            assert httpx.post(f"{url}/reset", json={"id": sid, "data_idx": 3}, headers=headers).status_code == 200


def test_a_body_too_deep_or_too_long_for_pythons_json_is_a_422_from_the_workers_too():
    with serving([TallyEnv]) as url:
        for body in ["[" * 100_000, '{"id": ' + "1" * 5000 + ', "action": "x"}']:
            answer = httpx.post(f"{url}/step", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 422 and "malformed request" in answer.json()["error"], answer.text[:200]


def test_a_body_the_router_read_is_not_read_again_by_the_app(monkeypatch):
    """A worker's router reads a body to find its session; the app's size limit takes that body from the
    scope, so a request's body is read once, and later reads get what the client sends next."""
    reads = []

    def counted(read):
        async def body_message(receive, deadline):
            reads.append(1)
            return await read(receive, deadline)
        return body_message

    monkeypatch.setattr(limits, "body_message", counted(limits.body_message))
    monkeypatch.setattr(workers, "body_message", counted(workers.body_message))
    app = create_app(TallyEnv)
    router = workers.WorkerRouter(app, 0, ["/nowhere/0", "/nowhere/1"])

    async def call(path: str, body: object) -> object:
        messages = [{"type": "http.request", "body": json.dumps(body).encode()}]

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        sent = []

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "http_version": "1.1", "method": "POST", "path": path, "raw_path": path.encode(),
                 "root_path": "", "scheme": "http", "query_string": b"", "client": ("127.0.0.1", 5000),
                 "server": ("127.0.0.1", 8000), "headers": [(b"content-type", b"application/json")]}
        await router(scope, receive, send)
        assert sent[0]["status"] == 200, sent
        return json.loads(sent[1]["body"])

    async def main() -> None:
        async with app.router.lifespan_context(app):
            sid = (await call("/create", {}))["id"]
            await call("/reset", {"id": sid, "data_idx": 7})
            reads.clear()
            assert (await call("/step", {"id": sid, "action": "hi"}))["observation"] == "task 7 step 1: hi"
            assert len(reads) == 1

            async def receive():
                return messages.pop(0) if messages else {"type": "http.disconnect"}

            for taken in (True, False):
                messages = [{"type": "http.request", "body": b"{}"}]
                scope: dict = {}
                _, replay, complete = await workers._read_body(scope, receive, 1000)
                assert complete and scope[limits.WHOLE_BODY] == b"{}"
                if taken:  # as the app's BodySizeLimit takes it
                    del scope[limits.WHOLE_BODY]
                    assert (await replay())["type"] == "http.disconnect"
                else:
                    assert (await replay())["body"] == b"{}"

    asyncio.run(main())


def test_a_port_another_server_took_with_so_reuseport_meanwhile_is_refused():
    """`serve` checks that its port is free, then its workers bind it with SO_REUSEPORT: a second server
    started at the same moment passed the check too, and the two shared the port (each with its own sessions)."""
    from agentenv.server.launcher import CannotServe

    port = free_port()
    with socket.create_server(("127.0.0.1", port), reuse_port=True):  # the other server, bound meanwhile
        with pytest.raises(CannotServe, match=rf"port {port} on 127.0.0.1 is already in use \(another server bound"):
            serve_workers([TallyEnv], host="127.0.0.1", port=port, workers=2)
    with socket.create_server(("127.0.0.1", port), reuse_port=False):  # this server's own sockets are closed
        pass


def test_a_killed_supervisors_workers_stop_and_leave_no_private_folder(tmp_path, monkeypatch):
    """SIGKILL gives the supervisor no chance to remove its folder of unix sockets: every such kill left one
    in /tmp. Its workers, which stop when it is gone, now remove it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the spawned supervisor's tempfile reads it
    port = free_port()
    supervisor = multiprocessing.get_context("spawn").Process(
        target=serve_workers, args=([TallyEnv],), kwargs={"host": "127.0.0.1", "port": port, "workers": 2}
    )
    supervisor.start()
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", supervisor.pid)
        workers = psutil.Process(supervisor.pid).children()
        assert [p.name for p in tmp_path.iterdir()][0].startswith("agentenv-workers-")
    finally:
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.join(10)
    _, alive = psutil.wait_procs(workers, timeout=20)
    assert not alive and not list(tmp_path.iterdir())


def test_agentenv_up_with_workers_serves_maze_and_wordle_on_one_port_and_stops_them_all():
    port = free_port()
    servers = ServerProcesses(["lmrlgym"], ports={"lmrlgym": port}, extra_args=["--workers", "2"])
    with servers as urls:
        url = urls["lmrlgym"]
        supervisor = psutil.Process(servers.procs["lmrlgym"].pid)
        tree = supervisor.children(recursive=True)
        listening = [c.pid for c in psutil.net_connections("tcp") if c.laddr.port == port and c.status == "LISTEN"]
        assert sorted(listening) == sorted(p.pid for p in tree if p.pid in listening) and len(listening) == 2
        errors: list[BaseException] = []

        def play(env: str, task: int) -> None:
            try:
                with EnvClient(env, url) as client, client.session(task) as session:
                    for action in ("move up", "crane", "move left", "slate", "move down") * 2:
                        if session.step(action).done:
                            break
                    assert session.detail()["data_idx"] == task
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=play, args=(env, t)) for env in ("maze", "wordle") for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert EnvClient("maze", url).info()["live_sessions"] == 0
    _, alive = psutil.wait_procs([supervisor, *tree], timeout=10)
    assert not alive


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_stops_serve_with_one_line_and_no_traceback(workers):
    """Ctrl-C on `agentenv serve` printed nothing and exited 0, and about one stop in 25 logged a 40-line
    traceback: uvicorn raises the signal again inside its event loop, where it cancelled the tasks left."""
    import subprocess
    import sys

    pytest.importorskip("agentenv_lmrlgym", reason="serves Maze (agentenv-lmrlgym)")
    for _ in range(3 if workers == 1 else 1):
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "agentenv.cli", "serve", "maze", "--port", str(port),
                                   "--workers", str(workers)], stderr=subprocess.PIPE, text=True)
        try:
            assert server.stderr.readline().startswith(f"serving /maze/ at http://127.0.0.1:{port}")
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
            server.send_signal(signal.SIGINT)
            assert server.wait(60) == 0
            assert server.stderr.read() == "stopped\n"
        finally:
            if server.poll() is None:
                server.kill()


def _recording_lifespan(events: list[str], on_startup=lambda: None):
    """An ASGI app of a lifespan alone that appends "startup" and "shutdown" to ``events``."""

    async def app(scope, receive, send):
        assert scope["type"] == "lifespan"
        await receive()
        events.append("startup")
        on_startup()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        events.append("shutdown")
        await send({"type": "lifespan.shutdown.complete"})

    return app


def test_a_server_stopped_while_it_starts_still_shuts_its_app_down():
    """A worker stopped before its start-up ended (Ctrl-C just after `serve --workers 2` answered): uvicorn
    before 0.30 returned without the app's shutdown, so sessions stayed open and one stop in five logged a
    cancelled lifespan's traceback."""
    import uvicorn

    from agentenv.server.launcher import announcing_server

    events: list[str] = []
    app = _recording_lifespan(events, on_startup=lambda: setattr(server, "should_exit", True))  # as a signal does
    server = announcing_server(uvicorn.Config(app, port=free_port(), lifespan="on", log_level="warning"), None)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and events == ["startup", "shutdown"]


def test_a_stop_signal_before_uvicorn_handles_signals_still_stops_the_server():
    """A Ctrl-C while the server's event loop was made (before uvicorn's handlers) was taken by a handler that
    did nothing: `agentenv view` stopped at once after its first line served on (10 in 10 tries)."""
    import uvicorn

    from agentenv.server.launcher import announcing_server, run_until_stopped

    events: list[str] = []
    server = announcing_server(
        uvicorn.Config(_recording_lifespan(events), port=free_port(), lifespan="on", log_level="warning"), None)
    run = server.run

    def signalled_run(sockets=None):
        os.kill(os.getpid(), signal.SIGINT)  # handled here, before uvicorn's handlers are in place
        run(sockets=sockets)

    server.run = signalled_run
    rescue = threading.Timer(20, setattr, (server, "should_exit", True))  # the old handler would serve on
    rescue.start()
    started = time.monotonic()
    try:
        run_until_stopped(server)
    finally:
        rescue.cancel()
    assert time.monotonic() - started < 15 and events == ["startup", "shutdown"]


def test_a_server_a_launcher_started_stops_without_a_word():
    """`up`, bench and the demo say when they stop their servers; each server's own "stopped" was noise."""
    import subprocess
    import sys

    pytest.importorskip("agentenv_lmrlgym", reason="serves Maze (agentenv-lmrlgym)")
    script = ("import sys\nfrom agentenv.server.launcher import ServerProcesses\n"
              "with ServerProcesses(['lmrlgym'], ports={'lmrlgym': int(sys.argv[1])}) as urls:\n    print(urls['lmrlgym'])\n")
    done = subprocess.run([sys.executable, "-c", script, str(free_port())], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("http://127.0.0.1:"), done.stderr
    assert "stopped" not in done.stderr
