"""This project's BabyAI server against AgentGym's own, in one run: same machine, same load generator
(:class:`server_throughput.Load`), same actions, same tasks, phases alternating.

AgentGym's server is built from a copy of AgentGym's repository (a git directory: ``--agentgym-repo``) into a
venv of its own (``--agentgym-venv``, made on first use: its ``agentenv-babyai`` package with its
dependencies from PyPI: FastAPI, uvicorn, gym, gymnasium<1, minigrid<2.5); none of its code is part of this
project.  Usage::

    python benchmarks/agentgym_babyai.py --agentgym-repo /path/to/AgentGym [--clients 1 64] [--rounds 5]

Each phase runs ``--seconds`` seconds of ``--clients`` clients stepping their own sessions with the given
actions (primitive moves by default: both servers take them), resetting to a random test task when an
episode ends.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table
from server_throughput import Load

from agentenv.data.trajectory import write_json
from agentenv.server.launcher import ServerProcesses
from agentenv.testing import free_port

PRIMITIVE = "turn left,turn right,move forward"


def build_agentgym_venv(repo: Path, venv: Path) -> None:
    """AgentGym's ``agentenv-babyai`` (its HEAD) installed with its own dependencies into ``venv``."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(repo), "archive", "HEAD", "agentenv-babyai"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"{tmp}/agentenv-babyai"], check=True)


class AgentGymServer:
    """AgentGym's BabyAI server (its ``babyai`` command: uvicorn on its app) on a free loopback port."""

    def __init__(self, venv: Path) -> None:
        self.venv = venv
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        command = [str(self.venv / "bin" / "babyai"), "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    return url
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("AgentGym's BabyAI server did not start")
            time.sleep(0.3)

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agentgym-repo", type=Path, help="a clone (or bare git directory) of AgentGym")
    parser.add_argument("--agentgym-venv", type=Path, default=Path("/tmp/agentgym-babyai-venv"))
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--actions", default=PRIMITIVE, help="comma-separated")
    parser.add_argument("--client", choices=["httpx", "raw"], default="httpx", help="the load generator's client")
    parser.add_argument("--workers", type=int, default=1, help="this project's server: agentenv serve --workers")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not (args.agentgym_venv / "bin" / "babyai").exists():
        if args.agentgym_repo is None:
            parser.error(f"no AgentGym venv at {args.agentgym_venv}: give --agentgym-repo to build it")
        build_agentgym_venv(args.agentgym_repo, args.agentgym_venv)

    tasks, actions = list(range(0, 400)), args.actions.split(",")
    ours_name = "this project" + (f" (--workers {args.workers})" if args.workers > 1 else "")
    figures: dict[str, dict[int, list[dict]]] = {ours_name: {}, "AgentGym": {}}
    extra = ["--workers", str(args.workers)] if args.workers > 1 else []
    with ServerProcesses(["babyai"], ports={"babyai": free_port()}, extra_args=extra) as urls, \
            AgentGymServer(args.agentgym_venv) as agentgym:
        bases = {ours_name: urls["babyai"] + "/babyai", "AgentGym": agentgym}
        for _ in range(args.rounds):
            for clients in args.clients:
                for name, base in bases.items():
                    run = Load(base, args.seconds, args.client).run(clients, tasks=tasks, actions=actions)
                    figures[name].setdefault(clients, []).append(run | {"load_avg_1m": os.getloadavg()[0]})

    table = Table(title=f"BabyAI servers, {args.rounds} rounds of {args.seconds:g} s alternating, actions "
                        f"{args.actions!r}, {args.client} clients, {os.cpu_count()} cores")
    for column in ("server", "clients", "steps/s (median)", "each round", "p99 (median)", "errors", "load avg"):
        table.add_column(column)
    summary: dict[str, dict] = {}
    for name, by_clients in figures.items():
        for clients, runs in by_clients.items():
            rates = [r["per_s"] for r in runs]
            summary.setdefault(name, {})[clients] = {
                "steps_per_s": statistics.median(rates), "p99_ms": statistics.median(r["p99_ms"] for r in runs),
                "errors": sum(r["errors"] for r in runs), "runs": runs}
            table.add_row(name, str(clients), f"{statistics.median(rates):.0f}", " ".join(f"{v:.0f}" for v in rates),
                          f"{summary[name][clients]['p99_ms']:.1f} ms", str(summary[name][clients]["errors"]),
                          " ".join(f"{r['load_avg_1m']:.1f}" for r in runs))
    for clients in args.clients:
        ratio = summary[ours_name][clients]["steps_per_s"] / summary["AgentGym"][clients]["steps_per_s"]
        table.add_row("ratio", str(clients), f"{ratio:.2f}", "", "", "", "")
    Console().print(table)
    if args.out:
        write_json(args.out, {"actions": actions, "seconds_per_phase": args.seconds, "client": args.client,
                              "servers": summary, "cpus": os.cpu_count()})


if __name__ == "__main__":
    main()
