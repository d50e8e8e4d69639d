"""Throughput of ``--answer constrained`` vs ``--answer generate`` on SmolLM2 (CPU by default).

Same model, same items (one law context of the demo set: all its binary and MC variants), through
``framebench.api.run_text`` with fresh result stores, in one run: ``constrained`` on a freshly
loaded model (its own forward passes), ``generate``, then ``constrained`` again on the model that
just generated (the demo's arrangement: answer probabilities from the generation's first step).
Models are loaded and warmed up before timing. Prints items/s for each, the ratios, the parse rates
and how often the two modes give the same answer.

    python bench/constrained_throughput.py
    python bench/constrained_throughput.py --context demo-law-2 --model hf:/path/to/model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEMO = REPO / "datasets" / "demo" / "framingqa" / "items.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--context", default=None, help="context id (default: the first law context)")
    args = parser.parse_args()

    import pandas as pd

    from framebench.api import run_text
    from framebench.backends import load_backend
    from framebench.backends.base import Decoding
    from framebench.items import read_items

    items = [it for it in read_items(DEMO) if it["suite"] == "framingqa"]
    context = args.context or next(it["context_id"] for it in items if it["task"] == "law_issue_spotting")
    chosen = [it for it in items if it["context_id"] == context]
    def warm(backend):
        backend.generate([[{"role": "user", "content": "Hello"}]], Decoding(max_new_tokens=1))
        backend._first_step.clear() if hasattr(backend, "_first_step") else None
        return backend

    fresh, backend = warm(load_backend(args.model)), warm(load_backend(args.model))
    print(f"model {backend.spec}, context {context}: {len(chosen)} items; load {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        (data / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in chosen))
        runs = (("constrained", "constrained", fresh), ("generate", "generate", backend),
                ("constrained-after-generate", "constrained", backend))
        for name, mode, engine in runs:
            t0 = time.perf_counter()
            summary = run_text(args.model, data, Path(tmp) / name, backend=engine, progress=False, answer=mode)
            seconds = time.perf_counter() - t0
            records = pd.read_parquet(Path(tmp) / name / "records.parquet").set_index("item_id")
            results[name] = (seconds, records)
            print(f"{name:>26}: {len(chosen) / seconds:7.2f} items/s ({seconds:.1f} s), parsed "
                  f"{(records['parse'] == 'ok').mean():.0%}, n={summary.n_records}")
    (gs, gen), (cs, con) = results["generate"], results["constrained"]
    reused = results["constrained-after-generate"]
    both = gen["parse"].eq("ok") & con["parse"].eq("ok")
    same = (gen.loc[both, "answer"] == con.loc[both, "answer"]).mean() if both.any() else float("nan")
    fresh_probs, reused_probs = con["answer_probs"].map(json.loads), reused[1]["answer_probs"].map(json.loads)
    delta = max(abs(p[k] - q[k]) for p, q in zip(fresh_probs, reused_probs.loc[fresh_probs.index], strict=True)
                for k in p)
    print(f"constrained / generate throughput: {gs / cs:.2f}x; constrained after generate: {gs / reused[0]:.1f}x "
          f"(largest probability difference to the fresh run {delta:.1e}); same answer where both parsed: {same:.0%}")


if __name__ == "__main__":
    main()
