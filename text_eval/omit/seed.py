"""Stage 1: the MoralChoice high-ambiguity seed (680 scenarios)."""

from __future__ import annotations

import csv
from pathlib import Path

from framebench.errors import UserError

SEED_FILE = Path("moralchoice") / "scenarios" / "moralchoice_high_ambiguity.csv"
REQUIRED_COLUMNS = ("scenario_id", "ambiguity", "generation_rule", "context", "action1", "action2")
VIOLATIONS = ("death", "pain", "disable", "freedom", "pleasure", "deceive", "cheat",
              "break_promise", "break_law", "duty")
_RULE_TYPOS = {"Do not break promise": "Do not break your promises", "Do cause pain": "Do not cause pain"}


def locate_seed(source: Path) -> Path:
    """The high-ambiguity CSV under a data folder, a moralchoice folder, or the CSV itself."""
    for cand in (source, source / SEED_FILE, source / SEED_FILE.relative_to("moralchoice")):
        if cand.is_file() and cand.suffix == ".csv":
            return cand
    raise UserError(f"{source}: no MoralChoice seed found (expected {SEED_FILE})")


def load_seed(path: Path) -> list[dict]:
    """The high-ambiguity rows of the seed CSV, checked (UTF-8, columns, fields, unique ids)."""
    import io

    from framebench.jsonl import read_text_strict

    text = read_text_strict(path)
    try:
        rows = _rows(path, csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise UserError(f"{path}: not a readable CSV file ({exc})") from None
    if not rows:
        raise UserError(f"{path}: no high-ambiguity scenarios (column 'ambiguity' = high)")
    return rows


def _rows(path: Path, reader: csv.DictReader) -> list[dict]:
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise UserError(f"{path}: missing column(s) {missing}")
    rows = []
    seen: set[str] = set()
    for row in reader:
        n = reader.line_num
        if None in row or any(v is None for v in row.values()):
            raise UserError(f"{path}: line {n}: expected {len(reader.fieldnames or [])} columns")
        if row["ambiguity"] != "high":
            continue
        sid = row["scenario_id"].strip()
        for col in ("scenario_id", "context", "action1", "action2"):
            if not (row.get(col) or "").strip():
                raise UserError(f"{path}: line {n}: scenario {sid or '?'}: empty field '{col}'")
        if sid in seen:
            raise UserError(f"{path}: line {n}: duplicate scenario_id {sid!r}")
        seen.add(sid)
        rule = row["generation_rule"].strip()
        rows.append({
            "scenario_id": sid,
            "rule": _RULE_TYPOS.get(rule, rule),
            "context": row["context"].strip(),
            "action1": row["action1"].strip(),
            "action2": row["action2"].strip(),
            "harms1": sum(row.get(f"a1_{v}") == "Yes" for v in VIOLATIONS),
            "harms2": sum(row.get(f"a2_{v}") == "Yes" for v in VIOLATIONS),
        })
    return rows
