"""Throughput of the text evaluator: naive per-prompt ``generate`` vs the ``framebench text`` path.

Same model (SmolLM2 by default), same items, in one run: the naive path renders each item and
calls ``HFBackend.generate_naive`` (one prompt at a time, full prompt, no cache); the fast path is
``framebench.api.run_text`` (result store, shared-prefix KV reuse, length-bucketed batches,
parsing, records). Prints both throughputs, the ratio, the share of identical raw outputs and of
identical parsed answers, the machine load, and (``--profile``) where the fast path spends its time.

    python bench/text_throughput.py                       # one law context, all binary + MC variants
    python bench/text_throughput.py --mixed 120           # a larger mixed sample over all tasks
    python bench/text_throughput.py --naive-every 3       # time the naive path on every 3rd item only
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEMO = REPO / "datasets" / "demo" / "framingqa" / "items.jsonl"


def pick_items(path: Path, context: str | None, mixed: int | None) -> list[dict]:
    from framebench.items import read_items

    items = [it for it in read_items(path) if it["suite"] == "framingqa"]
    if mixed:
        step = max(1, len(items) // mixed)
        return items[::step][:mixed]
    context = context or next(it["context_id"] for it in items if it["task"] == "law_issue_spotting")
    return [it for it in items if it["context_id"] == context]


def token_ceiling(backend, items: list[dict], records) -> dict:
    """Token accounting: what the naive path feeds the model vs what prefix reuse must still feed
    (each group's prefix once, every suffix, the padding between them, the generated tokens).
    Where the matrix multiplications dominate (a CPU), the speedup tracks this ratio; the naive path
    additionally pays a full weight pass per generated token, which batching shares."""
    from framebench.backends.prefix_groups import group_by_shared_prefix
    from framebench.text_eval.framingqa.prompts import decoding_for, render_chat

    naive = fast = prefixes = suffixes = padding = generated = 0
    for fmt in ("binary", "mc"):
        chosen = [it for it in items if it["format"] == fmt]
        if not chosen:
            continue
        seqs = [backend.encode(render_chat(it)) for it in chosen]
        gen = [len(backend.tokenizer(records.loc[it["item_id"], "output"], add_special_tokens=False)["input_ids"]) + 1
               for it in chosen]
        naive += sum(map(len, seqs)) + sum(gen)
        generated += sum(gen)
        for prefix_len, members in group_by_shared_prefix(seqs):
            prefixes += prefix_len
            limit = backend._batch_limit(max(len(seqs[i]) for i in members) + decoding_for(fmt).max_new_tokens)
            for batch in backend._length_buckets(seqs, prefix_len, members, decoding_for(fmt), limit):
                width = max(len(seqs[i]) - prefix_len for i in batch)
                suffixes += sum(len(seqs[i]) - prefix_len for i in batch)
                padding += sum(width - (len(seqs[i]) - prefix_len) for i in batch)
    fast = prefixes + suffixes + padding + generated
    return {"naive_tokens": naive, "fast_tokens": fast, "prefix_tokens": prefixes, "suffix_tokens": suffixes,
            "padding_tokens": padding, "generated_tokens": generated, "ratio": round(naive / fast, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--items", type=Path, default=DEMO)
    ap.add_argument("--context", help="context_id to use (default: the first law_issue_spotting context)")
    ap.add_argument("--mixed", type=int, help="instead of one context, N items spread over the whole file")
    ap.add_argument("--naive-every", type=int, default=1, help="run the naive path on every k-th item only")
    ap.add_argument("--batch-size", default="auto")
    ap.add_argument("--repeats", type=int, default=2, help="alternating repeats; the fastest of each is kept")
    ap.add_argument("--profile", action="store_true", help="profile one more fast-path run (cProfile)")
    args = ap.parse_args()

    import torch

    from framebench.api import run_text
    from framebench.backends import load_backend
    from framebench.items import write_items
    from framebench.records import read_records
    from framebench.text_eval.framingqa.prompts import decoding_for, render_chat
    from framebench.text_eval.parsing import parse_answer

    load_start = os.getloadavg()
    items = pick_items(args.items, args.context, args.mixed)
    batch = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    backend = load_backend(args.model, batch_size=batch)
    print(f"model {backend.spec}; {len(items)} items "
          f"({sum(it['format'] == 'binary' for it in items)} binary, {sum(it['format'] == 'mc' for it in items)} mc, "
          f"{len({it['context_id'] for it in items})} contexts); torch threads {torch.get_num_threads()}; "
          f"load average at start {load_start[0]:.1f} on {os.cpu_count()} cores")

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        write_items(items, data / "items.jsonl")
        backend.generate_naive([render_chat(items[0])], decoding_for(items[0]["format"]))  # warm-up

        naive_items = items[:: args.naive_every]
        # Alternate the two paths and keep each one's fastest repeat: the machine is shared, and
        # the minimum is the measurement least disturbed by other processes.
        naive_times, fast_times = [], []
        for rep in range(args.repeats):
            t0 = time.perf_counter()
            naive = {it["item_id"]: backend.generate_naive([render_chat(it)], decoding_for(it["format"]))[0]
                     for it in naive_items}
            naive_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            run_text(args.model, data, Path(tmp) / f"run{rep}", batch_size=batch, progress=False, backend=backend)
            fast_times.append(time.perf_counter() - t0)
            print(f"repeat {rep + 1}: naive {naive_times[-1]:.1f}s, fast {fast_times[-1]:.1f}s, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        naive_s, fast_s = min(naive_times), min(fast_times)
        records = read_records(Path(tmp) / "run0").set_index("item_id")

        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            run_text(args.model, data, Path(tmp) / "run-profiled", batch_size=batch, progress=False,
                     backend=backend)
            profiler.disable()

    naive_rate = len(naive_items) / naive_s
    fast_rate = len(items) / fast_s
    same_text = sum(records.loc[i, "output"] == out for i, out in naive.items())
    same_answer = 0
    for it in naive_items:
        parsed = parse_answer(naive[it["item_id"]], it["format"], it["options"] or None)
        row = records.loc[it["item_id"]]
        same_answer += (parsed.answer, parsed.parse) == (row["answer"], row["parse"])
    ceiling = token_ceiling(backend, items, records) if hasattr(backend, "encode") else None
    load_end = os.getloadavg()
    result = {
        "items": len(items), "naive_items": len(naive_items),
        "repeats": args.repeats, "naive_seconds": round(naive_s, 2), "naive_items_per_s": round(naive_rate, 3),
        "fast_seconds": round(fast_s, 2), "fast_items_per_s": round(fast_rate, 3),
        "speedup": round(fast_rate / naive_rate, 2),
        "identical_outputs": f"{same_text}/{len(naive_items)}",
        "identical_answers": f"{same_answer}/{len(naive_items)}",
        "load_average_start_end": [round(load_start[0], 1), round(load_end[0], 1)],
        "token_ceiling": ceiling,
    }
    print(f"naive : {len(naive_items)} items in {naive_s:.1f}s = {naive_rate:.3f} items/s")
    print(f"fast  : {len(items)} items in {fast_s:.1f}s = {fast_rate:.3f} items/s")
    print(f"ratio : {fast_rate / naive_rate:.1f}x; identical raw outputs {same_text}/{len(naive_items)} "
          f"({100 * same_text / len(naive_items):.1f}%), identical parsed answers {same_answer}/{len(naive_items)} "
          f"({100 * same_answer / len(naive_items):.1f}%)")
    if ceiling:
        print(f"tokens through the model: naive {ceiling['naive_tokens']}, fast {ceiling['fast_tokens']} "
              f"(prefixes {ceiling['prefix_tokens']}, suffixes {ceiling['suffix_tokens']}, padding "
              f"{ceiling['padding_tokens']}, generated {ceiling['generated_tokens']}): token ratio "
              f"{ceiling['ratio']:.1f}x (compute-bound work; naive also pays one weight pass per token)")
    print(f"load average: {load_start[0]:.1f} at start, {load_end[0]:.1f} at end")
    print(json.dumps(result))
    if args.profile:
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("tottime").print_stats(18)
        print("\nfast path profile (second run, top functions by own time):")
        print(buf.getvalue())


if __name__ == "__main__":
    main()
