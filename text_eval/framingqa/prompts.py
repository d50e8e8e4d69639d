"""Prompt rendering for FramingQA text items (paper §4.1: one user turn with the context and the
question, each model's own chat template, no in-context examples).

The user turn is ``context``, a blank line, the framed question, the lettered options (MC), and a
one-line answer instruction. There is no system turn: whatever default system prompt a model's
template injects (SmolLM2's "You are a helpful AI assistant named SmolLM...") is part of that
model's protocol and is kept. The context comes first so that all variants of a context share one
long token prefix, which the HF backend computes once.
"""

from __future__ import annotations

from typing import Any

from framebench.backends.base import Chat, Decoding
from framebench.vocabulary import MC_ANSWERS

BINARY_INSTRUCTION = "Answer with Yes or No."
MAX_NEW_TOKENS = {"binary": 8, "mc": 16}


def render_prompt(item: dict[str, Any]) -> str:
    """The user message for one FramingQA item."""
    parts = [item["text"].strip(), "", item["question"].strip()]
    if item["format"] == "mc":
        options = item["options"]
        if not 2 <= len(options) <= len(MC_ANSWERS):
            raise ValueError(f"item {item['item_id']!r}: mc items need 2-{len(MC_ANSWERS)} options, got {len(options)}")
        letters = MC_ANSWERS[: len(options)]
        parts += [f"{letter}) {str(text).strip()}" for letter, text in zip(letters, options, strict=True)]
        parts.append(mc_instruction(letters))
    else:
        parts.append(BINARY_INSTRUCTION)
    return "\n".join(parts)


def mc_instruction(letters: tuple[str, ...] = MC_ANSWERS) -> str:
    """E.g. "Answer with the letter of the correct option (A, B, C or D)."."""
    listed = ", ".join(letters[:-1]) + f" or {letters[-1]}"
    return f"Answer with the letter of the correct option ({listed})."


def render_chat(item: dict[str, Any]) -> Chat:
    return [{"role": "user", "content": render_prompt(item)}]


def decoding_for(fmt: str) -> Decoding:
    """Greedy decoding with the paper's budget: 8 new tokens for binary items, 16 for MC."""
    return Decoding(max_new_tokens=MAX_NEW_TOKENS[fmt], temperature=0.0)
