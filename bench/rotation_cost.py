"""What the demo's rotated multiple-choice set adds, measured side by side with the demo's own
FramingQA generation (SmolLM2 on CPU).

One loaded model, fresh result stores, one run: ``generate`` on every demo FramingQA item of some
contexts (the demo's FramingQA step on those contexts), then ``constrained`` on the rotated items
of the same contexts (``datasets/demo/framingqa-rotated``). Prints both rates and the per-item
ratio, so the rotated run's share of the demo follows from the demo's FramingQA step time:
added = (rotated items x rotated s/item) = ratio x (rotated items / FramingQA items) x step time.

    python bench/rotation_cost.py --contexts 1
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

DEMO = REPO / "datasets" / "demo"


def _write(folder: Path, items: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--contexts", type=int, default=1, help="MC contexts to time (law, finance, medicine order)")
    args = parser.parse_args()

    from framebench.api import run_text
    from framebench.backends import load_backend
    from framebench.backends.base import Decoding
    from framebench.items import read_items

    rotated = read_items(DEMO / "framingqa-rotated")
    contexts = list(dict.fromkeys(it["context_id"] for it in rotated))[: args.contexts]
    fixed = [it for it in read_items(DEMO / "framingqa") if it["context_id"] in contexts]
    rotated = [it for it in rotated if it["context_id"] in contexts]
    backend = load_backend(args.model)
    backend.generate([[{"role": "user", "content": "Hello"}]], Decoding(max_new_tokens=1))
    print(f"model {backend.spec}, contexts {', '.join(contexts)}; load {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores", flush=True)
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, items, mode in (("generate, FramingQA items", fixed, "generate"),
                                  ("constrained, rotated items", rotated, "constrained")):
            data = _write(Path(tmp) / name.split(",")[0] / "data", items)
            if hasattr(backend, "_first_step"):
                backend._first_step.clear()  # no reuse between the two runs
            t0, c0 = time.perf_counter(), time.process_time()
            run_text(args.model, data, Path(tmp) / name.split(",")[0] / "run", backend=backend,
                     progress=False, answer=mode)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            rates[name] = (seconds / len(items), cpu / len(items))
            print(f"{name:>28}: {len(items):4d} items in {seconds:6.1f} s wall, {cpu:6.1f} s CPU; "
                  f"{rates[name][0]:.3f} s/item wall, {rates[name][1]:.3f} s/item CPU", flush=True)
    wall, cpu = (rates["constrained, rotated items"][i] / rates["generate, FramingQA items"][i] for i in (0, 1))
    print(f"rotated constrained item / FramingQA generated item: {wall:.2f}x wall, {cpu:.2f}x CPU; load "
          f"after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
