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
    accept = ["sheets", "accept", str(review), "--contexts", str(contexts), "--out", str(built), "--reviewer", "a test"]
    code, out, _ = _run(accept, capsys)  # nothing was read blind yet: accept refuses every context
    assert code == 2 and not built.exists()

    # A person reads the first context's premises blind from a packet that carries no label.
    packet = tmp_path / "packet.jsonl"
    code, out, _ = _run(["sheets", "blind", str(review), "--contexts", str(contexts), "--packet", str(packet)], capsys)
    assert code == 0
    lines = _review(packet)
    assert len(lines) == 9 + 8  # every reviewed premise of both contexts (the rejected one is not)
    assert all(set(r) == {"id", "context", "options", "premise", "read_as"} for r in lines)
    intended = {r["edited"]: (r["option"], r["slot"]) for r in _review(review) if r["decision"] == "edit"}
    first = [r for r in lines if r["premise"] in intended]
    assert len(first) == 9
    for r in first:  # the reader names each premise's own option, except one evidence premise read as "none"
        option, slot = intended[r["premise"]]
        r["read_as"] = "none" if slot == "evidence" and option == "Torts" else option
        assert r["read_as"] in r["options"] + ["none"] and sorted(r["options"]) == sorted(
            [rows[0]["option"], *[x["option"] for x in rows[1:4]]])
    _write(packet, first)
    code, out, _ = _run(["sheets", "blind", str(review), "--contexts", str(contexts), "--answers", str(packet),
                         "--person", "a second reader"], capsys)
    assert code == 0 and "9 read blind; 8 read as their own option, 1 as another" in out
    code, out, _ = _run(accept, capsys)
    assert code == 2  # the one disagreeing premise keeps the context out

    rows = _review(review)
    torts = next(r for r in rows if r["context_id"] == rows[0]["context_id"] and r["slot"] == "evidence"
                 and r["option"] == "Torts")
    assert torts["blind"] == {"premise": torts["edited"], "read_as": "none", "reader": "a second reader"}
    torts["override"] = "the reviewer keeps it: the broken fridge is the tort reading of the post"
    _write(review, rows)
    code, out, _ = _run(accept, capsys)
    assert code == 0 and "wrote 1 answer sheets" in out and "left out demo-law-2: no accepted premise" in out
    sheet = read_sheets(built / "answer_sheets.jsonl")[0]
    assert sheet.premises[sheet.gold] == edited[("premise", sheet.gold, 1)]
    assert sheet.provenance["reviewed_by"] == "a test" and sheet.provenance["drafted_by"] == "baseline:always-yes"
    assert len(sheet.evidence) == 3  # the accepted evidence drafts, never copies of the distractor premises
    assert len(sheet.blind_readings) == 9 and {r.reader for r in sheet.blind_readings} == {"a second reader"}

    items_dir = tmp_path / "items"
    code, _, _ = _run(["build", "framingqa", "--source", str(built), "--out", str(items_dir)], capsys)
    assert code == 0
    questions = " ".join(it["question"] for it in read_items(items_dir))
    assert "the reviewed rationale number 0" in questions
    assert " Yes?" not in questions and "based on Yes" not in questions  # no unreviewed draft reached an item


def test_an_engine_reads_blind_and_accept_refuses_what_it_reads_as_another_option(tmp_path, capsys):
    contexts = _contexts_file(tmp_path, n=1)
    review = tmp_path / "review.jsonl"
    assert _run(["sheets", "draft", "--contexts", str(contexts), "--review", str(review),
                 "--model", "baseline:always-yes"], capsys)[0] == 0
    rows = _review(review)
    for r in rows:
        r["decision"] = "accept"
    _write(review, rows)
    code, out, _ = _run(["sheets", "blind", str(review), "--contexts", str(contexts), "--reader",
                         "baseline:always-yes"], capsys)
    # The baseline answers "A" to any lettered question: each premise is read as the first option of
    # its own shuffled order, and agrees only where that happens to be its option.
    from framebench.text_eval.framingqa.blind import shuffled

    ctx = read_contexts(contexts)[0][0]
    rows = _review(review)
    assert all(r["blind"] == {"premise": r["draft"], "read_as": shuffled(ctx.options, r["draft"])[0],
                              "reader": "baseline:always-yes"} for r in rows)
    agree = sum(1 for r in rows if r["blind"]["read_as"] == (ctx.gold if r["slot"] == "rephrasing" else r["option"]))
    assert code == 0 and f"9 read blind; {agree} read as their own option, {9 - agree} as another" in out
    code, out, err = _run(["sheets", "accept", str(review), "--contexts", str(contexts), "--out", str(tmp_path / "o"),
                           "--reviewer", "x"], capsys)
    assert code == 2 and "read as '" in err and not (tmp_path / "o").exists()
    code, out, _ = _run(["sheets", "blind", str(review), "--contexts", str(contexts), "--reader",
                         "baseline:always-yes"], capsys)
    assert "0 read blind" in out  # resumable: what was read is not read again
    code, _, err = _run(["sheets", "blind", str(review), "--contexts", str(contexts)], capsys)
    assert code == 2 and "exactly one of --reader" in err


def test_blind_reading_parses_strictly_and_shuffles_per_premise():
    from framebench.text_eval.framingqa.blind import parse_reading, reading_prompt, shuffled

    options = ["Consumer", "Courts", "Employment", "Torts"]
    premise = "my boss keeping back the wages for the last two weeks I worked at the shop"
    order = shuffled(options, premise)
    assert sorted(order) == options
    assert {tuple(shuffled(options, f"{premise} {i}")) for i in range(20)} != {tuple(order)}  # not one fixed order
    for reply, expected in (("B", order[1]), (" (c) ", order[2]), ("D.", order[3]), ("none", "none"),
                            ("A because the boss", "none"), ("Employment", "none"), ("", "none"), ("E", "none")):
        assert parse_reading(reply, options, premise) == expected, reply
    prompt = reading_prompt("I worked at a shop.", options, premise)
    assert f"A) {order[0]}" in prompt and premise in prompt and "Employment issue" not in prompt


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
