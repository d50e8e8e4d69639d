"""Log-likelihood of given continuations after given prompts, for a transformers causal LM.

``continuation_logprobs(model, prompts, continuations)`` returns, for every prompt and each of its
continuations (token ids), the sum of the continuation's token log-probabilities under the model:
``sum_k log p(c_k | prompt, c_<k)``. This is what constrained answering (``--answer constrained``)
and the choice-scoring planner rank by. It is a separate path from generation on purpose.

How it is computed (three stages, equal to one full forward pass of ``prompt + c`` per pair up to
float rounding; ``continuation_logprobs_naive`` is that reference):

1. Prompts are grouped by a shared token prefix (sorted order puts them next to each other); each
   group's prefix is run once and its KV cache is reused for every member.
2. Members' suffixes run in batches, padded *between* prefix and suffix (attention mask 0, position
   ids from the mask's cumulative sum), keeping only the last position's logits: they give the
   first token of every continuation, so single-token continuations cost nothing more.
3. For a member with multi-token continuations, the continuations' proper prefixes are packed into
   one row after the member's cached prompt as a token trie (a prefix shared by several
   continuations is run once), each node attending to the prompt and to its ancestors only (a 4D
   additive mask; positions continue the prompt by depth). The cache is cropped back afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from framebench.backends.kv_cache import new_cache, repeated, with_cache
from framebench.backends.prefix_groups import (
    MIN_SHARED_PREFIX,
    common_prefix_len,
    group_by_shared_prefix,
)

MAX_BATCH_ROWS = 8
MAX_PACKED_TOKENS = 512


def continuation_logprobs(model: Any, prompts: list[list[int]], continuations: list[list[list[int]]],
                          *, pad_id: int = 0, max_batch_rows: int = MAX_BATCH_ROWS,
                          max_packed_tokens: int = MAX_PACKED_TOKENS,
                          min_prefix: int = MIN_SHARED_PREFIX) -> list[list[float]]:
    """Sum of log-probabilities of each continuation after its prompt (see the module docstring)."""
    import torch

    if len(prompts) != len(continuations):
        raise ValueError("one list of continuations per prompt is needed")
    for prompt, conts in zip(prompts, continuations, strict=True):
        if not prompt:
            raise ValueError("a prompt must hold at least one token")
        if any(not c for c in conts):
            raise ValueError("a continuation must hold at least one token")
    results: list[list[float]] = [[0.0] * len(c) for c in continuations]
    device = next(model.parameters()).device
    with torch.inference_mode():
        for prefix_len, members in group_by_shared_prefix(prompts, min_prefix):
            prefix_cache = None
            if prefix_len > 0:
                prefix_cache = new_cache(model)
                ids = torch.tensor([prompts[members[0]][:prefix_len]], device=device)
                model(input_ids=ids, use_cache=True, logits_to_keep=1, **with_cache(model, prefix_cache))
            simple = [i for i in members if all(len(c) == 1 for c in continuations[i])]
            packed = [i for i in members if i not in set(simple)]
            simple.sort(key=lambda i: len(prompts[i]))
            for start in range(0, len(simple), max_batch_rows):
                batch = simple[start:start + max_batch_rows]
                logp, _ = _run_suffixes(model, prompts, batch, prefix_len, prefix_cache, pad_id, device)
                for row, i in enumerate(batch):
                    results[i] = [float(logp[row, c[0]]) for c in continuations[i]]
            for i in packed:
                logp, cache = _run_suffixes(model, prompts, [i], prefix_len, prefix_cache, pad_id, device)
                results[i] = _score_packed(model, cache, len(prompts[i]), logp[0], continuations[i],
                                           max_packed_tokens, device)
    return results


def _run_suffixes(model, prompts, batch, prefix_len, prefix_cache, pad_id, device):
    """Run the batch's suffixes after the shared prefix; return (last-position log-probs, cache)."""
    import torch

    cache = repeated(prefix_cache, len(batch)) if prefix_cache is not None else new_cache(model)
    suffixes = [prompts[i][prefix_len:] for i in batch]
    width = max(len(s) for s in suffixes)
    ids = torch.tensor([[pad_id] * (width - len(s)) + s for s in suffixes], device=device)
    mask = torch.tensor([[1] * prefix_len + [0] * (width - len(s)) + [1] * len(s) for s in suffixes],
                        device=device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, prefix_len:]
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                   logits_to_keep=1, **with_cache(model, cache)).logits[:, -1, :]
    return torch.log_softmax(logits.float(), dim=-1), cache


def candidate_trie(conts: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """The distinct proper prefixes of the continuations (every prefix but the whole sequence),
    parents before children: the tokens whose next-token distributions score the continuations
    beyond their first token. Shared prefixes (``Navigate[`` of many candidates) appear once."""
    nodes: dict[tuple[int, ...], None] = {}
    for cont in conts:
        for k in range(1, len(cont)):
            nodes.setdefault(tuple(cont[:k]))
    return list(nodes)


def _score_packed(model, cache, prompt_len, first_logp, conts, max_tokens, device) -> list[float]:
    """Score continuations after one cached prompt (batch 1, no padding). Their proper prefixes
    are packed into one row as a token trie: each node attends to the prompt and to its ancestors
    and itself (a 4D additive mask), at the position it would have in its continuation."""
    import torch

    scores = [float(first_logp[c[0]]) for c in conts]
    pending = [k for k, c in enumerate(conts) if len(c) > 1]
    chunks: list[list[int]] = [[]]
    for k in pending:  # chunks of continuations whose trie stays within max_tokens nodes
        if chunks[-1] and len(candidate_trie([conts[j] for j in chunks[-1] + [k]])) > max_tokens:
            chunks.append([])
        chunks[-1].append(k)
    dtype = next(model.parameters()).dtype
    for chunk in (c for c in chunks if c):
        nodes = candidate_trie([conts[k] for k in chunk])
        index = {node: i for i, node in enumerate(nodes)}
        q = len(nodes)
        allowed = torch.zeros((q, prompt_len + q), dtype=torch.bool, device=device)
        allowed[:, :prompt_len] = True
        for i, node in enumerate(nodes):
            for depth in range(1, len(node) + 1):
                allowed[i, prompt_len + index[node[:depth]]] = True
        mask = torch.zeros(allowed.shape, dtype=dtype, device=device)
        mask.masked_fill_(~allowed, torch.finfo(dtype).min)
        logits = model(input_ids=torch.tensor([[node[-1] for node in nodes]], device=device),
                       attention_mask=mask[None, None],
                       position_ids=torch.tensor([[prompt_len + len(node) - 1 for node in nodes]], device=device),
                       use_cache=True, **with_cache(model, cache)).logits[0]
        cache.crop(-q)  # back to the prompt (negative: tokens to drop)
        logp = torch.log_softmax(logits.float(), dim=-1)
        for k in chunk:
            cont = conts[k]
            scores[k] += float(sum(logp[index[tuple(cont[:j])], cont[j]] for j in range(1, len(cont))))
    return scores


def continuation_logprobs_naive(model: Any, prompts: list[list[int]],
                                continuations: list[list[list[int]]]) -> list[list[float]]:
    """Reference: one full forward pass of ``prompt + continuation`` per pair, no cache."""
    import torch

    device = next(model.parameters()).device
    out: list[list[float]] = []
    with torch.inference_mode():
        for prompt, conts in zip(prompts, continuations, strict=True):
            row = []
            for cont in conts:
                ids = torch.tensor([prompt + cont], device=device)
                logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
                row.append(float(sum(logp[len(prompt) - 1 + j, t] for j, t in enumerate(cont))))
            out.append(row)
    return out


def continuation_logprobs_incremental(model: Any, prompt: list[int], continuations: list[list[int]],
                                      state: dict[str, Any], *,
                                      max_packed_tokens: int = MAX_PACKED_TOKENS) -> list[float]:
    """Like ``continuation_logprobs`` for one prompt, reusing the KV cache of the previous prompt
    scored with the same ``state`` (a dict the caller keeps, e.g. per planner session): the cache
    is cropped to the shared token prefix and only the new tokens are run. A planner's prompt
    grows by one exchange per step, so each step costs the new tokens plus the candidates."""
    import torch

    if not prompt or any(not c for c in continuations):
        raise ValueError("prompts and continuations must hold at least one token")
    device = next(model.parameters()).device
    cache, old = state.get("cache"), state.get("ids") or []
    keep = min(common_prefix_len(old, prompt), len(prompt) - 1) if cache is not None else 0
    if cache is None:
        cache = new_cache(model)
    elif len(old) > keep:
        cache.crop(keep - len(old))
    with torch.inference_mode():
        new = prompt[keep:]
        logits = model(input_ids=torch.tensor([new], device=device),
                       position_ids=torch.arange(keep, len(prompt), device=device)[None],
                       use_cache=True, logits_to_keep=1, **with_cache(model, cache)).logits[0, -1]
        first = torch.log_softmax(logits.float(), dim=-1)
        scores = _score_packed(model, cache, len(prompt), first, continuations, max_packed_tokens, device)
    state["cache"], state["ids"] = cache, list(prompt)
    return scores
