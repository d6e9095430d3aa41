"""The KV cache of one generation batch, kept from round to round.

Per layer, keys and values live in one ``[rows, heads, capacity, dim]`` buffer.  A row's sequence is the
columns where ``real[row]`` is set, in order; every other column is padding that the attention mask
(:meth:`KVBatch.mask`, 4-D, built here) hides and ``position_ids`` skip.  All rows are written in lockstep:
a forward of width ``w`` fills columns ``end .. end+w`` of every row, so a row may hold padding in the
middle (where it had fewer new tokens than others, or had already stopped generating).

That layout lets a batch be reused in place next round: each row drops any cached tail that no longer
matches its conversation (by clearing ``real``) and appends its new tokens at ``end``.  When rows change
too much, the buffer fills up, or too much of it is padding, the agent builds a fresh batch, copying each
row's real columns in, right-aligned (:meth:`KVBatch.build`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers.cache_utils import Cache, DynamicLayer


class BufferLayer(DynamicLayer):
    """One layer's keys and values, written in place into a preallocated buffer (no concatenation)."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.length = 0

    def allocate(self, rows: int, heads: int, dim: int, value_dim: int, dtype: torch.dtype, device) -> None:
        # empty, not zeros: every column is written before it is read, except padding left of a row's
        # copied prefix, which `KVBatch.build` zeroes (masked keys must still be finite: 0 * NaN is NaN)
        self.key_buffer = torch.empty(rows, heads, self.capacity, dim, dtype=dtype, device=device)
        self.value_buffer = torch.empty(rows, heads, self.capacity, value_dim, dtype=dtype, device=device)
        self.dtype, self.device = dtype, device
        self.is_initialized = True

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        rows, heads, _, dim = key_states.shape
        self.allocate(rows, heads, dim, value_states.shape[-1], key_states.dtype, key_states.device)
        self.key_buffer[:, :, : self.length] = 0
        self.value_buffer[:, :, : self.length] = 0

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self.length + key_states.shape[-2]
        self.key_buffer[:, :, self.length : end] = key_states
        self.value_buffer[:, :, self.length : end] = value_states
        self.length = end
        self.keys, self.values = self.key_buffer[:, :, :end], self.value_buffer[:, :, :end]
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.length

    def get_max_length(self) -> int:
        return self.capacity


class KVBatch(Cache):
    """A batch's KV cache plus, per row, its tokens, which columns are real, and their positions."""

    def __init__(self, n_layers: int, rows: int, capacity: int, pad_id: int, device) -> None:
        super().__init__(layers=[BufferLayer(capacity) for _ in range(n_layers)])
        self.capacity = capacity
        self.pad_id = pad_id
        self.tokens = torch.full((rows, capacity), pad_id, dtype=torch.long, device=device)
        self.real = torch.zeros((rows, capacity), dtype=torch.bool, device=device)
        self.positions = torch.zeros((rows, capacity), dtype=torch.long, device=device)
        #: which episode owns each row (None: a free row, fed padding)
        self.owners: list[int | None] = [None] * rows

    @property
    def rows(self) -> int:
        return len(self.owners)

    @property
    def end(self) -> int:
        """Columns written so far (the same for every row and every layer)."""
        return self.layers[0].length

    @classmethod
    def build(
        cls,
        prefixes: Sequence[tuple[list[int], list[torch.Tensor], list[torch.Tensor]] | None],
        n_layers: int,
        capacity: int,
        pad_id: int,
        device,
    ) -> KVBatch:
        """A fresh batch whose row ``b`` starts with ``prefixes[b]`` = (tokens, keys, values per layer,
        each ``[heads, len, dim]``), right-aligned so every row's prefix ends at the same column."""
        width = max((len(p[0]) for p in prefixes if p), default=0)
        batch = cls(n_layers, len(prefixes), capacity, pad_id, device)
        for layer in batch.layers:
            layer.length = width
        sample = next((p for p in prefixes if p and p[0]), None)
        if sample is None:
            return batch  # nothing cached: the layers allocate on the first forward
        for i, layer in enumerate(batch.layers):
            k, v = sample[1][i], sample[2][i]
            layer.allocate(len(prefixes), k.shape[0], k.shape[-1], v.shape[-1], k.dtype, k.device)
        for b, prefix in enumerate(prefixes):
            n = len(prefix[0]) if prefix else 0
            if n:
                batch.tokens[b, width - n : width] = torch.tensor(prefix[0], device=device)
                batch.real[b, width - n : width] = True
                batch.positions[b, width - n : width] = torch.arange(n, device=device)
            for i, layer in enumerate(batch.layers):
                layer.key_buffer[b, :, : width - n] = 0
                layer.value_buffer[b, :, : width - n] = 0
                if n:
                    layer.key_buffer[b, :, width - n : width] = prefix[1][i]
                    layer.value_buffer[b, :, width - n : width] = prefix[2][i]
        return batch

    # --- per-row views ---------------------------------------------------------------------------
    def row_columns(self, row: int) -> torch.Tensor:
        return self.real[row, : self.end].nonzero().flatten()

    def row_tokens(self, row: int) -> list[int]:
        return self.tokens[row, self.row_columns(row)].tolist()

    def row_prefix(self, row: int, n: int) -> tuple[list[int], list[torch.Tensor], list[torch.Tensor]]:
        """The row's first ``n`` cached tokens with their keys and values (copied out of the buffers)."""
        cols = self.row_columns(row)[:n]
        keys = [layer.key_buffer[row][:, cols] for layer in self.layers]
        values = [layer.value_buffer[row][:, cols] for layer in self.layers]
        return self.tokens[row, cols].tolist(), keys, values

    def padding_fraction(self) -> float:
        return 1.0 - float(self.real[:, : self.end].sum()) / max(1, self.rows * self.end)

    # --- writing a round -------------------------------------------------------------------------
    def truncate_row(self, row: int, keep: int) -> None:
        """Forget all but the row's first ``keep`` cached tokens (their columns become padding)."""
        cols = self.row_columns(row)
        self.real[row, cols[keep:]] = False

    def append(self, new_tokens: Sequence[list[int]]) -> tuple[int, int]:
        """Place each row's new tokens so they all end at the same column; return (start, width)."""
        width = max(len(t) for t in new_tokens)
        start = self.end
        for b, tokens in enumerate(new_tokens):
            if not tokens:
                continue
            n_real = int(self.real[b, :start].sum())
            cols = slice(start + width - len(tokens), start + width)
            self.tokens[b, cols] = torch.tensor(tokens, device=self.tokens.device)
            self.real[b, cols] = True
            self.positions[b, cols] = torch.arange(n_real, n_real + len(tokens), device=self.tokens.device)
        return start, width

    def feed(self, column: int, tokens: torch.Tensor, real: torch.Tensor) -> None:
        """Set one generated column: ``tokens`` where ``real``, padding elsewhere."""
        self.tokens[:, column] = torch.where(real, tokens, self.pad_id)
        self.real[:, column] = real
        self.positions[:, column] = self.real[:, :column].sum(1)

    def forward_inputs(self, start: int, width: int, dtype: torch.dtype) -> dict:
        """``input_ids``, ``attention_mask``, ``position_ids`` and the cache for columns ``start..start+width``."""
        return {
            "input_ids": self.tokens[:, start : start + width],
            "attention_mask": self.mask(start, width, dtype),
            "position_ids": self.positions[:, start : start + width],
            "past_key_values": self,
        }

    def mask(self, start: int, width: int, dtype: torch.dtype) -> torch.Tensor:
        """Additive 4-D mask for the queries at ``start..start+width``: a real query sees the real keys at or
        before it; a padding query sees only itself, so no softmax row is ever empty (no NaNs)."""
        end = start + width
        device = self.real.device
        query_cols = torch.arange(start, end, device=device)
        key_cols = torch.arange(end, device=device)
        allowed = self.real[:, None, :end] & (key_cols[None, None, :] <= query_cols[None, :, None])
        allowed[:, torch.arange(width, device=device), query_cols] = True
        mask = torch.zeros(allowed.shape, dtype=dtype, device=device)
        return mask.masked_fill_(~allowed, torch.finfo(dtype).min)[:, None]
