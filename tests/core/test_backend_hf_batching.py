"""Cross-context batches in the HF backend: rows of different contexts (different prefix lengths,
and rows without a shared prefix) decode together, each from its own context's prefix cache, and
give exactly the naive outputs in fp32."""

from __future__ import annotations

import pytest

from framebench.backends.base import Decoding
from framebench.backends.hf import HFBackend
from framebench.backends.kv_cache import cache_kwarg
from framebench.backends.prefix_groups import group_by_shared_prefix

CONTEXTS = [
    "The tenant sued the landlord. The bank charged an overdraft fee. The robot placed the cup on the table.",
    "A patient presented with fever and cough. Consider the relevant moral principles before you answer. "
    "The tenant sued the landlord because the bank charged an overdraft fee.",
    "The robot placed the cup on the table. Should you act or not act?",
]
QUESTIONS = ["Is the answer yes or no?", "Should you act or not act?", "Yes", "The bank charged a fee?",
             "Answer with A, B, C or D. The tenant sued the landlord."]
LONERS = ["Yes", "No or yes?", "Answer with A, B, C or D."]  # share no long prefix with anything


def _chats():
    chats = [[{"role": "user", "content": f"{c}\n\n{q}"}] for c in CONTEXTS for q in QUESTIONS]
    chats += [[{"role": "user", "content": q}] for q in LONERS]
    # interleave contexts so input order says nothing about grouping
    return chats[::2] + chats[1::2]


@pytest.fixture(scope="module")
def varied_dir(tiny_llama_dir, tmp_path_factory):
    from text_helpers import make_varied_model

    return make_varied_model(tiny_llama_dir, tmp_path_factory.mktemp("varied-mix"))


@pytest.fixture(scope="module")
def mixed(varied_dir):
    return HFBackend(str(varied_dir), batch_size="auto", mix_contexts=True)


@pytest.fixture(scope="module")
def naive(mixed):
    return mixed.generate_naive(_chats(), Decoding(max_new_tokens=10))


def _groups(backend, chats):
    seqs = [backend.encode(c) for c in chats]
    return seqs, group_by_shared_prefix(seqs)


def test_workload_has_several_prefix_lengths_and_plain_rows(mixed):
    _, groups = _groups(mixed, _chats())
    prefix_lengths = sorted(p for p, _ in groups)
    assert prefix_lengths[0] == 0  # the loners: rows without a prefix
    assert len(set(prefix_lengths[1:])) == len(CONTEXTS)  # one distinct prefix length per context


@pytest.mark.parametrize("batch_size", [3, 7, "auto"])
def test_cross_context_batches_equal_naive(mixed, naive, batch_size):
    chats = _chats()
    seqs, groups = _groups(mixed, chats)
    group_of = {i: g for g, (_, members) in enumerate(groups) for i in members}
    prefix_of = {i: p for p, members in groups for i in members}
    batches: list[list[int]] = []
    mixed.batch_size = batch_size
    out = mixed.generate(chats, Decoding(max_new_tokens=10), on_batch=lambda idx, _texts: batches.append(idx))
    assert out == naive
    assert len(set(naive)) > len(chats) // 2  # the continuations depend on the prompt
    # the batches really mix contexts with different prefix lengths (and prefix-less rows)
    assert any(len({prefix_of[i] for i in b}) >= 2 for b in batches)
    assert any(len({group_of[i] for i in b}) >= 3 for b in batches) or batch_size == 3
    assert sorted(i for b in batches for i in b) == list(range(len(chats)))


def test_cross_context_with_stop_strings_and_sparse_host_checks(mixed, naive, monkeypatch):
    """The GPU schedule (finished rows leave only at every k-th step) changes no output."""
    chats = _chats()
    stop = next(ch for text in naive for ch in text if ch.strip())
    decoding = Decoding(max_new_tokens=10, stop=(stop,))
    expected = mixed.generate_naive(chats, decoding)
    assert any(len(a) < len(b) for a, b in zip(expected, naive, strict=True))
    mixed.batch_size = "auto"
    for every in (1, 3):
        monkeypatch.setattr(mixed, "_sync_every", lambda every=every: every)
        assert mixed.generate(chats, decoding) == expected


def test_cross_context_sampling_path_at_near_zero_temperature(mixed, naive):
    """Sampling goes through transformers' generate with the same left-padded prefix caches; at a
    temperature near zero it must reproduce greedy decoding."""
    mixed.batch_size = "auto"
    out = mixed.generate(_chats(), Decoding(max_new_tokens=10, temperature=1e-6))
    assert out == naive


def test_mixed_batches_feed_each_prefix_once(mixed, monkeypatch):
    """Each context's prefix is prefilled once (batch 1); suffix forwards carry several contexts."""
    calls = []
    original = mixed.model.forward

    def spy(*args, **kwargs):
        ids, mask = kwargs.get("input_ids"), kwargs.get("attention_mask")
        cache = kwargs.get(cache_kwarg(mixed.model))
        calls.append((tuple(ids.shape), 0 if cache is None else cache.get_seq_length(),
                      None if mask is None else mask[:, 0].tolist()))
        return original(*args, **kwargs)

    monkeypatch.setattr(mixed.model, "forward", spy)
    mixed.batch_size = "auto"
    mixed.generate(_chats(), Decoding(max_new_tokens=2))
    prefills = [c for c in calls if c[1] == 0 and c[2] is None]
    assert len(prefills) == len(CONTEXTS) and all(shape[0] == 1 for shape, _, _ in prefills)
    suffix = [c for c in calls if c[2] is not None and c[0][1] > 1]
    # a suffix forward whose rows start with prefix padding (mask 0) next to rows that do not
    assert any(0 in first and 1 in first for _, _, first in suffix)


def test_cpu_default_mixes_contexts(varied_dir):
    backend = HFBackend(str(varied_dir), batch_size="auto")
    assert backend.device.type == "cpu" and backend._mixes_contexts()
    chats = _chats()
    _, groups = _groups(backend, chats)
    group_of = {i: g for g, (_, members) in enumerate(groups) for i in members}
    batches: list[list[int]] = []
    outputs = backend.generate(chats, Decoding(max_new_tokens=3), on_batch=lambda idx, _t: batches.append(idx))
    assert any(len({group_of[i] for i in b}) > 1 for b in batches)
    assert outputs == backend.generate_naive(chats, Decoding(max_new_tokens=3))


def test_mix_contexts_off_keeps_per_group_batches(varied_dir):
    backend = HFBackend(str(varied_dir), batch_size="auto", mix_contexts=False)
    assert not backend._mixes_contexts()
    chats = _chats()
    _, groups = _groups(backend, chats)
    group_of = {i: g for g, (_, members) in enumerate(groups) for i in members}
    batches: list[list[int]] = []
    backend.generate(chats, Decoding(max_new_tokens=3), on_batch=lambda idx, _t: batches.append(idx))
    assert all(len({group_of[i] for i in b}) == 1 for b in batches)


def test_gpu_auto_batch_has_no_fixed_cap_and_follows_free_memory(mixed, monkeypatch):
    import torch

    free = {"bytes": 80 << 30}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free["bytes"], 141 << 30))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 0)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: 0)
    monkeypatch.setattr(mixed, "device", torch.device("cuda"))
    mixed.batch_size = "auto"
    # tiny Llama: 2 layers x 2 kv heads x head_dim 16 x (key + value) x 4 bytes (fp32)
    assert mixed.kv_bytes_per_token() == 2 * 2 * 16 * 2 * 4
    cfg = mixed.model.config
    total, width = 600, 40
    per_row = (512 * total + width * (4 * cfg.hidden_size + 3 * cfg.intermediate_size) * 4
               + width * cfg.num_attention_heads * total * 4 + cfg.vocab_size * 8)
    assert mixed._batch_limit(total, width) == int((80 << 30) * 0.8) // per_row
    assert mixed._batch_limit(total, width) > 64
    free["bytes"] = 1 << 20
    assert mixed._batch_limit(total, width) == 1
    mixed.device = torch.device("cpu")
    assert mixed._batch_limit(total, width) == 64  # the CPU rule is unchanged


def test_cpu_auto_batch_follows_available_memory(mixed, monkeypatch):
    from framebench.backends import batch_sizing

    per_token = mixed.kv_bytes_per_token()
    monkeypatch.setattr(batch_sizing, "cpu_kv_budget", lambda: 1000 * per_token + 5)
    assert mixed._batch_limit(100) == 10  # 1000 tokens' worth of rows of 100 tokens
    # the prefix caches held meanwhile come out of the same budget: 800 tokens left
    assert batch_sizing.batch_limit(mixed.model, mixed.device, "auto", 100, held_prefix_tokens=200) == 8
    monkeypatch.setattr(batch_sizing, "cpu_kv_budget", lambda: 10**15)
    assert mixed._batch_limit(100) == batch_sizing.AUTO_MAX_BATCH
