"""Token tries over prompts and continuations, and one packed forward pass over a trie.

A *prefix trie* holds each distinct token prefix of a set of sequences once: a node is a token
together with everything before it. ``hf:`` uses it twice, with the same code:

* **prompts** (generation, constrained answers, continuation scoring): after a context's one
  shared prefix (``prefix_groups``) the prompts still share shorter prefixes with some of the
  others (the framings of one question, the MC options' header). ``plan_prompt_trie`` picks, per
  prompt, the part it shares with at least one other prompt; those parts form a trie whose nodes
  run once, packed into one row (``run_packed``); each prompt's own remaining tokens run as its
  suffix in the decoding batches, from a cache gathered out of the packed one
  (``kv_cache.gathered_cache``: the root prefix plus the prompt's path through the trie);
* **continuations** (``choice_scoring``): the candidates' proper prefixes after one cached prompt,
  packed the same way, so a prefix shared by several candidates (``go to the``) runs once.

``run_packed`` lays the nodes out in one row, parents before children. Each node attends to the
cached tokens before the trie and to its own ancestors and itself (a 4D additive mask), at the
position it has in its sequence, so its keys, values and logits are those of the unshared
sequence up to float rounding. Splitting happens on token ids only, never by re-tokenizing text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_PACKED_TOKENS = 512  # trie nodes per packed forward (the mask is nodes x (cached + nodes))


class TokenTrie:
    """The token trie of ``seqs``. Nodes are numbered in creation order, so a parent always comes
    before its children; ``parent[n]`` is -1 for a node right under the root."""

    def __init__(self, seqs: Sequence[Sequence[int]] = ()):
        self.token: list[int] = []
        self.parent: list[int] = []
        self.depth: list[int] = []  # tokens from the root, the node's own included
        self.count: list[int] = []  # sequences whose path passes through the node
        self._children: list[dict[int, int]] = []
        self._top: dict[int, int] = {}
        self.paths: list[list[int]] = [self.insert(seq) for seq in seqs]

    def __len__(self) -> int:
        return len(self.token)

    def insert(self, seq: Sequence[int]) -> list[int]:
        """Add one sequence; returns the node ids along its path."""
        path, children, parent = [], self._top, -1
        for tok in seq:
            node = children.get(tok)
            if node is None:
                node = len(self.token)
                children[tok] = node
                self.token.append(tok)
                self.parent.append(parent)
                self.depth.append(len(path) + 1)
                self.count.append(0)
                self._children.append({})
            self.count[node] += 1
            path.append(node)
            parent, children = node, self._children[node]
        return path

    def child(self, node: int, tok: int) -> int | None:
        return (self._top if node < 0 else self._children[node]).get(tok)

    def ancestors(self, node: int) -> list[int]:
        """The node's path from the root, itself last."""
        out = []
        while node >= 0:
            out.append(node)
            node = self.parent[node]
        return out[::-1]


def trie_positions(seqs: Sequence[Sequence[int]]) -> tuple[int, int]:
    """(nodes, sum of depths) of the token trie of ``seqs``, from the sorted sequences (no trie
    built): every distinct prefix once; a node at depth d is a token whose query attends to d keys."""
    nodes = depth_sum = 0
    previous: Sequence[int] = []
    for seq in sorted(seqs):
        common = 0
        for a, b in zip(previous, seq, strict=False):
            if a != b:
                break
            common += 1
        nodes += len(seq) - common
        depth_sum += sum(range(common + 1, len(seq) + 1))
        previous = seq
    return nodes, depth_sum


def unique_tokens(seqs: Sequence[Sequence[int]]) -> int:
    """Tokens a trie over ``seqs`` holds: every distinct prefix once."""
    return trie_positions(seqs)[0]


def one_prefix_tokens(seqs: Sequence[Sequence[int]]) -> int:
    """Tokens prefilled when only the prefix all ``seqs`` share is computed once."""
    if not seqs:
        return 0
    shared = min(len(s) for s in seqs)
    first = seqs[0]
    for s in seqs[1:]:
        k = 0
        while k < shared and s[k] == first[k]:
            k += 1
        shared = k
    return shared + sum(len(s) - shared for s in seqs)


@dataclass
class PromptTrie:
    """How one prompt group is prefilled: ``root`` tokens shared by all (one plain prefill), then the
    trie ``nodes`` packed after them, then each member's own suffix. ``prefix_len[m]`` is member m's
    cached length (root + its path), ``path[m]`` its nodes (indices into ``nodes``)."""

    root: list[int]
    trie: TokenTrie
    nodes: list[int] = field(default_factory=list)  # trie node ids that are prefilled, in order
    path: dict[int, list[int]] = field(default_factory=dict)  # member -> indices into ``nodes``
    prefix_len: dict[int, int] = field(default_factory=dict)

    @property
    def cached_tokens(self) -> int:
        return len(self.root) + len(self.nodes)

    def row_index(self, member: int) -> list[int]:
        """Positions in the packed cache (root, then nodes) that member's prefix consists of."""
        return list(range(len(self.root))) + [len(self.root) + j for j in self.path[member]]


def plan_prompt_trie(seqs: Sequence[Sequence[int]], members: Sequence[int], root_len: int) -> PromptTrie:
    """The trie of the members' prompts after their shared ``root_len`` tokens. Each member's
    prefix extends through the trie nodes it shares with another member (never its last token,
    which must run in the decoding batch to give the first new token's logits); the rest is its
    own suffix. Nodes no member's prefix uses are not prefilled."""
    root = list(seqs[members[0]][:root_len])
    trie = TokenTrie([seqs[m][root_len:] for m in members])
    used: dict[int, int] = {}
    plan = PromptTrie(root, trie)
    for m, path in zip(members, trie.paths, strict=True):
        limit = len(seqs[m]) - 1 - root_len
        k = 0
        while k < min(len(path), limit) and trie.count[path[k]] >= 2:
            k += 1
        plan.prefix_len[m] = root_len + k
        for node in path[:k]:
            used.setdefault(node, 0)
    plan.nodes = sorted(used)  # creation order: parents first
    where = {node: j for j, node in enumerate(plan.nodes)}
    for m, path in zip(members, trie.paths, strict=True):
        plan.path[m] = [where[node] for node in path[:plan.prefix_len[m] - root_len]]
    return plan


def run_packed(model: Any, cache: Any, offset: int, tokens: Sequence[int], parents: Sequence[int],
               depths: Sequence[int], *, next_tokens: Sequence[Sequence[int]] | None = None,
               max_tokens: int = MAX_PACKED_TOKENS) -> list[list[float]] | None:
    """Run trie nodes (``tokens[j]`` with parent index ``parents[j]`` < j or -1, at ``depths[j]``
    tokens after the ``offset`` tokens ``cache`` already holds) through the model, appending them
    to ``cache`` (batch 1), in chunks of at most ``max_tokens`` nodes (a chunk attends to the
    chunks before it through the cache). With ``next_tokens`` (token ids per node) returns, per
    node, ``log p(t | the node's sequence)`` for each of them, else None."""
    import torch

    from framebench.backends.kv_cache import with_cache

    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    out = []
    n = len(tokens)
    for start in range(0, n, max_tokens):
        end = min(n, start + max_tokens)
        allowed = ancestors_mask(parents, start, end, offset)
        mask = torch.zeros(allowed.shape, dtype=dtype)
        mask.masked_fill_(~allowed, torch.finfo(dtype).min)
        result = model(input_ids=torch.tensor([list(tokens[start:end])], device=device),
                       attention_mask=mask.to(device)[None, None],
                       position_ids=torch.tensor([[offset + d - 1 for d in depths[start:end]]], device=device),
                       use_cache=True, logits_to_keep=0 if next_tokens is not None else 1,
                       **with_cache(model, cache))
        if next_tokens is not None:
            logp = torch.log_softmax(result.logits[0].float(), dim=-1)
            for j in range(start, end):
                wanted = list(next_tokens[j])
                out.append(logp[j - start, wanted].tolist() if wanted else [])
    return out if next_tokens is not None else None


def ancestors_mask(parents: Sequence[int], start: int, end: int, offset: int):
    """Which keys nodes ``start``..``end`` attend to: the ``offset`` cached tokens, then each node's
    ancestors and itself (a bool tensor, nodes x (offset + end)). A node whose parent is in the
    chunk copies the parent's row; only a node whose parent ran in an earlier chunk walks up."""
    import torch

    allowed = torch.zeros((end - start, offset + end), dtype=torch.bool)
    allowed[:, :offset] = True
    for j in range(start, end):
        parent = parents[j]
        if parent >= start:
            allowed[j - start] = allowed[parent - start]
        else:
            while parent >= 0:
                allowed[j - start, offset + parent] = True
                parent = parents[parent]
        allowed[j - start, offset + j] = True
    return allowed


def prefill_prompt_trie(model: Any, plan: PromptTrie, device: Any, max_tokens: int = MAX_PACKED_TOKENS):
    """One cache (batch 1) holding the plan's root, then its trie nodes packed (``row_index`` says
    which positions make up each member's prefix). Root and nodes run in one packed forward (the
    root as a chain), so a group costs one prefill call as without the trie."""
    from framebench.backends.kv_cache import new_cache

    cache = new_cache(model)
    where = {node: j for j, node in enumerate(plan.nodes)}
    trie, r = plan.trie, len(plan.root)
    tokens = list(plan.root) + [trie.token[x] for x in plan.nodes]
    parents = list(range(-1, r - 1)) + [r + where[trie.parent[x]] if trie.parent[x] >= 0 else r - 1
                                        for x in plan.nodes]
    depths = list(range(1, r + 1)) + [r + trie.depth[x] for x in plan.nodes]
    run_packed(model, cache, 0, tokens, parents, depths, max_tokens=max_tokens)
    return cache
