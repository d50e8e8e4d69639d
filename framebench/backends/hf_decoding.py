"""The decoding loop of ``hf:``: shared-prefix groups, batches, greedy decoding from batch caches.

``generate`` tokenizes each chat in full, groups chats that share a long token prefix
(``prefix_groups``), runs that prefix through the model once, and decodes every member's suffix
from a copy of the prefix's cache. Suffixes of different lengths are batched by inserting pad
tokens *between* the prefix and the suffix with attention mask 0; position ids come from the
mask's cumulative sum, so every real token keeps the position it has in the unpadded prompt. One
batch also holds rows of *different* contexts: each row's prefix keys/values are left-padded
(mask 0) to the batch's longest prefix (``kv_cache.batch_cache``), with room reserved for the
suffix and the new tokens, so decoding writes in place. With a prefix trie (``prefix_trie``: by default for scoring,
and for generation on CPUs) a group prefills every prefix some of its prompts share once, packed in one row, and each
row's cache is gathered from it (the root plus the row's path). ``generate_naive`` (one chat at a time, no cache, no padding)
is the reference these outputs are tested against.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from framebench.backends import batch_sizing, kv_cache
from framebench.backends.base import Chat, Decoding, decode_until_stop
from framebench.backends.prefix_groups import group_by_shared_prefix
from framebench.backends.prefix_trie import PromptTrie, plan_prompt_trie, prefill_prompt_trie

log = logging.getLogger(__name__)

GPU_SYNC_EVERY = 4  # decoding steps between host checks for finished rows on GPUs


class BatchedDecoding:
    """Mixed into ``HFBackend``: needs ``model``, ``tokenizer``, ``device``, ``batch_size``,
    ``prefix_reuse``, ``prefix_trie``, ``mix_contexts``, ``eos_ids``, ``pad_id``, ``bos_id`` and ``encode``."""

    model: Any
    tokenizer: Any
    device: Any
    batch_size: int | str
    prefix_reuse: bool
    prefix_trie: bool
    mix_contexts: bool | None
    eos_ids: list[int]
    pad_id: int
    bos_id: Any

    def _generation_config(self, decoding: Decoding):
        from transformers import GenerationConfig

        sampling = decoding.temperature > 0
        return GenerationConfig(
            max_new_tokens=decoding.max_new_tokens, do_sample=sampling,
            temperature=decoding.temperature if sampling else None, top_p=None, top_k=None, num_beams=1,
            eos_token_id=self.eos_ids or None, pad_token_id=self.pad_id, bos_token_id=self.bos_id,
            stop_strings=list(decoding.stop) or None)

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
        groups = self.prefix_groups(seqs, overhead)
        log.debug("%d chats in %d shared-prefix groups (prefix lengths %s)", len(chats), len(groups),
                  [p for p, _ in groups])
        with torch.inference_mode():
            for idx, texts in self._run_batches(seqs, groups, mix, config, decoding):
                for i, text in zip(idx, texts, strict=True):
                    results[i] = text
                if on_batch is not None:
                    on_batch(idx, texts)
        return [r if r is not None else "" for r in results]

    def prefix_groups(self, seqs: list[list[int]], overhead: int) -> list[tuple[int, list[int]]]:
        if not self.prefix_reuse:
            return [(0, list(range(len(seqs))))]
        return group_by_shared_prefix(seqs, group_overhead=overhead)

    def _mixes_contexts(self) -> bool:
        """Whether one batch may hold rows of different prefix groups (each row decoding from its own
        group's prefix cache, left-padded to the batch's longest prefix). On by default: a decoding
        step costs nearly as much for a few rows as for sixty (it reads every weight), so large
        batches pay on CPUs as on GPUs (docs/speed.md, "Batches across contexts")."""
        if not kv_cache.full_attention(self.model):  # sliding-window layers: per-group batches
            return False
        return self.mix_contexts if self.mix_contexts is not None else True

    # ---- batch sizing (framebench.backends.batch_sizing) -----------------------------------
    def _batch_limit(self, total_len: int, width: int | None = None, groups=None) -> int:
        held = sum(p for p, _ in groups or [])
        return batch_sizing.batch_limit(self.model, self.device, self.batch_size, total_len, width, held)

    def kv_bytes_per_token(self) -> int:
        return batch_sizing.kv_bytes_per_token(self.model)

    def _forward_overhead(self) -> int:
        return batch_sizing.forward_overhead(self.device)

    def _length_buckets(self, seqs, prefix_len, members, decoding, limit) -> list[list[int]]:
        prefix_of = prefix_len if isinstance(prefix_len, dict) else dict.fromkeys(members, prefix_len)
        overhead = self._forward_overhead() * (1 + decoding.max_new_tokens)
        return batch_sizing.length_buckets(seqs, prefix_of, members, overhead, limit)

    def _batches(self, seqs, groups, mix, decoding, prefix_of=None, held=None) -> list[list[int]]:
        """Rows cut into batches; ``prefix_of`` (row -> cached prefix length; default each group's
        prefix) and ``held`` (prefix-cache tokens kept meanwhile) come from the prompt tries."""
        if prefix_of is None:
            prefix_of = {i: p for p, members in groups for i in members}
        held_groups = groups if held is None else [(held, [])]
        if mix:
            rows = [i for _, members in groups for i in members]
            width = max(len(seqs[i]) - prefix_of[i] for i in rows)
            longest = max(prefix_of[i] for i in rows) + width + decoding.max_new_tokens
            return self._length_buckets(seqs, prefix_of, rows, decoding,
                                        self._batch_limit(longest, width, held_groups))
        batches = []
        for _, members in groups:
            longest = max(len(seqs[i]) for i in members) + decoding.max_new_tokens
            width = max(len(seqs[i]) - prefix_of[i] for i in members)
            batches += self._length_buckets(seqs, prefix_of, members, decoding,
                                            self._batch_limit(longest, width))
        return batches

    def _prompt_tries(self, seqs, groups, scoring: bool) -> dict[int, PromptTrie]:
        """The prefix trie of each prompt group, where it shares more than the group's one prefix;
        groups without one prefill that prefix alone. ``prefix_trie`` None (the default) uses the
        trie for scoring everywhere and for generation on CPUs, where both were measured faster
        (docs/speed.md, "Prompt prefix trie"; on GPUs generation is unmeasured); True or False
        decides for both."""
        wanted = getattr(self, "prefix_trie", None)
        if wanted is None:
            wanted = scoring or self.device.type == "cpu"
        if not wanted or not kv_cache.full_attention(self.model):
            return {}
        tries = {}
        for g, (prefix_len, members) in enumerate(groups):
            if prefix_len > 0 and len(members) > 1:
                plan = plan_prompt_trie(seqs, members, prefix_len)
                if plan.nodes:
                    tries[g] = plan
        return tries

    def _run_batches(self, seqs, groups, mix, config, decoding,
                     gather: list[int] | None = None) -> Iterator[tuple[list[int], list]]:
        """Yield (indices, texts) per batch. Prefix caches are prefilled when first needed and freed
        after their group's last batch. With ``gather`` (token ids) nothing is decoded: each batch
        yields, per row, the log-probabilities of those tokens as the sequence's next token.
        A group with a prompt trie prefills its root and trie nodes once (``prefix_trie``); each
        row's cache is gathered from that: the root plus the row's path through the trie."""
        tries = self._prompt_tries(seqs, groups, scoring=gather is not None)
        prefix_of = {i: p for p, members in groups for i in members}
        for plan in tries.values():
            prefix_of.update(plan.prefix_len)
        group_of = {i: g for g, (_, members) in enumerate(groups) for i in members}
        held = sum(tries[g].cached_tokens if g in tries else p for g, (p, _) in enumerate(groups))
        remaining = [len(members) for _, members in groups]
        prefixes: dict[int, object] = {}
        for batch in self._batches(seqs, groups, mix, decoding, prefix_of, held):
            batch = sorted(batch, key=group_of.__getitem__)  # a group's rows side by side: sliced copies
            for g in {group_of[i] for i in batch}:
                if g in prefixes or groups[g][0] == 0:
                    continue
                if g in tries:
                    prefixes[g] = prefill_prompt_trie(self.model, tries[g], self.device)
                else:
                    prefixes[g] = kv_cache.prefill(self.model, seqs[groups[g][1][0]][:groups[g][0]], self.device)
            reserve = 0 if decoding.temperature > 0 else \
                max(len(seqs[i]) - prefix_of[i] for i in batch) + decoding.max_new_tokens
            index = [tries[group_of[i]].row_index(i) if group_of[i] in tries else prefix_of[i] for i in batch]
            cache = kv_cache.gathered_cache(self.model, self.device, prefixes, [group_of[i] for i in batch],
                                            index, reserve)
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

    def _forward(self, cache, **inputs):
        return self.model(use_cache=True, **inputs, **kv_cache.with_cache(self.model, cache))

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
        logits = self._forward(cache, input_ids=ids, attention_mask=mask, position_ids=positions,
                               logits_to_keep=1).logits[:, -1, :]
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
            logits = self._forward(cache, input_ids=tokens[:, None], attention_mask=mask,
                                   position_ids=next_pos).logits[:, -1, :]
            next_pos = next_pos + 1
        return [self._decode(toks, decoding) for toks in out.tolist()]

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
        out = self.model.generate(input_ids=full, attention_mask=mask, generation_config=config,
                                  tokenizer=self.tokenizer, **kv_cache.with_cache(self.model, cache))
        return [self._decode(toks, decoding) for toks in out[:, full.shape[1]:].tolist()]

    def _next_logprobs_batch(self, seqs, prefix_of, batch, cache, gather: list[int]) -> list[list[float]]:
        """One forward over the batch's suffixes: log p(token | row) for each ``gather`` token."""
        import torch

        ids, mask, positions = self._suffix_inputs(seqs, prefix_of, batch)
        logits = self._forward(cache, input_ids=ids, attention_mask=mask, position_ids=positions,
                               logits_to_keep=1).logits[:, -1, :]
        index = torch.tensor(gather, device=self.device)
        return torch.log_softmax(logits.float(), dim=-1)[:, index].tolist()
