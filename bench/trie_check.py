"""The prompt prefix trie of ``hf:`` against the one-shared-prefix path, in one process.

For the demo's law contexts (binary and MC items; ``--contexts`` picks how many), on one loaded
SmolLM2-135M (or ``--model``):

* unique prompt tokens per item when only each context's one shared prefix is computed once,
  and under the token trie (every common prefix once);
* generation time, one-prefix (``prefix_trie`` off) against trie (on), the runner's calls (whole
  contexts per ``generate`` call, per format), timed interleaved A, B, A, B, best of ``--repeats``;
* constrained answers (``answer_probabilities``, first-step memory cleared) the same way;
* how many greedy outputs differ (must be 0) and the largest answer-probability difference.

Prints a table and one JSON line::

    python bench/trie_check.py                 # all 4 demo law contexts, best of 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import engines  # noqa: E402  (bench/engines.py: items and the runner's calls)


def token_counts(backend, items, chats) -> dict[str, dict[str, float]]:
    """Per format: prompt tokens per item in all, one-prefix and trie-unique (per context)."""
    from framebench.backends.prefix_trie import one_prefix_tokens, unique_tokens

    out = {}
    for fmt in ("binary", "mc"):
        by_context: dict[str, list[list[int]]] = {}
        for it in items:
            if it["format"] == fmt:
                by_context.setdefault(it["context_id"], []).append(backend.encode(chats[it["item_id"]]))
        n = sum(len(seqs) for seqs in by_context.values())
        if not n:
            continue
        out[fmt] = {"items": n,
                    "all": round(sum(len(s) for seqs in by_context.values() for s in seqs) / n, 1),
                    "one_prefix": round(sum(one_prefix_tokens(seqs) for seqs in by_context.values()) / n, 1),
                    "trie": round(sum(unique_tokens(seqs) for seqs in by_context.values()) / n, 1)}
    return out


def generate_calls(backend, items, chats, decodings) -> dict[str, str]:
    outputs = {}
    for fmt, decoding in decodings.items():
        ids = [it["item_id"] for it in items if it["format"] == fmt]  # contexts stay together
        outputs.update(zip(ids, backend.generate([chats[i] for i in ids], decoding), strict=True))
    return outputs


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2", help="smollm2 (default) or hf:PATH")
    ap.add_argument("--items", type=Path, default=engines.DEMO)
    ap.add_argument("--task", default="law_issue_spotting")
    ap.add_argument("--contexts", type=int, default=0, help="contexts of the task (0: all)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved timings of each path (best is kept)")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()

    import torch

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from limit import decodings_of, load_backend, pick  # noqa: I001  (bench/limit.py)
    from framebench.text_eval.framingqa.prompts import render_chat

    backend = load_backend(argparse.Namespace(random_init=None, model=args.model, dtype=None))
    items = pick(engines.read_items(args.items), args.task, args.contexts)
    if not items:
        sys.exit(f"error: {args.items}: no FramingQA items of task {args.task!r}")
    chats = {it["item_id"]: render_chat(it) for it in items}
    decodings = decodings_of(items)
    device = (torch.cuda.get_device_name(backend.device) if backend.device.type == "cuda"
              else f"CPU, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"model {backend.spec}; {len(items)} items in {len({it['context_id'] for it in items})} contexts "
          f"of {args.task}; device {device}", flush=True)
    tokens = token_counts(backend, items, chats)
    for fmt, row in tokens.items():
        print(f"{fmt:<7} {row['items']:>4} items: prompt tokens / item {row['all']} in all, "
              f"{row['one_prefix']} unique after the one shared prefix, {row['trie']} under the trie", flush=True)

    def run(trie: bool, what: str):
        backend.prefix_trie = trie
        if what == "generate":
            return timed(lambda: generate_calls(backend, items, chats, decodings))
        return timed(lambda: engines.constrained_engine(backend, items, chats))

    run(True, "generate")  # warm-up (model load, first calls)
    best = {}
    results = {}
    for what in ("generate", "constrained"):
        for _ in range(args.repeats):
            for trie in (False, True):
                result, seconds = run(trie, what)
                key = (what, trie)
                best[key] = min(best.get(key, float("inf")), seconds)
                results.setdefault(key, result)
                if result != results[key] and what == "generate":
                    sys.exit(f"error: {what} with prefix_trie={trie} is not deterministic across repeats")
            print(f"{what}: one-prefix {best[(what, False)]:.2f} s, trie {best[(what, True)]:.2f} s", flush=True)
    old, new = results[("generate", False)], results[("generate", True)]
    differing = sum(old[i] != new[i] for i in old)
    probs = engines.compare_probs(results[("constrained", True)], results[("constrained", False)])
    n = len(items)
    summary = {
        "model": backend.spec, "device": device, "task": args.task, "items": n, "tokens": tokens,
        "generate_s_per_item": {"one_prefix": round(best[("generate", False)] / n, 4),
                                "trie": round(best[("generate", True)] / n, 4)},
        "constrained_s_per_item": {"one_prefix": round(best[("constrained", False)] / n, 4),
                                   "trie": round(best[("constrained", True)] / n, 4)},
        "generate_speedup": round(best[("generate", False)] / best[("generate", True)], 3),
        "constrained_speedup": round(best[("constrained", False)] / best[("constrained", True)], 3),
        "differing_greedy_outputs": differing, **probs, "repeats": args.repeats}
    print(f"\n{'':<26} {'one-prefix':>11} {'trie':>9} {'speed-up':>9}")
    for what in ("generate", "constrained"):
        a, b = best[(what, False)] / n, best[(what, True)] / n
        print(f"{what + ' s / item':<26} {a:>11.4f} {b:>9.4f} {a / b:>9.2f}")
    print(f"differing greedy outputs: {differing} of {n}; max probability difference "
          f"{probs['max_prob_diff']:.2e}; identical constrained answers {probs['identical_answers']}")
    print(json.dumps(summary))
    if args.json_out:
        args.json_out.write_text(json.dumps(summary, indent=1) + "\n")
    if differing:
        sys.exit(1)


if __name__ == "__main__":
    main()
