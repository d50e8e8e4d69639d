"""Grouped-query attention without copied keys on CPUs.

transformers' ``sdpa`` attention repeats every key and value head for each query head of its
group (``repeat_kv``) whenever the attention has a mask and more than one query token, which is
every suffix forward of ``hf:`` (padded rows over a prefix cache). On a CPU that copy of the whole
cache, in every layer, took 17 % of a 64-row suffix forward of SmolLM2-135M; torch's CPU flash
kernel reads the grouped heads itself (``enable_gqa``) with a mask too, bit-identically and 2.7x
faster (docs/speed.md, "Grouped-query attention on CPUs"). CUDA's kernels do not take a mask with
``enable_gqa`` (they fall back to the math kernel), so only CPU models switch.

The switch uses transformers' public attention registry: the function is registered under
``NAME`` with ``sdpa``'s mask, and the model's attention implementation is set to it.
"""

from __future__ import annotations

import functools
from typing import Any

NAME = "framebench_cpu_sdpa"


def grouped_sdpa(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, dropout: float = 0.0,
                 scaling: float | None = None, is_causal: bool | None = None, **kwargs: Any) -> tuple[Any, None]:
    """``sdpa`` attention, with the key/value heads read in place where a mask is given."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    groups = getattr(module, "num_key_value_groups", 1)
    if (attention_mask is None or groups == 1 or query.shape[2] == 1 or query.device.type != "cpu"
            or kwargs.get("position_bias") is not None or kwargs.get("softcap") is not None):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, is_causal=is_causal, **kwargs)
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling, enable_gqa=True)
    return out.transpose(1, 2).contiguous(), None


@functools.cache
def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, grouped_sdpa)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def use_grouped_sdpa(model: Any) -> bool:
    """Switch a CPU model with grouped-query ``sdpa`` attention to ``grouped_sdpa``; True if switched."""
    import torch

    if torch.__version__ < "2.5":  # TorchVersion compares as a version; enable_gqa is new in torch 2.5
        return False
    config = model.config
    heads, kv_heads = getattr(config, "num_attention_heads", None), getattr(config, "num_key_value_heads", None)
    if (model.device.type != "cpu" or getattr(config, "_attn_implementation", None) != "sdpa"
            or not heads or not kv_heads or kv_heads >= heads):
        return False
    _register()
    model.set_attn_implementation(NAME)
    return True
