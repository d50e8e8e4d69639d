"""The blind reading of a premise: does it argue for the option it was written for?

A reader who did not write the premise sees the context, the options in an order shuffled per premise
and the premise alone, and names the option it argues for, or "none" (``../shared/notes`` and
docs/framingqa-examples.md). The reading is stored beside the premise: in a sheet's
``blind_readings`` (reviewed decisions and answer sheets) and in a review file's ``blind`` field
(``framebench sheets blind``). A premise whose reading is not its own option needs an ``override``:
the reviewer's reason for keeping it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from framebench.errors import UserError
from framebench.schema import check_fields
from framebench.vocabulary import MC_ANSWERS

NONE = "none"
QUESTION = ("Which option does the premise argue for? Reply with the letter of that option alone, or with "
            "the word none if it argues for no option.")
_LETTER = re.compile(r"^\s*\(?([A-Da-d])\)?\s*[.):]?\s*$")


@dataclass(frozen=True)
class BlindReading:
    """One reader's answer for one premise: the option it names (or ``none``) and who read it."""

    premise: str
    read_as: str
    reader: str
    override: str = ""  # the reviewer's reason for keeping a premise read as another option

    def agrees(self, option: str) -> bool:
        return self.read_as == option or bool(self.override.strip())


READING_FIELDS: dict[str, Any] = {"premise": str, "read_as": str, "reader": str, "override": str}


def reading_from_json(data: Any, options: list[str], where: str) -> BlindReading:
    check_fields(data, READING_FIELDS, where, optional=("override",))
    reading = BlindReading(**data)
    if reading.read_as != NONE and reading.read_as not in options:
        raise UserError(f"{where}: field 'read_as' is {reading.read_as!r} (one of the context's options, or {NONE!r})")
    if not reading.reader.strip():
        raise UserError(f"{where}: field 'reader' is empty (who read the premise)")
    return reading


def shuffled(options: list[str], premise: str) -> list[str]:
    """The options in an order fixed by the premise, so that no reading can lean on the option order."""
    return sorted(options, key=lambda o: hashlib.sha256(f"{premise}\x1f{o}".encode()).hexdigest())


def reading_prompt(context: str, options: list[str], premise: str) -> str:
    """What a blind reader sees: the context, the shuffled options, the premise; never its label."""
    order = shuffled(options, premise)
    lines = [f"Context:\n{context.strip()}", "", "Options:"]
    lines += [f"{letter}) {option}" for letter, option in zip(MC_ANSWERS, order, strict=False)]
    lines += ["", f"Premise: {premise.strip()}", "", QUESTION]
    return "\n".join(lines)


def parse_reading(reply: str, options: list[str], premise: str) -> str:
    """The option a reply names (by the letter of the shuffled order), or ``none``; a reply that is
    neither a lone letter nor "none" counts as ``none`` (model output is parsed strictly)."""
    text = str(reply).strip().splitlines()[0] if str(reply).strip() else ""
    order = shuffled(options, premise)
    if (m := _LETTER.match(text)) and "ABCD".index(m.group(1).upper()) < len(order):
        return order["ABCD".index(m.group(1).upper())]
    return NONE


def disagreements(intended: list[tuple[str, str, str]], readings: list[BlindReading]
                  ) -> tuple[list[str], list[str]]:
    """For (slot, option, premise) triples: the slots with no reading, and the slots read as another
    option with no override."""
    by_premise = {r.premise: r for r in readings}
    missing, wrong = [], []
    for slot, option, premise in intended:
        reading = by_premise.get(premise)
        if reading is None:
            missing.append(slot)
        elif not reading.agrees(option):
            wrong.append(f"{slot} read as {reading.read_as!r}")
    return missing, wrong
