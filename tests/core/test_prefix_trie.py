"""The prompt prefix trie (``framebench.backends.prefix_trie``): its structure on hand-made token
lists, and on the real SmolLM2 the trie path against plain per-prompt greedy generation (byte-equal)
and against the one-shared-prefix path for constrained probabilities (within 1e-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.backends.prefix_trie import (
    TokenTrie,
    ancestors_mask,
    one_prefix_tokens,
    plan_prompt_trie,
    unique_tokens,
)

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "framingqa" / "items.jsonl"


def test_trie_nodes_parents_and_counts():
    seqs = [[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 6], [7]]
    trie = TokenTrie(seqs)
    assert len(trie) == 7  # 1 2 3 4 | 5 | 6 | 7
    assert all(trie.parent[n] < n for n in range(len(trie)))  # parents first
    assert [trie.token[n] for n in trie.paths[1]] == [1, 2, 3, 5]
    assert [trie.count[n] for n in trie.paths[0]] == [3, 3, 2, 1]
    assert [trie.depth[n] for n in trie.paths[2]] == [1, 2, 3]
    assert trie.ancestors(trie.paths[1][-1]) == trie.paths[1]
    assert trie.child(-1, 7) == trie.paths[3][0] and trie.child(-1, 9) is None


def test_unique_token_counts_one_prefix_against_trie():
    root = list(range(100, 120))  # 20 tokens all share
    seqs = [root + [1, 2, 3, 4, 5], root + [1, 2, 3, 6, 7], root + [1, 2, 8], root + [9, 10]]
    assert unique_tokens(seqs) == 20 + 5 + 2 + 1 + 2
    assert one_prefix_tokens(seqs) == 20 + 5 + 5 + 3 + 2
    assert unique_tokens(seqs + [seqs[0]]) == unique_tokens(seqs)  # a duplicate adds nothing
    assert one_prefix_tokens([[1, 2], [3]]) == 3 and unique_tokens([]) == 0


def test_prompt_plan_shares_what_two_prompts_share_and_leaves_the_last_token():
    root = list(range(100, 120))
    seqs = [root + [1, 2, 3, 4, 5], root + [1, 2, 3, 6, 7], root + [1, 2, 8], root + [9, 10], root + [9, 10]]
    plan = plan_prompt_trie(seqs, list(range(5)), 20)
    assert plan.root == root
    # prefixes: [1 2 3] shared by 0 and 1, [1 2] by 0-2, [9] by the two identical prompts (never their last)
    assert plan.prefix_len == {0: 23, 1: 23, 2: 22, 3: 21, 4: 21}
    assert len(plan.nodes) == 4 and plan.cached_tokens == 24  # 1 2 3 and 9 once each
    for m, seq in enumerate(seqs):
        index = plan.row_index(m)
        packed = plan.root + [plan.trie.token[n] for n in plan.nodes]
        assert [packed[k] for k in index] == seq[:plan.prefix_len[m]]


@pytest.mark.parametrize("chunk", [3, 5, 64])
def test_ancestors_mask_is_each_node_and_its_ancestors_after_the_cache(chunk):
    """Each chunk's rows: every cached token, then exactly the node's own path (walked by hand)."""
    root = list(range(100, 107))
    trie = TokenTrie([root + [1, 2, 3, 4], root + [1, 2, 5], root + [6, 7, 8], root + [1, 9]])
    offset = 4
    for start in range(0, len(trie), chunk):
        end = min(len(trie), start + chunk)
        got = ancestors_mask(trie.parent, start, end, offset)
        assert tuple(got.shape) == (end - start, offset + end)
        for j in range(start, end):
            path = set(trie.ancestors(j))
            want = [True] * offset + [k in path for k in range(end)]
            assert got[j - start].tolist() == want


def test_packed_trie_cache_equals_each_prompts_own_prefill(tiny_llama_dir):
    """The gathered rows of a packed trie cache give the next-token logits of the full prompts."""
    import torch
    from transformers import AutoModelForCausalLM

    from framebench.backends import kv_cache
    from framebench.backends.prefix_trie import prefill_prompt_trie

    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32).eval()
    root = list(range(30, 50))
    seqs = [root + [5, 6, 7, 8], root + [5, 6, 9], root + [5, 10, 11, 12, 13], root + [14]]
    plan = plan_prompt_trie(seqs, list(range(4)), len(root))
    cpu = torch.device("cpu")
    with torch.inference_mode():
        packed = prefill_prompt_trie(model, plan, cpu)
        assert packed.get_seq_length() == plan.cached_tokens
        batch = kv_cache.gathered_cache(model, cpu, {0: packed}, [0] * 4, [plan.row_index(m) for m in range(4)], 0)
        pmax = max(plan.prefix_len.values())
        suffixes = [s[plan.prefix_len[m]:] for m, s in enumerate(seqs)]
        width = max(map(len, suffixes))
        ids = torch.tensor([[0] * (width - len(s)) + s for s in suffixes])
        mask = torch.tensor([[0] * (pmax - plan.prefix_len[m]) + [1] * plan.prefix_len[m] + [0] * (width - len(s))
                             + [1] * len(s) for m, s in enumerate(suffixes)])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, pmax:]
        got = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                    **kv_cache.with_cache(model, batch)).logits[:, -1]
        for m, seq in enumerate(seqs):
            want = model(input_ids=torch.tensor([seq])).logits[0, -1]
            assert torch.allclose(got[m], want, atol=1e-5)


def _demo_chats(n_binary: int, n_mc: int):
    """Items of one demo law context whose prompts share prefixes beyond the context."""
    from framebench.text_eval.framingqa.prompts import render_chat

    items = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    items = [it for it in items if it.get("suite") == "framingqa" and it["task"] == "law_issue_spotting"]
    context = items[0]["context_id"]
    chosen = [it for it in items if it["context_id"] == context and it["format"] == "binary"][:n_binary]
    chosen += [it for it in items if it["context_id"] == context and it["format"] == "mc"][:n_mc]
    return chosen, [render_chat(it) for it in chosen]


@pytest.mark.slow
def test_trie_generation_and_constrained_on_smollm2(smollm2_dir):
    from framebench.backends.base import Decoding
    from framebench.backends.constrained import allowed_answers
    from framebench.backends.hf import HFBackend
    from framebench.text_eval.framingqa.prompts import decoding_for

    backend = HFBackend(str(smollm2_dir), spec="smollm2")
    items, chats = _demo_chats(4, 2)
    seqs = [backend.encode(c) for c in chats]
    binary = [k for k, it in enumerate(items) if it["format"] == "binary"]
    assert unique_tokens([seqs[k] for k in binary]) < one_prefix_tokens([seqs[k] for k in binary])
    for fmt in ("binary", "mc"):
        rows = [k for k, it in enumerate(items) if it["format"] == fmt]
        decoding: Decoding = decoding_for(fmt)
        backend.prefix_trie = True
        trie = backend.generate([chats[k] for k in rows], decoding)
        naive = backend.generate_naive([chats[k] for k in rows], decoding)
        assert trie == naive  # byte-equal to plain per-prompt greedy generation
        assert all(text.strip() for text in trie)
    choices = [allowed_answers(it["format"], len(it.get("options") or [])) for it in items]
    probs = {}
    for trie_on in (True, False):
        backend.prefix_trie = trie_on
        backend._first_step.clear()  # really run the prompts
        probs[trie_on] = backend.answer_probabilities(chats, choices)
    diff = max(abs(a[k] - b[k]) for a, b in zip(probs[True], probs[False], strict=True) for k in a)
    assert diff < 1e-5
    # multi-token forms go through choice_scoring's trie path: against one full pass per answer
    from framebench.backends.choice_scoring import (
        continuation_logprobs,
        continuation_logprobs_naive,
    )

    conts = [[backend.tokenizer(" " + w, add_special_tokens=False)["input_ids"] for w in ("Yes it is", "No")]
             for _ in seqs[:2]]
    got = continuation_logprobs(backend.model, seqs[:2], conts, pad_id=backend.pad_id)
    want = continuation_logprobs_naive(backend.model, seqs[:2], conts)
    assert max(abs(g - w) for gr, wr in zip(got, want, strict=True) for g, w in zip(gr, wr, strict=True)) < 1e-4
