"""A model's shape: its config and tokenizer without the weights, made into a model with random weights,
which is how SmolLM2 reaches a GPU machine that cannot receive its weights (benchmarks/gpu/carry.sh)."""

from __future__ import annotations

import pytest

from agentenv.models import copy_shape, random_like

torch = pytest.importorskip("torch")


def test_shape_folder_gives_the_same_model_with_random_weights(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentenv.testing import tiny_llama

    trained = tiny_llama(tmp_path / "trained")
    shape = copy_shape(trained, tmp_path / "shape")
    assert not list(shape.glob("*.safetensors")) and (shape / "config.json").exists()

    folder = random_like(shape, tmp_path / "work" / "random_shape")
    original, fresh = (AutoModelForCausalLM.from_pretrained(f) for f in (trained, folder))
    assert fresh.config.to_dict() | {"_name_or_path": ""} == original.config.to_dict() | {"_name_or_path": ""}
    names = dict(original.named_parameters())
    assert names.keys() == dict(fresh.named_parameters()).keys()
    assert not torch.equal(
        names["model.layers.0.mlp.up_proj.weight"], fresh.model.layers[0].mlp.up_proj.weight
    )
    text = "Thought:\nI go to the red ball.\n\nAction:\ngo to red ball 1"
    assert (
        AutoTokenizer.from_pretrained(folder)(text)["input_ids"]
        == AutoTokenizer.from_pretrained(trained)(text)["input_ids"]
    )
    weights = next(folder.glob("*.safetensors")).stat().st_mtime_ns
    assert random_like(shape, folder) == folder
    assert next(folder.glob("*.safetensors")).stat().st_mtime_ns == weights  # made once, not again
