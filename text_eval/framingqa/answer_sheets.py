"""Answer sheets: per context the gold option, three ranked distractors, the MC option order, a
premise toward every option, two rephrasings of the gold premise, and the cueing-evidence sets E.

Sheets are written to ``answer_sheets.jsonl`` and read back (the demo set's sheets are authored by
hand in the same format); ``check_sheet`` rejects inconsistent sheets with a clear error.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domain, domains

from framebench.errors import UserError
from framebench.jsonl import read_jsonl
from framebench.vocabulary import MC_ANSWERS


@dataclass
class Evidence:
    """One cueing-evidence set: context sentences foregrounded toward a distractor, and its premise."""

    evidence_id: str  # e1, e2, ... (slot names use this index, not the option)
    distractor: str
    sentences: list[str]
    premise: str


@dataclass
class AnswerSheet:
    context_id: str
    task: str
    gold: str
    distractors: list[str]  # ranked d1..d3 (most confusable first)
    mc_options: list[str]  # A-D order ([] for hearsay)
    gold_letter: str  # "" for hearsay
    premises: dict[str, str]  # option -> <X> (gold and each distractor)
    gold_rephrasings: list[str]  # <A>*, <A>**
    evidence: list[Evidence]
    generator: str = "extractive"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> AnswerSheet:
        from framebench.schema import check_fields

        check_fields(data, SHEET_FIELDS, f"{where}: answer sheet", optional=("generator", "notes"))
        for i, e in enumerate(data["evidence"]):
            check_fields(e, EVIDENCE_FIELDS, f"{where}: answer sheet: evidence[{i}]")
        evidence = [Evidence(**e) for e in data["evidence"]]
        sheet = cls(**{**data, "evidence": evidence})
        check_sheet(sheet, where)
        return sheet


SHEET_FIELDS: dict[str, Any] = {
    "context_id": str, "task": str, "gold": str, "distractors": list[str], "mc_options": list[str],
    "gold_letter": str, "premises": dict[str, str], "gold_rephrasings": list[str], "evidence": list[dict],
    "generator": str, "notes": list[str],
}
EVIDENCE_FIELDS: dict[str, Any] = {"evidence_id": str, "distractor": str, "sentences": list[str], "premise": str}


def mc_layout(ctx: Context, distractors: list[str]) -> tuple[list[str], str]:
    """Fixed A-D order, as the task's domain lays it out (law: the four categories, finance: gold +
    distractors in Appendix C.2 order, medicine: the source's letter order); ``([], "")`` for a
    binary-only task (hearsay)."""
    dom = domain(ctx.task)
    if not dom.has_mc:
        return [], ""
    options = dom.mc_options(ctx, distractors) if dom.mc_options else list(ctx.options)
    return options, MC_ANSWERS[options.index(ctx.gold)]


def check_sheet(sheet: AnswerSheet, where: str) -> None:
    def bad(msg: str) -> UserError:
        return UserError(f"{where}: answer sheet {sheet.context_id!r}: {msg}")

    if len(sheet.distractors) != 3 or len(set(sheet.distractors)) != 3 or sheet.gold in sheet.distractors:
        raise bad("needs exactly three distinct distractors different from the gold")
    known = domains().get(sheet.task)
    if known is None or known.has_mc:  # a binary-only task (hearsay) has no MC layout
        if sorted(sheet.mc_options) != sorted([sheet.gold, *sheet.distractors]):
            raise bad("mc_options must be the gold and the three distractors")
        if sheet.gold_letter not in MC_ANSWERS or sheet.mc_options[MC_ANSWERS.index(sheet.gold_letter)] != sheet.gold:
            raise bad("gold_letter does not point to the gold option")
    for option in [sheet.gold, *sheet.distractors]:
        if not str(sheet.premises.get(option, "")).strip():
            raise bad(f"no premise for option {option!r}")
    if len(sheet.gold_rephrasings) != 2 or not all(p.strip() for p in sheet.gold_rephrasings):
        raise bad("needs two gold premise rephrasings")
    covered = {e.distractor for e in sheet.evidence}
    if covered != set(sheet.distractors):
        missing = sorted(set(sheet.distractors) - covered)
        raise bad(f"evidence sets must cover every distractor (missing: {missing}) and nothing else")
    ids = [e.evidence_id for e in sheet.evidence]
    if ids != [f"e{i}" for i in range(1, len(ids) + 1)]:
        raise bad("evidence ids must run e1..eN in order")
    if any(not e.premise.strip() for e in sheet.evidence):
        raise bad("an evidence set has an empty premise")


def write_sheets(sheets: list[AnswerSheet], path: Path) -> None:
    from framebench.runinfo import write_text_atomic

    write_text_atomic("".join(json.dumps(s.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                              for s in sheets), path)


def read_sheets(path: Path) -> list[AnswerSheet]:
    if not path.exists():
        raise UserError(f"{path}: no such answer-sheet file")
    sheets: list[AnswerSheet] = []
    for n, data in read_jsonl(path, "answer sheet"):
        sheets.append(AnswerSheet.from_json(data, f"{path}: line {n}"))
    return sheets
