"""How much of the machine a text run uses: the machine's rate on the model's own matrix shapes,
the run's necessary work, and the measured time, for generation and for constrained answers.

In one process, on the same items and the same loaded model:

1. **The machine.** The model's own linear layers (q, k, v, o, gate, up, down and the output
   layer) as ``torch`` matrix multiplies of M tokens, for M in ``--rates`` (default 1 to 2,048):
   GFLOP/s at each M. The limit uses the best of them (a run that batched perfectly would
   multiply at that rate).
2. **The necessary work.** Each context's prompts as a token trie: every common prefix is
   prefilled once (what ``framebench`` could at best share), then every generated token (the
   answer plus its end token, as the run produced them). FLOPs: 2 per weight per token, the output
   layer only where a token comes out, attention 4 x layers x heads x head_dim per (query, key)
   pair at the actual positions. Constrained answers: the same prompt trie, one output-layer row
   per item (each allowed answer's first token; longer answers add their tokens).
3. **The runs.** ``framebench`` generation (``run_text`` with ``hf:``), ``framebench``
   constrained answers (``answer_probabilities``), and as reference rows the naive loop (one
   ``generate`` per prompt) and an lm-eval-style loop (length-sorted left-padded batches), each
   with its own necessary work (the naive loop shares nothing).

utilization = necessary FLOPs / measured seconds / the machine's best rate. Prints a table and a
JSON line. Needs torch and transformers (plus this checkout)::

    python bench/limit.py                                  # SmolLM2-135M fp32, three law contexts
    python bench/limit.py --random-init 8b --contexts 0    # a GPU box: every law item, bf16
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import engines  # noqa: E402  (bench/engines.py: the engines, items and random-init shapes)

from framebench.backends.prefix_trie import trie_positions  # noqa: E402

RATE_TOKENS = "1,8,32,128,512,2048"


# ---- the machine --------------------------------------------------------------------------
def layer_shapes(cfg) -> list[tuple[int, int]]:
    """(in, out) of one decoder layer's linear maps."""
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    h, kv, i = cfg.hidden_size, cfg.num_key_value_heads * head_dim, cfg.intermediate_size
    q = cfg.num_attention_heads * head_dim
    return [(h, q), (h, kv), (h, kv), (q, h), (h, i), (h, i), (i, h)]


def machine_rates(backend, tokens: list[int], repeats: int = 3) -> dict[int, float]:
    """GFLOP/s of the model's layer multiplies (plus its output layer) at each token count."""
    import torch

    cfg, dtype, device = backend.model.config, backend.model.dtype, backend.device
    shapes = layer_shapes(cfg) + [(cfg.hidden_size, cfg.vocab_size)]
    weights = [torch.randn(n_in, n_out, dtype=dtype, device=device) * 0.02 for n_in, n_out in shapes]
    rates = {}
    with torch.inference_mode():
        for m in tokens:
            xs = [torch.randn(m, n_in, dtype=dtype, device=device) for n_in, _ in shapes]
            flops = sum(2 * m * n_in * n_out for n_in, n_out in shapes)
            best = float("inf")
            for _ in range(repeats):
                engines.sync(backend)
                start = time.perf_counter()
                for x, w in zip(xs, weights, strict=True):
                    x @ w
                engines.sync(backend)
                best = min(best, time.perf_counter() - start)
            rates[m] = flops / best / 1e9
    return rates


# ---- the work -----------------------------------------------------------------------------
def model_flops(cfg, body_params: int, tokens: int, logits: int, attention_pairs: int) -> float:
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    lm_head = cfg.hidden_size * cfg.vocab_size
    return (2 * body_params * tokens + 2 * lm_head * logits
            + 4 * cfg.num_hidden_layers * cfg.num_attention_heads * head_dim * attention_pairs)


def necessary_work(backend, items, chats, generated: dict[str, int] | None, share: bool) -> dict:
    """Prompt tokens (trie-unique per context when ``share``, else all), generated tokens and
    their FLOPs; ``generated`` None: constrained answers (one output row per item)."""
    cfg = backend.model.config
    body = engines.n_params(backend.model, embeddings=False)
    by_context: dict[str, list[list[int]]] = {}
    lengths = {}
    for it in items:
        seq = backend.encode(chats[it["item_id"]])
        lengths[it["item_id"]] = len(seq)
        by_context.setdefault(it["context_id"], []).append(seq)
    prompt_tokens = pairs = 0
    for seqs in by_context.values():
        if share:
            nodes, depths = trie_positions(seqs)
        else:
            nodes, depths = sum(map(len, seqs)), sum(n * (n + 1) // 2 for n in map(len, seqs))
        prompt_tokens, pairs = prompt_tokens + nodes, pairs + depths
    decode = 0
    for it in items if generated else ():
        n, g = lengths[it["item_id"]], generated[it["item_id"]]
        decode += g - 1  # the first new token comes out of the prompt's last position
        pairs += sum(range(n + 1, n + g))
    logits = len(items) + decode
    return {"prompt_tokens": prompt_tokens, "generated_tokens": decode + (len(items) if generated else 0),
            "flops": model_flops(cfg, body, prompt_tokens + decode, logits, pairs)}


def generated_tokens(backend, items, outputs: dict[str, str]) -> dict[str, int]:
    """Tokens each item generated: its output's tokens plus the end token, within the budget."""
    budget = {fmt: decoding.max_new_tokens for fmt, decoding in decodings_of(items).items()}
    return {it["item_id"]: min(budget[it["format"]], len(backend.tokenizer(
        outputs[it["item_id"]], add_special_tokens=False)["input_ids"]) + 1) for it in items}


def decodings_of(items):
    from framebench.text_eval.framingqa.prompts import decoding_for

    return {fmt: decoding_for(fmt) for fmt in ("binary", "mc") if any(it["format"] == fmt for it in items)}


# ---- main ---------------------------------------------------------------------------------
def load_backend(args):
    from framebench.backends.hf import HFBackend

    if args.random_init:
        return engines.random_init_backend(args.random_init, args.tokenizer, args.dtype, "auto")
    model = args.model or "smollm2"
    if model == "smollm2":
        from framebench.backends.smollm2 import smollm2_dir

        return HFBackend(str(smollm2_dir()), spec="smollm2", dtype=args.dtype)
    path = model.removeprefix("hf:")
    return HFBackend(path, spec=f"hf:{path}", dtype=args.dtype)


def pick(items: list[dict], task: str, contexts: int) -> list[dict]:
    """The first ``contexts`` contexts of ``task`` (0: all of them), FramingQA text items only."""
    items = [it for it in items if it.get("suite") == "framingqa" and it["format"] in ("binary", "mc")
             and it["task"] == task]
    keep = list(dict.fromkeys(it["context_id"] for it in items))
    keep = set(keep[:contexts] if contexts else keep)
    return [it for it in items if it["context_id"] in keep]


def per_context_row(backend, items, chats, decodings, tmp: Path, outputs: dict[str, str]):
    """The reference row for batches across contexts: the same run with every batch inside one
    context (``mix_contexts=false``, the CPU default before); its greedy outputs must be the same."""
    before, backend.mix_contexts = backend.mix_contexts, False
    try:
        (alone, _), seconds = timed(backend, lambda: engines.framebench_engine(
            backend, items, chats, decodings, tmp, "per-context"))
    finally:
        backend.mix_contexts = before
    if alone != outputs:
        sys.exit("error: per-context batches changed a greedy output")
    generated = generated_tokens(backend, items, alone)
    return "  per-context batches", items, seconds, necessary_work(backend, items, chats, generated, True)


def cli_run(data: Path, out: Path, answer: str = "generate", extra: tuple[str, ...] = ()) -> None:
    """The whole ``framebench text`` command in this process (its own model load, item reading,
    planning, result store, records and summary)."""
    from framebench.cli import main

    argv = sys.argv
    sys.argv = ["framebench", "text", "--data", str(data), "--out", str(out), "--answer", answer, "--quiet", *extra]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
    finally:
        sys.argv = argv


def cli_row(backend, items, chats, tmp: Path, outputs: dict[str, str], model: str, extra: tuple[str, ...]):
    """``framebench text`` as a user runs it, on the same items; its greedy outputs must be the same."""
    from framebench.records import read_records

    data = tmp / "cli-data"
    if not (data / "items.jsonl").exists():
        from framebench.items import write_items

        write_items(items, data / "items.jsonl")
    _, seconds = timed(backend, lambda: cli_run(data, tmp / "run-cli", "generate", ("--model", model, *extra)))
    records = read_records(tmp / "run-cli")
    got = dict(zip(records["item_id"], records["output"], strict=True))
    if got != outputs:
        sys.exit("error: the framebench text command's greedy outputs differ from run_text's")
    generated = generated_tokens(backend, items, got)
    return "framebench text (command)", items, seconds, necessary_work(backend, items, chats, generated, True)


def timed(backend, fn) -> tuple[object, float]:
    engines.sync(backend)
    start = time.perf_counter()
    result = fn()
    engines.sync(backend)
    return result, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--model", help="smollm2 (default), hf:PATH or a model folder")
    source.add_argument("--random-init", choices=sorted(engines.SHAPES), help="random weights of a real shape")
    ap.add_argument("--tokenizer", type=Path, default=engines.DEFAULT_TOKENIZER)
    ap.add_argument("--dtype", help="torch dtype (default: float32 on CPU, bfloat16 on GPU for --random-init)")
    ap.add_argument("--items", type=Path, default=engines.DEMO)
    ap.add_argument("--task", default="law_issue_spotting")
    ap.add_argument("--contexts", type=int, default=3, help="contexts of the task (0: all)")
    ap.add_argument("--rates", default=RATE_TOKENS, help="token counts of the machine-rate multiplies")
    ap.add_argument("--naive-every", type=int, default=1, help="time the naive loop on every k-th item")
    ap.add_argument("--lmeval-batch", type=int, default=64)
    ap.add_argument("--per-context", action=argparse.BooleanOptionalAction, default=None,
                    help="also time generation with every batch inside one context (default: on a CPU)")
    ap.add_argument("--cli", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the whole `framebench text` command on the same items (not with --random-init)")
    ap.add_argument("--skip", default="", help="reference rows to leave out: naive,lmeval,constrained")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()

    import torch

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from framebench.text_eval.framingqa.prompts import render_chat

    backend = load_backend(args)
    if args.per_context is None:
        args.per_context = backend.device.type == "cpu"
    items = pick(engines.read_items(args.items), args.task, args.contexts)
    if not items:
        sys.exit(f"error: {args.items}: no FramingQA items of task {args.task!r}")
    chats = {it["item_id"]: render_chat(it) for it in items}
    decodings = decodings_of(items)
    naive_items = items[::args.naive_every]
    device = (torch.cuda.get_device_name(backend.device) if backend.device.type == "cuda"
              else f"CPU, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"model {backend.spec} ({backend.model.dtype}); {len(items)} items in "
          f"{len({it['context_id'] for it in items})} contexts of {args.task}; device {device}", flush=True)

    rates = machine_rates(backend, [int(t) for t in args.rates.split(",")])
    best = max(rates.values())
    print("machine rate (GFLOP/s) at M tokens: " + ", ".join(f"{m}: {r:.1f}" for m, r in rates.items()), flush=True)
    backend.generate_naive([chats[items[0]["item_id"]]], decodings[items[0]["format"]])  # warm-up

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        (outputs, _), seconds = timed(backend, lambda: engines.framebench_engine(
            backend, items, chats, decodings, Path(tmp), "auto"))
        generated = generated_tokens(backend, items, outputs)
        rows.append(("framebench generate", items, seconds, necessary_work(backend, items, chats, generated, True)))
        if args.cli and not args.random_init:
            rows.append(cli_row(backend, items, chats, Path(tmp), outputs, args.model or "smollm2",
                                (f"-M=dtype={args.dtype}",) if args.dtype else ()))
        if args.per_context and len({it["context_id"] for it in items}) > 1:
            rows.append(per_context_row(backend, items, chats, decodings, Path(tmp), outputs))
        skip = set(args.skip.split(","))
        if "constrained" not in skip:
            _, seconds = timed(backend, lambda: engines.constrained_engine(backend, items, chats))
            rows.append(("framebench constrained", items, seconds, necessary_work(backend, items, chats, None, True)))
        if "naive" not in skip:
            naive, seconds = timed(backend, lambda: engines.naive_engine(backend, naive_items, chats, decodings))
            rows.append(("naive loop", naive_items, seconds, necessary_work(
                backend, naive_items, chats, generated_tokens(backend, naive_items, naive), False)))
        if "lmeval" not in skip:
            lmeval, seconds = timed(backend, lambda: engines.lmeval_engine(backend, items, chats, decodings,
                                                                            args.lmeval_batch))
            rows.append((f"lm-eval style ({args.lmeval_batch})", items, seconds, necessary_work(
                backend, items, chats, generated_tokens(backend, items, lmeval), False)))

    table = []
    for name, chosen, seconds, work in rows:
        limit = work["flops"] / (best * 1e9)
        table.append({"run": name, "items": len(chosen), "prompt_tokens_per_item": round(work["prompt_tokens"] / len(chosen), 1),
                      "generated_tokens_per_item": round(work["generated_tokens"] / len(chosen), 2),
                      "gflop_per_item": round(work["flops"] / len(chosen) / 1e9, 3),
                      "seconds_per_item": round(seconds / len(chosen), 4),
                      "limit_seconds_per_item": round(limit / len(chosen), 4),
                      "achieved_gflops": round(work["flops"] / seconds / 1e9, 1),
                      "utilization": round(limit / seconds, 4)})
    print(f"\n{'run':<26} {'items':>6} {'prompt tok':>10} {'gen tok':>8} {'GFLOP':>7} {'s/item':>8} "
          f"{'limit s':>8} {'GFLOP/s':>8} {'util':>6}")
    for row in table:
        print(f"{row['run']:<26} {row['items']:>6} {row['prompt_tokens_per_item']:>10} "
              f"{row['generated_tokens_per_item']:>8} {row['gflop_per_item']:>7} {row['seconds_per_item']:>8} "
              f"{row['limit_seconds_per_item']:>8} {row['achieved_gflops']:>8} {100 * row['utilization']:5.1f}%")
    print(f"limit: the necessary FLOPs at the machine's best measured rate, {best:.1f} GFLOP/s; prompt tokens "
          "per item are trie-unique for framebench's rows and every token for the reference loops")
    result = {"model": backend.spec, "dtype": str(backend.model.dtype), "device": device, "task": args.task,
              "items": len(items), "machine_gflops": {str(m): round(r, 1) for m, r in rates.items()},
              "best_gflops": round(best, 1), "runs": table}
    print(json.dumps(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
