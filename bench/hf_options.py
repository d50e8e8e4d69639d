"""`hf:` options against each other, interleaved in one process on the same items.

Loads SmolLM2 (or ``--model``) once, then runs framebench generation (``run_text`` through the
runner's calls) on the first ``--contexts`` contexts of a task once per variant per repeat, the
variants interleaved so that a change in the machine's load falls on all of them, and prints each
variant's best and median seconds an item and whether its greedy outputs equal the first
variant's (the bench stops if they do not)::

    python bench/hf_options.py --items DIR/items.jsonl --contexts 3 --repeats 3 \\
        prefix_trie=False prefix_trie=True
    python bench/hf_options.py --items DIR/items.jsonl batch_size=auto batch_size=128

A variant is ``name=value[,name=value]`` over the backend's options (``prefix_trie``,
``batch_size``, ``mix_contexts``): Python literals (True, 128, None), anything else a string.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import engines  # noqa: E402
import limit  # noqa: E402

OPTIONS = ("prefix_trie", "batch_size", "mix_contexts", "prefix_reuse")


def parse_variant(text: str) -> dict[str, object]:
    variant = {}
    for part in filter(None, text.split(",")):
        name, sep, value = part.partition("=")
        if not sep or name not in OPTIONS:
            sys.exit(f"error: variant {text!r}: expected name=value with name one of {', '.join(OPTIONS)}")
        try:
            variant[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            variant[name] = value
    return variant


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+", help="name=value[,name=value] per variant")
    ap.add_argument("--model", help="smollm2 (default), hf:PATH or a model folder")
    ap.add_argument("--items", type=Path, default=engines.DEMO)
    ap.add_argument("--task", default="law_issue_spotting")
    ap.add_argument("--contexts", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    variants = [parse_variant(v) for v in args.variants]

    from framebench.text_eval.framingqa.prompts import render_chat

    backend = limit.load_backend(argparse.Namespace(random_init=None, model=args.model, dtype=None, tokenizer=None))
    items = limit.pick(engines.read_items(args.items), args.task, args.contexts)
    if not items:
        sys.exit(f"error: {args.items}: no FramingQA items of task {args.task!r}")
    chats = {it["item_id"]: render_chat(it) for it in items}
    decodings = limit.decodings_of(items)
    backend.generate_naive([chats[items[0]["item_id"]]], decodings[items[0]["format"]])  # warm-up
    defaults = {name: getattr(backend, name) for variant in variants for name in variant}
    seconds: list[list[float]] = [[] for _ in variants]
    reference = None
    for rep in range(args.repeats):
        for i, variant in enumerate(variants):
            for name, value in {**defaults, **variant}.items():
                setattr(backend, name, value)
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                outputs, _ = engines.framebench_engine(backend, items, chats, decodings, Path(tmp), "auto")
                seconds[i].append(time.perf_counter() - start)
            reference = outputs if reference is None else reference
            if outputs != reference:
                sys.exit(f"error: variant {args.variants[i]!r} changed a greedy output")
            print(f"repeat {rep + 1}: {args.variants[i]}: {seconds[i][-1] / len(items):.4f} s an item", flush=True)
    print(f"\n{len(items)} items of {args.task}; every variant's greedy outputs equal")
    for text, times in zip(args.variants, seconds, strict=True):
        print(f"{text:<40} best {min(times) / len(items):.4f}  median {statistics.median(times) / len(items):.4f} s an item")


if __name__ == "__main__":
    main()
