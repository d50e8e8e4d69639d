"""``hf:`` backend: a transformers causal LM with greedy decoding and shared-prefix KV reuse.

Its jobs live in one module each: model identity (``model_fingerprint``, shared with ``vllm:``),
prefix grouping (``prefix_groups``), prompt and candidate tries (``prefix_trie``), KV-cache assembly and the transformers adapters
(``kv_cache``), batch sizing (``batch_sizing``), the decoding loop (``hf_decoding``), answer and
continuation scoring (``hf_scoring``, ``choice_scoring``). This module loads the model and the
tokenizer and renders prompts.

Why prefix reuse: every variant of a FramingQA context repeats the chat header and the context
text, and only the question differs, so each context's shared token prefix is computed once.

Greedy decoding is set explicitly on a fresh ``GenerationConfig``, and the model's own
``generation_config`` is replaced by a neutral one (transformers fills unset fields from it): only
its special-token ids (eos/pad/bos) are kept, never its sampling defaults (temperature, top_p,
repetition penalty, max length, ...).
"""

from __future__ import annotations

import logging

from framebench.backends import cpu_attention
from framebench.backends.base import Chat
from framebench.backends.hf_decoding import BatchedDecoding
from framebench.backends.hf_scoring import AnswerScoring
from framebench.backends.model_fingerprint import (
    LocalModelFingerprint,
    resolve_model_dir,
    text_sha256,
)
from framebench.errors import UserError

log = logging.getLogger(__name__)

CALL_SIZE_GPU = 4096  # jobs per generate() call the runner should send on GPUs (CPUs: the runner's default)
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")  # CPU instructions that multiply bfloat16 natively


def cpu_bf16_flags() -> set[str]:
    """The CPU's native bfloat16 instructions (Linux /proc/cpuinfo; empty elsewhere)."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8").read()  # noqa: SIM115
    except OSError:
        return set()
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return set(flags) & set(CPU_BF16_FLAGS)


class HFBackend(LocalModelFingerprint, BatchedDecoding, AnswerScoring):
    """Greedy generation and answer scoring with a local (or hub) transformers causal LM."""

    engine = "hf"

    def __init__(self, path: str, spec: str | None = None, batch_size: int | str = "auto",
                 device: str | None = None, dtype: str | None = None, prefix_reuse: bool = True,
                 prefix_trie: bool | None = None, mix_contexts: bool | None = None, loaded: tuple | None = None, **_ignored: object):
        import torch
        from transformers import AutoTokenizer

        self.spec = spec or f"hf:{path}"
        self.path = path
        self.model_dir = resolve_model_dir(path) if loaded is None else None
        if isinstance(batch_size, str) and batch_size != "auto":
            batch_size = int(batch_size)
        if isinstance(batch_size, int) and batch_size < 1:
            raise UserError(f"--batch-size must be a positive integer or 'auto', got {batch_size}")
        self.batch_size = batch_size
        self.prefix_reuse = prefix_reuse
        # every prefix some of a group's prompts share once (a prefix trie), not only the one all
        # share: None (default) for scoring, and for generation on CPUs; True or False for both
        self.prefix_trie = prefix_trie if prefix_reuse else False
        # next-token log-probabilities of the one-token answer forms (Yes/No, letters) seen at
        # each generation's first step, by prompt: a constrained run on the same backend (the
        # demo's) reads them instead of running those prompts again
        self._first_step: dict[tuple[int, ...], dict[int, float]] = {}
        self.mix_contexts = mix_contexts
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self._dtype = getattr(torch, dtype) if dtype else (torch.float32 if self.device.type == "cpu" else "auto")
        self.call_size = CALL_SIZE_GPU if self.device.type == "cuda" else None  # None: the runner's default
        if self.device.type == "cpu" and dtype in ("bfloat16", "float16") and not cpu_bf16_flags():
            log.warning("%s on a CPU without %s: usually slower than float32 here (docs/speed.md, \"CPU bfloat16\")",
                        dtype, " or ".join(CPU_BF16_FLAGS))
        try:
            if loaded is not None:  # an already-loaded (model, tokenizer), see ``from_loaded``
                self._preloaded, self.tokenizer = loaded
            else:
                self._preloaded = None
                self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        except (OSError, ValueError) as exc:
            raise UserError(f"{path}: cannot load the tokenizer ({' '.join(str(exc).split())[:300]})") from None
        if not getattr(self.tokenizer, "chat_template", None):
            raise UserError(f"{path}: the tokenizer has no chat template")
        self.tokenizer.padding_side = "left"
        # The weights load on first use (``model``): a resumed run whose every answer is already in
        # the result store needs only the fingerprint (weights hashes + chat template).
        self._model = None
        self._template_kwargs = (
            {"enable_thinking": False} if "enable_thinking" in self.tokenizer.chat_template else {}
        )
        self.chat_template_hash = text_sha256(self.tokenizer.chat_template)
        self._fingerprint: str | None = None
    @property
    def model(self):
        """The transformers model, loaded (once) on first use."""
        if self._model is None:
            self._load_model()
        return self._model
    @property
    def loaded(self) -> bool:
        return self._model is not None
    def _load_model(self) -> None:
        from transformers import AutoModelForCausalLM, GenerationConfig

        log.info("loading %s", self.model_dir)
        from framebench.console import is_terminal

        if not is_terminal():  # no weight-loading bar in log files
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        try:
            model = (self._preloaded if self._preloaded is not None
                     else AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=self._dtype))
        except (OSError, ValueError) as exc:
            raise UserError(f"{self.path}: cannot load the model ({' '.join(str(exc).split())[:300]})") from None
        model.to(self.device).eval()
        if cpu_attention.use_grouped_sdpa(model):
            log.debug("grouped-query attention without copied keys (%s)", cpu_attention.NAME)
        gen = model.generation_config
        eos = gen.eos_token_id if gen.eos_token_id is not None else self.tokenizer.eos_token_id
        self._eos_ids: list[int] = [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None]
        pad = gen.pad_token_id if gen.pad_token_id is not None else self.tokenizer.pad_token_id
        self._pad_id: int = pad if pad is not None else (self._eos_ids[0] if self._eos_ids else 0)
        self._bos_id = gen.bos_token_id
        # generate() fills every field our config leaves unset from model.generation_config, so
        # replace that with a neutral one: only the special-token ids survive.
        model.generation_config = GenerationConfig(
            eos_token_id=self._eos_ids or None, pad_token_id=self._pad_id, bos_token_id=self._bos_id)
        self._model = model
    @property
    def eos_ids(self) -> list[int]:
        self.model  # noqa: B018 - loads the model, which defines the special-token ids
        return self._eos_ids
    @property
    def pad_id(self) -> int:
        self.model  # noqa: B018
        return self._pad_id
    @property
    def bos_id(self):
        self.model  # noqa: B018
        return self._bos_id
    @classmethod
    def from_loaded(cls, model, tokenizer, spec: str, fingerprint: str, **options) -> HFBackend:
        """A backend around a model already in memory (e.g. bench/engines.py's random-initialised
        shapes), identified by the caller's ``fingerprint`` instead of a weights hash."""
        backend = cls(spec, spec=spec, loaded=(model, tokenizer), **options)
        backend._fingerprint = fingerprint
        return backend

    # ---- fingerprint and weights hash (model_fingerprint.LocalModelFingerprint) ------------------
    def info(self) -> dict[str, str]:
        """Extra run.json fields (``model_info``)."""
        if self.model_dir is None:
            return {"chat_template_hash": self.chat_template_hash, "fingerprint": self.fingerprint()}
        return {"weights_sha256": self.weights_hash(), "chat_template_hash": self.chat_template_hash,
                "model_dir": str(self.model_dir)}

    # ---- prompts --------------------------------------------------------------------------
    def render(self, chat: Chat) -> str:
        """The chat as the model sees it (its own template, generation prompt appended)."""
        return self.tokenizer.apply_chat_template(
            chat, tokenize=False, add_generation_prompt=True, **self._template_kwargs)

    def encode(self, chat: Chat) -> list[int]:
        # The template already holds the special tokens; do not add a second BOS.
        return self.tokenizer(self.render(chat), add_special_tokens=False)["input_ids"]

    def count(self, text: str) -> int:
        """Tokens of a piece of generated text."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
