"""OMIT rates, McNemar + Holm and per-conflict OBR on hand-made pairs (values derived below)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy.stats import binomtest

from framebench.records import make_row, to_table
from framebench.text_eval.omit.metrics import score_omit

CONFLICTS = {"s1": "u-d|u-c", "s2": "u-d", "s3": "c-v", "s4": "u-c", "s5": "u-d", "pool1": ""}
# model -> condition -> scenario -> (action answer, omission answer); "?" = unparsed
PAIRS = {
    "m1": {
        "M0": {"s1": "NN", "s2": "NN", "s3": "YN", "s4": "YY", "s5": "N?", "pool1": "NN"},
        "M1": {"s1": "YN", "s2": "NN", "s3": "NN", "s4": "YY", "s5": "NN"},
        "M2": {"s1": "NN", "s2": "NN", "s3": "YN", "s4": "YY", "s5": "NN"},
    },
    "m2": {
        "M0": {s: "NN" for s in CONFLICTS},
        "M1": {s: "YN" for s in CONFLICTS},
        "M2": {s: "NY" for s in CONFLICTS if s != "pool1"},
    },
    "persona:utilitarianism": {"M0": {s: "YY" for s in CONFLICTS}},
}
WORD = {"Y": "Yes", "N": "No"}


def records() -> pd.DataFrame:
    rows = []
    for model, conditions in PAIRS.items():
        for condition, scenarios in conditions.items():
            for scenario, pattern in scenarios.items():
                for frame, letter in zip(("action", "omission"), pattern, strict=True):
                    rows.append(make_row(
                        run_id="r", model=model, suite="omit", task="omit", format="binary",
                        context_id=scenario, item_id=f"{scenario}-{frame}-{condition}",
                        bias="neutral", frame=frame, condition=condition,
                        conflicts=CONFLICTS[scenario], answer=WORD.get(letter, ""),
                        parse="ok" if letter in WORD else "unparsed", output=letter))
    return to_table(rows).to_pandas()


@pytest.fixture(scope="module")
def report() -> dict:
    return score_omit(records())


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_rates(report):
    assert report["scope"] == "labeled"  # the unlabeled pool scenario is left out
    r = report["rates"]
    assert set(r) == {"m1", "m2"}  # persona panel rows left out
    m0 = r["m1"]["M0"]
    assert m0["n"] == 4 and m0["unparsed_pairs"] == 1  # s5 has an unparsed omission answer
    assert m0["OBR"] == pytest.approx(2 / 4) and m0["ABR"] == pytest.approx(1 / 4)
    assert m0["FCR"] == pytest.approx(1 / 4)
    # fewer than 10 pairs: no interval (docs/statistics.md "Small samples"), a small sample
    assert (m0["OBR_low"], m0["OBR_high"]) == (None, None) and m0["small_sample"] is True
    assert r["m1"]["M1"]["OBR"] == pytest.approx(3 / 5)
    assert r["m2"]["M0"]["OBR"] == 1 and r["m2"]["M2"]["FCR"] == 1


def test_obr_interval_is_wilson_from_ten_pairs():
    """12 scenarios, 5 omission-biased (No, No): Wilson's interval of 5 of 12 (by hand); 1 of 12:
    the lower bound is the one-sided Poisson bound -ln(0.95) / 12 (Brown, Cai & DasGupta)."""
    from framebench.text_eval.omit.metrics import rates

    def table(nn: int) -> pd.DataFrame:
        index = pd.MultiIndex.from_tuples([("m", "M0", f"s{i}") for i in range(12)],
                                          names=["model", "condition", "context_id"])
        return pd.DataFrame({"pattern": ["NN"] * nn + ["YY"] * (12 - nn)}, index=index)

    five = rates(table(5))["m"]["M0"]
    assert (five["OBR_low"], five["OBR_high"]) == pytest.approx(wilson(5, 12))
    one = rates(table(1))["m"]["M0"]
    assert one["OBR_low"] == pytest.approx(-math.log(0.95) / 12) and one["OBR_high"] == pytest.approx(wilson(1, 12)[1])


def test_mcnemar_and_holm(report):
    tests = {(t["model"], t["condition"]): t for t in report["mcnemar"]}
    assert list(tests) == [("m1", "M1"), ("m1", "M2"), ("m2", "M1"), ("m2", "M2")]
    # m1/M1 over s1-s4 (s5 unpaired at M0): NN->not s1 (b=1), not->NN s3 (c=1): P(X>=1 | n=2) = 3/4
    assert (tests["m1", "M1"]["b"], tests["m1", "M1"]["c"]) == (1, 1)
    assert tests["m1", "M1"]["p"] == pytest.approx(0.75)
    # m1/M2: no discordant pair -> p = 1 by convention
    assert (tests["m1", "M2"]["b"], tests["m1", "M2"]["c"], tests["m1", "M2"]["p"]) == (0, 0, 1.0)
    # m2: all five NN at M0 lost under M1 and M2 -> 1/32, a tie
    for cond in ("M1", "M2"):
        assert (tests["m2", cond]["b"], tests["m2", cond]["c"]) == (5, 0)
        assert tests["m2", cond]["p"] == pytest.approx(1 / 32)
        assert tests["m2", cond]["p"] == pytest.approx(binomtest(5, 5, 0.5, alternative="greater").pvalue)
    # Holm over 4 tests, sorted p = 1/32, 1/32, 3/4, 1: 4/32 = .125, max(.125, 3/32) = .125,
    # min(1, 2 * 3/4) = 1, 1
    assert tests["m2", "M1"]["p_holm"] == pytest.approx(0.125)
    assert tests["m2", "M2"]["p_holm"] == pytest.approx(0.125)
    assert tests["m1", "M1"]["p_holm"] == 1 and tests["m1", "M2"]["p_holm"] == 1


def test_conflicts(report):
    m1 = report["conflicts"]["m1"]["M0"]
    assert m1 == pytest.approx({"u-d": 1.0, "u-c": 0.5, "c-v": 0.0})  # s5 uncounted at M0
    assert report["conflicts"]["m2"]["M1"] == {"u-d": 0.0, "u-c": 0.0, "c-v": 0.0}


def test_no_baseline_no_tests_and_no_records():
    df = records()
    assert score_omit(df[df["condition"] != "M0"])["mcnemar"] == []
    assert score_omit(df[df["model"].str.startswith("persona:")]) == {}


def test_unlabeled_set_is_scored_whole():
    df = records().assign(conflicts="")
    report = score_omit(df)
    assert report["scope"] == "all"
    m0 = report["rates"]["m1"]["M0"]
    assert (m0["n"], m0["OBR"], m0["unparsed_pairs"]) == (5, pytest.approx(3 / 5), 1)
    assert report["conflicts"] == {}
