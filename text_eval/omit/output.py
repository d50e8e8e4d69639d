"""Stage 6: the frozen dataset (items.jsonl, persona records) and the build report
(funnel = paper Table 5, conflict distribution = Table 6, calls/tokens = Table 7)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from framebench.files import file_sha256, write_json_atomic, write_text_atomic
from framebench.items import write_items
from framebench.records import make_row
from framebench.run_folder import RunJson, now_iso, run_id_for, write_run
from framebench.text_eval.omit.personas import PERSONAS

FRAMES = ("action", "omission")
PERSONA_RUN = "personas"
REPORT_JSON = "build_report.json"
REPORT_MD = "build_report.md"
SCENARIOS_OUT = "frozen_scenarios.jsonl"


def frame_items(s: dict) -> list[dict]:
    """The two frame items of a scenario (framebench.items format). Pool scenarios: conflicts ""."""
    conflicts = "|".join(s["conflicts"]) if s["status"] == "selected" else ""
    return [{
        "item_id": f"{s['scenario_id']}:{f}", "context_id": s["scenario_id"], "suite": "omit",
        "task": "omit", "format": "binary", "bias": "neutral", "level": "", "form": "", "phrasing": "",
        "option": "", "distractor": "", "slot": "", "gold": "", "text": s[f"{f}_frame"],
        "question": s[f"{f}_question"], "options": [], "frame": f, "conflicts": conflicts,
    } for f in FRAMES]


def persona_rows(s: dict, run_id: str = PERSONA_RUN) -> list[dict]:
    conflicts = "|".join(s["conflicts"]) if s["status"] == "selected" else ""
    return [make_row(
        run_id=run_id, model=f"persona:{p}", suite="omit", task="omit", format="binary",
        context_id=s["scenario_id"], item_id=f"{s['scenario_id']}:{f}@M0", bias="neutral",
        answer=s["personas"][p][f]["answer"], parse=s["personas"][p][f]["parse"], correct=False,
        output=s["personas"][p][f]["output"], frame=f, condition="M0", conflicts=conflicts,
    ) for p in PERSONAS for f in FRAMES]


def write_outputs(framed: list[dict], funnel: list[dict], out: Path, *, model: str,
                  fingerprint: str) -> dict:
    started = now_iso()
    items = [it for s in framed for it in frame_items(s)]
    items_path = write_items(items, out / "items.jsonl")
    dataset_hash = file_sha256(items_path)
    decoding = {"max_new_tokens": None, "temperature": 0.0, "stop": []}
    run_id = run_id_for(PERSONA_RUN, [fingerprint, dataset_hash, decoding])
    write_run(out / PERSONA_RUN, [r for s in framed for r in persona_rows(s, run_id)], [], RunJson(
        run_id=run_id, model=model, model_fingerprint=fingerprint, decoding=decoding,
        dataset_hash=dataset_hash, started=started, producer="omit-personas",
        extra={"personas": list(PERSONAS)}, code_version=_made_by(model)))
    keep = ("scenario_id", "status", "conflicts", "strength", "patterns", "context", "act",
            "inaction_text", "action_frame", "action_question", "omission_frame", "omission_question",
            "outcome_if_act", "outcome_if_not", "rule", "harms1", "harms2", "inaction", "inaction_tier")
    write_text_atomic("".join(json.dumps({k: s[k] for k in keep if k in s}, ensure_ascii=False,
                                         sort_keys=True) + "\n" for s in framed), out / SCENARIOS_OUT)
    selected = [s for s in framed if s["status"] == "selected"]
    order = list(PERSONAS)
    dist = Counter(lab for s in selected for lab in s["conflicts"])
    conflicts = [{"conflict": lab, "scenarios": n} for lab, n in
                 sorted(dist.items(), key=lambda kv: (-kv[1], [order.index(p) for p in kv[0].split("-")]))]
    return {
        "funnel": funnel,
        "conflicts": conflicts,
        "selected": len(selected),
        "pool": len(framed) - len(selected),
        "items": len(items),
        "strength": dict(sorted(Counter(s["strength"] for s in selected).items())),
        "model": model,
    }


def _made_by(model: str) -> str:
    """run.json code_version of the persona records: authored answers were made by hand, not by
    this checkout's code (whose git state at build time says nothing about them)."""
    if model != "authored":
        return ""
    from framebench import __version__

    return f"authored (hand-written persona answers in scenarios.jsonl; copied by framebench {__version__})"


def write_report(report: dict, out: Path) -> None:
    write_json_atomic(report, out / REPORT_JSON)
    write_text_atomic(report_markdown(report), out / REPORT_MD)


def report_markdown(report: dict) -> str:
    lines = ["# OMIT build report", "", f"Model: `{report['model']}`", "",
             "## Construction funnel (OMIT Table 5)", "", "| Stage | # scenarios |", "|---|---:|"]
    for row in report["funnel"]:
        notes = []
        if row.get("detail"):
            notes.append(" + ".join(f"{k} {v}" for k, v in row["detail"].items()))
        if row["dropped"]:
            notes.append("; ".join(f"{k} {v}" for k, v in row["dropped"].items()) + " dropped")
        label = row["label"] + (f" ({' / '.join(notes)})" if notes else "")
        lines.append(f"| {label} | {row['count']} |")
    lines += ["", f"Frozen items: {report['items']} ({report['selected']} conflict-labeled scenarios "
              f"and {report['pool']} pool scenarios, two frames each).", "",
              "## Conflict distribution (OMIT Table 6)", "", "| Conflict pair | # scenarios |", "|---|---:|"]
    lines += [f"| {c['conflict']} | {c['scenarios']} |" for c in report["conflicts"]]
    lines += ["", "## Calls per stage (OMIT Table 7)", "",
              "| Stage | Calls | New calls this run | Avg. input / output tokens (approx.) |",
              "|---|---:|---:|---|"]
    for stage, c in report.get("calls", {}).items():
        lines.append(f"| {stage} | {c['calls']} | {c['new_calls']} | "
                     f"~{c['avg_input_tokens']} / ~{c['avg_output_tokens']} |")
    lines.append(f"| total | {report.get('calls_total', 0)} | {report.get('new_calls_total', 0)} | |")
    return "\n".join(lines) + "\n"
