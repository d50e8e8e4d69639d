"""The build pipeline end to end: the unreviewed audit build's counts and report, the demo set
rebuild, CLI errors. The reviewed build: tests/test_framingqa_review.py; drafted sheets:
tests/test_framingqa_sheets.py."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.items import read_items
from framebench.text_eval.framingqa.answer_sheets import read_sheets
from framebench.text_eval.framingqa.build import BuildOptions, build

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo" / "framingqa"


@pytest.fixture(scope="module")
def full_build(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("fqa-full")
    result = build(BuildOptions(source=str(shared_data), out=out, progress=False, unreviewed=True))
    return result, out


@pytest.mark.slow  # ~20-45 s: the whole offline build from ../shared/data
def test_full_build_counts(full_build):
    result, out = full_build
    per_task = Counter(c.task for c in result.contexts)
    assert per_task == {"law_issue_spotting": 200, "law_hearsay": 94, "finance": 200, "medicine": 100}
    sheets = {s.context_id: s for s in read_sheets(out / "answer_sheets.jsonl")}
    items = read_items(out)  # validates every item
    per_ctx = Counter((it["context_id"], it["format"]) for it in items)
    mc_contexts = {cid for cid, fmt in per_ctx if fmt == "mc"}
    assert len(mc_contexts) == 500
    for ctx in result.contexts:
        e = len(sheets[ctx.context_id].evidence)
        assert e >= 3 and {ev.distractor for ev in sheets[ctx.context_id].evidence} == set(
            sheets[ctx.context_id].distractors)
        assert per_ctx[(ctx.context_id, "binary")] == 54 + 2 * e
        assert per_ctx[(ctx.context_id, "mc")] == (0 if ctx.task == "law_hearsay" else 28 + e)
    sum_e_binary = sum(len(s.evidence) for s in sheets.values())
    sum_e_mc = sum(len(sheets[c].evidence) for c in mc_contexts)
    n_binary = sum(1 for it in items if it["format"] == "binary")
    assert n_binary == 54 * 594 + 2 * sum_e_binary
    assert len(items) - n_binary == 28 * 500 + sum_e_mc
    assert all(it["item_id"] == f"{it['context_id']}:{it['format']}:{it['slot']}" for it in items)
    contexts_file = [json.loads(line) for line in (out / "contexts.jsonl").read_text().splitlines()]
    assert len(contexts_file) == 594


@pytest.mark.slow
def test_full_build_report(full_build):
    result, out = full_build
    report = (out / "build_report.md").read_text()
    for heading in ("## Counts", "## Gold distribution", "## Notes", "## Dropped source records", "## Sample items"):
        assert heading in report
    assert "| **all** | binary | 594 |" in report and "| **all** | mc | 500 |" in report
    assert "hearsay/test.tsv row 94" in report and "row 74: relabelled" in report
    assert "FiQA post titles only" in report
    for d in result.dropped:
        assert d.record in report
    samples = report.split("## Sample items", 1)[1]
    for task, prefix in (("law_issue_spotting", "law-"), ("law_hearsay", "hearsay-"), ("finance", "fin-"),
                         ("medicine", "med-")):
        section = samples.split(f"### {task}\n", 1)[1].split("\n### ", 1)[0]
        heads = [line for line in section.splitlines() if line.startswith("**")]
        assert len(heads) == 20 and all(h.startswith(f"**{prefix}") for h in heads)


def test_demo_rebuild_is_byte_identical(tmp_path):
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as exc:
        main(["build", "framingqa", "--source", str(DEMO / "source"), "--out", str(out)])
    assert exc.value.code == 0
    assert (out / "items.jsonl").read_bytes() == (DEMO / "items.jsonl").read_bytes()
    items = read_items(out)
    per_task = Counter(it["context_id"] for it in items if it["format"] == "binary")
    assert set(per_task.values()) == {62}  # 54 + 2E, E = 4
    assert len(per_task) == 16 and sum(1 for it in items if it["format"] == "mc") == 12 * 32


def _cli_error(args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_broken_source_is_one_clear_error(tmp_path, shared_data, capsys):
    src = tmp_path / "src"
    shutil.copytree(shared_data / "legalbench", src / "legalbench")
    broken = src / "legalbench" / "tasks" / "hearsay" / "test.tsv"
    broken.chmod(0o644)
    broken.write_text("label\tbody\tslice\nYes\tx\tStandard hearsay\n")
    out = tmp_path / "out"
    err = _cli_error(["build", "framingqa", "--source", str(src), "--out", str(out),
                      "--tasks", "law_hearsay"], capsys)
    assert "hearsay/test.tsv" in err and "missing column 'text'" in err
    assert not out.exists()  # nothing half-written
    err = _cli_error(["build", "framingqa", "--source", str(tmp_path / "nowhere"), "--out", str(out)], capsys)
    assert "no such folder" in err and "--source takes a folder holding legalbench/tasks/" in err
    err = _cli_error(["build", "framingqa", "--source", str(src), "--out", str(out), "--tasks", "chess"], capsys)
    assert "unknown task 'chess'" in err
