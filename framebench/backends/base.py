"""The model-backend interface shared by the text evaluator, OMIT construction and the planner."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}
Chat = list[Message]


@dataclass(frozen=True)
class Decoding:
    """Decoding parameters; greedy by default (the papers' protocol)."""

    max_new_tokens: int = 8
    temperature: float = 0.0
    stop: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d


@runtime_checkable
class Backend(Protocol):
    """Generate one completion per chat, deterministically for greedy decoding."""

    spec: str

    def fingerprint(self) -> str:
        """Identifies the exact model (weights hashes, or name + base URL) for the result store."""
        ...

    def info(self) -> dict[str, str]:
        """Extra identity fields for run.json (e.g. ``chat_template_hash``)."""
        ...

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        """One completion per chat, in order; ``on_batch(indices, texts)`` may report finished
        parts early (the runner stores them at once, so a killed run resumes there)."""
        ...


def decode_until_stop(tokenizer: Any, tokens: Sequence[int], eos_ids: Iterable[int],
                      stop: Iterable[str]) -> str:
    """Generated token ids as text: cut at the first end-of-sequence id, then at the first stop string."""
    tokens, eos = list(tokens), set(eos_ids)
    for i, tok in enumerate(tokens):
        if tok in eos:
            tokens = tokens[:i]
            break
    text = tokenizer.decode(tokens, skip_special_tokens=True)
    for s in stop:
        cut = text.find(s)
        if cut >= 0:
            text = text[:cut]
    return text
