"""TextCraft latency and memory: median reset / step time over a fixed task set, memory per live session.

    python agentenv-textcraft/benchmarks/latency.py [--tasks 100] [--sessions 200]

Measures both in-process (``TextCraftEnv`` directly) and over HTTP (the kit's app on a loopback port,
one keep-alive httpx client).  The task set is the test split (indices 444..543); each episode is
reset, then played by the expert, so the steps are the ones an evaluation makes.  Memory per session is
the server process's RSS growth while ``--sessions`` sessions are live, each reset to a task, divided
by their number.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import httpx
from agentenv_textcraft import TextCraftEnv, recipe_book

from agentenv.testing.measure import expert_episodes_over_http, latency_text, live_sessions, rss_bytes


def _ms(samples: list[float]) -> str:
    return latency_text(samples, digits=3)


def in_process(tasks: range) -> None:
    start = time.perf_counter()
    recipe_book()
    print(f"recipe book load: {(time.perf_counter() - start) * 1e3:.1f} ms (once per process)")
    env = TextCraftEnv()
    resets, steps, solved = [], [], 0
    for idx in tasks:
        t = time.perf_counter()
        env.reset(idx)
        resets.append(time.perf_counter() - t)
        while not env.done:
            action = env.expert_action().action
            t = time.perf_counter()
            env.step(action)
            steps.append(time.perf_counter() - t)
        solved += env.reward == 1.0
    print(f"in-process reset: {_ms(resets)}")
    print(f"in-process step:  {_ms(steps)}")
    print(f"expert success on {len(tasks)} tasks: {solved / len(tasks):.1%}")
    gc.collect()
    tracemalloc.start()
    live = [TextCraftEnv() for _ in range(100)]
    for i, e in enumerate(live):
        e.reset(tasks[i % len(tasks)])
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"in-process memory per env (reset, tracemalloc): {size / len(live) / 1024:.1f} KiB")


def over_http(tasks: range, sessions: int) -> None:
    from agentenv.testing import running_server

    with running_server([TextCraftEnv]) as url, httpx.Client(base_url=f"{url}/textcraft") as client:
        sid = client.post("/create", json={}).json()["id"]
        resets, steps, rewards = expert_episodes_over_http(client, sid, tasks)
        solved = sum(reward == 1.0 for reward in rewards)
        client.post("/close", json={"id": sid})
        print(f"HTTP reset: {_ms(resets)}")
        print(f"HTTP step:  {_ms(steps)}")
        print(f"expert success over HTTP: {solved / len(tasks):.1%}")

        gc.collect()
        before = rss_bytes()
        with live_sessions(client, tasks, sessions):
            gc.collect()
            grown = rss_bytes() - before
        print(f"HTTP memory per live session (RSS growth / {sessions}): {grown / sessions / 1024:.1f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100, help="tasks from the start of the test split")
    parser.add_argument("--sessions", type=int, default=200, help="live sessions for the memory figure")
    parser.add_argument("--no-http", action="store_true", help="in-process figures only")
    args = parser.parse_args()
    test = TextCraftEnv.splits["test"]
    tasks = range(test.start, min(test.stop, test.start + args.tasks))
    in_process(tasks)
    if not args.no_http:
        over_http(tasks, args.sessions)


if __name__ == "__main__":
    main()
