"""Results-browser latency on a large run: load time, the first request of the records list
(cold), then the time to answer the records list unfiltered, filtered, searched (questions +
outputs), deep-paginated, a context grid (all variants, and only where the models disagree) and
one record's page.

    python bench/viewer_bench.py [--rows 250000]   # records per model, two models

Synthetic FramingQA-shaped records (82 variants a context, 2 models) with one prompt per item.
Prints the machine load next to the numbers: on a shared machine they are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def synthetic_run(run_dir: Path, rows: int, model: str) -> None:
    import numpy as np
    import pandas as pd

    from framebench.records import registered_schema, write_records

    rng = np.random.default_rng(0)
    per_context = 82
    index = np.arange(rows)
    context = index // per_context
    slot = index % per_context
    bias = np.where(slot == 0, "neutral", np.where(slot % 3 == 0, "correct", "incorrect"))
    level = np.where(slot == 0, "", np.array(["root", "propositional", "global"])[slot % 3])
    gold = np.where(slot % 2 == 0, "Yes", "No")
    answer = np.where(rng.random(rows) < 0.7, gold, np.where(gold == "Yes", "No", "Yes"))
    df = pd.DataFrame({
        "run_id": f"run-{model}", "model": model, "suite": "framingqa",
        "task": np.array(["law_issue_spotting", "law_hearsay", "finance", "medicine"])[context % 4],
        "format": "binary", "context_id": [f"ctx-{c}" for c in context],
        "item_id": [f"ctx-{c}:{s}" for c, s in zip(context, slot, strict=True)],
        "bias": bias, "level": level, "form": "", "variant": "", "option": "", "distractor": "",
        "slot": [f"s{s}" for s in slot], "gold": gold, "answer": answer, "parse": "ok",
        "correct": answer == gold, "output": [f"{a}. Because of reason {i % 9973}." for i, a in enumerate(answer)],
        "frame": "", "condition": "", "conflicts": "", "constraint": "",
        "percent_complete": None, "success": None, "sim_steps": None, "replans": None,
        "answer_mode": "generate", "answer_probs": "",
    })[list(registered_schema().columns)]
    write_records(df, run_dir)
    with (run_dir / "prompts.jsonl").open("w") as fh:
        for item_id, c in zip(df["item_id"], context, strict=True):
            fh.write(json.dumps({"item_id": item_id,
                                 "prompt": f"Passage {c}: a long shared story about case {c}.\n\n"
                                           f"Question about {item_id}?"}) + "\n")


def timed(client, url: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url)
        best = min(best, time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=250_000, help="records per model (2 models)")
    args = parser.parse_args()

    from framebench.viewer.app import create_app
    from framebench.viewer.data import load_run_data

    with tempfile.TemporaryDirectory() as tmp:
        runs = [Path(tmp) / "a", Path(tmp) / "b"]
        for run_dir, model in zip(runs, ("model-a", "model-b"), strict=True):
            synthetic_run(run_dir, args.rows, model)
        start = time.perf_counter()
        data = load_run_data(runs)
        load = time.perf_counter() - start
        client = create_app(data).test_client()
        print(f"load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
              f"{len(data):,} records loaded in {load:.1f} s")
        print(f"{'records, first page (first request)':<42} {timed(client, '/', repeats=1) * 1000:8.0f} ms")
        pages = {
            "records, unfiltered": "/",
            "records, model + bias + correct": "/?model=model-b&bias=incorrect&correct=no",
            "records, search 'reason 42.' (outputs)": "/?q=reason+42.",
            "records, search 'case 1234:' (questions)": "/?q=case+1234%3A",
            "records, last page": f"/?page={len(data) // 50}",
            "context grid, 2 models": "/context?suite=framingqa&id=ctx-77",
            "context grid, where the models disagree": "/context?suite=framingqa&id=ctx-77&show=disagree",
            "record page": "/record?suite=framingqa&item=ctx-77:5&model=model-a",
        }
        for name, url in pages.items():
            print(f"{name:<42} {timed(client, url) * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
