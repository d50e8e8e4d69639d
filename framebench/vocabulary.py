"""The framing vocabulary the suites, the records and the backends share: one home per term
(``docs/design.md``, "Glossary").

A request is asked ``neutral`` (unframed) or framed toward the right answer (``correct``) or a
wrong one (``incorrect``) at one of three levels; ``slot_of`` names that framing in the records'
``slot`` column (FramingQA's and embodied's). Text items also come in three phrasings of the same
question (FramingQA's records column ``phrasing``; its items' field ``variant``) and two forms
(plain, negated); a scored answer is one of the binary or multiple-choice answer sets.
"""

from __future__ import annotations

NEUTRAL = "neutral"
BIASES = ("correct", "incorrect")
LEVELS = ("root", "propositional", "global")
FORMS = ("plain", "negated")
PHRASINGS = ("Q1", "Q2", "Q3")
BINARY_ANSWERS = ("Yes", "No")
MC_ANSWERS = ("A", "B", "C", "D")


def slot_of(bias: str, level: str) -> str:
    """``neutral`` or ``<bias>/<level>``: a framing's slot (the prefix of a text item's slot, the
    whole slot of an episode's framing)."""
    return NEUTRAL if bias == NEUTRAL else f"{bias}/{level}"
