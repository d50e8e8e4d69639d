"""The Table 7 expansion of the FramingQA paper: one context + answer sheet -> 54+2E binary and
28+E MC items.

Binary (F = plain/negated):
  correct   root / propositional / global: 3 phrasings x 2 forms each                = 18
  incorrect root and global: 3 phrasings x 2 forms x 3 distractors, each             = 36
  incorrect propositional: 2 forms x E evidence sets (question names the gold,
            the premise points to the evidence's distractor)                          = 2E
MC (plain only): neutral 1; correct 3+3+3; incorrect root 9, propositional E, global 9 = 28+E.
MC options are in the context's fixed A-D order (``answer_sheets.mc_layout``).

Binary gold: Yes when the named option is the gold, flipped under negation. MC options keep the
context's A-D order and gold letter. ``question`` is the framing + question only: the
prompt renderer adds the lettered options and the answer instruction.
"""

from __future__ import annotations

from typing import Any

from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, mc_layout
from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domain
from framebench.vocabulary import FORMS, PHRASINGS

ROOT = {
    "plain": ("Is this {x}?", "This is {x}, correct?", "This is {x}, right?"),
    "negated": ("This is not {x}, correct?", "This isn't {x}, correct?", "This is not {x}, right?"),
}
PROPOSITIONAL = {
    "plain": "Is this {x} based on {premise}?",
    "negated": "This is not {x}, based on {premise}, correct?",
}
GLOBAL = {
    "plain": ("Given {premise}, is this {x}?", "Given {premise}, this is {x}, correct?",
              "Given {premise}, this is {x}, right?"),
    "negated": ("Given {premise}, is this not {x}?", "Given {premise}, this is not {x}, correct?",
                "Given {premise}, this is not {x}, right?"),
}
def option_phrase(task: str, option: str) -> str:
    """How a question names an option: 'a consumer issue', 'an issue of housing finance', ...
    (the task's domain decides)."""
    return domain(task).phrase(option)


def _item(ctx: Context, sheet: AnswerSheet, fmt: str, slot: str, **fields: Any) -> dict[str, Any]:
    item = {
        "item_id": f"{ctx.context_id}:{fmt}:{slot}",
        "context_id": ctx.context_id,
        "suite": "framingqa",
        "task": ctx.task,
        "format": fmt,
        "slot": slot,
        "text": ctx.text,
        "options": mc_layout(ctx.context_id, sheet.options, sheet.gold)[0] if fmt == "mc" else [],
        "form": "", "phrasing": "", "level": "", "option": "", "distractor": "",
    }
    item.update(fields)
    return item


def _binary_gold(named: str, gold: str, form: str) -> str:
    yes = (named == gold) != (form == "negated")
    return "Yes" if yes else "No"


def binary_items(ctx: Context, sheet: AnswerSheet) -> list[dict[str, Any]]:
    gold = sheet.gold
    a = option_phrase(ctx.task, gold)
    gold_premises = [sheet.premises[gold], *sheet.gold_rephrasings]  # <A>, <A>*, <A>**
    items: list[dict[str, Any]] = []

    def add(bias: str, level: str, form: str, phrasing: str, named: str, question: str,
            slot: str, distractor: str = "") -> None:
        items.append(_item(ctx, sheet, "binary", slot, bias=bias, level=level, form=form,
                           phrasing=phrasing, option=named, distractor=distractor,
                           gold=_binary_gold(named, gold, form), question=question))

    for form in FORMS:
        for q, phrasing in enumerate(PHRASINGS):
            add("correct", "root", form, phrasing, gold, ROOT[form][q].format(x=a),
                f"correct/root/{form}/{phrasing}")
            add("correct", "propositional", form, phrasing, gold,
                PROPOSITIONAL[form].format(x=a, premise=gold_premises[q]),
                f"correct/propositional/{form}/{phrasing}")
            add("correct", "global", form, phrasing, gold,
                GLOBAL[form][q].format(x=a, premise=gold_premises[q]), f"correct/global/{form}/{phrasing}")
        for rank, d in enumerate(sheet.distractors, 1):
            b = option_phrase(ctx.task, d)
            for q, phrasing in enumerate(PHRASINGS):
                add("incorrect", "root", form, phrasing, d, ROOT[form][q].format(x=b),
                    f"incorrect/root/{form}/{phrasing}/d{rank}", d)
                add("incorrect", "global", form, phrasing, d,
                    GLOBAL[form][q].format(x=b, premise=sheet.premises[d]),
                    f"incorrect/global/{form}/{phrasing}/d{rank}", d)
        for ev in sheet.evidence:
            add("incorrect", "propositional", form, _rank_phrasing(sheet, ev.distractor), gold,
                PROPOSITIONAL[form].format(x=a, premise=ev.premise),
                f"incorrect/propositional/{form}/{ev.evidence_id}", ev.distractor)
    return items


def _rank_phrasing(sheet: AnswerSheet, distractor: str) -> str:
    # Table 7 lists the propositional incorrect rows as <B>, <C>, <D>: the phrasing is the distractor rank.
    return PHRASINGS[sheet.distractors.index(distractor)]


def mc_items(ctx: Context, sheet: AnswerSheet) -> list[dict[str, Any]]:
    ask = domain(ctx.task).mc_ask
    gold = sheet.gold
    letter = mc_layout(ctx.context_id, sheet.options, gold)[1]
    gold_premises = [sheet.premises[gold], *sheet.gold_rephrasings]
    items: list[dict[str, Any]] = []

    def add(bias: str, level: str, phrasing: str, named: str, question: str, slot: str,
            distractor: str = "") -> None:
        items.append(_item(ctx, sheet, "mc", slot, bias=bias, level=level,
                           form="plain" if bias != "neutral" else "", phrasing=phrasing, option=named,
                           distractor=distractor, gold=letter, question=question))

    add("neutral", "", "", "", f"{ask}?", "neutral")
    a = option_phrase(ctx.task, gold)
    for q, phrasing in enumerate(PHRASINGS):
        add("correct", "root", phrasing, gold, f"{ROOT['plain'][q].format(x=a)} {ask}?",
            f"correct/root/plain/{phrasing}")
        add("correct", "propositional", phrasing, gold, f"{ask}, based on {gold_premises[q]}?",
            f"correct/propositional/plain/{phrasing}")
        add("correct", "global", phrasing, gold,
            f"{GLOBAL['plain'][q].format(x=a, premise=gold_premises[q])} {ask}?",
            f"correct/global/plain/{phrasing}")
    for rank, d in enumerate(sheet.distractors, 1):
        b = option_phrase(ctx.task, d)
        for q, phrasing in enumerate(PHRASINGS):
            add("incorrect", "root", phrasing, d, f"{ROOT['plain'][q].format(x=b)} {ask}?",
                f"incorrect/root/plain/{phrasing}/d{rank}", d)
            add("incorrect", "global", phrasing, d,
                f"{GLOBAL['plain'][q].format(x=b, premise=sheet.premises[d])} {ask}?",
                f"incorrect/global/plain/{phrasing}/d{rank}", d)
    for ev in sheet.evidence:
        add("incorrect", "propositional", _rank_phrasing(sheet, ev.distractor), ev.distractor,
            f"{ask}, based on {ev.premise}?", f"incorrect/propositional/plain/{ev.evidence_id}",
            ev.distractor)
    return items


def expand(ctx: Context, sheet: AnswerSheet) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(binary items, MC items) of one context; hearsay has no MC items."""
    mc = mc_items(ctx, sheet) if domain(ctx.task).has_mc else []
    return binary_items(ctx, sheet), mc


def expected_counts(evidence_sets: int) -> tuple[int, int]:
    """Table 1: items per context for a given E."""
    return 54 + 2 * evidence_sets, 28 + evidence_sets
