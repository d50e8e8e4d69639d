"""Constrained answers and choice scoring on the tiny random Llama: equal to a hand computation
from the model's logits (one full forward pass per prompt + answer, log-softmax, summed)."""

from __future__ import annotations

import math

import pytest

from framebench.backends.choice_scoring import continuation_logprobs, continuation_logprobs_naive
from framebench.backends.constrained import drop_extended, normalise, pick, surface_forms
from framebench.backends.prefix_groups import group_by_shared_prefix


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
    assert group_by_shared_prefix(prompts, min_prefix=16) == [(16, [0, 1]), (0, [2])]
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


@pytest.mark.parametrize("batch_size", [1, 3, "auto"])
def test_single_token_answers_through_prefix_groups_equal_hand_computation(tiny_llama_dir, batch_size):
    """Answers whose forms are one token each take the generation path's shared-prefix groups and
    batches (one forward per batch); several contexts x several questions, so prefix groups,
    padding between prefix and suffix, and batches of mixed suffix lengths are all exercised."""
    from framebench.backends.hf import HFBackend

    backend = HFBackend(str(tiny_llama_dir), spec="hf:tiny", batch_size=batch_size)
    tok = backend.tokenizer
    one_token = [c for c in ("A", "B", "C", "D", "Yes", "No", "yes", "no", " A", " B")
                 if len(tok(c, add_special_tokens=False)["input_ids"]) == 1]
    assert len(one_token) >= 2
    contexts = ["The tenant sued the landlord over the deposit and the broken heater in the flat.",
                "A patient presented with fever, cough and a rash after a trip abroad last month."]
    questions = ["Is it yes?", "Which option is right, given everything stated above?", "Why?"]
    chats = [[{"role": "user", "content": f"{c}\n\n{q}"}] for c in contexts for q in questions]
    seqs = [backend.encode(chat) for chat in chats]
    rows = backend.next_logprobs(seqs, [tok(c, add_special_tokens=False)["input_ids"][0] for c in one_token])
    for chat, row in zip(chats, rows, strict=True):
        for c, got in zip(one_token, row, strict=True):
            want = _hand_logprob(backend, backend.render(chat), tok(c, add_special_tokens=False)["input_ids"])
            assert got == pytest.approx(want, abs=1e-4)


def test_candidate_trie_holds_each_shared_prefix_once():
    from framebench.backends.choice_scoring import candidate_trie

    conts = [[1, 2, 3], [1, 2, 4], [1, 5], [6]]
    assert candidate_trie(conts) == [(1,), (1, 2)]  # [6] needs no node: its only token is first


def test_answers_after_generation_come_from_its_first_step(tiny_llama_dir, monkeypatch):
    """A constrained pass over prompts the backend just generated from reads their first-step
    log-probabilities (no second forward) and equals a fresh backend's computation."""
    from framebench.backends.base import Decoding
    from framebench.backends.hf import HFBackend

    chats = [[{"role": "user", "content": f"{c} {q}"}] for c in ("The tenant sued the landlord.",
                                                                  "The bank charged an overdraft fee.")
             for q in ("Is the answer yes or no?", "Answer with A, B, C or D.")]
    choices = [("Yes", "No"), ("A", "B", "C", "D")] * 2
    fresh = HFBackend(str(tiny_llama_dir), spec="hf:tiny", batch_size=3).answer_probabilities(chats, choices)
    backend = HFBackend(str(tiny_llama_dir), spec="hf:tiny", batch_size=3)
    backend.generate(chats, Decoding(max_new_tokens=2))
    one_token = [k for k, row in enumerate(choices)
                 if all(len(backend.tokenizer(f, add_special_tokens=False)["input_ids"]) == 1
                        for a in row for f in (a, " " + a))]
    forwards = []
    original = backend._next_logprobs_batch
    monkeypatch.setattr(backend, "_next_logprobs_batch",
                        lambda seqs, prefix_of, batch, *a: forwards.append(batch) or original(seqs, prefix_of, batch, *a))
    served = backend.answer_probabilities(chats, choices)
    assert one_token and not forwards  # every one-token row came from the generation's first step
    for k, (got, want) in enumerate(zip(served, fresh, strict=True)):
        assert list(got) == list(choices[k])
        assert got == pytest.approx(want, abs=1e-5)
