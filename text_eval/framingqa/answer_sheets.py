"""Answer sheets: per context the gold option, three ranked distractors, a premise toward every
option, two rephrasings of the gold premise, and the cueing-evidence premises E.

A sheet is authored data (framebench's reviewed sheets in ``text_eval/framingqa/reviewed/``, the demo
set's, or a user's accepted drafts: ``framebench sheets``); the build writes the sheets it used to
``answer_sheets.jsonl``. The multiple-choice layout is not part of a sheet: ``mc_layout`` derives it
from the context id. ``check_sheet`` rejects a structurally inconsistent sheet with a clear error;
``framebench.text_eval.framingqa.check`` finds the defects a reviewer would reject.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.jsonl import read_jsonl
from framebench.text_eval.framingqa.blind import BlindReading, reading_from_json
from framebench.vocabulary import MC_ANSWERS


@dataclass
class Evidence:
    """One cueing-evidence premise: facts of the context foregrounded toward a distractor.

    ``evidence_id`` (e1, e2, …) is its position in the sheet; item slots use it."""

    evidence_id: str
    distractor: str
    premise: str


@dataclass
class AnswerSheet:
    context_id: str
    task: str
    gold: str
    distractors: list[str]  # ranked d1..d3 (most confusable first)
    premises: dict[str, str]  # option -> <X> (gold and each distractor)
    gold_rephrasings: list[str]  # <A>*, <A>**
    evidence: list[Evidence]
    provenance: dict[str, str] = field(default_factory=dict)  # drafted_by, reviewed_by, date, ...
    notes: list[str] = field(default_factory=list)
    blind_readings: list[BlindReading] = field(default_factory=list)  # one per premise (framingqa.blind)

    @property
    def options(self) -> list[str]:
        return [self.gold, *self.distractors]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["evidence"] = [{"distractor": e.distractor, "premise": e.premise} for e in self.evidence]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> AnswerSheet:
        from framebench.schema import check_fields

        check_fields(data, SHEET_FIELDS, f"{where}: answer sheet", optional=("provenance", "notes", "blind_readings"))
        for i, e in enumerate(data["evidence"]):
            check_fields(e, EVIDENCE_FIELDS, f"{where}: answer sheet: evidence[{i}]")
        options = [data["gold"], *data["distractors"]]
        readings = [reading_from_json(r, options, f"{where}: answer sheet: blind_readings[{i}]")
                    for i, r in enumerate(data.get("blind_readings", []))]
        sheet = cls(**{**data, "evidence": numbered(data["evidence"]), "blind_readings": readings})
        check_sheet(sheet, where)
        return sheet


SHEET_FIELDS: dict[str, Any] = {
    "context_id": str, "task": str, "gold": str, "distractors": list[str], "premises": dict[str, str],
    "gold_rephrasings": list[str], "evidence": list[dict], "provenance": dict[str, str], "notes": list[str],
    "blind_readings": list[dict],
}
EVIDENCE_FIELDS: dict[str, Any] = {"distractor": str, "premise": str}


def numbered(evidence: list[dict[str, str]]) -> list[Evidence]:
    return [Evidence(f"e{i}", e["distractor"], e["premise"]) for i, e in enumerate(evidence, 1)]


def mc_layout(context_id: str, options: list[str], gold: str) -> tuple[list[str], str]:
    """The A-D order of a context's options and the gold's letter.

    The order is a permutation fixed by the context id alone (options sorted by a hash of id and
    option), so no option sits at one letter across contexts and adding contexts changes no order."""
    def key(option: str) -> str:
        return hashlib.sha256(f"{context_id}\x1f{option}".encode()).hexdigest()

    order = sorted(options, key=key)
    return order, MC_ANSWERS[order.index(gold)]


def check_sheet(sheet: AnswerSheet, where: str) -> None:
    def bad(msg: str) -> UserError:
        return UserError(f"{where}: answer sheet {sheet.context_id!r}: {msg}")

    if len(sheet.distractors) != 3 or len(set(sheet.distractors)) != 3 or sheet.gold in sheet.distractors:
        raise bad("needs exactly three distinct distractors different from the gold")
    for option in sheet.options:
        if not str(sheet.premises.get(option, "")).strip():
            raise bad(f"no premise for option {option!r}")
    if set(sheet.premises) != set(sheet.options):
        raise bad(f"premises name an option that is not gold or distractor: {sorted(set(sheet.premises) - set(sheet.options))}")
    if len(sheet.gold_rephrasings) != 2 or not all(p.strip() for p in sheet.gold_rephrasings):
        raise bad("needs two gold premise rephrasings")
    covered = {e.distractor for e in sheet.evidence}
    if covered != set(sheet.distractors):
        missing = sorted(set(sheet.distractors) - covered)
        raise bad(f"evidence premises must cover every distractor (missing: {missing}) and nothing else")
    if any(not e.premise.strip() for e in sheet.evidence):
        raise bad("an evidence premise is empty")


def write_sheets(sheets: list[AnswerSheet], path: Path) -> None:
    from framebench.files import write_text_atomic
    write_text_atomic("".join(json.dumps(s.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                              for s in sheets), path)


def read_sheets(path: Path) -> list[AnswerSheet]:
    if not path.exists():
        raise UserError(f"{path}: no such answer-sheet file")
    sheets: list[AnswerSheet] = []
    for n, data in read_jsonl(path, "answer sheet"):
        sheets.append(AnswerSheet.from_json(data, f"{path}: line {n}"))
    return sheets
