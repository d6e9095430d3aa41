"""A tiny randomly initialised Llama with a locally trained tokenizer, for tests and benchmarks.

Nothing is downloaded: the byte-level BPE tokenizer is trained in process on a small corpus, and the
model is built from a config.  ``tiny_llama(tmp_path)`` saves both in HF format and returns the folder.
"""

from __future__ import annotations

import os
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
