"""Text engines side by side: one process, the same items, the same model.

Engines (each timed over the same FramingQA items; binary items get 8 new tokens, MC items 16):

* ``naive``        one ``generate`` call per prompt (the reference; ``--naive-every k`` times every k-th item)
* ``lmeval-B``     lm-eval-harness style: prompts sorted by length, left-padded batches of B, ``generate``
* ``framebench-X`` the ``framebench text`` path with ``hf:`` (``--batch-size X``; ``auto`` is the default).
                   With pandas/pyarrow importable this is ``run_text`` itself (store, records); on a box
                   with only torch + transformers it is the same backend calls the runner makes.
* ``vllm``         ``vllm:`` (in-process vLLM) when ``import vllm`` works

Constrained answers (``--answer constrained``: each allowed answer's probability; skip with
``--no-constrained``), timed on the same items in calls of whole contexts as the runner sends them:

* ``framebench-constrained`` ``hf:``'s ``answer_probabilities`` on a backend that has not generated
  these prompts (its first-step memory cleared, so the prompts are really run)
* ``vllm-constrained``       ``vllm:``'s (one ``max_tokens=1`` request per prompt, the allowed tokens'
                             log-probabilities); its table row gives the largest probability
                             difference to ``hf:`` and how many picked answers are the same

For each: items/s, ratio to naive and to the best lm-eval batch size, the share of parsed answers
identical to naive, peak memory, and the compute limit: the FLOPs that must be spent anyway (each
context's shared prefix prefilled once, every remaining prompt token, every generated token, with
attention) divided by the device's peak rate, as items/s. Prints a table and one JSON line.

Needs only torch and transformers (plus this checkout). Examples::

    python bench/engines.py --model smollm2                           # CPU, one law context
    python bench/engines.py --random-init 8b --all-items --naive-every 20   # a GPU box, no downloads

``--random-init SHAPE`` (135m, 1.7b, 8b: SmolLM2-135M, SmolLM2-1.7B and Llama-3.1-8B configurations;
``tiny``: two small layers, for checking the scripts on a CPU)
builds a random-weight model of that shape with a local tokenizer (``--tokenizer``, default the
SmolLM2 tokenizer framebench caches), so no weights need downloading; the compute per token is the
real model's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEMO = REPO / "datasets" / "demo" / "framingqa" / "items.jsonl"
DEFAULT_TOKENIZER = Path("~/.cache/framebench/smollm2-135m-instruct").expanduser()

SHAPES = {  # public configurations of the models whose compute we want (architecture only)
    "135m": dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                 num_attention_heads=9, num_key_value_heads=3, tie_word_embeddings=True, rope_theta=100000.0),
    "1.7b": dict(vocab_size=49152, hidden_size=2048, intermediate_size=8192, num_hidden_layers=24,
                 num_attention_heads=32, num_key_value_heads=32, tie_word_embeddings=True, rope_theta=130000.0),
    "tiny": dict(vocab_size=49152, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True, rope_theta=10000.0),
    "8b": dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False, rope_theta=500000.0),
}
# Dense bf16/fp16 tensor-core peaks (TFLOP/s) from the vendors' data sheets; fp32 runs use TF32 (half).
GPU_PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "L4": 121.0, "A10": 125.0,
                   "4090": 165.0, "B200": 2250.0}
CPU_FLOPS_PER_CYCLE = 32  # fp32, AVX2: two 8-lane FMA units per core
CPU_GHZ = 2.5


def read_items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pick_items(items: list[dict], context: str | None, all_items: bool, task: str | None = None) -> list[dict]:
    items = [it for it in items if it.get("suite") == "framingqa" and it["format"] in ("binary", "mc")]
    if all_items:
        return items
    if task:
        return [it for it in items if it["task"] == task]
    context = context or next(it["context_id"] for it in items if it["task"] == "law_issue_spotting")
    return [it for it in items if it["context_id"] == context]


# ---- models -------------------------------------------------------------------------------
def random_init_backend(shape: str, tokenizer_dir: Path, dtype: str | None, batch_size):
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from framebench.backends.hf import HFBackend

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch_dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if device.type == "cuda" else torch.float32)
    cfg = LlamaConfig(**SHAPES[shape], max_position_embeddings=8192, rms_norm_eps=1e-5,
                      bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                      pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                      else tokenizer.eos_token_id)
    torch.manual_seed(0)
    with device:
        model = LlamaForCausalLM._from_config(cfg, dtype=torch_dtype).eval()
    return HFBackend.from_loaded(model, tokenizer, spec=f"hf:random-init-{shape}",
                                 fingerprint=f"hf:random-init:{shape}:{torch_dtype}:seed0", batch_size=batch_size,
                                 device=str(device))


def n_params(model, embeddings: bool) -> int:
    skip = set() if embeddings else {id(model.get_input_embeddings().weight), id(model.get_output_embeddings().weight)}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


# ---- engines ------------------------------------------------------------------------------
def naive_engine(backend, items, chats, decodings):
    return {it["item_id"]: backend.generate_naive([chats[it["item_id"]]], decodings[it["format"]])[0]
            for it in items}


def lmeval_engine(backend, items, chats, decodings, batch: int):
    """What lm-eval-harness does for generate_until: per generation setting, prompts sorted by
    length (longest first), left-padded batches, ``generate`` with greedy decoding."""
    import torch

    tok = backend.tokenizer
    tok.padding_side = "left"
    outputs = {}
    for fmt, decoding in decodings.items():
        chosen = [it for it in items if it["format"] == fmt]
        texts = {it["item_id"]: backend.render(chats[it["item_id"]]) for it in chosen}
        lengths = {i: len(backend.encode(chats[i])) for i in texts}
        order = sorted(texts, key=lambda i: -lengths[i])
        config = backend._generation_config(decoding)
        with torch.inference_mode():
            for start in range(0, len(order), batch):
                ids = order[start:start + batch]
                enc = tok([texts[i] for i in ids], return_tensors="pt", padding=True,
                          add_special_tokens=False).to(backend.device)
                out = backend.model.generate(**enc, generation_config=config, tokenizer=tok)
                for i, row in zip(ids, out[:, enc["input_ids"].shape[1]:].tolist(), strict=True):
                    outputs[i] = backend._decode(row, decoding)
    return outputs


def framebench_engine(backend, items, chats, decodings, tmp: Path, tag: str):
    """``framebench text`` through ``run_text`` when its dependencies import; else the backend
    calls the runner makes (per decoding, whole contexts per call)."""
    try:
        from framebench.api import run_text
        from framebench.items import write_items
        from framebench.records import read_records
    except ImportError:
        run_text = None
    if run_text is not None:
        data = tmp / "data"
        if not (data / "items.jsonl").exists():
            write_items(items, data / "items.jsonl")
        run_text(backend.spec, data, tmp / f"run-{tag}", batch_size=backend.batch_size, progress=False,
                 backend=backend)
        records = read_records(tmp / f"run-{tag}")
        return dict(zip(records["item_id"], records["output"], strict=True)), "run_text"
    size = getattr(backend, "call_size", None) or 256
    outputs = {}
    for fmt, decoding in decodings.items():
        by_context: dict[str, list[str]] = {}
        for it in items:
            if it["format"] == fmt:
                by_context.setdefault(it["context_id"], []).append(it["item_id"])
        calls: list[list[str]] = [[]]
        for ids in by_context.values():
            if calls[-1] and len(calls[-1]) + len(ids) > size:
                calls.append([])
            calls[-1].extend(ids)
        for call in (c for c in calls if c):
            for i, text in zip(call, backend.generate([chats[i] for i in call], decoding), strict=True):
                outputs[i] = text
    return outputs, "backend.generate (runner dependencies not installed)"


def constrained_calls(items: list[dict], size: int | None) -> list[list[dict]]:
    """Whole contexts per call of about ``size`` items, packed as the runner packs them."""
    from framebench.pipeline.text import pack_calls

    return pack_calls(items, size, context_of=lambda it: it["context_id"])


def constrained_engine(backend, items, chats) -> dict[str, dict[str, float]]:
    """``answer_probabilities`` over every item, in the runner's calls (``call_size`` or 256)."""
    from framebench.backends.constrained import allowed_answers

    if hasattr(backend, "_first_step"):
        backend._first_step.clear()  # hf: keeps first-step answer log-probs of what it generated
    probs = {}
    for call in constrained_calls(items, getattr(backend, "call_size", None)):
        choices = [allowed_answers(it["format"], len(it.get("options") or [])) for it in call]
        found = backend.answer_probabilities([chats[it["item_id"]] for it in call], choices)
        probs.update(zip((it["item_id"] for it in call), found, strict=True))
    return probs


def compare_probs(got: dict, want: dict) -> dict:
    from framebench.backends.constrained import pick

    diff = max(abs(got[i][a] - want[i][a]) for i in want for a in want[i])
    same = sum(pick(got[i]) == pick(want[i]) for i in want)
    return {"max_prob_diff": diff, "identical_answers": f"{same}/{len(want)}"}


# ---- accounting ---------------------------------------------------------------------------
def work_flops(backend, items, chats, outputs) -> dict:
    """FLOPs that any engine must spend: each context's shared prefix once, every other prompt
    token, every generated token (the answer plus its eos, within the budget); matmuls at 2 FLOPs
    per weight, attention at 4 * layers * heads * head_dim per (query, key) pair, logits only at
    the positions that produce a token."""
    from framebench.backends.prefix_groups import group_by_shared_prefix

    model, cfg = backend.model, backend.model.config
    ids = [it["item_id"] for it in items]
    seqs = [backend.encode(chats[i]) for i in ids]
    budget = {"binary": 8, "mc": 16}
    gen = [min(budget[it["format"]], len(backend.tokenizer(outputs[it["item_id"]], add_special_tokens=False)
                                         ["input_ids"]) + 1) for it in items]
    prefill = decode = attn_pairs = 0
    for prefix_len, members in group_by_shared_prefix(seqs, group_overhead=0):
        prefill += prefix_len
        attn_pairs += prefix_len * (prefix_len + 1) // 2
        for i in members:
            n, g = len(seqs[i]), gen[i]
            prefill += n - prefix_len
            attn_pairs += sum(range(prefix_len + 1, n + 1))
            decode += g - 1  # the first new token comes out of the prefill's last position
            attn_pairs += sum(range(n + 1, n + g))
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    body = n_params(model, embeddings=False)
    lm_head = cfg.hidden_size * cfg.vocab_size
    flops = (2 * body * (prefill + decode) + 2 * lm_head * (len(items) + decode)
             + 4 * cfg.num_hidden_layers * cfg.num_attention_heads * head_dim * attn_pairs)
    naive_tokens = sum(len(s) for s in seqs) + sum(gen)
    return {"prefill_tokens": prefill, "decode_tokens": decode, "naive_tokens": naive_tokens,
            "flops": flops, "params_non_embedding": body}


def device_peak(backend, override: float | None) -> tuple[float, str]:
    import torch

    if override:
        return override * 1e12, "given (--peak-tflops)"
    if backend.device.type == "cuda":
        name = torch.cuda.get_device_name(backend.device)
        for key, tflops in GPU_PEAK_TFLOPS.items():
            if key in name:
                half = backend.model.dtype == torch.float32
                return tflops * 1e12 / (2 if half else 1), f"{name}: data-sheet dense {'TF32' if half else 'bf16'}"
        return 0.0, f"{name}: unknown peak (pass --peak-tflops)"
    threads = torch.get_num_threads()
    return (threads * CPU_GHZ * 1e9 * CPU_FLOPS_PER_CYCLE,
            f"CPU estimate: {threads} threads x {CPU_GHZ} GHz x {CPU_FLOPS_PER_CYCLE} fp32 FLOP/cycle")


def peak_memory(backend) -> tuple[float, str]:
    import torch

    if backend.device.type == "cuda":
        return torch.cuda.max_memory_allocated(backend.device) / 2**30, "GiB allocated on the GPU"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "GiB max RSS of the process (cumulative)"


def reset_peak(backend) -> None:
    import torch

    if backend.device.type == "cuda":
        torch.cuda.synchronize(backend.device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(backend.device)


def sync(backend) -> None:
    import torch

    if backend.device.type == "cuda":
        torch.cuda.synchronize(backend.device)


# ---- main ---------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--model", default=None, help="smollm2 (default), hf:PATH or a model folder")
    source.add_argument("--random-init", choices=sorted(SHAPES), help="random weights of a real model's shape")
    ap.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER, help="tokenizer folder for --random-init")
    ap.add_argument("--dtype", help="torch dtype (default: float32 on CPU, bfloat16 on GPU for --random-init)")
    ap.add_argument("--items", type=Path, default=DEMO)
    ap.add_argument("--context", help="context_id (default: the first law_issue_spotting context)")
    ap.add_argument("--all-items", action="store_true", help="every FramingQA item instead of one context")
    ap.add_argument("--task", help="every item of one task (e.g. law_issue_spotting) instead of one context")
    ap.add_argument("--naive-every", type=int, default=1, help="time the naive engine on every k-th item")
    ap.add_argument("--lmeval-batches", default="64,256,1024")
    ap.add_argument("--framebench-batches", default="auto", help="comma-separated --batch-size values")
    ap.add_argument("--no-vllm", action="store_true")
    ap.add_argument("--no-constrained", action="store_true", help="skip the constrained-answer engines")
    ap.add_argument("--vllm-option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra vllm.LLM option (e.g. enforce_eager=true), repeatable")
    ap.add_argument("--peak-tflops", type=float, help="device peak for the compute limit (default: looked up)")
    ap.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = ap.parse_args()

    import torch

    from framebench.backends.hf import HFBackend
    from framebench.text_eval.framingqa.prompts import decoding_for, render_chat
    from framebench.text_eval.parsing import parse_answer

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    items = pick_items(read_items(args.items), args.context, args.all_items, args.task)
    if args.random_init:
        backend = random_init_backend(args.random_init, args.tokenizer, args.dtype, "auto")
    else:
        model = args.model or "smollm2"
        if model == "smollm2":
            from framebench.backends.smollm2 import smollm2_dir

            path = str(smollm2_dir())
        else:
            path = model.removeprefix("hf:")
        backend = HFBackend(path, spec=f"hf:{path}" if model != "smollm2" else "smollm2", dtype=args.dtype)
    chats = {it["item_id"]: render_chat(it) for it in items}
    decodings = {fmt: decoding_for(fmt) for fmt in ("binary", "mc") if any(it["format"] == fmt for it in items)}
    naive_items = items[:: args.naive_every]
    dev = (torch.cuda.get_device_name(backend.device) if backend.device.type == "cuda"
           else f"CPU, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"model {backend.spec} ({backend.model.dtype}); {len(items)} items in "
          f"{len({it['context_id'] for it in items})} contexts; naive on {len(naive_items)}; device {dev}; "
          f"torch {torch.__version__}; attention {getattr(backend.model.config, '_attn_implementation', '?')}",
          flush=True)
    backend.generate_naive([chats[items[0]["item_id"]]], decodings[items[0]["format"]])  # warm-up

    runs: dict[str, dict] = {}

    def timed(name: str, fn, n_items: int) -> dict:
        reset_peak(backend)
        t0 = time.perf_counter()
        result = fn()
        sync(backend)
        seconds = time.perf_counter() - t0
        outputs, note = result if isinstance(result, tuple) else (result, "")
        mem, mem_unit = peak_memory(backend)
        runs[name] = {"seconds": round(seconds, 2), "items": n_items, "items_per_s": round(n_items / seconds, 3),
                      "peak_memory_gib": round(mem, 2), "memory": mem_unit, "outputs": outputs, "note": note}
        print(f"  {name:<18} {n_items / seconds:9.2f} items/s  ({seconds:.1f}s, peak {mem:.2f} {mem_unit})",
              flush=True)
        return runs[name]

    with tempfile.TemporaryDirectory() as tmp:
        timed("naive", lambda: naive_engine(backend, naive_items, chats, decodings), len(naive_items))
        for value in args.framebench_batches.split(","):
            backend.batch_size = value if value == "auto" else int(value)
            timed(f"framebench-{value}", lambda v=value: framebench_engine(backend, items, chats, decodings,
                                                                           Path(tmp), v), len(items))
        backend.batch_size = "auto"
        constrained: dict[str, dict] = {}
        if not args.no_constrained:
            result = timed("framebench-constrained", lambda: constrained_engine(backend, items, chats), len(items))
            constrained["framebench-constrained"] = runs.pop("framebench-constrained") | {"probs": result["outputs"]}
        for value in args.lmeval_batches.split(","):
            if value:
                timed(f"lmeval-{value}", lambda v=int(value): lmeval_engine(backend, items, chats, decodings, v),
                      len(items))
        vllm_note = "skipped (--no-vllm)" if args.no_vllm else vllm_run(args, backend, items, chats, decodings,
                                                                         timed, Path(tmp), constrained, runs)

    naive = runs["naive"]["outputs"]

    def answer_of(output: str, item: dict) -> tuple[str, str]:
        parsed = parse_answer(output, item["format"], item["options"] or None)
        return parsed.answer, parsed.parse

    work = work_flops(backend, items, chats, next(r["outputs"] for n, r in runs.items() if n.startswith("framebench")))
    peak, peak_note = device_peak(backend, args.peak_tflops)
    limit = len(items) / (work["flops"] / peak) if peak else None
    lmeval_best = max((r["items_per_s"] for n, r in runs.items() if n.startswith("lmeval")), default=None)
    table = []
    for name, run in runs.items():
        same = sum(answer_of(run["outputs"][it["item_id"]], it) == answer_of(naive[it["item_id"]], it)
                   for it in naive_items)
        raw = sum(run["outputs"][it["item_id"]] == naive[it["item_id"]] for it in naive_items)
        row = {"engine": name, **{k: v for k, v in run.items() if k != "outputs"},
               "x_naive": round(run["items_per_s"] / runs["naive"]["items_per_s"], 2),
               "x_best_lmeval": round(run["items_per_s"] / lmeval_best, 2) if lmeval_best else None,
               "identical_answers": f"{same}/{len(naive_items)}",
               "identical_answers_pct": round(100 * same / len(naive_items), 2),
               "identical_outputs": f"{raw}/{len(naive_items)}",
               "share_of_compute_limit": round(run["items_per_s"] / limit, 4) if limit else None}
        table.append(row)

    print(f"\n{'engine':<18} {'items/s':>9} {'x naive':>8} {'x lm-eval':>9} {'same answers':>13} "
          f"{'peak GiB':>9} {'of limit':>9}")
    for row in table:
        share = f"{100 * row['share_of_compute_limit']:.1f}%" if limit else "-"
        print(f"{row['engine']:<18} {row['items_per_s']:9.2f} {row['x_naive']:8.2f} "
              f"{row['x_best_lmeval'] if row['x_best_lmeval'] is not None else '-':>9} "
              f"{row['identical_answers_pct']:12.1f}% {row['peak_memory_gib']:9.2f} "
              f"{share:>9}")
    print(f"compute limit: {limit:.1f} items/s ({work['flops'] / 1e12:.2f} TFLOP for {len(items)} items: "
          f"{work['prefill_tokens']} tokens to prefill, {work['decode_tokens']} to decode; naive feeds "
          f"{work['naive_tokens']}) at {peak / 1e12:.2f} TFLOP/s ({peak_note})" if limit else
          f"compute limit: unknown ({peak_note})")
    print(f"vllm: {vllm_note}")
    constrained_table = []
    reference = constrained.get("framebench-constrained", {}).get("probs")
    for name, run in constrained.items():
        row = {"engine": name, **{k: v for k, v in run.items() if k not in ("outputs", "probs")}}
        if reference is not None and name != "framebench-constrained":
            row.update(compare_probs(run["probs"], reference))
        constrained_table.append(row)
    if constrained_table:
        print(f"\n{'constrained':<24} {'items/s':>9} {'same picks as hf:':>18} {'max |dP|':>10}")
        for row in constrained_table:
            diff = f"{row['max_prob_diff']:.1e}" if "max_prob_diff" in row else "-"
            print(f"{row['engine']:<24} {row['items_per_s']:9.2f} {row.get('identical_answers', '-'):>18} {diff:>10}")
    result = {"model": backend.spec, "dtype": str(backend.model.dtype), "device": dev, "items": len(items),
              "naive_items": len(naive_items), "engines": table, "constrained": constrained_table,
              "work": work,
              "peak_flops": peak, "peak_note": peak_note,
              "compute_limit_items_per_s": round(limit, 2) if limit else None, "vllm": vllm_note}
    print(json.dumps(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1) + "\n")


def vllm_run(args, backend, items, chats, decodings, timed, tmp: Path, constrained: dict, runs: dict) -> str:
    """Time ``vllm:`` on the same model when vLLM imports (a random-init model is saved first):
    its start-up, generation, and (unless --no-constrained) constrained answers."""
    try:
        import vllm  # noqa: F401
    except ImportError as exc:
        return f"not importable ({exc})"
    from framebench.backends.vllm_engine import VLLMBackend

    if backend.model_dir is None:
        model_dir = tmp / "random-init"
        backend.model.save_pretrained(model_dir)
        backend.tokenizer.save_pretrained(model_dir)
    else:
        model_dir = backend.model_dir
    from framebench.registry import engines

    options = {"gpu_memory_utilization": 0.5} if backend.device.type == "cuda" else {}
    extra = dict(pair.split("=", 1) for pair in args.vllm_option)
    options.update(engines()["vllm"].check_options({k: v for k, v in extra.items()
                                                    if engines()["vllm"].option(k)}))
    options.update({k: v for k, v in extra.items() if not engines()["vllm"].option(k)})
    t0 = time.perf_counter()
    engine = VLLMBackend(str(model_dir), dtype=str(backend.model.dtype).removeprefix("torch."), **options)
    startup = time.perf_counter() - t0
    print(f"  vllm start-up      {startup:9.1f} s", flush=True)

    def run():
        outputs = {}
        for fmt, decoding in decodings.items():
            chosen = [it for it in items if it["format"] == fmt]
            for call in constrained_calls(chosen, engine.call_size):
                ids = [it["item_id"] for it in call]
                outputs.update(zip(ids, engine.generate([chats[i] for i in ids], decoding), strict=True))
        return outputs

    timed("vllm", run, len(items))
    runs["vllm"]["startup_s"] = round(startup, 1)
    if not args.no_constrained:
        result = timed("vllm-constrained", lambda: constrained_engine(engine, items, chats), len(items))
        constrained["vllm-constrained"] = runs.pop("vllm-constrained") | {"probs": result["outputs"],
                                                                          "startup_s": round(startup, 1)}
    return f"measured (start-up {startup:.1f} s, calls of {engine.call_size})"


if __name__ == "__main__":
    main()
