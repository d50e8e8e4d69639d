"""Extractive answer sheets (``--unreviewed`` builds only): TF-IDF evidence ranking.

These sheets are what the review replaced: a quoted sentence with a label attached is not a
rationale, and ``framebench.text_eval.framingqa.check`` rejects them. They remain so that an audit can rebuild
the unreviewed benchmark and compare.

Per task, one TF-IDF model (scikit-learn) is fitted on all context sentences and option scopes.
A sentence's support for option X is its cosine similarity to X's scope (Appendix C label scope;
medicine: the diagnosis name). Distractors (label-set tasks) are the three non-gold options whose
scope is most similar to the whole context (most confusable first; ties in label order); medicine
takes the case's other three options in letter order. Premise <X> quotes the sentence that best
supports X in a fixed phrasing; <A>* and <A>** rephrase <A> in two other fixed phrasings. The
cueing-evidence sets are, per distractor, the distinct sentences whose support reaches the
threshold (at most ``max_per_distractor``; the best sentence when none reaches it), so every
distractor has at least one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, Evidence
from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domain
from framebench.text_eval.framingqa.expansion import option_phrase

PHRASINGS = (
    'the statement "{quote}", which points to {option}',  # <X>
    'the detail "{quote}", which suggests {option}',  # <A>*
    'the part of the text that reads "{quote}", which indicates {option}',  # <A>**
)
QUOTE_WORDS = 30
# Everyday words that posts use for each label, appended to the Appendix C scope so that a scope
# and a sentence about the same thing share character n-grams.
SCOPE_CUES = {
    "Consumer": "bought purchase refund store seller company bill charged money debt loan credit card "
                "collection insurance warranty contract tax paid payment subscription product service",
    "Courts": "court lawyer attorney judge filed filing hearing summons case trial appeal sue subpoena "
              "legal fees paperwork clerk served papers custody order",
    "Employment": "job work employer boss manager fired hired quit paycheck wages overtime salary "
                  "coworker HR shift unemployment company employee terminated workplace",
    "Torts": "accident car crash hit injured injury hurt damage neighbor dog bite harassed assault "
             "threatened police insurance claim fault negligence photos privacy defamation",
    "Debt and repayment": "debt loan owe pay off credit card interest collection repay borrow",
    "Banking and payments": "bank account checking savings transfer deposit check wire atm debit",
    "Fraud and scams": "scam fraud stolen identity theft fake hacked phishing suspicious",
    "Credit reporting and score": "credit score credit report bureau equifax experian transunion fico",
    "Housing finance": "mortgage house home refinance escrow foreclosure down payment buy a home",
    "Investing and financial advice": "invest stocks shares funds etf portfolio broker retirement ira",
}


@dataclass
class ExtractiveSettings:
    threshold: float = 0.05
    max_per_distractor: int = 2


def split_units(text: str) -> list[str]:
    """Sentences (or, for a one-sentence text, its clauses) with at least three words."""
    text = re.sub(r"^(Case Information|Physical Examination|Diagnostic Tests):\s*", "", text, flags=re.M)
    parts = re.split(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|\n+|\s+-\s+", text)
    units = [p.strip(" -") for p in parts if len(p.split()) >= 3]
    if len(units) <= 1:
        clauses = [c.strip() for c in re.split(r"[,;:]\s+|\s+(?:and|or|but|while|when)\s+", text)]
        clauses = [c for c in clauses if len(c.split()) >= 3]
        if len(clauses) > 1:
            units = clauses
    return units or [text.strip()]


def quote(unit: str) -> str:
    words = unit.replace('"', "'").rstrip(".;, ").split()
    return " ".join(words[:QUOTE_WORDS]) + ("…" if len(words) > QUOTE_WORDS else "")


def premise(task: str, option: str, unit: str, phrasing: int = 0) -> str:
    return PHRASINGS[phrasing].format(quote=quote(unit), option=option_phrase(task, option))


def scope_text(task: str, option: str) -> str:
    scopes = domain(task).scopes
    return f"{option}. {scopes[option]} {SCOPE_CUES.get(option, '')}" if scopes else option


def extractive_sheets(contexts: list[Context], settings: ExtractiveSettings | None = None
                      ) -> list[AnswerSheet]:
    """Answer sheets for contexts of one task."""
    if not contexts:
        return []
    from sklearn.feature_extraction.text import TfidfVectorizer

    settings = settings or ExtractiveSettings()
    task = contexts[0].task
    units = [split_units(c.text) for c in contexts]
    flat = [u for us in units for u in us]
    all_options = sorted({o for c in contexts for o in c.options})
    column = {o: k for k, o in enumerate(all_options)}
    scope_docs = [scope_text(task, o) for o in all_options]
    vectorizer = TfidfVectorizer(sublinear_tf=True, analyzer="char_wb", ngram_range=(3, 5), lowercase=True)
    vectorizer.fit(flat + scope_docs)
    scopes = vectorizer.transform(scope_docs).T  # rows are L2-normalized: dot product = cosine
    unit_support = (vectorizer.transform(flat) @ scopes).toarray()
    context_support = (vectorizer.transform([c.text for c in contexts]) @ scopes).toarray()

    sheets: list[AnswerSheet] = []
    offset = 0
    for n, (ctx, ctx_units) in enumerate(zip(contexts, units, strict=True)):
        rows = unit_support[offset: offset + len(ctx_units)]
        offset += len(ctx_units)
        others = [o for o in ctx.options if o != ctx.gold]
        if domain(task).all_distractors:
            distractors = others
        else:
            closeness = {o: float(context_support[n, column[o]]) for o in others}
            distractors = sorted(others, key=lambda o: (-closeness[o], ctx.options.index(o)))[:3]
        support = {o: rows[:, column[o]] for o in [ctx.gold, *distractors]}

        def ranked(option: str) -> list[int]:
            return sorted(range(len(ctx_units)), key=lambda i: (-support[option][i], i))  # noqa: B023

        premises = {o: premise(task, o, ctx_units[ranked(o)[0]]) for o in [ctx.gold, *distractors]}
        best_gold = ctx_units[ranked(ctx.gold)[0]]
        evidence: list[Evidence] = []
        notes: list[str] = []
        for d in distractors:
            order = ranked(d)
            above = [i for i in order if support[d][i] >= settings.threshold][: settings.max_per_distractor]
            if not above:
                above = order[:1]
                notes.append(f"no sentence reaches the evidence threshold for {d!r}: best sentence used")
            for i in above:
                evidence.append(Evidence(f"e{len(evidence) + 1}", d, premise(task, d, ctx_units[i])))
        sheets.append(AnswerSheet(
            context_id=ctx.context_id, task=task, gold=ctx.gold, distractors=distractors, premises=premises,
            gold_rephrasings=[premise(task, ctx.gold, best_gold, 1), premise(task, ctx.gold, best_gold, 2)],
            evidence=evidence, provenance={"drafted_by": "extractive (TF-IDF)", "reviewed_by": "nobody"},
            notes=notes))
    return sheets
