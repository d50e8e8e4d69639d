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

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


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


def test_demo_report_compares_models_and_controls_option_position(demo_out):
    """Issue 24 in the demo: the comparison table of the three FramingQA models, SmolLM2's letter
    prior from the rotated MC set, Wilson intervals on strict cells and the MDE column; the OMIT
    comparison has no row for M1, where generation parses no pair of both models."""
    out, _ = demo_out
    report = json.loads((out / "report" / "report.json").read_text())
    rows = report["comparisons"]["suites"]["framingqa"]["rows"]
    pairs = {(r["model_a"], r["model_b"]) for r in rows}
    assert {("baseline:always-yes", "smollm2"), ("smollm2", "smollm2 [constrained]")} <= pairs
    assert all(r["test"]["p_holm"] >= r["test"]["p"] for r in rows)
    every_row = [r for part in report["comparisons"]["suites"].values() for r in part["rows"]]
    assert all(r["n_contexts"] > 0 for r in every_row)  # no vacuous row
    assert report["comparisons"]["n_tests"] == sum(1 for r in every_row if r["test"])
    # generated M1 answers parse no pair (no ANSWER: line), so M1 has no row against them
    omit_m1 = pd.read_parquet(out / "runs" / "omit-model" / "records.parquet").query("condition == 'M1'")
    assert (omit_m1["parse"] != "ok").all()
    omit_rows = report["comparisons"]["suites"]["omit"]["rows"]
    assert omit_rows and all(r["group"]["condition"] != "M1" or "smollm2" not in (r["model_a"], r["model_b"])
                             for r in omit_rows)
    rotation = report["framingqa_rotated"]["smollm2 [constrained]"]
    assert rotation["n_rotations"] == 4 and rotation["n_questions"] == 36
    assert rotation["prior"]["A"] > 0.4  # the all-"A" habit, seen as a position prior
    assert rotation["by_position"]["A"] > rotation["by_position"]["D"]
    strict = report["framingqa"]["smollm2"]["all"]["binary"]
    assert strict["strict_all"] == 0.0 and strict["strict_all_ci"][1] > 0.1  # Wilson, not (0, 0)
    assert report["headline"]["smollm2"]["binary"]["framing_effect_mde"] > 0
    md = (out / "report" / "report.md").read_text()
    assert "## Model comparisons" in md and "MDE (pp)" in md and "Prior A (%)" in md
    assert "contexts right under A only" not in md


def _demo_datasets_suites() -> dict[str, set[str]]:
    """Each demo dataset folder -> the registered suites its files feed: the items' own suites,
    and for an episode file the suites that take episodes rather than text items."""
    from framebench.registry import refresh, suites

    refresh()
    episode_suites = {name for name, s in suites().items() if not s.items.makes_jobs}
    found = {}
    for folder in sorted(p for p in (REPO / "datasets" / "demo").iterdir() if p.is_dir()):
        if (folder / "items.jsonl").exists():
            found[folder.name] = {item["suite"] for item in read_items(folder)}
        elif list(folder.glob("episodes*.json*")):
            found[folder.name] = episode_suites
    return found


def test_demo_report_has_every_part_the_demo_data_can_feed(demo_out):
    """Every registered report part that the demo's datasets can feed is in the demo report: each
    demo dataset's suites (from the folders, not a hand-written list) and every report-wide part.
    Dropping the demo step that alone feeds a part or reads a dataset folder fails here."""
    from framebench.registry import report_parts, suites

    out, _ = demo_out
    report = json.loads((out / "report" / "report.json").read_text())
    fed = _demo_datasets_suites()
    assert set(fed) == {"framingqa", "framingqa-rotated", "omit", "robotics"}  # every folder is read
    expected = set().union(*fed.values()) | {p.name for p in report_parts() if p.name not in suites() and not p.warns}
    assert expected >= {"framingqa", "framingqa_rotated", "omit", "embodied", "comparisons", "susceptibility"}
    missing = sorted(name for name in expected if not report.get(name))
    assert not missing, f"demo report lacks parts its data can feed: {missing}"
    # full runs of one dataset each, but for the generating model planner's one episode (of 4): the
    # report says its numbers are a smoke test's
    assert [p.name for p in report_parts() if p.warns and report.get(p.name)] == ["cautions"]
    (caution,) = report["cautions"]["lines"]
    assert "embodied-model was run with --limit 1: a smoke test" in caution
    # Every demo text item is answered by some demo run (an unread dataset cannot hide here).
    answered = set()
    for records in (out / "runs").glob("*/records.parquet"):
        ids = set(pd.read_parquet(records, columns=["item_id"])["item_id"])
        answered |= ids | {i.rsplit("@", 1)[0] for i in ids}  # OMIT records: <item_id>@<condition>
    for folder in fed:
        if (REPO / "datasets" / "demo" / folder / "items.jsonl").exists():
            ids = {item["item_id"] for item in read_items(REPO / "datasets" / "demo" / folder)}
            assert ids <= answered, f"datasets/demo/{folder}: {len(ids - answered)} items no demo run answers"


def test_demo_says_what_it_found(demo_out):
    """Issue 42: the report and the end of the demo's output open with the finding in words, which
    says SmolLM2's binary framing effect with its interval and flags that its multiple-choice
    numbers cannot be told apart from baseline:always-yes's (both answer "A")."""
    out, stdout = demo_out
    report = json.loads((out / "report" / "report.json").read_text())
    finding = {m["model"]: m["sentences"] for m in report["finding"]["models"]}
    assert list(finding)[-1] == "baseline:always-yes"
    head = report["headline"]["smollm2"]["binary"]
    binary = next(s for s in finding["smollm2"] if s.startswith("FramingQA binary yes/no, 16 contexts"))
    effect = f"framing effect {100 * head['framing_effect']:+.1f} pp ({100 * head['framing_effect_ci'][0]:+.1f} to "
    assert effect in binary
    flag = [s for s in finding["smollm2"] if "baseline:always-yes" in s]
    assert flag and "Multiple choice" in flag[0]
    # the last block: the report written, then the finding, its tables, and the closing line
    assert stdout.rindex("wrote ") < stdout.rindex("What the numbers say") < stdout.rindex("Demo finished")
    md = (out / "report" / "report.md").read_text()
    assert md.index("## Finding") < md.index("## Headline") and md.rindex("## Provenance") > md.index("## OMIT")


def test_demo_report_carries_the_systematicity_section(demo_out):
    """Polarity consistency, paraphrase invariance and framing against rewording for SmolLM2,
    in report.json, report.md and the finding (docs/report.md "Systematicity")."""
    out, stdout = demo_out
    report = json.loads((out / "report" / "report.json").read_text())
    pooled = report["systematicity"]["smollm2"]["all"]["binary"]["levels"]["all"]
    assert 0 <= pooled["biases"]["all"]["polarity"] <= 1 and pooled["biases"]["all"]["polarity_ci"]
    assert pooled["accuracy"]["difference_ci"] and pooled["accuracy"]["rewording_effect"] >= 0
    constrained = report["systematicity"]["smollm2 [constrained]"]["all"]["binary"]
    assert constrained["levels"]["all"]["p_gold"]["rewording_effect"] > 0
    assert sum(constrained["variance"][k] for k in ("framing", "polarity", "rewording", "residual")) \
        == pytest.approx(1.0)
    assert "Systematicity" in (out / "report" / "report.md").read_text()
    assert "Systematicity, FramingQA binary yes/no" in stdout
