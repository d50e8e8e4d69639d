"""``framebench demo``: the README's main job, offline on the embedded defaults, end to end.

Runs the real thing once (SmolLM2 on every demo item, OMIT M0/M1, the robotics episodes with the
SmolLM2 and oracle planners), checks the report's three suites and the HTML page, then re-runs and
checks that the second run is served entirely from the result stores.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from framebench.items import read_items

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _store_rows(run_dir) -> int:
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory, smollm2_dir):
    out = tmp_path_factory.mktemp("demo") / "out"
    proc = subprocess.run([sys.executable, "-m", "framebench", "demo", "--out", str(out)],
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, proc.stdout


def test_demo_runs_every_suite_and_writes_the_report(demo_out):
    out, stdout = demo_out
    report = json.loads((out / "report" / "report.json").read_text())
    assert set(report) >= {"framingqa", "omit", "embodied"}
    assert set(report["framingqa"]) == {"smollm2", "smollm2 [constrained]", "baseline:always-yes"}
    assert set(report["framingqa"]["smollm2"]) == {"law_issue_spotting", "law_hearsay", "finance",
                                                  "medicine", "all"}
    assert set(report["omit"]["rates"]["smollm2"]) == {"M0", "M1"}
    assert set(report["embodied"]) == {"smollm2", "choice:smollm2", "oracle"}
    # The oracle solves every demo episode in every variant.
    assert report["embodied"]["oracle"]["overall"]["completion_strict_all"] == 1.0
    assert "summary" in stdout and "report.html" in stdout


def test_demo_records_cover_every_demo_item(demo_out):
    out, _ = demo_out
    items = read_items(REPO / "datasets" / "demo" / "framingqa")
    records = pd.read_parquet(out / "runs" / "framingqa-model" / "records.parquet")
    assert sorted(records["item_id"]) == sorted(item["item_id"] for item in items)
    assert records["output"].str.len().gt(0).mean() > 0.9  # real generations, kept raw
    omit = pd.read_parquet(out / "runs" / "omit-model" / "records.parquet")
    n_omit = len(read_items(REPO / "datasets" / "demo" / "omit"))
    assert len(omit) == 2 * n_omit and set(omit["condition"]) == {"M0", "M1"}
    episodes = pd.read_parquet(out / "runs" / "embodied-model" / "records.parquet")
    assert len(episodes) % 7 == 0 and episodes["replans"].between(1, 3).all()


def test_demo_html_has_tables_figures_and_drilldown(demo_out):
    out, _ = demo_out
    html = (out / "report" / "report.html").read_text()
    assert html.count("<table") >= 5
    assert "data:image/png;base64," in html
    assert "<details" in html
    assert "http://" not in html and "https://" not in html  # self-contained


def test_second_demo_run_is_served_from_the_stores(demo_out):
    out, _ = demo_out
    runs = sorted(p for p in (out / "runs").iterdir() if (p / "store.sqlite").exists())
    before = {p.name: _store_rows(p) for p in runs}
    report_before = json.loads((out / "report" / "report.json").read_text())
    report_before.pop("meta")  # provenance: the time of scoring differs
    proc = subprocess.run([sys.executable, "-m", "framebench", "demo", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {p.name: _store_rows(p) for p in runs} == before
    assert "(0 generated" in proc.stdout
    report_after = json.loads((out / "report" / "report.json").read_text())
    assert report_after.pop("meta")["run_ids"] and report_after == report_before


def test_demo_constrained_answers_susceptibility_and_choice_planner(demo_out):
    out, stdout = demo_out
    runs = out / "runs"
    fqa = pd.read_parquet(runs / "framingqa-model-constrained" / "records.parquet")
    assert len(fqa) == len(read_items(REPO / "datasets" / "demo" / "framingqa"))
    assert (fqa["parse"] == "ok").all() and set(fqa["answer_mode"]) == {"constrained"}
    report = json.loads((out / "report" / "report.json").read_text())
    rates = report["omit"]["rates"]["smollm2 [constrained]"]
    assert rates["M0"]["n"] > 0 and rates["M1"]["n"] > 0  # M1: parsed pairs after ANSWER:
    sus = report["susceptibility"]
    cells = [c for fmt in sus["framingqa"]["smollm2 [constrained]"]["all"].values()
             for level in fmt.values() for c in level.values()]
    assert cells and all(c["shift_ci"][0] <= c["shift"] <= c["shift_ci"][1] for c in cells)
    assert set(sus["omit"]["smollm2 [constrained]"]) == {"M0", "M1"}
    assert "Framing susceptibility" in (out / "report" / "report.md").read_text()
    # the choice planner only ever executes actions the simulator accepts
    logs = [json.loads(p.read_text()) for p in (runs / "embodied-choice" / "episodes").glob("*.json")]
    assert len(logs) == len(pd.read_parquet(runs / "embodied-choice" / "records.parquet"))
    for log in logs:
        for step in log["steps"]:
            assert step["action"] is None and log["end"] == "replan_cap" or step["action"] == "Done[]" \
                or step["result"] == "Successful execution!", step
            assert 0 < step["choice"]["probability"] <= 1
    # it runs every demo episode and completes some variants (4 of 28 when measured)
    choice = pd.read_parquet(runs / "embodied-choice" / "records.parquet")
    assert len(choice) == 28 and choice["success"].any()
    assert "Framing susceptibility" in stdout
