"""Answer and continuation scoring of ``hf:``: constrained answers (``answer_probabilities``) and
the choice planner's continuations (``score_continuations``).

Rows whose answer forms are all one token (Yes/No, letters) need only the next-token distribution:
they go through the decoding loop's prefix groups and batches with nothing decoded
(``next_logprobs``). A generation's first step keeps those tokens' log-probabilities per prompt,
so a constrained run after a generate run on the same backend (the demo's) costs nothing more.
Multi-token forms and continuations go through ``framebench.backends.choice_scoring``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from typing import Any

from framebench.backends import kv_cache
from framebench.backends.base import Chat, Decoding
from framebench.backends.prefix_groups import group_by_shared_prefix

FIRST_STEP_MEMORY = 1 << 18  # prompts whose first-step answer log-probabilities are kept


class AnswerScoring:
    """Mixed into ``HFBackend`` (needs its model, tokenizer, ``render``, ``encode``, the decoding
    loop's ``_run_batches``)."""

    model: Any
    tokenizer: Any
    device: Any
    pad_id: int
    _first_step: dict[tuple[int, ...], dict[int, float]]

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
        groups = self.prefix_groups(seqs, self._forward_overhead() * (1 if mix else 2))
        with torch.inference_mode():
            for idx, rows in self._run_batches(seqs, groups, mix, None, Decoding(max_new_tokens=1), gather):
                for i, row in zip(idx, rows, strict=True):
                    results[todo[i]] = row
        return results

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
                logp = torch.log_softmax(self.model(input_ids=ids).logits[0, -1].float(), dim=-1)
                results.append({c: float(logp[t]) for c, t in cand_ids.items()})
        return results

    # ---- the choice planner ------------------------------------------------------------------
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
                cache = kv_cache.prefill(self.model, prefix, self.device)
                for m in members:
                    states[fresh[m]]["cache"], states[fresh[m]]["ids"] = copy.deepcopy(cache), list(prefix)

    # ---- constrained answers -------------------------------------------------------------------
    def answer_probabilities(self, chats: list[Chat], choices: list[Sequence[str]],
                             assistant_prefixes: list[str] | None = None) -> list[dict[str, float]]:
        """``P(answer)`` over each chat's allowed answers (definitions in backends/constrained.py)."""
        from framebench.backends.choice_scoring import continuation_logprobs
        from framebench.backends.constrained import answer_forms, masses_to_probs

        forms = answer_forms(self.tokenizer, choices)
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
        return [masses_to_probs(row, forms, row_scores) for row, row_scores in zip(choices, scores, strict=True)]

    def _scoring_prompts(self, chats: list[Chat], assistant_prefixes: list[str] | None) -> list[list[int]]:
        prefixes = assistant_prefixes or [""] * len(chats)
        return [self.tokenizer(self.render(chat) + prefix, add_special_tokens=False)["input_ids"]
                for chat, prefix in zip(chats, prefixes, strict=True)]

    def _continuation_ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"continuation {text!r} encodes to no tokens")
        return ids
