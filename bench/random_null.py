"""How often the report's intervals exclude 0 where no effect exists (issue 42's check).

    python bench/random_null.py --seeds 100 --out /tmp/random-null

Runs ``baseline:random`` (constrained answers: one-hot probabilities, independent of the framing,
so every true framing effect and shift is 0) on the demo FramingQA set once per seed, scores each
run with framebench, and counts the headline framing-effect intervals and the susceptibility
shift intervals that exclude 0, by scope (per task, pooled) and format. A 95 % interval should
exclude 0 in about 1 of 20. Runs already in ``--out`` are reused.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parent.parent / "datasets" / "demo" / "framingqa"


def _cells(report: dict) -> list[tuple[str, str, str, bool]]:
    """(kind, scope, format, excludes 0) of every framing-effect and shift interval shown."""
    out = []
    for formats in report["headline"].values():
        for fmt, h in formats.items():
            if h["framing_effect_ci"] is not None:
                low, high = h["framing_effect_ci"]
                out.append(("framing effect (headline)", "pooled", fmt, low > 0 or high < 0))
    for tasks in report.get("susceptibility", {}).get("framingqa", {}).values():
        for task, formats in tasks.items():
            for fmt, levels in formats.items():
                for biases in levels.values():
                    for cell in biases.values():
                        if cell["shift_ci"] is not None:
                            low, high = cell["shift_ci"]
                            out.append(("shift (susceptibility)", "pooled" if task == "all" else "per task",
                                        fmt, low > 0 or high < 0))
    return out


def main() -> None:
    from framebench import api

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--out", type=Path, required=True, help="a folder for the runs")
    args = parser.parse_args()
    rows = []
    for seed in range(args.seeds):
        run = args.out / f"seed{seed}"
        if not (run / "records.parquet").exists():
            api.run_text("baseline:random", DATA, run, model_args={"seed": seed}, answer="constrained", force=True)
        rows += _cells(api.score([run]).report)
    found = pd.DataFrame(rows, columns=["interval", "scope", "format", "excludes_0"])
    table = found.groupby(["interval", "scope", "format"])["excludes_0"].agg(["sum", "size"])
    table["share %"] = (100 * table["sum"] / table["size"]).round(1)
    print(table.rename(columns={"sum": "exclude 0", "size": "intervals"}).to_string())


if __name__ == "__main__":
    main()
