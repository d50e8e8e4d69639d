"""Grouped-query attention without copied keys on CPUs (framebench/backends/cpu_attention.py): the
same numbers as transformers' own ``sdpa`` for padded batches over a prefix cache, and the switch
only where it applies."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.fast


def _padded_batch_logits(model, cache_tokens: int = 9):
    """Last-position logits of a left-padded batch of three suffixes over one prefix's cache."""
    import torch

    from framebench.backends import kv_cache

    cpu = torch.device("cpu")
    prefix = list(range(5, 5 + cache_tokens))
    cache = kv_cache.gathered_cache(model, cpu, {0: kv_cache.prefill(model, prefix, cpu)}, [0, 0, 0],
                                    [cache_tokens, 4, cache_tokens], reserve=6)
    suffixes = [[30, 31, 32], [40], [50, 51]]
    width = 3
    ids = torch.tensor([[0] * (width - len(s)) + s for s in suffixes])
    mask = torch.tensor([[0] * (cache_tokens - p) + [1] * p + [0] * (width - len(s)) + [1] * len(s)
                         for p, s in zip([cache_tokens, 4, cache_tokens], suffixes, strict=True)])
    positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, cache_tokens:]
    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                     **kv_cache.with_cache(model, cache)).logits[:, -1]


def test_grouped_attention_equals_transformers_sdpa_bit_for_bit(tiny_llama_dir):
    import torch
    from transformers import AutoModelForCausalLM

    from framebench.backends import cpu_attention

    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32).eval()
    assert model.config.num_key_value_heads < model.config.num_attention_heads  # the fixture is grouped
    assert model.config._attn_implementation == "sdpa"
    want = _padded_batch_logits(model)
    assert cpu_attention.use_grouped_sdpa(model)
    assert model.config._attn_implementation == cpu_attention.NAME
    got = _padded_batch_logits(model)
    assert torch.equal(got, want)


def test_the_switch_applies_to_grouped_sdpa_models_on_cpus_only(tiny_llama_dir):
    import torch
    from transformers import AutoModelForCausalLM

    from framebench.backends import cpu_attention

    eager = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32, attn_implementation="eager")
    assert not cpu_attention.use_grouped_sdpa(eager)
    assert eager.config._attn_implementation == "eager"
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32)
    model.config.num_key_value_heads = model.config.num_attention_heads  # as if ungrouped
    assert not cpu_attention.use_grouped_sdpa(model)


def test_hf_backend_uses_it_and_greedy_outputs_equal_the_naive_path(tiny_llama_dir):
    from framebench.backends import cpu_attention
    from framebench.backends.base import Decoding
    from framebench.backends.hf import HFBackend

    backend = HFBackend(str(tiny_llama_dir), device="cpu")
    assert backend.model.config._attn_implementation == cpu_attention.NAME
    chats = [[{"role": "user", "content": f"Context {i % 2}: a b c. Question {i}: yes or no?"}] for i in range(6)]
    decoding = Decoding(max_new_tokens=5)
    assert backend.generate(chats, decoding) == backend.generate_naive(chats, decoding)
