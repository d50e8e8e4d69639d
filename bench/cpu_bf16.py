"""bfloat16 against float32 for ``hf:`` on a CPU: the same items, one process, interleaved.

Loads the model twice (``-M dtype=float32`` and ``-M dtype=bfloat16``), times framebench generation
(the runner's calls) on the same law items, ``--repeats`` times each in turn (best kept), and
reports seconds per item, the speed ratio, the share of identical greedy outputs and of identical
parsed answers, and the CPU's bf16 instructions (``amx_bf16``, ``avx512_bf16`` in /proc/cpuinfo):
without them torch runs bf16 matrix multiplies through slower conversions.

    python bench/cpu_bf16.py --items DIR/items.jsonl --contexts 2
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import engines  # noqa: E402
import limit  # noqa: E402

from framebench.backends.hf import cpu_bf16_flags  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--items", type=Path, default=engines.DEMO)
    ap.add_argument("--task", default="law_issue_spotting")
    ap.add_argument("--contexts", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()

    from framebench.text_eval.framingqa.prompts import render_chat
    from framebench.text_eval.parsing import parse_answer

    items = limit.pick(engines.read_items(args.items), args.task, args.contexts)
    chats = {it["item_id"]: render_chat(it) for it in items}
    decodings = limit.decodings_of(items)
    backends = {d: limit.load_backend(argparse.Namespace(random_init=None, model=args.model, dtype=d))
                for d in ("float32", "bfloat16")}
    best = dict.fromkeys(backends, float("inf"))
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends.values():  # warm-up
            backend.generate([chats[items[0]["item_id"]]], decodings[items[0]["format"]])
        for rep in range(args.repeats):
            for dtype, backend in backends.items():
                start = time.perf_counter()
                outputs[dtype], _ = engines.framebench_engine(backend, items, chats, decodings,
                                                              Path(tmp), f"{dtype}-{rep}")
                best[dtype] = min(best[dtype], time.perf_counter() - start)
                print(f"{dtype} repeat {rep}: {(time.perf_counter() - start) / len(items):.4f} s/item", flush=True)
    a, b = outputs["float32"], outputs["bfloat16"]
    by_id = {it["item_id"]: it for it in items}

    def answer(item, text):
        return parse_answer(text, item["format"], item.get("options") or None)

    same_answer = sum(answer(by_id[i], a[i]) == answer(by_id[i], b[i]) for i in a)
    result = {"items": len(items), "cpu_bf16_flags": sorted(cpu_bf16_flags()),
              "seconds_per_item": {d: round(s / len(items), 4) for d, s in best.items()},
              "bf16_speedup": round(best["float32"] / best["bfloat16"], 3),
              "identical_outputs": round(sum(a[i] == b[i] for i in a) / len(a), 4),
              "identical_answers": round(same_answer / len(a), 4)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
