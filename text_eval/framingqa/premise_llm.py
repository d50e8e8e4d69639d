"""LLM-backed premise generator with human review (§3.5: the model writes candidate phrasings, a
person accepts or rejects them; the model never decides gold labels or evidence).

``propose`` asks a backend, for every premise slot of an answer sheet (<A>, <A>*, <A>**, <d> per
distractor, one per evidence set), for a candidate premise grounded in that slot's evidence, and
writes the candidates to a review JSONL (one per line, ``accepted: null``). It is resumable:
candidates already in the file are kept. ``apply_review`` rebuilds the sheets from accepted
candidates only; a context with any slot lacking an accepted candidate is left out (reported).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, Evidence
from framebench.text_eval.framingqa.contexts import Context, Dropped
from framebench.text_eval.framingqa.expansion import option_phrase

from framebench.backends.base import Chat, Decoding
from framebench.errors import UserError
from framebench.jsonl import iter_jsonl

DECODING = Decoding(max_new_tokens=80, temperature=0.0)
BATCH = 16
MAX_PREMISE_WORDS = 50
SYSTEM = ("You write short premises for a benchmark about framing. A premise is a noun phrase that "
          "starts with 'the' and cites a detail of the text as grounds for a conclusion. Reply with "
          "the premise only, on one line.")


def slots(sheet: AnswerSheet, ctx: Context) -> list[tuple[str, str, str]]:
    """(role, option, evidence text) for every premise slot of a sheet."""
    gold_evidence = _evidence_hint(sheet.premises[sheet.gold])
    out = [("gold", sheet.gold, gold_evidence), ("gold*", sheet.gold, gold_evidence),
           ("gold**", sheet.gold, gold_evidence)]
    out += [(f"option:{d}", d, _evidence_hint(sheet.premises[d])) for d in sheet.distractors]
    out += [(f"evidence:{e.evidence_id}", e.distractor, " ".join(e.sentences) or _evidence_hint(e.premise))
            for e in sheet.evidence]
    return out


def _evidence_hint(premise: str) -> str:
    quoted = re.findall(r'"([^"]+)"', premise)
    return quoted[0] if quoted else premise


def _chat(ctx: Context, role: str, option: str, evidence: str) -> Chat:
    style = {"gold*": " Word it differently from a plain 'the statement ...' phrasing.",
             "gold**": " Use a third, different wording."}.get(role, "")
    user = (f"Text:\n{ctx.text}\n\nConclusion: this is {option_phrase(ctx.task, option)}.\n"
            f"Detail to cite: \"{evidence}\"\n\nWrite one premise (at most 30 words) that cites this "
            f"detail as grounds for the conclusion. It will be used as 'Is this X, based on <premise>?'."
            f"{style}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_candidate(output: str) -> str | None:
    """First non-empty line, stripped of quotes and a final full stop; None if unusable."""
    for line in str(output).splitlines():
        line = line.strip().strip('"\'`').strip()
        line = re.sub(r"^(premise|answer)\s*:\s*", "", line, flags=re.I).rstrip(".").strip()
        if line:
            return line if len(line.split()) <= MAX_PREMISE_WORDS else None
    return None


def read_review(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows: list[dict[str, Any]] = []
    for n, row in iter_jsonl(path, "review line"):
        for name in ("candidate_id", "context_id", "role", "premise"):
            if not isinstance(row.get(name), str) or not row[name]:
                raise UserError(f"{path}: line {n}: field '{name}' must be a non-empty string")
        if row.get("accepted") not in (True, False, None):
            raise UserError(f"{path}: line {n}: field 'accepted' must be true, false or null")
        rows.append(row)
    return rows


def propose(contexts: list[Context], sheets: list[AnswerSheet], backend: Any, review: Path,
            progress: bool = True) -> int:
    """Write candidates for every slot not yet in the review file; returns how many were added."""
    from rich.progress import Progress

    from framebench.runinfo import write_text_atomic

    existing = read_review(review)
    have = {r["candidate_id"] for r in existing}
    by_id = {c.context_id: c for c in contexts}
    todo: list[tuple[dict[str, Any], Chat]] = []
    for sheet in sheets:
        ctx = by_id[sheet.context_id]
        for role, option, evidence in slots(sheet, ctx):
            cid = f"{sheet.context_id}:{role}"
            if cid not in have:
                row = {"candidate_id": cid, "context_id": sheet.context_id, "task": sheet.task, "role": role,
                       "option": option, "evidence": evidence}
                todo.append((row, _chat(ctx, role, option, evidence)))
    added: list[dict[str, Any]] = []
    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("premise candidates", total=len(todo))
        for start in range(0, len(todo), BATCH):
            batch = todo[start:start + BATCH]
            outputs = backend.generate([chat for _, chat in batch], DECODING)
            for (row, _), output in zip(batch, outputs, strict=True):
                text = parse_candidate(output)
                if text is not None:
                    added.append({**row, "premise": text, "model": backend.spec,
                                  "fingerprint": backend.fingerprint(), "accepted": None})
            bar.advance(task, len(batch))
            if added:  # checkpoint after every batch so an interrupted run resumes
                write_text_atomic("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                          for r in existing + added), review)
    return len(added)


def _getter(accepted: dict[tuple[str, str], str], context_id: str):
    return lambda role: accepted[(context_id, role)]


def apply_review(sheets: list[AnswerSheet], review: Path) -> tuple[list[AnswerSheet], list[Dropped], list[str]]:
    rows = read_review(review)
    accepted: dict[tuple[str, str], str] = {}
    for row in rows:
        if row["accepted"] is True:
            accepted.setdefault((row["context_id"], row["role"]), row["premise"])
    pending = sum(1 for r in rows if r["accepted"] is None)
    kept: list[AnswerSheet] = []
    dropped: list[Dropped] = []
    for sheet in sheets:
        roles = ["gold", "gold*", "gold**", *[f"option:{d}" for d in sheet.distractors],
                 *[f"evidence:{e.evidence_id}" for e in sheet.evidence]]
        missing = [r for r in roles if (sheet.context_id, r) not in accepted]
        if missing:
            dropped.append(Dropped(sheet.task, f"{review.name} context {sheet.context_id}",
                                   f"no accepted premise for {len(missing)} of {len(roles)} slots "
                                   f"(first: {missing[0]})"))
            continue
        get = _getter(accepted, sheet.context_id)
        kept.append(replace(
            sheet, generator="llm",
            premises={sheet.gold: get("gold"), **{d: get(f"option:{d}") for d in sheet.distractors}},
            gold_rephrasings=[get("gold*"), get("gold**")],
            evidence=[Evidence(e.evidence_id, e.distractor, e.sentences, get(f"evidence:{e.evidence_id}"))
                      for e in sheet.evidence]))
    notes = [f"llm generator: {len(rows)} candidates in {review}, {pending} awaiting review; "
             f"{len(kept)} of {len(sheets)} contexts have every premise accepted"]
    return kept, dropped, notes
