"""Helpers for tests and benchmarks: a tiny randomly initialised Llama with a locally trained tokenizer.

Nothing is downloaded: the byte-level BPE tokenizer is trained in process on a small corpus, and the
model is built from a config.  ``tiny_llama(tmp_path)`` saves both in HF format and returns the folder.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from agentenv.models import CHATML_TEMPLATE, SPECIAL_TOKENS  # noqa: F401 - re-exported for tests

_CORPUS = [
    "Thought:\nI should move toward the goal.\n\nAction:\nmove up",
    "Thought:\nThe letters narrow it down.\n\nAction:\nguess crane",
    "Your position is 3, 4. There are walls to your left and right. Available actions: move up, move down",
    "You are an agent in a maze. Reach the goal. Answer with Thought: and Action: lines.",
    "go to red ball 1, pick up key 2, toggle and go through door 1, turn left, turn right, move forward",
    "craft 4 oak planks using 1 oak log; get 2 iron ingot; inventory; check valid actions",
    "look around, open door to kitchen, pick up thermometer, focus on substance in metal pot",
    "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,:;!?'\"()[]{}<>-_=+*/\\|@#$%^&~`",
]


def tiny_tokenizer(vocab_size: int = 512):
    """A ``PreTrainedTokenizerFast`` (byte-level BPE, ChatML template) trained on a fixed corpus."""
    from agentenv.models import train_tokenizer

    return train_tokenizer(_CORPUS * 4, vocab_size)


def tiny_llama(path: str | os.PathLike, hidden: int = 64, layers: int = 2, seed: int = 0) -> Path:
    """Save a tiny random Llama + tokenizer under ``path`` (HF format) and return the folder."""
    from agentenv.models import random_llama

    return random_llama(path, tiny_tokenizer(), hidden=hidden, layers=layers, seed=seed)


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
