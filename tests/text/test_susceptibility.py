"""Framing susceptibility from answer probabilities: hand-computed cases (docs/susceptibility.md)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from framebench.records import encode_answer_probs, label_answer_modes, make_row, to_table
from framebench.scoring import stats
from framebench.scoring.report import compute_report
from framebench.text_eval.susceptibility import framingqa_shifts, omit_shifts


def _fqa(ctx, fmt, bias, level, gold, probs, form="plain", phrasing="Q1", distractor="", model="m"):
    return make_row(run_id="r", model=model, suite="framingqa", task="finance", format=fmt, context_id=ctx,
                    item_id=f"{ctx}:{fmt}:{bias}/{level}/{distractor}/{len(probs)}/{sorted(probs.items())}",
                    bias=bias, level=level, form=form if bias != "neutral" else "",
                    phrasing=phrasing if bias != "neutral" else "", distractor=distractor,
                    slot=f"{bias}/{level}/{distractor}", gold=gold, answer=max(probs, key=probs.get),
                    parse="ok", correct=max(probs, key=probs.get) == gold, answer_mode="constrained",
                    answer_probs=encode_answer_probs(probs))


def _mc(p_gold):
    rest = (1 - p_gold) / 3
    return {"A": p_gold, "B": rest, "C": rest, "D": rest}


def _omit(ctx, frame, p_yes, condition="M0"):
    probs = {"Yes": p_yes, "No": 1 - p_yes}
    return make_row(run_id="r", model="m", suite="omit", task="omit", format="binary", context_id=ctx,
                    item_id=f"{ctx}:{frame}@{condition}", bias="neutral", frame=frame, condition=condition,
                    answer=max(probs, key=probs.get), parse="ok", answer_mode="constrained",
                    answer_probs=encode_answer_probs(probs))


@pytest.fixture
def records():
    rows = [
        # c1 MC: neutral P(A) = .5; correct root .8 (+.3); incorrect root .2 and .4 (-.3, -.1 -> -.2)
        _fqa("c1", "mc", "neutral", "", "A", _mc(0.5)),
        _fqa("c1", "mc", "correct", "root", "A", _mc(0.8)),
        _fqa("c1", "mc", "incorrect", "root", "A", _mc(0.2), distractor="d1"),
        _fqa("c1", "mc", "incorrect", "root", "A", _mc(0.4), distractor="d2"),
        # c2 MC: neutral .6; correct root .6 (0); incorrect root .3 (-.3)
        _fqa("c2", "mc", "neutral", "", "A", _mc(0.6)),
        _fqa("c2", "mc", "correct", "root", "A", _mc(0.6)),
        _fqa("c2", "mc", "incorrect", "root", "A", _mc(0.3), distractor="d1"),
        # c1 binary: mirror P(Yes) = .9; incorrect P(No) = .3 and .5 -> -.6, -.4 -> -.5
        _fqa("c1", "binary", "correct", "root", "Yes", {"Yes": 0.9, "No": 0.1}),
        _fqa("c1", "binary", "incorrect", "root", "No", {"Yes": 0.7, "No": 0.3}, distractor="d1"),
        _fqa("c1", "binary", "incorrect", "root", "No", {"Yes": 0.5, "No": 0.5}, distractor="d2"),
        # a negated incorrect row has its own (negated) mirror: .8 vs .8 -> 0, in the same cell
        _fqa("c1", "binary", "correct", "root", "No", {"Yes": 0.2, "No": 0.8}, form="negated"),
        _fqa("c1", "binary", "incorrect", "root", "Yes", {"Yes": 0.8, "No": 0.2}, form="negated", distractor="d1"),
        # c2 binary: mirror .7, incorrect .7 -> 0
        _fqa("c2", "binary", "correct", "root", "Yes", {"Yes": 0.7, "No": 0.3}),
        _fqa("c2", "binary", "incorrect", "root", "No", {"Yes": 0.3, "No": 0.7}, distractor="d1"),
        # OMIT: s1 (1-.2)-.3 = .5; s2 (1-.9)-.6 = -.5; s3 has one frame only (left out)
        _omit("s1", "action", 0.2), _omit("s1", "omission", 0.3),
        _omit("s2", "action", 0.9), _omit("s2", "omission", 0.6),
        _omit("s3", "action", 0.5),
    ]
    return to_table(rows).to_pandas()


def test_framingqa_shifts_by_hand(records):
    shifts = framingqa_shifts(records)
    mc_inc = shifts[(shifts["format"] == "mc") & (shifts["bias"] == "incorrect")]
    assert sorted(mc_inc["shift"].round(6)) == [-0.3, -0.3, -0.1]
    binary = shifts[shifts["format"] == "binary"]
    assert set(binary["bias"]) == {"incorrect"}  # binary correct-bias rows are the reference
    assert sorted(binary["shift"].round(6)) == [-0.6, -0.4, 0.0, 0.0]


def test_report_cells_average_contexts_first(records):
    sus = compute_report(records)["susceptibility"]
    cells = sus["framingqa"]["m [constrained]"]["finance"]
    # MC incorrect: c1 mean(-.3, -.1) = -.2, c2 -.3 -> -.25; correct: (.3 + 0) / 2
    assert cells["mc"]["root"]["incorrect"]["shift"] == pytest.approx(-0.25)
    assert cells["mc"]["root"]["correct"]["shift"] == pytest.approx(0.15)
    assert cells["mc"]["root"]["incorrect"]["p_gold_reference"] == pytest.approx(0.55)
    # binary incorrect: c1 mean(-.6, -.4, 0) = -1/3, c2 0 -> -1/6
    binary = cells["binary"]["root"]["incorrect"]
    assert binary["shift"] == pytest.approx(-1 / 6) and binary["n_contexts"] == 2
    assert binary["shift_ci"] is None and binary["small_sample"] is True  # 2 contexts: no interval
    assert sus["framingqa"]["m [constrained]"]["all"]["mc"]["root"]["incorrect"]["shift"] == pytest.approx(-0.25)


def test_a_cell_interval_is_the_t_interval_over_its_contexts():
    """Four contexts with MC incorrect-bias shifts -.3, -.1, -.2, -.4 (neutral .5): mean -.25,
    s = sqrt(.05 / 3), half-width t(3) · s / 2; pooled over two tasks (two contexts each),
    the stratified SE: Σ n_t s_t² / N² with Welch-Satterthwaite's df."""
    from scipy.stats import t

    shifts = {"c1": -0.3, "c2": -0.1, "c3": -0.2, "c4": -0.4}
    rows = []
    for ctx, shift in shifts.items():
        task = "finance" if ctx in ("c1", "c2") else "medicine"
        rows += [{**_fqa(ctx, "mc", "neutral", "", "A", _mc(0.5)), "task": task},
                 {**_fqa(ctx, "mc", "incorrect", "root", "A", _mc(0.5 + shift), distractor="d1"), "task": task}]
    sus = compute_report(to_table(rows).to_pandas())["susceptibility"]["framingqa"]["m [constrained]"]
    s = np.std(list(shifts.values()), ddof=1)
    half = t.ppf(0.975, 3) * s / 2
    plain = stats.mean_interval(list(shifts.values()))
    assert plain == pytest.approx([-0.25 - half, -0.25 + half])
    pooled = sus["all"]["mc"]["root"]["incorrect"]
    # per task: finance (-.3, -.1) s² = .02, medicine (-.2, -.4) s² = .02 -> SE² = 2 (2 · .02) / 16
    se2 = 2 * 2 * 0.02 / 16
    df = se2**2 / (2 * (2 * 0.02 / 16) ** 2 / 1)
    assert pooled["shift_ci"] == pytest.approx([-0.25 - t.ppf(0.975, df) * se2**0.5,
                                                -0.25 + t.ppf(0.975, df) * se2**0.5])
    assert sus["finance"]["mc"]["root"]["incorrect"]["shift_ci"] is None  # 2 contexts


def test_omission_shift_by_hand_and_expected_obr_minus_abr(records):
    table = omit_shifts(records).set_index("context_id")
    assert table.loc["s1", "omission_shift"] == pytest.approx(0.5)
    assert table.loc["s2", "omission_shift"] == pytest.approx(-0.5)
    assert "s3" not in table.index
    a, o = 0.2, 0.3  # expected NN minus expected YY with independent draws from the probabilities
    assert (1 - a) * (1 - o) - a * o == pytest.approx(table.loc["s1", "omission_shift"])
    omit = compute_report(records)["susceptibility"]["omit"]["m [constrained]"]["M0"]
    assert omit["omission_shift"] == pytest.approx(0.0) and omit["n"] == 2


def test_generate_and_constrained_rows_of_one_model_stay_apart(records):
    generated = records.assign(answer_mode="generate", answer_probs="")
    both = pd.concat([generated, records], ignore_index=True)
    labelled = label_answer_modes(both)
    assert set(labelled["model"]) == {"m", "m [constrained]"}
    assert label_answer_modes(labelled)["model"].equals(labelled["model"])  # idempotent
    report = compute_report(both)
    assert set(report["framingqa"]) == {"m", "m [constrained]"}
    assert set(report["susceptibility"]["framingqa"]) == {"m [constrained]"}


def test_markdown_and_html_show_the_section(records):
    from framebench.scoring.html import render_html
    from framebench.scoring.markdown import render_markdown

    report = compute_report(records)
    md = render_markdown(report)
    assert "Framing susceptibility" in md and "How to read" in md
    assert "| m \\[constrained\\] | finance | mc | Root | incorrect | -25.0 (n &lt; 4) | 55.0 | 30.0 | 2 † |" in md
    assert "n < K: no interval" in md.replace("&lt;", "<") and "† Small sample" in md
    from framebench.text_eval.susceptibility_report import summary_rows

    console = {t.title: t for t in summary_rows(report["susceptibility"])}
    row = console["Framing susceptibility, all tasks: shift of P(gold), pp"].rows[0]
    assert (row[4], row[-1]) == ("2 †", "n < 4")  # the console marks the small sample too
    html = render_html(report, label_answer_modes(records))
    assert "Framing susceptibility: shift of P(gold)" in html and "data:image/png;base64," in html
    json.dumps(report)


def test_answer_probs_validation(records):
    from framebench.records import RecordsError, validate_frame

    bad = records.copy()
    bad.loc[0, "answer_probs"] = json.dumps({"Yes": 0.7, "No": 0.7})
    with pytest.raises(RecordsError, match="row 0: column 'answer_probs' probabilities do not sum to 1"):
        validate_frame(bad, "x.parquet")
    bad.loc[0, "answer_probs"] = "{not json"
    with pytest.raises(RecordsError, match="is not JSON"):
        validate_frame(bad, "x.parquet")
    bad = records.copy()
    bad.loc[0, "answer_mode"] = "generate"
    with pytest.raises(RecordsError, match="answer_mode is not 'constrained'"):
        validate_frame(bad, "x.parquet")
