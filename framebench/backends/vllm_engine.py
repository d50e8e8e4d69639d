"""``vllm:`` backend: vLLM's offline ``LLM`` engine in the same process (``pip install 'framebench[vllm]'``).

vLLM batches continuously and caches shared prefixes itself (automatic prefix caching, switched on
here), so this backend only builds requests and maps outputs, the same way the ``hf:`` backend does:

* the prompt is the model's own chat template with the generation prompt appended (thinking
  switched off where the template has the switch), tokenized here and sent as token ids, so vLLM
  sees exactly the tokens ``hf:`` would feed;
* greedy (temperature 0) unless a decoding asks for sampling, the 8/16-token budgets, the model's
  eos ids as stop tokens, and the decoding's stop strings;
* the output is read from the returned token ids and cut exactly like ``hf:`` (at the first eos,
  special tokens skipped, at the first stop string).

Records and result-store keys have the same shape as for ``hf:``; the fingerprint names the engine
(``vllm:weights=...:template=...``), so results of the two engines are stored apart.

``--answer constrained`` scores each allowed answer's token sequences with vLLM's prompt logprobs
(``prompt_logprobs=0``: the log-probability of every prompt token as given): one request per
(prompt, answer form), ``prompt + form``, and the form's tokens' log-probabilities summed. The
masses and the pick follow ``framebench.backends.constrained``, as for ``hf:``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from framebench.backends.base import Chat, Decoding, decode_until_stop
from framebench.errors import UserError

CALL_SIZE = 1 << 16  # jobs per generate() call: vLLM schedules them itself
INSTALL_HINT = "pip install 'framebench[vllm]' on a machine with a CUDA GPU"


def import_vllm(spec: str):
    try:
        import vllm
    except ImportError as exc:
        raise UserError(f"{spec}: vLLM is not installed or cannot be imported ({exc}); {INSTALL_HINT}") from None
    return vllm


def _eos_ids(model_dir: Path, tokenizer: Any) -> list[int]:
    """The eos ids ``hf:`` stops at: generation_config.json's, else the tokenizer's."""
    eos = None
    try:
        eos = json.loads((model_dir / "generation_config.json").read_text()).get("eos_token_id")
    except (OSError, ValueError):
        pass
    if eos is None:
        eos = getattr(tokenizer, "eos_token_id", None)
    return [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None]


class VLLMBackend:
    """Greedy generation through vLLM's offline ``LLM``; options are passed on to ``LLM(...)``."""

    def __init__(self, path: str, spec: str | None = None, dtype: str | None = None, **llm_options: Any):
        from framebench.backends.hf import HFBackend, text_sha256

        self.spec = spec or f"vllm:{path}"
        self.path = path
        self._vllm = import_vllm(self.spec)
        self.model_dir = HFBackend._resolve_dir(path)
        options = {k: v for k, v in llm_options.items() if k not in ("batch_size", "concurrency", "base_url")}
        options.setdefault("enable_prefix_caching", True)
        options.setdefault("seed", 0)
        if dtype:
            options["dtype"] = dtype
        try:
            self.llm = self._vllm.LLM(model=str(self.model_dir), **options)
        except (OSError, ValueError, RuntimeError) as exc:
            raise UserError(f"{path}: vLLM cannot load the model ({' '.join(str(exc).split())[:300]})") from None
        self.tokenizer = self.llm.get_tokenizer()
        template = getattr(self.tokenizer, "chat_template", None)
        if not template:
            raise UserError(f"{path}: the tokenizer has no chat template")
        self._template_kwargs = {"enable_thinking": False} if "enable_thinking" in template else {}
        self.chat_template_hash = text_sha256(template)
        self.eos_ids = _eos_ids(self.model_dir, self.tokenizer)
        self.call_size = CALL_SIZE
        self._fingerprint: str | None = None

    # ---- identity -------------------------------------------------------------------------
    def weights_hash(self) -> str:
        from framebench.backends.hf import model_weights_hash

        return model_weights_hash(self.model_dir)

    def fingerprint(self) -> str:
        from framebench.backends.hf import engine_fingerprint

        if self._fingerprint is None:
            self._fingerprint = engine_fingerprint("vllm", self.weights_hash(), self.chat_template_hash)
        return self._fingerprint

    def info(self) -> dict[str, str]:
        return {"engine": "vllm", "vllm_version": str(getattr(self._vllm, "__version__", "")),
                "weights_sha256": self.weights_hash(), "chat_template_hash": self.chat_template_hash,
                "model_dir": str(self.model_dir)}

    # ---- requests and outputs -------------------------------------------------------------
    def render(self, chat: Chat) -> str:
        return self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True,
                                                  **self._template_kwargs)

    def encode(self, chat: Chat) -> list[int]:
        return list(self.tokenizer(self.render(chat), add_special_tokens=False)["input_ids"])

    def sampling_params(self, decoding: Decoding):
        sampling = decoding.temperature > 0
        return self._vllm.SamplingParams(
            n=1, temperature=decoding.temperature if sampling else 0.0, top_p=1.0, top_k=-1,
            repetition_penalty=1.0, max_tokens=decoding.max_new_tokens,
            stop=list(decoding.stop) or None, stop_token_ids=self.eos_ids or None,
            skip_special_tokens=True, seed=0 if sampling else None)

    def requests(self, chats: list[Chat]) -> list[dict[str, list[int]]]:
        """vLLM token prompts: the chat template applied and tokenized here, as ``hf:`` does."""
        return [{"prompt_token_ids": self.encode(chat)} for chat in chats]

    def output_text(self, token_ids: Sequence[int], decoding: Decoding) -> str:
        return decode_until_stop(self.tokenizer, token_ids, self.eos_ids, decoding.stop)

    def answer_probabilities(self, chats: list[Chat], choices: list[Sequence[str]],
                             assistant_prefixes: list[str] | None = None) -> list[dict[str, float]]:
        """``P(answer)`` over each chat's allowed answers (``framebench.backends.constrained``)."""
        from framebench.backends.constrained import form_token_ids, logsumexp, normalise

        forms = {a: form_token_ids(self.tokenizer, a) for row in choices for a in row}
        prefixes = assistant_prefixes or [""] * len(chats)
        prompts = [list(self.tokenizer(self.render(chat) + prefix, add_special_tokens=False)["input_ids"])
                   for chat, prefix in zip(chats, prefixes, strict=True)]
        requests, spans = [], []
        for prompt, row in zip(prompts, choices, strict=True):
            for answer in row:
                for seq in forms[answer]:
                    requests.append({"prompt_token_ids": prompt + list(seq)})
                    spans.append((len(prompt), seq))
        if not requests:
            return []
        params = self._vllm.SamplingParams(n=1, temperature=0.0, max_tokens=1, prompt_logprobs=0)
        results = self.llm.generate(requests, params, use_tqdm=False)
        if len(results) != len(requests):
            raise RuntimeError(f"{self.spec}: vLLM returned {len(results)} outputs for {len(requests)} prompts")
        scores = iter(sum(result.prompt_logprobs[start + j][token].logprob for j, token in enumerate(seq))
                      for result, (start, seq) in zip(results, spans, strict=True))
        return [normalise({a: logsumexp([next(scores) for _ in forms[a]]) for a in row}) for row in choices]

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        if not chats:
            return []
        results = self.llm.generate(self.requests(chats), self.sampling_params(decoding), use_tqdm=False)
        if len(results) != len(chats):
            raise RuntimeError(f"{self.spec}: vLLM returned {len(results)} outputs for {len(chats)} prompts")
        texts = [self.output_text(result.outputs[0].token_ids, decoding) for result in results]
        if on_batch is not None:
            on_batch(list(range(len(chats))), texts)
        return texts
