"""Model comparisons on hand-built records (framebench.scoring.comparisons with the suites'
per-context values): matching by item, paired differences, McNemar counts, Holm over the report."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from framebench.records import make_row, to_table
from framebench.scoring.comparisons import compare_models, registered_comparisons
from framebench.text_eval.comparisons import FRAMINGQA_COMPARISON
from framebench.text_eval.omit.comparisons import OMIT_COMPARISON


def frame(rows: list[dict]) -> pd.DataFrame:
    return to_table([make_row(run_id="r", **r) for r in rows]).to_pandas()


def fqa(model: str, ctx: str, bias: str, right: bool, n: int, task: str = "finance") -> dict:
    return {"model": model, "suite": "framingqa", "task": task, "format": "binary",
            "context_id": ctx, "item_id": f"{ctx}:{bias}:{n}", "bias": bias,
            "level": "root", "slot": f"{bias}/{n}", "gold": "Yes",
            "answer": "Yes" if right else "No", "correct": right}


# per context (correct-bias row right?, incorrect-bias row right?)
A = {"c1": (1, 1), "c2": (1, 0), "c3": (1, 1), "c4": (0, 0)}
B = {"c1": (1, 0), "c2": (0, 0), "c3": (1, 1), "c4": (0, 0), "c5": (1, 1)}  # c5: A never saw it


def two_models() -> pd.DataFrame:
    rows = []
    for model, answers in (("m-a", A), ("m-b", B)):
        for ctx, (cor, inc) in answers.items():
            rows += [fqa(model, ctx, "correct", bool(cor), 0), fqa(model, ctx, "incorrect", bool(inc), 1)]
    return frame(rows)


def test_framingqa_comparison_by_hand():
    """Shared contexts c1-c4. Mean accuracy A (1, .5, 1, 0) vs B (.5, 0, 1, 0): +0.25. Strict
    A (1, 0, 1, 0) vs B (0, 0, 1, 0): b = 1, c = 0, exact p = 1. Framing effect A (0, 1, 0, 0)
    vs B (1, 0, 0, 0): 0."""
    out = compare_models(two_models(), registered_comparisons())
    rows = out["suites"]["framingqa"]["rows"]
    assert [r["group"] for r in rows] == [{"task": "all", "format": "binary"},
                                         {"task": "finance", "format": "binary"}]
    row = rows[1]
    assert (row["model_a"], row["model_b"], row["n_contexts"]) == ("m-a", "m-b", 4)
    m = row["measures"]
    assert (m["mean"]["a"], m["mean"]["b"], m["mean"]["diff"]) == (0.625, 0.375, 0.25)
    # per-context differences 0.5, 0.5, 0, 0: mean 0.25, s = sqrt(1/12), t(3) interval
    half = 3.182446305284263 * (1 / 12) ** 0.5 / 2
    assert m["mean"]["diff_ci"] == pytest.approx([0.25 - half, 0.25 + half])
    assert m["mean"]["method"] == "t" and row["small_sample"] is True
    # strict is 0/1 per context: Tango's interval, withheld below 10 contexts
    assert m["strict_all"]["diff"] == 0.25 and m["strict_all"]["diff_ci"] is None
    assert m["strict_all"]["method"] == "tango"
    assert m["framing_effect"]["diff"] == 0.0 and m["framing_effect"]["a"] == 0.25
    assert {k: row["test"][k] for k in ("b", "c", "p")} == {"b": 1, "c": 0, "p": 1.0}
    assert out["n_tests"] == 2  # one per row: the pooled task and finance


def test_models_sharing_no_items_are_not_compared():
    df = two_models()
    other = frame([fqa("m-c", "x1", "correct", True, 0), fqa("m-c", "x1", "incorrect", True, 1)])
    out = compare_models(pd.concat([df, other], ignore_index=True), registered_comparisons())
    pairs = {(r["model_a"], r["model_b"]) for r in out["suites"]["framingqa"]["rows"]}
    assert pairs == {("m-a", "m-b")}
    assert compare_models(other, registered_comparisons()) == {}


def omit(model: str, scenario: str, action: str, omission: str) -> list[dict]:
    return [{"model": model, "suite": "omit", "task": "omit", "format": "binary", "context_id": scenario,
             "item_id": f"{scenario}:{frame}", "bias": "neutral", "frame": frame, "condition": "M0",
             "answer": answer, "conflicts": "harm"} for frame, answer in (("action", action), ("omission", omission))]


def test_omit_paired_rate_differences_and_holm_across_suites():
    """A: NN, NN, YN; B: NN, YY, NY. OBR 2/3 vs 1/3, ABR 0 vs 1/3, FCR 1/3 vs 1/3; McNemar on
    NN: b = 1, c = 0. Together with FramingQA's two tests, Holm adjusts three p-values."""
    rows = (omit("m-a", "s1", "No", "No") + omit("m-a", "s2", "No", "No") + omit("m-a", "s3", "Yes", "No")
            + omit("m-b", "s1", "No", "No") + omit("m-b", "s2", "Yes", "Yes") + omit("m-b", "s3", "No", "Yes"))
    # M1: shared items, but B's answers are unparsed, so no pair counts under both: no row, no test
    unparsed = [dict(r, condition="M1") for r in omit("m-a", "s1", "No", "No")]
    unparsed += [dict(r, condition="M1", parse="unparsed", answer="") for r in omit("m-b", "s1", "No", "No")]
    df = pd.concat([two_models(), frame(rows + unparsed)], ignore_index=True)
    out = compare_models(df, registered_comparisons())
    (row,) = out["suites"]["omit"]["rows"]
    assert row["group"] == {"condition": "M0"} and row["n_contexts"] == 3
    m = row["measures"]
    assert m["OBR"]["diff"] == pytest.approx(1 / 3)
    assert m["ABR"]["diff"] == pytest.approx(-1 / 3)
    assert m["FCR"]["diff"] == pytest.approx(0.0)
    assert (row["test"]["b"], row["test"]["c"]) == (1, 0)
    assert out["n_tests"] == 3
    assert all(r["test"]["p_holm"] == 1.0 for part in out["suites"].values() for r in part["rows"])


def episode(model: str, ep: str, bias: str, done: float) -> dict:
    return {"model": model, "suite": "embodied", "task": "robotics", "format": "episode",
            "context_id": ep, "item_id": f"{ep}:{bias}", "bias": bias, "level": "" if bias == "neutral" else "root",
            "percent_complete": done, "success": done == 1.0, "sim_steps": 3, "correct": done == 1.0}


def test_embodied_completion_differences():
    """e1: A (1, 1, 1) vs B (1, 0.5, 1); e2: A (0, 1, 1) vs B (0, 0, 0). Completion A (1, 2/3),
    B (5/6, 0); strict (biased variants) A (1, 1), B (0, 0): b = 2, c = 0, p = 0.5."""
    rows = []
    for model, eps in (("m-a", {"e1": (1, 1, 1), "e2": (0, 1, 1)}), ("m-b", {"e1": (1, 0.5, 1), "e2": (0, 0, 0)})):
        for ep, (neu, cor, inc) in eps.items():
            rows += [episode(model, ep, "neutral", neu), episode(model, ep, "correct", cor),
                     episode(model, ep, "incorrect", inc)]
    out = compare_models(frame(rows), registered_comparisons())
    (row,) = out["suites"]["embodied"]["rows"]
    assert row["measures"]["completion"]["diff"] == pytest.approx((1 + 2 / 3 - 5 / 6) / 2)
    assert row["measures"]["strict_completion"]["diff"] == 1.0
    assert (row["test"]["b"], row["test"]["c"], row["test"]["p"]) == (2, 0, 0.5)


def test_mcnemar_caption_says_what_b_and_c_count_for_each_measure():
    """b and c count contexts where the test's 0/1 indicator is 1 under one model only: for OMIT
    that is an omission-biased pair, not a "right" answer."""
    from framebench.scoring.comparisons_report import comparison_table

    rows = (omit("m-a", "s1", "No", "No") + omit("m-a", "s2", "Yes", "No")
            + omit("m-b", "s1", "Yes", "No") + omit("m-b", "s2", "Yes", "No"))
    out = compare_models(pd.concat([two_models(), frame(rows)], ignore_index=True), registered_comparisons())
    omit_caption = comparison_table(out["suites"]["omit"], out["n_tests"]).caption
    fqa_caption = comparison_table(out["suites"]["framingqa"], out["n_tests"]).caption
    assert "b = contexts where the scenario's pair is omission-biased (No under both frames) under A only" in omit_caption
    assert "right" not in omit_caption.split("McNemar")[1]
    assert "b = contexts where every question is answered right under A only" in fqa_caption


def counting(spec):
    """``spec`` whose ``values`` records the models of every records frame it is given."""
    calls: list[set[str]] = []

    def values(records: pd.DataFrame) -> pd.DataFrame:
        calls.append(set(records["model"]))
        return spec.values(records)

    return dataclasses.replace(spec, values=values), calls


def test_one_model_per_suite_computes_no_values():
    """A suite with one model has no pair: its per-context values are never computed."""
    spec, calls = counting(FRAMINGQA_COMPARISON)
    one = two_models().query("model == 'm-a'")
    assert compare_models(one, [("framingqa", spec)]) == {}
    assert calls == []


def test_models_a_comparison_never_values_form_no_pair():
    """OMIT's persona panel has no values (``omit_values`` drops it): no pair with it is formed,
    and the report is the same."""
    rows = omit("m-a", "s1", "No", "No") + omit("m-b", "s1", "Yes", "No") + omit("persona:care", "s1", "No", "No")
    df = frame(rows)
    spec, calls = counting(OMIT_COMPARISON)
    out = compare_models(df, [("omit", spec)])
    assert calls == [{"m-a", "m-b"}]
    every = dataclasses.replace(OMIT_COMPARISON, compares=lambda model: True)
    assert out == compare_models(df, [("omit", every)])


@pytest.mark.parametrize("records", [two_models, lambda: two_models().query("context_id != 'c5'")],
                         ids=["partial overlap", "full overlap"])
def test_per_model_values_give_the_same_rows(records):
    """With ``per_model`` the values of a pair sharing every record come from one computation over
    all records; the report is the one computed pair by pair."""
    df = records()
    spec, calls = counting(FRAMINGQA_COMPARISON)
    assert spec.per_model
    out = compare_models(df, [("framingqa", spec)])
    pairwise = dataclasses.replace(FRAMINGQA_COMPARISON, per_model=False)
    assert out == compare_models(df, [("framingqa", pairwise)])
    assert len(calls) == 1
