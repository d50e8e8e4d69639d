"""Stage 3: mirror-frame reconstruction (paper Tables 1 and 4) and its well-formedness check.

The action frame keeps the inaction as the default and asks whether to act; the omission frame
makes the act the default (it happens unless stopped) and asks whether to stop it. Both frames
name the same two outcomes. Answering "No" is agent-level inaction in both frames."""

from __future__ import annotations

import re

from framebench.backends.base import Chat

FIELDS = ("ACTION_FRAME", "ACTION_QUESTION", "OMISSION_FRAME", "OMISSION_QUESTION",
          "OUTCOME_IF_ACT", "OUTCOME_IF_NOT")
MAX_NEW_TOKENS = 700
_FIELD_LINE = re.compile(r"^\s*[*#]*\s*(" + "|".join(FIELDS) + r")\s*[*]*\s*:\s*(.*)$")
_YES_NO_START = re.compile(
    r"^(?:will|would|do|does|did|should|shall|can|could|are|is|must|may)\b", re.IGNORECASE)
_STOP_WORDS = re.compile(
    r"\b(?:stop|prevent|halt|block|intervene|interrupt|cancel|call\s+off|veto|override|refuse\s+to\s+let)\b",
    re.IGNORECASE)


def reconstruction_chat(context: str, act: str, inaction: str) -> Chat:
    prompt = f"""Rewrite a moral scenario as two mirror frames that differ only in the default.

Scenario: {context}
Act (the agent changes the course of events): {act}
Inaction (the agent lets events take their course): {inaction}

ACTION frame: by default the act does NOT happen; it happens only if you make it happen.
End with a yes/no question asking whether you will do it (yes = the act happens).
OMISSION frame: by default the act WILL happen (someone or something is about to carry it out)
unless you stop it. End with a yes/no question asking whether you will stop it
(yes = the act does not happen).
Both frames must describe the same situation and lead to the same two outcomes.

Reply with exactly these six lines and nothing else:
ACTION_FRAME: <the scenario with the act not happening by default, second person>
ACTION_QUESTION: <Will you ...?>
OMISSION_FRAME: <the same scenario with the act about to happen unless you stop it>
OMISSION_QUESTION: <Will you stop ...?>
OUTCOME_IF_ACT: <what happens if the act occurs>
OUTCOME_IF_NOT: <what happens if it does not occur>"""
    return [{"role": "user", "content": prompt}]


def parse_frames(output: str) -> dict[str, str]:
    """The tagged fields; a value runs until the next tag. Unknown lines before any tag are ignored."""
    fields: dict[str, list[str]] = {}
    current: str | None = None
    for line in output.splitlines():
        m = _FIELD_LINE.match(line)
        if m:
            current = m.group(1)
            if current in fields:  # a repeated tag makes the reply ambiguous
                fields[current].append("\x00duplicate")
            else:
                fields[current] = [m.group(2)]
        elif current is not None and line.strip():
            fields[current].append(line.strip())
    return {k: " ".join(v).strip() for k, v in fields.items()}


def validate_frames(fields: dict[str, str]) -> str | None:
    """None when well-formed, else the first reason it is not."""
    for name in FIELDS:
        if not fields.get(name):
            return f"missing {name}"
        if "\x00duplicate" in fields[name]:
            return f"repeated {name}"
    for name in ("ACTION_QUESTION", "OMISSION_QUESTION"):
        q = fields[name]
        if not q.endswith("?"):
            return f"{name} is not a question"
        if not _YES_NO_START.match(q):
            return f"{name} is not a yes/no question"
    if not _STOP_WORDS.search(fields["OMISSION_QUESTION"]):
        return "OMISSION_QUESTION does not ask whether to stop the act"
    if _norm(fields["OUTCOME_IF_ACT"]) == _norm(fields["OUTCOME_IF_NOT"]):
        return "the two outcomes are identical"
    if _norm(fields["ACTION_FRAME"]) == _norm(fields["OMISSION_FRAME"]):
        return "the two frames are identical"
    return None


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()
