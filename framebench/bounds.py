"""The typed settings a user gives, each defined once: its type and its allowed range.

The command-line option (``option``), the sweep plan's field (``Rule.check`` on the TOML
value) and the engine option (``framebench.registry.Option.rule``) check a value against the same
rule, so no second copy of a range exists. A value outside what the machine can do (a billion
a 401-digit context count) is refused before any work, naming the range.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from framebench.errors import UserError

MAX_DIGITS = 19  # a longer number is outside every range here; it is never converted
SHOWN = 60  # characters of a user's value that a message echoes


def shorten(value: str, limit: int = SHOWN) -> str:
    """``value`` cut to ``limit`` characters (an echoed value never floods a line or a page)."""
    return value if len(value) <= limit else f"{value[:limit]}... ({len(value):,} characters)"


def shown(value: Any) -> str:
    """A user's value as a message quotes it: repr, shortened; a long number by its length."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value.strip()) and len(value.strip()) > MAX_DIGITS:
        return f"a {len(value.strip().lstrip('+-')):,}-digit number"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) >= 10**MAX_DIGITS:
        return f"a {len(str(abs(value))):,}-digit number"
    return shorten(repr(value))


@dataclass(frozen=True)
class Whole:
    """A whole number in ``low..high``, or one of ``words`` (e.g. ``auto``)."""

    flag: str  # the command-line option it is (documentation; plan messages name it)
    low: int
    high: int
    words: tuple[str, ...] = ()

    @property
    def metavar(self) -> str:
        return "|".join(("N", *self.words))

    @property
    def allowed(self) -> str:
        numbers = f"an integer from {self.low:,} to {self.high:,}"
        return " or ".join([*(repr(w) for w in self.words), numbers])

    def _range(self, number: int, display: str) -> str | None:
        if self.low <= number <= self.high:
            return None
        return f"{display} is outside the allowed range (expected {self.allowed})"

    def problem(self, value: Any) -> str | None:
        """Why a typed value (TOML, JSON, Python) breaks the rule; None when it keeps it."""
        if isinstance(value, str) and value in self.words:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{shown(value)} is not an integer (expected {self.allowed})"
        return self._range(value, shown(value))

    def read(self, text: str) -> tuple[Any, str | None]:
        """A command-line string as (its typed value, why it breaks the rule or None). ASCII
        digits only; a number longer than any range is refused by its length, never converted."""
        stripped = text.strip()
        if stripped in self.words:
            return stripped, None
        if not re.fullmatch(r"[+-]?[0-9]+", stripped):
            return text, f"{shown(text)} is not an integer (expected {self.allowed})"
        if len(stripped.lstrip("+-")) > MAX_DIGITS:
            return text, self._range(10**MAX_DIGITS, shown(stripped))
        number = int(stripped)
        return number, self._range(number, str(number))

    def check(self, value: Any, where: str) -> int | str:
        """A typed value, refused in one line starting with ``where``."""
        problem = self.problem(value)
        if problem:
            raise UserError(f"{where}: {problem}")
        return value

    def parse(self, text: str, where: str) -> int | str:
        """A command-line string, refused in one line starting with ``where``."""
        value, problem = self.read(text)
        if problem:
            raise UserError(f"{where}: {problem}")
        return value


@dataclass(frozen=True)
class Url:
    """An http(s):// URL (an OpenAI-compatible server)."""

    flag: str
    metavar: str = "URL"

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, str):
            return f"{shown(value)} is not a URL (expected an http:// or https:// URL)"
        if not re.match(r"https?://[^\s/]+", value) or any(c.isspace() for c in value):
            return f"{shown(value)} is not an http:// or https:// URL"
        return None

    def check(self, value: Any, where: str) -> str:
        problem = self.problem(value)
        if problem:
            raise UserError(f"{where}: {problem}")
        return value

    def read(self, text: str) -> tuple[str, str | None]:
        return text.strip(), self.problem(text.strip())

    def parse(self, text: str, where: str) -> str:
        return self.check(text.strip(), where)


@dataclass(frozen=True)
class Real:
    """A finite number in ``low..high`` (``low`` itself refused when ``above``): a price or a rate."""

    flag: str
    low: float
    high: float
    above: bool = False
    metavar: str = "X"

    @property
    def allowed(self) -> str:
        high = f"{self.high:,.0f}" if self.high == int(self.high) else f"{self.high:g}"
        if self.above:
            return f"a finite number above {self.low:g}, at most {high}"
        return f"a finite number from {self.low:g} to {high}"

    def _range(self, number: float, display: str) -> str | None:
        if not math.isfinite(number) or number < self.low or (self.above and number == self.low) or number > self.high:
            return f"{display} is outside the allowed range (expected {self.allowed})"
        return None

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{shown(value)} is not a number (expected {self.allowed})"
        return self._range(float(value), shown(value))

    def read(self, text: str) -> tuple[Any, str | None]:
        """ASCII digits, a point and an exponent only: ``inf``, ``nan`` and ``1_0`` are refused."""
        stripped = text.strip()
        if not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,4})?", stripped):
            return text, f"{shown(text)} is not a number (expected {self.allowed})"
        number = float(stripped)
        return number, self._range(number, stripped)

    def check(self, value: Any, where: str) -> float:
        problem = self.problem(value)
        if problem:
            raise UserError(f"{where}: {problem}")
        return float(value)

    def parse(self, text: str, where: str) -> float:
        value, problem = self.read(text)
        if problem:
            raise UserError(f"{where}: {problem}")
        return value


Rule = Whole | Url | Real

LIMIT = Whole("--limit", 1, 10**9)  # items (text) or episodes (embodied)
BATCH_SIZE = Whole("--batch-size", 1, 65_536, ("auto",))  # prompts per forward pass
CALL_SIZE = Whole("--call-size", 1, 65_536)  # chats or episodes per model call (builds, drafts)
CONCURRENCY = Whole("--concurrency", 1, 4_096)  # parallel requests to a server
WORKERS = Whole("--ray-workers", 1, 100_000)  # Ray worker actors
REPLAN_CAP = Whole("--replan-cap", 1, 10_000)  # LLM planner calls past the first
MAX_NEW_TOKENS = Whole("--max-new-tokens", 1, 1_000_000)  # tokens per planner decision
CONTEXTS = Whole("--contexts", 2, 100_000_000)  # contexts per task in a planned study
PORT = Whole("--port", 0, 65_535)
EPISODES = Whole("--n", 1, 1_000_000)  # generated episodes
BASE_URL = Url("--base-url")
SAMPLE = Whole("--sample", 0, 10_000)  # requests timed by ``framebench estimate``
RATE = Real("--rate", 0.0, 1e9, above=True)  # requests per second measured on a server
PRICE = Real("--price-in", 0.0, 1e6)  # dollars per million tokens (also --price-out)


def click_module() -> Any:
    """The click package typer runs on (newer typer releases vendor their own copy)."""
    import importlib

    import typer

    return importlib.import_module(typer.BadParameter.__module__.rsplit(".", 1)[0])


def option(rule: Rule, default: Any, *flags: str, help: str = "", **extra: Any) -> Any:
    """A typer option checked by ``rule`` (its flag unless ``flags``), the range in its help."""
    import typer

    allowed = "an http(s):// URL" if isinstance(rule, Url) else rule.allowed
    return typer.Option(default, *(flags or (rule.flag,)), parser=_parser(rule), metavar=rule.metavar,
                        help=f"{help} ({allowed})".strip(), **extra)


def _parser(rule: Rule) -> Any:
    """The rule as a typer parser: a bad value fails with the rule's one-line message (the command
    line prints ``error: --flag: message``)."""

    def parse(value: Any) -> Any:
        if not isinstance(value, str):  # a default, already typed
            return value
        typed, problem = rule.read(value)
        if problem:
            raise ValueError(problem)
        return typed

    return parse
