"""The paper's answer-sheet construction (§3) for anyone's contexts: a model drafts the rationales,
a person accepts, rejects or edits each draft, and only reviewed premises reach the items.

``draft`` reads a contexts file (JSONL: ``context_id``, ``task``, ``text``, ``gold``, three ranked
``distractors``) and writes a review file, one JSON line per premise slot:

    {"contexts_sha": ..., "context_id": ..., "slot": "premise" | "rephrasing" | "evidence",
     "option": ..., "attempt": 1, "draft": "...", "flags": [...], "model": ...,
     "decision": null, "edited": null}

Slots per context: a premise toward each option (gold and distractors), two rephrasings of the gold
premise (drafted from the gold premise as it stands: edited, else drafted), and one further evidence
premise per distractor (other facts than that distractor's premise). A person sets ``decision`` to
``accept``, ``reject`` or ``edit`` (with ``edited``: the text to use). Drafting again fills the slots
that have no draft or whose drafts were all rejected (a new attempt, told what was rejected).

``blind`` reads every reviewed premise blind (``framingqa.blind``): a reader that did not write it
sees the context, the options shuffled and the premise, and names an option or "none"; the answer is
stored beside the premise as ``"blind": {"premise", "read_as", "reader"}``. The reader is an engine
(``--reader SPEC``) or a person (``--packet FILE`` writes the label-free lines, ``--answers FILE``
stores them back).

``accept`` turns the reviewed file into a prepared source folder (``contexts.jsonl`` and
``answer_sheets.jsonl``) for ``framebench build framingqa --source DIR``: a context whose premise
slots are not all accepted or edited, or one of whose premises has no blind reading or is read as
another option without an ``"override"`` (the reviewer's reason), is left out and reported. A review
file drafted from other contexts is refused.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.jsonl import iter_jsonl, read_jsonl
from framebench.schema import check_fields
from framebench.text_eval.framingqa.answer_sheets import (
    AnswerSheet,
    check_sheet,
    numbered,
    write_sheets,
)
from framebench.text_eval.framingqa.blind import (
    NONE,
    BlindReading,
    disagreements,
    parse_reading,
    reading_prompt,
    shuffled,
)
from framebench.text_eval.framingqa.check import PREMISE_WORDS, content_stems, premises_of, words
from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domains

DECISIONS = ("accept", "reject", "edit")
QUOTE_WORDS = 8  # a draft that copies this many consecutive words of the context quotes more than a clause
MAX_DRAFT_WORDS = 80
SYSTEM = ("You write one rationale for a benchmark about framing. A rationale is a noun phrase of 12 to 40 "
          "words that foregrounds facts the text states and reads them toward a given conclusion, for "
          "example: \"the shop refusing to honour the written warranty on a fridge I bought\". Never name "
          "the conclusion, never invent a fact, never quote a whole sentence. Reply with the noun phrase "
          "only, on one line, without a final full stop.")


@dataclass(frozen=True)
class DraftContext:
    """One line of a contexts file."""

    context_id: str
    task: str
    text: str
    gold: str
    distractors: list[str]

    @property
    def options(self) -> list[str]:
        return [self.gold, *self.distractors]


@dataclass
class Draft:
    """One line of a review file."""

    contexts_sha: str
    context_id: str
    slot: str  # premise | rephrasing | evidence
    option: str
    attempt: int
    draft: str
    flags: list[str] = field(default_factory=list)
    model: str = ""
    decision: str | None = None
    edited: str | None = None
    number: int = 1  # rephrasing 1 or 2; 1 otherwise
    blind: dict[str, str] | None = None  # {"premise", "read_as", "reader"}: ``sheets blind``
    override: str | None = None  # the reviewer's reason to keep a premise read blind as another option

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.context_id, self.slot, self.option, self.number

    @property
    def text(self) -> str:
        """The premise this draft contributes once reviewed."""
        return (self.edited or "").strip() if self.decision == "edit" else self.draft

    @property
    def reviewed(self) -> bool:
        return self.decision in ("accept", "edit")

    @property
    def reading(self) -> BlindReading | None:
        """The blind reading of the text as it stands (a reading of an earlier text does not count)."""
        if not self.blind or self.blind.get("premise") != self.text:
            return None
        return BlindReading(self.text, self.blind["read_as"], self.blind["reader"], self.override or "")

    def pointing_to(self, gold: str) -> str:
        """The option this premise is written to argue for."""
        return gold if self.slot == "rephrasing" else self.option


CONTEXT_FIELDS: dict[str, Any] = {"context_id": str, "task": str, "text": str, "gold": str, "distractors": list[str]}
DRAFT_FIELDS: dict[str, Any] = {"contexts_sha": str, "context_id": str, "slot": str, "option": str, "attempt": int,
                                "draft": str, "flags": list[str], "model": str, "number": int}


def read_contexts(path: Path) -> tuple[list[DraftContext], str]:
    """The contexts of a contexts file, and the file's fingerprint (what a review file was drafted from)."""
    contexts: list[DraftContext] = []
    seen: set[str] = set()
    for n, data in read_jsonl(path, "context"):
        where = f"{path}: line {n}"
        check_fields(data, CONTEXT_FIELDS, f"{where}: context", allow_extra=True)
        ctx = DraftContext(**{k: data[k] for k in CONTEXT_FIELDS})
        if not ctx.context_id.strip() or ctx.context_id in seen:
            raise UserError(f"{where}: field 'context_id' is empty or repeats an earlier line")
        if not ctx.text.strip():
            raise UserError(f"{where}: field 'text' is empty")
        options = [o.strip() for o in ctx.options]
        if len(ctx.distractors) != 3 or len(set(options)) != 4 or not all(options):
            raise UserError(f"{where}: field 'distractors' must hold three distinct options, none the gold")
        seen.add(ctx.context_id)
        contexts.append(ctx)
    if not contexts:
        raise UserError(f"{path}: holds no contexts (an empty file)")
    blob = json.dumps([asdict(c) for c in contexts], ensure_ascii=False, sort_keys=True)
    return contexts, hashlib.sha256(blob.encode()).hexdigest()[:16]


def read_review(path: Path) -> list[Draft]:
    if not path.exists():
        return []
    drafts: list[Draft] = []
    for n, data in iter_jsonl(path, "draft"):
        where = f"{path}: line {n}"
        check_fields(data, DRAFT_FIELDS, f"{where}: draft", allow_extra=True)
        extra = sorted(set(data) - set(DRAFT_FIELDS) - {"decision", "edited", "blind", "override"})
        if extra:
            raise UserError(f"{where}: draft: unknown field '{extra[0]}'")
        decision, edited = data.get("decision"), data.get("edited")
        if decision is not None and decision not in DECISIONS:
            raise UserError(f"{where}: field 'decision' is {decision!r} (accept, reject, edit or null)")
        if decision == "edit" and not (isinstance(edited, str) and edited.strip()):
            raise UserError(f"{where}: field 'edited' must hold the premise to use when 'decision' is \"edit\"")
        if edited is not None and not isinstance(edited, str):
            raise UserError(f"{where}: field 'edited' must be a string or null")
        blind, override = data.get("blind"), data.get("override")
        if blind is not None:
            check_fields(blind, {"premise": str, "read_as": str, "reader": str}, f"{where}: field 'blind'")
        if override is not None and not isinstance(override, str):
            raise UserError(f"{where}: field 'override' must be a string (the reason) or null")
        drafts.append(Draft(**{k: data[k] for k in DRAFT_FIELDS}, decision=decision, edited=edited,
                            blind=blind, override=override))
    return drafts


def write_review(drafts: list[Draft], path: Path) -> None:
    from framebench.files import write_text_atomic
    write_text_atomic("".join(json.dumps(asdict(d), ensure_ascii=False) + "\n" for d in drafts), path)


def flags(draft: str, ctx: DraftContext, option: str) -> list[str]:
    """What a reviewer should look at: the option named, a copied clause, the length, no grounding."""
    out = []
    n = len(draft.split())
    low, high = PREMISE_WORDS
    if not draft:
        out.append("empty or unparsable")
    elif not low <= n <= high:
        out.append(f"{n} words (allowed {low}-{high})")
    if re.search(rf"\b{re.escape(option.lower())}\b", draft.lower()):
        out.append("names its option")
    copied = longest_copied_run(draft, ctx.text)
    if copied >= QUOTE_WORDS:
        out.append(f"copies {copied} consecutive words of the context")
    if draft and len(content_stems(draft) & content_stems(ctx.text)) < 2:
        out.append("shares under two content words with the context")
    return out


def longest_copied_run(draft: str, text: str) -> int:
    source = " " + " ".join(words(text)) + " "
    tokens = words(draft)
    best = 0
    for i in range(len(tokens)):
        k = best + 1
        while i + k <= len(tokens) and f" {' '.join(tokens[i:i + k])} " in source:
            best = k
            k += 1
    return best


def parse_draft(output: str) -> str:
    """The first non-empty line of a model reply, without quotes, a label or a final full stop ("" if none)."""
    for line in str(output).splitlines():
        line = line.strip().strip("\"'`").strip()
        line = re.sub(r"^(rationale|premise|answer)\s*:\s*", "", line, flags=re.I).rstrip(".").strip()
        if line:
            return line if len(line.split()) <= MAX_DRAFT_WORDS else ""
    return ""


def _phrase(task: str, option: str) -> str:
    dom = domains().get(task)
    return dom.phrase(option) if dom else option


def _chat(ctx: DraftContext, slot: str, option: str, basis: str, rejected: list[str]) -> list[dict[str, str]]:
    ask = {"premise": "Write the rationale.",
           "rephrasing": f"Say the same as this rationale in different words: \"{basis}\"",
           "evidence": f"Write a rationale that foregrounds OTHER facts of the text than this one: \"{basis}\""}[slot]
    avoid = "".join(f"\nA reviewer rejected: \"{r}\"" for r in rejected)
    user = f"Text:\n{ctx.text}\n\nConclusion: this is {_phrase(ctx.task, option)}.\n{ask}{avoid}\nRationale:"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def draft(contexts_file: Path, review: Path, backend: Any, batch_size: int = 16,
          on_progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Draft every open slot (two passes: premises, then rephrasings and evidence); resumable."""
    from framebench.backends.base import Decoding

    contexts, sha = read_contexts(contexts_file)
    drafts = read_review(review)
    foreign = next((d for d in drafts if d.contexts_sha != sha), None)
    if foreign is not None:
        raise UserError(f"{review}: drafted from other contexts (contexts_sha {foreign.contexts_sha}, "
                        f"{contexts_file} has {sha}); use a new review file")
    decoding = Decoding(max_new_tokens=96, temperature=0.0)
    added = 0
    for stage in ("premise", "rest"):
        todo = [(ctx, slot, option, number) for ctx in contexts for slot, option, number in _slots(ctx, stage)
                if _open(drafts, (ctx.context_id, slot, option, number))]
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            chats = [_chat(ctx, slot, option, _basis(drafts, ctx, slot, option), _rejected(drafts, (ctx.context_id, slot, option, number)))
                     for ctx, slot, option, number in batch]
            for (ctx, slot, option, number), output in zip(batch, backend.generate(chats, decoding), strict=True):
                text = parse_draft(output)
                attempt = 1 + sum(1 for d in drafts if d.key == (ctx.context_id, slot, option, number))
                drafts.append(Draft(sha, ctx.context_id, slot, option, attempt, text,
                                    flags(text, ctx, ctx.gold if slot == "rephrasing" else option),
                                    backend.spec, number=number))
            added += len(batch)
            write_review(drafts, review)  # after every batch: an interrupted draft resumes
            if on_progress:
                on_progress(len(batch))
    write_review(drafts, review)
    return {"drafted": added, "pending": sum(1 for d in drafts if d.decision is None),
            "flagged": sum(1 for d in drafts if d.flags and d.decision is None)}


def _slots(ctx: DraftContext, stage: str) -> list[tuple[str, str, int]]:
    if stage == "premise":
        return [("premise", option, 1) for option in ctx.options]
    return [("rephrasing", ctx.gold, 1), ("rephrasing", ctx.gold, 2)] + [("evidence", d, 1) for d in ctx.distractors]


def _open(drafts: list[Draft], key: tuple[str, str, str, int]) -> bool:
    """A slot with no draft, or whose drafts were all rejected."""
    mine = [d for d in drafts if d.key == key]
    return not mine or all(d.decision == "reject" for d in mine)


def _rejected(drafts: list[Draft], key: tuple[str, str, str, int]) -> list[str]:
    return [d.draft for d in drafts if d.key == key and d.decision == "reject" and d.draft]


def _basis(drafts: list[Draft], ctx: DraftContext, slot: str, option: str) -> str:
    """What a rephrasing restates (the gold premise) or an evidence premise differs from (the
    distractor's premise): the reviewed text where there is one, else the latest draft."""
    if slot == "premise":
        return ""
    mine = [d for d in drafts if d.key == (ctx.context_id, "premise", option, 1) and d.decision != "reject"]
    reviewed = [d for d in mine if d.decision in ("accept", "edit")]
    chosen = (reviewed or mine)[-1:]
    return chosen[0].text if chosen else ""


def accept(review: Path, contexts_file: Path, out: Path, reviewer: str) -> tuple[int, list[str]]:
    """Write OUT/contexts.jsonl and OUT/answer_sheets.jsonl from the reviewed drafts; returns the
    number of contexts written and one line per context left out."""
    from framebench.files import write_text_atomic
    contexts, drafts = _reviewed_drafts(review, contexts_file)
    today = datetime.date.today().isoformat()
    kept: list[tuple[DraftContext, AnswerSheet]] = []
    left_out: list[str] = []
    for ctx in contexts:
        sheet, missing = _sheet(ctx, drafts, {"drafted_by": _models(drafts, ctx), "reviewed_by": reviewer,
                                               "date": today, "review_file": review.name})
        if sheet is None:
            left_out.append(f"{ctx.context_id}: {'; '.join(missing)}")
        else:
            check_sheet(sheet, str(review))
            kept.append((ctx, sheet))
    if not kept:
        more = f" (and {len(left_out) - 1} more contexts)" if len(left_out) > 1 else ""
        raise UserError(f"{review}: no context can be accepted: {left_out[0]}{more}")
    out.mkdir(parents=True, exist_ok=True)
    rows = [Context(c.context_id, c.task, c.text, c.gold, _options(c), {"source": str(contexts_file)}).to_json()
            for c, _ in kept]
    write_text_atomic("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows),
                      out / "contexts.jsonl")
    write_sheets([s for _, s in kept], out / "answer_sheets.jsonl")
    return len(kept), left_out


def _options(ctx: DraftContext) -> list[str]:
    dom = domains().get(ctx.task)
    return list(dom.labels) if dom and dom.labels else ctx.options


def _models(drafts: list[Draft], ctx: DraftContext) -> str:
    return ", ".join(sorted({d.model for d in drafts if d.context_id == ctx.context_id}))


def _sheet(ctx: DraftContext, drafts: list[Draft], provenance: dict[str, str]) -> tuple[AnswerSheet | None, list[str]]:
    def reviewed(slot: str, option: str, number: int = 1) -> str | None:
        ok = [d for d in drafts if d.key == (ctx.context_id, slot, option, number) and d.decision in ("accept", "edit")]
        return ok[-1].text if ok else None

    premises = {o: reviewed("premise", o) for o in ctx.options}
    rephrasings = [reviewed("rephrasing", ctx.gold, 1), reviewed("rephrasing", ctx.gold, 2)]
    missing = [f"no accepted premise toward {o!r}" for o, p in premises.items() if p is None]
    missing += [f"no accepted rephrasing {i}" for i, p in enumerate(rephrasings, 1) if p is None]
    if missing:
        return None, missing
    evidence = [{"distractor": d, "premise": text} for d in ctx.distractors
                if (text := reviewed("evidence", d)) is not None]
    missing = [f"the evidence premise toward {d!r}" for d in ctx.distractors if reviewed("evidence", d) is None]
    if missing:
        return None, missing
    used = [d for d in drafts if d.context_id == ctx.context_id and d.reviewed]
    readings = [r for d in used if (r := d.reading) is not None]
    sheet = AnswerSheet(ctx.context_id, ctx.task, ctx.gold, list(ctx.distractors),
                        {o: str(p) for o, p in premises.items()}, [str(p) for p in rephrasings],
                        numbered(evidence), provenance, blind_readings=readings)
    unread, wrong = disagreements(premises_of(sheet), readings)
    if unread or wrong:
        return None, [f"no blind reading of {slot} (run framebench sheets blind)" for slot in unread] + [
            f"{slot}: set \"override\" with a reason to keep it" for slot in wrong]
    return sheet, []


# ---------------------------------------------------------------- the blind reading


def _reviewed_drafts(review: Path, contexts_file: Path) -> tuple[list[DraftContext], list[Draft]]:
    contexts, sha = read_contexts(contexts_file)
    if not review.is_file():
        raise UserError(f"{review}: no such review file")
    drafts = read_review(review)
    foreign = next((d for d in drafts if d.contexts_sha != sha), None)
    if foreign is not None:
        raise UserError(f"{review}: drafted from other contexts (contexts_sha {foreign.contexts_sha}, "
                        f"{contexts_file} has {sha})")
    return contexts, drafts


def _unread(contexts: list[DraftContext], drafts: list[Draft]) -> list[tuple[DraftContext, Draft]]:
    """The reviewed premises that have no blind reading of their current text."""
    by_id = {c.context_id: c for c in contexts}
    return [(by_id[d.context_id], d) for d in drafts
            if d.reviewed and d.context_id in by_id and d.reading is None]


def reading_id(context_id: str, premise: str) -> str:
    return hashlib.sha256(f"{context_id}\x1f{premise}".encode()).hexdigest()[:12]


def blind_read(review: Path, contexts_file: Path, reader: Any, batch_size: int = 16,
               on_progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Let an engine read every reviewed premise blind (context, shuffled options, premise; never its
    label) and store its answer beside the premise; resumable."""
    from framebench.backends.base import Decoding

    contexts, drafts = _reviewed_drafts(review, contexts_file)
    todo = _unread(contexts, drafts)
    decoding = Decoding(max_new_tokens=4, temperature=0.0)
    for start in range(0, len(todo), batch_size):
        batch = todo[start:start + batch_size]
        chats = [[{"role": "user", "content": reading_prompt(c.text, c.options, d.text)}] for c, d in batch]
        for (ctx, d), reply in zip(batch, reader.generate(chats, decoding), strict=True):
            d.blind = {"premise": d.text, "read_as": parse_reading(reply, ctx.options, d.text), "reader": reader.spec}
        write_review(drafts, review)
        if on_progress:
            on_progress(len(batch))
    return _tally(contexts, drafts, len(todo))


def write_packet(review: Path, contexts_file: Path, packet: Path) -> int:
    """A label-free file for a person who reads blind: one line per unread premise with the context,
    the shuffled options and the premise; the answers come back with ``read_answers``."""
    from framebench.files import write_text_atomic

    contexts, drafts = _reviewed_drafts(review, contexts_file)
    rows = [{"id": reading_id(c.context_id, d.text), "context": c.text, "options": shuffled(c.options, d.text),
             "premise": d.text, "read_as": None} for c, d in _unread(contexts, drafts)]
    write_text_atomic("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), packet)
    return len(rows)


def read_answers(review: Path, contexts_file: Path, answers: Path, reader: str) -> dict[str, int]:
    """A person's blind readings (a packet with ``read_as`` filled in) stored beside the premises."""
    contexts, drafts = _reviewed_drafts(review, contexts_file)
    todo = {reading_id(c.context_id, d.text): (c, d) for c, d in _unread(contexts, drafts)}
    stored = 0
    for n, data in read_jsonl(answers, "blind reading"):
        where = f"{answers}: line {n}"
        check_fields(data, {"id": str, "read_as": str}, where, allow_extra=True)
        if data["id"] not in todo:
            continue  # read already, or a premise edited since the packet was written
        ctx, d = todo[data["id"]]
        if data["read_as"] not in (*ctx.options, NONE):
            raise UserError(f"{where}: field 'read_as' is {data['read_as']!r} (one of its options, or {NONE!r})")
        d.blind = {"premise": d.text, "read_as": data["read_as"], "reader": reader}
        stored += 1
    write_review(drafts, review)
    return _tally(contexts, drafts, stored)


def _tally(contexts: list[DraftContext], drafts: list[Draft], read: int) -> dict[str, int]:
    gold = {c.context_id: c.gold for c in contexts}
    readings = [(d, d.reading) for d in drafts if d.reviewed and d.context_id in gold]
    return {"read": read,
            "agree": sum(1 for d, r in readings if r and r.read_as == d.pointing_to(gold[d.context_id])),
            "disagree": sum(1 for d, r in readings if r and not r.agrees(d.pointing_to(gold[d.context_id]))),
            "unread": sum(1 for _, r in readings if r is None)}
