"""Which prompts share a token prefix worth computing once (one algorithm for generation,
constrained answers and continuation scoring).

Splitting happens on token ids, never by re-tokenizing a prefix string, so BPE merges across the
boundary cannot change what the model sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

MIN_SHARED_PREFIX = 16  # tokens; shorter shared prefixes are not worth a separate forward pass


def common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def group_by_shared_prefix(seqs: Sequence[Sequence[int]], min_prefix: int = MIN_SHARED_PREFIX,
                           group_overhead: int = 0) -> list[tuple[int, list[int]]]:
    """Cluster sequences that share a token prefix: ``[(prefix_len, member indices), ...]``.

    Sorting puts sequences that share a prefix next to each other. A sorted run is served either
    as one prefix group (prefix = the smallest common prefix of neighbours, prefilled once), as
    plain rows without a prefix, or split where that common prefix is smallest, whichever costs
    least: prefilled tokens, plus ``group_overhead`` token-equivalents for every prefix group
    (a group decodes in its own batches, so long generations favour fewer, larger batches).
    Prefixes shorter than ``min_prefix`` are never used. All rows without a prefix form one
    group ``(0, members)``, listed last. A prefix always leaves each member at least one suffix token.
    """
    order = sorted(range(len(seqs)), key=lambda i: list(seqs[i]))
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
