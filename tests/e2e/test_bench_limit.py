"""bench/gpu.sh --cpu (what a device session runs, on the tiny shape) and bench/limit.py's work
accounting: the trie counts every distinct prompt prefix once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))


def test_trie_counts_each_distinct_prefix_once():
    from framebench.backends.prefix_trie import trie_positions

    # [1,2,3] and [1,2,4] share two tokens: 3 + 1 nodes; [5] is a trie of its own
    assert trie_positions([[1, 2, 3], [1, 2, 4], [5]]) == (5, (1 + 2 + 3) + 3 + 1)
    assert trie_positions([[1, 2], [1, 2]]) == (2, 3)  # a repeated prompt costs nothing more
    assert trie_positions([]) == (0, 0)


@pytest.mark.subprocess
@pytest.mark.slow
def test_gpu_script_runs_on_cpu_with_the_tiny_shape(smollm2_dir, tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "OUT": str(tmp_path), "TOKENIZER": str(smollm2_dir)}
    proc = subprocess.run(["bash", str(REPO / "bench" / "gpu.sh"), "--cpu"], capture_output=True, text=True,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads((tmp_path / "limit-tiny.json").read_text())
    runs = {row["run"]: row for row in result["runs"]}
    assert set(runs) == {"framebench generate", "framebench constrained", "naive loop", "lm-eval style (16)"}
    assert result["items"] == 94 and runs["naive loop"]["items"] == 10  # one law context, every 10th item
    # framebench shares prompt prefixes, the reference loops feed every token
    assert runs["framebench generate"]["prompt_tokens_per_item"] < runs["lm-eval style (16)"]["prompt_tokens_per_item"]
    assert all(0 < row["utilization"] and row["seconds_per_item"] > 0 for row in runs.values())
    assert "framebench generate" in proc.stdout and "util" in proc.stdout
    # the profile step: the same law context, by kind of work, with the forwards' token counts
    prof = json.loads((tmp_path / "profile-tiny" / "profile.json").read_text())
    assert prof["items"] == 94 and set(prof["runs"]) == {"generate", "constrained", "lmeval"}
    for row in prof["runs"].values():
        assert row["wall_s"] > 0 and row["host_s"]["matmul"] > 0 and 0 < row["real_tokens"] <= row["tokens_multiplied"]
    # the lm-eval loop feeds every prompt token; framebench each shared prefix once
    assert prof["runs"]["lmeval"]["real_tokens"] > prof["runs"]["generate"]["real_tokens"]
    assert prof["runs"]["generate"]["decoding_steps"] > 0


@pytest.mark.subprocess
def test_hf_options_bench_interleaves_variants_with_equal_outputs(tiny_llama_dir):
    """bench/hf_options.py on one demo law context with the tiny model: both variants run, each
    repeat, their greedy outputs equal; an unknown option is one error line."""
    script = str(REPO / "bench" / "hf_options.py")
    proc = subprocess.run([sys.executable, script, "--model", f"hf:{tiny_llama_dir}", "--contexts", "1",
                           "--repeats", "2", "prefix_trie=False", "prefix_trie=True,batch_size=8"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("s an item") == 2 * 2 + 2
    assert "every variant's greedy outputs equal" in proc.stdout
    bad = subprocess.run([sys.executable, script, "speed=11"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "error: variant 'speed=11'" in bad.stderr
