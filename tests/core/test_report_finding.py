"""The finding in words (``framebench.scoring.finding``): on small constructed reports whose numbers
are known by hand, it calls an effect one only where its interval excludes 0, flags a model whose
numbers equal (or cannot be told apart from) a trivial baseline's on the same items and a model
whose answers one letter dominates; it leads report.md, report.html and the console summary, and
model names in it are escaped."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from rich.console import Console

from framebench.records import make_row
from framebench.scoring.finding import effect_words, excludes_zero
from framebench.scoring.html import render_html
from framebench.scoring.markdown import render_markdown
from framebench.scoring.report import compute_report
from framebench.scoring.summary import print_summary, summary_report
from framebench.text_eval.framingqa.finding import letter_prior

BASELINE = "baseline:always-yes"


def binary_rows(model: str, pattern: dict[str, dict[str, list[bool]]]) -> list[dict]:
    """FramingQA binary rows, gold Yes: ``pattern[context][bias]`` lists which rows are right."""
    rows = []
    for ctx, by_bias in pattern.items():
        for bias, answers in by_bias.items():
            for k, ok in enumerate(answers):
                rows.append(make_row(
                    run_id=f"r-{model}", model=model, suite="framingqa", task="finance", format="binary",
                    context_id=ctx, item_id=f"{ctx}-{bias}-{k}", bias=bias, level="root", form="plain",
                    phrasing=f"Q{k + 1}", option="x", distractor="d1" if bias == "incorrect" else "",
                    slot=f"{bias}/root/plain/Q{k + 1}", gold="Yes", answer="Yes" if ok else "No",
                    parse="ok", correct=ok))
    return rows


# each context's right letter: A right in 25 %; 12 contexts, enough for a paired 0/1 interval
GOLDS = {f"c{i}": "ABCD"[(i - 1) % 4] for i in range(1, 13)}


def mc_rows(model: str, answer_of: dict[str, str] | None = None) -> list[dict]:
    """FramingQA MC rows (a neutral, a correct-bias and an incorrect-bias question per context),
    every answer ``A`` unless ``answer_of[context]`` says otherwise."""
    rows = []
    for ctx, gold in GOLDS.items():
        answer = (answer_of or {}).get(ctx, "A")
        for bias in ("neutral", "correct", "incorrect"):
            rows.append(make_row(
                run_id=f"r-{model}", model=model, suite="framingqa", task="finance", format="mc",
                context_id=ctx, item_id=f"{ctx}-mc-{bias}", bias=bias, level="" if bias == "neutral" else "root",
                form="plain", phrasing="Q1", option="x", distractor="d1" if bias == "incorrect" else "",
                slot=f"{bias}/mc", gold=gold, answer=answer, parse="ok", correct=answer == gold))
    return rows


def sentences(report: dict, model: str) -> list[str]:
    return next(m["sentences"] for m in report["finding"]["models"] if m["model"] == model)


# per context, correct-bias minus incorrect-bias accuracy: 1, 0.5, 0.5, 1 (mean 0.75, all > 0)
EFFECT = {"c1": {"correct": [True, True], "incorrect": [False, False]},
          "c2": {"correct": [True, True], "incorrect": [True, False]},
          "c3": {"correct": [True, True], "incorrect": [False, True]},
          "c4": {"correct": [True, True], "incorrect": [False, False]}}
# per context: +0.5, -0.5, +0.5, -0.5 (mean 0)
NULL = {"c1": {"correct": [True, True], "incorrect": [True, False]},
        "c2": {"correct": [True, False], "incorrect": [True, True]},
        "c3": {"correct": [True, True], "incorrect": [False, True]},
        "c4": {"correct": [False, True], "incorrect": [True, True]}}


@pytest.fixture(scope="module")
def report():
    rows = binary_rows("effect", EFFECT) + binary_rows("null", NULL)
    rows += mc_rows(BASELINE) + mc_rows("same") + mc_rows("near", {"c2": "B"}) + mc_rows("good", GOLDS)
    return compute_report(pd.DataFrame(rows))


def test_an_interval_excluding_0_is_called_an_effect(report):
    head = report["headline"]["effect"]["binary"]
    assert head["framing_effect"] == pytest.approx(0.75)  # (1 + 0.5 + 0.5 + 1) / 4
    assert excludes_zero(head["framing_effect_ci"])  # every context's effect is at least 0.5
    (text,) = sentences(report, "effect")
    assert text.startswith("FramingQA binary yes/no, 4 contexts: framing effect +75.0 pp (")
    assert "), excluding 0: right more often when the framing names the right answer" in text
    assert "strict accuracy 0.0 % (no interval below 10 contexts)." in text  # 0/1 intervals need 10
    assert "not distinguishable" not in text


def test_an_interval_including_0_is_not_distinguishable_from_noise(report):
    head = report["headline"]["null"]["binary"]
    assert head["framing_effect"] == pytest.approx(0.0)
    assert excludes_zero(head["framing_effect_ci"]) is False
    (text,) = sentences(report, "null")
    assert "framing effect +0.0 pp (" in text
    assert "): not distinguishable from noise at n = 4 contexts" in text
    assert "excluding 0" not in text
    mde = head["framing_effect_mde"]  # the smallest effect this size detects, said with it
    assert mde and f"80 % power from about {100 * mde:.1f} pp" in text


def test_a_model_equal_to_the_baseline_is_flagged_and_a_different_one_not(report):
    flags = [s for s in sentences(report, "same") if s.startswith("⚑ Equal to")]
    assert flags == [f"⚑ Equal to {BASELINE} on every measure, on the same items: FramingQA (text), "
                     "Multiple choice (n = 12)."]
    near = [s for s in sentences(report, "near") if BASELINE in s]
    assert near == [f"⚑ Not distinguishable from {BASELINE} on the same items (every paired difference's "
                    "interval includes 0): FramingQA (text), Multiple choice (n = 12)."]
    assert not any(BASELINE in s for s in sentences(report, "good"))  # 100 % vs 25 % in every context
    models = [m["model"] for m in report["finding"]["models"]]
    assert models[-1] == BASELINE and report["finding"]["models"][-1]["baseline"]  # baselines last


def test_a_dominant_letter_is_flagged(report):
    (same,) = [s for s in sentences(report, "same") if s.startswith("FramingQA multiple choice")]
    # every answer A; A is the gold of 1 context in 4
    assert same.endswith("⚑ The letter prior dominates: it answers A to 100.0 % of the questions it "
                         "answered (A is right in 25.0 %).")
    (good,) = [s for s in sentences(report, "good") if s.startswith("FramingQA multiple choice")]
    assert "⚑" not in good  # answers follow the golds


def test_a_rotation_letter_prior_is_flagged_only_when_it_dominates():
    entry = {"n_rotations": 4, "n_questions": 36, "prior": {"A": 0.65, "B": 0.1, "C": 0.15, "D": 0.1},
             "by_position": {"A": 0.97, "B": 0.0, "C": 0.1, "D": 0.0}, "n_debiased": 36,
             "accuracy_fixed": 0.083, "debiased_accuracy": 0.306}
    text = letter_prior(entry)
    assert "⚑ the letter prior dominates, 65.0 % on A whatever option stands there (none: 25.0 %)" in text
    assert "right in 97.0 % of the questions whose answer is at A, 0.0 to 10.0 % elsewhere" in text
    assert "moves accuracy from 8.3 % to 30.6 %" in text
    flat = letter_prior({**entry, "prior": {"A": 0.3, "B": 0.25, "C": 0.25, "D": 0.2}})
    assert "⚑" not in flat and "no letter dominates its prior (largest A, 30.0 %" in flat


def test_effect_words_claim_no_more_than_the_interval():
    assert effect_words("e", 0.1, [0.02, 0.2], 50, "contexts") == "e +10.0 pp (+2.0 to +20.0), excluding 0"
    assert effect_words("e", -0.1, [-0.2, -0.01], 50, "contexts", negative="inverted").endswith(
        "excluding 0: inverted")
    assert effect_words("e", 0.1, [-0.01, 0.2], 50, "contexts") == (
        "e +10.0 pp (-1.0 to +20.0): not distinguishable from noise at n = 50 contexts")
    assert effect_words("e", 0.1, None, 2, "contexts") == "e +10.0 pp (no interval)"
    assert effect_words("e", 0.1, [-0.5, 0.7], 2, "contexts", mde=0.2).endswith("(80 % power from about 20.0 pp)")
    assert effect_words("e", 0.1, [-0.5, 0.7], 2, "contexts", mde=1.4).endswith(
        "(too few contexts to detect any effect with 80 % power)")


def test_the_finding_leads_every_rendering(report):
    md = render_markdown(report)
    assert md.index("## Finding") < md.index("## Headline")
    assert "- **baseline:always-yes (trivial baseline: its answers ignore the question)**" in md
    html = render_html(report, None)
    assert html.index('<ul class="finding">') < html.index(">Headline</h2>")
    out = io.StringIO()
    print_summary(report, console=Console(file=out, width=200))
    printed = out.getvalue()
    assert printed.index("What the numbers say") < printed.index("FramingQA (%)")
    assert "  - FramingQA binary yes/no, 4 contexts: framing effect +75.0 pp" in printed


def test_the_summary_after_a_run_gives_the_reports_numbers():
    """``framebench text`` prints the finding of its own run: the same sentence as the report."""
    records = pd.DataFrame(binary_rows("effect", EFFECT))
    quick, full = summary_report(records), compute_report(records)
    assert sentences(quick, "effect") == sentences(full, "effect")


def test_model_names_are_escaped_in_markdown_and_html():
    hostile = "<img src=x onerror=alert(1)>*[x](http://e)*_y_"
    report = compute_report(pd.DataFrame(binary_rows(hostile, EFFECT)))
    md = render_markdown(report)
    lead = next(line for line in md.splitlines() if line.startswith("- **"))
    assert lead == r"- **&lt;img src=x onerror=alert(1)&gt;\*\[x\](http://e)\*\_y\_**"
    html = render_html(report, None)
    assert "<img src=x" not in html
    finding = re.search(r'<ul class="finding">(.*?)</ul>', html, re.S).group(1)
    assert "&lt;img src=x onerror=alert(1)&gt;*[x](http://e)*_y_" in finding
