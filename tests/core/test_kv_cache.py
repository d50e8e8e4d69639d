"""The transformers adapters of ``framebench.backends.kv_cache``, each tested on the installed
transformers (CI runs this file under both ends of the supported range: see tests/core/test_engines_range.py)."""

from __future__ import annotations

import pytest

from framebench.backends import kv_cache


class _TakesCache:
    def forward(self, input_ids=None, cache=None, **kwargs): ...


class _TakesPastKeyValues:
    def forward(self, input_ids=None, past_key_values=None, **kwargs): ...


class _TakesNeither:
    def forward(self, input_ids=None, **kwargs): ...


def test_cache_keyword_follows_the_forward_signature():
    assert kv_cache.cache_kwarg(_TakesCache()) == "cache"  # transformers 5.2x
    assert kv_cache.cache_kwarg(_TakesPastKeyValues()) == "past_key_values"  # transformers 5.19
    with pytest.raises(RuntimeError, match="neither"):
        kv_cache.cache_kwarg(_TakesNeither())


@pytest.fixture(scope="module")
def tiny_model(tiny_llama_dir):
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32).eval()


def test_installed_transformers_fills_the_cache_under_that_keyword(tiny_model):
    """A wrong keyword would be swallowed by ``**kwargs`` and leave the cache empty (the 5.19 crash)."""
    import torch

    prefix = list(range(5, 25))
    cache = kv_cache.prefill(tiny_model, prefix, torch.device("cpu"))
    assert cache.get_seq_length() == len(prefix)
    # and the cached prefix gives the logits of the full prompt
    with torch.inference_mode():
        tail = tiny_model(input_ids=torch.tensor([[30, 31]]), use_cache=True,
                          **kv_cache.with_cache(tiny_model, cache)).logits[0, -1]
        full = tiny_model(input_ids=torch.tensor([prefix + [30, 31]])).logits[0, -1]
    assert torch.allclose(tail, full, atol=1e-5)


def test_layer_layout_and_batch_cache_rows(tiny_model):
    """Rows of a batch cache hold their group's prefix keys/values, left-padded with zeros, with
    room reserved for the tokens to come (the installed DynamicLayer layout)."""
    import torch

    kv_cache.check_layer_layout()
    cpu = torch.device("cpu")
    long, short = list(range(5, 25)), list(range(40, 52))
    prefixes = {0: kv_cache.prefill(tiny_model, long, cpu), 1: kv_cache.prefill(tiny_model, short, cpu)}
    cache = kv_cache.batch_cache(tiny_model, cpu, prefixes, [1, 0, 1], [len(short), len(long), len(short)],
                                 reserve=7)
    assert kv_cache.full_attention(tiny_model)
    for layer_idx, layer in enumerate(cache.layers):
        assert layer.keys.shape[-2] == len(long) and layer._keys.shape[-2] == len(long) + 7
        want_long = prefixes[0].layers[layer_idx].keys[0]
        want_short = prefixes[1].layers[layer_idx].keys[0]
        assert torch.equal(layer.keys[1], want_long)
        pad = len(long) - len(short)
        for row in (0, 2):
            assert torch.equal(layer.keys[row, :, pad:], want_short)
            assert not layer.keys[row, :, :pad].any()
    # decoding writes in place: one more token grows the view, not the buffer
    before = cache.layers[0]._keys.data_ptr()
    cache.layers[0].update(torch.ones(3, *cache.layers[0].keys.shape[1:2], 1, cache.layers[0].keys.shape[-1]),
                           torch.ones(3, *cache.layers[0].values.shape[1:2], 1, cache.layers[0].values.shape[-1]))
    assert cache.layers[0].keys.shape[-2] == len(long) + 1 and cache.layers[0]._keys.data_ptr() == before


def test_gathered_rows_of_two_sources_in_any_order(tiny_model):
    """Rows of two sources interleaved, some as a plain length, some as a list of positions (a trie
    path): each row holds exactly its positions' keys/values after its left padding, and the
    padding (masked) is finite: zeros, or a copy of the source's first position."""
    import torch

    cpu = torch.device("cpu")
    sources = {"a": kv_cache.prefill(tiny_model, list(range(5, 17)), cpu),
               "b": kv_cache.prefill(tiny_model, list(range(40, 48)), cpu)}
    row_source = ["b", "a", "b", "a"]
    row_index = [8, [0, 1, 2, 5, 9], [0, 1, 3], 12]
    cache = kv_cache.gathered_cache(tiny_model, cpu, sources, row_source, row_index, reserve=3)
    for layer_idx, layer in enumerate(cache.layers):
        assert layer.keys.shape[-2] == 12 and layer._keys.shape[-2] == 15
        for row, (src, index) in enumerate(zip(row_source, row_index, strict=True)):
            spots = list(range(index)) if isinstance(index, int) else index
            source = sources[src].layers[layer_idx]
            pad = 12 - len(spots)
            assert torch.equal(layer.keys[row, :, pad:], source.keys[0][:, spots])
            assert torch.equal(layer.values[row, :, pad:], source.values[0][:, spots])
        assert torch.isfinite(layer.keys[:, :, :12]).all() and torch.isfinite(layer.values[:, :, :12]).all()
