"""Log-likelihood of given continuations after given prompts, for a transformers causal LM.

``continuation_logprobs(model, prompts, continuations)`` returns, for every prompt and each of its
continuations (token ids), the sum of the continuation's token log-probabilities under the model:
``sum_k log p(c_k | prompt, c_<k)``. This is what constrained answering (``--answer constrained``)
and the choice-scoring planner rank by. It is a separate path from generation on purpose.

How it is computed (three stages, equal to one full forward pass of ``prompt + c`` per pair up to
float rounding; ``continuation_logprobs_naive`` is that reference):

1. Prompts are grouped by a shared token prefix (sorted order puts them next to each other); each
   group's prefix, and every longer prefix some members share, is run once as a prefix trie
   (``prefix_trie``), and each member's cache is gathered from it.
2. Members' suffixes run in batches, padded *between* prefix and suffix (attention mask 0, position
   ids from the mask's cumulative sum), keeping only the last position's logits: they give the
   first token of every continuation, so single-token continuations cost nothing more.
3. For a member with multi-token continuations, the continuations' proper prefixes are packed into
   one row after the member's cached prompt as a token trie (a prefix shared by several
   continuations is run once), each node attending to the prompt and to its ancestors only (a 4D
   additive mask; positions continue the prompt by depth; ``prefix_trie.run_packed``, the same code
   as stage 1's prompt trie). The cache is cropped back afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from framebench.backends.kv_cache import (
    full_attention,
    gathered_cache,
    new_cache,
    prefill,
    repeated,
    with_cache,
)
from framebench.backends.prefix_groups import (
    MIN_SHARED_PREFIX,
    common_prefix_len,
    group_by_shared_prefix,
)
from framebench.backends.prefix_trie import (
    MAX_PACKED_TOKENS,
    TokenTrie,
    plan_prompt_trie,
    prefill_prompt_trie,
    run_packed,
)

MAX_BATCH_ROWS = 8


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
            plan = None
            if prefix_len > 0 and len(members) > 1 and full_attention(model):
                plan = plan_prompt_trie(prompts, members, prefix_len)
                plan = plan if plan.nodes else None  # nothing shared beyond the root: prefill it alone
            prefix_of = plan.prefix_len if plan is not None else dict.fromkeys(members, prefix_len)
            prefix_cache = None
            if plan is not None:  # every prefix some members share once (the root among them)
                prefix_cache = prefill_prompt_trie(model, plan, device)
            elif prefix_len > 0:
                prefix_cache = prefill(model, prompts[members[0]][:prefix_len], device)
            index = plan.row_index if plan is not None else prefix_of.__getitem__
            simple = [i for i in members if all(len(c) == 1 for c in continuations[i])]
            packed = [i for i in members if i not in set(simple)]
            simple.sort(key=lambda i: len(prompts[i]) - prefix_of[i])
            for start in range(0, len(simple), max_batch_rows):
                batch = simple[start:start + max_batch_rows]
                logp, _ = _run_suffixes(model, prompts, batch, prefix_of, index, prefix_cache, pad_id, device)
                for row, i in enumerate(batch):
                    results[i] = [float(logp[row, c[0]]) for c in continuations[i]]
            for i in packed:
                logp, cache = _run_suffixes(model, prompts, [i], prefix_of, index, prefix_cache, pad_id, device)
                results[i] = _score_packed(model, cache, len(prompts[i]), logp[0], continuations[i],
                                           max_packed_tokens, device)
    return results


def _run_suffixes(model, prompts, batch, prefix_of, index, prefix_cache, pad_id, device):
    """Run the batch's suffixes after their cached prefixes (``index(i)``: a row's positions, or
    its length, in ``prefix_cache``; rows left-padded to the longest prefix); return
    (last-position log-probs, cache)."""
    import torch

    prefixes = [prefix_of[i] for i in batch]
    pmax = max(prefixes)
    if prefix_cache is None or pmax == 0:
        cache = new_cache(model)
    elif len(set(prefixes)) == 1 and all(isinstance(index(i), int) for i in batch):
        cache = repeated(prefix_cache, len(batch))
    else:
        cache = gathered_cache(model, device, {0: prefix_cache}, [0] * len(batch), [index(i) for i in batch], 0)
    suffixes = [prompts[i][p:] for i, p in zip(batch, prefixes, strict=True)]
    width = max(len(s) for s in suffixes)
    ids = torch.tensor([[pad_id] * (width - len(s)) + s for s in suffixes], device=device)
    mask = torch.tensor([[0] * (pmax - p) + [1] * p + [0] * (width - len(s)) + [1] * len(s)
                         for p, s in zip(prefixes, suffixes, strict=True)], device=device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, pmax:]
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                   logits_to_keep=1, **with_cache(model, cache)).logits[:, -1, :]
    return torch.log_softmax(logits.float(), dim=-1), cache


def candidate_trie(conts: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """The distinct proper prefixes of the continuations (every prefix but the whole sequence),
    parents before children: the tokens whose next-token distributions score the continuations
    beyond their first token. Shared prefixes (``Navigate[`` of many candidates) appear once."""
    trie = TokenTrie([c[:-1] for c in conts])
    return [tuple(trie.token[a] for a in trie.ancestors(n)) for n in range(len(trie))]


def _score_packed(model, cache, prompt_len, first_logp, conts, max_tokens, device) -> list[float]:
    """Score continuations after one cached prompt (batch 1, no padding). Their proper prefixes
    are packed into one row as a token trie (``prefix_trie.run_packed``): each node attends to the
    prompt and to its ancestors and itself, at the position it would have in its continuation.
    The cache is cropped back to the prompt afterwards."""
    scores = [float(first_logp[c[0]]) for c in conts]
    trie = TokenTrie([c[:-1] for c in conts])
    if not len(trie):
        return scores
    wanted: list[dict[int, None]] = [{} for _ in range(len(trie))]  # next tokens scored at each node
    for cont, path in zip(conts, trie.paths, strict=True):
        for j, node in enumerate(path):
            wanted[node].setdefault(cont[j + 1])
    nexts = [list(w) for w in wanted]
    logp = run_packed(model, cache, prompt_len, trie.token, trie.parent, trie.depth, next_tokens=nexts,
                      max_tokens=max_tokens)
    cache.crop(prompt_len - cache.get_seq_length())  # back to the prompt (negative: tokens to drop)
    column = [{t: k for k, t in enumerate(row)} for row in nexts]
    for k, (cont, path) in enumerate(zip(conts, trie.paths, strict=True)):
        scores[k] += float(sum(logp[node][column[node][cont[j + 1]]] for j, node in enumerate(path)))
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
