"""The HF backend: shared-prefix reuse and batching give exactly the naive outputs; identity."""

from __future__ import annotations

import shutil

import pytest

from framebench.backends import load_backend
from framebench.backends.base import Decoding
from framebench.backends.hf import HFBackend
from framebench.backends.kv_cache import cache_kwarg
from framebench.backends.prefix_groups import group_by_shared_prefix

CONTEXTS = [
    "The tenant sued the landlord. The bank charged an overdraft fee. The robot placed the cup on the table.",
    "A patient presented with fever and cough. Consider the relevant moral principles before you answer.",
    "The robot placed the cup on the table.",
]
QUESTIONS = ["Is the answer yes or no?", "Should you act or not act?", "Yes", "The bank charged a fee?",
             "Answer with A, B, C or D. The tenant sued the landlord.", "No"]


def _chats():
    return [[{"role": "user", "content": f"{c}\n\n{q}"}] for c in CONTEXTS for q in QUESTIONS]


@pytest.fixture(scope="module")
def varied_dir(tiny_llama_dir, tmp_path_factory):
    from text_helpers import make_varied_model

    return make_varied_model(tiny_llama_dir, tmp_path_factory.mktemp("varied"))


@pytest.fixture(scope="module")
def tiny(varied_dir):
    return HFBackend(str(varied_dir), batch_size="auto")


def test_group_by_shared_prefix_hand_case():
    seqs = [[1, 2, 3, 4, 5, 9], [7, 7], [1, 2, 3, 4, 6], [1, 2, 3, 4, 5, 8, 8], [7, 7, 1]]
    groups = group_by_shared_prefix(seqs, min_prefix=1)
    # [7, 7] must keep one token of suffix, so it shares only [7] with [7, 7, 1]
    assert sorted((p, sorted(m)) for p, m in groups) == [(1, [1, 4]), (4, [0, 2, 3])]
    # one shared token is below the threshold: those rows go without a prefix, in one group
    assert sorted((p, sorted(m)) for p, m in group_by_shared_prefix(seqs, min_prefix=2)) == [
        (0, [1, 4]), (4, [0, 2, 3])]


def test_group_overhead_merges_small_groups_for_long_generations():
    # Pairs sharing 20 tokens: prefix reuse saves 20 tokens a pair, an extra group costs 50.
    seqs = [[k] * 20 + [1, 2] for k in (3, 4, 5)] + [[k] * 20 + [9] for k in (3, 4, 5)]
    cheap = group_by_shared_prefix(seqs, min_prefix=2, group_overhead=5)
    assert sorted((p, sorted(m)) for p, m in cheap) == [(20, [0, 3]), (20, [1, 4]), (20, [2, 5])]
    costly = group_by_shared_prefix(seqs, min_prefix=2, group_overhead=50)
    assert costly == [(0, [0, 1, 2, 3, 4, 5])]


def test_group_keeps_long_prefix_when_a_stranger_shares_only_the_header():
    header, ctx = [9] * 3, list(range(100, 140))
    seqs = [header + ctx + [1], header + ctx + [2, 2], header + [5, 5, 5]]
    groups = {tuple(sorted(m)): p for p, m in group_by_shared_prefix(seqs, min_prefix=2)}
    assert groups == {(0, 1): 43, (2,): 0}


@pytest.fixture(scope="module")
def naive_outputs(tiny):
    return tiny.generate_naive(_chats(), Decoding(max_new_tokens=10))


@pytest.mark.parametrize("batch_size", [1, 4, "auto"])
def test_prefix_reuse_equals_naive_on_tiny_model(tiny, naive_outputs, batch_size):
    chats = _chats()
    naive = naive_outputs
    tiny.batch_size = batch_size
    fast = tiny.generate(chats, Decoding(max_new_tokens=10))
    assert fast == naive
    assert len(set(naive)) == len(chats)  # the model's continuations do depend on the prompt


def test_plain_left_padded_batches_equal_naive(varied_dir, naive_outputs):
    """Without prefix reuse every chat is a full, left-padded row of one batch."""
    plain = HFBackend(str(varied_dir), batch_size=5, prefix_reuse=False)
    assert plain.generate(_chats(), Decoding(max_new_tokens=10)) == naive_outputs


def test_length_buckets_trade_padding_for_passes(tiny):
    seqs = [[1] * 20 + [2] * n for n in (1, 2, 2, 3, 30, 31, 31)]
    buckets = tiny._length_buckets(seqs, 20, list(range(7)), Decoding(max_new_tokens=1), limit=64)
    assert buckets == [[0, 1, 2, 3], [4, 5, 6]]  # short and long suffixes are not padded together
    capped = tiny._length_buckets(seqs, 20, list(range(7)), Decoding(max_new_tokens=1), limit=2)
    assert all(len(b) <= 2 for b in capped) and sorted(i for b in capped for i in b) == list(range(7))


def test_prefix_reuse_really_shares_the_prefix(tiny, monkeypatch):
    """One prefix forward per context; the rest of each prompt is fed as a short suffix."""
    calls = []
    original = tiny.model.forward

    def spy(*args, **kwargs):
        ids = kwargs.get("input_ids")
        cache = kwargs.get(cache_kwarg(tiny.model))
        calls.append((tuple(ids.shape), 0 if cache is None else cache.get_seq_length()))
        return original(*args, **kwargs)

    monkeypatch.setattr(tiny.model, "forward", spy)
    tiny.batch_size = "auto"
    chats = _chats()
    tiny.generate(chats, Decoding(max_new_tokens=2))
    full_lengths = [len(tiny.encode(c)) for c in chats]
    prefix_calls = [c for c in calls if c[1] == 0]
    assert len(prefix_calls) == len(CONTEXTS)  # one prefix pass per context, no full-prompt passes
    assert all(shape[0] == 1 for shape, _ in prefix_calls)
    suffix_calls = [c for c in calls if c[1] > 0 and c[0][1] > 1]
    assert suffix_calls and all(cached >= 16 and cached + shape[1] <= max(full_lengths)
                                for shape, cached in suffix_calls)
    prefilled = sum(shape[0] * shape[1] for shape, _ in prefix_calls + suffix_calls)
    assert prefilled < sum(full_lengths)  # even counting the padding between prefix and suffix


def test_stop_strings_and_prefix_reuse_match_naive(tiny, naive_outputs):
    chats = _chats()[:6]
    naive = naive_outputs[:6]
    stop = next(ch for text in naive for ch in text if ch.strip())  # a character the model does emit
    decoding = Decoding(max_new_tokens=10, stop=(stop,))
    out = tiny.generate(chats, decoding)
    assert out == tiny.generate_naive(chats, decoding)
    assert all(stop not in text for text in out)
    assert any(len(a) < len(b) for a, b in zip(out, naive, strict=True))


def test_greedy_ignores_model_generation_defaults(varied_dir, tmp_path):
    """A sampling-heavy generation_config.json must not change greedy outputs."""
    import json

    shutil.copytree(varied_dir, tmp_path / "m")
    (tmp_path / "m" / "generation_config.json").write_text(json.dumps(
        {"do_sample": True, "temperature": 5.0, "top_k": 3, "repetition_penalty": 3.0,
         "max_new_tokens": 1, "eos_token_id": 2, "pad_token_id": 3}))
    plain = HFBackend(str(varied_dir))
    noisy = HFBackend(str(tmp_path / "m"))
    chats = _chats()[:4]
    assert noisy.generate(chats, Decoding(max_new_tokens=8)) == plain.generate(chats, Decoding(max_new_tokens=8))


def test_fingerprint_tracks_weights_and_template(tiny_llama_dir, tmp_path):
    base = HFBackend(str(tiny_llama_dir))
    shutil.copytree(tiny_llama_dir, tmp_path / "same")
    assert HFBackend(str(tmp_path / "same")).fingerprint() == base.fingerprint()

    shutil.copytree(tiny_llama_dir, tmp_path / "weights")
    from safetensors.torch import load_file, save_file

    path = tmp_path / "weights" / "model.safetensors"
    tensors = load_file(path)
    name = sorted(tensors)[0]
    tensors[name] = tensors[name] + 1.0
    save_file(tensors, path, metadata={"format": "pt"})
    changed = HFBackend(str(tmp_path / "weights"))
    assert changed.weights_hash() != base.weights_hash()
    assert changed.chat_template_hash == base.chat_template_hash

    shutil.copytree(tiny_llama_dir, tmp_path / "template")
    (tmp_path / "template" / "chat_template.jinja").write_text(
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
        "{% if enable_thinking is defined and not enable_thinking %}/no_think{% endif %}")
    templated = HFBackend(str(tmp_path / "template"))
    assert templated.chat_template_hash != base.chat_template_hash
    assert templated.fingerprint() != base.fingerprint()
    assert templated.weights_hash() == base.weights_hash()
    # a template with a thinking switch gets it turned off
    assert templated.render([{"role": "user", "content": "hi"}]).endswith("/no_think")


def test_next_token_logprobs(tiny):
    import math

    chats = _chats()[:2]
    scores = tiny.next_token_logprobs(chats, ["Yes", "No"])
    assert len(scores) == 2 and set(scores[0]) == {"Yes", "No"}
    assert all(v < 0 and math.isfinite(v) for s in scores for v in s.values())


def test_bad_model_path_is_a_user_error(tmp_path):
    from framebench.errors import UserError

    with pytest.raises(UserError):
        load_backend(f"hf:{tmp_path / 'missing'}")
    with pytest.raises(UserError):
        load_backend(f"hf:{tmp_path}")  # a folder without a model


@pytest.mark.slow
def test_prefix_reuse_equals_naive_on_smollm2(smollm2_dir):
    backend = load_backend("smollm2")
    assert backend.model_dir == smollm2_dir
    context = ("Maria rented an apartment from Mr. Lee under a one-year written lease. The heating "
               "failed in winter; she notified him twice in writing, he did not repair it for six "
               "weeks, and she deducted the cost of space heaters from her rent. He then served an "
               "eviction notice for nonpayment.")
    questions = ["Is there a housing issue?", "Is this a family law issue?",
                 "Given that the heating failed, is there a housing issue here?"]
    binary = [[{"role": "user", "content": f"{context}\n\n{q}\nAnswer with Yes or No."}] for q in questions]
    mc = [[{"role": "user", "content": f"{context}\n\n{q}\nA) Housing\nB) Family\nC) Crime\nD) Torts\n"
            "Answer with the letter of the correct option (A, B, C or D)."}] for q in questions[:2]]
    for chats, decoding in ((binary, Decoding(8)), (mc, Decoding(16))):
        naive = backend.generate_naive(chats, decoding)
        assert backend.generate(chats, decoding) == naive
        assert all(text.strip() for text in naive)
