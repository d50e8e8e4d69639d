"""Prompt rendering (one user turn: context, question, options, instruction) and baselines."""

from __future__ import annotations

import pytest

from framebench.backends import load_backend
from framebench.backends.base import Decoding
from framebench.backends.baseline import option_letters
from framebench.errors import UserError
from framebench.text_eval.framingqa.prompts import decoding_for, render_chat, render_prompt

BINARY = {"item_id": "b1", "format": "binary", "text": "  The tenant sued.\n", "question": "Is this housing? ",
          "options": []}
MC = {"item_id": "m1", "format": "mc", "text": "The tenant sued.", "question": "Which area?",
      "options": ["Housing", "Family", "Crime", "Torts"]}


def test_binary_prompt_exact():
    assert render_prompt(BINARY) == "The tenant sued.\n\nIs this housing?\nAnswer with Yes or No."
    assert render_chat(BINARY) == [{"role": "user", "content": render_prompt(BINARY)}]  # no system turn


def test_mc_prompt_exact():
    assert render_prompt(MC) == ("The tenant sued.\n\nWhich area?\nA) Housing\nB) Family\nC) Crime\nD) Torts\n"
                                 "Answer with the letter of the correct option (A, B, C or D).")
    three = dict(MC, options=["x", "y", "z"])
    assert render_prompt(three).endswith("C) z\nAnswer with the letter of the correct option (A, B or C).")
    with pytest.raises(ValueError, match="m1"):
        render_prompt(dict(MC, options=["only"]))


def test_decoding_budget_follows_the_paper():
    assert decoding_for("binary") == Decoding(max_new_tokens=8, temperature=0.0)
    assert decoding_for("mc") == Decoding(max_new_tokens=16, temperature=0.0)


def test_baselines_read_the_format_from_the_prompt():
    chats = [render_chat(BINARY), render_chat(MC)]
    assert option_letters(chats[1]) == ["A", "B", "C", "D"] and option_letters(chats[0]) == []
    assert load_backend("baseline:always-yes").generate(chats, Decoding()) == ["Yes", "A"]
    assert load_backend("baseline:always-no").generate(chats, Decoding()) == ["No", "A"]
    rnd = load_backend("baseline:random")
    many = [[{"role": "user", "content": f"Case {i}.\n\nIs it?\nAnswer with Yes or No."}] for i in range(200)]
    answers = rnd.generate(many, Decoding())
    assert answers == rnd.generate(list(reversed(many)), Decoding())[::-1]  # per item, not per position
    assert 70 < answers.count("Yes") < 130  # roughly uniform
    assert load_backend("baseline:random@7").generate(many, Decoding()) != answers  # the seed matters
    assert load_backend("baseline:random@7").fingerprint() == "baseline:random:seed=7:v2"
    with pytest.raises(UserError):
        load_backend("baseline:sometimes")
