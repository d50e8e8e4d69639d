"""The shipped OMIT demo set: its built files are reproducible from its sources."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from framebench.errors import UserError
from framebench.items import read_items
from framebench.records import read_records
from framebench.text_eval.omit.construction import build_from_authored
from framebench.text_eval.omit.personas import PERSONAS, conflict_labels

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "omit"


def test_demo_rebuild_reproduces_items(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DEMO / "scenarios.jsonl", src / "scenarios.jsonl")
    report = build_from_authored(src, tmp_path / "out")
    assert (tmp_path / "out" / "items.jsonl").read_bytes() == (DEMO / "items.jsonl").read_bytes()
    cols = ["model", "context_id", "item_id", "frame", "answer", "parse", "condition", "conflicts"]
    rebuilt = read_records(tmp_path / "out" / "personas")[cols]
    shipped = read_records(DEMO / "personas")[cols]
    pd.testing.assert_frame_equal(rebuilt, shipped)
    assert report["selected"] >= 12


def test_demo_items_are_paired_and_labelled():
    items = read_items(DEMO)
    sources = {json.loads(line)["scenario_id"]: json.loads(line) for line in open(DEMO / "scenarios.jsonl")}
    assert len(items) == 2 * len(sources) >= 24
    for it in items:
        s = sources[it["context_id"]]
        pats = {p: s["personas"][p][0][0] + s["personas"][p][1][0] for p in PERSONAS}
        assert it["conflicts"] == "|".join(conflict_labels(pats))
        assert it["text"] == s[f"{it['frame']}_frame"] and it["question"] == s[f"{it['frame']}_question"]
    assert sum(1 for it in items if it["conflicts"]) >= 24  # >= 12 selected scenarios, both frames


def test_authored_source_errors_name_file_and_field(tmp_path):
    row = json.loads(open(DEMO / "scenarios.jsonl").readline())
    del row["personas"]["care"]
    (tmp_path / "scenarios.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(UserError, match=r"scenarios.jsonl: line 1: .*'personas'"):
        build_from_authored(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out" / "items.jsonl").exists()


def test_cli_builds_demo_and_rejects_bad_source(tmp_path, capsys):
    from framebench.cli import main

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DEMO / "scenarios.jsonl", src / "scenarios.jsonl")
    with pytest.raises(SystemExit) as exc:
        main(["build", "omit", "--source", str(src), "--out", str(tmp_path / "out")])
    assert exc.value.code in (0, None)
    assert "funnel seed 16 -> frames 16 -> personas 16 -> non_unanimity 14 -> conflict 12" in capsys.readouterr().out
    assert (tmp_path / "out" / "items.jsonl").read_bytes() == (DEMO / "items.jsonl").read_bytes()

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit) as exc:
        main(["build", "omit", "--source", str(empty), "--out", str(tmp_path / "o2")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no MoralChoice seed found" in err and "Traceback" not in err
