"""``baseline:`` reference backends: always-yes, always-no, random (seeded).

A baseline reads only the prompt. A prompt listing lettered options ("A) ...", "B) ...") is
multiple choice, anything else is yes/no. Multiple choice has no yes/no, so both constant baselines
answer the first option, "A" (a constant-answer policy); ``random`` picks uniformly among Yes/No or
the listed letters, deterministically per prompt: the choice is a hash of (seed, chat), so the same
item gets the same answer in every run and in any batch order.

A baseline answers in the format the prompt asks for: when the prompt wants a final
``ANSWER: yes|no`` line (OMIT conditions M1 and M4), the answer is written as that line, so a
baseline is scored under every condition instead of counting as unparsed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence

from framebench.backends.base import Chat, Decoding
from framebench.errors import UserError

KINDS = ("always-yes", "always-no", "random")
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[).:]\s", re.MULTILINE)
_ANSWER_LINE_REQUEST = re.compile(r"ANSWER:\s*yes\W+(?:or\s+)?\W*ANSWER:\s*no", re.IGNORECASE)
# Bumped when the answers a baseline gives to the same prompt change (so stored answers are not reused).
ANSWER_VERSION = "v2"


def option_letters(chat: Chat) -> list[str]:
    """The option letters the last user turn lists (A, B, ... in order), or [] for yes/no."""
    users = [m["content"] for m in chat if m.get("role") == "user"]
    if not users:
        return []
    found = _OPTION_LINE.findall(users[-1])
    letters: list[str] = []
    for letter in found:  # keep a consecutive run starting at A
        if letter == chr(ord("A") + len(letters)):
            letters.append(letter)
    return letters if len(letters) >= 2 else []


def wants_answer_line(chat: Chat) -> bool:
    """True when the last user turn asks for a final ``ANSWER: yes`` / ``ANSWER: no`` line."""
    users = [m["content"] for m in chat if m.get("role") == "user"]
    return bool(users) and bool(_ANSWER_LINE_REQUEST.search(users[-1]))


def parse_kind(arg: str) -> tuple[str, int | None]:
    """``KIND[@SEED]`` (``baseline:random@7`` sets the seed) as (kind, seed or None)."""
    kind, _, seed_text = arg.partition("@")
    if kind not in KINDS:
        raise UserError(f"unknown baseline {kind!r}: use one of {', '.join(KINDS)}")
    if seed_text and not (seed_text.isascii() and seed_text.isdigit()):
        raise UserError(f"baseline seed must be an integer, got {seed_text!r}")
    return kind, int(seed_text) if seed_text else None


class BaselineBackend:
    def __init__(self, kind: str, spec: str | None = None, seed: int = 0, **_ignored: object):
        kind, given = parse_kind(kind)
        seed = seed if given is None else given
        self.kind = kind
        self.seed = seed
        self.spec = spec or f"baseline:{kind}"

    def fingerprint(self) -> str:
        seed = f":seed={self.seed}" if self.kind == "random" else ""
        return f"baseline:{self.kind}{seed}:{ANSWER_VERSION}"

    def info(self) -> dict[str, str]:
        return {"baseline": self.kind, "seed": str(self.seed)}

    def _answer(self, chat: Chat) -> str:
        answer = self._choice(chat)
        if answer in ("Yes", "No") and wants_answer_line(chat):
            return f"ANSWER: {answer.lower()}"
        return answer

    def _choice(self, chat: Chat) -> str:
        letters = option_letters(chat)
        if self.kind == "random":
            choices = letters or ["Yes", "No"]
            digest = hashlib.sha256(json.dumps([self.seed, chat], sort_keys=True).encode()).digest()
            return choices[int.from_bytes(digest[:8], "big") % len(choices)]
        if letters:
            return "A"
        return "Yes" if self.kind == "always-yes" else "No"

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        return [self._answer(chat) for chat in chats]

    def answer_probabilities(self, chats: list[Chat], choices: list[Sequence[str]],
                             assistant_prefixes: list[str] | None = None) -> list[dict[str, float]]:
        """Constrained mode: all probability on the answer the baseline would give (its policy is
        deterministic), uniform if that answer is not allowed."""
        out = []
        for chat, allowed in zip(chats, choices, strict=True):
            answer = self._answer(chat)
            if answer not in allowed and allowed and allowed[0] == "Yes":
                answer = "Yes" if self.kind != "always-no" else "No"
            if answer in allowed:
                out.append({a: float(a == answer) for a in allowed})
            else:
                out.append({a: 1.0 / len(allowed) for a in allowed})
        return out
