"""One label per scored model everywhere: the console summaries (``text``, ``score``, the demo's),
report.md/html/json and ``framebench view`` name a constrained run ``MODEL [constrained]``
(``framebench.records.model_label``); and report paths are relative, authored records say so."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from text_helpers import cli_run as cli

from framebench.paths import PROJECT_ROOT, display_path
from framebench.records import label_answer_modes, model_label, read_records
from framebench.viewer.data import load_run_data

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
MODEL = "baseline:always-yes"
LABELS = {MODEL, f"{MODEL} [constrained]"}


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    """The demo's pairs of runs: one model generating and constrained, on the demo FramingQA and
    OMIT sets, scored with the shipped persona panel."""
    tmp = tmp_path_factory.mktemp("labels")
    runs, consoles = [], {}
    for suite, extra in (("framingqa", ["--limit", "60"]), ("omit", ["--conditions", "M0,M1"])):
        for mode in ("generate", "constrained"):
            out = tmp / f"{suite}-{mode}"
            code, stdout, err = cli("text", "--data", str(DEMO / suite), "--model", MODEL, "--answer", mode,
                                    "--out", str(out), "--quiet", *extra)
            assert code == 0, err
            runs.append(out)
            consoles[out.name] = stdout
    runs.append(DEMO / "omit" / "personas")
    code, stdout, err = cli("score", *map(str, runs), "--out", str(tmp / "report"))
    assert code == 0, err
    return tmp, runs, consoles, stdout


def _table_rows(console: str, header: str) -> list[list[tuple[str, ...]]]:
    """The rows (cells) of each console table whose header row starts with ``header``."""
    tables: list[list[tuple[str, ...]]] = []
    inside = False
    for line in console.splitlines():
        if line.startswith("┃") and line.strip("┃ ").startswith(header):
            inside = True
            tables.append([])
        elif line.startswith("└"):
            inside = False
        elif inside and line.startswith("│"):
            tables[-1].append(tuple(cell.strip() for cell in line.split("│")[1:-1]))
    return tables


def _first_cells(console: str, header: str) -> list[str]:
    return [row[0] for table in _table_rows(console, header) for row in table]


def test_label_function():
    assert model_label("m", "constrained") == "m [constrained]"
    assert model_label("m [constrained]", "constrained") == "m [constrained]"  # idempotent
    assert model_label("m", "generate") == model_label("m", "") == "m"


def test_console_summaries_name_the_constrained_run(demo_runs):
    _tmp, _runs, consoles, score_out = demo_runs
    assert set(_first_cells(score_out, "model")) == LABELS
    for table in _table_rows(score_out, "model"):  # a row per model and key: no two rows named alike
        keys = [row[:3] for row in table]
        assert len(set(keys)) == len(keys), table
    for name, out in consoles.items():  # each run's own summary, as `text` and the demo print it
        expected = f"{MODEL} [constrained]" if name.endswith("constrained") else MODEL
        assert set(_first_cells(out, "model")) == {expected}, (name, out)


def test_report_files_and_viewer_use_the_same_labels(demo_runs):
    tmp, runs, _consoles, _ = demo_runs
    report = json.loads((tmp / "report" / "report.json").read_text())
    assert set(report["framingqa"]) == LABELS and set(report["omit"]["rates"]) == LABELS
    assert {m for r in report["meta"]["runs"] for m in r["models"]} >= LABELS
    md = (tmp / "report" / "report.md").read_text()
    assert f"{MODEL} \\[constrained\\]" in md  # Markdown-escaped brackets render as [constrained]
    html = (tmp / "report" / "report.html").read_text()
    assert f"{MODEL} [constrained]" in html
    data = load_run_data(runs)
    assert set(data.records["model"]) - {m for m in data.records["model"] if m.startswith("persona:")} == LABELS
    assert set(data.choices["model"]) >= LABELS


def test_records_keep_the_bare_model_and_the_mode(demo_runs):
    """The label is computed on reading; the records contract keeps model and answer_mode apart."""
    _tmp, runs, _, _ = demo_runs
    df = read_records(runs[1])
    assert set(df["model"]) == {MODEL} and set(df["answer_mode"]) == {"constrained"}
    assert set(label_answer_modes(df)["model"]) == {f"{MODEL} [constrained]"}


def test_report_paths_are_relative_and_authored_records_say_so(demo_runs, monkeypatch):
    tmp, _runs, _, _ = demo_runs
    md = (tmp / "report" / "report.md").read_text()
    html = (tmp / "report" / "report.html").read_text()
    for text in (md, html):
        assert str(PROJECT_ROOT) not in text and "datasets/demo/omit/personas" in text
        assert not re.search(r"\+g[0-9a-f]+\.dirty", text.split("datasets/demo/omit/personas", 1)[1][:400])
        assert "authored (hand-written persona answers" in text
    monkeypatch.chdir(tmp)
    assert display_path(tmp / "report") == "report"  # the working directory first
    assert display_path(DEMO / "omit") == "datasets/demo/omit"  # then the project
    assert display_path("/elsewhere/run") == "/elsewhere/run" and display_path("rel/run") == "rel/run"
    monkeypatch.chdir("/")
    assert display_path("/elsewhere/run") == "/elsewhere/run"  # never relative to the root
    assert os.sep == "/"
