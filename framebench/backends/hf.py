"""``hf:`` backend: a transformers causal LM with greedy decoding and shared-prefix KV reuse.

Why prefix reuse: every variant of a FramingQA context repeats the chat header and the context
text, and only the question differs. ``generate`` tokenizes each chat in full, groups chats that
share a long token prefix (sorting the token sequences puts them next to each other), runs that
prefix through the model once, and decodes every member's suffix from a copy of the prefix's
``DynamicCache``. Splitting happens on token ids, never by re-tokenizing a prefix string, so BPE
merges across the boundary cannot change what the model sees.

Suffixes of different lengths are batched by inserting pad tokens *between* the prefix and the
suffix with attention mask 0; transformers derives position ids from the mask's cumulative sum, so
every real token keeps the position it has in the unpadded prompt. ``generate_naive`` (one chat at a
time, no cache, no padding) is the reference these outputs are tested against.

Greedy decoding is set explicitly on a fresh ``GenerationConfig``, and the model's own
``generation_config`` is replaced by a neutral one (transformers fills unset fields from it): only
its special-token ids (eos/pad/bos) are kept, never its sampling defaults (temperature, top_p,
repetition penalty, max length, ...).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path

from framebench.backends.base import Chat, Decoding
from framebench.errors import UserError

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
MIN_SHARED_PREFIX = 16  # tokens; shorter shared prefixes are not worth a separate forward pass
AUTO_KV_BUDGET_BYTES = 2 << 30  # "auto" batch size: KV cache rows that fit in ~2 GiB
AUTO_MAX_BATCH = 64
# Cost of one extra forward pass, in prompt-token equivalents, when choosing length buckets.
FORWARD_OVERHEAD_TOKENS_CPU = 16
FORWARD_OVERHEAD_TOKENS_GPU = 256


def _fingerprint_cache_file() -> Path:
    from framebench.backends.smollm2 import cache_root

    return cache_root() / "weight-hashes.json"


def weights_hashes(model_dir: str | Path) -> dict[str, str]:
    """sha256 of each weights file in a model folder, cached by (path, size, mtime)."""
    from framebench.runinfo import file_sha256, write_json_atomic

    model_dir = Path(model_dir)
    files = sorted(p for p in model_dir.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not files:
        raise UserError(f"{model_dir}: no weights files ({', '.join(WEIGHT_SUFFIXES)}) found")
    cache_file = _fingerprint_cache_file()
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    hashes: dict[str, str] = {}
    changed = False
    for path in files:
        st = path.stat()
        key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        if key not in cache:
            cache[key] = file_sha256(path)
            changed = True
        hashes[path.name] = cache[key]
    if changed:
        try:
            write_json_atomic(cache, cache_file)
        except OSError:  # a read-only cache only costs re-hashing next time
            pass
    return hashes


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def group_by_shared_prefix(seqs: list[list[int]], min_prefix: int = MIN_SHARED_PREFIX,
                           group_overhead: int = 0) -> list[tuple[int, list[int]]]:
    """Cluster sequences that share a token prefix: ``[(prefix_len, member indices), ...]``.

    Sorting puts sequences that share a prefix next to each other. A sorted run is served either
    as one prefix group (prefix = the smallest common prefix of neighbours, prefilled once), as
    plain rows without a prefix, or split where that common prefix is smallest, whichever costs
    least: prefilled tokens, plus ``group_overhead`` token-equivalents for every prefix group
    (a group decodes in its own batches, so long generations favour fewer, larger batches).
    Prefixes shorter than ``min_prefix`` are never used. All rows without a prefix form one
    group ``(0, members)``. A prefix always leaves each member at least one suffix token.
    """
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    adjacent = [min(_common_prefix_len(seqs[a], seqs[b]), len(seqs[a]) - 1, len(seqs[b]) - 1)
                for a, b in pairwise(order)]

    def solve(lo: int, hi: int) -> tuple[int, list[tuple[int, list[int]]]]:
        run = order[lo:hi]
        best = sum(len(seqs[i]) for i in run), [(0, run)]
        if len(run) == 1:
            return best
        shared = min(adjacent[lo:hi - 1])
        if shared >= min_prefix:
            whole = shared + sum(len(seqs[i]) - shared for i in run) + group_overhead
            if whole < best[0]:
                best = whole, [(shared, run)]
        cuts = [k + 1 for k in range(lo, hi - 1) if adjacent[k] == shared]
        cost, groups = 0, []
        for a, b in pairwise([lo, *cuts, hi]):
            c, g = solve(a, b)
            cost, groups = cost + c, groups + g
        return (cost, groups) if cost < best[0] else best

    if not seqs:
        return []
    groups = solve(0, len(order))[1]
    plain = sorted(i for prefix, members in groups if prefix == 0 for i in members)
    return [(p, m) for p, m in groups if p > 0] + ([(0, plain)] if plain else [])


class HFBackend:
    """Greedy generation with a local (or hub) transformers causal LM."""

    def __init__(self, path: str, spec: str | None = None, batch_size: int | str = "auto",
                 device: str | None = None, dtype: str | None = None, prefix_reuse: bool = True,
                 **_ignored: object):
        import torch
        from transformers import AutoTokenizer

        self.spec = spec or f"hf:{path}"
        self.path = path
        self.model_dir = self._resolve_dir(path)
        if isinstance(batch_size, str) and batch_size != "auto":
            batch_size = int(batch_size)
        if isinstance(batch_size, int) and batch_size < 1:
            raise UserError(f"--batch-size must be a positive integer or 'auto', got {batch_size}")
        self.batch_size = batch_size
        self.prefix_reuse = prefix_reuse
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self._dtype = getattr(torch, dtype) if dtype else (torch.float32 if self.device.type == "cpu" else "auto")
        try:
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
            model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=self._dtype)
        except (OSError, ValueError) as exc:
            raise UserError(f"{self.path}: cannot load the model ({' '.join(str(exc).split())[:300]})") from None
        model.to(self.device).eval()
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

    @staticmethod
    def _resolve_dir(path: str) -> Path:
        local = Path(path).expanduser()
        if local.is_dir():
            if not (local / "config.json").exists():
                raise UserError(f"{path}: not a model folder (no config.json)")
            return local
        if local.exists() or path.startswith((".", "/", "~")):
            raise UserError(f"{path}: not a model folder")
        try:  # a hub id: fetch (or reuse) the snapshot so the weights can be hashed
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(path, allow_patterns=[
                "*.json", "*.safetensors", "*.jinja", "*.model", "*.txt", "*.tiktoken"]))
        except Exception as exc:  # hub errors come in many types; all mean "cannot get it"
            raise UserError(f"{path}: not a local folder and not downloadable from the hub ({exc})") from None

    # ---- identity -------------------------------------------------------------------------
    def weights_hash(self) -> str:
        return text_sha256(json.dumps(weights_hashes(self.model_dir), sort_keys=True))

    def fingerprint(self) -> str:
        """Weights hash and chat-template hash, both of which change what the model answers."""
        if self._fingerprint is None:
            self._fingerprint = f"hf:weights={self.weights_hash()}:template={self.chat_template_hash}"
        return self._fingerprint

    def info(self) -> dict[str, str]:
        """Extra identity fields for run.json."""
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

    def _generation_config(self, decoding: Decoding):
        from transformers import GenerationConfig

        sampling = decoding.temperature > 0
        return GenerationConfig(
            max_new_tokens=decoding.max_new_tokens,
            do_sample=sampling,
            temperature=decoding.temperature if sampling else None,
            top_p=None, top_k=None,
            num_beams=1,
            eos_token_id=self.eos_ids or None,
            pad_token_id=self.pad_id,
            bos_token_id=self.bos_id,
            stop_strings=list(decoding.stop) or None,
        )

    def _decode(self, new_tokens: Sequence[int], decoding: Decoding) -> str:
        tokens = list(new_tokens)
        for i, tok in enumerate(tokens):
            if tok in self.eos_ids:
                tokens = tokens[:i]
                break
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        for stop in decoding.stop:
            cut = text.find(stop)
            if cut >= 0:
                text = text[:cut]
        return text

    # ---- generation -----------------------------------------------------------------------
    def generate_naive(self, chats: list[Chat], decoding: Decoding) -> list[str]:
        """Reference path: one chat at a time, full prompt, no padding, no shared cache."""
        import torch

        config = self._generation_config(decoding)
        outputs = []
        with torch.inference_mode():
            for chat in chats:
                ids = torch.tensor([self.encode(chat)], device=self.device)
                out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                          generation_config=config, tokenizer=self.tokenizer)
                outputs.append(self._decode(out[0, ids.shape[1]:].tolist(), decoding))
        return outputs

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        """One completion per chat, in order. ``on_batch(indices, texts)`` fires per finished batch."""
        import torch

        if not chats:
            return []
        seqs = [self.encode(chat) for chat in chats]
        config = self._generation_config(decoding)
        results: list[str | None] = [None] * len(chats)
        overhead = self._forward_overhead() * (1 + decoding.max_new_tokens)
        groups = (group_by_shared_prefix(seqs, group_overhead=overhead) if self.prefix_reuse
                  else [(0, list(range(len(seqs))))])
        log.debug("%d chats in %d shared-prefix groups (prefix lengths %s)", len(chats), len(groups),
                  [p for p, _ in groups])
        with torch.inference_mode():
            for prefix_len, members in groups:
                for idx, texts in self._generate_group(seqs, prefix_len, members, config, decoding):
                    for i, text in zip(idx, texts, strict=True):
                        results[i] = text
                    if on_batch is not None:
                        on_batch(idx, texts)
        return [r if r is not None else "" for r in results]

    def _batch_limit(self, total_len: int) -> int:
        if self.batch_size != "auto":
            return int(self.batch_size)
        cfg = self.model.config
        layers = getattr(cfg, "num_hidden_layers", 24)
        heads = getattr(cfg, "num_key_value_heads", None) or getattr(cfg, "num_attention_heads", 16)
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        per_row = 2 * layers * heads * head_dim * self.model.dtype.itemsize * max(total_len, 1)
        budget = AUTO_KV_BUDGET_BYTES
        if self.device.type == "cuda":
            import torch

            budget = max(budget, int(torch.cuda.mem_get_info(self.device)[0] * 0.5))
        return max(1, min(AUTO_MAX_BATCH, budget // per_row))

    def _generate_group(self, seqs, prefix_len, members, config, decoding):
        """Yield (indices, texts) per batch for one shared-prefix group."""
        import torch
        from transformers import DynamicCache

        prefix_cache = None
        if prefix_len > 0:
            prefix = torch.tensor([seqs[members[0]][:prefix_len]], device=self.device)
            prefix_cache = DynamicCache(config=self.model.config)
            self.model(input_ids=prefix, cache=prefix_cache, use_cache=True, logits_to_keep=1)
        longest = max(len(seqs[i]) for i in members) + decoding.max_new_tokens
        for batch in self._length_buckets(seqs, prefix_len, members, decoding, self._batch_limit(longest)):
            cache = copy.deepcopy(prefix_cache) if prefix_cache is not None else DynamicCache(config=self.model.config)
            if prefix_cache is not None and len(batch) > 1:
                cache.batch_repeat_interleave(len(batch))
            if decoding.temperature > 0:
                texts = self._sample_batch(seqs, prefix_len, batch, cache, config, decoding)
            else:
                texts = self._greedy_batch(seqs, prefix_len, batch, cache, decoding)
            yield batch, texts

    def _forward_overhead(self) -> int:
        return FORWARD_OVERHEAD_TOKENS_GPU if self.device.type == "cuda" else FORWARD_OVERHEAD_TOKENS_CPU

    def _length_buckets(self, seqs, prefix_len, members, decoding, limit) -> list[list[int]]:
        """Split members (sorted by suffix length) into batches minimising padded suffix tokens plus
        a per-forward overhead (in token equivalents: small on CPU, large on GPUs), by dynamic
        programming over the split points."""
        ordered = sorted(members, key=lambda i: (len(seqs[i]), i))
        lengths = [len(seqs[i]) - prefix_len for i in ordered]
        overhead = self._forward_overhead() * (1 + decoding.max_new_tokens)
        n = len(ordered)
        best = [0.0] + [float("inf")] * n
        cut = [0] * (n + 1)
        for j in range(1, n + 1):
            for i in range(max(0, j - limit), j):
                cost = best[i] + (j - i) * lengths[j - 1] + overhead
                if cost < best[j]:
                    best[j], cut[j] = cost, i
        batches, j = [], n
        while j > 0:
            batches.append(ordered[cut[j]:j])
            j = cut[j]
        return batches[::-1]

    def _suffix_inputs(self, seqs, prefix_len, batch):
        """Suffix ids padded on the left (between prefix and suffix), the full attention mask, and
        position ids that continue the prefix for every real token."""
        import torch

        suffixes = [seqs[i][prefix_len:] for i in batch]
        width = max(len(s) for s in suffixes)
        ids = [[self.pad_id] * (width - len(s)) + s for s in suffixes]
        mask = [[1] * prefix_len + [0] * (width - len(s)) + [1] * len(s) for s in suffixes]
        ids_t = torch.tensor(ids, device=self.device)
        mask_t = torch.tensor(mask, device=self.device)
        positions = (mask_t.cumsum(-1) - 1).clamp(min=0)[:, prefix_len:]
        return ids_t, mask_t, positions

    def _greedy_batch(self, seqs, prefix_len, batch, cache, decoding) -> list[str]:
        """Greedy decoding that drops finished rows from the batch (and the cache) at once."""
        import torch

        ids, mask, positions = self._suffix_inputs(seqs, prefix_len, batch)
        eos = torch.tensor(self.eos_ids or [-1], device=self.device)
        generated: list[list[int]] = [[] for _ in batch]
        alive = list(range(len(batch)))
        logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache,
                            use_cache=True, logits_to_keep=1).logits[:, -1, :]
        next_pos = positions[:, -1:] + 1
        for step in range(decoding.max_new_tokens):
            tokens = logits.float().argmax(-1)
            finished = torch.isin(tokens, eos).tolist()
            keep = []
            for row, (tok, done) in enumerate(zip(tokens.tolist(), finished, strict=True)):
                generated[alive[row]].append(tok)
                if not done and step + 1 < decoding.max_new_tokens and not self._hit_stop(
                        generated[alive[row]], decoding):
                    keep.append(row)
            if not keep:
                break
            if len(keep) < len(alive):
                index = torch.tensor(keep, device=self.device)
                cache.batch_select_indices(index)
                tokens, mask, next_pos = tokens[index], mask[index], next_pos[index]
                alive = [alive[r] for r in keep]
            mask = torch.cat([mask, mask.new_ones((len(alive), 1))], dim=-1)
            logits = self.model(input_ids=tokens[:, None], attention_mask=mask, position_ids=next_pos,
                                cache=cache, use_cache=True).logits[:, -1, :]
            next_pos = next_pos + 1
        return [self._decode(toks, decoding) for toks in generated]

    def _hit_stop(self, tokens: list[int], decoding: Decoding) -> bool:
        if not decoding.stop:
            return False
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return any(stop in text for stop in decoding.stop)

    def _sample_batch(self, seqs, prefix_len, batch, cache, config, decoding) -> list[str]:
        """Sampling (temperature > 0) goes through transformers' generate."""
        import torch

        ids, mask, _ = self._suffix_inputs(seqs, prefix_len, batch)
        prefix = torch.tensor([seqs[batch[0]][:prefix_len]] * len(batch), device=self.device,
                              dtype=ids.dtype).reshape(len(batch), prefix_len)
        full = torch.cat([prefix, ids], dim=-1)
        out = self.model.generate(input_ids=full, attention_mask=mask, cache=cache, generation_config=config,
                                  tokenizer=self.tokenizer)
        return [self._decode(toks, decoding) for toks in out[:, full.shape[1]:].tolist()]

    # ---- scoring --------------------------------------------------------------------------
    def next_token_logprobs(self, chats: list[Chat], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Log-probability of each candidate's first token as the next token after each prompt
        (a parse-free check, e.g. candidates ("Yes", "No") or ("A", "B", "C", "D"))."""
        import torch

        cand_ids = {}
        for cand in candidates:
            ids = self.tokenizer(cand, add_special_tokens=False)["input_ids"]
            if not ids:
                raise ValueError(f"candidate {cand!r} encodes to no tokens")
            cand_ids[cand] = ids[0]
        results = []
        with torch.inference_mode():
            for chat in chats:
                ids = torch.tensor([self.encode(chat)], device=self.device)
                logits = self.model(input_ids=ids).logits[0, -1].float()
                logp = torch.log_softmax(logits, dim=-1)
                results.append({c: float(logp[t]) for c, t in cand_ids.items()})
        return results

