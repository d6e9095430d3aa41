"""A local Hugging Face causal LM as an agent.

Every round, the live episodes are generated for in one batch, and each episode keeps its KV cache from
one round to the next, so a round only prefills what is new (the last reply's end, the new observation
and the generation prompt).  Re-encoding the whole conversation every round, as a plain
``model.generate`` loop does, is where most of the time goes once conversations grow long.

How a round runs (``HFAgent._act``, ``HFAgent._generate``):

1. Each episode's conversation is rendered with the chat template and tokenised.  Its cached tokens are
   compared with these; the longest common prefix is kept and only the rest is fed to the model.  This
   makes the cached result equal, token for token, to re-encoding the whole conversation: if the reply
   the model generated re-tokenises differently, the cache is simply cut back to where they agree.
2. Every episode's keys and values stay in one buffer per layer (:class:`_KVStore`), a row per episode,
   slot ``i`` of a row holding its token ``i``; each forward writes every row at its own next slots, and
   the attention mask (built here, 4-D) lets a token see the slots up to its own.  So a round copies
   nothing while the same episodes play on; when the batch changes (an episode ends, one joins) or the
   buffers are too short, the kept prefixes are copied once into buffers laid out for the new batch.
3. Greedy episodes decode several tokens a step where they can (prompt lookup, ``draft_tokens``): each row
   also feeds the tokens that followed the last occurrence of its last two tokens, and keeps those the
   model picks itself, one after the other; a draft the model does not pick, and what follows it, is
   written past the row's end and overwritten by the next step.  A reply that repeats what the
   conversation holds (an action from the list offered, the format of the last reply) takes fewer steps.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import sys
import threading
import zlib
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.cache_utils import Cache, DynamicLayer

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode
from agentenv.controller.prompt_lookup import PromptLookup
from agentenv.data.tokenize import TEMPLATES, fallback_format, template_name  # the trainer's fallbacks

_STOP_TEXT = {"chatml": ["<|im_end|>"], "llama2": ["</s>", "[INST]"]}
#: prompt-lookup draft tokens a decoding step, by default (``HFAgent(draft_tokens=...)``)
DRAFT_TOKENS = 2


def stop_token_ids(tokenizer, template: str | None = None, generation_config: Any = None) -> set[int]:
    """The tokens a reply ends on: the tokenizer's EOS, the model's configured ones, and the token the chat
    template (``template``, else the tokenizer's own) closes an assistant turn with.  That last one is what
    behavioural cloning trains a model to emit (``<|im_end|>``, Llama-3's ``<|eot_id|>``, Gemma's
    ``<end_of_turn>``), and a base model's EOS and generation config do not name it."""
    ids = {tokenizer.eos_token_id}
    configured = getattr(generation_config, "eos_token_id", None)
    ids.update(configured if isinstance(configured, list) else [configured])
    reply = "agentenv-reply"
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": reply}]
    try:
        text = tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False)
    except Exception:  # noqa: BLE001 - a template that cannot render this has no marker to find
        text = ""
    tail = text[text.rfind(reply) + len(reply) :].strip() if reply in text else ""
    if tail:
        first = tokenizer(tail, add_special_tokens=False)["input_ids"][:1]
        # an added or special token only: a template closing turns with plain text ("\n\n") must not stop
        # every reply at its first blank line
        if first and (first[0] in tokenizer.added_tokens_decoder or first[0] in tokenizer.all_special_ids):
            ids.add(first[0])
    return {i for i in ids if isinstance(i, int)}


@dataclass
class _EpisodeCache:
    """The tokens an episode's cached keys and values cover (they lie in its row of the agent's store)."""

    tokens: list[int] = field(default_factory=list)
    lookup: PromptLookup | None = None  # the episode's tokens indexed for drafts (``draft_tokens``)


@dataclass
class _Row:
    """One episode's part of a generation batch."""

    episode: Episode
    prompt: list[int]
    cache: _EpisodeCache
    keep: int  # how many cached tokens are reused
    temperature: float
    generator: torch.Generator | None


class HFAgent(Agent):
    """A transformers causal LM: batched generation, KV cache kept per episode across rounds.

    ``model_path`` is a local HF folder (or pass an already loaded ``model`` and ``tokenizer``).
    ``temperature`` 0 is greedy; otherwise sampling with ``top_p``, reproducible per episode from ``seed``
    (an episode's own ``temperature`` / ``seed`` override these).  Generation stops at EOS or after
    ``max_new_tokens``.  An episode whose prompt plus ``max_new_tokens`` would pass ``max_length`` (default:
    the model's ``max_position_embeddings``) is stopped with reason ``context_overflow``.

    ``chat_format``: ``"auto"`` uses the tokenizer's own chat template, or, without one, the trainers' fallback
    (ChatML where the vocabulary has ``<|im_start|>``, else Llama-2's ``[INST]``; said once on stderr);
    ``"chatml"`` / ``"llama2"`` force a fallback.
    ``reuse_cache=False`` re-encodes every conversation each round (the slow reference behaviour);
    ``ignore_eos=True`` always generates ``max_new_tokens`` (for benchmarks).
    ``keep_sampled_ids=True`` keeps each reply's sampled token ids on its episode (``Episode.sampled_ids``), as
    online RL needs them (an evaluation would hold every generated token in memory).
    ``draft_tokens=k`` (greedy episodes): each decoding step also feeds up to ``k`` tokens copied from where
    the conversation's last two tokens occurred before (:mod:`~agentenv.controller.prompt_lookup`) and keeps
    those the model confirms: the same replies in fewer steps (on two CPU cores, the rollout benchmark's
    steps halve and its engine run takes 15.3 s against 18.2; ``0``: one token a step).
    """

    def __init__(
        self,
        model_path: str | os.PathLike | None = None,
        *,
        model: Any = None,
        tokenizer: Any = None,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        batch_size: int = 32,
        max_length: int | None = None,
        chat_format: str = "auto",
        reuse_cache: bool = True,
        ignore_eos: bool = False,
        device: str | None = None,
        dtype: str | torch.dtype | None = None,
        keep_sampled_ids: bool = False,
        draft_tokens: int = DRAFT_TOKENS,
    ) -> None:
        if model is None and model_path is None:
            raise ValueError("HFAgent needs model_path or a loaded model")
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        # the device and the tokenizer are checked before minutes of loading weights
        try:
            kind = torch.device(device).type
        except RuntimeError:
            raise ValueError(f"device {device!r} is not a torch device: give cpu, or cuda / cuda:N") from None
        if kind == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: this torch sees no CUDA GPU; give --device cpu (or leave it out)")
        if model is None:
            from agentenv.models import check_causal_lm

            check_causal_lm(model_path, label=f"hf:{model_path}")
        if tokenizer is None:
            tokenizer = _load_tokenizer(model_path or model.name_or_path)
        if model is None:
            if dtype is None:
                dtype = torch.bfloat16 if kind == "cuda" else torch.float32
            model = AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype)
            model.to(device)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.device = next(model.parameters()).device
        self._cache_argument = _cache_argument(model)
        self._window = _sliding_window(model.config)
        self.name = f"hf:{model_path if model_path is not None else model.name_or_path}"
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.seed = seed
        self.batch_size = batch_size
        self.reuse_cache = reuse_cache
        self.keep_sampled_ids = keep_sampled_ids
        if draft_tokens < 0:
            raise ValueError(f"draft_tokens must be 0 (no drafts) or more, not {draft_tokens}")
        self.draft_tokens = draft_tokens
        self.max_length = max_length or getattr(model.config.get_text_config(), "max_position_embeddings", None) or 4096
        if max_new_tokens >= self.max_length:  # every episode would end at round 0 as "context full"
            raise ValueError(
                f"max_new_tokens {max_new_tokens} leaves no room for a prompt in the model's context of "
                f"{self.max_length} tokens: lower --max-new-tokens"
            )
        self.chat_format = self._pick_chat_format(chat_format)
        self.template = TEMPLATES.get(self.chat_format)
        self.pad_id = _first_int(tokenizer.pad_token_id, tokenizer.eos_token_id, 0)
        self.stop_ids = set() if ignore_eos else stop_token_ids(tokenizer, self.template, model.generation_config)
        # a fallback that training saved with the model keeps its stop strings: its end of turn may be plain
        # text, where the vocabulary has no such token (GPT-2 trained with --template chatml)
        saved = template_name(getattr(tokenizer, "chat_template", None)) if self.chat_format == "model" else None
        self.stop_text = _STOP_TEXT.get(saved or self.chat_format, [])
        # tokens a stop string can span at most (each of its tokens decodes to at least one of its characters)
        self._stop_span = max(map(len, self.stop_text), default=0) + 1
        self._token_text: dict[int, str] = {}  # each generated token's own text, for _may_end_stop_text
        self._caches: dict[int, _EpisodeCache] = {}
        self._generators: dict[int, torch.Generator] = {}
        self._store = _KVStore()
        #: the buffers of the store's layout before the last (unless the last outgrew them), reused by the next
        #: change of layout: a fresh buffer of this size costs its page faults, several times the copy into it
        #: (on CPU)
        self._spare = _KVStore()
        #: counts since construction: prompt tokens fed to the model vs taken from the cache, tokens generated,
        #: forwards after each prefill, and the draft tokens they confirmed (``draft_tokens``)
        self.stats = {"prefilled_tokens": 0, "reused_tokens": 0, "generated_tokens": 0, "decode_steps": 0,
                      "confirmed_drafts": 0}
        self._generating = 0  # episodes in the batch being generated now
        # one call at a time: two runs sharing the agent (threads of a notebook) would share its buffers
        self._acting = threading.RLock()

    # --- prompts ---------------------------------------------------------------------------------
    def _pick_chat_format(self, chat_format: str) -> str:
        if chat_format not in ("auto", "chatml", "llama2"):
            raise ValueError(f"chat_format must be auto, chatml or llama2, not {chat_format!r}")
        if chat_format != "auto":
            return chat_format
        if getattr(self.tokenizer, "chat_template", None):
            return "model"
        chosen = fallback_format(self.tokenizer)
        print(f"[agentenv] {self.name}: the tokenizer has no chat template; prompting with {chosen} (as training "
              "would template it)", file=sys.stderr)
        return chosen

    def prompt_text(self, messages: list[dict[str, str]]) -> str:
        """The conversation rendered for generation (template plus the assistant generation prompt)."""
        return self.tokenizer.apply_chat_template(
            messages, chat_template=self.template, tokenize=False, add_generation_prompt=True
        )

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        return self.encode_prompts([messages])[0]

    def encode_prompts(self, conversations: list[list[dict[str, str]]]) -> list[list[int]]:
        """Token ids of each conversation's :meth:`prompt_text`, tokenised in one call (a fast tokenizer
        spreads a batch over the cores)."""
        if not conversations:
            return []
        texts = [self.prompt_text(messages) for messages in conversations]
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"]

    def fits(self, episode: Episode, prompt: list[int]) -> bool:
        """Whether a reply of ``max_new_tokens`` fits after ``prompt`` in ``max_length``; if not, the episode
        stops with reason ``context_overflow``."""
        if len(prompt) + self.max_new_tokens <= self.max_length:
            return True
        episode.meta["context_tokens"] = len(prompt)
        episode.stop("context_overflow")
        self.release(episode)
        return False

    def reply(self, episode: Episode, token_ids: list[int]) -> str:
        """An episode's reply from its generated tokens: cut at the first stop token.  One that reached
        ``max_new_tokens`` without a stop token or stop text is noted (its reply number) in
        ``meta["truncated_replies"]``."""
        for n, token in enumerate(token_ids):
            if token in self.stop_ids:
                if self.keep_sampled_ids:
                    episode.sampled_ids[episode.rounds] = list(token_ids[:n])
                return self.decode_reply(token_ids[:n])
        if self.keep_sampled_ids:
            episode.sampled_ids[episode.rounds] = list(token_ids)
        text, stopped = self._decoded(token_ids)
        if self.stop_ids and not stopped and len(token_ids) >= self.max_new_tokens:
            episode.meta.setdefault("truncated_replies", []).append(episode.rounds)
        return text

    def decode_reply(self, token_ids: list[int]) -> str:
        """Generated tokens to reply text: stop token and anything after a stop string removed."""
        return self._decoded(token_ids)[0]

    def _decoded(self, token_ids: list[int]) -> tuple[str, bool]:
        """:meth:`decode_reply`'s text, and whether a stop string ended it."""
        text = self.tokenizer.decode([t for t in token_ids if t not in self.stop_ids], skip_special_tokens=True)
        stopped = False
        for stop in self.stop_text:
            if stop in text:
                text, stopped = text.split(stop, 1)[0], True
        return text.strip(), stopped

    # --- the Agent interface ---------------------------------------------------------------------
    def act(self, episodes: list[Episode]) -> list[str]:
        with self._acting:
            return self._act(episodes)

    def _act(self, episodes: list[Episode]) -> list[str]:
        replies = [""] * len(episodes)
        rows: list[tuple[int, _Row]] = []
        prompts = self.encode_prompts([ep.messages() for ep in episodes])
        for i, (ep, prompt) in enumerate(zip(episodes, prompts, strict=True)):
            if self.fits(ep, prompt):
                rows.append((i, self._row(ep, prompt)))
        if not rows:
            return replies
        by_uid = {row.episode.uid: (i, row) for i, row in rows}
        order = self._store.uids
        if sorted(order[: len(rows)]) != sorted(by_uid):
            # a new batch: rows with similar cached lengths side by side, for the least padding per chunk,
            # then the episodes of other calls (two runs may share the agent), whose caches must stay
            others = [uid for uid in order if uid in self._caches and uid not in by_uid]
            order = [row.episode.uid for _, row in sorted(rows, key=lambda r: r[1].keep)] + others
        keep = {uid: by_uid[uid][1].keep if uid in by_uid else len(self._caches.get(uid, _EpisodeCache()).tokens)
                for uid in order}
        # past a reply's last token, a step writes a finished row's newest token, then as many columns as the
        # widest draft of the rows still going
        capacity = (max(r.keep for _, r in rows) + max(len(r.prompt) - r.keep for _, r in rows) + self.max_new_tokens
                    + 1 + self.draft_tokens)
        self._lay_out(order, keep, max(capacity, *keep.values()))
        for start in range(0, len(rows), self.batch_size):
            chunk = [by_uid[uid] for uid in order[start : min(start + self.batch_size, len(rows))]]
            for (i, _), reply in zip(chunk, self._generate([r for _, r in chunk], start), strict=True):
                replies[i] = reply
        return replies

    @torch.inference_mode()
    def _lay_out(self, order: list[int], keep: dict[int, int], capacity: int) -> None:
        """Make the store hold the episodes ``order`` names, in that order, each row's first ``keep`` slots
        kept, with room for ``capacity`` slots: nothing to do while the batch and its room stay the same,
        else the kept prefixes are copied into buffers of the new layout (the spare ones where they fit)."""
        store = self._store
        if order is store.uids and (not store.layers or store.capacity >= capacity):
            return
        # room for the rounds to come, which grow every conversation: each time it runs out costs a copy
        room = min(2 * capacity, max(capacity, self.max_length))
        if not store.layers:  # no cache yet: the first forward makes the buffers, knowing their shapes
            self._store = _KVStore(uids=list(order), capacity=room)
            return
        spare = self._spare if self._spare.fits(len(order), capacity) else None
        # a spare too small goes before the new buffers are made: they may take its memory, whose pages are
        # mapped already (a first touch of a page costs more than the copy into it, on CPU)
        self._spare = _KVStore()
        old_row = {uid: r for r, uid in enumerate(store.uids)}
        layers = []
        for n, (keys, values) in enumerate(store.layers):
            if spare is not None:
                new_keys, new_values = spare.layers[n]
            else:
                new_keys = _zeros_like_rows(keys, len(order), room)
                new_values = _zeros_like_rows(values, len(order), room)
            for r, uid in enumerate(order):
                kept = keep[uid]
                if kept:
                    new_keys[r, :, :kept] = keys[old_row[uid], :, :kept]
                    new_values[r, :, :kept] = values[old_row[uid], :, :kept]
            layers.append((new_keys, new_values))
        # kept on CPU only (CUDA's caching allocator reuses memory itself, and GPU memory is the scarcer), and
        # only where they were not outgrown: a later layout could not reuse them
        if capacity <= store.capacity and store.layers[0][0].device.type == "cpu":
            self._spare = store
        self._store = _KVStore(layers, list(order))

    def progress(self) -> dict[str, int | None]:
        return {"in_flight": self._generating, "tokens": self.stats["generated_tokens"]}

    def release(self, episode: Episode) -> None:
        with self._acting:
            self._caches.pop(episode.uid, None)
            self._generators.pop(episode.uid, None)
            if not self._caches:
                self._store, self._spare = _KVStore(), _KVStore()

    def settings(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "chat_format": self.chat_format,
            "max_length": self.max_length,
            "reuse_cache": self.reuse_cache,
            "weights": weights_digest(self.model),
        }

    def _attention_mask(self, slots: torch.Tensor, end: int):
        """The mask of a forward writing ``slots`` (all before ``end``): one for every layer, or per layer type
        where only some slide."""
        window, mixed = self._window
        full = _attention_mask(slots, end, self.model.dtype, None if mixed else window)
        if not mixed:
            return full
        return {"full_attention": full, "sliding_attention": _attention_mask(slots, end, self.model.dtype, window)}

    def _row(self, ep: Episode, prompt: list[int]) -> _Row:
        cache = self._caches.setdefault(ep.uid, _EpisodeCache())
        keep = _common_prefix(cache.tokens, prompt) if self.reuse_cache else 0
        keep = min(keep, len(prompt) - 1)  # at least one new token, whose logits start the reply
        self.stats["reused_tokens"] += keep
        self.stats["prefilled_tokens"] += len(prompt) - keep
        temperature = self.temperature if ep.temperature is None else ep.temperature
        generator = None
        if temperature > 0:
            generator = self._generators.get(ep.uid)
            if generator is None:
                seed = self.seed if ep.seed is None else ep.seed
                generator = torch.Generator(self.device)
                generator.manual_seed(zlib.crc32(f"{seed}:{ep.item_id}:{ep.sample}".encode()))
                self._generators[ep.uid] = generator
        return _Row(ep, prompt, cache, keep, temperature, generator)

    # --- batched generation over per-episode caches ----------------------------------------------
    @torch.inference_mode()
    def _generate(self, rows: list[_Row], first_row: int) -> list[str]:
        """Replies for ``rows``, which are the store's rows from ``first_row`` on."""
        batch = len(rows)
        keep = torch.tensor([r.keep for r in rows])
        new = torch.tensor([len(r.prompt) - r.keep for r in rows])
        width = int(new.max())
        # the new tokens right-aligned, so that the last column is every row's last prompt token; padding
        # columns write their keys past the row's end, where decoding overwrites them before they are seen
        tokens = torch.full((batch, width), self.pad_id, dtype=torch.long)
        for b, row in enumerate(rows):
            tokens[b, width - len(row.prompt) + row.keep :] = torch.tensor(row.prompt[row.keep :])
        column = torch.arange(width)[None]
        pad = (width - new)[:, None]
        slots = torch.where(column >= pad, keep[:, None] + column - pad, (keep + new)[:, None] + column)
        lengths = (keep + new).tolist()
        end = int(keep.max()) + width  # past the furthest slot a forward writes, kept on the host (no GPU sync)
        tokens, slots = tokens.to(self.device), slots.to(self.device)
        cache = _RoundCache(self._store, first_row, batch, self.model.config.get_text_config().num_hidden_layers)

        generated: list[list[int]] = [[] for _ in rows]
        active = [True] * batch
        lookups = self._lookups(rows)
        drafts: list[list[int]] = [[] for _ in rows]  # each row's draft tokens, fed after its newest token
        feeding: list[int] = []  # rows whose newest token the forward feeds (made the step before)
        columns = 1  # logits kept a row: the prompt's last column, then every column fed
        self._generating = batch
        while True:
            cache.slots, cache.end = slots, end
            with _attention_backends(self.device):
                logits = self.model(
                    input_ids=tokens,
                    attention_mask=self._attention_mask(slots, end),
                    # a padding column may lie past the last position (draft columns of other rows): its
                    # keys are never read, but a model of learned positions has none to look up there
                    position_ids=slots.clamp(max=self.max_length - 1),
                    use_cache=True,
                    **{self._cache_argument: cache},
                    logits_to_keep=columns,
                ).logits.float()
            if lookups is None:  # one token a row; one copy to the host, not one per row (each syncs a GPU)
                picks = [[t] for t in self._choose(logits[:, -1], rows, active).tolist()]
            else:  # greedy: the token the model picks after each column
                picks = logits.argmax(-1).tolist()
            for b in feeding:  # the slot of each fed token now holds its keys
                lengths[b] += 1
            producing = [b for b in range(batch) if active[b]]
            for b in producing:
                confirmed = 0  # drafts the model would have chosen itself, one after the other
                while confirmed < len(drafts[b]) and drafts[b][confirmed] == picks[b][confirmed]:
                    confirmed += 1
                taken = 0
                for token in picks[b][: confirmed + 1]:
                    generated[b].append(token)
                    taken += 1
                    if lookups is not None:
                        lookups[b].append(token)
                    if self._ends_reply(token, generated[b]):
                        active[b] = False
                        break
                kept = min(confirmed, taken)  # the confirmed drafts the reply keeps: their slots hold its keys
                lengths[b] += kept
                self.stats["confirmed_drafts"] += kept
                self.stats["generated_tokens"] += taken  # counted as they come: a live display shows them
            if not any(active):
                break
            self.stats["decode_steps"] += 1
            # every row writes at its next slots; a finished one there too, past its end, where nothing reads it
            feeding = producing
            for b in producing:
                room = self.max_new_tokens - len(generated[b]) - 1  # no draft past the reply's last token
                drafts[b] = lookups[b].draft(min(self.draft_tokens, room)) if lookups and active[b] else []
            columns = 1 + max(len(drafts[b]) for b in producing)
            fed = [[self.pad_id] * columns for _ in rows]
            for b in producing:
                fed[b][: 1 + len(drafts[b])] = [generated[b][-1], *drafts[b]]
            tokens = torch.tensor(fed, device=self.device)
            slots = torch.tensor(lengths, device=self.device)[:, None] + torch.arange(columns, device=self.device)
            end = max(lengths) + columns

        for b, row in enumerate(rows):
            row.episode.meta["generated_tokens"] = row.episode.meta.get("generated_tokens", 0) + len(generated[b])
            row.cache.tokens = row.prompt + generated[b][: lengths[b] - len(row.prompt)]  # what the slots hold
        self._generating = 0
        return [self.reply(row.episode, g) for row, g in zip(rows, generated, strict=True)]

    def _lookups(self, rows: list[_Row]) -> list[PromptLookup] | None:
        """Each row's prompt lookup, brought up to its prompt, where drafts are fed (``draft_tokens``, every
        row greedy); else ``None``."""
        if not self.draft_tokens or any(row.temperature > 0 for row in rows):
            return None
        lookups = []
        for row in rows:
            lookup = row.cache.lookup = row.cache.lookup or PromptLookup()
            lookup.sync(row.prompt, row.keep)  # its tokens begin with the cached ones, which the prompt keeps
            lookups.append(lookup)
        return lookups

    def _ends_reply(self, token: int, generated: list[int]) -> bool:
        """Whether the reply ends with ``token``, the newest of ``generated``: a stop token, a stop string
        completed (ChatML on a vocabulary without ``<|im_end|>`` ends a turn with plain text) or
        ``max_new_tokens`` reached."""
        if token in self.stop_ids or len(generated) >= self.max_new_tokens:
            return True
        return bool(self.stop_text) and self._may_end_stop_text(token) and self._ends_with_stop_text(generated)

    def _may_end_stop_text(self, token: int) -> bool:
        """Whether ``token`` can be the one that completes a stop string: its own text holds a stop string's
        last character.  (The characters of the stop strings are ASCII, which no tokenizer splits across
        tokens, so the token a stop string ends in yields that character itself.)  Saves decoding the reply's
        tail after every other token."""
        text = self._token_text.get(token)
        if text is None:
            text = self._token_text[token] = self.tokenizer.decode([token], skip_special_tokens=True)
        return any(stop[-1] in text for stop in self.stop_text)

    def _ends_with_stop_text(self, token_ids: list[int]) -> bool:
        """Whether the reply's newest tokens complete one of the stop strings."""
        tail = self.tokenizer.decode(token_ids[-self._stop_span :], skip_special_tokens=True)
        return any(stop in tail for stop in self.stop_text)

    def _choose(self, logits: torch.Tensor, rows: list[_Row], active: list[bool]) -> torch.Tensor:
        """Next token per row: argmax, or a sample at the row's temperature with nucleus ``top_p``.

        Rows no longer ``active`` are not sampled: a draw would advance their generator, and an episode's
        next reply would then depend on how long the other replies in its batch ran.
        """
        choice = logits.argmax(-1)
        if all(row.temperature <= 0 for row in rows):
            return choice
        for b, row in enumerate(rows):
            if row.temperature <= 0 or not active[b]:
                continue
            probs = torch.softmax(logits[b] / row.temperature, dim=-1)
            if self.top_p < 1.0:
                sorted_probs, order = probs.sort(descending=True)
                outside = sorted_probs.cumsum(0) - sorted_probs > self.top_p
                probs = probs.scatter(0, order, sorted_probs.masked_fill(outside, 0.0))
            choice[b] = torch.multinomial(probs, 1, generator=row.generator)[0]
        return choice


@dataclass
class _KVStore:
    """Every cached episode's keys and values: per layer, buffers ``[rows, heads, capacity, dim]``, a row per
    episode (``uids`` names them), slot ``i`` holding its token ``i``.  ``layers`` is empty until the first
    forward, which makes the buffers with ``capacity`` slots."""

    layers: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    uids: list[int] = field(default_factory=list)
    capacity: int = 0

    def __post_init__(self) -> None:
        if self.layers:
            self.capacity = self.layers[0][0].shape[2]

    def fits(self, rows: int, capacity: int) -> bool:
        return bool(self.layers) and self.layers[0][0].shape[0] >= rows and self.capacity >= capacity


class _RoundCache(Cache):
    """The KV cache a forward of one chunk sees: rows ``first_row..first_row+batch`` of ``store``; each forward
    writes its keys and values at ``slots`` (``[batch, width]``), set before it."""

    def __init__(self, store: _KVStore, first_row: int, batch: int, n_layers: int) -> None:
        super().__init__(layers=[_RoundLayer(self, n) for n in range(n_layers)])
        self.store, self.rows = store, slice(first_row, first_row + batch)
        self.batch_index: torch.Tensor | None = None  # [batch, 1]: each row's own, beside its slots
        self.slots: torch.Tensor | None = None
        self.end = 0  # past the furthest slot of ``slots``


class _RoundLayer(DynamicLayer):
    """One layer of a :class:`_RoundCache`: writes each row's new keys and values at its slots and returns the
    rows' buffers up to the furthest slot written."""

    def __init__(self, cache: _RoundCache, index: int) -> None:
        super().__init__()
        self.cache, self.index = cache, index
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        store, slots = self.cache.store, self.cache.slots
        if len(store.layers) == self.index:  # the first forward: buffers of the shapes the model makes
            rows = len(store.uids)
            store.layers.append((_zeros_like_rows(key_states, rows, store.capacity),
                                 _zeros_like_rows(value_states, rows, store.capacity)))
        keys, values = (buffer[self.cache.rows] for buffer in store.layers[self.index])
        if self.cache.batch_index is None:
            self.cache.batch_index = torch.arange(slots.shape[0], device=slots.device)[:, None]
        keys[self.cache.batch_index, :, slots] = key_states.transpose(1, 2)
        values[self.cache.batch_index, :, slots] = value_states.transpose(1, 2)
        self.keys, self.values = keys[:, :, : self.cache.end], values[:, :, : self.cache.end]
        return self.keys, self.values

    def get_seq_length(self) -> int:  # what transformers counts positions from; positions are given here
        slots = self.cache.slots
        return 0 if slots is None else self.cache.end - slots.shape[1]

    def get_max_length(self) -> int:
        return self.cache.store.capacity


def _zeros_like_rows(like: torch.Tensor, rows: int, capacity: int) -> torch.Tensor:
    """A zeroed buffer ``[rows, heads, capacity, dim]`` of ``like``'s heads, dim, dtype and device.  Zeros, as a
    masked slot must still be finite (0 * NaN would leak through softmax).  Not asked for transparent huge
    pages: the decode reads them faster, but on this project's VM a fresh huge page costs ~2 ms a MB at its
    first touch against ~0.35 for 4 KiB pages, and over a rollout's growths that cost more than the faster
    reads gave back (docs/benchmarks.md)."""
    _, heads, _, dim = like.shape
    return like.new_zeros(rows, heads, capacity, dim)


def weights_digest(model: torch.nn.Module, values_per_tensor: int = 16) -> str:
    """A short digest of a model's weights, from the first values of each tensor: it tells apart two models
    one path held at different times (a results file's episodes are resumed only with the same weights)."""
    digest = hashlib.sha256()
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if tensor.device.type == "meta":
                continue
            first = tensor.detach()
            while first.dim() > 1:  # the first row: a view, where reshape would copy a non-contiguous tensor
                first = first[0]
            digest.update(name.encode())
            with contextlib.suppress(RuntimeError, TypeError):  # a packed type float() cannot read
                digest.update(first.reshape(-1)[:values_per_tensor].double().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def _attention_mask(slots: torch.Tensor, end: int, dtype: torch.dtype, window: int | None = None) -> torch.Tensor:
    """Additive 4-D mask for queries written at ``slots`` (``[batch, width]``, all before ``end``): each sees the
    slots at or before its own (with ``window``, only those fewer than ``window`` back, as a sliding-window
    layer does).  Every slot before a row's end holds one of its tokens, so a real query sees exactly its
    conversation so far."""
    keys = torch.arange(end, device=slots.device)
    allowed = keys[None, None, :] <= slots[:, :, None]
    if window is not None:
        allowed &= slots[:, :, None] - keys[None, None, :] < window
    seen, hidden = (torch.tensor(v, dtype=dtype, device=slots.device) for v in (0.0, torch.finfo(dtype).min))
    return torch.where(allowed, seen, hidden)[:, None]


def _sliding_window(config: Any) -> tuple[int | None, bool]:
    """The model's attention window and whether only some layers use it (Gemma-2's alternate): ``(None,
    False)`` where every layer attends to the whole context.  A mask of the agent's own is taken as given,
    so it must hold the window itself, or past it the agent would see what training and vLLM do not."""
    text = config.get_text_config()
    window = getattr(text, "sliding_window", None)
    kinds = set(getattr(text, "layer_types", None) or [])
    if not window or (kinds and "sliding_attention" not in kinds) or getattr(text, "use_sliding_window", True) is False:
        return None, False
    return window, bool(kinds - {"sliding_attention"})


@contextlib.contextmanager
def _attention_backends(device: torch.device):
    """On CUDA, attention without cuDNN's kernel (the other backends as they were): it builds a plan for
    every new shape, and decoding lengthens the keys by one every step (on an H200, 117 ms a call against
    0.9 ms for the memory-efficient kernel; SmolLM2-135M's decode forward 51 -> 31 ms:
    benchmarks/gpu/generation_profile.py).  The switch is global, so it is put back on the way out."""
    if device.type != "cuda":
        yield
        return
    was = torch.backends.cuda.cudnn_sdp_enabled()
    torch.backends.cuda.enable_cudnn_sdp(False)
    try:
        yield
    finally:
        torch.backends.cuda.enable_cudnn_sdp(was)


def _cache_argument(model: Any) -> str:
    """The name under which ``model.forward`` takes a KV cache: ``cache`` from transformers 5.24 on, where
    ``past_key_values`` is deprecated (and goes in 5.40), ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


#: the files one of which a saved tokenizer has
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def _load_tokenizer(name: str | os.PathLike) -> Any:
    """The tokenizer saved with a model; a model folder without one is one line saying so (transformers
    blames a missing sentencepiece or tiktoken, after the weights have loaded)."""
    folder = os.fspath(name)
    if os.path.isdir(folder) and not any(os.path.exists(os.path.join(folder, f)) for f in TOKENIZER_FILES):
        raise ValueError(
            f"{folder} has no tokenizer ({', '.join(TOKENIZER_FILES[:2])}): save the tokenizer with the model "
            "(tokenizer.save_pretrained(folder))"
        )
    return AutoTokenizer.from_pretrained(folder)


def _first_int(*values: Any) -> int:
    return next(v for v in values if isinstance(v, int))

