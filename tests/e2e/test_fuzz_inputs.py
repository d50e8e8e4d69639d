"""Fuzz: every malformed input over every file-reading entry point ends with exit 2, one line, no
traceback and nothing written (corpus in tests/fuzz_corpus.py, run in-process for speed)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from fuzz_corpus import REPO, all_cases, run_case

ENTRY_FAMILIES = {"items", "answer_sheets", "seeds", "scenarios", "episodes", "records", "stats",
                  "partnr_ingest", "framingqa_sources"}


def test_corpus_covers_every_entry_point_with_enough_cases():
    cases = all_cases()
    counts = Counter(c.family for c in cases)
    assert set(counts) == ENTRY_FAMILIES
    assert len(cases) >= 200 and min(counts.values()) >= 20
    assert len({(c.family, c.name) for c in cases}) == len(cases)


@pytest.mark.slow  # a long loop: every case of the corpus
def test_every_malformed_input_is_one_clean_line(tmp_path):
    failures = []
    for i, case in enumerate(all_cases()):
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        outcome = run_case(case, folder)
        if outcome.kind != "clean":
            failures.append(f"{outcome.kind}: {case.family}/{case.name}: {outcome.detail or outcome.stderr[:200]}")
    assert not failures, "\n".join(failures)


@pytest.mark.subprocess
def test_a_few_cases_as_real_processes(tmp_path):
    """The same guarantees through the installed console script (exit status, stderr)."""
    chosen = {("seeds", "nul_in_field"), ("episodes", "temporal_cycle")}
    cases = [c for c in all_cases() if (c.family, c.name) in chosen]
    assert len(cases) == len(chosen)
    for i, case in enumerate(cases):
        folder = tmp_path / f"p{i}"
        folder.mkdir()
        argv = case.make(folder)
        proc = subprocess.run([sys.executable, "-m", "framebench", *argv], capture_output=True, text=True,
                              cwd=REPO, timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (case.name, proc.stderr)
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr
        assert not (folder / "out").exists()
