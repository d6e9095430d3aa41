"""How fast is an environment server?  One run measures, on this machine:

1. the median step latency in-process vs over HTTP with one client (what HTTP adds per step), next to the
   round trip of a bare FastAPI endpoint with the same client (the floor);
2. steps/s and p99 step latency with 1, 16 and 64 concurrent clients;
3. the stepping throughput of 16 clients while one more client churns create / reset / close;
4. the requests/s of a bare FastAPI endpoint returning a constant (the framework's own ceiling),
   driven by the same load generator.

Servers run as separate processes (as deployed); each simulated client is its own keep-alive HTTP
connection.  Usage::

    python benchmarks/server_throughput.py [--env maze] [--seconds 5] [--out results.json]

``--workers N`` measures instead the server run on one process against the same server run with
``agentenv serve --workers N`` (both up at once, phases alternating, ``--rounds`` times): steps/s, p99 and
errors of ``--clients`` clients (64 by default).

``--vs-bare`` measures instead the server against the bare endpoint alone: ``--clients`` clients (64 by
default), phases alternating, ``--rounds`` times, and the ratio of the medians.

``--compare REF`` measures instead this checkout's server against the server of git revision ``REF`` (a
worktree of it, run by this venv's Python) in the same run, phases alternating: the median step over HTTP
with one client and the steps/s of 64 clients, each ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import select
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from agentenv.client import EnvClient
from agentenv.data.trajectory import write_json
from agentenv.processes import interrupt_on_sigterm
from agentenv.registry import env_class, installed_envs, server_of
from agentenv.server.launcher import ServerProcesses
from agentenv.testing import free_port

TLS = ssl.create_default_context()  # shared: building one per client costs ~20 ms each


def bare_app():
    from fastapi import FastAPI

    app = FastAPI()

    @app.post("/constant")
    async def constant() -> dict[str, str]:
        return {"observation": "constant"}

    return app


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def in_process_latency(env_name: str, steps: int) -> float:
    env = env_class(env_name)()
    task = env.splits["test"].start
    env.reset(task)
    latencies = []
    for _ in range(steps):
        action = env.expert_action().action
        start = time.perf_counter()
        result = env.step(action)
        latencies.append(time.perf_counter() - start)
        if result.done:
            env.reset(task)
    env.close()
    return statistics.median(latencies)


def http_latency(env_name: str, url: str, steps: int) -> float:
    with EnvClient(env_name, url) as client, client.session() as session:
        task = client.info()["splits"]["test"][0]
        session.reset(task)
        latencies = []
        for _ in range(steps):
            action = session.expert().action
            start = time.perf_counter()
            result = session.step(action)
            latencies.append(time.perf_counter() - start)
            if result.done:
                session.reset(task)
    return statistics.median(latencies)


class HttpxClient:
    """One simulated client: an httpx keep-alive connection (what the project's and most clients use)."""

    def __init__(self, base: str) -> None:
        self.http = httpx.AsyncClient(base_url=base, timeout=60, verify=TLS)

    async def post(self, route: str, body: object = None) -> tuple[int, object]:
        answer = await self.http.post(route, json=body)
        return answer.status_code, answer.json()

    async def close(self) -> None:
        await self.http.aclose()


class RawClient:
    """One simulated client on a bare keep-alive HTTP/1.1 connection, driven by :func:`run_raw_clients`'s
    epoll loop rather than asyncio: a client's CPU a request is about what the kernel takes to move it, so
    that a load generator on the same cores leaves them to the servers it measures.  It speaks only what
    these servers answer: a status line, headers with ``Content-Length``, a JSON body."""

    def __init__(self, base: str) -> None:
        url = httpx.URL(base)
        self.address = (url.host, url.port)
        self.head = b"POST %s%%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %%d\r\n\r\n" % (
            url.path.rstrip("/").encode(), url.host.encode())
        self.sock: socket.socket | None = None
        self.received = b""

    async def post(self, route: str, body: object = None) -> tuple[int, object]:
        data = b"" if body is None else json.dumps(body).encode()
        return await _Exchange(self, self.head % (route.encode(), len(data)) + data)

    async def close(self) -> None:
        if self.sock is not None:  # closing its socket takes it out of the epoll loop
            self.sock.close()
            self.sock = None


class _Exchange:
    """What a :class:`RawClient`'s coroutine awaits: the epoll loop sends ``request`` and resumes the
    coroutine with the answer, ``(status, JSON body)``."""

    __slots__ = ("client", "request")

    def __init__(self, client: RawClient, request: bytes) -> None:
        self.client, self.request = client, request

    def __await__(self):
        return (yield self)


def _answer(received: bytes) -> tuple[tuple[int, object], bytes] | None:
    """The first whole response in ``received`` and what follows it, or ``None`` while it is incomplete."""
    end = received.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = received[:end].lower()
    at = head.find(b"\r\ncontent-length:")
    length = int(head[at + 17:].split(b"\r\n", 1)[0]) if at >= 0 else 0
    if len(received) < end + 4 + length:
        return None
    body = received[end + 4:end + 4 + length]
    return (int(head[9:12]), json.loads(body) if length else None), received[end + 4 + length:]


def run_raw_clients(jobs: list) -> None:
    """Run coroutines whose clients are :class:`RawClient` to the end on one epoll loop: each runs until it
    awaits an exchange, its request goes out, and it resumes when the answer is in."""
    poll = select.epoll()
    waiting: dict[int, tuple[object, RawClient]] = {}

    def advance(job, answer) -> None:
        try:
            exchange = job.send(answer)
        except StopIteration:
            return
        client = exchange.client
        if client.sock is None:
            client.sock = socket.create_connection(client.address)
            client.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.sock.setblocking(False)
            poll.register(client.sock, select.EPOLLIN)
        client.sock.sendall(exchange.request)  # a small request fits the socket's buffer
        waiting[client.sock.fileno()] = (job, client)

    try:
        for job in jobs:
            advance(job, None)
        while waiting:
            for fd, _ in poll.poll():
                job, client = waiting[fd]
                data = client.sock.recv(1 << 16)
                if not data:
                    raise ConnectionError(f"the server at {client.address} closed a connection")
                client.received += data
                if (parsed := _answer(client.received)) is not None:
                    answer, client.received = parsed
                    del waiting[fd]
                    advance(job, answer)
    finally:
        for job in jobs:  # after an error: runs their clean-up (which closes their sockets)
            job.close()
        poll.close()


class Load:
    """Many clients stepping for a fixed time; each records its step latencies and errors.  ``client``:
    ``httpx`` (an httpx connection per client) or ``raw`` (:class:`RawClient`)."""

    def __init__(self, base: str, seconds: float, client: str = "httpx") -> None:
        self.base = base
        self.seconds = seconds
        self.client = {"httpx": HttpxClient, "raw": RawClient}[client]
        self.latencies: list[float] = []
        self.errors = 0
        self.churned = 0

    async def stepper(self, k: int, tasks: list[int], actions: list[str], stop: float) -> None:
        rng = random.Random(k)
        http = self.client(self.base)
        try:
            _, created = await http.post("/create", {})
            sid = created if isinstance(created, int) else created["id"]
            await http.post("/reset", {"id": sid, "data_idx": rng.choice(tasks)})
            while time.perf_counter() < stop:
                start = time.perf_counter()
                status, answer = await http.post("/step", {"id": sid, "action": rng.choice(actions)})
                self.latencies.append(time.perf_counter() - start)
                if status != 200 or "error" in answer:  # AgentGym's servers answer errors 200 {"error": ...}
                    self.errors += 1
                elif answer["done"]:
                    await http.post("/reset", {"id": sid, "data_idx": rng.choice(tasks)})
            await http.post("/close", {"id": sid})
        finally:
            await http.close()

    async def churner(self, tasks: list[int], stop: float) -> None:
        http = self.client(self.base)
        try:
            while time.perf_counter() < stop:
                _, created = await http.post("/create", {})
                sid = created if isinstance(created, int) else created["id"]
                await http.post("/reset", {"id": sid, "data_idx": random.choice(tasks)})
                if (await http.post("/close", {"id": sid}))[0] != 200:
                    self.errors += 1
                self.churned += 1
        finally:
            await http.close()

    async def bare(self, stop: float) -> None:
        http = self.client(self.base)
        try:
            while time.perf_counter() < stop:
                start = time.perf_counter()
                status, _ = await http.post("/constant")
                self.latencies.append(time.perf_counter() - start)
                self.errors += status != 200
        finally:
            await http.close()

    def run(self, clients: int, *, tasks: list[int] = (), actions: list[str] = (), churn: bool = False,
            bare: bool = False) -> dict[str, float]:
        started = time.perf_counter()
        stop = started + self.seconds
        if bare:
            jobs = [self.bare(stop) for _ in range(clients)]
        else:
            jobs = [self.stepper(k, list(tasks), list(actions), stop) for k in range(clients)]
            if churn:
                jobs.append(self.churner(list(tasks), stop))
        if self.client is RawClient:
            run_raw_clients(jobs)
        else:
            async def main() -> None:
                await asyncio.gather(*jobs)

            asyncio.run(main())
        elapsed = time.perf_counter() - started
        return {
            "clients": clients,
            "per_s": len(self.latencies) / elapsed,
            "p50_ms": 1000 * percentile(self.latencies, 0.50),
            "p99_ms": 1000 * percentile(self.latencies, 0.99),
            "errors": self.errors,
            "churned_sessions": self.churned,
        }


def raw_http_latency(base: str, task: int, actions: list[str], steps: int) -> float:
    """Median ``/step`` round trip with one keep-alive httpx client (the same client for any server)."""
    with httpx.Client(base_url=base, timeout=60) as http:
        created = http.post("/create", json={}).json()
        sid = created if isinstance(created, int) else created["id"]
        http.post("/reset", json={"id": sid, "data_idx": task})
        latencies = []
        for i in range(steps):
            start = time.perf_counter()
            answer = http.post("/step", json={"id": sid, "action": actions[i % len(actions)]}).json()
            latencies.append(time.perf_counter() - start)
            if answer["done"]:
                http.post("/reset", json={"id": sid, "data_idx": task})
        http.post("/close", json={"id": sid})
    return statistics.median(latencies)


@contextmanager
def server_of_revision(ref: str, env: str, port: int):
    """The env's server as git revision ``ref`` has it: a worktree of it, its packages first on the path."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="agentenv-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(tree), ref], check=True,
                       capture_output=True)
        try:
            packages = [str(p) for p in sorted(tree.glob("agentenv*")) if (p / "pyproject.toml").exists()]
            environ = os.environ | {"PYTHONPATH": os.pathsep.join(packages)}
            group = server_of(env)
            proc = subprocess.Popen([sys.executable, "-m", "agentenv.cli", "serve", group, "--port", str(port)],
                                    env=environ, cwd=tree)
            try:
                url = f"http://127.0.0.1:{port}"
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if httpx.get(f"{url}/{env}/health", timeout=2).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"the server of {ref} did not start")
                    time.sleep(0.2)
                yield url
            finally:
                proc.terminate()
                proc.wait(30)
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], capture_output=True)


def compare(args: argparse.Namespace, tasks: list[int], actions: list[str], console: Console) -> None:
    """This checkout's server against revision ``args.compare``'s, phases alternating."""
    group = server_of(args.env)
    figures: dict[str, dict[str, list[float]]] = {name: {"http_ms": [], "steps_per_s": [], "p99_ms": [], "errors": []}
                                                  for name in ("this checkout", args.compare)}
    with ServerProcesses([group], ports={group: free_port()}) as urls, \
            server_of_revision(args.compare, args.env, free_port()) as old_url:
        bases = {"this checkout": f"{urls[group]}/{args.env}", args.compare: f"{old_url}/{args.env}"}
        for _ in range(args.rounds):
            for name, base in bases.items():
                figures[name]["http_ms"].append(1000 * raw_http_latency(base, tasks[0], actions, args.latency_steps))
                load = Load(base, args.seconds, args.client).run(64, tasks=tasks, actions=actions)
                figures[name]["steps_per_s"].append(load["per_s"])
                figures[name]["p99_ms"].append(load["p99_ms"])
                figures[name]["errors"].append(load["errors"])
    table = Table(title=f"{args.env} server: this checkout against {args.compare} ({args.rounds} rounds, alternating)")
    for column in ("server", "median step over HTTP, 1 client", "64 clients", "p99, 64 clients", "errors"):
        table.add_column(column)
    summary = {}
    for name, f in figures.items():
        summary[name] = {k: statistics.median(v) for k, v in f.items()} | {"runs": f}
        table.add_row(name, f"{summary[name]['http_ms']:.3f} ms", f"{summary[name]['steps_per_s']:.0f} steps/s",
                      f"{summary[name]['p99_ms']:.0f} ms", f"{sum(f['errors']):.0f}")
    new, old = summary["this checkout"], summary[args.compare]
    table.add_row("ratio", f"{new['http_ms'] / old['http_ms']:.3f}", f"{new['steps_per_s'] / old['steps_per_s']:.3f}", "", "")
    console.print(table)
    if args.out:
        write_json(args.out, {"env": args.env, "baseline": args.compare, "servers": summary})


def report_rounds(args: argparse.Namespace, figures: dict[str, list[dict[str, float]]], what: str, rate_key: str,
                  unit: str, ratio_of: tuple[str, str], extra: dict[str, object], console: Console) -> None:
    """Each server's alternating rounds as a table (median rate and p99, each round's rate, errors, load), the
    ratio of the medians of ``ratio_of`` (numerator, denominator), and the JSON of ``--out``."""
    table = Table(title=f"{what} ({args.rounds} rounds of {args.seconds:g} s, alternating; {os.cpu_count()} cores)")
    for column in ("server", f"{unit} (median)", "each round", "p99 (median)", "errors", "load avg"):
        table.add_column(column)
    summary: dict[str, dict[str, object]] = {}
    for name, runs in figures.items():
        rates = [r["per_s"] for r in runs]
        p99, errors = statistics.median(r["p99_ms"] for r in runs), sum(r["errors"] for r in runs)
        summary[name] = {rate_key: statistics.median(rates), "p99_ms": p99, "errors": errors, "runs": runs}
        table.add_row(name, f"{statistics.median(rates):.0f}", " ".join(f"{v:.0f}" for v in rates), f"{p99:.0f} ms",
                      str(errors), " ".join(f"{r['load_avg_1m']:.1f}" for r in runs))
    console.print(table)
    ratio = summary[ratio_of[0]][rate_key] / summary[ratio_of[1]][rate_key]
    console.print(f"ratio {ratio_of[0]} / {ratio_of[1]}: {ratio:.2f}")
    if args.out:
        write_json(args.out, {"env": args.env, "clients": args.clients, **extra, "seconds_per_phase": args.seconds,
                              "servers": summary, "ratio": ratio, "cpus": os.cpu_count()})


def compare_workers(args: argparse.Namespace, tasks: list[int], actions: list[str], console: Console) -> None:
    """One process against ``args.workers`` processes on one port, phases alternating."""
    group = server_of(args.env)
    names = ["1 process", f"--workers {args.workers}"]
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with ServerProcesses([group], ports={group: free_port()}) as one, \
            ServerProcesses([group], ports={group: free_port()}, extra_args=["--workers", str(args.workers)]) as many:
        bases = dict(zip(names, (f"{one[group]}/{args.env}", f"{many[group]}/{args.env}"), strict=True))
        for _ in range(args.rounds):
            for name, base in bases.items():
                figures[name].append(Load(base, args.seconds, args.client).run(args.clients, tasks=tasks, actions=actions)
                                     | {"load_avg_1m": os.getloadavg()[0]})
    report_rounds(args, figures, f"{args.env} server, {args.clients} clients: 1 process against --workers "
                  f"{args.workers}", "steps_per_s", "steps/s", (names[1], names[0]), {"workers": args.workers}, console)


@contextmanager
def bare_server():
    """The bare FastAPI endpoint in a uvicorn process of its own (as ``agentenv serve`` runs a server); its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "server_throughput:bare_app", "--port", str(port),
         "--log-level", "warning", "--no-access-log"],
        cwd=Path(__file__).parent,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.post(f"{url}/constant")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the bare endpoint's server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait()


def compare_bare(args: argparse.Namespace, tasks: list[int], actions: list[str], console: Console) -> None:
    """The env's server against the bare endpoint, ``args.clients`` clients, phases alternating."""
    group = server_of(args.env)
    names = [f"{args.env} /step", "bare endpoint"]
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with ServerProcesses([group], ports={group: free_port()}) as urls, bare_server() as bare_url:
        for _ in range(args.rounds):
            figures[names[0]].append(Load(f"{urls[group]}/{args.env}", args.seconds, args.client)
                                     .run(args.clients, tasks=tasks, actions=actions) | {"load_avg_1m": os.getloadavg()[0]})
            figures[names[1]].append(Load(bare_url, args.seconds, args.client).run(args.clients, bare=True)
                                     | {"load_avg_1m": os.getloadavg()[0]})
    report_rounds(args, figures, f"{args.env} server against a bare FastAPI endpoint, {args.clients} {args.client} "
                  "clients", "per_s", "requests/s", (names[0], names[1]), {"client": args.client}, console)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="maze", choices=installed_envs())
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each load phase")
    parser.add_argument("--latency-steps", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=0, help="measure 1 process against this many workers")
    parser.add_argument("--clients", type=int, default=64, help="--workers, --vs-bare: concurrent clients")
    parser.add_argument("--client", choices=["httpx", "raw"], default="httpx",
                        help="the load generator's HTTP client: httpx, or bare keep-alive connections on one "
                        "epoll loop (a fraction of the CPU)")
    parser.add_argument("--actions", help="the actions to step with, comma-separated (default: the first test "
                        "task's available actions)")
    parser.add_argument("--vs-bare", action="store_true", help="measure the server against the bare endpoint alone")
    parser.add_argument("--compare", metavar="REF", help="measure against the server of this git revision")
    parser.add_argument("--rounds", type=int, default=3, help="--compare, --workers, --vs-bare: alternating rounds per server")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    console = Console()

    env_cls = env_class(args.env)
    tasks = list(env_cls.splits["test"])
    probe = env_cls()
    probe.reset(tasks[0])
    actions = list(probe.available_actions() or [probe.expert_action().action])
    probe.close()
    if args.actions:
        actions = args.actions.split(",")
    if args.compare:
        compare(args, tasks, actions, console)
        return
    if args.workers:
        compare_workers(args, tasks, actions, console)
        return
    if args.vs_bare:
        compare_bare(args, tasks, actions, console)
        return

    results: dict[str, object] = {"env": args.env, "seconds_per_phase": args.seconds}
    interrupt_on_sigterm()  # a SIGTERM still stops the servers below
    with bare_server() as bare_url:
        with ServerProcesses([server_of(args.env)], ports={server_of(args.env): free_port()}) as urls:
            url = urls[server_of(args.env)]
            base = f"{url}/{args.env}"
            inproc = in_process_latency(args.env, args.latency_steps)
            over_http = http_latency(args.env, url, args.latency_steps)
            results["latency_ms"] = {"in_process": 1000 * inproc, "http": 1000 * over_http,
                                     "http_adds": 1000 * (over_http - inproc)}
            results["load"] = [Load(base, args.seconds, args.client).run(n, tasks=tasks, actions=actions) for n in (1, 16, 64)]
            results["churn"] = {
                "without": Load(base, args.seconds, args.client).run(16, tasks=tasks, actions=actions),
                "with": Load(base, args.seconds, args.client).run(16, tasks=tasks, actions=actions, churn=True),
            }
        with httpx.Client(base_url=bare_url) as http:
            latencies = []
            for _ in range(args.latency_steps):
                start = time.perf_counter()
                http.post("/constant")
                latencies.append(time.perf_counter() - start)
        results["latency_ms"]["bare_fastapi_http"] = 1000 * statistics.median(latencies)
        results["bare_fastapi"] = Load(bare_url, args.seconds, args.client).run(64, bare=True)

    lat = results["latency_ms"]
    table = Table(title=f"{args.env} server: {args.seconds:.0f} s per load phase")
    for column in ("measure", "value"):
        table.add_column(column)
    table.add_row("median step, in-process", f"{lat['in_process']:.3f} ms")
    table.add_row("median step, HTTP, 1 client", f"{lat['http']:.3f} ms")
    table.add_row("HTTP adds per step", f"{lat['http_adds']:.3f} ms")
    table.add_row("bare FastAPI round trip, 1 client", f"{lat['bare_fastapi_http']:.3f} ms")
    for row in results["load"]:
        table.add_row(f"{row['clients']} clients", f"{row['per_s']:.0f} steps/s, p99 {row['p99_ms']:.1f} ms, "
                      f"{row['errors']} errors")
    churn = results["churn"]
    ratio = churn["with"]["per_s"] / churn["without"]["per_s"]
    results["churn"]["ratio"] = ratio
    table.add_row("16 clients, no churn", f"{churn['without']['per_s']:.0f} steps/s")
    table.add_row("16 clients + 1 churning", f"{churn['with']['per_s']:.0f} steps/s ({100 * ratio:.0f}%), "
                  f"{churn['with']['churned_sessions']} sessions churned")
    bare = results["bare_fastapi"]
    table.add_row("bare FastAPI, 64 clients", f"{bare['per_s']:.0f} req/s, p99 {bare['p99_ms']:.1f} ms")
    at64 = results["load"][-1]["per_s"] / bare["per_s"]
    results["ratio_64_to_bare"] = at64
    table.add_row("64 clients vs bare", f"{100 * at64:.0f}%")
    console.print(table)
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()
