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
"""

from __future__ import annotations

import argparse
import asyncio
import random
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from agentenv.data.trajectory import write_json
from agentenv.envs import EnvClient
from agentenv.envs.registry import env_class, installed_envs, server_of
from agentenv.processes import interrupt_on_sigterm
from agentenv.server.launcher import ServerProcesses
from agentenv.server.testing import free_port

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


class Load:
    """Many clients stepping for a fixed time; each records its step latencies and errors."""

    def __init__(self, base: str, seconds: float) -> None:
        self.base = base
        self.seconds = seconds
        self.latencies: list[float] = []
        self.errors = 0
        self.churned = 0

    async def stepper(self, k: int, tasks: list[int], actions: list[str], stop: float) -> None:
        rng = random.Random(k)
        async with httpx.AsyncClient(base_url=self.base, timeout=60, verify=TLS) as http:
            sid = (await http.post("/create")).json()["id"]
            await http.post("/reset", json={"id": sid, "data_idx": rng.choice(tasks)})
            while time.perf_counter() < stop:
                start = time.perf_counter()
                answer = await http.post("/step", json={"id": sid, "action": rng.choice(actions)})
                self.latencies.append(time.perf_counter() - start)
                if answer.status_code != 200:
                    self.errors += 1
                elif answer.json()["done"]:
                    await http.post("/reset", json={"id": sid, "data_idx": rng.choice(tasks)})
            await http.post("/close", json={"id": sid})

    async def churner(self, tasks: list[int], stop: float) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=60, verify=TLS) as http:
            while time.perf_counter() < stop:
                sid = (await http.post("/create")).json()["id"]
                await http.post("/reset", json={"id": sid, "data_idx": random.choice(tasks)})
                if (await http.post("/close", json={"id": sid})).status_code != 200:
                    self.errors += 1
                self.churned += 1

    async def bare(self, stop: float) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=60, verify=TLS) as http:
            while time.perf_counter() < stop:
                start = time.perf_counter()
                answer = await http.post("/constant")
                self.latencies.append(time.perf_counter() - start)
                self.errors += answer.status_code != 200

    def run(self, clients: int, *, tasks: list[int] = (), actions: list[str] = (), churn: bool = False,
            bare: bool = False) -> dict[str, float]:
        async def main() -> None:
            stop = time.perf_counter() + self.seconds
            if bare:
                jobs = [self.bare(stop) for _ in range(clients)]
            else:
                jobs = [self.stepper(k, list(tasks), list(actions), stop) for k in range(clients)]
                if churn:
                    jobs.append(self.churner(list(tasks), stop))
            await asyncio.gather(*jobs)

        started = time.perf_counter()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="maze", choices=installed_envs())
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each load phase")
    parser.add_argument("--latency-steps", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    console = Console()

    env_cls = env_class(args.env)
    tasks = list(env_cls.splits["test"])
    probe = env_cls()
    probe.reset(tasks[0])
    actions = list(probe.available_actions() or [probe.expert_action().action])
    probe.close()

    results: dict[str, object] = {"env": args.env, "seconds_per_phase": args.seconds}
    interrupt_on_sigterm()  # a SIGTERM still stops the bare server below (the finally)
    bare_port = free_port()
    bare_proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "server_throughput:bare_app", "--port", str(bare_port),
         "--log-level", "warning", "--no-access-log"],
        cwd=Path(__file__).parent,
    )
    try:
        with ServerProcesses([server_of(args.env)], ports={server_of(args.env): free_port()}) as urls:
            url = urls[server_of(args.env)]
            base = f"{url}/{args.env}"
            inproc = in_process_latency(args.env, args.latency_steps)
            over_http = http_latency(args.env, url, args.latency_steps)
            results["latency_ms"] = {"in_process": 1000 * inproc, "http": 1000 * over_http,
                                     "http_adds": 1000 * (over_http - inproc)}
            results["load"] = [Load(base, args.seconds).run(n, tasks=tasks, actions=actions) for n in (1, 16, 64)]
            results["churn"] = {
                "without": Load(base, args.seconds).run(16, tasks=tasks, actions=actions),
                "with": Load(base, args.seconds).run(16, tasks=tasks, actions=actions, churn=True),
            }
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.post(f"http://127.0.0.1:{bare_port}/constant")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with httpx.Client(base_url=f"http://127.0.0.1:{bare_port}") as http:
            latencies = []
            for _ in range(args.latency_steps):
                start = time.perf_counter()
                http.post("/constant")
                latencies.append(time.perf_counter() - start)
        results["latency_ms"]["bare_fastapi_http"] = 1000 * statistics.median(latencies)
        results["bare_fastapi"] = Load(f"http://127.0.0.1:{bare_port}", args.seconds).run(64, bare=True)
    finally:
        bare_proc.terminate()
        bare_proc.wait()

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
