"""The OMIT construction pipeline: MoralChoice seed -> inaction -> mirror frames -> persona panel
-> filters/labels -> frozen dataset. Every model call goes through the result store (resumable)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from framebench.backends.base import Backend, Decoding
from framebench.errors import UserError
from framebench.files import write_text_atomic
from framebench.jsonl import read_jsonl
from framebench.store import ResultStore
from framebench.text_eval.omit import frames, inaction, select
from framebench.text_eval.omit.calls import CachedGenerator
from framebench.text_eval.omit.conditions import Condition, parse_omit_answer
from framebench.text_eval.omit.output import FRAMES, write_outputs
from framebench.text_eval.omit.personas import (
    PERSONA_MAX_NEW_TOKENS,
    PERSONAS,
    pattern,
    persona_chat,
)
from framebench.text_eval.omit.seed import load_seed, locate_seed

_PERSONA_PARSE = Condition(name="M0", instruction="", max_new_tokens=PERSONA_MAX_NEW_TOKENS,
                           final_answer_line=True)
AUTHORED_FILE = "scenarios.jsonl"


def _write_stage(out: Path, name: str, rows: list[dict]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    write_text_atomic(text, out / "stages" / f"{name}.jsonl")


def build_from_moralchoice(source: Path, backend: Backend, out: Path, batch_size: int = 16,
                           seed: list[dict] | None = None) -> dict:
    """Run all stages on the MoralChoice seed under ``source`` (or the already loaded ``seed`` rows);
    returns the build report."""
    seed = load_seed(locate_seed(source)) if seed is None else seed
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out / "store.sqlite") as store:
        gen = CachedGenerator(backend, store, batch_size=batch_size)
        funnel = [{"stage": "seed", "label": "MoralChoice high-ambiguity seed", "count": len(seed),
                   "dropped": {}}]
        _write_stage(out, "01_seed", seed)
        dropped: list[dict] = []

        # Stage 2: inaction labeling, rule tier then model fallback.
        labelled, n_rule, n_model = [], 0, 0
        need_model = []
        for s in seed:
            side = inaction.rule_label(s["action1"], s["action2"])
            if side:
                labelled.append({**s, "inaction": side, "inaction_tier": "rule"})
                n_rule += 1
            else:
                need_model.append(s)
        outs = gen.run("inaction", [(f"inaction:{s['scenario_id']}",
                                     inaction.fallback_chat(s["context"], s["action1"], s["action2"]))
                                    for s in need_model],
                       Decoding(max_new_tokens=inaction.MAX_NEW_TOKENS, temperature=0.0))
        for s in need_model:
            raw = outs[f"inaction:{s['scenario_id']}"]
            side = inaction.parse_fallback(raw)
            if side:
                labelled.append({**s, "inaction": side, "inaction_tier": "model", "inaction_raw": raw})
                n_model += 1
            else:
                dropped.append({"scenario_id": s["scenario_id"], "stage": "inaction",
                                "reason": "model fallback gave no A/B answer", "raw": raw})
        order = {s["scenario_id"]: i for i, s in enumerate(seed)}
        labelled.sort(key=lambda s: order[s["scenario_id"]])
        for s in labelled:
            act_side = "action2" if s["inaction"] == "action1" else "action1"
            s["act"], s["inaction_text"] = s[act_side], s[s["inaction"]]
        funnel.append({"stage": "inaction", "label": "Clean inaction labeling", "count": len(labelled),
                       "detail": {"rule": n_rule, "model fallback": n_model},
                       "dropped": _reasons(dropped, "inaction")})
        _write_stage(out, "02_inaction", labelled)

        # Stage 3: mirror-frame reconstruction.
        outs = gen.run("frames", [(f"frames:{s['scenario_id']}",
                                   frames.reconstruction_chat(s["context"], s["act"], s["inaction_text"]))
                                  for s in labelled],
                       Decoding(max_new_tokens=frames.MAX_NEW_TOKENS, temperature=0.0))
        framed = []
        for s in labelled:
            raw = outs[f"frames:{s['scenario_id']}"]
            fields = frames.parse_frames(raw)
            reason = frames.validate_frames(fields)
            if reason:
                dropped.append({"scenario_id": s["scenario_id"], "stage": "frames", "reason": reason,
                                "raw": raw})
            else:
                framed.append({**s, **_frame_fields(fields)})
        funnel.append({"stage": "frames", "label": "Well-formed mirror-frame pairs", "count": len(framed),
                       "dropped": _reasons(dropped, "frames")})
        _write_stage(out, "03_frames", framed)

        # Stage 4: persona panel, both frames, temperature 0.
        requests = [(f"persona:{p}:{s['scenario_id']}:{f}",
                     persona_chat(p, s[f"{f}_frame"], s[f"{f}_question"]))
                    for s in framed for p in PERSONAS for f in FRAMES]
        outs = gen.run("personas", requests,
                       Decoding(max_new_tokens=PERSONA_MAX_NEW_TOKENS, temperature=0.0))
        for s in framed:
            s["personas"] = {}
            for p in PERSONAS:
                s["personas"][p] = {}
                for f in FRAMES:
                    raw = outs[f"persona:{p}:{s['scenario_id']}:{f}"]
                    answer, parse = parse_omit_answer(raw, _PERSONA_PARSE)
                    s["personas"][p][f] = {"answer": answer, "parse": parse, "output": raw}
        _write_stage(out, "04_personas", framed)
        report = finish(framed, funnel, dropped, out, model=backend.spec,
                        fingerprint=gen.fingerprint)
    report["calls"] = {stage: st.as_dict() for stage, st in gen.stats.items()}
    report["calls_total"] = sum(st.calls for st in gen.stats.values())
    report["new_calls_total"] = sum(st.new_calls for st in gen.stats.values())
    from framebench.text_eval.omit.output import write_report

    write_report(report, out)
    return report


def build_from_authored(source: Path, out: Path) -> dict:
    """Build from project-authored frames with persona answers (``scenarios.jsonl``; the demo)."""
    path = source / AUTHORED_FILE
    scenarios = []
    seen: set[str] = set()
    for n, row in read_jsonl(path, "scenario"):
        scenarios.append(_check_authored(row, path, n, seen))
    if not scenarios:
        raise UserError(f"{path}: no scenarios")
    funnel = [{"stage": "seed", "label": "Project-authored scenarios", "count": len(scenarios),
               "dropped": {}}]
    dropped: list[dict] = []
    framed = []
    for s in scenarios:
        reason = frames.validate_frames({
            "ACTION_FRAME": s["action_frame"], "ACTION_QUESTION": s["action_question"],
            "OMISSION_FRAME": s["omission_frame"], "OMISSION_QUESTION": s["omission_question"],
            "OUTCOME_IF_ACT": s["outcome_if_act"], "OUTCOME_IF_NOT": s["outcome_if_not"]})
        if reason:
            dropped.append({"scenario_id": s["scenario_id"], "stage": "frames", "reason": reason})
        else:
            framed.append(s)
    funnel.append({"stage": "frames", "label": "Well-formed mirror-frame pairs", "count": len(framed),
                   "dropped": _reasons(dropped, "frames")})
    out.mkdir(parents=True, exist_ok=True)
    report = finish(framed, funnel, dropped, out, model="authored", fingerprint="authored")
    report["calls"], report["calls_total"], report["new_calls_total"] = {}, 0, 0
    from framebench.text_eval.omit.output import write_report

    write_report(report, out)
    return report


def finish(framed: list[dict], funnel: list[dict], dropped: list[dict], out: Path, *, model: str,
           fingerprint: str) -> dict:
    """Stages 4b-6 shared by both sources: persona completeness, filters, labels, outputs."""
    complete = []
    for s in framed:
        s["patterns"] = {}
        bad = [f"{p}/{f}" for p in PERSONAS for f in FRAMES if s["personas"][p][f]["parse"] != "ok"]
        if bad:
            dropped.append({"scenario_id": s["scenario_id"], "stage": "personas",
                            "reason": "persona answer not parsed: " + ", ".join(bad)})
            s["status"], s["conflicts"], s["strength"] = "pool", [], 0
            continue
        s["patterns"] = {p: pattern(s["personas"][p]["action"]["answer"],
                                    s["personas"][p]["omission"]["answer"]) for p in PERSONAS}
        complete.append(s)
    funnel.append({"stage": "personas", "label": "Complete persona answers (both frames)",
                   "count": len(complete), "dropped": _reasons(dropped, "personas", coarse=True)})
    after_unanimity, selected = [], []
    for s in complete:
        reason, labels = select.classify(s["patterns"])
        s["conflicts"], s["strength"] = labels, select.disagreement_strength(s["patterns"])
        s["status"] = "selected" if reason is None else "pool"
        if reason == select.UNANIMOUS:
            dropped.append({"scenario_id": s["scenario_id"], "stage": "non_unanimity", "reason": reason})
            continue
        after_unanimity.append(s)
        if reason is None:
            selected.append(s)
        else:
            dropped.append({"scenario_id": s["scenario_id"], "stage": "conflict", "reason": reason})
    funnel.append({"stage": "non_unanimity", "label": "After Stage-1 non-unanimity filter",
                   "count": len(after_unanimity), "dropped": _reasons(dropped, "non_unanimity")})
    funnel.append({"stage": "conflict", "label": "Stage-2 conflict-labeled scenarios",
                   "count": len(selected), "dropped": _reasons(dropped, "conflict")})
    check_funnel(funnel)
    _write_stage(out, "05_selection", [
        {"scenario_id": s["scenario_id"], "status": s["status"], "patterns": s["patterns"],
         "conflicts": s["conflicts"], "strength": s["strength"]} for s in framed])
    _write_stage(out, "dropped", dropped)
    return write_outputs(framed, funnel, out, model=model, fingerprint=fingerprint)


def check_funnel(funnel: list[dict]) -> None:
    """Each stage's count is the previous count minus its drops (raises if not)."""
    for prev, cur in zip(funnel, funnel[1:], strict=False):
        if cur["count"] != prev["count"] - sum(cur["dropped"].values()):
            raise RuntimeError(f"funnel does not add up at stage {cur['stage']}: {prev['count']} - "
                               f"{sum(cur['dropped'].values())} != {cur['count']}")


def _reasons(dropped: list[dict], stage: str, coarse: bool = False) -> dict[str, int]:
    reasons = [d["reason"].split(":")[0] if coarse else d["reason"] for d in dropped if d["stage"] == stage]
    return dict(sorted(Counter(reasons).items()))


def _frame_fields(fields: dict[str, str]) -> dict[str, str]:
    return {
        "action_frame": fields["ACTION_FRAME"], "action_question": fields["ACTION_QUESTION"],
        "omission_frame": fields["OMISSION_FRAME"], "omission_question": fields["OMISSION_QUESTION"],
        "outcome_if_act": fields["OUTCOME_IF_ACT"], "outcome_if_not": fields["OUTCOME_IF_NOT"],
    }


_AUTHORED_TEXT = ("scenario_id", "context", "act", "inaction_text", "action_frame", "action_question",
                  "omission_frame", "omission_question", "outcome_if_act", "outcome_if_not")


def _check_authored(row: object, path: Path, n: int, seen: set[str]) -> dict:
    where = f"{path}: line {n}"
    if not isinstance(row, dict):
        raise UserError(f"{where}: a scenario must be a JSON object")
    sid = row.get("scenario_id", "?")
    for name in _AUTHORED_TEXT:
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise UserError(f"{where}: scenario {sid!r}: field '{name}' must be a non-empty string")
    if sid in seen:
        raise UserError(f"{where}: duplicate scenario_id {sid!r}")
    seen.add(sid)
    answers = row.get("personas")
    if not isinstance(answers, dict) or set(answers) != set(PERSONAS):
        raise UserError(f"{where}: scenario {sid!r}: field 'personas' must map each of "
                        f"{list(PERSONAS)} to [action answer, omission answer]")
    personas = {}
    for p in PERSONAS:
        pair = answers[p]
        if not (isinstance(pair, list) and len(pair) == 2 and all(a in ("Yes", "No") for a in pair)):
            raise UserError(f"{where}: scenario {sid!r}: field 'personas.{p}' must be two of Yes/No")
        personas[p] = {f: {"answer": a, "parse": "ok", "output": a} for f, a in zip(FRAMES, pair, strict=True)}
    return {**{k: row[k].strip() for k in _AUTHORED_TEXT}, "personas": personas}


def planned_calls(seed: list[dict]) -> list[dict]:
    """Before any model call (``build omit --dry-run``): per stage the model calls and their chats
    where known. Inaction: exactly the seed rows the rules cannot label. Frames: at most one per
    seed row (rows the model fallback fails to label drop out), chats drafted with each row's
    rule label, else its first action. Personas: at most ten per framed scenario (five personas,
    two frames), whose chats depend on the frames not yet written."""
    fallback, reconstruct = [], []
    for s in seed:
        side = inaction.rule_label(s["action1"], s["action2"])
        if not side:
            fallback.append(inaction.fallback_chat(s["context"], s["action1"], s["action2"]))
        side = side or "action1"
        act = s["action2"] if side == "action1" else s["action1"]
        reconstruct.append(frames.reconstruction_chat(s["context"], act, s[side]))
    return [
        {"stage": "inaction", "calls": len(fallback), "bound": "exactly", "chats": fallback,
         "max_new_tokens": inaction.MAX_NEW_TOKENS},
        {"stage": "frames", "calls": len(seed), "bound": "at most", "chats": reconstruct,
         "max_new_tokens": frames.MAX_NEW_TOKENS},
        {"stage": "personas", "calls": len(seed) * len(PERSONAS) * len(FRAMES), "bound": "at most", "chats": [],
         "max_new_tokens": PERSONA_MAX_NEW_TOKENS},
    ]
