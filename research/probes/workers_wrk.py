"""How close to 2x does ``--workers 2`` come on two cores when the load generator is wrk (C) rather than
the benchmark's Python one?  Issue 37 asks ``benchmarks/server_throughput.py --workers 2`` for 1.6x; on two
cores shared with the load generator the ratio is bounded by the load generator's share of them.  This
runs the same phases (64 clients stepping BabyAI at random with the first test task's actions, one process
against ``--workers 2``, alternating) with wrk, a thread and a connection per session
(``wrk_sessions.lua``).  Needs ``wrk`` on the PATH (``apt-get install wrk``)::

    .venv/bin/python research/probes/workers_wrk.py --rounds 3 --out research/runs/workers_wrk.json

wrk leaves its sessions open at the end of a phase; the servers are started with room for all of them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from agentenv.registry import env_class, server_of
from agentenv.server.launcher import ServerProcesses
from agentenv.testing import free_port

SCRIPT = Path(__file__).with_name("wrk_sessions.lua")


def phase(url: str, env: str, tasks: range, actions: list[str], clients: int, seconds: float) -> dict:
    """One wrk phase against ``url``: steps/s, p99 (of every request, resets included), errors."""
    command = ["wrk", f"-t{clients}", f"-c{clients}", f"-d{seconds:g}s", "-s", str(SCRIPT), url, "--",
               f"/{env}", str(tasks.start), str(tasks.stop - 1), "|".join(actions)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    return {"steps_per_s": figures["steps"] / figures["seconds"], "p99_ms": figures["p99_ms"],
            "errors": figures["errors"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="babyai")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    env_cls = env_class(args.env)
    tasks = env_cls.splits["test"]
    if not isinstance(tasks, range) or tasks.step != 1:
        sys.exit(f"{args.env}'s test tasks are not one range of task numbers: the wrk script draws from one")
    probe = env_cls()
    probe.reset(tasks[0])
    actions = list(probe.available_actions())
    probe.close()
    group = server_of(args.env)
    room = ["--max-sessions", str(2 * args.clients * (args.rounds + 1))]
    names = ["1 process", "--workers 2"]
    figures: dict[str, list[dict]] = {name: [] for name in names}
    with ServerProcesses([group], ports={group: free_port()}, extra_args=room) as one, \
            ServerProcesses([group], ports={group: free_port()}, extra_args=[*room, "--workers", "2"]) as two:
        for _ in range(args.rounds):
            for name, urls in zip(names, (one, two), strict=True):
                figures[name].append(phase(urls[group], args.env, tasks, actions, args.clients, args.seconds))
                print(name, figures[name][-1], flush=True)
    medians = {name: statistics.median(f["steps_per_s"] for f in runs) for name, runs in figures.items()}
    ratio = medians[names[1]] / medians[names[0]]
    print(f"median steps/s: 1 process {medians[names[0]]:.0f}, --workers 2 {medians[names[1]]:.0f}; ratio {ratio:.2f}")
    if args.out:
        args.out.write_text(json.dumps({"env": args.env, "clients": args.clients, "seconds": args.seconds,
                                        "rounds": figures, "median_steps_per_s": medians, "ratio": ratio}, indent=1))


if __name__ == "__main__":
    main()
