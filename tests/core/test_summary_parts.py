"""The console summary is the report parts' summary tables: computed quickly from records, with a
model's constrained rows under their own label (shown as text, not read as rich markup)."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from framebench.records import encode_answer_probs, make_row
from framebench.scoring.report import summary_tables
from framebench.scoring.summary import print_summary, summary_report


def rows(mode: str) -> list[dict]:
    probs = encode_answer_probs({"Yes": 0.9, "No": 0.1}) if mode == "constrained" else ""
    return [make_row(run_id="r", model="m", suite="framingqa", task="finance", format="binary",
                     context_id=f"c{k}", item_id=f"c{k}:{mode}", bias="neutral", gold="Yes", answer="Yes",
                     correct=True, answer_mode=mode, answer_probs=probs) for k in range(2)]


def test_summary_tables_come_from_the_parts_and_label_constrained_rows():
    report = summary_report(pd.DataFrame(rows("generate") + rows("constrained")))
    # quick: no provenance or susceptibility; no headline (no biased row); the finding in words
    assert set(report) == {"framingqa", "finding"}
    tables = summary_tables(report)
    assert [t.title for t in tables] == ["FramingQA"]
    assert {row[0] for row in tables[0].rows} == {"m", "m [constrained]"}
    out = io.StringIO()
    print_summary(report, title="t", console=Console(file=out, width=120))
    printed = out.getvalue()
    assert "m [constrained]" in printed
    assert printed.index("What the numbers say") < printed.index("FramingQA (%)")  # the finding first
    assert "• m [constrained]" in printed
