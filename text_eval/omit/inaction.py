"""Stage 2: which of a scenario's two actions is the agent-level inaction.

Rule tier first: an action counts as inaction when it carries an explicit refraining cue (a negated
verb, refusing, ignoring, doing nothing, keeping silent, letting others proceed). The rule decides
only when exactly one of the two actions is cued; otherwise the model is asked (column order is
never assumed: in most seed rows action2 is the rule-breaking act, but not in all)."""

from __future__ import annotations

import re

from framebench.backends.base import Chat

INACTION_CUES = re.compile(
    r"\b(?:do\s+not|don't|does\s+not|will\s+not|won't|choose\s+not|decide\s+not|not\s+to|never|"
    r"refuse|decline|refrain|abstain|ignore|do\s+nothing|take\s+no\s+action|turn\s+a\s+blind\s+eye|"
    r"stay\s+out|stay\s+silent|remain\s+silent|say\s+nothing|mind\s+my\s+own|"
    r"keep\s+(?:quiet|silent|it\s+to\s+myself|(?:\w+\s+){0,4}(?:to\s+myself|a\s+secret|secret|hidden))|"
    r"let\s+(?:him|her|them|it)\b)",
    re.IGNORECASE,
)
MAX_NEW_TOKENS = 8


def rule_label(action1: str, action2: str) -> str | None:
    """``"action1"``/``"action2"`` when exactly one action is cued as inaction, else None."""
    c1, c2 = bool(INACTION_CUES.search(action1)), bool(INACTION_CUES.search(action2))
    if c1 != c2:
        return "action1" if c1 else "action2"
    return None


def fallback_chat(context: str, action1: str, action2: str) -> Chat:
    return [{
        "role": "user",
        "content": (
            f"Scenario: {context}\n\nOption A: {action1}\nOption B: {action2}\n\n"
            "Which option is the agent-level inaction, that is, the option in which the agent "
            "refrains from acting and lets events take their default course? Answer with exactly "
            "one word: A, B, or NEITHER."
        ),
    }]


def parse_fallback(output: str) -> str | None:
    """``"action1"``/``"action2"`` from a strict A/B answer; None for NEITHER or anything else."""
    text = output.strip().strip("*`\"'").strip()
    m = re.fullmatch(r"(?:(?:option|answer)\s*:?\s*)?\(?([AB])\)?[.!]?", text, re.IGNORECASE)
    if not m:
        return None
    return "action1" if m.group(1).upper() == "A" else "action2"
