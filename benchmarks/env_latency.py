"""Any installed environment's costs: construction, reset and step latency, memory per live session, and
many sessions at once on one server.

    python benchmarks/env_latency.py --env textcraft [--tasks 20] [--sessions 50] [--concurrent 20] [--out F.json]

1. **In process** (:class:`~agentenv.session.LocalSession`, the server's rules): the time to make an env
   instance, then ``--tasks`` tasks spread over the test split, each reset and played by the expert, so
   the steps are the ones an evaluation makes; median and p90 of resets and steps, and the expert's
   success.
2. **Over HTTP**, the server in its own process as ``agentenv serve`` starts it, one keep-alive client: the
   same episodes; then ``--sessions`` sessions created and reset at once, and the resident memory they add
   to the server's process tree (child processes such as a JVM or a browser included), per session.
3. **Concurrency**: ``--concurrent`` clients, each playing its own expert episodes on its own session at the
   same time for ``--seconds``; episodes finished and errors.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time

import httpx
import psutil
from rich.console import Console
from rich.table import Table

from agentenv.data.trajectory import write_json
from agentenv.react import format_react
from agentenv.registry import env_class, installed_envs, server_of
from agentenv.server.launcher import ServerProcesses
from agentenv.session import LocalSession
from agentenv.testing import free_port, sample_tasks


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "median_ms": 1000 * statistics.median(ordered) if ordered else float("nan"),
        "p90_ms": 1000 * ordered[int(0.9 * (len(ordered) - 1))] if ordered else float("nan"),
    }


def play(session, idx: int, rounds: int, resets: list[float], steps: list[float]) -> bool:
    """One expert episode on a session (local or HTTP); returns whether it succeeded."""
    t = time.perf_counter()
    session.reset(idx)
    resets.append(time.perf_counter() - t)
    answer = None
    for _ in range(rounds):
        move = session.expert()
        t = time.perf_counter()
        answer = session.step(format_react(move.thought, move.action))
        steps.append(time.perf_counter() - t)
        if answer.done:
            break
    return bool(answer is not None and answer.success)


def in_process(env_cls, tasks: list[int]) -> dict[str, object]:
    with contextlib.ExitStack() as stack:
        t = time.perf_counter()
        stack.enter_context(env_cls.shared())  # what every session shares (an index, bundled sites), once
        shared = time.perf_counter() - t
        t = time.perf_counter()
        session = stack.enter_context(LocalSession(env_cls))
        made = time.perf_counter() - t
        resets: list[float] = []
        steps: list[float] = []
        rounds = env_cls.expert_max_rounds or env_cls.max_rounds
        solved = sum(play(session, idx, rounds, resets, steps) for idx in tasks)
    return {
        "shared_setup_ms": 1000 * shared, "make_ms": 1000 * made, "reset": summary(resets), "step": summary(steps),
        "expert_success": solved / len(tasks),
    }


def tree_memory(pid: int) -> tuple[int, int]:
    """``(RSS, PSS)`` of a process and all its descendants: PSS splits the pages several processes share (a
    browser's renderers) between them, where RSS counts them once per process."""
    root = psutil.Process(pid)
    rss = pss = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            info = proc.memory_full_info()
        except psutil.Error:
            continue
        rss, pss = rss + info.rss, pss + getattr(info, "pss", info.rss)
    return rss, pss


def over_http(env_cls, url: str, pid: int, tasks: list[int], sessions: int) -> dict[str, object]:
    from agentenv.client import EnvClient

    rounds = env_cls.expert_max_rounds or env_cls.max_rounds
    resets: list[float] = []
    steps: list[float] = []
    with EnvClient(env_cls.name, url) as client:
        with client.session() as session:
            solved = sum(play(session, idx, rounds, resets, steps) for idx in tasks)
        before = tree_memory(pid)
        t = time.perf_counter()
        live = []
        try:
            for i in range(sessions):
                live.append(client.session())
                live[-1].reset(tasks[i % len(tasks)])
            opened = time.perf_counter() - t
            after = tree_memory(pid)
        finally:
            for session in live:
                session.close()
    return {
        "reset": summary(resets),
        "step": summary(steps),
        "expert_success": solved / len(tasks),
        "sessions": sessions,
        "open_and_reset_s": opened,
        "memory_per_session_mib": (after[0] - before[0]) / max(sessions, 1) / 2**20,
        "memory_per_session_pss_mib": (after[1] - before[1]) / max(sessions, 1) / 2**20,
    }


def concurrent(env_cls, url: str, tasks: list[int], clients: int, seconds: float) -> dict[str, object]:
    from agentenv.client import EnvClient

    rounds = env_cls.expert_max_rounds or env_cls.max_rounds
    finished, errors, lock = [0], [], threading.Lock()
    stop = time.monotonic() + seconds

    def worker(k: int) -> None:
        try:
            with EnvClient(env_cls.name, url, timeout=300) as client, client.session() as session:
                i = k
                while time.monotonic() < stop:
                    play(session, tasks[i % len(tasks)], rounds, [], [])
                    i += clients
                    with lock:
                        finished[0] += 1
        except Exception as exc:  # counted, not raised: the figure is how many fail
            with lock:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"clients": clients, "seconds": seconds, "episodes": finished[0], "errors": len(errors), "first_errors": errors[:3]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", required=True, choices=installed_envs())
    parser.add_argument("--tasks", type=int, default=20, help="test tasks played by the expert (spread over the split)")
    parser.add_argument("--sessions", type=int, default=50, help="live sessions for the memory figure")
    parser.add_argument("--concurrent", type=int, default=20, help="clients playing at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the concurrency phase")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    env_cls = env_class(args.env)
    tasks = sample_tasks(env_cls, "test" if "test" in env_cls.splits else next(iter(env_cls.splits)), args.tasks)
    results: dict[str, object] = {"env": args.env, "tasks": len(tasks), "in_process": in_process(env_cls, tasks)}
    group = server_of(args.env)
    with ServerProcesses([group], ports={group: free_port()}, extra_args=["--max-sessions", str(args.sessions + args.concurrent + 2)]) as urls:
        url = urls[group]
        pid = httpx.get(f"{url}/{args.env}/health").json()["pid"]
        results["http"] = over_http(env_cls, url, pid, tasks, args.sessions)
        results["concurrent"] = concurrent(env_cls, url, tasks, args.concurrent, args.seconds)

    local, http, many = results["in_process"], results["http"], results["concurrent"]
    table = Table(title=f"{args.env}: {len(tasks)} test tasks played by the expert")
    table.add_column("measure")
    table.add_column("figure")
    table.add_row("set up what sessions share (once per process)", f"{local['shared_setup_ms']:.1f} ms")
    table.add_row("make an env (in process)", f"{local['make_ms']:.1f} ms")
    for where, figures in (("in process", local), ("HTTP, 1 client", http)):
        for what in ("reset", "step"):
            f = figures[what]
            table.add_row(f"{what}, {where}", f"median {f['median_ms']:.2f} ms, p90 {f['p90_ms']:.2f} ms (n={f['n']})")
        table.add_row(f"expert success, {where}", f"{100 * figures['expert_success']:.1f}%")
    table.add_row(f"memory per live session ({http['sessions']} sessions)",
                  f"{http['memory_per_session_mib']:.2f} MiB RSS, {http['memory_per_session_pss_mib']:.2f} MiB PSS")
    table.add_row(f"{many['clients']} clients at once for {many['seconds']:.0f} s", f"{many['episodes']} episodes, {many['errors']} errors")
    Console().print(table)
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()
