"""Hand-computed checks of the OMIT analyses (text_eval/omit/analysis.py)."""

import json
from math import comb

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from framebench.records import make_row
from framebench.text_eval.omit.analysis import (
    analyze,
    figures,
    kappa_permutation,
    markdown,
    random_baselines,
    tiers,
)
from framebench.text_eval.omit.metrics import pairs

PERSONAS = ("utilitarianism", "deontology", "virtue", "care", "contractualism")


def rec(model, ctx, frame, answer, cond="M0", conflicts="", output=None, parse="ok"):
    return make_row(run_id="r", model=model, suite="omit", task="omit", format="binary", context_id=ctx,
                    item_id=f"{ctx}:{frame}@{cond}", bias="neutral", answer=answer, parse=parse,
                    output=output if output is not None else answer, frame=frame, condition=cond,
                    conflicts=conflicts)


def pair(model, ctx, pattern, cond="M0", conflicts="", outputs=("", "")):
    letters = {"Y": "Yes", "N": "No"}
    return [rec(model, ctx, "action", letters[pattern[0]], cond, conflicts, outputs[0] or None),
            rec(model, ctx, "omission", letters[pattern[1]], cond, conflicts, outputs[1] or None)]


def frame_of(rows):
    return pd.DataFrame(rows)


# --- Cohen's kappa and its permutation p-value ------------------------------------------------------

def test_kappa_hand_computed():
    # po = 3/4; px = 1/2, py = 1/4 -> pe = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    res = kappa_permutation(np.array([1, 1, 0, 0]), np.array([1, 0, 0, 0]), 500, np.random.default_rng(0))
    assert res["kappa"] == pytest.approx(0.5) and res["status"] == "ok" and res["n"] == 4
    # perfect disagreement on a balanced split: kappa = -1
    res = kappa_permutation(np.array([1, 0, 1, 0]), np.array([0, 1, 0, 1]), 500, np.random.default_rng(0))
    assert res["kappa"] == pytest.approx(-1.0)


def test_kappa_constant_rater_is_zero_with_p_one():
    res = kappa_permutation(np.array([0, 0, 0, 0, 0]), np.array([1, 0, 1, 0, 0]), 999,
                            np.random.default_rng(1))
    assert res["kappa"] == 0.0 and res["p"] == 1.0 and res["status"].startswith("degenerate")


def test_kappa_both_constant_is_undefined():
    res = kappa_permutation(np.array([1, 1, 1]), np.array([1, 1, 1]), 99, np.random.default_rng(0))
    assert res["kappa"] is None and res["p"] is None and "undefined" in res["status"]
    assert kappa_permutation(np.array([]), np.array([]), 9, np.random.default_rng(0))["kappa"] is None


def test_permutation_p_matches_exact_enumeration():
    # Perfect agreement on a 5/5 split of 10: |kappa*| >= 1 only for the identical arrangement or its
    # mirror image, i.e. 2 of C(10, 5) = 252 equally likely arrangements.
    x = np.array([1] * 5 + [0] * 5)
    k = 20000
    res = kappa_permutation(x, x.copy(), k, np.random.default_rng(3))
    exact = 2 / comb(10, 5)
    assert res["kappa"] == pytest.approx(1.0)
    assert res["p"] == pytest.approx(exact, abs=0.003)
    assert res["p"] >= 1 / (k + 1)
    # Weak agreement is not significant.
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1, 0])
    assert kappa_permutation(x, y, 2000, np.random.default_rng(3))["p"] > 0.5


# --- filtered vs random baselines -------------------------------------------------------------------

def constructed_table(n_sel=4, n_pool=4):
    rows = []
    for i in range(n_sel):
        rows += pair("m", f"s{i}", "NN", conflicts="utilitarianism-care")
    for i in range(n_pool):
        rows += pair("m", f"p{i}", "YN")
    return pairs(frame_of(rows))


def test_lift_on_constructed_case():
    rb = random_baselines(constructed_table(), seed=7, k=2000)
    (row,) = rb["rows"]
    assert row["filtered"] == 1.0 and row["complement"] == 0.0 and row["random_complement"] == 0.0
    # random-full: OBR of 4 pairs drawn from 4 NN + 4 other is hypergeometric with mean 1/2
    assert row["random_full"] == pytest.approx(0.5, abs=0.02)
    assert row["lift"] == pytest.approx(0.5, abs=0.02)
    # P(null = 1) = 1 / C(8, 4) = 1/70, P(null <= 1/4) = 17/70 > 2.5%: percentiles fall on 1/4, 3/4
    assert row["lift_low"] == pytest.approx(0.25) and row["lift_high"] == pytest.approx(0.75)
    assert row["p"] == pytest.approx(1 / 70, abs=0.008)
    assert not row["complement_with_replacement"]
    assert row["filtered_low"] is None  # 4 pairs: below the 10 a rate's interval needs
    (pooled,) = rb["pooled"]
    assert pooled["lift"] == pytest.approx(row["lift"]) and pooled["models"] == 1


def test_random_baselines_reproducible_and_replacement_flag():
    t = constructed_table(n_sel=5, n_pool=3)
    a, b = random_baselines(t, seed=1, k=300), random_baselines(t, seed=1, k=300)
    assert a == b
    assert a["rows"][0]["complement_with_replacement"]
    assert random_baselines(t, seed=2, k=300)["rows"] != a["rows"]  # the seed matters


# --- strength, fingerprint, trace audit through analyze ---------------------------------------------

def persona_rows(ctx, patterns, conflicts):
    rows = []
    for p, pat in zip(PERSONAS, patterns, strict=True):
        rows += pair(f"persona:{p}", ctx, pat, conflicts=conflicts)
    return rows


def test_analyze_strength_fingerprint_and_audit():
    # s1: YN x 2, NY x 1 -> strength 2; s2: YN x 1, NY x 3 -> 3; pool p1 unanimous -> 0
    s1 = ("YN", "NY", "YN", "NN", "YY")
    s2 = ("YN", "NY", "NY", "NY", "NN")
    rows = persona_rows("s1", s1, "utilitarianism-deontology|deontology-virtue")
    rows += persona_rows("s2", s2, "utilitarianism-deontology|utilitarianism-virtue|utilitarianism-care")
    rows += persona_rows("p1", ("NN",) * 5, "")
    c1, c2 = "utilitarianism-deontology|deontology-virtue", \
        "utilitarianism-deontology|utilitarianism-virtue|utilitarianism-care"
    # model A: NN everywhere at M0 (constant "No"); at M1 s1 -> YN with a named framework,
    # s2 stays NN with only broad principle language; p1 has no M1 response.
    rows += pair("A", "s1", "NN", conflicts=c1) + pair("A", "s2", "NN", conflicts=c2) + pair("A", "p1", "NN")
    rows += pair("A", "s1", "YN", "M1", c1, ("A utilitarian would act. ANSWER: yes", "ANSWER: no"))
    rows += pair("A", "s2", "NN", "M1", c2, ("It is our duty to wait. ANSWER: no", "ANSWER: no"))
    # model B: copies the utilitarian persona on the selected scenarios
    rows += pair("B", "s1", "YN", conflicts=c1) + pair("B", "s2", "YN", conflicts=c2) + pair("B", "p1", "YY")
    df = frame_of(rows)
    a = analyze(df, seed=0, k_random=200, k_permutations=500)
    json.dumps(a, allow_nan=False)

    st = a["strength"]
    assert st["source"] == "personas" and st["levels"] == [0, 2, 3]
    by = {(r["model"], r["condition"], r["strength"]): r for r in st["rows"]}
    assert by[("A", "M0", 0)]["OBR"] == 1.0 and by[("B", "M0", 0)]["OBR"] == 0.0
    assert by[("A", "M1", 2)]["OBR"] == 0.0 and by[("A", "M1", 3)]["OBR"] == 1.0
    mean = {(m["condition"], m["strength"]): m["OBR"] for m in st["mean"]}
    assert mean[("M0", 2)] == 0.5

    cells = {(c["model"], c["condition"], c["persona"]): c for c in a["fingerprint"]["cells"]}
    assert a["fingerprint"]["personas"] == list(PERSONAS)
    util_b = cells[("B", "M0", "utilitarianism")]
    assert util_b["kappa"] == pytest.approx(1.0) and util_b["n"] == 4
    # A answers "No" on every frame: a constant rater -> kappa 0, p 1
    assert cells[("A", "M0", "deontology")]["kappa"] == 0.0 and cells[("A", "M0", "deontology")]["p"] == 1.0
    # B vs deontology on s1 (NY) and s2 (NY): B says Y,N,Y,N; deontology N,Y,N,Y -> kappa -1
    assert cells[("B", "M0", "deontology")]["kappa"] == pytest.approx(-1.0)
    # B vs care: care NN on s1, NY on s2 -> (Y,N),(N,N),(Y,N),(N,Y): hand kappa
    x, y = np.array([1, 0, 1, 0]), np.array([0, 0, 0, 1])
    po = (x == y).mean()
    pe = x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean())
    assert cells[("B", "M0", "care")]["kappa"] == pytest.approx((po - pe) / (1 - pe))

    ta = a["trace_audit"]
    assert ta["baseline_nn"] == 2 and ta["missing"] == 0  # selected scenarios only
    rows = {r["transition"]: r for r in ta["rows"]}
    assert (rows["NN->FC"]["records"], rows["NN->FC"]["tier_a"], rows["NN->FC"]["tier_ab"]) == (1, 1, 1)
    assert (rows["NN->NN"]["records"], rows["NN->NN"]["tier_a"], rows["NN->NN"]["tier_ab"]) == (1, 0, 1)
    assert rows["NN->YY"]["records"] == 0 and rows["NN->YY"]["tier_a_rate"] is None

    rb = {(r["model"], r["condition"]): r for r in a["random_baselines"]["rows"]}
    assert rb[("A", "M0")]["filtered"] == 1.0 and rb[("B", "M0")]["complement"] == 0.0
    assert a["rates_selected"]["A"]["M0"]["n"] == 2  # the pool scenario is not in the headline rates

    md = markdown(a)
    for table in ("Table 8", "Table 9", "Table 10", "Table 12", "Figure 6", "Figure 3"):
        assert table in md
    figs = figures(a)
    assert [t.split(":")[0] for t, _ in figs] == ["OMIT Figure 2", "OMIT Figure 3", "OMIT Figure 5",
                                                  "OMIT Figure 6"]
    assert all(isinstance(f, Figure) for _, f in figs)


def test_audit_counts_missing_m1_and_strength_fallback():
    c = "utilitarianism-care"
    rows = pair("A", "s1", "NN", conflicts=c) + pair("A", "s2", "NN", conflicts=c)
    rows += pair("A", "s1", "YY", "M1", c, ("Beneficence matters. ANSWER: yes", "ANSWER: yes"))
    # s3: NN at M0, M1 answers present but the omission frame unparsed
    rows += pair("A", "s3", "NN", conflicts=c)
    rows += [rec("A", "s3", "action", "Yes", "M1", c, "A duty. ANSWER: yes"),
             rec("A", "s3", "omission", "", "M1", c, "I keep thinking", parse="unparsed")]
    a = analyze(frame_of(rows), k_random=50, k_permutations=50)
    ta = a["trace_audit"]
    assert ta["baseline_nn"] == 3 and ta["missing"] == 1
    by = {r["transition"]: r for r in ta["rows"]}
    assert by["NN->YY"]["tier_a"] == 1 and by["NN->YY"]["records"] == 1
    assert (by["NN->unparsed"]["records"], by["NN->unparsed"]["tier_a"], by["NN->unparsed"]["tier_ab"]) == (1, 0, 1)
    assert a["strength"]["source"] == "conflicts" and a["strength"]["levels"] == [1]
    assert a["fingerprint"]["cells"] == []


def test_tier_lexicons():
    assert tiers("Kantian ethics forbids this") == (True, True)
    assert tiers("non-maleficence and autonomy") == (True, True)
    assert tiers("the doctrine of double effect") == (True, True)
    assert tiers("It is the right thing to do, out of respect for her") == (False, True)
    assert tiers("We owe a duty of honesty") == (False, True)
    assert tiers("He rightly waited; the outcome was good.") == (False, False)
    assert tiers("") == (False, False)


def test_empty_and_non_omit_inputs():
    assert analyze(frame_of([]).reindex(columns=["suite"])) == {}
    assert markdown({}) == "" and figures({}) == []
    a = analyze(frame_of(pair("A", "s1", "NN")))  # no selected scenarios at all
    json.dumps(a, allow_nan=False)
    assert a["random_baselines"]["rows"] == [] and a["rates_selected"] == {}


def test_cohen_kappa_from_the_2x2_table_is_sklearns_to_the_bit():
    from sklearn.metrics import cohen_kappa_score

    from framebench.text_eval.omit.analysis import cohen_kappa

    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(2, 50))
        x, y = (rng.random(n) < rng.random()).astype(int), (rng.random(n) < rng.random()).astype(int)
        if x.min() == x.max() == y.min() == y.max():
            continue  # undefined: kappa_permutation returns before computing it
        assert cohen_kappa(x, y) == float(cohen_kappa_score(x, y, labels=[1, 0]))
