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
    """What every model backend has: its spec and its fingerprint for the result store."""

    spec: str

    def fingerprint(self) -> str:
        """Identifies the exact model (weights hashes, or name + base URL) for the result store."""
        ...

    def info(self) -> dict[str, str]:
        """Extra run.json fields (``model_info``, e.g. ``chat_template_hash``)."""
        ...


# The capabilities (``framebench.registry.CAPABILITIES``), one protocol each. An engine declares
# which its backends implement (``Engine.capabilities``), so a request it cannot serve is refused
# before any model loads; ``require`` checks a built backend against the same protocols.
@runtime_checkable
class Generates(Backend, Protocol):
    """Free generation: one completion per chat, deterministically for greedy decoding."""

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        """One completion per chat, in order; ``on_batch(indices, texts)`` may report finished
        parts early (the runner stores them at once, so a killed run resumes there)."""
        ...


@runtime_checkable
class ScoresAnswers(Backend, Protocol):
    """Constrained answers: ``P(answer)`` over each chat's allowed answers
    (``framebench.backends.constrained``), scored after ``assistant_prefixes[i]`` when given."""

    def answer_probabilities(self, chats: list[Chat], choices: list[Sequence[str]],
                             assistant_prefixes: list[str] | None = None) -> list[dict[str, float]]:
        ...


@runtime_checkable
class ScoresContinuations(Backend, Protocol):
    """The choice planner's scores: the sum of each continuation's token log-probabilities after
    each chat. ``states`` (one dict per chat, kept by the caller across calls) lets a backend reuse
    a growing prompt's KV cache; a backend that cannot may ignore it."""

    def score_continuations(self, chats: list[Chat], continuations: list[list[str]],
                            assistant_prefixes: list[str] | None = None, per_token: bool = False,
                            states: list[dict] | None = None) -> list[list[float]]:
        ...


PROTOCOLS: dict[str, type] = {"generate": Generates, "score_answers": ScoresAnswers,
                              "score_continuations": ScoresContinuations}


def require(backend: Any, capability: str, needed_by: str) -> None:
    """Refuse (a user error, one line) a built backend that does not implement ``capability``
    (``framebench.registry.require_capability`` refuses an engine before it loads)."""
    from framebench.errors import UserError
    from framebench.registry import CAPABILITY_WORDS

    if not isinstance(backend, PROTOCOLS[capability]):
        spec = getattr(backend, "spec", type(backend).__name__)
        raise UserError(f"{needed_by}: backend {spec!r} cannot {CAPABILITY_WORDS[capability]}")


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
