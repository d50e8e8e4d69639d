"""Medicine contexts: DiagnosisArena cases (Appendix C.3).

A case is its case information, physical examination and diagnostic tests; the gold is the right
option. The benchmark's 100 cases, their distractors and text corrections are reviewed decisions
(``text_eval/framingqa/reviewed/medicine.jsonl``). The automatic selection of ``--unreviewed``
builds spreads cases across specialties (a fixed keyword lexicon on the final diagnosis, then the
case text; round-robin in id order) and keeps the source's options.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.text_eval.framingqa.contexts import (
    MEDICINE_CASES,
    Context,
    Dropped,
    clean_text,
    hf_table,
    read_table,
)
from framebench.text_eval.framingqa.domains import Domain, Loaded
from framebench.vocabulary import MC_ANSWERS

TASK = "medicine"
COLUMNS = ("id", "Case Information", "Physical Examination", "Diagnostic Tests", "Final Diagnosis",
           "Options", "Right Option")

SPECIALTY_CUES: dict[str, tuple[str, ...]] = {
    "cardiology": ("cardi", "heart", "valv", "aort", "coronary", "myocard", "pericard", "atrial",
                   "ventric", "endocard"),
    "neurology": ("neur", "brain", "encephal", "mening", "spinal", "cerebr", "seizure", "myelit",
                  "palsy", "stroke"),
    "dermatology": ("derm", "skin", "cutaneous", "rash", "melan", "pemphig", "psoria", "nevus", "scalp"),
    "hematology-oncology": ("lymphoma", "leukemi", "myeloma", "carcinoma", "sarcoma", "tumou", "tumor",
                            "neoplas", "anemi", "thrombocyt", "cancer", "metasta", "blastoma"),
    "infectious disease": ("infect", "bacter", "viral", "virus", "fung", "tubercul", "sepsis",
                           "parasit", "abscess", "syphilis", "hiv"),
    "gastroenterology": ("hepat", "liver", "gastr", "colitis", "bowel", "pancrea", "esophag", "biliar",
                         "intestin", "colon"),
    "pulmonology": ("pulmon", "lung", "pneum", "bronch", "pleur", "respirat"),
    "nephrology-urology": ("renal", "kidney", "nephr", "bladder", "urethr", "prostat", "glomerul"),
    "endocrinology": ("thyro", "adrenal", "pituitar", "diabet", "insulin", "cushing", "parathyro"),
    "rheumatology-immunology": ("lupus", "arthrit", "vasculit", "sarcoid", "autoimmun", "igg4",
                                "sjögren", "scleroderma", "myositis"),
    "ophthalmology": ("ocular", "retin", "eye", "uve", "cornea", "optic", "orbit"),
}


def diagnosisarena_rows(source: str | Path) -> tuple[str, list[dict[str, Any]]]:
    if source == "hf":
        return "hf:SII-SPIRAL-MED/DiagnosisArena", hf_table("SII-SPIRAL-MED/DiagnosisArena", None, "test", COLUMNS)
    path = _csv_path(source)
    return path.name, read_table(path, COLUMNS, sep=",")


def _csv_path(source: str | Path) -> Path:
    root = Path(source)
    return root / "diagnosisarena" / "diagnosis_arena_dataset.csv" if (root / "diagnosisarena").is_dir() else root


def specialty(diagnosis: str, case_text: str) -> str:
    for text in (diagnosis.lower(), case_text.lower()):
        scores = {s: sum(1 for cue in cues if cue in text) for s, cues in SPECIALTY_CUES.items()}
        best = max(scores.values())
        if best:
            return next(s for s, v in scores.items() if v == best)
    return "other"


MAX_OPTIONS_CHARS = 10_000  # DiagnosisArena's longest options cell is about 400 characters
MAX_OPTIONS_DEPTH = 3  # the cell is one flat {'A': ..., ...} object
_OUTSIDE_STRINGS = set("{}[](),: \t\r\n")  # all a dict of string literals holds between its strings


class OptionsTooLarge(ValueError):
    """An options cell too long or too deeply nested to be parsed safely (a user error, not a drop)."""


def literal_shape(text: str) -> tuple[int, bool]:
    """(bracket depth outside string literals, whether only brackets, commas and colons lie
    between the string literals), scanned without parsing."""
    depth = deepest = 0
    plain = True
    quote = ""
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}])":
            depth -= 1
        elif ch not in _OUTSIDE_STRINGS:
            plain = False
    return deepest, plain


def parse_options(raw: Any) -> dict[str, str] | None:
    """The options cell is a Python dict literal ``{'A': ..., ...}`` (HF: already a dict).

    Size and nesting are bounded before parsing (``OptionsTooLarge``: Python's parser recurses);
    a cell holding anything but string literals, brackets, commas and colons is not parsed at all.
    """
    if isinstance(raw, dict):
        value = raw
    else:
        text = str(raw)
        if len(text) > MAX_OPTIONS_CHARS:
            raise OptionsTooLarge(f"is {len(text)} characters long (at most {MAX_OPTIONS_CHARS})")
        depth, plain = literal_shape(text)
        if depth > MAX_OPTIONS_DEPTH:
            raise OptionsTooLarge(f"is nested {depth} levels deep (an options cell is one flat object)")
        if not plain:
            return None
        try:
            value = ast.literal_eval(text)  # literal parsing only, never eval
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return None
    if not isinstance(value, dict) or sorted(value) != list(MC_ANSWERS):
        return None
    options = {k: clean_text(value[k]) for k in MC_ANSWERS}
    if any(not v for v in options.values()) or len(set(options.values())) != 4:
        return None
    return options


def case_text(row: dict[str, Any]) -> str:
    parts = [("Case Information", row.get("Case Information")),
             ("Physical Examination", row.get("Physical Examination")),
             ("Diagnostic Tests", row.get("Diagnostic Tests"))]
    return "\n".join(f"{label}: {clean_text(value)}" for label, value in parts if clean_text(value))


def medicine_candidates(name: str, rows: list[dict[str, Any]], where: str = "") -> tuple[list[Context], list[Dropped]]:
    """Every usable case as a candidate (gold: the right option; options in source letter order).
    ``where``: the file named in errors (default ``name``)."""
    dropped: list[Dropped] = []
    contexts: list[Context] = []
    for n, row in enumerate(rows):
        case_id = str(row.get("id", "")).strip() or str(n)
        record = f"{name} id {case_id}"
        try:
            options = parse_options(row.get("Options"))
        except OptionsTooLarge as exc:
            raise UserError(f"{where or name}: id {case_id}: field 'Options' {exc}") from None
        right = str(row.get("Right Option", "")).strip()
        if not re.fullmatch(r"[0-9A-Za-z_-]+", case_id):
            dropped.append(Dropped(TASK, record, "malformed id"))
        elif not clean_text(row.get("Case Information")):
            dropped.append(Dropped(TASK, record, "empty case information"))
        elif options is None:
            dropped.append(Dropped(TASK, record, "options are not four distinct non-empty A-D entries"))
        elif right not in MC_ANSWERS:
            dropped.append(Dropped(TASK, record, f"right option {right!r} is not A-D"))
        else:
            text = case_text(row)
            contexts.append(Context(
                context_id=f"med-{case_id}", task=TASK, text=text, gold=options[right],
                options=[options[k] for k in MC_ANSWERS],
                provenance={"source": record, "dataset": "DiagnosisArena",
                            "specialty": specialty(clean_text(row.get("Final Diagnosis")) or options[right], text),
                            "final_diagnosis": clean_text(row.get("Final Diagnosis")),
                            "license": "research/evaluation use (DiagnosisArena terms)"}))
    return contexts, dropped


def select_medicine(candidates: list[Context], cases: int = MEDICINE_CASES) -> list[Context]:
    """The automatic selection (``--unreviewed``): round-robin over specialties in id order."""
    by_specialty: dict[str, list[Context]] = {}
    for ctx in candidates:
        by_specialty.setdefault(ctx.provenance["specialty"], []).append(ctx)
    queues = [by_specialty[s] for s in sorted(by_specialty)]
    chosen: list[Context] = []
    depth = 0
    while len(chosen) < cases and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < cases:
                chosen.append(queue[depth])
        depth += 1
    return chosen


def load_medicine(name: str, rows: list[dict[str, Any]], cases: int = MEDICINE_CASES, where: str = ""
                  ) -> tuple[list[Context], list[Dropped]]:
    """The automatic selection from rows (candidates, then ``select_medicine``)."""
    candidates, dropped = medicine_candidates(name, rows, where)
    return select_medicine(candidates, cases), dropped


# ---------------------------------------------------------------- the medicine domain


def _specialties(contexts: list[Context]) -> list[str]:
    """Build report: cases per specialty (the gold diagnoses are all different)."""
    counts: dict[str, int] = {}
    for c in contexts:
        spec = c.provenance.get("specialty", "?")
        counts[spec] = counts.get(spec, 0) + 1
    return ["| specialty | cases |", "|---|---|"] + [f"| {s} | {n} |" for s, n in sorted(counts.items())]


MEDICINE = Domain(  # options are free-text diagnoses: the other three are the distractors
    TASK, order=40, load=lambda opts: Loaded(*medicine_candidates(
        *diagnosisarena_rows(opts.source), where="hf:DiagnosisArena" if opts.source == "hf" else
        str(_csv_path(opts.source)))),
    select=lambda candidates: Loaded(select_medicine(candidates)),
    mc_ask="What is the most likely diagnosis", all_distractors=True, describe=_specialties)
