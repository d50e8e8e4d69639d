"""How many rows one forward pass of ``hf:`` takes, and how rows are cut into length buckets.

``auto`` on CPUs: KV rows that fit in a quarter of the available memory, at most ``AUTO_MAX_BATCH``. ``auto`` on GPUs: no fixed cap; what
fits in the free device memory, counting each row's KV cache, its activations while its suffix is
prefilled, its last-position logits, and the held prefix caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

AUTO_KV_BUDGET_BYTES = 2 << 30  # "auto" batch size on CPUs where the free memory is unknown
CPU_MEMORY_FRACTION = 0.25  # share of the available memory "auto" may plan KV rows for on CPUs
AUTO_MAX_BATCH = 64  # CPUs only; on GPUs "auto" is bounded by free device memory alone
GPU_MEMORY_FRACTION = 0.8  # share of the free device memory "auto" may plan for
# Cost of one extra forward pass, in prompt-token equivalents, when choosing length buckets.
FORWARD_OVERHEAD_TOKENS_CPU = 16
FORWARD_OVERHEAD_TOKENS_GPU = 256


def forward_overhead(device: Any) -> int:
    return FORWARD_OVERHEAD_TOKENS_GPU if device.type == "cuda" else FORWARD_OVERHEAD_TOKENS_CPU


def kv_bytes_per_token(model: Any) -> int:
    """Bytes of key/value cache one token takes across all layers."""
    cfg = model.config.get_text_config(decoder=True)
    layers = getattr(cfg, "num_hidden_layers", 24)
    heads = getattr(cfg, "num_key_value_heads", None) or getattr(cfg, "num_attention_heads", 16)
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return 2 * layers * heads * head_dim * model.dtype.itemsize


def batch_limit(model: Any, device: Any, batch_size: int | str, total_len: int, width: int | None = None,
                held_prefix_tokens: int = 0) -> int:
    """Rows per batch: ``batch_size`` when it is a number, else the ``auto`` rule (module doc).
    ``total_len``: tokens of a row's KV cache; ``width``: its suffix tokens prefilled at once."""
    if batch_size != "auto":
        return int(batch_size)
    kv_per_token = kv_bytes_per_token(model)
    per_row = kv_per_token * max(total_len, 1)
    if device.type != "cuda":
        budget = cpu_kv_budget() - kv_per_token * held_prefix_tokens
        return max(1, min(AUTO_MAX_BATCH, budget // per_row))
    import torch

    cfg = model.config.get_text_config(decoder=True)
    itemsize = model.dtype.itemsize
    width = max(width or total_len, 1)
    hidden = cfg.hidden_size
    inter = getattr(cfg, "intermediate_size", 4 * hidden)
    per_row += width * (4 * hidden + 3 * inter) * itemsize  # activations of one layer's forward
    per_row += width * cfg.num_attention_heads * total_len * 4  # attention scores, if materialised
    per_row += cfg.vocab_size * (itemsize + 4)  # last-position logits and their argmax input
    free, _ = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    budget = int(free * GPU_MEMORY_FRACTION) - kv_per_token * held_prefix_tokens
    return max(1, budget // per_row)


def cpu_kv_budget() -> int:
    """Bytes of KV cache "auto" plans for on a CPU: a share of the available memory (Linux
    /proc/meminfo), else ``AUTO_KV_BUDGET_BYTES``."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            kib = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return AUTO_KV_BUDGET_BYTES
    return int(kib * 1024 * CPU_MEMORY_FRACTION)


def length_buckets(seqs: Sequence[Sequence[int]], prefix_of: dict[int, int], members: list[int],
                   step_overhead: int, limit: int) -> list[list[int]]:
    """Split members (sorted by suffix length) into batches of at most ``limit`` rows, minimising
    padded suffix tokens plus ``step_overhead`` token equivalents per batch, by dynamic
    programming over the split points."""
    ordered = sorted(members, key=lambda i: (len(seqs[i]) - prefix_of[i], i))
    lengths = [len(seqs[i]) - prefix_of[i] for i in ordered]
    n = len(ordered)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(max(0, j - limit), j):
            cost = best[i] + (j - i) * lengths[j - 1] + step_overhead
            if cost < best[j]:
                best[j], cut[j] = cost, i
    batches, j = [], n
    while j > 0:
        batches.append(ordered[cut[j]:j])
        j = cut[j]
    return batches[::-1]
