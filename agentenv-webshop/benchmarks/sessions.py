"""One WebShop server holding many live sessions on one shared index: every session plays a whole expert
episode while all of them stay open, with errors counted, step latency over HTTP by kind of action, and the
memory the sessions add to the server.

    python agentenv-webshop/benchmarks/sessions.py [--sessions 200] [--clients 16] [--out F.json]

The server runs in its own process as ``agentenv serve webshop`` starts it.  All ``--sessions`` sessions
are created and reset first (to test tasks spread over the split) and stay live; then ``--clients``
threads, each with its own keep-alive connection, take turns stepping them: one expert step of each live
session per turn, so every session is mid-episode at once.  Finally every session is closed and the server
must report no live session.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil

from agentenv.react import format_react
from agentenv.registry import env_class
from agentenv.server.launcher import ServerProcesses
from agentenv.testing import free_port, sample_tasks


def tree_rss(pid: int) -> int:
    root = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "median_ms": round(1000 * statistics.median(ordered), 2),
        "p90_ms": round(1000 * ordered[int(0.9 * (len(ordered) - 1))], 2),
        "p99_ms": round(1000 * ordered[int(0.99 * (len(ordered) - 1))], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    env_cls = env_class("webshop")
    tasks = sample_tasks(env_cls, "test", args.sessions)
    local = threading.local()
    errors: list[str] = []
    latencies: dict[str, list[float]] = {"search": [], "click": [], "buy": []}
    lock = threading.Lock()

    def http() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=120)
        return local.client

    def call(method: str, route: str, **kwargs):
        answer = http().request(method, route, **kwargs)
        if answer.status_code != 200:
            with lock:
                errors.append(f"{method} {route}: {answer.status_code} {answer.text[:200]}")
            return None
        return answer.json()

    def step(sid: int) -> bool:
        """One expert step of session ``sid``; whether its episode is over."""
        move = call("GET", "/expert", params={"env_idx": sid})
        if move is None:
            return True
        kind = (
            "search"
            if move["action"].startswith("search")
            else "buy"
            if move["action"] == "click[Buy Now]"
            else "click"
        )
        t = time.perf_counter()
        answer = call(
            "POST", "/step", json={"env_idx": sid, "action": format_react(move["thought"], move["action"])}
        )
        elapsed = time.perf_counter() - t
        with lock:
            latencies[kind].append(elapsed)
        if answer is None:
            return True
        if answer["done"] and answer["reward"] < 1.0:
            with lock:
                errors.append(f"session {sid}: the expert's episode ended with reward {answer['reward']}")
        return bool(answer["done"])

    port = free_port()
    with ServerProcesses(
        ["webshop"], ports={"webshop": port}, extra_args=["--max-sessions", str(args.sessions + 8)]
    ) as urls:
        url = urls["webshop"]
        pid = httpx.get(f"{url}/health").json()["pid"]
        before = tree_rss(pid)
        with ThreadPoolExecutor(args.clients) as pool:
            t = time.perf_counter()
            sids = list(pool.map(lambda _: call("POST", "/create"), range(args.sessions)))
            list(
                pool.map(
                    lambda pair: call("POST", "/reset", json={"env_idx": pair[0], "session_id": pair[1]}),
                    zip(sids, tasks, strict=True),
                )
            )
            opened = time.perf_counter() - t
            live_after_open = httpx.get(f"{url}/info").json()["live_sessions"]
            grown = tree_rss(pid) - before
            t = time.perf_counter()
            running, turns = list(sids), 0
            while running:
                turns += 1
                done = list(pool.map(step, running))
                running = [sid for sid, finished in zip(running, done, strict=True) if not finished]
                if turns > env_cls.max_rounds:
                    errors.append(f"{len(running)} episodes unfinished after {turns - 1} turns")
                    break
            played = time.perf_counter() - t
            peak = tree_rss(pid) - before
            list(pool.map(lambda sid: call("POST", "/close", json={"env_idx": sid}), sids))
        live_after_close = httpx.get(f"{url}/info").json()["live_sessions"]

    steps = sum(len(v) for v in latencies.values())
    results = {
        "sessions": args.sessions,
        "clients": args.clients,
        "live_after_open": live_after_open,
        "live_after_close": live_after_close,
        "errors": len(errors),
        "first_errors": errors[:5],
        "open_and_reset_s": round(opened, 2),
        "memory_per_session_kib": round(grown / args.sessions / 1024, 1),
        "memory_growth_while_playing_mib": round(peak / 2**20, 1),
        "steps": steps,
        "play_s": round(played, 2),
        "steps_per_s": round(steps / played, 1),
        "step_latency": {kind: summary(values) for kind, values in latencies.items()},
    }
    print(json.dumps(results, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
