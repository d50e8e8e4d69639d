"""Constrained answers and choice scoring on the tiny random Llama: equal to a hand computation
from the model's logits (one full forward pass per prompt + answer, log-softmax, summed)."""

from __future__ import annotations

import math

import pytest

from framebench.backends.choice_scoring import (
    continuation_logprobs,
    continuation_logprobs_naive,
    drop_extended,
    prefix_groups,
)
from framebench.backends.constrained import normalise, pick, surface_forms


@pytest.fixture(scope="module")
def tiny(tiny_llama_dir):
    from framebench.backends.hf import HFBackend

    return HFBackend(str(tiny_llama_dir), spec="hf:tiny", batch_size=4)


def _hand_logprob(backend, prompt_text: str, cont_ids: list[int]) -> float:
    """log p(cont | prompt) from the logits of one plain forward pass, by hand."""
    import torch

    prompt = backend.tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt + cont_ids])
    with torch.no_grad():
        logits = backend.model(input_ids=ids).logits[0].double()
    total = 0.0
    for j, tok in enumerate(cont_ids):
        row = logits[len(prompt) - 1 + j]
        total += float(row[tok] - torch.logsumexp(row, dim=0))
    return total


CHATS = [
    [{"role": "user", "content": "The tenant sued the landlord. Is the answer yes or no?"}],
    [{"role": "user", "content": "The tenant sued the landlord. Should you act or not act?"}],
    [{"role": "user", "content": "A patient presented with fever and cough. Answer with A, B, C or D."}],
]


def test_answer_probabilities_equal_hand_computation(tiny):
    probs = tiny.answer_probabilities(CHATS, [("Yes", "No"), ("Yes", "No"), ("A", "B", "C", "D")])
    for chat, row in zip(CHATS, probs, strict=True):
        text = tiny.render(chat)
        masses = {}
        for answer in row:
            seqs = drop_extended([tuple(tiny.tokenizer(f, add_special_tokens=False)["input_ids"])
                                  for f in surface_forms(answer)])
            masses[answer] = sum(math.exp(_hand_logprob(tiny, text, list(s))) for s in seqs)
        total = sum(masses.values())
        for answer, p in row.items():
            assert p == pytest.approx(masses[answer] / total, rel=1e-4, abs=1e-6)
        assert sum(row.values()) == pytest.approx(1.0)


def test_multi_token_continuations_with_shared_prefix_and_packing(tiny):
    tok = tiny.tokenizer
    conts = ["Navigate[table_1]", " The robot placed the cup", " yes", "Done[]", " Yes"]
    assert any(len(tok(c, add_special_tokens=False)["input_ids"]) > 3 for c in conts)  # really multi-token
    prefixes = ["Action:", "Action:", "ANSWER:"]
    scores = tiny.score_continuations(CHATS, [conts] * 3, assistant_prefixes=prefixes)
    for chat, prefix, row in zip(CHATS, prefixes, scores, strict=True):
        for cont, score in zip(conts, row, strict=True):
            ids = tok(cont, add_special_tokens=False)["input_ids"]
            assert score == pytest.approx(_hand_logprob(tiny, tiny.render(chat) + prefix, ids), abs=1e-3)


def test_tiny_packing_and_batching_match_the_naive_reference(tiny):
    prompts = [[5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
               [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 30, 31],
               [40, 41]]
    conts = [[[50], [51, 52, 53]], [[50], [60]], [[70, 71], [72]]]
    assert prefix_groups(prompts, min_prefix=16) == [(16, [0, 1]), (0, [2])]
    fast = continuation_logprobs(tiny.model, prompts, conts, pad_id=tiny.pad_id, max_packed_tokens=2)
    slow = continuation_logprobs_naive(tiny.model, prompts, conts)
    for a, b in zip(fast, slow, strict=True):
        assert a == pytest.approx(b, abs=1e-4)


def test_ties_go_to_the_first_listed_answer():
    assert pick({"Yes": 0.5, "No": 0.5}) == "Yes"
    assert pick({"No": 0.5, "Yes": 0.5}) == "No"
    assert pick({"A": 0.2, "B": 0.4, "C": 0.4}) == "B"
    assert normalise({"Yes": -math.inf, "No": -math.inf}) == {"Yes": 0.5, "No": 0.5}
    assert normalise({"Yes": math.log(3), "No": math.log(1)}) == pytest.approx({"Yes": 0.75, "No": 0.25})


def test_surface_forms_and_extension_dropping():
    assert surface_forms("Yes") == ["Yes", " Yes", "yes", " yes"]
    assert surface_forms("A") == ["A", " A"]
    assert drop_extended([(1, 2), (1,), (3,), (1,)]) == [(1,), (3,)]


def test_incremental_cache_reuse_matches_the_naive_reference(tiny):
    from framebench.backends.choice_scoring import continuation_logprobs_incremental

    state: dict = {}
    conts = [[50], [51, 52, 53], [60, 61]]
    base = list(range(5, 30))
    for prompt in (base, base + [31, 32, 33], base + [31, 32, 33, 34], base[:10] + [40, 41]):
        got = continuation_logprobs_incremental(tiny.model, prompt, conts, state, max_packed_tokens=3)
        want = continuation_logprobs_naive(tiny.model, [prompt], [conts])[0]
        assert got == pytest.approx(want, abs=1e-4)
        assert state["ids"] == prompt
