"""KV caches for batched decoding from shared prefixes, over transformers' cache classes.

Public transformers APIs do most of it (``DynamicCache(config=...)``, ``batch_repeat_interleave``,
``batch_select_indices``, ``crop``). Two things differ across the supported transformers range,
each behind one adapter here (tested under both ends of the range in CI):

* the name under which a model's ``forward`` / ``generate`` takes the cache: ``cache`` (5.2x,
  ``past_key_values`` deprecated) or ``past_key_values`` (5.19). Passing the wrong one is
  silently swallowed by ``**kwargs`` and the cache stays empty, so it is looked up per model
  (``cache_kwarg``), never guessed;
* the layout of a full-attention layer (``DynamicLayer``): ``keys`` / ``values`` tensors of shape
  ``[batch, kv_heads, tokens, head_dim]``, ``is_initialized``, ``device`` and ``dtype``. The same in
  5.19 and 5.24; ``check_layer_layout`` verifies it on the installed version before a batch cache
  is assembled from layer tensors, and ``ReservedLayer`` subclasses it.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Sequence
from typing import Any

LAYOUT_ERROR = ("this transformers version lays out DynamicLayer differently from what framebench "
                "supports (keys/values tensors [batch, heads, tokens, head_dim])")


@functools.cache
def _cache_kwarg_of(forward_type: type) -> str:
    params = inspect.signature(forward_type.forward).parameters
    if "cache" in params:
        return "cache"
    if "past_key_values" in params:
        return "past_key_values"
    raise RuntimeError(f"{forward_type.__name__}.forward takes neither 'cache' nor 'past_key_values'")


def cache_kwarg(model: Any) -> str:
    """The keyword ``model.forward`` (and ``model.generate``) takes its KV cache under."""
    return _cache_kwarg_of(type(model))


def with_cache(model: Any, cache: Any) -> dict[str, Any]:
    """``{name: cache}`` to pass to ``model(...)`` or ``model.generate(...)``."""
    return {cache_kwarg(model): cache}


def new_cache(model: Any):
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def full_attention(model: Any) -> bool:
    """Whether every cache layer of the model is a plain full-attention ``DynamicLayer`` (rows of
    different prefixes can then share a batch, each left-padded)."""
    from transformers.cache_utils import DynamicLayer

    return all(type(layer) is DynamicLayer for layer in new_cache(model).layers)


@functools.cache
def check_layer_layout() -> None:
    """The ``DynamicLayer`` attributes batch caches are built from, checked once per process."""
    import torch
    from transformers.cache_utils import DynamicLayer

    layer = DynamicLayer()
    keys = torch.zeros((2, 3, 5, 4))
    layer.update(keys, keys.clone())
    ok = (getattr(layer, "is_initialized", False) and isinstance(getattr(layer, "keys", None), torch.Tensor)
          and tuple(layer.keys.shape) == (2, 3, 5, 4) and layer.get_seq_length() == 5
          and hasattr(layer, "device"))
    if not ok:
        raise RuntimeError(LAYOUT_ERROR)


def prefill(model: Any, prefix_ids: list[int], device: Any):
    """Run one shared prefix through the model; returns its cache (batch of 1)."""
    import torch

    cache = new_cache(model)
    ids = torch.tensor([prefix_ids], device=device)
    model(input_ids=ids, use_cache=True, logits_to_keep=1, **with_cache(model, cache))
    return cache


def repeated(cache: Any, rows: int):
    """A copy of a batch-1 cache repeated for ``rows`` rows."""
    out = copy.deepcopy(cache)
    if rows > 1:
        out.batch_repeat_interleave(rows)
    return out


@functools.cache
def reserved_layer_class():
    from transformers.cache_utils import DynamicLayer

    class ReservedLayer(DynamicLayer):
        """A full-attention cache layer over a buffer with room for the tokens still to come:
        ``update`` writes in place (a view grows) instead of concatenating the whole cache each step."""

        _layer_type = None  # never registered as a layer type

        def __init__(self, keys, values, length: int):
            super().__init__()
            self._keys, self._values = keys, values
            self.device, self.dtype, self.is_initialized = keys.device, keys.dtype, True
            self.keys, self.values = keys[:, :, :length], values[:, :, :length]

        def update(self, key_states, value_states, *args, **kwargs):
            start = self.keys.shape[-2]
            end = start + key_states.shape[-2]
            if end > self._keys.shape[-2]:  # out of room: grow (not expected when sized right)
                extra = end - self._keys.shape[-2]
                self._keys = cat_zeros(self._keys, extra)
                self._values = cat_zeros(self._values, extra)
            self._keys[:, :, start:end] = key_states
            self._values[:, :, start:end] = value_states
            self.keys, self.values = self._keys[:, :, :end], self._values[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices) -> None:
            length = self.keys.shape[-2]
            self._keys, self._values = self._keys[indices], self._values[indices]
            self.keys, self.values = self._keys[:, :, :length], self._values[:, :, :length]

        def batch_repeat_interleave(self, repeats: int) -> None:
            length = self.keys.shape[-2]
            self._keys = self._keys.repeat_interleave(repeats, dim=0)
            self._values = self._values.repeat_interleave(repeats, dim=0)
            self.keys, self.values = self._keys[:, :, :length], self._values[:, :, :length]

    return ReservedLayer


def cat_zeros(buffer, extra: int):
    """``buffer`` with ``extra`` zero slots appended along the sequence axis."""
    import torch

    pad = buffer.new_zeros(buffer.shape[:2] + (extra,) + buffer.shape[3:])
    return torch.cat([buffer, pad], dim=-2)


def filled_layer(keys, values):
    from transformers.cache_utils import DynamicLayer

    layer = DynamicLayer()
    layer.update(keys, values)
    return layer


def row_selector(rows: list[int], device: Any):
    """Batch rows as a slice where they are consecutive (a plain copy), else as an index tensor."""
    import torch

    if rows == list(range(rows[0], rows[0] + len(rows))):
        return slice(rows[0], rows[0] + len(rows))
    return torch.tensor(rows, device=device)


def gather_positions(source, index):
    """``source`` (heads, positions, dim) at ``index`` (rows, n): (rows, heads, n, dim). One
    ``index_select`` of whole position vectors (advanced indexing was several times slower)."""
    import torch

    rows, n = index.shape
    picked = torch.index_select(source, 1, index.reshape(-1))
    return picked.view(source.shape[0], rows, n, source.shape[2]).transpose(0, 1)


def kv_shape(model: Any) -> tuple[int, int, int, int]:
    cfg = model.config.get_text_config(decoder=True)
    heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return (1, heads, 0, head_dim)


def batch_cache(model: Any, device: Any, prefixes: dict[int, Any], row_groups: list[int],
                row_prefix: list[int], reserve: int):
    """A cache for one batch: row r holds its group's prefix keys/values, left-padded with zeros
    (attention mask 0) to the batch's longest prefix. With ``reserve`` > 0 every layer gets room
    for that many more tokens, so decoding writes in place instead of concatenating per step."""
    return gathered_cache(model, device, prefixes, row_groups, list(row_prefix), reserve)


def gathered_cache(model: Any, device: Any, sources: dict[Any, Any], row_source: list,
                   row_index: list[int | Sequence[int]], reserve: int):
    """A cache for one batch: row r holds the keys/values of ``sources[row_source[r]]`` (batch 1) at
    ``row_index[r]`` (a length n: its first n positions; or a list of positions, e.g. a prompt's
    path through a packed prefix trie), left-padded (attention mask 0; zeros, or a gathered row's
    first position) to the batch's longest row, with room for ``reserve`` more tokens (see ``batch_cache``)."""
    import torch

    cache = new_cache(model)
    lengths = [k if isinstance(k, int) else len(k) for k in row_index]
    pmax = max(lengths)
    if pmax == 0 and not reserve:
        return cache
    if not full_attention(model):  # sliding-window or other layer kinds: only whole-group batches
        if len(set(row_source)) > 1 and pmax > 0 or any(not isinstance(k, int) for k in row_index):
            raise RuntimeError("mixing prefix groups in one batch needs full-attention cache layers")
        return repeated(sources[row_source[0]], len(row_source)) if pmax > 0 else cache
    check_layer_layout()
    rows_of: dict[Any, list[int]] = {}
    for r, g in enumerate(row_source):
        if lengths[r] > 0:
            rows_of.setdefault(g, []).append(r)
    # per source: (row ids, index [rows, pmax] into the source) or (row ids, a plain length)
    plans: dict[Any, tuple] = {}
    for g, rows in rows_of.items():
        if all(isinstance(row_index[r], int) for r in rows) and len({lengths[r] for r in rows}) == 1:
            plans[g] = (row_selector(rows, device), lengths[rows[0]])
            continue
        # left padding points at the source's first position: finite keys the mask hides
        index = torch.zeros((len(rows), pmax), dtype=torch.long)
        for j, r in enumerate(rows):
            spots = range(row_index[r]) if isinstance(row_index[r], int) else row_index[r]
            index[j, pmax - lengths[r]:] = torch.as_tensor(list(spots), dtype=torch.long)
        plans[g] = (row_selector(rows, device), index.to(device))
    bare = [r for r in range(len(row_source)) if lengths[r] == 0]
    bare_t = torch.tensor(bare, device=device) if bare else None
    reserved = reserved_layer_class()
    batch, room = len(row_source), pmax + reserve
    for layer_idx in range(len(cache.layers)):
        if rows_of:
            ref = sources[next(iter(rows_of))].layers[layer_idx]
            k_shape, v_shape = ref.keys.shape, ref.values.shape
        else:  # no row has a prefix
            k_shape = v_shape = kv_shape(model)
        # uninitialised: the prefix part is written below (its left padding zeroed: masked, but it
        # must be finite), the reserved part before it is read (a layer's view ends at its length)
        keys = torch.empty((batch, k_shape[1], room, k_shape[3]), dtype=model.dtype, device=device)
        values = torch.empty((batch, v_shape[1], room, v_shape[3]), dtype=model.dtype, device=device)
        if bare_t is not None:
            keys[bare_t, :, :pmax] = 0
            values[bare_t, :, :pmax] = 0
        for g, (rows_t, index) in plans.items():
            layer = sources[g].layers[layer_idx]
            if isinstance(index, int):  # the same first ``index`` positions for every row
                keys[rows_t, :, pmax - index:pmax] = layer.keys[:, :, :index].to(keys.dtype)
                values[rows_t, :, pmax - index:pmax] = layer.values[:, :, :index].to(values.dtype)
                if index < pmax:
                    keys[rows_t, :, :pmax - index] = 0
                    values[rows_t, :, :pmax - index] = 0
                continue
            keys[rows_t, :, :pmax] = gather_positions(layer.keys[0], index).to(keys.dtype)
            values[rows_t, :, :pmax] = gather_positions(layer.values[0], index).to(values.dtype)
        cache.layers[layer_idx] = (reserved(keys, values, pmax) if reserve
                                   else filled_layer(keys[:, :, :pmax], values[:, :, :pmax]))
    return cache
