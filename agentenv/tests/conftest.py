"""Fixtures shared by the model tests (training, agents): one torch thread and the tiny random Llama."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run fastest on one thread, and the test machine's cores are shared.

    Modules that train or generate use it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def base_model(tmp_path_factory) -> Path:
    """A tiny random Llama with its locally trained tokenizer (a Hugging Face folder)."""
    from agentenv.testing import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny") / "model")
