"""Guards against results that pass unnoticed: one model's runs over different datasets pooled,
a --limit run scored as if it were the benchmark, an OMIT build that yields nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from text_helpers import cli_exit_code, framingqa_items, write_items

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, name: str, items: list[dict], *extra: str) -> Path:
    data = write_items(tmp_path / f"data-{name}", items)
    out = tmp_path / name
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data), "--out", str(out),
                         "--quiet", *extra) == 0
    return out


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.slow  # runs, then scores and compares them
def test_one_models_runs_over_different_datasets_are_refused_unless_allowed(tmp_path, capsys):
    a = _run(tmp_path, "a", framingqa_items(3, 4))
    b = _run(tmp_path, "b", [{**it, "context_id": "other-" + it["context_id"], "item_id": "other-" + it["item_id"]}
                             for it in framingqa_items(2, 4)])
    hashes = [json.loads((run / "run.json").read_text())["dataset_hash"] for run in (a, b)]
    assert hashes[0] != hashes[1]
    report = tmp_path / "report"
    for args in (["score", str(a), str(b), "--out", str(report)], ["compare", str(a), str(b)],
                 ["power", "--from", str(a), "--from", str(b), "--contexts", "10"]):
        assert cli_exit_code(*args) == 2
        err = _one_line_error(capsys)
        assert "'baseline:always-yes' (framingqa) pools runs over different datasets" in err
        assert str(a) in err and str(b) in err and hashes[0][:12] in err and hashes[1][:12] in err
        assert "--allow-mixed-datasets" in err
    assert not report.exists()

    assert cli_exit_code("score", str(a), str(b), "--out", str(report), "--allow-mixed-datasets") == 0
    out = capsys.readouterr().out
    assert "pools runs over different datasets" in out  # the console summary's cautions
    cautions = json.loads((report / "report.json").read_text())["cautions"]["lines"]
    assert len(cautions) == 1 and "--allow-mixed-datasets" in cautions[0]
    md = (report / "report.md").read_text()
    assert md.index("Cautions") < md.index("Headline")  # a reader meets it before any number


@pytest.mark.slow  # runs, then scores them
def test_a_limit_run_is_marked_in_the_console_and_the_report(tmp_path, capsys):
    full = _run(tmp_path, "full", framingqa_items(3, 4))
    report = tmp_path / "r1"
    assert cli_exit_code("score", str(full), "--out", str(report)) == 0
    assert "Cautions" not in capsys.readouterr().out
    assert "cautions" not in json.loads((report / "report.json").read_text())

    cut = _run(tmp_path, "cut", framingqa_items(3, 4), "--limit", "5")
    report = tmp_path / "r2"
    assert cli_exit_code("score", str(cut), "--out", str(report)) == 0
    out = capsys.readouterr().out
    assert "--limit 5" in out and "not the benchmark's" in out
    (line,) = json.loads((report / "report.json").read_text())["cautions"]["lines"]
    assert "--limit 5" in line and "cut" in line
    assert "--limit 5" in (report / "report.html").read_text()


def test_an_omit_build_that_yields_nothing_names_the_stage(tmp_path, capsys, shared_data):
    out = tmp_path / "omit"
    # always-yes answers no frame-reconstruction prompt with frames: the frames stage keeps nothing
    assert cli_exit_code("build", "omit", "--source", str(shared_data), "--model", "baseline:always-yes",
                         "--out", str(out)) == 2
    err = _one_line_error(capsys)
    assert "yielded 0 items" in err and "stage 'frames'" in err and "kept 0 of" in err
    assert "funnel seed 680 -> inaction" in err
    assert not (out / "items.jsonl").exists() and (out / "store.sqlite").exists()


@pytest.mark.parametrize("mode", ["constrained"])
def test_labels_carry_the_answer_mode_in_compare_and_plan(tmp_path, capsys, mode):
    items = framingqa_items(3, 4)
    gen = _run(tmp_path, "gen", items)
    con = _run(tmp_path, "con", items, "--answer", mode)
    assert cli_exit_code("compare", str(gen), str(con)) == 0
    out = capsys.readouterr().out
    assert f"baseline:always-yes [{mode}]" in out
    assert cli_exit_code("power", "--from", str(gen), "--from", str(con), "--contexts", "20") == 0
    out = capsys.readouterr().out
    assert f"baseline:always-yes [{mode}]" in out
