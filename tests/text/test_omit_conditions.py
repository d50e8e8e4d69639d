"""Strict parsing and rendering of the OMIT conditions (text_eval/omit/conditions.py)."""

import pytest

from framebench.text_eval.omit.conditions import (
    CONDITIONS,
    Condition,
    parse_omit_answer,
    render_omit_chat,
)

SHORT = CONDITIONS["M0"]
FINAL = CONDITIONS["M1"]

SHORT_CASES = [
    ("Yes", ("Yes", "ok")),
    ("No", ("No", "ok")),
    ("no.", ("No", "ok")),
    (" YES!", ("Yes", "ok")),
    ("**Yes**", ("Yes", "ok")),
    ("*No*", ("No", "ok")),
    ('"Yes"', ("Yes", "ok")),
    ("Answer: No", ("No", "ok")),
    ("ANSWER: yes", ("Yes", "ok")),
    ("Final answer: No.", ("No", "ok")),
    ("The answer is yes.", ("Yes", "ok")),
    ("Yes, I would ask my friend", ("Yes", "ok")),
    ("No, I would not stop", ("No", "ok")),
    ("No I would not", ("No", "ok")),
    ("\n\nYes\n", ("Yes", "ok")),
    ("Yes.\nNo.", ("Yes", "ok")),  # only the first line counts
    ("Ｙｅｓ", ("Yes", "ok")),  # NFKC full-width
    # ambiguous or not an answer: never guessed
    ("Yes or no?", ("", "unparsed")),
    ("Yes. No one should suffer", ("", "unparsed")),
    ("No one knows", ("", "unparsed")),
    ("No matter what happens", ("", "unparsed")),
    ("Nope", ("", "unparsed")),
    ("Yesterday I", ("", "unparsed")),
    ("None of the above", ("", "unparsed")),
    ("Not sure", ("", "unparsed")),
    ("I would say yes", ("", "unparsed")),
    ("Maybe", ("", "unparsed")),
    ("", ("", "unparsed")),
    ("   ", ("", "unparsed")),
    ("It", ("", "unparsed")),
    # refusals
    ("I cannot make that decision.", ("", "refusal")),
    ("I can't answer that", ("", "refusal")),
    ("As an AI, I do not", ("", "refusal")),
    ("It depends on the", ("", "refusal")),
    ("I'm sorry, but", ("", "refusal")),
    ("Neither option", ("", "refusal")),
]


@pytest.mark.parametrize("output,expected", SHORT_CASES)
def test_short_answer_parsing(output, expected):
    assert parse_omit_answer(output, SHORT) == expected


FINAL_CASES = [
    ("Autonomy matters here.\nANSWER: yes", ("Yes", "ok")),
    ("Beneficence favours acting.\n\nANSWER: No.", ("No", "ok")),
    ("Reasoning...\n**ANSWER: Yes**", ("Yes", "ok")),
    ("Reasoning...\n**ANSWER:** No", ("No", "ok")),
    ("Reasoning...\nAnswer: yes", ("Yes", "ok")),
    ("Reasoning...\nANSWER:\n\nno", ("No", "ok")),
    ("Thus, ANSWER: no", ("No", "ok")),
    # only the final ANSWER line counts
    ("ANSWER: yes\nOn reflection, no.\nANSWER: no", ("No", "ok")),
    ("ANSWER: no\nHmm.\nANSWER: yes", ("Yes", "ok")),
    ("ANSWER: yes\nActually I am not sure. ANSWER: maybe", ("", "unparsed")),
    # a yes/no at the start of reasoning is not an answer for this condition
    ("Yes. Utilitarianism says act, but I ran out of", ("", "unparsed")),
    ("No, because deontology", ("", "unparsed")),
    ("The principles conflict; it is a hard case.", ("", "unparsed")),
    ("ANSWER: yes or no", ("", "unparsed")),
    ("ANSWER: ", ("", "unparsed")),
    ("", ("", "unparsed")),
    ("I cannot choose between these options.", ("", "refusal")),
]


@pytest.mark.parametrize("output,expected", FINAL_CASES)
def test_final_answer_line_parsing(output, expected):
    assert parse_omit_answer(output, FINAL) == expected


def test_registry_shape():
    assert list(CONDITIONS)[:2] == ["M0", "M1"]
    assert set(CONDITIONS) >= {"M0", "M1", "M2", "M3", "M4"}
    for name, cond in CONDITIONS.items():
        assert cond.name == name
        assert cond.instruction and cond.max_new_tokens > 0
        if cond.final_answer_line:
            assert "ANSWER:" in cond.instruction and cond.max_new_tokens >= 128
        else:
            assert cond.max_new_tokens <= 16
    assert "moral principles" in CONDITIONS["M1"].instruction


def test_render_chat():
    item = {"text": "A train is coming. ", "question": "Will you pull the lever?", "frame": "action",
            "conflicts": ""}
    chat = render_omit_chat(item, SHORT)
    assert chat == [{"role": "user", "content": "A train is coming.\n\nWill you pull the lever?\n\n"
                     + SHORT.instruction}]
    sys_cond = Condition(name="MX", instruction="Say yes or no.", max_new_tokens=8,
                         final_answer_line=False, system="Be careful.")
    chat = render_omit_chat(item, sys_cond)
    assert chat[0] == {"role": "system", "content": "Be careful."}
    assert chat[1]["content"].endswith("Say yes or no.")
    assert render_omit_chat(item, CONDITIONS["M3"])[0]["role"] == "system"
