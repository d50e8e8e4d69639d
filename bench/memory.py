"""Peak memory (max RSS) of planning and running a whole FramingQA build with the baseline engine.

    python bench/memory.py --data runs/framingqa-full      # a full build: 52,321 items

Runs ``framebench text --model baseline:always-yes`` on the build in a fresh subprocess (so the
figure is that process's own peak, not this one's) and prints its wall time and max RSS.
``bench/score_bench.py`` prints the same for ``framebench score`` on 500,000 records.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a built FramingQA folder (items.jsonl)")
    parser.add_argument("--model", default="baseline:always-yes")
    args = parser.parse_args()
    items = sum(1 for line in (args.data / "items.jsonl").open() if line.strip())
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "framebench", "text", "--model", args.model, "--data",
                        str(args.data), "--out", str(Path(tmp) / "run")], check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**10
    print(f"framebench text --model {args.model}: {items:,} items in {seconds:.1f} s, peak RSS {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
