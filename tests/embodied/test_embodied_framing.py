"""Appendix D.4 framings: the paper's own robotics example, reproduced verbatim."""

import pytest

from framebench.embodied.framing import FRAMINGS, frame_instruction, validate_purposes
from framebench.errors import UserError

INSTRUCTION = "Put the candle, the candle holder, and the plant container on the table in the living room."
PURPOSES = {
    "action": "putting the candle, the candle holder, and the plant container on the table",
    "correct": {"purpose": "decoration", "goal": "decorate the living room", "stance": "appropriate"},
    "incorrect": {"purpose": "clearing the table", "goal": "clear the living room table", "stance": "inappropriate"},
}
BODY = "put the candle, the candle holder, and the plant container on the table in the living room."
EXPECTED = {  # FramingQA Appendix D.4, "Robotics Domain (spatial episode)"
    ("neutral", ""): INSTRUCTION,
    ("correct", "root"): f"For decoration, {BODY}",
    ("incorrect", "root"): f"For clearing the table, {BODY}",
    ("correct", "propositional"): f"To decorate the living room, {BODY}",
    ("incorrect", "propositional"): f"To clear the living room table, {BODY}",
    ("correct", "global"): "To decorate the living room, putting the candle, the candle holder, and the plant "
                           f"container on the table is appropriate. To achieve that goal, {BODY}",
    ("incorrect", "global"): "To clear the living room table, putting the candle, the candle holder, and the "
                             f"plant container on the table is inappropriate. To achieve that goal, {BODY}",
}


def test_variants_are_neutral_plus_bias_by_level():
    assert FRAMINGS == [("neutral", ""), ("correct", "root"), ("correct", "propositional"), ("correct", "global"),
                        ("incorrect", "root"), ("incorrect", "propositional"), ("incorrect", "global")]


@pytest.mark.parametrize(("bias", "level"), list(EXPECTED))
def test_paper_example(bias, level):
    assert frame_instruction(INSTRUCTION, PURPOSES, bias, level) == EXPECTED[(bias, level)]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [(lambda p: p.pop("action"), "info.purposes.action"),
     (lambda p: p.pop("incorrect"), "info.purposes.incorrect"),
     (lambda p: p["correct"].update(goal=""), "info.purposes.correct.goal"),
     (lambda p: p["incorrect"].pop("stance"), "info.purposes.incorrect.stance")],
)
def test_bad_purposes_name_the_field(mutate, field):
    import copy

    bad = copy.deepcopy(PURPOSES)
    mutate(bad)
    with pytest.raises(UserError, match=field.replace(".", r"\.")):
        validate_purposes(bad)
    with pytest.raises(UserError):
        frame_instruction(INSTRUCTION, bad, "correct", "global")


def test_bad_bias_or_level():
    with pytest.raises(UserError, match="bias"):
        frame_instruction(INSTRUCTION, PURPOSES, "positive", "root")
    with pytest.raises(UserError, match="level"):
        frame_instruction(INSTRUCTION, PURPOSES, "correct", "sentence")
