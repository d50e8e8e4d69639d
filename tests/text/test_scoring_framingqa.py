"""FramingQA text metrics on small record sets whose values are derived by hand below."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from framebench.records import make_row, to_table
from framebench.scoring.bootstrap import cluster_ci, resample_counts
from framebench.text_eval.framingqa.metrics import score_framingqa

MODEL = "baseline:test"


def records(rows: list[dict]) -> pd.DataFrame:
    """Validated records frame (same path as a written-and-read run) from partial rows."""
    full = []
    for i, r in enumerate(rows):
        fields = {"run_id": "r1", "model": MODEL, "suite": "framingqa", "item_id": f"i{i}", **r}
        fields.setdefault("parse", "ok")
        fields.setdefault("answer", fields["gold"] if fields.get("correct") else "")
        full.append(make_row(**fields))
    return to_table(full).to_pandas()


def q(ctx, bias, level, slot, gold, right, distractor="", parse="ok", task="finance", fmt="binary"):
    return {"task": task, "format": fmt, "context_id": ctx, "bias": bias, "level": level,
            "slot": slot, "gold": gold, "correct": right, "distractor": distractor, "parse": parse}


# c1: both biases, two distractors, one unparsed row; c2: one distractor; c3: no correct-bias rows.
BINARY = [
    q("c1", "correct", "root", "s1", "Yes", True),
    q("c1", "correct", "global", "s2", "No", True),
    q("c1", "incorrect", "root", "s3", "No", True, "d1"),
    q("c1", "incorrect", "global", "s4", "No", False, "d1"),
    q("c1", "incorrect", "root", "s5", "Yes", True, "d2"),
    q("c1", "incorrect", "propositional", "s6", "Yes", False, "d2", parse="unparsed"),
    q("c2", "correct", "root", "s1", "Yes", True),
    q("c2", "correct", "global", "s2", "No", False),
    q("c2", "incorrect", "root", "s3", "No", True, "d1"),
    q("c2", "incorrect", "global", "s4", "No", True, "d1"),
    q("c3", "incorrect", "root", "s3", "No", True, "d1"),
    q("c3", "incorrect", "global", "s4", "No", True, "d1"),
]


@pytest.fixture(scope="module")
def binary() -> dict:
    return score_framingqa(records(BINARY))[MODEL]["finance"]["binary"]


def test_context_means_and_strict(binary):
    # per context: c1 4/6 right, c2 3/4, c3 2/2
    assert binary["mean"] == pytest.approx((4 / 6 + 3 / 4 + 1) / 3)
    assert binary["strict_all"] == pytest.approx(1 / 3)          # only c3
    assert binary["strict_correct"] == pytest.approx(1 / 2)      # c1 yes, c2 no, c3 excluded
    assert binary["strict_incorrect"] == pytest.approx(2 / 3)    # c1: d1 0, d2 0; c2 1; c3 1
    assert binary["strict_pair"] == pytest.approx(1 / 3)         # c1 0, c2 0 (correct fails), c3 1
    assert binary["n_contexts"] == 3 and binary["n_rows"] == 12


def test_yes_no_splits_and_parse_rates(binary):
    assert binary["strict_all_yes"] == pytest.approx(1 / 2)  # c1 has the unparsed Yes row; c3 has none
    assert binary["strict_all_no"] == pytest.approx(1 / 3)   # only c3
    assert binary["unparsed_rate"] == pytest.approx(1 / 12)
    assert binary["refusal_rate"] == 0
    assert "neutral" not in binary


def test_expected_strict(binary):
    # p_slot: s1 1, s2 1/2, s3 1, s4 2/3, s5 1, s6 0
    assert binary["expected_correct"] == pytest.approx(1 / 2)            # c1 1/2, c2 1/2
    assert binary["expected_incorrect"] == pytest.approx((1 / 3 + 2 / 3 + 2 / 3) / 3)
    assert binary["expected_all"] == pytest.approx((0 + 1 / 3 + 2 / 3) / 3)
    # gold Yes: c1 s1*s5*s6 = 0, c2 s1 = 1; gold No: c1 1/2*1*2/3, c2 1/2*1*2/3, c3 2/3
    assert binary["expected_all_yes"] == pytest.approx(1 / 2)
    assert binary["expected_all_no"] == pytest.approx((1 / 3 + 1 / 3 + 2 / 3) / 3)


def test_levels(binary):
    lv = binary["levels"]
    assert lv["root"]["correct"]["mean"] == 1 and lv["root"]["all"]["strict"] == 1
    assert lv["global"]["correct"]["mean"] == pytest.approx(1 / 2)
    assert lv["global"]["incorrect"]["strict"] == pytest.approx(2 / 3)
    assert lv["global"]["all"]["mean"] == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)
    assert lv["global"]["all"]["strict"] == pytest.approx(1 / 3)
    assert lv["propositional"]["correct"] == {"mean": None, "strict": None, "strict_ci": None}
    assert lv["propositional"]["incorrect"]["mean"] == 0


def wilson_by_hand(k: float, n: int, z: float = 1.959963984540054) -> list[float]:
    """(k + z²/2) / (n + z²) ± z / (n + z²) * sqrt(k (n - k) / n + z²/4)."""
    center = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    return [max(0.0, center - half), min(1.0, center + half)]


def test_intervals(binary):
    # strict metrics carry Wilson intervals over contexts: strict_all (0, 0, 1) is 1 of 3
    # -> (6.1 %, 79.2 %); strict_incorrect (0, 1, 1) is 2 of 3; root strict (1, 1, 1) is 3 of 3,
    # whose interval does not collapse to (1, 1).
    assert binary["strict_all_ci"] == pytest.approx(wilson_by_hand(1, 3))
    assert binary["strict_all_ci"] == pytest.approx([0.0615, 0.7923], abs=1e-4)
    assert binary["strict_incorrect_ci"] == pytest.approx(wilson_by_hand(2, 3))
    assert binary["levels"]["root"]["all"]["strict_ci"] == pytest.approx(wilson_by_hand(3, 3))
    assert binary["levels"]["root"]["all"]["strict_ci"][0] == pytest.approx(0.4385, abs=1e-4)
    again = score_framingqa(records(BINARY))[MODEL]["finance"]["binary"]
    assert again == binary  # seeded


def test_mc_neutral_counts_everywhere():
    rows = [
        q("m1", "neutral", "", "n", "A", False, fmt="mc", task="medicine"),
        q("m1", "correct", "root", "c", "A", True, fmt="mc", task="medicine"),
        q("m1", "incorrect", "root", "i", "A", True, "B", fmt="mc", task="medicine"),
        q("m2", "neutral", "", "n", "C", True, fmt="mc", task="medicine"),
        q("m2", "correct", "root", "c", "C", True, fmt="mc", task="medicine"),
        q("m2", "incorrect", "root", "i", "C", False, "D", parse="refusal", fmt="mc", task="medicine"),
    ]
    mc = score_framingqa(records(rows))[MODEL]["medicine"]["mc"]
    assert mc["neutral"] == pytest.approx(1 / 2)
    assert mc["mean"] == pytest.approx(2 / 3)
    assert mc["strict_all"] == 0             # m1 misses neutral, m2 refuses
    assert mc["strict_correct"] == 1
    assert mc["strict_pair"] == pytest.approx(1 / 2)
    assert mc["refusal_rate"] == pytest.approx(1 / 6) and mc["unparsed_rate"] == 0
    # p: n 1/2, c 1, i 1/2 -> each context 1/4
    assert mc["expected_all"] == pytest.approx(1 / 4)
    assert "strict_all_yes" not in mc and "expected_all_no" not in mc


def test_pooled_task_averages_contexts_with_slots_within_task():
    rows = [
        q("x1", "correct", "root", "s1", "Yes", True), q("x1", "correct", "global", "s2", "No", True),
        q("x2", "correct", "root", "s1", "Yes", False), q("x2", "correct", "global", "s2", "No", True),
        # same context id and slots in another task
        q("x1", "correct", "root", "s1", "Yes", True, task="law_hearsay"),
        q("x1", "correct", "global", "s2", "No", False, task="law_hearsay"),
    ]
    report = score_framingqa(records(rows))[MODEL]
    assert report["finance"]["binary"]["strict_all"] == pytest.approx(1 / 2)
    assert report["law_hearsay"]["binary"]["strict_all"] == 0
    pooled = report["all"]["binary"]
    assert pooled["n_contexts"] == 3
    assert pooled["strict_all"] == pytest.approx(1 / 3)  # not the task average 1/4
    # within task: finance p(s1)=1/2, p(s2)=1; hearsay p(s1)=1, p(s2)=0 -> (1/2 + 1/2 + 0) / 3
    assert pooled["expected_all"] == pytest.approx(1 / 3)  # slots pooled over tasks would give 4/9


def test_missing_set_gives_none():
    rows = [q("c", "incorrect", "root", "s", "No", True, "d1")]
    metrics = score_framingqa(records(rows))[MODEL]["finance"]["binary"]
    assert metrics["strict_correct"] is None and metrics["strict_correct_ci"] is None
    assert metrics["strict_pair"] == 1  # no correct-bias rows: scored on the distractor's rows


def test_other_suites_ignored():
    assert score_framingqa(records(BINARY).assign(suite="omit")) == {}


def test_resample_counts_rows_sum_to_n():
    counts = resample_counts(7, 50, np.random.default_rng(0))
    assert counts.shape == (50, 7) and (counts.sum(axis=1) == 7).all()


def test_cluster_ci_matches_normal_width_and_skips_nan():
    rng = np.random.default_rng(1)
    x = (rng.random(400) < 0.3).astype(float)
    lo, hi = cluster_ci(x, "k")[0]
    p = x.mean()
    half = 1.959964 * np.sqrt(p * (1 - p) / 400)
    assert lo < p < hi
    assert (hi - lo) == pytest.approx(2 * half, rel=0.1)
    with_nan = np.concatenate([x, np.full(100, np.nan)])
    assert cluster_ci(with_nan, "k")[0] == pytest.approx([lo, hi], abs=0.02)
    assert np.isnan(cluster_ci(np.full(5, np.nan), "k")).all()
    assert cluster_ci(np.ones(5), "k")[0].tolist() == [1.0, 1.0]


def test_pooled_interval_counts_every_context_of_the_format():
    rows = [q("a", "correct", "root", "s", "Yes", True),
            q("b", "correct", "root", "s", "Yes", False, task="medicine")]
    report = score_framingqa(records(rows))[MODEL]
    assert report["finance"]["binary"]["strict_all_ci"] == pytest.approx(wilson_by_hand(1, 1))
    assert report["all"]["binary"]["strict_all"] == 0.5
    assert report["all"]["binary"]["strict_all_ci"] == pytest.approx(wilson_by_hand(1, 2))


def test_cluster_ci_agrees_with_scipy_percentile_bootstrap():
    from scipy.stats import bootstrap

    x = (np.random.default_rng(2).random(300) < 0.6).astype(float)
    ours = cluster_ci(x, "scipy")[0]
    ref = bootstrap((x,), np.mean, n_resamples=4000, method="percentile",
                    rng=np.random.default_rng(3)).confidence_interval
    assert ours == pytest.approx([ref.low, ref.high], abs=0.015)
