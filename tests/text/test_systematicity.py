"""Systematicity diagnostics (docs/report.md "Systematicity"): polarity consistency, paraphrase
invariance and framing against rewording, on hand-made records against hand computations."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from framebench.records import make_row
from framebench.text_eval.framingqa.systematicity import (
    diagnostic_contexts,
    effect_contexts,
    polarity_pairs,
    prepared,
    rewording_triples,
)
from framebench.text_eval.framingqa.systematicity_scores import score_systematicity

FORMS = ("plain", "negated")
QS = ("Q1", "Q2", "Q3")


def _gold(bias: str, form: str) -> str:
    return "Yes" if (bias == "correct") != (form == "negated") else "No"


def _row(ctx, bias, level, form, q, answer, slot_tail="", distractor="", model="m", task="finance",
         probs=None, gold=None):
    gold = gold or _gold(bias, form)
    slot = f"{bias}/{level}/{form}/{slot_tail or q}" + (f"/{distractor}" if distractor and level != "propositional" else "")
    extra = {} if probs is None else {"answer_mode": "constrained", "answer_probs": json.dumps(probs)}
    return make_row(run_id="r", model=model, suite="framingqa", task=task, format="binary", context_id=ctx,
                    item_id=f"{ctx}:binary:{slot}", bias=bias, level=level, form=form, phrasing=q,
                    distractor=distractor, slot=slot, gold=gold, answer=answer,
                    parse="ok" if answer else "unparsed", correct=answer == gold, **extra)


def _root_context(ctx, answer, model="m", task="finance"):
    """One context's root rows: correct bias and distractor d1, both forms, Q1-Q3;
    ``answer(bias, form, q)`` gives each row's answer."""
    rows = []
    for bias, distractor in (("correct", ""), ("incorrect", "d1")):
        for form in FORMS:
            for q in QS:
                rows.append(_row(ctx, bias, "root", form, q, answer(bias, form, q), distractor=distractor,
                                 model=model, task=task))
    return rows


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows)


def _wrong(bias, form, q):
    return "No" if _gold(bias, form) == "Yes" else "Yes"


def _flipper(bias, form, q):
    return "No" if q == "Q2" else "Yes"


def test_a_model_consistent_but_always_wrong_is_fully_consistent_and_invariant():
    df = _frame(_root_context("c1", _wrong))
    rows = prepared(df)
    pairs = polarity_pairs(rows)
    assert len(pairs) == 6 and pairs["consistent"].eq(1).all()  # 3 phrasings x 2 biases
    triples = rewording_triples(rows)
    assert len(triples) == 4 and triples["alike"].eq(1).all()  # 2 biases x 2 forms
    diag = diagnostic_contexts(rows).loc[("m", "finance", "binary", "c1", "root", "all")]
    assert diag["polarity"] == 1 and diag["polarity_strict"] == 1
    assert diag["invariance"] == 1 and diag["invariance_strict"] == 1
    effect = effect_contexts(rows).loc[("m", "finance", "binary", "c1", "root")]
    assert effect["framing"] == 0 and effect["rewording"] == 0  # never right: nothing moves


def test_a_model_that_flips_with_every_rewording():
    """Yes to Q1 and Q3, No to Q2, whatever the form or framing: a polarity pair gets the same
    answer twice (inconsistent), no triple is alike; per triple one or two of three rewordings
    are right, so 2 of its 3 pairs differ: rewording effect 2/3; correct-bias accuracy (2/3 +
    1/3) / 2 = incorrect-bias accuracy: framing effect 0."""
    rows = prepared(_frame(_root_context("c1", _flipper)))
    diag = diagnostic_contexts(rows).loc[("m", "finance", "binary", "c1", "root", "all")]
    assert diag["polarity"] == 0 and diag["invariance"] == 0
    effect = effect_contexts(rows).loc[("m", "finance", "binary", "c1", "root")]
    assert effect["framing"] == pytest.approx(0.0)
    assert effect["rewording"] == pytest.approx(2 / 3)


def test_shares_and_strict_forms_by_hand():
    """A model right everywhere except the negated correct-bias Q2 row (answered Yes) and an
    unparsed incorrect-bias plain Q3 row. Correct bias: pairs Q1 ok, Q2 (Yes, Yes) inconsistent,
    Q3 ok: 2/3, strict 0; triples plain alike, negated (No, Yes, No) not: 1/2. Incorrect bias:
    pair Q3 has an unparsed side: 2/3; triple plain has an unparsed row: not alike, 1/2. All: 4/6
    and 2/4. Framing: correct 5/6, incorrect 5/6 right: 0; rewording: the two broken triples have
    k = 2 right: (2/3 + 2/3) / 4 = 1/3."""
    def answer(bias, form, q):
        if (bias, form, q) == ("correct", "negated", "Q2"):
            return "Yes"
        if (bias, form, q) == ("incorrect", "plain", "Q3"):
            return ""
        return _gold(bias, form)

    rows = prepared(_frame(_root_context("c1", answer)))
    diag = diagnostic_contexts(rows).xs(("m", "finance", "binary", "c1", "root"))
    assert diag.loc["correct", "polarity"] == pytest.approx(2 / 3)
    assert diag.loc["correct", "polarity_strict"] == 0
    assert diag.loc["correct", "invariance"] == pytest.approx(1 / 2)
    assert diag.loc["incorrect", "polarity"] == pytest.approx(2 / 3)
    assert diag.loc["incorrect", "invariance"] == pytest.approx(1 / 2)
    assert diag.loc["all", "polarity"] == pytest.approx(4 / 6)
    assert diag.loc["all", "invariance"] == pytest.approx(2 / 4)
    effect = effect_contexts(rows).loc[("m", "finance", "binary", "c1", "root")]
    assert effect["framing"] == pytest.approx(0.0)
    assert effect["rewording"] == pytest.approx(1 / 3)


def test_pairs_follow_the_evidence_set_and_propositional_distractors_form_no_triple():
    """Incorrect-bias propositional rows e1 and e4 name the same distractor with the same phrasing
    (the distractor's rank): they pair by evidence set, and form no rewording triple."""
    rows = []
    for ev, q, answer in (("e1", "Q1", ("Yes", "No")), ("e2", "Q2", ("No", "Yes")), ("e4", "Q1", ("No", "No"))):
        for form, a in zip(FORMS, answer, strict=True):
            rows.append(_row("c1", "incorrect", "propositional", form, q, a, slot_tail=ev,
                             distractor="d1" if q == "Q1" else "d2"))
    prep = prepared(_frame(rows))
    pairs = polarity_pairs(prep)
    assert sorted(pairs["consistent"]) == [0.0, 1.0, 1.0]
    assert rewording_triples(prep).empty


def _contexts(values, task="finance", model="m"):
    """Contexts whose root correct-bias plain rows are wrong for the first ``k`` phrasings (per
    context), all else right: per context a share of consistent pairs of (3 - k + 3) / 6."""
    rows = []
    for i, k in enumerate(values):
        def answer(bias, form, q, k=k):
            wrong = bias == "correct" and form == "plain" and QS.index(q) < k
            return _wrong(bias, form, q) if wrong else _gold(bias, form)
        rows += _root_context(f"{task}-{i}", answer, model=model, task=task)
    return rows


def test_intervals_over_contexts_are_the_t_and_score_intervals():
    """Four contexts with 0, 1, 1, 3 wrong plain correct-bias rows: polarity shares (all biases)
    6/6, 5/6, 5/6, 3/6; t interval mean ± t(3) s / 2 (scipy), clipped to 100 %. Strict polarity is 0/1 over 4
    contexts: no interval (n < 10)."""
    report = score_systematicity(_frame(_contexts([0, 1, 1, 3])))
    cell = report["m"]["finance"]["binary"]["levels"]["root"]["biases"]["all"]
    shares = np.array([6, 5, 5, 3]) / 6
    low, high = scipy_stats.t.interval(0.95, 3, loc=shares.mean(), scale=scipy_stats.sem(shares))
    assert cell["polarity"] == pytest.approx(shares.mean())
    assert cell["polarity_ci"] == pytest.approx([low, min(high, 1.0)])
    assert cell["polarity_strict"] == pytest.approx(0.25) and cell["polarity_strict_ci"] is None
    assert cell["n_contexts"] == 4 and cell["small_sample"]


def test_strict_interval_is_wilson_per_task_and_stratified_pooled():
    from framebench.scoring.stats import proportion_interval, stratified_proportion_intervals

    rows = _contexts([0] * 6 + [1] * 4, task="finance") + _contexts([0] * 3 + [2] * 7, task="medicine")
    report = score_systematicity(_frame(rows))["m"]
    finance = report["finance"]["binary"]["levels"]["root"]["biases"]["all"]
    assert finance["polarity_strict"] == pytest.approx(0.6)
    assert finance["polarity_strict_ci"] == pytest.approx(proportion_interval(6, 10))
    pooled = report["all"]["binary"]["levels"]["root"]["biases"]["all"]
    assert pooled["polarity_strict"] == pytest.approx(9 / 20)
    assert pooled["polarity_strict_ci"] == pytest.approx(
        stratified_proportion_intervals(np.array([[6.0, 3.0]]), np.array([[10.0, 10.0]]))[0])


def test_framing_against_rewording_by_hand():
    """Per context: a framed model (right on correct-bias rows, wrong on incorrect-bias ones) has
    framing effect 1 and rewording effect 0; a flipper 0 and 2/3. Four contexts of each model:
    difference +1 and -2/3; ratio None without rewording. Every context alike: the sample SE is
    0 and the interval's SE is its binomial floor, sqrt(p̃ (1 - p̃) Σ 1/m) / 4 with p̃ = (k + 2) /
    (m + 4) over the 4 x 6 correct-bias rows (all right), 4 x 6 incorrect-bias rows (none right)
    and, x 2/3, over the 4 x 4 triples (none mixed)."""
    def framed(bias, form, q):
        return _gold(bias, form) if bias == "correct" else _wrong(bias, form, q)

    rows = []
    for i in range(4):
        rows += _root_context(f"c{i}", framed, model="framed") + _root_context(f"c{i}", _flipper, model="flip")
    report = score_systematicity(_frame(rows))
    framed_cell = report["framed"]["finance"]["binary"]["levels"]["root"]["accuracy"]
    assert framed_cell["framing_effect"] == 1 and framed_cell["rewording_effect"] == 0
    def floor(k, m, per_context, scale=1.0):
        p = (k + 2) / (m + 4)
        return scale * np.sqrt(p * (1 - p) * 4 / per_context) / 4

    se = np.sqrt(floor(24, 24, 6) ** 2 + floor(0, 24, 6) ** 2 + floor(0, 16, 4, 2 / 3) ** 2)
    assert framed_cell["difference"] == 1
    assert framed_cell["difference_ci"] == pytest.approx([1 - scipy_stats.t.ppf(0.975, 3) * se, 1.0])
    assert framed_cell["ratio"] is None
    flip_cell = report["flip"]["all"]["binary"]["levels"]["root"]["accuracy"]
    assert flip_cell["framing_effect"] == pytest.approx(0) and flip_cell["rewording_effect"] == pytest.approx(2 / 3)
    assert flip_cell["difference"] == pytest.approx(-2 / 3)
    assert flip_cell["inverted_difference"] == pytest.approx(-2 / 3)
    assert "p_gold" not in report["flip"]["all"]["binary"]["levels"]["root"]


def _probs(p_yes):
    return {"Yes": p_yes, "No": 1 - p_yes}


def test_p_gold_spread_rewording_and_variance_decomposition_by_hand():
    """Constrained rows of one context, root level: P(Yes) = 0.9, 0.6, 0.3 for Q1-Q3 on every
    row. P(gold) of a gold-Yes row: 0.9, 0.6, 0.3 (spread 0.6); of a gold-No row 0.1, 0.4, 0.7
    (spread 0.6). Rewording effect of P(gold): mean |P_i - P_j| = 2/3 x 0.6 = 0.4. Framing of
    P(gold): correct and incorrect bias each hold one gold-Yes and one gold-No triple: 0.
    Variance about the context mean 0.5: total 4 x (0.4² + 0.1² + 0.2²) = 0.84; both bias cells
    have mean 0.5 (framing 0); the forms' means are 0.6 and 0.4, 0.1 from it on each of the 12
    rows (polarity 0.12, 1/7); the rewordings explain the rest (6/7); no residual."""
    p_yes = {"Q1": 0.9, "Q2": 0.6, "Q3": 0.3}
    rows = []
    for bias, distractor in (("correct", ""), ("incorrect", "d1")):
        for form in FORMS:
            for q in QS:
                rows.append(_row("c1", bias, "root", form, q, "Yes" if p_yes[q] > 0.5 else "No",
                                 distractor=distractor, probs=_probs(p_yes[q])))
    df = _frame(rows)
    report = score_systematicity(df)["m"]["finance"]["binary"]
    cell = report["levels"]["root"]
    assert cell["biases"]["all"]["spread"] == pytest.approx(0.6)
    assert cell["p_gold"]["rewording_effect"] == pytest.approx(0.4)
    assert cell["p_gold"]["framing_effect"] == pytest.approx(0.0)
    variance = report["variance"]
    assert variance["framing"] == pytest.approx(0.0, abs=1e-12)
    assert variance["polarity"] == pytest.approx(1 / 7)
    assert variance["rewording"] == pytest.approx(6 / 7)
    assert variance["residual"] == pytest.approx(0.0, abs=1e-12)
    assert variance["variance"] == pytest.approx(0.84 / 12)


def test_the_viewer_counts_a_models_breaks_in_a_context():
    """The context page's line per model: the flipper breaks all 6 pairs and all 4 triples, the
    consistently wrong model none."""
    from framebench.text_eval.framingqa.suite import systematicity_breaks

    assert systematicity_breaks(_frame(_root_context("c1", _flipper))) == \
        " · polarity breaks 6/6 · paraphrase breaks 4/4"
    assert systematicity_breaks(_frame(_root_context("c1", _wrong))) == \
        " · polarity breaks 0/6 · paraphrase breaks 0/4"
