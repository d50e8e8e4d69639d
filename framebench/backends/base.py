"""The model-backend interface shared by the text evaluator, OMIT construction and the planner."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol, runtime_checkable

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

    def generate(self, chats: list[Chat], decoding: Decoding) -> list[str]:
        """One completion per chat, in order."""
        ...
