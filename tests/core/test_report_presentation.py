"""How the report presents numbers: the finding in words, then the headline, first; one unit convention, no scientific notation
in percent tables, labelled zero and n/a bars, discrete OMIT Fig. 3 bins, readable heat maps,
defined columns, small-n warnings and one caption per embodied table."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from framebench.embodied.report import embodied_tables
from framebench.records import make_row, read_records
from framebench.scoring.markdown import render_markdown, report_sections
from framebench.scoring.report import compute_report
from framebench.text_eval.framingqa.tables import framingqa_tables

REPO = Path(__file__).resolve().parents[2]


def _fqa_rows(model: str, pattern: dict[str, dict[str, list[bool]]]) -> list[dict]:
    rows = []
    for ctx, by_bias in pattern.items():
        for bias, answers in by_bias.items():
            for k, ok in enumerate(answers):
                rows.append(make_row(
                    run_id="r", model=model, suite="framingqa", task="finance", format="binary",
                    context_id=ctx, item_id=f"{ctx}-{bias}-{k}", bias=bias, level="root", form="plain",
                    phrasing=f"Q{k + 1}", option="x", distractor="d1" if bias == "incorrect" else "",
                    slot=f"{bias}/root/plain/Q{k + 1}", gold="Yes", answer="Yes" if ok else "No",
                    parse="ok", correct=ok))
    return rows


@pytest.fixture(scope="module")
def report():
    # c1: correct-bias 2/2, incorrect-bias 1/2; c2: correct-bias 1/2, incorrect-bias 0/2
    rows = _fqa_rows("m", {"c1": {"correct": [True, True], "incorrect": [True, False]},
                           "c2": {"correct": [True, False], "incorrect": [False, False]}})
    return compute_report(pd.DataFrame(rows))


def test_headline_is_hand_computable_and_leads_the_report(report):
    h = report["headline"]["m"]["binary"]
    assert h["n_contexts"] == 2
    assert h["accuracy_correct"] == pytest.approx(0.75)    # (1 + 0.5) / 2
    assert h["accuracy_incorrect"] == pytest.approx(0.25)  # (0.5 + 0) / 2
    assert h["framing_effect"] == pytest.approx(0.5)       # (0.5 + 0.5) / 2
    assert h["strict_all"] == 0.0
    # 2 contexts: below the 4 a mean's interval needs, so none, and the row is a small sample
    assert h["accuracy_correct_ci"] is None and h["framing_effect_ci"] is None and h["small_sample"]
    md = render_markdown(report)
    assert md.index("## Finding") < md.index("## Headline") < md.index("## FramingQA")
    row = [line for line in md.splitlines() if line.startswith("| m | Binary")][0]
    assert "75.0 (n &lt; 4)" in row and "+50.0 (n &lt; 4)" in row and "2 †" in row
    assert "n &lt; K: no interval" in md


def test_headline_interval_is_the_t_interval_over_contexts():
    """Framing effects .5, .5, 1, 0 over four contexts: mean .5, s = sqrt(1/6), t(3) · s / 2,
    the upper bound clipped to the effect's range (at most +1); contexts that all differ by
    exactly .5 give a zero-width interval."""
    from scipy.stats import t

    rows = _fqa_rows("m", {"c1": {"correct": [True, True], "incorrect": [True, False]},
                           "c2": {"correct": [True, False], "incorrect": [False, False]},
                           "c3": {"correct": [True, True], "incorrect": [False, False]},
                           "c4": {"correct": [True, False], "incorrect": [True, False]}})
    h = compute_report(pd.DataFrame(rows))["headline"]["m"]["binary"]
    half = t.ppf(0.975, 3) * (1 / 6) ** 0.5 / 2
    assert h["framing_effect"] == pytest.approx(0.5)
    assert half > 0.5 and h["framing_effect_ci"] == pytest.approx([0.5 - half, 1.0])
    same = _fqa_rows("m", {f"c{i}": {"correct": [True, True], "incorrect": [True, False]} for i in range(4)})
    assert compute_report(pd.DataFrame(same))["headline"]["m"]["binary"]["framing_effect_ci"] == [0.5, 0.5]


def test_percent_tables_have_no_scientific_notation():
    fqa = {"m": {"all": {"binary": {"n_contexts": 40, "mean": 0.5, "strict_all": 1e-9,
                                    "expected_all": 3e-17, "expected_correct": 2e-4,
                                    "strict_all_ci": [0.0, 2e-8], "levels": {}}}}}
    cells = [c for t in framingqa_tables(fqa) for row in t.rows for c in row]
    assert not any(re.search(r"\de[-+]?\d", c) for c in cells)
    assert "<0.1 (0.0, <0.1)" in cells and "<0.1" in cells


def test_columns_are_defined_and_small_n_is_flagged():
    def table(n: int):
        fqa = {"m": {"all": {"binary": {"n_contexts": n, "mean": 0.5, "unparsed_rate": 0.1, "levels": {}}}}}
        return framingqa_tables(fqa)[0]

    caption = table(12).caption
    for term in ("n: contexts", "Unparsed:", "All (Yes) / All (No):"):
        assert term in caption
    assert "Small sample" in caption and table(12).rows[0][2] == "12 †"
    assert "Small sample" not in table(30).caption and table(30).rows[0][2] == "30"


def test_each_embodied_table_has_its_own_caption():
    values = {f"{m}_{k}_{x}": 0.5 for m in ("completion", "replans", "steps")
              for k, xs in (("mean", ("neutral", "correct", "incorrect")), ("strict", ("correct", "incorrect", "all")))
              for x in xs}
    tables = embodied_tables({"oracle": {"overall": {**values, "n_episodes": 12}}})
    captions = [t.caption for t in tables]
    assert len(tables) == 3 and len(set(captions)) == 3
    assert "percent complete" in captions[0] and "LLM planner calls" in captions[1] and "simulator steps" in captions[2]
    assert "n/a" in captions[1]  # oracle replans


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_zero_bars_show_their_value_and_missing_ones_na():
    from framebench.embodied.report import embodied_completion_figure

    emb = {"zero": {"overall": {"completion_mean_neutral": 0.0, "completion_mean_correct": 0.0,
                                "completion_mean_incorrect": None, "completion_strict_all": 0.0}}}
    texts = _texts(embodied_completion_figure(emb))
    assert texts == ["0", "0", "n/a", "n/a", "n/a", "0"]  # mean: 0, 0, n/a; strict: n/a, n/a, 0


@pytest.fixture(scope="module")
def omit_analysis(tmp_path_factory):
    from framebench.cli import main

    out = tmp_path_factory.mktemp("omit") / "run"
    with pytest.raises(SystemExit) as exc:
        main(["text", "--model", "baseline:random", "--data", str(REPO / "datasets/demo/omit"),
              "--out", str(out), "--quiet"])
    assert not exc.value.code
    df = pd.concat([read_records(out), read_records(REPO / "datasets/demo/omit/personas")], ignore_index=True)
    return compute_report(df)["omit"]["analysis"]


def test_omit_figure_3_bins_are_not_joined_and_in_percent(omit_analysis):
    from framebench.text_eval.omit.analysis_report import _fig_strength

    fig = _fig_strength(omit_analysis)
    ax = fig.axes[0]
    assert all(len(line.get_xdata()) <= 1 for line in ax.get_lines())  # no line joins two bins
    assert "%" in ax.get_ylabel()
    ys = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections])
    assert ys.max() > 1.0 or ys.max() == 0.0  # percent, not fractions


def test_heat_map_labels_are_readable(omit_analysis):
    from framebench.text_eval.omit.analysis_report import _fig_conflicts, _fig_fingerprint

    for make in (_fig_conflicts, _fig_fingerprint):
        fig = make(omit_analysis)
        ax = fig.axes[0]
        sizes = [t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        assert sizes and min(sizes) >= 9
        assert min(t.get_fontsize() for t in ax.texts) >= 8


def test_omit_analysis_tables_are_in_percent(omit_analysis):
    from framebench.text_eval.omit.analysis_report import markdown

    text = markdown(omit_analysis)
    assert "OBR (%)" in text
    table9 = text.split("(OMIT Table 9)", 1)[1].split("###", 1)[0]
    values = [float(v) for v in re.findall(r"\| (\d+\.\d) \|", table9)]
    assert values and max(values) > 1.0 and all(v == round(v, 1) for v in values)


def test_report_sections_start_with_the_finding_then_the_headline(report):
    assert [s.title for s in report_sections(report)[:2]] == ["Finding", "Headline"]
