"""Table 7 expansion: the paper's counts (Tables 1-2) and the templates' wording rules."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from framebench.items import read_items, validate_item
from framebench.text_eval.framingqa.answer_sheets import (
    AnswerSheet,
    Evidence,
    mc_layout,
    read_sheets,
)
from framebench.text_eval.framingqa.contexts import (
    FINANCE_SCOPES,
    HEARSAY_SCOPES,
    LAW_SCOPES,
    Context,
)
from framebench.text_eval.framingqa.expansion import expand, expected_counts, option_phrase

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "framingqa"

# Table 2 of the paper: contexts and question counts per task; ΣE per task follows from Table 1
# (binary = 54C + 2ΣE, MC = 28C + ΣE) and must agree between the two formats.
TABLE2 = {
    "law_issue_spotting": (200, 12_832, 6_616),
    "law_hearsay": (94, 5_638, None),
    "finance": (200, 12_802, 6_601),
    "medicine": (100, 6_022, 3_111),
}
LABELS = {"law_issue_spotting": list(LAW_SCOPES), "law_hearsay": list(HEARSAY_SCOPES),
          "finance": list(FINANCE_SCOPES)}


def synthetic(task: str, n: int, sum_e: int) -> list[tuple[Context, AnswerSheet]]:
    """n contexts whose E values sum to sum_e (spread evenly; evidence cycles over the distractors).

    NB: Table 2's hearsay counts imply ΣE = 281 < 3 x 94, so the paper has hearsay contexts with
    E = 2; the expansion itself does not require E >= 3 (our builds do)."""
    out = []
    for i in range(n):
        e = sum_e // n + (1 if i < sum_e % n else 0)
        assert e >= 1
        options = LABELS.get(task, [f"Diagnosis {k} of case {i}" for k in range(4)])
        gold = options[i % len(options)]
        distractors = [o for o in options if o != gold][:3]
        ctx = Context(f"{task}-{i}", task, f"Synthetic context {i}.", gold, options)
        evidence = [Evidence(f"e{j + 1}", distractors[j % 3], f"the cue {j} toward "
                             f"{option_phrase(task, distractors[j % 3])}") for j in range(e)]
        sheet = AnswerSheet(ctx.context_id, task, gold, distractors,
                            {o: f"the reason toward {option_phrase(task, o)}" for o in [gold, *distractors]},
                            [f"the first rephrasing toward {option_phrase(task, gold)}",
                             f"the second rephrasing toward {option_phrase(task, gold)}"], evidence)
        out.append((ctx, sheet))
    return out


def test_paper_totals_from_synthetic_answer_sheets():
    binary_total = mc_total = binary_c = mc_c = binary_e = mc_e = 0
    for task, (contexts, want_binary, want_mc) in TABLE2.items():
        sum_e = want_binary - 54 * contexts
        assert sum_e % 2 == 0
        sum_e //= 2
        if want_mc is not None:
            assert want_mc - 28 * contexts == sum_e  # Table 2 is consistent with Table 1
        binary = mc = 0
        for ctx, sheet in synthetic(task, contexts, sum_e):
            b, m = expand(ctx, sheet)
            assert (len(b), len(m) or None) == (expected_counts(len(sheet.evidence))[0],
                                               expected_counts(len(sheet.evidence))[1] if m else None)
            binary += len(b)
            mc += len(m)
        assert binary == want_binary
        assert mc == (want_mc or 0)
        binary_total += binary
        mc_total += mc
        binary_c += contexts
        binary_e += sum_e
        if want_mc is not None:
            mc_c += contexts
            mc_e += sum_e
    assert (binary_c, binary_e, binary_total) == (594, 2_609, 37_294)
    assert (mc_c, mc_e, mc_total) == (500, 2_328, 16_328)


def test_per_context_template_structure():
    (ctx, sheet), = synthetic("law_issue_spotting", 1, 5)
    b, m = expand(ctx, sheet)
    assert len(b) == 54 + 2 * 5 and len(m) == 28 + 5
    cells = Counter((it["bias"], it["level"], it["form"]) for it in b)
    for form in ("plain", "negated"):
        for level in ("root", "propositional", "global"):
            assert cells[("correct", level, form)] == 3
        assert cells[("incorrect", "root", form)] == 9
        assert cells[("incorrect", "global", form)] == 9
        assert cells[("incorrect", "propositional", form)] == 5
    mc_cells = Counter((it["bias"], it["level"]) for it in m)
    assert mc_cells == {("neutral", ""): 1, ("correct", "root"): 3, ("correct", "propositional"): 3,
                        ("correct", "global"): 3, ("incorrect", "root"): 9,
                        ("incorrect", "propositional"): 5, ("incorrect", "global"): 9}
    assert len({it["slot"] for it in b}) == len(b) and len({it["slot"] for it in m}) == len(m)
    assert len({it["item_id"] for it in b + m}) == len(b) + len(m)
    for n, item in enumerate(b + m, 1):
        validate_item(item, "synthetic", n)


def test_slots_align_across_contexts_and_name_no_option():
    pairs = synthetic("finance", 6, 18)  # E = 3 everywhere, golds differ
    slot_sets = {tuple(it["slot"] for it in expand(c, s)[0]) for c, s in pairs}
    assert len(slot_sets) == 1
    slots = next(iter(slot_sets))
    assert not any(label.lower() in slot.lower() for slot in slots for label in FINANCE_SCOPES)
    assert {s for s in slots if s.startswith("incorrect/root/plain/Q2/")} == {
        "incorrect/root/plain/Q2/d1", "incorrect/root/plain/Q2/d2", "incorrect/root/plain/Q2/d3"}


@pytest.fixture(scope="module")
def demo_items() -> list[dict]:
    return read_items(DEMO / "items.jsonl")


@pytest.fixture(scope="module")
def demo_sheets() -> dict[str, AnswerSheet]:
    return {s.context_id: s for s in read_sheets(DEMO / "answer_sheets.jsonl")}


def _premise_of(item: dict, sheet: AnswerSheet) -> str | None:
    candidates = [*sheet.premises.values(), *sheet.gold_rephrasings, *(e.premise for e in sheet.evidence)]
    found = [p for p in candidates if p in item["question"]]
    return max(found, key=len) if found else None


def _without_premise(item: dict, sheet: AnswerSheet) -> str:
    premise = _premise_of(item, sheet)
    return item["question"].replace(premise, "<P>") if premise else item["question"]


NEGATION = re.compile(r"\bnot\b|n't\b")


def test_binary_gold_flips_under_negation_and_questions_name_their_option(demo_items, demo_sheets):
    binary = [it for it in demo_items if it["format"] == "binary"]
    assert binary
    for it in binary:
        sheet = demo_sheets[it["context_id"]]
        frame = _without_premise(it, sheet)
        assert option_phrase(it["task"], it["option"]) in frame, it["item_id"]
        named_gold = it["option"] == sheet.gold
        negated = it["form"] == "negated"
        assert it["gold"] == ("Yes" if named_gold != negated else "No"), it["item_id"]
        assert bool(NEGATION.search(frame)) == negated, it["item_id"]
        assert it["options"] == []


def test_propositional_incorrect_names_gold_while_premise_points_to_distractor(demo_items, demo_sheets):
    rows = [it for it in demo_items if it["bias"] == "incorrect" and it["level"] == "propositional"]
    mc_tasks = {it["context_id"] for it in demo_items if it["format"] == "mc"}
    assert len(rows) == sum(len(s.evidence) * (2 + (cid in mc_tasks)) for cid, s in demo_sheets.items())  # 2E + E
    for it in rows:
        sheet = demo_sheets[it["context_id"]]
        evidence = {e.evidence_id: e for e in sheet.evidence}[it["slot"].rsplit("/", 1)[1]]
        assert evidence.distractor == it["distractor"] and it["distractor"] in sheet.distractors
        assert evidence.premise in it["question"]
        frame = it["question"].replace(evidence.premise, "<P>")
        if it["format"] == "binary":
            assert it["option"] == sheet.gold
            assert option_phrase(it["task"], sheet.gold) in frame
            assert all(option_phrase(it["task"], d) not in frame for d in sheet.distractors)
        else:  # MC: the neutral question with the premise attached; no option named in the frame
            assert all(option_phrase(it["task"], o) not in frame for o in sheet.options)


def test_global_items_carry_premise_and_framed_question(demo_items, demo_sheets):
    rows = [it for it in demo_items if it["level"] == "global"]
    assert rows
    for it in rows:
        sheet = demo_sheets[it["context_id"]]
        premise = _premise_of(it, sheet)
        assert premise is not None and it["question"].startswith(f"Given {premise}, "), it["item_id"]
        rest = it["question"][len(f"Given {premise}, "):]
        assert option_phrase(it["task"], it["option"]) in rest
        if it["bias"] == "incorrect":
            assert premise == sheet.premises[it["distractor"]] and it["option"] == it["distractor"]
        else:
            variant = int(it["phrasing"][1]) - 1
            assert premise == [sheet.premises[sheet.gold], *sheet.gold_rephrasings][variant]


def test_mc_options_fixed_per_context_with_fixed_gold_letter(demo_items, demo_sheets):
    """Each context's A-D order is the permutation its id fixes (``mc_layout``), the same in every item."""
    by_ctx: dict[str, list[dict]] = {}
    for it in demo_items:
        if it["format"] == "mc":
            by_ctx.setdefault(it["context_id"], []).append(it)
    assert len(by_ctx) == 12
    for cid, rows in by_ctx.items():
        sheet = demo_sheets[cid]
        order, letter = mc_layout(cid, sheet.options, sheet.gold)
        assert sorted(order) == sorted(sheet.options)
        assert {tuple(r["options"]) for r in rows} == {tuple(order)}
        assert {r["gold"] for r in rows} == {letter}
        assert order["ABCD".index(letter)] == sheet.gold
        neutral = [r for r in rows if r["bias"] == "neutral"]
        assert len(neutral) == 1 and neutral[0]["option"] == "" and neutral[0]["slot"] == "neutral"
        assert all(o not in neutral[0]["question"] for o in sheet.options)
    assert not any(it["task"] == "law_hearsay" and it["format"] == "mc" for it in demo_items)
