"""The build pipeline end to end: full offline build counts, the demo set rebuild, CLI errors,
and the LLM premise generator's review loop (with a scripted fake backend)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from framebench.text_eval.framingqa.answer_sheets import read_sheets
from framebench.text_eval.framingqa.build import BuildOptions, build

from framebench.cli import main
from framebench.items import read_items

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "datasets" / "demo" / "framingqa"


@pytest.fixture(scope="module")
def full_build(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("fqa-full")
    result = build(BuildOptions(source=str(shared_data), out=out, progress=False))
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
    assert set(per_task.values()) == {60}
    assert len(per_task) == 16 and sum(1 for it in items if it["format"] == "mc") == 12 * 31


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
    assert "source folder not found" in err
    err = _cli_error(["build", "framingqa", "--source", str(src), "--out", str(out), "--tasks", "chess"], capsys)
    assert "unknown task 'chess'" in err


class ScriptedBackend:
    """Answers every premise request with a fixed, recognisable candidate; counts its calls."""

    spec = "fake:scripted"

    def __init__(self) -> None:
        self.chats = 0

    def fingerprint(self) -> str:
        return "fake-scripted-v1"

    def generate(self, chats, decoding):
        self.chats += len(chats)
        out = []
        for chat in chats:
            user = chat[-1]["content"]
            conclusion = user.split("Conclusion: this is ", 1)[1].split(".\n", 1)[0]
            out.append(f'"the reviewed cue toward {conclusion}."\nextra chatter')
        return out


def test_llm_generator_review_loop(tmp_path):
    review = tmp_path / "review.jsonl"
    out = tmp_path / "out"
    backend = ScriptedBackend()
    opts = BuildOptions(source=str(DEMO / "source"), out=out, generator="llm", backend=backend,
                        review=review, progress=False, tasks=("law_issue_spotting", "law_hearsay"))
    first = build(opts)
    rows = [json.loads(line) for line in review.read_text().splitlines()]
    assert len(rows) == 8 * (3 + 3 + 3)  # per context: <A>, <A>*, <A>**, 3 distractors, E = 3
    assert all(r["accepted"] is None and r["model"] == "fake:scripted" for r in rows)
    assert rows[0]["premise"].startswith("the reviewed cue toward ") and not rows[0]["premise"].endswith(".")
    assert first.items == [] and len(first.dropped) == 8  # nothing accepted yet: nothing built

    for r in rows:  # a person accepts every candidate of demo-law-2 and rejects one of demo-law-1
        if r["context_id"] in ("demo-law-1", "demo-law-2"):
            r["accepted"] = not (r["context_id"] == "demo-law-1" and r["role"] == "gold**")
    review.write_text("".join(json.dumps(r) + "\n" for r in rows))
    calls = backend.chats
    second = build(opts)
    assert backend.chats == calls  # resumable: no candidate regenerated
    assert [c.context_id for c in second.contexts] == ["demo-law-1", "demo-law-2"][1:]
    assert any("demo-law-1" in d.record and "gold**" in d.reason for d in second.dropped)
    questions = [it["question"] for it in second.items]
    assert len(second.items) == 60 + 31
    prop = [it for it in second.items if it["level"] != "root" and it["bias"] != "neutral"]
    assert all("the reviewed cue toward" in q["question"] for q in prop)
    assert not any("the clerk returning" in q for q in questions)  # authored premises replaced


def test_llm_review_file_errors(tmp_path, capsys):
    review = tmp_path / "review.jsonl"
    review.write_text('{"candidate_id": "x", "context_id": "demo-law-1", "role": "gold", '
                      '"premise": "p", "accepted": "yes"}\n')
    opts = BuildOptions(source=str(DEMO / "source"), out=tmp_path / "o", generator="llm",
                        backend=ScriptedBackend(), review=review, progress=False, tasks=("finance",))
    from framebench.errors import UserError

    with pytest.raises(UserError, match=r"review.jsonl: line 1: field 'accepted' must be true, false or null"):
        build(opts)
