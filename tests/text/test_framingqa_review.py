"""The reviewed FramingQA build: framebench's decisions applied to the sources, the build check
(`build framingqa --check`) passing on it and failing on the unreviewed rows, hand-checked cases,
and a changed source row or a stale decision refused with one line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import chisquare

from framebench.cli import main
from framebench.errors import UserError
from framebench.items import read_items
from framebench.text_eval.framingqa.build import BuildOptions, build
from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domain
from framebench.text_eval.framingqa.expansion import expected_counts
from framebench.text_eval.framingqa.review import (
    apply_decisions,
    fingerprint,
    read_decisions,
    reviewed_path,
)
from framebench.text_eval.framingqa.sources_finance import categorize

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo" / "framingqa"
COUNTS = {"law_issue_spotting": 200, "law_hearsay": 94, "finance": 200, "medicine": 100}


@pytest.fixture(scope="module")
def reviewed(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("fqa-reviewed")
    return build(BuildOptions(source=str(shared_data), out=out, progress=False)), out


def _exit(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    captured = capsys.readouterr()
    return exc.value.code, captured.out, captured.err


def test_reviewed_build_keeps_the_papers_counts_and_passes_the_check(reviewed):
    result, out = reviewed
    assert Counter(c.task for c in result.contexts) == COUNTS
    assert result.defects == []
    report = (out / "build_report.md").read_text()
    assert "No defects" in report and "## Review" in report
    items = read_items(out)  # every item validated
    per_context = Counter((it["context_id"], it["format"]) for it in items)
    for sheet in result.sheets:  # Table 1: 54 + 2E binary and 28 + E MC items per context
        binary, mc = expected_counts(len(sheet.evidence))
        assert per_context[(sheet.context_id, "binary")] == binary
        assert per_context[(sheet.context_id, "mc")] == (0 if sheet.task == "law_hearsay" else mc)
        assert 3 <= len(sheet.evidence) <= 6


def test_every_decision_is_recorded_with_a_reason_and_provenance():
    for task, n in COUNTS.items():
        decisions = read_decisions(reviewed_path(task))
        assert len(decisions) == n
        for _, d in decisions:
            assert d.review.strip() and all(e.reason.strip() for e in d.edits)
            assert {"drafted_by", "reviewed_by", "date"} <= set(d.provenance)


def test_unreviewed_rows_fail_the_check_naming_the_defects(shared_data, tmp_path, capsys):
    code, out, _ = _exit(["build", "framingqa", "--source", str(shared_data), "--out", str(tmp_path / "raw"),
                          "--unreviewed", "--check"], capsys)
    assert code == 1
    for kind in ("premise names its option", "quoted sentence with a label", "distractor overlaps gold",
                 "option inside option", "html entity", "doubled word", "gold is the longest option",
                 "premise cut"):
        assert kind in out, kind
    defects = [json.loads(line) for line in (tmp_path / "raw" / "defects.jsonl").open()]
    # "Crohn's disease" against the gold "Metastatic Crohn disease"
    assert {"task": "medicine", "context_id": "med-6", "kind": "distractor overlaps gold"} in [
        {k: d[k] for k in ("task", "context_id", "kind")} for d in defects]
    assert "| medicine | med-6 |" in (tmp_path / "raw" / "build_report.md").read_text()


def test_hand_checked_medicine_case_med_16(reviewed):
    """Gold "Giant macroprolactinoma": the source's "Prolactinoma" and "Pituitary macroadenoma" are the
    gold under another name (a narrower and a broader term) and must not be distractors."""
    result, _ = reviewed
    sheet = next(s for s in result.sheets if s.context_id == "med-16")
    assert "macroprolactinoma" in sheet.gold.lower()
    assert not {"Prolactinoma", "Pituitary macroadenoma"} & set(sheet.distractors)


def test_finance_golds_are_judged_not_keyword_rules(reviewed):
    """fin-fiqa-2144 asks for a legitimate credit repair service: the keyword rule called it fraud."""
    result, _ = reviewed
    finance = [c for c in result.contexts if c.task == "finance"]
    differs = [c for c in finance if categorize(c.text)[0] not in (None, c.gold)]
    assert differs, "no reviewed finance label differs from the keyword rule"
    golds = {c.context_id: c.gold for c in finance}
    assert golds.get("fin-fiqa-2144", "Credit reporting and score") != "Fraud and scams"
    assert Counter(golds.values()) == {"Debt and repayment": 34, "Banking and payments": 43, "Fraud and scams": 25,
                                       "Credit reporting and score": 17, "Housing finance": 34,
                                       "Investing and financial advice": 47}


def test_mc_letters_are_balanced_in_every_task(reviewed):
    _, out = reviewed
    neutral = [it for it in read_items(out) if it["format"] == "mc" and it["slot"] == "neutral"]
    for task in ("law_issue_spotting", "finance", "medicine"):
        rows = [it for it in neutral if it["task"] == task]
        letters = Counter(it["gold"] for it in rows)
        assert chisquare([letters[x] for x in "ABCD"]).pvalue > 0.01, (task, letters)
        at = Counter((opt, "ABCD"[i]) for it in rows for i, opt in enumerate(it["options"]))
        if task != "medicine":  # a fixed label set: no label sits at one letter
            for label in domain(task).labels:
                counts = [at[(label, x)] for x in "ABCD"]
                if sum(counts) >= 20:
                    assert chisquare(counts).pvalue > 0.001, (task, label, counts)


def test_premises_never_name_their_option_in_the_rendered_items(reviewed):
    result, out = reviewed
    sheets = {s.context_id: s for s in result.sheets}
    for item in read_items(out):
        if item["level"] in ("propositional", "global") and item["bias"] == "incorrect":
            sheet = sheets[item["context_id"]]
            premises = [sheet.premises[item["distractor"]], *(e.premise for e in sheet.evidence)]
            premise = max((p for p in premises if p in item["question"]), key=len)
            assert item["distractor"].lower() not in premise.lower()


def _candidates(task: str, shared_data: Path) -> list[Context]:
    from types import SimpleNamespace

    return domain(task).load(SimpleNamespace(source=str(shared_data), finance_posts=None)).contexts


def test_a_changed_source_row_or_a_stale_edit_is_refused(shared_data, tmp_path):
    from dataclasses import replace

    candidates = _candidates("law_hearsay", shared_data)
    n, first = read_decisions(reviewed_path("law_hearsay"))[0]
    changed = [replace(c, text=c.text + " (edited)") if c.context_id == first.context_id else c for c in candidates]
    with pytest.raises(UserError, match=rf"line {n}: context '{first.context_id}': the source row changed"):
        apply_decisions("law_hearsay", changed)
    missing = [c for c in candidates if c.context_id != first.context_id]
    with pytest.raises(UserError, match="no such row in the source"):
        apply_decisions("law_hearsay", missing)

    source = next(c for c in candidates if c.context_id == first.context_id)
    row = json.loads(reviewed_path("law_hearsay").read_text().splitlines()[0])
    stale = tmp_path / "law_hearsay.jsonl"
    row["edits"] = [{"field": "text", "old": "words that are not there", "new": "x", "reason": "test"}]
    assert row["source_sha"] == fingerprint(source)
    stale.write_text(json.dumps(row) + "\n")
    with pytest.raises(UserError, match=r"edits\[0\]: field 'old' does not occur in the source text"):
        apply_decisions("law_hearsay", candidates, stale)


def test_finance_posts_without_review_need_unreviewed(tmp_path, capsys):
    posts = tmp_path / "Posts.xml"
    posts.write_text('<posts><row Id="1" PostTypeId="1" Title="How do I pay off my credit card debt faster?" /></posts>')
    code, _, err = _exit(["build", "framingqa", "--source", "hf", "--finance-posts", str(posts), "--tasks",
                          "finance", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "--unreviewed" in err and len(err.strip().splitlines()) == 1


def test_docs_examples_are_the_build(reviewed):
    """docs/framingqa-examples.md shows one context per task: every sheet row, its blind reading and
    every rendered item it lists are in the reviewed build, word for word."""
    result, _ = reviewed
    doc = (Path(__file__).resolve().parents[2] / "docs" / "framingqa-examples.md").read_text()
    items = {(i["context_id"], i["format"], i["slot"]): i for i in result.items}
    sheets = {s.context_id: s for s in result.sheets}
    seen_items = seen_premises = 0
    for block in doc.split("\n## `")[1:]:
        cid = block.split("`", 1)[0]
        sheet = sheets[cid]
        read_as = {r.premise: r.read_as for r in sheet.blind_readings}
        premises = {sheet.premises[o] for o in sheet.options} | set(sheet.gold_rephrasings) | {
            e.premise for e in sheet.evidence}
        for line in block.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) == 4 and cells[0] in ("binary", "mc"):
                item = items[cid, cells[0], cells[1].strip("`")]
                assert (item["question"], item["gold"]) == (cells[2].replace("\\|", "|"), cells[3]), line
                seen_items += 1
            elif len(cells) == 4 and cells[0].startswith(("⟨", "e")):
                premise = cells[2].replace("\\|", "|")
                assert premise in premises, line
                assert cells[3] == read_as[premise], line  # the blind reading stored beside the premise
                seen_premises += 1
    assert seen_items == 4 * 13 - 4 and seen_premises >= 4 * 9  # hearsay has no MC items


def test_every_premise_is_read_blind_and_the_readings_meet_the_issue_49_bar():
    """The shipped sheets: every premise has an independent blind reading, and per task at least 90 %
    of incorrect-bias premises and 95 % of gold premises are read as their own option, at most 5 % as
    "none" (datasets/framingqa.md, "Blind readings")."""
    for task in COUNTS:
        own = {"gold": [], "incorrect": []}
        none = 0
        for _, d in read_decisions(reviewed_path(task)):
            read = {r["premise"]: r for r in d.blind_readings}
            intended = [(d.gold, d.premises[d.gold], "gold")] + [(d.gold, p, "gold") for p in d.gold_rephrasings]
            intended += [(o, d.premises[o], "incorrect") for o in d.distractors]
            intended += [(e["distractor"], e["premise"], "incorrect") for e in d.evidence]
            for option, premise, role in intended:
                reading = read[premise]  # a KeyError here is a premise nobody read
                assert reading["reader"].strip() and "blind reader" in reading["reader"], (d.context_id, premise)
                own[role].append(reading["read_as"] == option)
                none += reading["read_as"] == "none"
        total = len(own["gold"]) + len(own["incorrect"])
        assert sum(own["incorrect"]) >= 0.90 * len(own["incorrect"]), task
        assert sum(own["gold"]) >= 0.95 * len(own["gold"]), task
        assert none <= 0.05 * total, task
