"""Helpers for tests and benchmarks: a tiny randomly initialised Llama with a locally trained tokenizer.

Nothing is downloaded: the byte-level BPE tokenizer is trained in process on a small corpus, and the
model is built from a config.  ``tiny_llama(tmp_path)`` saves both in HF format and returns the folder.
"""

from __future__ import annotations

import os
from pathlib import Path

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

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
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]


def tiny_tokenizer(vocab_size: int = 512):
    """A ``PreTrainedTokenizerFast`` (byte-level BPE, ChatML template) trained on a fixed corpus."""
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
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        unk_token="<|endoftext|>",
    )
    fast.chat_template = CHATML_TEMPLATE
    return fast


def tiny_llama(path: str | os.PathLike, hidden: int = 64, layers: int = 2, seed: int = 0) -> Path:
    """Save a tiny random Llama + tokenizer under ``path`` (HF format) and return the folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = Path(path)
    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
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
