"""The reviewed FramingQA contexts: framebench's own decisions on which source rows enter the
benchmark, their labels, options and text corrections, and their answer sheets.

``reviewed/<task>.jsonl`` holds one decision per context, read by a person before it was written
(``datasets/framingqa.md``, "How the items were checked"):

- ``context_id``, ``source`` and ``source_sha``: the source row it was reviewed on, and a fingerprint
  of that row's text, label and options (``fingerprint``). A source row that no longer matches its
  fingerprint is an error: the decision was made on other text.
- ``gold`` and ``distractors`` (ranked), and ``edits``: every change to the source row, each
  ``{field, old, new, reason}`` with ``field`` one of ``text`` (every occurrence of ``old`` is
  replaced), ``option`` (a source option replaced) or ``gold`` (the source label corrected).
- ``review``: why the gold is right under every variant; ``premises``, ``gold_rephrasings``,
  ``evidence`` and ``provenance``: the answer sheet; ``evidence_note``: which details of the context
  the evidence premises foreground (why E is what it is); ``blind_readings``: for every premise, the
  option an independent reader named without seeing its label (``framingqa.blind``); ``notes``: the
  author's remarks on the premises (a distractor premise that voices the user's misreading, say).

``reviewed/<task>.rejected.jsonl`` lists the source rows that were read and rejected, with reasons.
The texts themselves are never stored here: they come from the sources at build time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.jsonl import read_jsonl
from framebench.schema import check_fields
from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, check_sheet, numbered
from framebench.text_eval.framingqa.blind import reading_from_json
from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domain

EDIT_FIELDS = ("text", "option", "gold")


@dataclass
class Edit:
    field: str
    old: str
    new: str
    reason: str


@dataclass
class Decision:
    """One reviewed context (a line of ``reviewed/<task>.jsonl``)."""

    context_id: str
    source: str
    source_sha: str
    gold: str
    distractors: list[str]
    review: str
    premises: dict[str, str]
    gold_rephrasings: list[str]
    evidence: list[dict[str, str]]
    edits: list[Edit] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    blind_readings: list[dict[str, str]] = field(default_factory=list)
    evidence_note: str = ""
    notes: str = ""


DECISION_FIELDS: dict[str, Any] = {
    "context_id": str, "source": str, "source_sha": str, "gold": str, "distractors": list[str], "review": str,
    "premises": dict[str, str], "gold_rephrasings": list[str], "evidence": list[dict], "edits": list[dict],
    "provenance": dict[str, str], "blind_readings": list[dict], "evidence_note": str,
    "notes": str,
}
OPTIONAL_FIELDS = ("edits", "provenance", "blind_readings", "evidence_note", "notes")
EDIT_KEYS: dict[str, Any] = {"field": str, "old": str, "new": str, "reason": str}


def fingerprint(ctx: Context) -> str:
    """A source row as the loader read it: its text, its own label and its options."""
    blob = json.dumps([ctx.text, ctx.gold, ctx.options], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def reviewed_path(task: str) -> Path:
    return Path(str(files("framebench.text_eval.framingqa") / "reviewed" / f"{task}.jsonl"))


def has_review(task: str) -> bool:
    return reviewed_path(task).is_file()


def read_decisions(path: Path) -> list[tuple[int, Decision]]:
    decisions: list[tuple[int, Decision]] = []
    seen: dict[str, int] = {}
    for n, data in read_jsonl(path, "reviewed context"):
        where = f"{path}: line {n}"
        check_fields(data, DECISION_FIELDS, f"{where}: reviewed context", optional=OPTIONAL_FIELDS)
        edits = []
        for i, e in enumerate(data.get("edits", [])):
            check_fields(e, EDIT_KEYS, f"{where}: edits[{i}]")
            if e["field"] not in EDIT_FIELDS:
                raise UserError(f"{where}: edits[{i}]: field 'field' is {e['field']!r} (one of {', '.join(EDIT_FIELDS)})")
            edits.append(Edit(**e))
        decision = Decision(**{**data, "edits": edits})
        if decision.context_id in seen:
            raise UserError(f"{where}: field 'context_id' {decision.context_id!r} repeats line {seen[decision.context_id]}")
        seen[decision.context_id] = n
        decisions.append((n, decision))
    return decisions


def apply_decisions(task: str, candidates: list[Context], path: Path | None = None
                    ) -> tuple[list[Context], list[AnswerSheet]]:
    """The reviewed contexts of one task, built from its candidate source rows."""
    path = path or reviewed_path(task)
    if not path.is_file():
        raise UserError(f"task {task!r} has no reviewed contexts ({path}): build it from a prepared folder "
                        "(framebench sheets accept) or audit the raw rows with --unreviewed")
    by_id = {c.context_id: c for c in candidates}
    contexts: list[Context] = []
    sheets: list[AnswerSheet] = []
    for n, decision in read_decisions(path):
        where = f"{path}: line {n}: context {decision.context_id!r}"
        source = by_id.get(decision.context_id)
        if source is None:
            raise UserError(f"{where}: no such row in the source ({decision.source}); the reviewed decision "
                            "no longer matches the source")
        if fingerprint(source) != decision.source_sha:
            raise UserError(f"{where}: the source row changed since it was reviewed (fingerprint "
                            f"{fingerprint(source)}, reviewed {decision.source_sha}); review it again")
        ctx = reviewed_context(source, decision, where)
        readings = [reading_from_json(r, [decision.gold, *decision.distractors], f"{where}: blind_readings[{i}]")
                    for i, r in enumerate(decision.blind_readings)]
        sheet = AnswerSheet(context_id=ctx.context_id, task=task, gold=decision.gold,
                            distractors=list(decision.distractors), premises=dict(decision.premises),
                            gold_rephrasings=list(decision.gold_rephrasings), evidence=numbered(decision.evidence),
                            provenance=dict(decision.provenance), blind_readings=readings)
        check_sheet(sheet, where)
        contexts.append(ctx)
        sheets.append(sheet)
    return contexts, sheets


def reviewed_context(source: Context, decision: Decision, where: str) -> Context:
    """The source row with the decision's edits applied, checked against its gold and distractors."""
    text, options, gold = source.text, list(source.options), source.gold
    for i, edit in enumerate(decision.edits):
        at = f"{where}: edits[{i}]"
        if edit.field == "text":
            if not edit.old or edit.old not in text:
                raise UserError(f"{at}: field 'old' does not occur in the source text; the decision no longer matches")
            text = text.replace(edit.old, edit.new)
        elif edit.field == "option":
            if edit.old not in options:
                raise UserError(f"{at}: field 'old' {edit.old!r} is not an option of the source row")
            options[options.index(edit.old)] = edit.new
        else:
            if edit.old != gold:
                raise UserError(f"{at}: field 'old' {edit.old!r} is not the source's label {gold!r}")
            if not domain(source.task).labels:  # a free-text option set holds the gold itself
                options[options.index(gold)] = edit.new
            gold = edit.new
    labels = domain(source.task).labels
    if gold and decision.gold != gold:
        raise UserError(f"{where}: field 'gold' {decision.gold!r} differs from the source label {gold!r} "
                        "without a 'gold' edit")
    allowed = labels or tuple(options)
    for option in [decision.gold, *decision.distractors]:
        if option not in allowed:
            raise UserError(f"{where}: option {option!r} is not among {', '.join(allowed)}")
    if not labels and sorted([decision.gold, *decision.distractors]) != sorted(options):
        raise UserError(f"{where}: gold and distractors must be the case's four options after the edits")
    provenance = {**source.provenance, "review": decision.review}
    return replace(source, text=text, gold=decision.gold, options=list(labels or options), provenance=provenance)


def rejected_counts() -> dict[str, int]:
    """Source rows read and rejected during the review, per task."""
    counts: dict[str, int] = {}
    folder = Path(str(files("framebench.text_eval.framingqa") / "reviewed"))
    for path in sorted(folder.glob("*.rejected.jsonl")):
        counts[path.name.removesuffix(".rejected.jsonl")] = sum(1 for line in path.open(encoding="utf-8") if line.strip())
    return counts
