"""The shared rules of framebench.bounds: what a command-line string and a typed (TOML, Python)
value become, and the one-line reason a bad one is refused."""

from __future__ import annotations

import math

import pytest

from framebench.bounds import CONTEXTS, PRICE, RATE, SAMPLE, Real, Whole
from framebench.errors import UserError


@pytest.mark.parametrize("text, value", [("30", 30), (" 2 ", 2), ("+100000000", 100_000_000)])
def test_whole_numbers_in_range_read_as_ints(text, value):
    assert CONTEXTS.read(text) == (value, None)


@pytest.mark.parametrize("text, says", [
    ("1", "1 is outside the allowed range"), ("100000001", "outside"), ("ten", "'ten' is not an integer"),
    ("²", "is not an integer"), ("①", "is not an integer"), ("2.5", "is not an integer"),
    ("9" * 401, "a 401-digit number is outside"), ("", "is not an integer"),
])
def test_whole_numbers_refused_with_the_range(text, says):
    _, problem = CONTEXTS.read(text)
    assert problem is not None and says in problem and "from 2 to 100,000,000" in problem


@pytest.mark.parametrize("value", [True, 2.0, "30", None, [30], 10**30])
def test_typed_values_that_are_not_whole_numbers_in_range_are_refused(value):
    with pytest.raises(UserError, match=r"^text\.contexts: .*expected an integer from 2"):
        CONTEXTS.check(value, "text.contexts")


@pytest.mark.parametrize("text, value", [("0", 0.0), ("0.15", 0.15), (".5", 0.5), ("2.", 2.0), ("1e6", 1e6),
                                         ("1E-3", 0.001)])
def test_prices_read_as_finite_floats(text, value):
    assert PRICE.read(text) == (value, None)


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "NaN", "infinity", "1_0", "0x10", "½", "٣", "1,5", "e5"])
def test_real_numbers_are_ascii_decimal_only(text):
    _, problem = PRICE.read(text)
    assert problem is not None and "is not a number" in problem


@pytest.mark.parametrize("text", ["-0.01", "1e400", "1000001"])
def test_prices_outside_the_range_are_refused(text):
    _, problem = PRICE.read(text)
    assert problem is not None and "outside the allowed range" in problem and "from 0 to 1,000,000" in problem


def test_a_rate_must_be_above_zero_and_the_sample_may_be_zero():
    assert RATE.read("0")[1] is not None and "above 0" in RATE.read("0")[1]
    assert RATE.read("0.5") == (0.5, None)
    assert SAMPLE.read("0") == (0, None) and SAMPLE.read("10001")[1] is not None


@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0, True, "1", None])
def test_typed_reals_are_checked_by_the_same_rule(value):
    with pytest.raises(UserError, match=r"^--price-in: "):
        PRICE.check(value, "--price-in")
    assert PRICE.check(3, "--price-in") == 3.0


def test_words_are_allowed_only_where_the_rule_names_them():
    rule = Whole("--batch-size", 1, 8, ("auto",))
    assert rule.read("auto") == ("auto", None) and rule.check("auto", "x") == "auto"
    assert Whole("--n", 1, 8).read("auto")[1] is not None
    assert Real("--x", 0.0, 1.0).allowed == "a finite number from 0 to 1"
