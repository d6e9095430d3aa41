"""Measurements the benchmarks share: memory, latency summaries, expert episodes over HTTP, live sessions."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path


def rss_bytes() -> int:
    """This process's resident memory (Linux ``/proc``), for per-session memory figures."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def latency_text(samples: list[float], digits: int = 2) -> str:
    """``median X ms, p90 Y ms (n=N)`` for latencies given in seconds."""
    import statistics

    p90 = sorted(samples)[int(len(samples) * 0.9)]
    return f"median {statistics.median(samples) * 1e3:.{digits}f} ms, p90 {p90 * 1e3:.{digits}f} ms (n={len(samples)})"


def expert_episodes_over_http(client, session_id: str, tasks) -> tuple[list[float], list[float], list[float]]:
    """Play each of ``tasks`` in one live session with the server's ``/expert``, through an httpx ``client``
    whose base URL is an env's route; returns the reset times, the step times (seconds) and each episode's
    final reward."""
    import time

    resets, steps, rewards = [], [], []
    for idx in tasks:
        t = time.perf_counter()
        client.post("/reset", json={"id": session_id, "data_idx": idx}).raise_for_status()
        resets.append(time.perf_counter() - t)
        answer = {"done": False}
        while not answer["done"]:
            action = client.get("/expert", params={"id": session_id}).json()["action"]
            t = time.perf_counter()
            answer = client.post("/step", json={"id": session_id, "action": action}).json()
            steps.append(time.perf_counter() - t)
        rewards.append(answer["reward"])
    return resets, steps, rewards


@contextmanager
def live_sessions(client, tasks, n: int):
    """``n`` sessions created and reset (round-robin over ``tasks``) through ``client``; yields their ids
    and closes them on exit — for per-session memory figures."""
    ids = []
    try:
        for i in range(n):
            ids.append(client.post("/create", json={}).json()["id"])
            client.post("/reset", json={"id": ids[-1], "data_idx": tasks[i % len(tasks)]}).raise_for_status()
        yield ids
    finally:
        for sid in ids:
            client.post("/close", json={"id": sid})
