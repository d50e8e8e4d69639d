"""Strict parsing of short Yes/No and letter answers. Never guesses; the raw output is kept elsewhere.

Cascade (the rule that fired is returned, so strict and lenient scoring can be compared):

1. ``strict``: after normalising (Unicode NFKC, markdown emphasis, surrounding quotes/brackets,
   whitespace, trailing punctuation, case, a leading "Answer:"/"The answer is"/"Option"), the whole
   output is one allowed answer: ``Yes``/``No`` or a letter.
2. ``option_text`` (MC, when the options are known): the whole output is exactly one option's text.
3. ``lenient``: the output starts with an allowed answer at a word boundary ("Yes, because...",
   "B) Torts", "(C)", "Answer: D."), and no *other* allowed answer appears anywhere in it
   ("Yes or no", "A) ... B) ..." are ``unparsed``). A capital "A" followed by a lowercase word is the
   article, not a letter ("A tenant may ...").
4. ``refusal``: the output starts with a refusal or a non-answer ("I cannot", "As an AI",
   "It depends", "Neither", "There is not enough information").
5. Anything else is ``unparsed`` (including empty output and truncated hedges).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from framebench.vocabulary import MC_ANSWERS

_LEAD = re.compile(
    r"^(?:(?:the\s+)?(?:final\s+|correct\s+|best\s+)?answer(?:\s+is)?\s*[:\-]?|my\s+(?:final\s+)?answer\s+is\s*:?"
    r"|answer\s*[:\-]|(?:the\s+)?(?:correct\s+)?option(?:\s+is)?\s*:?|letter\s*:?)\s*",
    re.IGNORECASE,
)
_EDGE = "*_`\"'“”‘’«»[]{}<> \t\r\n"
_REFUSAL = re.compile(
    r"^(?:i\s+(?:can(?:no|')?t|cannot|won'?t|will\s+not|am\s+(?:not\s+able|unable|sorry)|apologi[sz]e"
    r"|(?:do\s+not|don'?t)\s+(?:know|have|feel))|i'?m\s+(?:not\s+able|unable|sorry|afraid)|as\s+an\s+ai"
    r"|sorry\b|it\s+depends|neither\b|none\s+of\b|both\b|there\s+(?:is|isn'?t)\s+(?:not\s+)?(?:enough|insufficient|no\s+way)"
    r"|(?:it\s+is\s+)?(?:not\s+possible|impossible)\s+to\s+(?:determine|say|tell)|(?:this\s+)?cannot\s+be\s+determined"
    r"|insufficient\s+information|not\s+enough\s+information|unable\s+to)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Parsed:
    answer: str  # "Yes"/"No"/"A"-"D", or "" when not parsed
    parse: str  # "ok" | "unparsed" | "refusal"
    rule: str  # "strict" | "option_text" | "lenient" | "refusal" | "none"


UNPARSED = Parsed("", "unparsed", "none")


def normalise(text: str) -> str:
    """NFKC, markdown emphasis removed, outer quotes/brackets/whitespace stripped, leading
    "Answer:"-style labels dropped."""
    text = unicodedata.normalize("NFKC", text).replace("**", "").replace("__", "")
    text = text.strip(_EDGE)
    for _ in range(2):  # "Answer: Option B"
        stripped = _LEAD.sub("", text, count=1).strip(_EDGE)
        if stripped == text:
            break
        text = stripped
    return text


def _squash(text: str) -> str:
    """Lower case, punctuation to spaces, whitespace collapsed (for whole-output comparisons)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def parse_binary(output: str) -> Parsed:
    text = normalise(output)
    squashed = _squash(text)
    if squashed in ("yes", "no"):
        return Parsed(squashed.capitalize(), "ok", "strict")
    m = re.match(r"(yes|no)\b", text, re.IGNORECASE)
    if m:
        first = m.group(1).lower()
        words = set(re.findall(r"\b(yes|no)\b", output.lower()))
        if words == {first}:
            return Parsed(first.capitalize(), "ok", "lenient")
        return UNPARSED
    if _REFUSAL.match(text):
        return Parsed("", "refusal", "refusal")
    return UNPARSED


# A letter mention: a capital A-D standing alone, not the article "A" before a lowercase word.
_LETTER_MENTION = re.compile(r"(?<![\w'])(?:A(?![\w'])(?!\s+[a-z])|[B-D](?![\w']))")
# A letter at the start, followed by end, a closing bracket, punctuation, or a space + non-lowercase.
_LEADING_LETTER = re.compile(r"\(?([A-Da-d])(?:\)|(?=[.:,;\-\s]|$))")


def parse_mc(output: str, options: list[str] | None = None, letters: tuple[str, ...] = MC_ANSWERS) -> Parsed:
    text = normalise(output)
    squashed = _squash(text)
    allowed = {letter.lower() for letter in letters}
    if squashed in allowed:
        return Parsed(squashed.upper(), "ok", "strict")
    if options:
        hits = [letters[i] for i, opt in enumerate(options[: len(letters)]) if _squash(str(opt)) == squashed]
        if len(hits) == 1 and squashed:
            return Parsed(hits[0], "ok", "option_text")
    m = _LEADING_LETTER.match(text)
    if m and m.group(1).lower() in allowed:
        letter = m.group(1).upper()
        rest = text[m.end():]
        article = letter == "A" and m.group(0) == "A" and re.match(r"\s+[a-z]", rest)
        lowercase_word = m.group(1).islower() and m.group(0) == m.group(1) and re.match(r"\s+\w", rest)
        if not article and not lowercase_word:
            mentions = {x for x in _LETTER_MENTION.findall(output) if x.lower() in allowed}
            if mentions <= {letter}:
                return Parsed(letter, "ok", "lenient")
            return UNPARSED
    if _REFUSAL.match(text):
        return Parsed("", "refusal", "refusal")
    return UNPARSED


def parse_answer(output: str, fmt: str, options: list[str] | None = None) -> Parsed:
    """Parse one model output for a ``binary`` or ``mc`` item."""
    if fmt == "binary":
        return parse_binary(output)
    if fmt == "mc":
        n = len(options) if options else len(MC_ANSWERS)
        return parse_mc(output, options, MC_ANSWERS[: max(2, min(n, len(MC_ANSWERS)))])
    raise ValueError(f"unknown format {fmt!r}")
