"""FramingQA's sentences in the report's finding (``framebench.scoring.finding``): per model and
format, pooled over tasks, the framing effect with its interval (from the headline), strict
accuracy, and a flag where one answer or option letter dominates the answers; for rotated multiple
choice, a flag where the letter prior dominates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.finding import effect_words, pct_words
from framebench.scoring.formatting import as_number, pct
from framebench.scoring.sections import FORMAT_NAMES, ordered
from framebench.scoring.stats import MIN_CONTEXTS_BINARY

POOLED_TASK = "all"
PRIOR_EXCESS = 0.25  # an answer given this much more often than it is right is flagged
DOMINANT = 0.9  # ... and said to dominate when it is at least this share of the answers
RIGHT_MORE = "right more often when the framing names the right answer than a wrong one"
WRONG_MORE = "inverted, right more often when the framing names a wrong answer"


def framingqa_finding(report: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{model: [sentence]}`` from ``report["framingqa"]`` and the headline's FramingQA rows: one
    sentence per format, pooled over tasks."""
    fqa, headline = report.get("framingqa") or {}, report.get("headline") or {}
    out: dict[str, list[str]] = {}
    for model in ordered(fqa):
        pooled = fqa[model].get(POOLED_TASK) or {}
        out[model] = [format_sentence(fmt, pooled[fmt], (headline.get(model) or {}).get(fmt) or {})
                      for fmt in ordered(pooled, FORMAT_NAMES)]
    return out


def format_sentence(fmt: str, metrics: Mapping[str, Any], head: Mapping[str, Any]) -> str:
    """``Binary yes/no, 16 contexts: <framing effect>; strict accuracy x %.`` and its answer-prior
    flag."""
    n = head.get("n_contexts", metrics.get("n_contexts"))
    effect = effect_words("framing effect", head.get("framing_effect"), head.get("framing_effect_ci"), n,
                          "contexts", head.get("framing_effect_mde"), RIGHT_MORE, WRONG_MORE)
    strict = "strict accuracy " + pct_words(metrics.get("strict_all"), metrics.get("strict_all_ci"))
    if metrics.get("strict_all") is not None and metrics.get("strict_all_ci") is None:
        strict += f" (no interval below {MIN_CONTEXTS_BINARY} contexts)"
    text = f"FramingQA {FORMAT_NAMES.get(fmt, fmt).lower()}, {n} contexts: "
    return text + "; ".join(part for part in (effect, strict) if part) + "." + answer_prior(fmt, metrics)


def answer_prior(fmt: str, metrics: Mapping[str, Any]) -> str:
    """`` ⚑ ...`` when the model gives one answer far more often than it is right (else empty)."""
    answers, golds = metrics.get("answer_shares") or {}, metrics.get("gold_shares") or {}
    if not answers:
        return ""
    top = max(answers, key=lambda a: answers[a])
    share, right = answers[top], golds.get(top, 0.0)
    if share - right < PRIOR_EXCESS:
        return ""
    what = "letter" if fmt == "mc" else "answer"
    lead = f"the {what} prior dominates: it" if share >= DOMINANT else "it"
    return (f" ⚑ {lead.capitalize()} answers {top} to {pct(share)} % of the questions it answered "
            f"({top} is right in {pct(right)} %).")


def rotation_finding(rotated: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{model: [sentence]}`` from ``report["framingqa_rotated"]``: the letter prior over every
    cyclic order of the options, and what dividing it out does to fixed-order accuracy."""
    out = {}
    for model in ordered(rotated):
        sentence = letter_prior(rotated[model])
        if sentence:
            out[model] = [sentence]
    return out


def letter_prior(m: Mapping[str, Any]) -> str:
    prior = {k: v for k, v in (m.get("prior") or {}).items() if as_number(v) is not None}
    if not prior:
        return ""
    top = max(prior, key=lambda k: prior[k])
    uniform = 1.0 / len(prior)
    where = f"FramingQA multiple choice in {m.get('n_rotations')} rotated option orders ({m.get('n_questions')} questions)"
    if prior[top] < 2 * uniform:
        return f"{where}: no letter dominates its prior (largest {top}, {pct(prior[top])} %; none: {pct(uniform)} %)."
    position = m.get("by_position") or {}
    others = [as_number(v) for k, v in position.items() if k != top and as_number(v) is not None]
    elsewhere = ""
    if as_number(position.get(top)) is not None and others:
        low, high = pct(min(others)), pct(max(others))
        elsewhere = (f"; right in {pct(position[top])} % of the questions whose answer is at {top}, "
                     f"{low if low == high else f'{low} to {high}'} % elsewhere")
    debiased = ""
    if m.get("n_debiased") and as_number(m.get("debiased_accuracy")) is not None:
        debiased = (f"; dividing out the prior moves accuracy from {pct(m.get('accuracy_fixed'))} % "
                    f"to {pct(m.get('debiased_accuracy'))} %")
    return (f"{where}: ⚑ the letter prior dominates, {pct(prior[top])} % on {top} whatever option stands "
            f"there (none: {pct(uniform)} %){elsewhere}{debiased}.")
