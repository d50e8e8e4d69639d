"""The answer parser on a table of real-looking short outputs (greedy, 8/16 new tokens)."""

from __future__ import annotations

import pytest

from framebench.text_eval.parsing import parse_answer

OPTIONS = ["Housing", "Family", "Crime", "Torts"]

# (output, expected answer, expected parse, expected rule)
BINARY_CASES = [
    ("Yes", "Yes", "ok", "strict"),
    ("No", "No", "ok", "strict"),
    ("yes", "Yes", "ok", "strict"),
    ("NO", "No", "ok", "strict"),
    ("Yes.", "Yes", "ok", "strict"),
    ("No.", "No", "ok", "strict"),
    (" Yes\n", "Yes", "ok", "strict"),
    ("**Yes**", "Yes", "ok", "strict"),
    ("\"No\"", "No", "ok", "strict"),
    ("Yes!", "Yes", "ok", "strict"),
    ("Answer: Yes", "Yes", "ok", "strict"),
    ("Answer: No.", "No", "ok", "strict"),
    ("The answer is yes.", "Yes", "ok", "strict"),
    ("Final answer: No", "No", "ok", "strict"),
    ("ｙｅｓ", "Yes", "ok", "strict"),  # full-width, NFKC
    ("Yes, because the heating", "Yes", "ok", "lenient"),
    ("No, the tenant has not", "No", "ok", "lenient"),
    ("Yes. The landlord failed to", "Yes", "ok", "lenient"),
    ("No. This is a contract", "No", "ok", "lenient"),
    ("Yes\n\nThe statement is", "Yes", "ok", "lenient"),
    ("Yes, there is a housing", "Yes", "ok", "lenient"),
    ("No, it is not hearsay", "No", "ok", "lenient"),
    ("**No**, the statement", "No", "ok", "lenient"),
    ("Answer: Yes, since the", "Yes", "ok", "lenient"),
    ("Yes or No", "", "unparsed", "none"),
    ("Yes/No", "", "unparsed", "none"),
    ("Yes, there is no doubt", "", "unparsed", "none"),
    ("No, yes", "", "unparsed", "none"),
    ("Yesterday the tenant", "", "unparsed", "none"),
    ("Nobody knows whether", "", "unparsed", "none"),
    ("The tenant has a claim", "", "unparsed", "none"),
    ("Based on the context, yes", "", "unparsed", "none"),
    ("", "", "unparsed", "none"),
    ("   ", "", "unparsed", "none"),
    ("Y", "", "unparsed", "none"),
    ("Correct", "", "unparsed", "none"),
    ("I cannot answer that question", "", "refusal", "refusal"),
    ("I can't provide legal advice", "", "refusal", "refusal"),
    ("I'm sorry, but I cannot", "", "refusal", "refusal"),
    ("As an AI, I do not", "", "refusal", "refusal"),
    ("It depends on the jurisdiction", "", "refusal", "refusal"),
    ("There is not enough information to", "", "refusal", "refusal"),
    ("I cannot say yes or no", "", "refusal", "refusal"),
]

MC_CASES = [
    ("A", "A", "ok", "strict"),
    ("B", "B", "ok", "strict"),
    ("c", "C", "ok", "strict"),
    ("D.", "D", "ok", "strict"),
    ("(B)", "B", "ok", "strict"),
    ("B)", "B", "ok", "strict"),
    ("**C**", "C", "ok", "strict"),
    ("Answer: C", "C", "ok", "strict"),
    ("The answer is D.", "D", "ok", "strict"),
    ("The correct answer is B", "B", "ok", "strict"),
    ("Option B", "B", "ok", "strict"),
    ("Answer: Option A", "A", "ok", "strict"),
    ("Housing", "A", "ok", "option_text"),
    ("torts.", "D", "ok", "option_text"),
    ("A) Housing", "A", "ok", "lenient"),
    ("B) Family", "B", "ok", "lenient"),
    ("C. Crime", "C", "ok", "lenient"),
    ("D: Torts", "D", "ok", "lenient"),
    ("A, Family", "A", "ok", "lenient"),
    ("(C) Crime, because the", "C", "ok", "lenient"),
    ("B - Family law", "B", "ok", "lenient"),
    ("Answer: C) Crime", "C", "ok", "lenient"),
    ("D\n\nExplanation: the", "D", "ok", "lenient"),
    ("A) Housing. A tenant may", "A", "ok", "lenient"),
    ("B) Family\nC) Crime", "", "unparsed", "none"),
    ("A or B", "", "unparsed", "none"),
    ("A) Housing B) Family", "", "unparsed", "none"),
    ("C, but D is also", "", "unparsed", "none"),
    ("A housing issue", "", "unparsed", "none"),
    ("A tenant may withhold rent", "", "unparsed", "none"),
    ("The issue is housing", "", "unparsed", "none"),
    ("E", "", "unparsed", "none"),
    ("Family law", "", "unparsed", "none"),
    ("", "", "unparsed", "none"),
    ("Based on the context,", "", "unparsed", "none"),
    ("I'm sorry, I cannot", "", "refusal", "refusal"),
    ("Neither of the options", "", "refusal", "refusal"),
    ("None of the above", "", "refusal", "refusal"),
    ("It is not possible to determine", "", "refusal", "refusal"),
]


@pytest.mark.parametrize(("output", "answer", "parse", "rule"), BINARY_CASES)
def test_binary_table(output, answer, parse, rule):
    got = parse_answer(output, "binary")
    assert (got.answer, got.parse, got.rule) == (answer, parse, rule)


@pytest.mark.parametrize(("output", "answer", "parse", "rule"), MC_CASES)
def test_mc_table(output, answer, parse, rule):
    got = parse_answer(output, "mc", OPTIONS)
    assert (got.answer, got.parse, got.rule) == (answer, parse, rule)


def test_table_is_large_enough():
    assert len(BINARY_CASES) + len(MC_CASES) >= 60


def test_mc_without_options_never_matches_text():
    assert parse_answer("Housing", "mc").parse == "unparsed"


def test_mc_letters_limited_to_option_count():
    assert parse_answer("D", "mc", ["x", "y", "z"]).parse == "unparsed"
    assert parse_answer("C", "mc", ["x", "y", "z"]).answer == "C"
