"""report.md: the tables carry the report's fractions as percentages (one decimal) in the right
rows and columns, with their intervals, for a hand-made report dict."""

from __future__ import annotations

import pytest

from framebench.scoring.formatting import pct, pct_ci
from framebench.scoring.markdown import render_markdown

BINARY = {
    "mean": 0.574, "strict_all": 0.0, "strict_correct": 0.277, "strict_incorrect": 0.385,
    "strict_pair": 0.0833, "strict_all_yes": 0.308, "strict_all_no": 0.0,
    "expected_correct": 0.068, "expected_incorrect": 0.242, "expected_all": 5e-17,
    "unparsed_rate": 0.125, "n_contexts": 40,
    "strict_correct_ci": [0.201, 0.35], "strict_pair_ci": [0.04, 0.1304],
    "strict_all_ci": [0.0, 0.0], "strict_incorrect_ci": None,
    "levels": {
        "root": {"correct": {"mean": 0.879, "strict": 0.794}, "incorrect": {"mean": 0.275, "strict": 0.216},
                 "all": {"mean": 0.426, "strict": 0.098}},
        "propositional": {"correct": {"mean": 0.909, "strict": 0.862},
                          "incorrect": {"mean": 0.852, "strict": 0.834},
                          "all": {"mean": 0.866, "strict": 0.70}},
        "global": {"correct": {"mean": 0.917, "strict": 0.862}, "incorrect": {"mean": 0.352, "strict": 0.337},
                   "all": {"mean": 0.493, "strict": 0.166}},
    },
}
MC = {"mean": 0.48, "strict_all": 0.046, "strict_correct": 0.772, "strict_incorrect": 0.186,
      "strict_pair": 0.133, "neutral": 0.5549, "expected_correct": 0.393, "expected_incorrect": 0.0022,
      "expected_all": 2e-10, "unparsed_rate": 0.0, "n_contexts": 12, "levels": {}}
REPORT = {
    "framingqa": {
        "hf:/models/a|b": {"finance": {"binary": BINARY}, "all": {"binary": BINARY, "mc": MC}},
    },
    "embodied": {
        "openai:planner": {
            "overall": {"completion_mean_neutral": 0.56, "completion_mean_correct": 0.55,
                        "completion_mean_incorrect": 0.52, "completion_strict_correct": 0.14,
                        "completion_strict_incorrect": 0.086, "completion_strict_all": 0.037,
                        "replans_mean_neutral": 8.94, "replans_strict_all": None,
                        "steps_mean_neutral": 686.0, "steps_strict_correct": 365.04},
            "temporal": {"completion_mean_neutral": 0.39, "completion_strict_all": 0.0},
        }
    },
    "omit": {
        "rates": {
            "m1": {"M0": {"n": 218, "OBR": 0.55, "OBR_low": 0.4837, "OBR_high": 0.6148, "ABR": 0.00917,
                          "FCR": 0.4404, "unparsed_pairs": 0},
                   "M1": {"n": 215, "OBR": 0.096, "OBR_low": 0.06, "OBR_high": 0.14, "ABR": 0.234,
                          "FCR": 0.67, "unparsed_pairs": 3}},
            "m2": {"M0": {"n": 207, "OBR": 0.07, "OBR_low": 0.037, "OBR_high": 0.105, "ABR": 0.227,
                          "FCR": 0.71, "unparsed_pairs": 11}},
        },
        "mcnemar": [{"model": "m1", "condition": "M1", "b": 102, "c": 5, "p": 0.000012, "p_holm": 0.03}],
        "conflicts": {"m1": {"M0": {"care-deontology": 0.25, "utilitarianism-care": 0.6}}},
    },
}


def table_rows(markdown: str, title_part: str) -> list[dict[str, str]]:
    """The rows of the table whose heading contains ``title_part``, as header -> cell dicts."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("### ") and title_part in line)
    table = []
    for line in lines[start + 1:]:
        if line.startswith("### ") or line.startswith("## "):
            break
        if line.startswith("|"):
            table.append(line)
    split = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in table]
    header, body = split[0], split[2:]
    return [dict(zip(header, row, strict=True)) for row in body]


@pytest.fixture(scope="module")
def markdown() -> str:
    return render_markdown(REPORT)


def test_formatting_helpers():
    assert pct(0.2766) == "27.7"
    assert pct(0.0) == "0.0"
    assert pct(None) == "–"
    assert pct(float("nan")) == "–"
    assert pct(2e-10) == "<0.1"  # not hidden as 0.0 (cf. FramingQA Table 4), no scientific notation
    assert pct_ci(0.277, [0.201, 0.35]) == "27.7 (20.1, 35.0)"
    assert pct_ci(0.277, None) == "27.7"
    assert pct_ci(None, [0.1, 0.2]) == "–"


def test_binary_table_has_strict_metrics_with_intervals(markdown):
    rows = table_rows(markdown, "Binary yes/no: context-level accuracy")
    assert [r["Task"] for r in rows] == ["finance", "all (pooled)"]  # task order, pooled last
    row = rows[0]
    assert row["Model"] == "hf:/models/a\\|b"  # the pipe in the model name is escaped
    assert row["n"] == "40"
    assert row["Unparsed"] == "12.5"
    assert row["Mean"] == "57.4"
    assert row["Strict correct"] == "27.7 (20.1, 35.0)"
    assert row["Strict incorrect"] == "38.5"  # no interval given
    assert row["Strict pair"] == "8.3 (4.0, 13.0)"
    assert row["Strict all"] == "0.0 (0.0, 0.0)"
    assert row["All (Yes)"] == "30.8"
    assert row["All (No)"] == "0.0"


def test_mc_table_has_neutral(markdown):
    (row,) = table_rows(markdown, "Multiple choice: context-level accuracy")
    assert row["Neutral"] == "55.5"
    assert row["Strict correct"] == "77.2"
    assert row["Strict all"] == "4.6"
    assert row["n"] == "12 †"  # fewer than 30 contexts: flagged


def test_expected_table_shows_tiny_values(markdown):
    rows = table_rows(markdown, "Observed (Act.) and expected (Exp.)")
    by_format = {(r["Task"], r["Format"]): r for r in rows}
    assert set(by_format) == {("finance", "binary"), ("all (pooled)", "binary"), ("all (pooled)", "mc")}
    binary = by_format[("finance", "binary")]
    assert (binary["Correct Exp."], binary["Correct Act."]) == ("6.8", "27.7 (20.1, 35.0)")
    assert (binary["Incorrect Exp."], binary["Incorrect Act."]) == ("24.2", "38.5")
    assert binary["All Exp."] == "<0.1"
    mc = by_format[("all (pooled)", "mc")]
    assert (mc["Incorrect Exp."], mc["All Exp."]) == ("0.2", "<0.1")


def test_level_tables(markdown):
    mean_rows = table_rows(markdown, "by structural level, mean")
    assert len(mean_rows) == 2  # the mc cell has no levels and is left out
    row = mean_rows[0]
    assert (row["Correct Root"], row["Correct Prop."], row["Correct Global"]) == ("87.9", "90.9", "91.7")
    assert (row["Incorrect Root"], row["All Global"]) == ("27.5", "49.3")
    strict = table_rows(markdown, "by structural level, strict")[0]
    assert (strict["Incorrect Prop."], strict["All Prop."]) == ("83.4", "70.0")


def test_embodied_tables(markdown):
    completion = table_rows(markdown, "Embodied: Task completion")
    assert [r["Row"] for r in completion] == ["Overall", "Temporal"]
    overall = completion[0]
    assert (overall["Mean Neu"], overall["Strict incorrect"], overall["Strict all"]) == ("56.0", "8.6", "3.7")
    assert completion[1]["Mean correct"] == "–"
    replans = table_rows(markdown, "Embodied: Number of replans")[0]
    assert (replans["Mean Neu"], replans["Strict all"]) == ("8.9", "–")
    steps = table_rows(markdown, "Embodied: Number of steps")[0]
    assert (steps["Mean Neu"], steps["Strict correct"]) == ("686.0", "365.0")


def test_omit_rates_table(markdown):
    rows = table_rows(markdown, "framing-invariant bias rates")
    assert [(r["Model"], r["Condition"]) for r in rows] == [("m1", "M0"), ("m1", "M1"), ("m2", "M0")]
    assert rows[0]["OBR (95% CI)"] == "55.0 (48.4, 61.5)"
    assert (rows[0]["ABR"], rows[0]["FCR"], rows[0]["n"]) == ("0.9", "44.0", "218")
    assert rows[2]["Unparsed pairs"] == "11"


def test_omit_condition_table_has_unweighted_mean(markdown):
    rows = table_rows(markdown, "outcome rates (%) by intervention condition")
    mean = rows[-1]
    assert mean["Model"] == "Mean"
    assert mean["M0 OBR"] == "31.0"  # (55.0 + 7.0) / 2
    assert mean["M1 OBR"] == "9.6"  # only m1 has M1
    assert rows[1]["M1 FCR"] == "–"


def test_mcnemar_table(markdown):
    (row,) = table_rows(markdown, "intervention tests")
    assert (row["b"], row["c"], row["p"], row["p (Holm)"], row["sig."]) == (
        "102", "5", "1.20e-05", "0.0300", "*")


def test_conflict_table(markdown):
    (row,) = table_rows(markdown, "by persona conflict")
    assert (row["care-deontology"], row["utilitarianism-care"]) == ("25.0", "60.0")


def test_sections_absent_without_records():
    text = render_markdown({"omit": REPORT["omit"]})
    assert "## OMIT" in text
    assert "FramingQA" not in text and "Embodied" not in text
    assert "No records to report." in render_markdown({})


ANALYSIS_M0 = {"OBR": 0.5, "OBR_low": 0.2, "OBR_high": 0.8, "ABR": 0.25, "FCR": 0.25, "n": 4,
               "unparsed_pairs": 1}


def test_omit_analysis_is_an_ordinary_section():
    """The OMIT analysis renders as tables of the OMIT suite, after its main section."""
    report = {"omit": {**REPORT["omit"], "analysis": {"rates_selected": {"m<x>": {"M0": ANALYSIS_M0}}}}}
    text = render_markdown(report)
    assert text.index("## OMIT\n") < text.index("## OMIT analyses")
    (row,) = table_rows(text, "conflict-labeled scenarios")
    assert row == {"Model": "m&lt;x&gt;", "OBR (%)": "50.0", "95% CI": "\\[20.0, 80.0\\]", "ABR (%)": "25.0",
                   "FCR (%)": "25.0", "n": "4", "dropped pairs": "1"}
    assert "## OMIT analyses" not in render_markdown({"omit": {**REPORT["omit"], "analysis": {}}})


def test_cells_cannot_inject_markup_or_break_the_table():
    report = {"omit": {"rates": {"<img src=x onerror=alert(1)>\nm|x": {
        "M0": {"n": 1, "OBR": 1.0, "OBR_low": 0.2, "OBR_high": 1.0, "ABR": 0.0, "FCR": 0.0,
               "unparsed_pairs": 0}}}}}
    text = render_markdown(report)
    assert "<img" not in text
    (row,) = table_rows(text, "framing-invariant bias rates")
    assert row["Model"] == "&lt;img src=x onerror=alert(1)&gt; m\\|x"
    assert row["OBR (95% CI)"] == "100.0 (20.0, 100.0)"
