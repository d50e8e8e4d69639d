"""Constrained answering: the probability of each allowed answer, and the pick.

Definitions (also in ``docs/susceptibility.md``):

* The surface forms of an allowed answer ``a`` are ``a`` and ``" " + a``; for a word (more than
  one character) also its lower-case forms (``yes``, `` yes``). A single letter keeps its case
  (a lower-case ``a`` is the article).
* Each form is tokenized on its own (no special tokens); identical token sequences count once, and
  a sequence that extends another form's sequence is dropped (its event is inside the shorter one).
* The mass of ``a`` is ``m(a) = sum over its forms f of exp(log p(f | prompt))``, where
  ``log p(f | prompt)`` is the sum of the log-probabilities of f's tokens (no length normalisation).
* The probability of ``a`` is ``P(a) = m(a) / sum over allowed answers b of m(b)``.
* The answer is the allowed answer with the largest ``P``; ties go to the one listed first
  (``Yes`` before ``No``, ``A`` before ``B``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from framebench.vocabulary import BINARY_ANSWERS, MC_ANSWERS


def surface_forms(answer: str) -> list[str]:
    forms = [answer, " " + answer]
    if len(answer) > 1:
        forms += [answer.lower(), " " + answer.lower()]
    return list(dict.fromkeys(forms))


def drop_extended(seqs: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Distinct token sequences, without any that extends another one in the list (its event is
    already counted in the shorter one), in first-seen order."""
    unique = list(dict.fromkeys(seqs))
    return [s for s in unique if not any(o != s and s[:len(o)] == o for o in unique)]


def form_token_ids(tokenizer, answer: str) -> list[tuple[int, ...]]:
    """The distinct token sequences of ``answer``'s surface forms (extensions of another dropped)."""
    seqs = []
    for form in surface_forms(answer):
        ids = tuple(tokenizer(form, add_special_tokens=False)["input_ids"])
        if ids:
            seqs.append(ids)
    if not seqs:
        raise ValueError(f"answer {answer!r} encodes to no tokens")
    return drop_extended(seqs)


def logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def normalise(log_masses: Mapping[str, float]) -> dict[str, float]:
    """``P(a) = exp(l_a) / sum_b exp(l_b)`` over the allowed answers, in their order."""
    total = logsumexp(list(log_masses.values()))
    if total == -math.inf:
        return {a: 1.0 / len(log_masses) for a in log_masses}
    return {a: math.exp(v - total) for a, v in log_masses.items()}


def pick(probs: Mapping[str, float]) -> str:
    """The most probable answer; the first listed wins a tie (deterministic)."""
    best, best_p = "", -1.0
    for answer, p in probs.items():
        if p > best_p:
            best, best_p = answer, p
    return best


def allowed_answers(fmt: str, n_options: int = 0) -> tuple[str, ...]:
    if fmt == "binary":
        return BINARY_ANSWERS
    if fmt == "mc":
        return MC_ANSWERS[:max(2, min(n_options or len(MC_ANSWERS), len(MC_ANSWERS)))]
    raise ValueError(f"unknown format {fmt!r}")


def answer_forms(tokenizer, choices: Sequence[Sequence[str]]) -> dict[str, list[tuple[int, ...]]]:
    """Each allowed answer's distinct form token sequences (``form_token_ids``), once per answer."""
    forms: dict[str, list[tuple[int, ...]]] = {}
    for row in choices:
        for answer in row:
            if answer not in forms:
                forms[answer] = form_token_ids(tokenizer, answer)
    return forms


def masses_to_probs(answers: Sequence[str], forms: Mapping[str, Sequence[tuple[int, ...]]],
                    form_scores: Sequence[float]) -> dict[str, float]:
    """``P(a)`` from the log-probabilities of the answers' forms, listed answer by answer in
    ``forms`` order (the layout every engine's scoring produces)."""
    masses, k = {}, 0
    for answer in answers:
        n = len(forms[answer])
        masses[answer] = logsumexp(list(form_scores[k:k + n]))
        k += n
    return normalise(masses)
