"""``framebench score``: a mixed run folder, several runs, and user mistakes (exit 2, one line)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from framebench.cli import main
from framebench.records import make_row, write_records


def mixed_rows(run_id: str = "r1", model: str = "baseline:always-yes") -> list[dict]:
    common = {"run_id": run_id, "model": model}
    rows = []
    for ctx, right in (("c1", True), ("c2", False)):
        for i, (bias, dist) in enumerate((("correct", ""), ("incorrect", "d1"), ("incorrect", "d2"))):
            rows.append(make_row(**common, suite="framingqa", task="finance", format="binary",
                                 context_id=ctx, item_id=f"{ctx}-{i}", bias=bias, level="root",
                                 distractor=dist, slot=f"{bias}/root/{i}", gold="Yes",
                                 answer="Yes" if right or i else "No", correct=right or i > 0))
    for scenario, answers in (("s1", ("No", "No")), ("s2", ("Yes", "No"))):
        for frame, answer in zip(("action", "omission"), answers, strict=True):
            rows.append(make_row(**common, suite="omit", task="omit", format="binary",
                                 context_id=scenario, item_id=f"{scenario}-{frame}", bias="neutral",
                                 frame=frame, condition="M0", conflicts="u-d", answer=answer))
    for bias, level, pc in (("neutral", "", 1.0), ("correct", "root", 1.0), ("incorrect", "root", 0.5)):
        rows.append(make_row(**common, suite="embodied", task="robotics", format="episode",
                             context_id="e1", item_id=f"e1-{bias}", bias=bias, level=level,
                             constraint="none", percent_complete=pc, success=pc == 1.0,
                             sim_steps=10, replans=1))
    return rows


def run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code or 0


def test_mixed_run_writes_report(tmp_path: Path, capsys):
    write_records(mixed_rows(), tmp_path / "run")
    (tmp_path / "run" / "prompts.jsonl").write_text(
        json.dumps({"item_id": "c1-0", "prompt": "Is this <b>A</b>?"}) + "\n\n")
    assert run(["score", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert set(report) == {"meta", "finding", "headline", "framingqa", "omit", "embodied"}
    fqa = report["framingqa"]["baseline:always-yes"]
    assert set(fqa) == {"finance", "all"}
    assert fqa["finance"]["binary"]["strict_all"] == 0.5
    pooled = dict(fqa["all"]["binary"])  # one task: the pooled entry is its, plus the answer shares
    assert sum(pooled.pop("answer_shares").values()) == pytest.approx(1.0) and pooled.pop("gold_shares")
    assert pooled == fqa["finance"]["binary"]
    assert report["omit"]["rates"]["baseline:always-yes"]["M0"]["OBR"] == 0.5
    assert report["omit"]["mcnemar"] == []
    assert report["embodied"]["baseline:always-yes"]["overall"]["completion_strict_all"] == 0
    out = capsys.readouterr().out
    assert "report.json" in out
    for name, module in (("report.md", "markdown"), ("report.html", "html")):
        if importlib.util.find_spec(f"framebench.scoring.{module}"):  # helper A2's renderers
            assert (tmp_path / "out" / name).stat().st_size > 0 and name in out
    assert "NaN" not in (tmp_path / "out" / "report.json").read_text()


def test_several_runs_concatenate_and_duplicates_refused(tmp_path: Path, capsys):
    write_records(mixed_rows("r1", "model-a"), tmp_path / "a")
    write_records(mixed_rows("r2", "model-b"), tmp_path / "b")
    assert run(["score", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "o")]) == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert set(report["framingqa"]) == {"model-a", "model-b"}
    capsys.readouterr()
    assert run(["score", str(tmp_path / "a"), str(tmp_path / "a"), "--out", str(tmp_path / "d")]) == 2
    assert "appears twice" in capsys.readouterr().err


def test_missing_run_dir(tmp_path: Path, capsys):
    assert run(["score", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nope" in err
    assert not (tmp_path / "out").exists()


def test_run_dir_without_records(tmp_path: Path, capsys):
    (tmp_path / "empty").mkdir()
    assert run(["score", str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "records.parquet" in err


@pytest.mark.subprocess
def test_bad_records_exit_2_one_line(tmp_path: Path):
    write_records(mixed_rows(), tmp_path / "run")
    table = pq.read_table(tmp_path / "run" / "records.parquet")
    bias = table.column("bias").to_pylist()
    bias[3] = "sideways"
    table = table.set_column(table.schema.get_field_index("bias"), "bias", pa.array(bias))
    pq.write_table(table, tmp_path / "run" / "records.parquet")
    proc = subprocess.run([sys.executable, "-m", "framebench", "score", str(tmp_path / "run"),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "row 3" in lines[0] and "bias" in lines[0] and "sideways" in lines[0]
    assert not (tmp_path / "out" / "report.json").exists()


def test_bad_prompts_line(tmp_path: Path, capsys):
    write_records(mixed_rows(), tmp_path / "run")
    (tmp_path / "run" / "prompts.jsonl").write_text('{"item_id": "x", "prompt": "p"}\nnot json\n')
    assert run(["score", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 2
    assert "prompts.jsonl: line 2" in capsys.readouterr().err
