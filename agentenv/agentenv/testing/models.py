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


def train_under_torchrun(trainer: str, out: str | os.PathLike, *args: str, processes: int = 2) -> str:
    """Run ``python -m agentenv.trainer TRAINER --output-dir OUT ARGS`` as ``processes`` CPU processes under
    torchrun (gloo; with ``--deepspeed``, DeepSpeed's CPU accelerator); returns what it printed (stdout, then
    stderr), and fails with its end."""
    import subprocess
    import sys

    from .servers import free_port

    out = Path(out)
    # a free port of our own: torchrun's "--master_port 0" hangs at exit on torch 2.13
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(processes),
        "--master_port", str(free_port()), "-m", "agentenv.trainer", trainer, "--output-dir", str(out), *args,
    ]  # fmt: skip
    # a folder of its own for torch's JIT-built ops: DeepSpeed must build none (its CPU shared-memory op is skipped)
    extensions = out.parent / f"{out.name}_torch_extensions"
    project = Path(__file__).resolve().parents[2]  # agentenv/, the package's own copy whether installed or not
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(project), "TORCH_EXTENSIONS_DIR": str(extensions)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not extensions.exists() or not any(extensions.iterdir()), f"ops were built: {list(extensions.iterdir())}"
    return proc.stdout + proc.stderr
