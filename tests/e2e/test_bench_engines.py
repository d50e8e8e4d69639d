"""bench/engines.py runs end to end on the tiny model and reports every engine in its JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
def test_engines_bench_on_tiny_model(tiny_llama_dir, tmp_path):
    from text_helpers import framingqa_items, make_varied_model, write_items

    model = make_varied_model(tiny_llama_dir, tmp_path / "model")
    data = write_items(tmp_path / "data", framingqa_items(n_contexts=2, per_context=6))
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / "engines.py"), "--model", str(model),
         "--items", str(data / "items.jsonl"), "--lmeval-batches", "4", "--framebench-batches", "auto,2",
         "--no-vllm", "--json-out", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == json.loads((tmp_path / "r.json").read_text())
    engines = {row["engine"]: row for row in result["engines"]}
    assert set(engines) == {"naive", "framebench-auto", "framebench-2", "lmeval-4"}
    assert result["items"] == 6 and all(row["items"] == 6 for row in engines.values())
    # the framebench path reproduces the naive outputs in fp32
    assert engines["framebench-auto"]["identical_outputs"] == "6/6"
    assert engines["framebench-2"]["identical_outputs"] == "6/6"
    work = result["work"]
    assert 0 < work["prefill_tokens"] < work["naive_tokens"]  # the shared context is counted once
    assert result["compute_limit_items_per_s"] > 0 and result["vllm"] == "skipped (--no-vllm)"
    constrained = {row["engine"]: row for row in result["constrained"]}
    assert set(constrained) == {"framebench-constrained"} and constrained["framebench-constrained"]["items"] == 6
