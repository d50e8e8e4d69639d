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
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"{path}: missing column(s) {missing}")
        rows = []
        seen: set[str] = set()
        for n, row in enumerate(reader, 2):
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
