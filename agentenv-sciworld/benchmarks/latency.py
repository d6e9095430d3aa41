"""ScienceWorld latency and memory: JVM start, median reset / step time, memory per live session.

    python agentenv-sciworld/benchmarks/latency.py [--tasks 23] [--sessions 4]

The task set is the start of the test split (``--tasks 23`` = the first test variation of every task
type).  Each episode is reset, then played by the expert (its first call reloads the task with the gold
path; that reload is not counted as reset time), so the steps are the ones an evaluation makes.
Measured in-process (``SciWorldEnv``) and over HTTP (the kit's app on a loopback port, one keep-alive
httpx client).  Memory per live session is the resident memory of each session's JVM after a reset
(every session owns one), plus the server process's own RSS growth per session.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import httpx
from agentenv_sciworld import SciWorldEnv
from agentenv_sciworld.processes import java_children

from agentenv.testing.measure import expert_episodes_over_http, latency_text, live_sessions, rss_bytes


def _ms(samples: list[float]) -> str:
    return latency_text(samples, digits=1)


def in_process(tasks: range) -> None:
    starts = []
    for _ in range(3):
        t = time.perf_counter()
        SciWorldEnv().close()
        starts.append(time.perf_counter() - t)
    print(f"JVM start + close: {_ms(starts)}")
    env = SciWorldEnv()
    resets, steps, solved = [], [], 0
    try:
        for idx in tasks:
            t = time.perf_counter()
            env.reset(idx)
            resets.append(time.perf_counter() - t)
            while not env.done:
                action = env.expert_action().action
                t = time.perf_counter()
                env.step(action)
                steps.append(time.perf_counter() - t)
            solved += env.is_success(env.score)
        t = time.perf_counter()
        env.available_actions()
        valid = time.perf_counter() - t
    finally:
        env.close()
    print(f"in-process reset: {_ms(resets)}")
    print(f"in-process step:  {_ms(steps)}")
    print(f"available_actions() (valid-action list, on request only): {valid * 1e3:.0f} ms")
    print(f"expert success on {len(tasks)} tasks: {solved / len(tasks):.1%}")


def over_http(tasks: range, sessions: int) -> None:
    from agentenv.testing import running_server

    with (
        running_server([SciWorldEnv]) as url,
        httpx.Client(base_url=f"{url}/sciworld", timeout=120) as client,
    ):
        t = time.perf_counter()
        sid = client.post("/create", json={}).json()["id"]
        print(f"HTTP create (starts a JVM): {(time.perf_counter() - t) * 1e3:.0f} ms")
        resets, steps, _ = expert_episodes_over_http(client, sid, tasks)
        client.post("/close", json={"id": sid})
        print(f"HTTP reset: {_ms(resets)}")
        print(f"HTTP step:  {_ms(steps)}")

        gc.collect()
        before = rss_bytes()
        with live_sessions(client, tasks, sessions):
            jvms = java_children()
            grown = rss_bytes() - before
        per_jvm = [rss / 2**20 for rss in jvms.values()]
        print(
            f"memory per live session ({sessions} sessions): JVM RSS median {statistics.median(per_jvm):.0f} MiB "
            f"(max {max(per_jvm):.0f} MiB), server process +{grown / sessions / 2**20:.1f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=23, help="tasks from the start of the test split")
    parser.add_argument("--sessions", type=int, default=4, help="live sessions for the memory figure")
    parser.add_argument("--no-http", action="store_true", help="in-process figures only")
    args = parser.parse_args()
    test = SciWorldEnv.splits["test"]
    tasks = range(test.start, min(test.stop, test.start + args.tasks))
    in_process(tasks)
    if not args.no_http:
        over_http(tasks, args.sessions)


if __name__ == "__main__":
    main()
