"""Instruction framings of FramingQA Appendix D.4 (robotics): an episode's seven framings,
neutral plus bias x level (``FRAMINGS``).

``purposes`` is an episode's ``info.purposes`` object::

    {"action": "putting the candle ... on the table",
     "correct":   {"purpose": "decoration", "goal": "decorate the living room", "stance": "appropriate"},
     "incorrect": {"purpose": "clearing the table", "goal": "clear the living room table",
                   "stance": "inappropriate"}}
"""

from __future__ import annotations

from framebench.errors import UserError
from framebench.vocabulary import BIASES, LEVELS, NEUTRAL, slot_of

# (bias, level) of each framing, in record order: neutral, then correct and incorrect x level
FRAMINGS: list[tuple[str, str]] = [(NEUTRAL, ""), *((bias, level) for bias in BIASES for level in LEVELS)]
_FRAME_FIELDS = ("purpose", "goal", "stance")


def framing_slot(bias: str, level: str) -> str:
    """``neutral`` or ``<bias>/<level>``: the framing's slot in the records."""
    return slot_of(bias, level)


def framing_suffix(bias: str, level: str) -> str:
    """The slot written for ids and file names (``correct_root``): an item id is
    ``<episode_id>__<suffix>``, a framing's log ``<item id>.json``."""
    return framing_slot(bias, level).replace("/", "_")


def parse_framing_suffix(suffix: str) -> tuple[str, str] | None:
    """(bias, level) of a :func:`framing_suffix`, or None when ``suffix`` is none."""
    by_suffix = {framing_suffix(bias, level): (bias, level) for bias, level in FRAMINGS}
    return by_suffix.get(suffix)


def validate_purposes(purposes: object, where: str = "info.purposes") -> dict:
    """Check the shape of ``info.purposes``; raise UserError naming the missing/bad field."""
    if not isinstance(purposes, dict):
        raise UserError(f"{where}: expected an object with action/correct/incorrect, got {type(purposes).__name__}")
    action = purposes.get("action")
    if not isinstance(action, str) or not action.strip():
        raise UserError(f"{where}.action: expected a non-empty string")
    for bias in BIASES:
        frame = purposes.get(bias)
        if not isinstance(frame, dict):
            raise UserError(f"{where}.{bias}: expected an object with purpose/goal/stance")
        for field in _FRAME_FIELDS:
            value = frame.get(field)
            if not isinstance(value, str) or not value.strip():
                raise UserError(f"{where}.{bias}.{field}: expected a non-empty string")
    return purposes


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def frame_instruction(instruction: str, purposes: dict, bias: str, level: str) -> str:
    """Return the instruction framed for (bias, level); neutral returns it unchanged."""
    if not isinstance(instruction, str) or not instruction.strip():
        raise UserError("instruction: expected a non-empty string")
    if bias == "neutral":
        if level not in ("", None):
            raise UserError(f"neutral framing takes no level, got {level!r}")
        return instruction
    if bias not in BIASES:
        raise UserError(f"bias: expected neutral, correct or incorrect, got {bias!r}")
    if level not in LEVELS:
        raise UserError(f"level: expected root, propositional or global, got {level!r}")
    validate_purposes(purposes)
    frame = purposes[bias]
    body = _lower_first(instruction.strip())
    if level == "root":
        return f"For {frame['purpose']}, {body}"
    if level == "propositional":
        return f"To {frame['goal']}, {body}"
    return f"To {frame['goal']}, {purposes['action']} is {frame['stance']}. To achieve that goal, {body}"
