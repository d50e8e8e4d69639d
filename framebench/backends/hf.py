"""``hf:`` backend: a transformers causal LM with greedy decoding and shared-prefix KV reuse.

Why prefix reuse: every variant of a FramingQA context repeats the chat header and the context
text, and only the question differs. ``generate`` tokenizes each chat in full, groups chats that
share a long token prefix (sorting the token sequences puts them next to each other), runs that
prefix through the model once, and decodes every member's suffix from a copy of the prefix's
``DynamicCache``. Splitting happens on token ids, never by re-tokenizing a prefix string, so BPE
merges across the boundary cannot change what the model sees.

Suffixes of different lengths are batched by inserting pad tokens *between* the prefix and the
suffix with attention mask 0; transformers derives position ids from the mask's cumulative sum, so
every real token keeps the position it has in the unpadded prompt. On GPUs one batch also holds rows
of *different* contexts: each row's prefix keys/values are left-padded (mask 0) to the batch's
longest prefix, and the same mask-derived positions keep every row's own numbering. The batch's
cache has room reserved for the suffix and the new tokens, so decoding writes in place. On CPUs
batches stay within one context (no attention over padding). ``generate_naive`` (one chat at a
time, no cache, no padding) is the reference these outputs are tested against.

Greedy decoding is set explicitly on a fresh ``GenerationConfig``, and the model's own
``generation_config`` is replaced by a neutral one (transformers fills unset fields from it): only
its special-token ids (eos/pad/bos) are kept, never its sampling defaults (temperature, top_p,
repetition penalty, max length, ...).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path

from framebench.backends.base import Chat, Decoding, decode_until_stop
from framebench.backends.choice_scoring import common_prefix_len
from framebench.errors import UserError

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
FIRST_STEP_MEMORY = 1 << 18  # prompts whose first-step answer log-probabilities are kept
MIN_SHARED_PREFIX = 16  # tokens; shorter shared prefixes are not worth a separate forward pass
AUTO_KV_BUDGET_BYTES = 2 << 30  # "auto" batch size: KV cache rows that fit in ~2 GiB
AUTO_MAX_BATCH = 64  # CPUs only; on GPUs "auto" is bounded by free device memory alone
GPU_MEMORY_FRACTION = 0.8  # share of the free device memory "auto" may plan for
GPU_SYNC_EVERY = 4  # decoding steps between host checks for finished rows on GPUs
CALL_SIZE_GPU = 4096  # jobs per generate() call the runner should send on GPUs (CPUs: the runner's default)
# Cost of one extra forward pass, in prompt-token equivalents, when choosing length buckets.
FORWARD_OVERHEAD_TOKENS_CPU = 16
FORWARD_OVERHEAD_TOKENS_GPU = 256


def _fingerprint_cache_file() -> Path:
    from framebench.backends.smollm2 import cache_root

    return cache_root() / "weight-hashes.json"


def engine_fingerprint(engine: str, weights_hash: str, template_hash: str) -> str:
    """What a local model's answers depend on: the engine, its weights and its chat template."""
    return f"{engine}:weights={weights_hash}:template={template_hash}"


def model_weights_hash(model_dir: str | Path) -> str:
    """One hash over every weight file of a local model folder."""
    return text_sha256(json.dumps(weights_hashes(model_dir), sort_keys=True))


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
    adjacent = [min(common_prefix_len(seqs[a], seqs[b]), len(seqs[a]) - 1, len(seqs[b]) - 1)
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


@functools.cache
def _reserved_layer_class():
    from transformers.cache_utils import DynamicLayer

    class ReservedLayer(DynamicLayer):
        """A full-attention cache layer over a buffer with room for the tokens still to come:
        ``update`` writes in place (a view grows) instead of concatenating the whole cache each step."""

        _layer_type = None  # never registered as a layer type

        def __init__(self, keys, values, length: int):
            super().__init__()
            self._keys, self._values = keys, values
            self.device, self.dtype, self.is_initialized = keys.device, keys.dtype, True
            self.keys, self.values = keys[:, :, :length], values[:, :, :length]

        def update(self, key_states, value_states, *args, **kwargs):
            start = self.keys.shape[-2]
            end = start + key_states.shape[-2]
            if end > self._keys.shape[-2]:  # out of room: grow (not expected when sized right)
                extra = end - self._keys.shape[-2]
                self._keys = torch_cat_zeros(self._keys, extra)
                self._values = torch_cat_zeros(self._values, extra)
            self._keys[:, :, start:end] = key_states
            self._values[:, :, start:end] = value_states
            self.keys, self.values = self._keys[:, :, :end], self._values[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices) -> None:
            length = self.keys.shape[-2]
            self._keys, self._values = self._keys[indices], self._values[indices]
            self.keys, self.values = self._keys[:, :, :length], self._values[:, :, :length]

        def batch_repeat_interleave(self, repeats: int) -> None:
            length = self.keys.shape[-2]
            self._keys = self._keys.repeat_interleave(repeats, dim=0)
            self._values = self._values.repeat_interleave(repeats, dim=0)
            self.keys, self.values = self._keys[:, :, :length], self._values[:, :, :length]

    return ReservedLayer


def torch_cat_zeros(buffer, extra: int):
    """``buffer`` with ``extra`` zero slots appended along the sequence axis."""
    import torch

    pad = buffer.new_zeros(buffer.shape[:2] + (extra,) + buffer.shape[3:])
    return torch.cat([buffer, pad], dim=-2)


def _filled_layer(keys, values):
    from transformers.cache_utils import DynamicLayer

    layer = DynamicLayer()
    layer.update(keys, values)
    return layer


class HFBackend:
    """Greedy generation with a local (or hub) transformers causal LM."""

    def __init__(self, path: str, spec: str | None = None, batch_size: int | str = "auto",
                 device: str | None = None, dtype: str | None = None, prefix_reuse: bool = True,
                 mix_contexts: bool | None = None, loaded: tuple | None = None, **_ignored: object):
        import torch
        from transformers import AutoTokenizer

        self.spec = spec or f"hf:{path}"
        self.path = path
        self.model_dir = self._resolve_dir(path) if loaded is None else None
        if isinstance(batch_size, str) and batch_size != "auto":
            batch_size = int(batch_size)
        if isinstance(batch_size, int) and batch_size < 1:
            raise UserError(f"--batch-size must be a positive integer or 'auto', got {batch_size}")
        self.batch_size = batch_size
        self.prefix_reuse = prefix_reuse
        # next-token log-probabilities of the one-token answer forms (Yes/No, letters) seen at
        # each generation's first step, by prompt: a constrained run on the same backend (the
        # demo's) reads them instead of running those prompts again
        self._first_step: dict[tuple[int, ...], dict[int, float]] = {}
        self.mix_contexts = mix_contexts
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self._dtype = getattr(torch, dtype) if dtype else (torch.float32 if self.device.type == "cpu" else "auto")
        self.call_size = CALL_SIZE_GPU if self.device.type == "cuda" else None  # None: the runner's default
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
        return model_weights_hash(self.model_dir)

    def fingerprint(self) -> str:
        """Weights hash and chat-template hash, both of which change what the model answers."""
        if self._fingerprint is None:
            self._fingerprint = engine_fingerprint("hf", self.weights_hash(), self.chat_template_hash)
        return self._fingerprint

    def info(self) -> dict[str, str]:
        """Extra identity fields for run.json."""
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
        return decode_until_stop(self.tokenizer, new_tokens, self.eos_ids, decoding.stop)

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
        mix = self._mixes_contexts()
        # A prefix group costs one prefill forward; without mixing it also decodes in its own batches.
        overhead = self._forward_overhead() * (1 if mix else 1 + decoding.max_new_tokens)
        groups = (group_by_shared_prefix(seqs, group_overhead=overhead) if self.prefix_reuse
                  else [(0, list(range(len(seqs))))])
        log.debug("%d chats in %d shared-prefix groups (prefix lengths %s)", len(chats), len(groups),
                  [p for p, _ in groups])
        with torch.inference_mode():
            for idx, texts in self._run_batches(seqs, groups, mix, config, decoding):
                for i, text in zip(idx, texts, strict=True):
                    results[i] = text
                if on_batch is not None:
                    on_batch(idx, texts)
        return [r if r is not None else "" for r in results]

    def _mixes_contexts(self) -> bool:
        """Whether one batch may hold rows of different prefix groups (each row decoding from its own
        group's prefix cache, left-padded to the batch's longest prefix). On by default on GPUs, where
        large batches pay; off on CPUs, where per-group batches avoid attending over padding."""
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        full_attention = all(type(layer) is DynamicLayer for layer in DynamicCache(config=self.model.config).layers)
        if not full_attention:  # sliding-window layers keep no left-padded prefix: per-group batches
            return False
        return self.mix_contexts if self.mix_contexts is not None else self.device.type == "cuda"

    def _run_batches(self, seqs, groups, mix, config, decoding, gather: list[int] | None = None):
        """Yield (indices, texts) per batch. Prefix caches are prefilled when first needed and freed
        after their group's last batch. With ``gather`` (token ids) nothing is decoded: each batch
        yields, per row, the log-probabilities of those tokens as the sequence's next token."""
        prefix_of = {i: p for p, members in groups for i in members}
        group_of = {i: g for g, (_, members) in enumerate(groups) for i in members}
        if mix:
            rows = [i for _, members in groups for i in members]
            width = max(len(seqs[i]) - prefix_of[i] for i in rows)
            longest = max(p for p, _ in groups) + width + decoding.max_new_tokens
            batches = self._length_buckets(seqs, prefix_of, rows, decoding,
                                           self._batch_limit(longest, width, groups))
        else:
            batches = []
            for prefix_len, members in groups:
                longest = max(len(seqs[i]) for i in members) + decoding.max_new_tokens
                width = max(len(seqs[i]) for i in members) - prefix_len
                batches += self._length_buckets(seqs, prefix_len, members, decoding,
                                                self._batch_limit(longest, width))
        remaining = [len(members) for _, members in groups]
        prefixes: dict[int, object] = {}
        for batch in batches:
            for g in {group_of[i] for i in batch}:
                if g not in prefixes and groups[g][0] > 0:
                    prefixes[g] = self._prefill(seqs[groups[g][1][0]][:groups[g][0]])
            cache = self._batch_cache(prefixes, [group_of[i] for i in batch], [prefix_of[i] for i in batch],
                                      reserve=0 if decoding.temperature > 0 else
                                      max(len(seqs[i]) - prefix_of[i] for i in batch) + decoding.max_new_tokens)
            if gather is not None:
                texts = self._next_logprobs_batch(seqs, prefix_of, batch, cache, gather)
            elif decoding.temperature > 0:
                texts = self._sample_batch(seqs, prefix_of, batch, cache, config, decoding)
            else:
                texts = self._greedy_batch(seqs, prefix_of, batch, cache, decoding)
            del cache
            for i in batch:
                remaining[group_of[i]] -= 1
                if remaining[group_of[i]] == 0:
                    prefixes.pop(group_of[i], None)
            yield batch, texts

    def _prefill(self, prefix_ids: list[int]):
        """Run one shared prefix through the model; returns its ``DynamicCache`` (batch of 1)."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        ids = torch.tensor([prefix_ids], device=self.device)
        self.model(input_ids=ids, cache=cache, use_cache=True, logits_to_keep=1)
        return cache

    def _batch_cache(self, prefixes, row_groups: list[int], row_prefix: list[int], reserve: int):
        """A cache for one batch: row r holds its group's prefix keys/values, left-padded with zeros
        (attention mask 0) to the batch's longest prefix. With ``reserve`` > 0 every layer gets room
        for that many more tokens, so decoding writes in place instead of concatenating per step."""
        import torch
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        cache = DynamicCache(config=self.model.config)
        pmax = max(row_prefix)
        if pmax == 0 and not reserve:
            return cache
        plain = all(type(layer) is DynamicLayer for layer in cache.layers)
        if not plain:  # sliding-window or other layer kinds: only whole-group batches (no mixing)
            if len(set(row_groups)) > 1 and pmax > 0:
                raise RuntimeError("mixing prefix groups in one batch needs full-attention cache layers")
            if pmax == 0:
                return cache
            cache = copy.deepcopy(prefixes[row_groups[0]])
            if len(row_groups) > 1:
                cache.batch_repeat_interleave(len(row_groups))
            return cache
        rows_of: dict[int, list[int]] = {}
        for r, g in enumerate(row_groups):
            if row_prefix[r] > 0:
                rows_of.setdefault(g, []).append(r)
        reserved = _reserved_layer_class()
        batch, room = len(row_groups), pmax + reserve
        for layer_idx in range(len(cache.layers)):
            if rows_of:
                ref = prefixes[next(iter(rows_of))].layers[layer_idx]
                k_shape, v_shape = ref.keys.shape, ref.values.shape
            else:  # no row has a prefix
                k_shape = v_shape = self._kv_shape()
            keys = torch.zeros((batch, k_shape[1], room, k_shape[3]), dtype=self.model.dtype, device=self.device)
            values = torch.zeros((batch, v_shape[1], room, v_shape[3]), dtype=self.model.dtype, device=self.device)
            for g, rows in rows_of.items():
                layer = prefixes[g].layers[layer_idx]
                index = torch.tensor(rows, device=self.device)
                length = layer.keys.shape[-2]
                keys[index, :, pmax - length:pmax] = layer.keys.to(keys.dtype)
                values[index, :, pmax - length:pmax] = layer.values.to(values.dtype)
            cache.layers[layer_idx] = (reserved(keys, values, pmax) if reserve
                                       else _filled_layer(keys[:, :, :pmax], values[:, :, :pmax]))
        return cache

    def _kv_shape(self) -> tuple[int, int, int, int]:
        cfg = self.model.config.get_text_config(decoder=True)
        heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        return (1, heads, 0, head_dim)

    def _batch_limit(self, total_len: int, width: int | None = None, groups=None) -> int:
        """Rows per batch. A number: that. ``auto`` on CPUs: KV rows that fit in ~2 GiB, at most
        64 (today's tuning). ``auto`` on GPUs: no fixed cap; what fits in the free device memory,
        counting each row's KV cache (``total_len`` tokens), its activations while its suffix
        (``width`` tokens) is prefilled, its last-position logits, and the held prefix caches."""
        if self.batch_size != "auto":
            return int(self.batch_size)
        cfg = self.model.config.get_text_config(decoder=True)
        itemsize = self.model.dtype.itemsize
        kv_per_token = self.kv_bytes_per_token()
        per_row = kv_per_token * max(total_len, 1)
        if self.device.type != "cuda":
            return max(1, min(AUTO_MAX_BATCH, AUTO_KV_BUDGET_BYTES // per_row))
        import torch

        width = max(width or total_len, 1)
        hidden = cfg.hidden_size
        inter = getattr(cfg, "intermediate_size", 4 * hidden)
        heads = cfg.num_attention_heads
        per_row += width * (4 * hidden + 3 * inter) * itemsize  # activations of one layer's forward
        per_row += width * heads * total_len * 4  # attention scores, if the kernel materialises them
        per_row += cfg.vocab_size * (itemsize + 4)  # last-position logits and their argmax input
        free, _ = torch.cuda.mem_get_info(self.device)
        free += torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
        held = kv_per_token * sum(p for p, _ in groups or [])
        budget = int(free * GPU_MEMORY_FRACTION) - held
        return max(1, budget // per_row)

    def kv_bytes_per_token(self) -> int:
        """Bytes of key/value cache one token takes across all layers."""
        cfg = self.model.config.get_text_config(decoder=True)
        layers = getattr(cfg, "num_hidden_layers", 24)
        heads = getattr(cfg, "num_key_value_heads", None) or getattr(cfg, "num_attention_heads", 16)
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        return 2 * layers * heads * head_dim * self.model.dtype.itemsize

    def _forward_overhead(self) -> int:
        return FORWARD_OVERHEAD_TOKENS_GPU if self.device.type == "cuda" else FORWARD_OVERHEAD_TOKENS_CPU

    def _length_buckets(self, seqs, prefix_len, members, decoding, limit) -> list[list[int]]:
        """Split members (sorted by suffix length) into batches minimising padded suffix tokens plus
        a per-forward overhead (in token equivalents: small on CPU, large on GPUs), by dynamic
        programming over the split points. ``prefix_len``: one length for all, or one per row."""
        prefix_of = prefix_len if isinstance(prefix_len, dict) else dict.fromkeys(members, prefix_len)
        ordered = sorted(members, key=lambda i: (len(seqs[i]) - prefix_of[i], i))
        lengths = [len(seqs[i]) - prefix_of[i] for i in ordered]
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

    def _suffix_inputs(self, seqs, prefix_of, batch):
        """Suffix ids padded on the left (between prefix and suffix), the full attention mask (each
        row's prefix left-padded to the batch's longest prefix), and position ids that continue each
        row's own prefix for every real token."""
        import torch

        prefixes = [prefix_of[i] for i in batch]
        pmax = max(prefixes)
        suffixes = [seqs[i][p:] for i, p in zip(batch, prefixes, strict=True)]
        width = max(len(s) for s in suffixes)
        ids = [[self.pad_id] * (width - len(s)) + s for s in suffixes]
        mask = [[0] * (pmax - p) + [1] * p + [0] * (width - len(s)) + [1] * len(s)
                for p, s in zip(prefixes, suffixes, strict=True)]
        ids_t = torch.tensor(ids, device=self.device)
        mask_t = torch.tensor(mask, device=self.device)
        positions = (mask_t.cumsum(-1) - 1).clamp(min=0)[:, pmax:]
        return ids_t, mask_t, positions

    def _sync_every(self) -> int:
        """Decoding steps between host checks for finished rows: every step on CPUs (finished rows
        leave the batch at once), every few on GPUs (the device runs ahead meanwhile)."""
        return 1 if self.device.type != "cuda" else GPU_SYNC_EVERY

    def _greedy_batch(self, seqs, prefix_of, batch, cache, decoding) -> list[str]:
        """Greedy decoding; finished rows (eos, stop string) leave the batch and the cache at each
        host check. Generated tokens stay on the device until the batch ends."""
        import torch

        ids, mask, positions = self._suffix_inputs(seqs, prefix_of, batch)
        steps = decoding.max_new_tokens
        eos = torch.tensor(self.eos_ids or [-1], device=self.device)
        out = torch.full((len(batch), steps), self.pad_id, dtype=torch.long, device=self.device)
        rows = torch.arange(len(batch), device=self.device)  # batch row of each row still decoding
        unfinished = torch.ones(len(batch), dtype=torch.bool, device=self.device)
        every = self._sync_every()
        logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache,
                            use_cache=True, logits_to_keep=1).logits[:, -1, :]
        self._remember_first_step(seqs, batch, logits)
        next_pos = positions[:, -1:] + 1
        for step in range(steps):
            tokens = torch.where(unfinished, logits.argmax(-1), self.pad_id)
            out[rows, step] = tokens
            unfinished &= ~torch.isin(tokens, eos)
            if step + 1 == steps:
                break
            if (step + 1) % every == 0:
                keep = unfinished.tolist()
                if decoding.stop:
                    seen = out[rows, : step + 1].tolist()
                    keep = [k and not self._hit_stop(toks, decoding) for k, toks in zip(keep, seen, strict=True)]
                if not any(keep):
                    break
                if not all(keep):
                    index = torch.tensor([r for r, k in enumerate(keep) if k], device=self.device)
                    cache.batch_select_indices(index)
                    tokens, mask, next_pos = tokens[index], mask[index], next_pos[index]
                    rows, unfinished = rows[index], unfinished[index]
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=-1)
            logits = self.model(input_ids=tokens[:, None], attention_mask=mask, position_ids=next_pos,
                                cache=cache, use_cache=True).logits[:, -1, :]
            next_pos = next_pos + 1
        return [self._decode(toks, decoding) for toks in out.tolist()]

    def _next_logprobs_batch(self, seqs, prefix_of, batch, cache, gather: list[int]) -> list[list[float]]:
        """One forward over the batch's suffixes: log p(token | row) for each ``gather`` token."""
        import torch

        ids, mask, positions = self._suffix_inputs(seqs, prefix_of, batch)
        logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache,
                            use_cache=True, logits_to_keep=1).logits[:, -1, :]
        index = torch.tensor(gather, device=self.device)
        return torch.log_softmax(logits.float(), dim=-1)[:, index].tolist()

    @functools.cached_property
    def _answer_tokens(self) -> list[int]:
        """The one-token surface forms of the binary and MC answers (``backends.constrained``)."""
        from framebench.backends.constrained import form_token_ids
        from framebench.vocabulary import BINARY_ANSWERS, MC_ANSWERS

        return sorted({seq[0] for a in (*BINARY_ANSWERS, *MC_ANSWERS)
                       for seq in form_token_ids(self.tokenizer, a) if len(seq) == 1})

    def _remember_first_step(self, seqs, batch, logits) -> None:
        import torch

        if len(self._first_step) + len(batch) > FIRST_STEP_MEMORY:
            self._first_step.clear()
        tokens = self._answer_tokens
        rows = torch.log_softmax(logits.float(), dim=-1)[:, torch.tensor(tokens, device=logits.device)].tolist()
        for i, row in zip(batch, rows, strict=True):
            self._first_step[tuple(seqs[i])] = dict(zip(tokens, row, strict=True))

    def next_logprobs(self, seqs: list[list[int]], gather: list[int]) -> list[list[float]]:
        """``log p(t | seq)`` for each token t in ``gather``, after each token sequence, through the
        generation path's shared-prefix groups and batches (one forward per batch, no decoding).
        Sequences this backend already generated from give them from that first step."""
        import torch

        results: list[list[float]] = [[] for _ in seqs]
        todo = []
        for k, seq in enumerate(seqs):
            known = self._first_step.get(tuple(seq))
            if known is not None and all(t in known for t in gather):
                results[k] = [known[t] for t in gather]
            else:
                todo.append(k)
        seqs = [seqs[k] for k in todo]
        if not seqs:
            return results
        mix = self._mixes_contexts()
        overhead = self._forward_overhead() * (1 if mix else 2)
        groups = (group_by_shared_prefix(seqs, group_overhead=overhead) if self.prefix_reuse
                  else [(0, list(range(len(seqs))))])
        with torch.inference_mode():
            for idx, rows in self._run_batches(seqs, groups, mix, None, Decoding(max_new_tokens=1), gather):
                for i, row in zip(idx, rows, strict=True):
                    results[todo[i]] = row
        return results

    def _hit_stop(self, tokens: list[int], decoding: Decoding) -> bool:
        if not decoding.stop:
            return False
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return any(stop in text for stop in decoding.stop)

    def _sample_batch(self, seqs, prefix_of, batch, cache, config, decoding) -> list[str]:
        """Sampling (temperature > 0) goes through transformers' generate."""
        import torch

        ids, mask, _ = self._suffix_inputs(seqs, prefix_of, batch)
        pmax = max(prefix_of[i] for i in batch)
        prefix = torch.tensor([[self.pad_id] * (pmax - prefix_of[i]) + seqs[i][:prefix_of[i]] for i in batch],
                              device=self.device, dtype=ids.dtype).reshape(len(batch), pmax)
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


    # ---- constrained answers and choice scoring (framebench.backends.choice_scoring) --------
    def score_continuations(self, chats: list[Chat], continuations: list[list[str]],
                            assistant_prefixes: list[str] | None = None,
                            per_token: bool = False, states: list[dict] | None = None) -> list[list[float]]:
        """Sum of token log-probabilities of each continuation string after each chat (its template
        with the generation prompt, then ``assistant_prefixes[i]`` when given); with ``per_token``
        the sum divided by the continuation's token count. Prompt and continuation are tokenized
        separately, so every candidate is scored on the same prompt ids. ``states`` (one dict per
        chat, kept by the caller across calls) lets each chat reuse the KV cache of its previous
        prompt (a planner session whose prompt grows step by step)."""
        from framebench.backends.choice_scoring import (
            continuation_logprobs,
            continuation_logprobs_incremental,
        )

        prompts = self._scoring_prompts(chats, assistant_prefixes)
        conts = [[self._continuation_ids(c) for c in row] for row in continuations]
        if states is not None:
            self._seed_states(prompts, states)
            sums = [continuation_logprobs_incremental(self.model, p, c, s)
                    for p, c, s in zip(prompts, conts, states, strict=True)]
        else:
            sums = continuation_logprobs(self.model, prompts, conts, pad_id=self.pad_id)
        if not per_token:
            return sums
        return [[s / len(c) for s, c in zip(row, crow, strict=True)] for row, crow in zip(sums, conts, strict=True)]

    def _seed_states(self, prompts: list[list[int]], states: list[dict]) -> None:
        """Sessions without a cache yet (a planner's first step) that share a prompt prefix (the
        7 framings of an episode share tools and world text) start from one prefill of it."""
        import torch

        fresh = [k for k, state in enumerate(states) if state.get("cache") is None]
        if len(fresh) < 2:
            return
        with torch.inference_mode():
            for prefix_len, members in group_by_shared_prefix([prompts[k] for k in fresh]):
                if prefix_len == 0 or len(members) < 2:
                    continue
                prefix = prompts[fresh[members[0]]][:prefix_len]
                cache = self._prefill(prefix)
                for m in members:
                    states[fresh[m]]["cache"], states[fresh[m]]["ids"] = copy.deepcopy(cache), list(prefix)

    def answer_probabilities(self, chats: list[Chat], choices: list[Sequence[str]],
                             assistant_prefixes: list[str] | None = None) -> list[dict[str, float]]:
        """``P(answer)`` over each chat's allowed answers (definitions in backends/constrained.py)."""
        from framebench.backends.choice_scoring import continuation_logprobs
        from framebench.backends.constrained import form_token_ids, logsumexp, normalise

        forms: dict[str, list[tuple[int, ...]]] = {}
        for row in choices:
            for answer in row:
                if answer not in forms:
                    forms[answer] = form_token_ids(self.tokenizer, answer)
        prompts = self._scoring_prompts(chats, assistant_prefixes)
        conts = [[list(seq) for a in row for seq in forms[a]] for row in choices]
        # Rows whose answer forms are all one token (Yes/No and letters, usually) need only the
        # next-token distribution: the generation path's prefix groups and batches give it.
        single = [k for k, row in enumerate(conts) if all(len(c) == 1 for c in row)]
        multi = [k for k, row in enumerate(conts) if any(len(c) > 1 for c in row)]
        scores: list[list[float]] = [[] for _ in conts]
        if single:
            tokens = sorted({c[0] for k in single for c in conts[k]})
            column = {t: j for j, t in enumerate(tokens)}
            rows = self.next_logprobs([prompts[k] for k in single], tokens)
            for k, row in zip(single, rows, strict=True):
                scores[k] = [row[column[c[0]]] for c in conts[k]]
        if multi:
            found = continuation_logprobs(self.model, [prompts[k] for k in multi], [conts[k] for k in multi],
                                          pad_id=self.pad_id)
            for k, row in zip(multi, found, strict=True):
                scores[k] = row
        out = []
        for row, row_scores in zip(choices, scores, strict=True):
            masses, k = {}, 0
            for answer in row:
                n = len(forms[answer])
                masses[answer] = logsumexp(row_scores[k:k + n])
                k += n
            out.append(normalise(masses))
        return out

    def _scoring_prompts(self, chats: list[Chat], assistant_prefixes: list[str] | None) -> list[list[int]]:
        prefixes = assistant_prefixes or [""] * len(chats)
        return [self.tokenizer(self.render(chat) + prefix, add_special_tokens=False)["input_ids"]
                for chat, prefix in zip(chats, prefixes, strict=True)]

    def _continuation_ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"continuation {text!r} encodes to no tokens")
        return ids
