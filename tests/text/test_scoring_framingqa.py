"""FramingQA text metrics on small record sets whose values are derived by hand below."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from framebench.records import make_row, to_table
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


def test_three_contexts_get_no_strict_interval(binary):
    """Below 10 contexts a rate gets no interval (docs/statistics.md "Small
    samples"): the strict metrics of these 3 contexts have none, and the group is flagged."""
    assert binary["strict_all"] == pytest.approx(1 / 3) and binary["strict_all_ci"] is None
    assert binary["strict_incorrect_ci"] is None
    assert binary["levels"]["root"]["all"]["strict_ci"] is None
    assert binary["small_sample"] is True
    assert score_framingqa(records(BINARY))[MODEL]["finance"]["binary"] == binary  # deterministic


def strict_contexts(passing: list[bool], task: str = "finance", prefix: str = "k") -> list[dict]:
    """One context per entry, each with a correct-bias and an incorrect-bias row, both right when
    the context passes, the incorrect-bias row wrong otherwise."""
    rows = []
    for i, ok in enumerate(passing):
        rows += [q(f"{prefix}{i}", "correct", "root", "s1", "Yes", True, task=task),
                 q(f"{prefix}{i}", "incorrect", "root", "s2", "No", ok, "d1", task=task)]
    return rows


def test_strict_intervals_are_wilson_from_ten_contexts():
    # 3 of 10 pass: Wilson (k + z²/2)/(n + z²) ± z/(n + z²) sqrt(k(n-k)/n + z²/4) = (10.8 %, 60.3 %)
    ten = score_framingqa(records(strict_contexts([True] * 3 + [False] * 7)))[MODEL]["finance"]["binary"]
    assert ten["strict_all"] == pytest.approx(0.3)
    assert ten["strict_all_ci"] == pytest.approx(wilson_by_hand(3, 10))
    assert ten["strict_all_ci"] == pytest.approx([0.1078, 0.6032], abs=1e-4)
    # strict correct: 10 of 10 -> (n / (n + z²), 1) = (72.2 %, 100 %), not (100, 100)
    assert ten["strict_correct_ci"] == pytest.approx([10 / (10 + 1.959963984540054**2), 1.0])
    assert ten["levels"]["root"]["incorrect"]["strict_ci"] == pytest.approx(wilson_by_hand(3, 10))
    nine = score_framingqa(records(strict_contexts([True] * 3 + [False] * 6)))[MODEL]["finance"]["binary"]
    assert nine["strict_all"] == pytest.approx(1 / 3) and nine["strict_all_ci"] is None


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


def test_pooled_interval_counts_every_context_of_the_format():
    """6 finance contexts (4 pass) and 6 medicine ones (1 passes): each task is below 10 contexts
    and has no interval; pooled, 5 of 12 get the score interval with the tasks as strata, which
    the tasks' different rates make narrower than Wilson's of 5 of 12 (tests/test_stats.py checks
    the stratified interval itself)."""
    from framebench.scoring.stats import stratified_proportion_intervals

    rows = (strict_contexts([True] * 4 + [False] * 2)
            + strict_contexts([True] + [False] * 5, task="medicine", prefix="m"))
    report = score_framingqa(records(rows))[MODEL]
    assert report["finance"]["binary"]["strict_all"] == pytest.approx(4 / 6)
    assert report["finance"]["binary"]["strict_all_ci"] is None
    assert report["all"]["binary"]["strict_all"] == pytest.approx(5 / 12)
    pooled = report["all"]["binary"]["strict_all_ci"]
    assert pooled == pytest.approx(stratified_proportion_intervals([[4, 1]], [[6, 6]])[0])
    wilson = wilson_by_hand(5, 12)
    assert wilson[0] < pooled[0] < 5 / 12 < pooled[1] < wilson[1]
    assert report["all"]["binary"]["n_contexts"] == 12 and report["all"]["binary"]["small_sample"]
