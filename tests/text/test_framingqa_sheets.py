"""`framebench sheets draft|accept`: the paper's draft -> review -> accept construction for a user's
own contexts, with real engines (a baseline engine, and SmolLM2 in the slow tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.items import read_items
from framebench.text_eval.framingqa.answer_sheets import read_sheets
from framebench.text_eval.framingqa.sheet_drafts import (
    flags,
    longest_copied_run,
    parse_draft,
    read_contexts,
)

REPO = Path(__file__).resolve().parents[2]
DEMO_SOURCE = REPO / "datasets" / "demo" / "framingqa" / "source"


def _contexts_file(tmp_path: Path, n: int = 2) -> Path:
    """The demo set's first contexts as a user's contexts file (context, gold, ranked distractors)."""
    contexts = [json.loads(line) for line in (DEMO_SOURCE / "contexts.jsonl").read_text().splitlines()]
    sheets = {s.context_id: s for s in read_sheets(DEMO_SOURCE / "answer_sheets.jsonl")}
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"context_id": c["context_id"], "task": c["task"], "text": c["text"],
                                        "gold": c["gold"], "distractors": sheets[c["context_id"]].distractors}) + "\n"
                            for c in contexts[:n]))
    return path


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def _review(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_flags_name_what_a_reviewer_rejects(tmp_path):
    ctx = read_contexts(_contexts_file(tmp_path))[0][0]
    assert "names its option" in " ".join(flags("the shop refusing the warranty, a consumer issue for the fridge I bought", ctx, "Consumer"))
    copied = " ".join(ctx.text.split()[:12])
    assert longest_copied_run(copied, ctx.text) == 12
    assert any("copies 12 consecutive words" in f for f in flags(copied, ctx, "Courts"))
    assert flags("", ctx, "Courts") == ["empty or unparsable"]
    assert any("3 words" in f for f in flags("the shop refusing", ctx, "Courts"))
    assert parse_draft('"Rationale: the shop keeping my money."\nmore') == "the shop keeping my money"


def test_draft_review_accept_round_trip_with_a_baseline_engine(tmp_path, capsys):
    contexts = _contexts_file(tmp_path)
    review = tmp_path / "review.jsonl"
    code, out, _ = _run(["sheets", "draft", "--contexts", str(contexts), "--review", str(review),
                         "--model", "baseline:always-yes"], capsys)
    assert code == 0 and "18 drafted" in out
    rows = _review(review)
    assert len(rows) == 2 * 9  # 4 premises, 2 rephrasings, 3 evidence per context
    assert all(r["decision"] is None and r["model"] == "baseline:always-yes" for r in rows)
    assert all("1 words (allowed 12-40)" in r["flags"] for r in rows)  # "Yes" is not a rationale

    # A person edits every slot of the first context, rejects one premise of the second.
    edited = {}
    for i, r in enumerate(rows):
        if r["context_id"] == rows[0]["context_id"]:
            r["decision"], r["edited"] = "edit", f"the reviewed rationale number {i} about the shop and the fridge warranty"
            edited[(r["slot"], r["option"], r["number"])] = r["edited"]
        elif r["slot"] == "premise" and r["option"] == rows[9]["option"]:
            r["decision"] = "reject"
        else:
            r["decision"] = "accept"
    _write(review, rows)

    code, out, _ = _run(["sheets", "draft", "--contexts", str(contexts), "--review", str(review),
                         "--model", "baseline:always-yes"], capsys)
    assert code == 0 and "1 drafted" in out  # only the rejected slot is drafted again
    again = _review(review)
    assert again[-1]["attempt"] == 2 and again[-1]["decision"] is None

    built = tmp_path / "sheets"
    code, out, _ = _run(["sheets", "accept", str(review), "--contexts", str(contexts), "--out", str(built),
                         "--reviewer", "a test"], capsys)
    assert code == 0 and "wrote 1 answer sheets" in out and "left out" in out
    sheet = read_sheets(built / "answer_sheets.jsonl")[0]
    assert sheet.premises[sheet.gold] == edited[("premise", sheet.gold, 1)]
    assert sheet.provenance["reviewed_by"] == "a test" and sheet.provenance["drafted_by"] == "baseline:always-yes"
    assert len(sheet.evidence) == 6  # the three distractor premises and three accepted evidence drafts

    items_dir = tmp_path / "items"
    code, _, _ = _run(["build", "framingqa", "--source", str(built), "--out", str(items_dir)], capsys)
    assert code == 0
    questions = " ".join(it["question"] for it in read_items(items_dir))
    assert "the reviewed rationale number 0" in questions
    assert " Yes?" not in questions and "based on Yes" not in questions  # no unreviewed draft reached an item


def test_review_of_other_contexts_is_refused_in_one_line(tmp_path, capsys):
    contexts = _contexts_file(tmp_path)
    review = tmp_path / "review.jsonl"
    assert _run(["sheets", "draft", "--contexts", str(contexts), "--review", str(review),
                 "--model", "baseline:always-no"], capsys)[0] == 0
    other = tmp_path / "other.jsonl"
    other.write_text(contexts.read_text().splitlines()[0] + "\n")
    for args in (["sheets", "accept", str(review), "--contexts", str(other), "--out", str(tmp_path / "o"),
                  "--reviewer", "x"],
                 ["sheets", "draft", "--contexts", str(other), "--review", str(review), "--model", "baseline:always-no"]):
        code, _, err = _run(args, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "drafted from other contexts" in err
    assert not (tmp_path / "o").exists()
    rows = _review(review)
    rows[0]["decision"] = "maybe"
    _write(review, rows)
    code, _, err = _run(["sheets", "accept", str(review), "--contexts", str(contexts), "--out", str(tmp_path / "o"),
                         "--reviewer", "x"], capsys)
    assert code == 2 and "line 1: field 'decision'" in err


@pytest.mark.slow  # loads SmolLM2-135M and drafts 9 premises
def test_draft_with_smollm2(tmp_path, capsys, smollm2_dir):
    contexts = _contexts_file(tmp_path, n=1)
    review = tmp_path / "review.jsonl"
    code, out, _ = _run(["sheets", "draft", "--contexts", str(contexts), "--review", str(review),
                         "--model", "smollm2"], capsys)
    assert code == 0 and "9 drafted" in out
    rows = _review(review)
    assert {r["slot"] for r in rows} == {"premise", "rephrasing", "evidence"}
    assert all(r["model"] == "smollm2" for r in rows)
    for r in rows:  # every draft is flagged exactly when it breaks a rule the flags name
        ctx = read_contexts(contexts)[0][0]
        option = ctx.gold if r["slot"] == "rephrasing" else r["option"]
        assert r["flags"] == flags(r["draft"], ctx, option)
