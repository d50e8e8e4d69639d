"""Run folders written before records schema 3 still read and score as they did.

``tests/fixtures/records_v2_main`` holds three tiny run folders (FramingQA and OMIT with
``baseline:random@3``, the embodied oracle on one episode) written by main at d9304d5 (records
schema 2: FramingQA's columns in the core, its phrasing in ``variant``), and the report entries
that code computed from them (``expected_report.json``, without ``meta``), except the intervals
and ``small_sample`` flags, regenerated when the bootstrap gave way to t and score intervals (issue
42: every other value is main's).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from framebench import api, records
from framebench.scoring.report import jsonable

FIXTURE = Path(__file__).parents[1] / "fixtures" / "records_v2_main"
RUNS = ("embodied-oracle", "framingqa-random", "omit-random")


def _expected() -> dict:
    return json.loads((FIXTURE / "expected_report.json").read_text(encoding="utf-8"))


def _scored(dirs) -> dict:
    report = api.score(dirs).report
    return json.loads(json.dumps(jsonable({k: v for k, v in report.items() if k != "meta"}), sort_keys=True))


LATER = ("answer_shares", "gold_shares")  # FramingQA's pooled entries gained these after d9304d5


def _as_main(report: dict) -> dict:
    """The entries main computed at d9304d5: without what was added later (the finding in words,
    the answer shares, the comparisons' pooled group, the systematicity part), each checked to be
    there."""
    report = json.loads(json.dumps(report))
    assert report.pop("finding")["models"]
    if "framingqa" in report and "systematicity" in report:  # issue 50; a bare framingqa block has none
        assert report.pop("systematicity")
    for tasks in report["framingqa"].values():
        for metrics in tasks["all"].values():
            assert all(metrics.pop(key) for key in LATER)
    for part in (report.get("comparisons") or {}).get("suites", {}).values():
        part.pop("pooled")
    return report


def test_the_fixture_is_version_2_with_the_old_column_names():
    for run in RUNS:
        table = pq.read_table(FIXTURE / run / records.RECORDS_FILE)
        assert records.schema_version(table) == 2
        assert "variant" in table.column_names and "phrasing" not in table.column_names


@pytest.mark.parametrize("run", RUNS)
def test_a_version_2_file_reads_under_the_version_3_names(run):
    old = pq.read_table(FIXTURE / run / records.RECORDS_FILE).to_pandas()
    df = records.read_records(FIXTURE / run)
    assert list(df.columns) == list(records.registered_schema().columns)
    assert "variant" not in df.columns and df["phrasing"].tolist() == old["variant"].tolist()
    for column in ("form", "option", "distractor", "slot", "bias", "level", "gold", "answer", "correct"):
        assert df[column].tolist() == old[column].tolist(), column
    if run.startswith("framingqa"):
        assert set(df["phrasing"]) == {"Q1", "Q2", "Q3"}  # (its first 40 items: binary ones, all phrased)


def test_version_2_run_folders_score_as_main_scored_them():
    """As main scored them, and (a part added later) cautioned as the --limit runs they are."""
    scored = _as_main(_scored([FIXTURE / run for run in RUNS]))
    cautions = scored.pop("cautions")["lines"]
    assert scored == _expected()
    # the embodied run's --limit sits in its identity's selection, read since run.json is typed
    assert len(cautions) == 3
    assert "embodied-oracle was run with --limit 1: a smoke test" in cautions[0]
    assert "framingqa-random was run with --limit 40: a smoke test" in cautions[1]
    assert "omit-random was run with --limit 6: a smoke test" in cautions[2]


def test_version_1_files_map_the_same_way(tmp_path):
    """A file without the version field (schema 1) is read with the same mapping."""
    dirs = []
    for run in RUNS:
        shutil.copytree(FIXTURE / run, tmp_path / run)
        path = tmp_path / run / records.RECORDS_FILE
        table = pq.read_table(path)
        pq.write_table(table.replace_schema_metadata(None), path)
        assert records.schema_version(pq.read_table(path)) == 1
        assert records.read_records(path).equals(records.read_records(FIXTURE / run))
        dirs.append(tmp_path / run)
    # (the copies' records no longer match their run.json hashes: scored with force)
    report = api.score(dirs, force=True).report
    framingqa = _as_main({"finding": report["finding"], "framingqa": jsonable(report["framingqa"])})["framingqa"]
    assert json.loads(json.dumps(framingqa, sort_keys=True)) == _expected()["framingqa"]


def test_a_version_3_file_keeps_the_new_name(tmp_path):
    """Rewritten by this framebench, the records carry ``phrasing`` and version 3."""
    df = records.read_records(FIXTURE / "framingqa-random")
    path = records.write_records(df, tmp_path)
    table = pq.read_table(path)
    assert records.schema_version(table) == records.SCHEMA_VERSION == 3
    assert "phrasing" in table.column_names and "variant" not in table.column_names
    assert records.read_records(path).equals(df)
