"""Turn AgentTraj conversations into training tensors: ``input_ids`` and ``labels`` with loss masks.

Rendering uses the tokenizer's chat template (or a fallback: ChatML, or Llama-2's ``[INST]`` format) so
training sees exactly the text the agent sees at inference.

**Masking.**  Labels are set only on the tokens of turns whose ``loss`` is true (:meth:`Turn.trains`) and
are ``-100`` everywhere else: the instruction, the observations, the "Ok." acknowledgement and the
template's role headers (``<|im_start|>assistant\\n``).  A trained turn's end-of-turn token
(``<|im_end|>`` / ``</s>``) *is* trained, so the model learns to stop; template whitespace after it is not.

How: the conversation is rendered incrementally.  For turn ``i``, ``render(messages[:i+1])`` must extend
``render(messages[:i])`` (the template is prefix-stable, but for an EOS it writes after the last turn
only, as Phi-3's does, which is left out); the difference is the turn's text, and
``render(messages[:i], add_generation_prompt=True)`` tells where its role header ends (as far as the turn
repeats it: DeepSeek-R1's prompt also opens ``<think>``), or else the turn's content where it starts.  That gives
character spans; the whole text is tokenized once with offsets and a token is trained when it starts
inside a trained span.

**Truncation.**  A conversation longer than ``max_length`` tokens loses whole trailing turns, never part
of one: it is cut after the last trained turn that still fits.  A conversation whose first trained turn
does not fit is dropped.  Both are counted (:class:`EncodeStats`; BC prints their report).
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentenv.data.dataset import conversation_turns
from agentenv.data.trajectory import Turn

IGNORE_INDEX = -100

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Llama-2 chat layout: "<s>[INST] user [/INST] reply </s><s>[INST] ...", a system message folded into the
# first user turn between <<SYS>> markers.
LLAMA2_TEMPLATE = (
    "{% set ns = namespace(system='') %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}"
    "{% set ns.system = '<<SYS>>\n' + message['content'] + '\n<</SYS>>\n\n' %}"
    "{% elif message['role'] == 'user' %}"
    "{{ (bos_token or '') + '[INST] ' + ns.system + message['content'] + ' [/INST]' }}{% set ns.system = '' %}"
    "{% else %}"
    "{{ ' ' + message['content'] + ' ' + (eos_token or '') }}"
    "{% endif %}"
    "{% endfor %}"
)

TEMPLATES = {"chatml": CHATML_TEMPLATE, "llama2": LLAMA2_TEMPLATE}
#: the fallbacks' earlier texts, which models trained before hold: known by name all the same
_EARLIER_TEMPLATES = {
    LLAMA2_TEMPLATE.replace("(bos_token or '')", "bos_token").replace("(eos_token or '')", "eos_token"): "llama2",
}


def template_name(template: str | None) -> str | None:
    """``"chatml"`` / ``"llama2"`` where ``template`` is that fallback's text (as training saves it with the
    model), else ``None``."""
    known = {text: name for name, text in TEMPLATES.items()} | _EARLIER_TEMPLATES
    return known.get(template) if isinstance(template, str) else None
ROLES = {"human": "user", "gpt": "assistant", "system": "system"}


class TemplateError(ValueError):
    """The chat template cannot be used for masked training (it is not prefix-stable)."""


def fallback_format(tokenizer) -> str:
    """The template a tokenizer without its own gets: ``"chatml"`` when its vocabulary has ``<|im_start|>``,
    else ``"llama2"`` (one rule for training and the agent, so a model is prompted as it was trained)."""
    return "chatml" if "<|im_start|>" in tokenizer.get_vocab() else "llama2"


def resolve_chat_template(tokenizer, template: str = "auto") -> str:
    """The Jinja chat template to use.

    ``"auto"``: the tokenizer's own template, else ChatML when the vocabulary has ``<|im_start|>``, else
    Llama-2.  ``"model"``: the tokenizer's own (an error if it has none).  ``"chatml"`` / ``"llama2"``: that
    fallback.  Anything else is taken as a Jinja template itself.
    """
    own = getattr(tokenizer, "chat_template", None)
    if isinstance(own, dict):  # several named templates: the default one
        own = own.get("default")
    if template == "auto":
        return own or TEMPLATES[fallback_format(tokenizer)]
    if template == "model":
        if not own:
            raise TemplateError("the tokenizer has no chat template: use template 'chatml' or 'llama2'")
        return own
    if template in TEMPLATES:
        return TEMPLATES[template]
    if "{%" in template or "{{" in template:
        return template
    raise ValueError(f"unknown chat template {template!r}: use auto, model, chatml, llama2 or a Jinja template")


def set_chat_template(tokenizer, template: str = "auto") -> str:
    """Resolve the template and store it on the tokenizer, so ``save_pretrained`` keeps it for inference."""
    tokenizer.chat_template = resolve_chat_template(tokenizer, template)
    return tokenizer.chat_template


def to_messages(turns: Sequence[Turn]) -> list[dict[str, str]]:
    """AgentTraj turns as chat messages (``human`` -> ``user``, ``gpt`` -> ``assistant``)."""
    return [{"role": ROLES.get(t.role, t.role), "content": t.value} for t in turns]


def _render(tokenizer, messages: list[dict[str, str]], generation_prompt: bool = False) -> str:
    from jinja2.exceptions import TemplateError as JinjaError

    if not messages:
        return ""
    try:
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)
    except JinjaError as exc:  # the template's own raise_exception: Gemma's, Mistral's
        fold = "fold the system text into the first human turn, or " if any(m["role"] == "system" for m in messages) else ""
        raise TemplateError(
            f"the model's chat template refuses this conversation ({exc}): {fold}train with --template chatml or llama2"
        ) from None


def render_with_spans(tokenizer, turns: Sequence[Turn]) -> tuple[str, list[tuple[int, int]], list[int]]:
    """Render a conversation and locate its turns in the text.

    Returns ``(text, trained_spans, turn_ends)``: the rendered text, the ``[start, end)`` character spans
    that carry loss (one per trained turn: its content and end-of-turn marker, without its role header or
    trailing whitespace), and the character offset where each turn's text ends.
    """
    text, spans, _, ends = _render_spans(tokenizer, turns)
    return text, spans, ends


def _render_spans(
    tokenizer, turns: Sequence[Turn], focus: re.Pattern | None = None, closing: str = ""
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]], list[int]]:
    """:func:`render_with_spans`, and with ``focus`` the trained spans narrowed (third item): each to the
    part of the turn's content after the pattern's last match, without the end-of-turn marker (the whole
    content where nothing matches).  ``closing``: what the template writes after the last turn only (Phi-3's
    EOS), left out of every render."""
    messages = to_messages(turns)
    spans: list[tuple[int, int]] = []
    focused: list[tuple[int, int]] = []
    ends: list[int] = []
    previous = ""
    for i, turn in enumerate(turns):
        text = _render(tokenizer, messages[: i + 1]).removesuffix(closing)
        if not text.startswith(previous):
            eos = tokenizer.eos_token or ""
            if not closing and eos and previous.endswith(eos) and text.startswith(previous.removesuffix(eos)):
                return _render_spans(tokenizer, turns, focus, closing=eos)  # EOS closes the conversation only
            raise TemplateError(
                f"the chat template is not prefix-stable: rendering turn {i} changes the text of earlier turns; "
                "train with template 'chatml' or 'llama2', or a template that renders past turns unchanged"
            )
        if turn.trains():
            start = len(previous)
            header = _render(tokenizer, messages[:i], generation_prompt=True) if turn.role == "gpt" and i else ""
            # the role header the generation prompt holds: the part of it the turn's text repeats (a prompt may
            # open more than the header, as DeepSeek-R1's "<think>\n")
            repeated = os.path.commonprefix([header[start:], text[start:]]) if text.startswith(header[:start]) else ""
            if repeated:
                start += len(repeated)
            else:  # no generation prompt holds its header (a first turn, a flagged observation): the content
                content = text.find(turn.value.strip(), start)
                if content >= 0:
                    # with the spaces before it, which word-initial tokens ("▁Your") carry
                    start = max(start, len(text[:content].rstrip(" ")))
            end = len(text.rstrip())
            if end > start:
                spans.append((start, end))
            if focus is not None:
                first, last = _focus(text, start, end, turn.value.strip(), focus)
                if last > first:
                    focused.append((first, last))
        ends.append(len(text))
        previous = text
    return previous, spans, focused, ends


@dataclass
class EncodedConversation:
    """One tokenized conversation.  ``labels[j]`` is ``input_ids[j]`` where token ``j`` carries loss,
    ``-100`` elsewhere (the shift for next-token prediction happens in the loss)."""

    input_ids: list[int]
    labels: list[int]
    #: trailing turns removed so the conversation fits ``max_length``
    dropped_turns: int = 0
    #: with ``focus``: the labels of each trained turn's content after its last ``focus`` match only
    focus_labels: list[int] | None = None

    @property
    def num_trained(self) -> int:
        return sum(label != IGNORE_INDEX for label in self.labels)


def _labels(
    ids: list[int], offsets: list[tuple[int, int]], spans: list[tuple[int, int]], overlap: bool = False
) -> list[int]:
    """``ids`` where a token starts inside one of the sorted character ``spans`` (with ``overlap``: has a
    character in one), -100 elsewhere."""
    labels = [IGNORE_INDEX] * len(ids)
    span_idx = 0
    for j, (start, stop) in enumerate(offsets):
        while span_idx < len(spans) and start >= spans[span_idx][1]:
            span_idx += 1
        if span_idx == len(spans):
            break
        first, end = spans[span_idx]
        if stop > start and (first <= start < end or (overlap and start < end and stop > first)):
            labels[j] = ids[j]
    return labels


def encode_conversation(
    tokenizer,
    conversations: Sequence[Turn] | Sequence[dict[str, Any]],
    max_length: int | None = None,
    focus: re.Pattern | None = None,
) -> EncodedConversation | None:
    """Tokenize one conversation with its loss mask; ``None`` when nothing trainable fits in ``max_length``.

    The tokenizer must be a fast tokenizer (it reports character offsets) with a chat template set
    (see :func:`set_chat_template`).  Whatever follows the last trained turn is left out: it carries no loss.
    ``focus`` (e.g. :data:`agentenv.react.ACTION_MARKER`) also fills ``focus_labels``: the trained turns'
    tokens after the pattern's last match in each turn, without the end-of-turn marker (the action line of
    a ReAct reply).
    """
    turns = conversation_turns(conversations)
    text, spans, focused, ends = _render_spans(tokenizer, turns, focus)
    if not spans:
        return None
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    labels = _labels(ids, offsets, spans)

    # token count at the end of each turn: the number of tokens that start before the turn's end
    starts = [start for start, _ in offsets]
    token_ends = [_count_below(starts, end) for end in ends]
    trained_turns = [i for i, t in enumerate(turns) if t.trains()]
    keep = next(
        (i for i in reversed(trained_turns) if max_length is None or token_ends[i] <= max_length),
        None,
    )
    if keep is None:
        return None
    n = token_ends[keep]
    encoded = EncodedConversation(ids[:n], labels[:n], dropped_turns=sum(1 for i in trained_turns if i > keep))
    if focus is not None:
        # overlap: a word's token may start on the space before it ("[/INST] move left")
        encoded.focus_labels = _labels(ids, offsets, focused, overlap=True)[:n]
    return encoded if encoded.num_trained else None


def _focus(text: str, start: int, end: int, content: str, focus: re.Pattern) -> tuple[int, int]:
    """Where ``content`` (a turn's) lies in ``text[start:end]``, from the end of ``focus``'s last match in
    it; the span unchanged where the template changed the content beyond finding."""
    at = text.find(content, start, end) if content else -1
    if at < 0:
        return start, end
    matches = list(focus.finditer(content))
    return at + (matches[-1].end() if matches else 0), at + len(content)


def _count_below(sorted_values: list[int], limit: int) -> int:
    import bisect

    return bisect.bisect_left(sorted_values, limit)


@dataclass
class EncodeStats:
    """What tokenization did to a dataset."""

    conversations: int = 0
    kept: int = 0
    #: conversations dropped because no trained turn fits ``max_length`` (or none has loss)
    dropped: int = 0
    #: conversations that lost trailing trained turns to ``max_length``
    truncated: int = 0
    dropped_turns: int = 0
    tokens: int = 0
    trained_tokens: int = 0

    def report(self) -> str:
        lost = []
        if self.dropped:
            lost.append(f"{self.dropped} dropped: no trained turn fits")
        if self.truncated:
            lost.append(f"{self.truncated} cut short by {self.dropped_turns} trained turns")
        return (f"{self.kept}/{self.conversations} conversations kept" + (f" ({'; '.join(lost)})" if lost else "")
                + f"; {self.tokens:,} tokens, {self.trained_tokens:,} trained")


def tokenize_dataset(dataset, tokenizer, max_length: int | None = None, num_proc: int | None = None):
    """Tokenize a trajectory dataset (``conversations`` column) into ``input_ids`` / ``labels``.

    Returns ``(tokenized_dataset, EncodeStats)``; dropped conversations are removed, and the stats count
    them and the truncated ones (BC prints their report).
    """

    def encode_batch(batch: dict[str, list]) -> dict[str, list]:
        out: dict[str, list] = {"input_ids": [], "labels": [], "dropped_turns": [], "keep": []}
        for conv in batch["conversations"]:
            enc = encode_conversation(tokenizer, conv, max_length)
            out["input_ids"].append(enc.input_ids if enc else [])
            out["labels"].append(enc.labels if enc else [])
            out["dropped_turns"].append(enc.dropped_turns if enc else 0)
            out["keep"].append(enc is not None)
        return out

    from datasets import Features, Sequence, Value

    # typed up front: a batch of dropped conversations alone (empty lists) would make the columns lists of
    # nulls, into which the next batch's ids do not cast
    ids = Sequence(Value("int64"))
    features = Features({"input_ids": ids, "labels": ids, "dropped_turns": Value("int64"), "keep": Value("bool")})
    tokenized = dataset.map(
        encode_batch, batched=True, num_proc=num_proc, remove_columns=dataset.column_names, features=features,
        desc="tokenizing",
    )
    stats = EncodeStats(conversations=len(tokenized))
    keep = tokenized["keep"]
    dropped_turns = tokenized["dropped_turns"]
    stats.kept = sum(keep)
    stats.dropped = stats.conversations - stats.kept
    stats.truncated = sum(1 for k, d in zip(keep, dropped_turns, strict=True) if k and d)
    stats.dropped_turns = sum(d for k, d in zip(keep, dropped_turns, strict=True) if k)
    tokenized = tokenized.filter(lambda k: k, input_columns="keep").remove_columns(["keep", "dropped_turns"])
    for labels in tokenized["labels"]:
        stats.tokens += len(labels)
        stats.trained_tokens += sum(label != IGNORE_INDEX for label in labels)
    return tokenized, stats


def pack_examples(examples: Sequence[dict[str, list[int]]], max_length: int) -> list[dict[str, list[int]]]:
    """Pack tokenized conversations into sequences of at most ``max_length`` tokens (first-fit decreasing).

    Each packed row carries ``position_ids`` that restart at 0 for each conversation; the trainers pass
    them without an attention mask, so transformers keeps the conversations of a row apart.  Rows hold what
    the examples hold: lists, or ``array``s of their type code (BC's, 4 bytes a token).
    """
    order = sorted(range(len(examples)), key=lambda i: -len(examples[i]["input_ids"]))
    bins: list[list[int]] = []
    room: list[int] = []
    for i in order:
        n = len(examples[i]["input_ids"])
        if n > max_length:
            raise ValueError(f"example {i} has {n} tokens > max_length {max_length}: tokenize with max_length first")
        slot = next((b for b, free in enumerate(room) if free >= n), None)
        if slot is None:
            bins.append([])
            room.append(max_length)
            slot = len(bins) - 1
        bins[slot].append(i)
        room[slot] -= n
    packed = []
    first = examples[0]["input_ids"] if examples else []
    empty = (lambda: array(first.typecode)) if isinstance(first, array) else list
    for members in bins:
        row: dict[str, list[int]] = {"input_ids": empty(), "labels": empty(), "position_ids": empty()}
        for i in sorted(members):
            ids = examples[i]["input_ids"]
            row["input_ids"].extend(ids)
            row["labels"].extend(examples[i]["labels"])
            row["position_ids"].extend(range(len(ids)))
        packed.append(row)
    return packed


@dataclass
class DataCollator:
    """Right-pads a list of examples into a batch of tensors (``labels`` padded with -100)."""

    pad_token_id: int
    #: pad lengths up to a multiple of this (8 helps tensor cores on GPU)
    pad_to_multiple_of: int | None = None

    def __call__(self, examples: Sequence[dict[str, list[int]]]):
        import torch

        longest = max(len(e["input_ids"]) for e in examples)
        if self.pad_to_multiple_of:
            m = self.pad_to_multiple_of
            longest = (longest + m - 1) // m * m
        batch = {
            "input_ids": torch.full((len(examples), longest), self.pad_token_id, dtype=torch.long),
            "labels": torch.full((len(examples), longest), IGNORE_INDEX, dtype=torch.long),
            "attention_mask": torch.zeros((len(examples), longest), dtype=torch.long),
        }
        packed = all("position_ids" in e for e in examples)
        if packed:
            batch["position_ids"] = torch.zeros((len(examples), longest), dtype=torch.long)
        for row, e in enumerate(examples):
            n = len(e["input_ids"])
            batch["input_ids"][row, :n] = torch.tensor(e["input_ids"])
            batch["labels"][row, :n] = torch.tensor(e["labels"])
            batch["attention_mask"][row, :n] = 1
            if packed:
                batch["position_ids"][row, :n] = torch.tensor(e["position_ids"])
        return batch
