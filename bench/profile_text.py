"""Where a text run's time goes: ``torch.profiler`` over framebench generate, framebench constrained
and the lm-eval-style loop on the same items, each summarised by kind of work.

Per run: wall seconds; time in matrix multiplies, attention, cache copies and assembly (copy, cat,
index, zeros), host syncs (``item``/``tolist``/device-to-host copies), other operators, and the
rest (Python between operators: the runner, tokenizing, the decoding loop's bookkeeping); on a
GPU also the device's busy time. A forward hook counts the tokens each forward multiplied, the
real ones among them (padding waste = the rest) and the rows of every decoding step.

    python bench/profile_text.py --items DIR/items.jsonl --limit 282          # SmolLM2 via the CLI
    python bench/profile_text.py --random-init 8b --items DIR/items.jsonl --limit 4000 --out OUT

With ``--model smollm2`` (the default) the framebench rows are the whole ``framebench text``
command run in this process (``--data`` a folder holding the chosen items, ``--out`` a fresh run
folder); with ``--random-init`` they are what ``bench/limit.py`` times (``run_text`` with the
already-built backend, or the runner's backend calls where pandas is missing; the CLI cannot load
random weights). Writes ``profile-<run>.txt`` (the operator table) and
``profile.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import engines  # noqa: E402
import limit  # noqa: E402

KINDS = {  # operator name fragments -> kind (first match wins)
    "attention": ("scaled_dot_product", "flash", "efficient_attention", "softmax", "baddbmm"),
    "matmul": ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear", "gemm"),
    "host sync": ("aten::item", "_local_scalar_dense", "aten::nonzero", "cudaStreamSynchronize",
                  "cudaDeviceSynchronize", "Memcpy DtoH"),
    "cache copies": ("aten::copy_", "aten::cat", "aten::index", "aten::zeros", "aten::fill_",
                     "aten::repeat_interleave", "aten::clone", "aten::empty", "aten::slice_scatter",
                     "aten::select_scatter", "aten::masked"),
}


def kind_of(name: str) -> str:
    for kind, parts in KINDS.items():
        if any(p in name for p in parts):
            return kind
    return "other ops"


class Counts:
    """Tokens per forward (multiplied / real) and rows per decoding step, by a forward pre-hook."""

    def __init__(self):
        self.tokens = self.real = self.forwards = 0
        self.step_rows: Counter = Counter()

    def hook(self, _module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            return
        rows, width = ids.shape
        self.forwards += 1
        self.tokens += rows * width
        mask = kwargs.get("attention_mask")
        self.real += int(mask[:, -width:].sum()) if mask is not None and mask.dim() == 2 else rows * width
        if width == 1:
            self.step_rows[rows] += 1

    def summary(self) -> dict:
        steps = sum(self.step_rows.values())
        rows = sum(r * n for r, n in self.step_rows.items())
        return {"forwards": self.forwards, "tokens_multiplied": self.tokens, "real_tokens": self.real,
                "padding_share": round(1 - self.real / max(self.tokens, 1), 3), "decoding_steps": steps,
                "rows_per_step": round(rows / max(steps, 1), 1)}


def profiled(fn, cuda: bool):
    import torch
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        start = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        wall = time.perf_counter() - start
    return prof, wall


def breakdown(prof, wall: float, cuda: bool) -> dict:
    """Seconds by kind: host self time of the operators (and device time on a GPU); ``outside
    operators`` is the wall time no operator covers (Python between them)."""
    host: Counter = Counter()
    device: Counter = Counter()
    for ev in prof.key_averages():
        host[kind_of(ev.key)] += ev.self_cpu_time_total / 1e6
        if cuda:
            device[kind_of(ev.key)] += getattr(ev, "self_device_time_total", 0) / 1e6
    out = {"wall_s": round(wall, 2), "host_s": {k: round(v, 2) for k, v in host.most_common()},
           "outside_operators_s": round(wall - sum(host.values()), 2)}
    if cuda:
        out["device_s"] = {k: round(v, 3) for k, v in device.most_common() if v > 0}
        out["device_busy_share"] = round(sum(device.values()) / wall, 3)
    return out


class InlineThread:
    """Stands in for the executor's worker thread, so that the profiler (which records the thread
    that started it) sees the backend's operators: ``start`` runs the target at once."""

    def __init__(self, target, **_kwargs):
        self.target = target

    def start(self) -> None:
        self.target()


def inline_units() -> None:
    """Run the executor's units on this thread (``run_text``'s and the CLI's)."""
    import types

    try:
        from framebench.executors import base
    except ImportError:  # a box without the runner's dependencies: the backend calls run here anyway
        return
    base.threading = types.SimpleNamespace(Thread=InlineThread)


def hooked_cli(counts: Counts):
    """Register the counting hook on every model the CLI loads in this process."""
    from framebench.backends.hf import HFBackend

    load = HFBackend._load_model

    def _load(self):
        load(self)
        self._model.register_forward_pre_hook(counts.hook, with_kwargs=True)

    HFBackend._load_model = _load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--model", default="smollm2", help="smollm2 (the CLI) or hf:PATH")
    source.add_argument("--random-init", choices=sorted(engines.SHAPES))
    ap.add_argument("--tokenizer", type=Path, default=engines.DEFAULT_TOKENIZER)
    ap.add_argument("--dtype")
    ap.add_argument("--items", type=Path, default=engines.DEMO)
    ap.add_argument("--task", default="law_issue_spotting")
    ap.add_argument("--limit", type=int, default=282, help="the first N items of the task (whole contexts)")
    ap.add_argument("--runs", default="generate,constrained,lmeval")
    ap.add_argument("--lmeval-batch", type=int, default=64)
    ap.add_argument("-M", dest="model_args", action="append", default=[], help="framebench -M option")
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    args = ap.parse_args()


    args.out.mkdir(parents=True, exist_ok=True)
    items = limit.pick(engines.read_items(args.items), args.task, 0)
    contexts = list(dict.fromkeys(it["context_id"] for it in items))
    keep, n = set(), 0
    for c in contexts:  # whole contexts up to the limit
        size = sum(it["context_id"] == c for it in items)
        if keep and n + size > args.limit:
            break
        keep.add(c)
        n += size
    items = [it for it in items if it["context_id"] in keep]
    counts = Counts()
    inline_units()
    if args.random_init:
        backend = engines.random_init_backend(args.random_init, args.tokenizer, args.dtype, "auto")
        backend.model.register_forward_pre_hook(counts.hook, with_kwargs=True)
    else:
        hooked_cli(counts)
        backend = limit.load_backend(argparse.Namespace(random_init=None, model=args.model, dtype=args.dtype))
    cuda = backend.device.type == "cuda"
    from framebench.text_eval.framingqa.prompts import render_chat

    chats = {it["item_id"]: render_chat(it) for it in items}
    decodings = limit.decodings_of(items)
    print(f"{len(items)} items in {len(keep)} contexts of {args.task}; device {backend.device}", flush=True)
    backend.generate_naive([chats[items[0]["item_id"]]], decodings[items[0]["format"]])  # warm-up
    result = {"items": len(items), "contexts": len(keep), "device": str(backend.device), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        from framebench.items import write_items

        write_items(items, data / "items.jsonl")
        extra = [f"-M={m}" for m in args.model_args] + (["--model", args.model] if args.model != "smollm2" else [])
        for run in args.runs.split(","):
            counts.__init__()
            if run == "lmeval":
                fn = lambda: engines.lmeval_engine(backend, items, chats, decodings, args.lmeval_batch)  # noqa: E731
            else:
                answer = "constrained" if run == "constrained" else "generate"
                if args.random_init and run == "constrained":  # the runner's calls, as bench/limit.py times them
                    fn = lambda: engines.constrained_engine(backend, items, chats)  # noqa: E731
                elif args.random_init:
                    fn = lambda r=run: engines.framebench_engine(backend, items, chats, decodings, Path(tmp), r)  # noqa: E731
                else:
                    fn = lambda a=answer: limit.cli_run(data, Path(tmp) / f"run-{a}", a, tuple(extra))  # noqa: E731
            prof, wall = profiled(fn, cuda)
            sort = "self_cuda_time_total" if cuda else "self_cpu_time_total"
            (args.out / f"profile-{run}.txt").write_text(prof.key_averages().table(sort_by=sort, row_limit=40))
            row = breakdown(prof, wall, cuda) | counts.summary()
            row["seconds_per_item"] = round(wall / len(items), 4)
            result["runs"][run] = row
            print(run, json.dumps(row), flush=True)
    (args.out / "profile.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
