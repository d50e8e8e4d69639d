"""Fuzz: every malformed input over every file-reading entry point and every command's arguments
ends with exit 2, one short line naming the file, the line or sample and the field, no traceback
and nothing written (corpus in tests/fuzz_corpus.py and, for the import, export, sweep and usage
surfaces of issue 45, tests/fuzz_surfaces.py; run in-process for speed, a family per test)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from fuzz_corpus import REPO, all_cases, run_case
from fuzz_surfaces import have

ENTRY_FAMILIES = {"items", "answer_sheets", "seeds", "scenarios", "episodes", "records", "stats",
                  "partnr_ingest", "framingqa_sources", "export", "sweep", "usage",
                  *(["import_inspect"] if have("inspect_ai") else []), *(["import_lm_eval"] if have("lm_eval") else [])}


def test_corpus_covers_every_entry_point_with_enough_cases():
    cases = all_cases()
    counts = Counter(c.family for c in cases)
    assert set(counts) == ENTRY_FAMILIES
    assert len(cases) >= 200 and min(counts.values()) >= 20
    assert len({(c.family, c.name) for c in cases}) == len(cases)


@pytest.mark.slow  # a long loop over every case of a family
@pytest.mark.parametrize("family", sorted(ENTRY_FAMILIES))
def test_every_malformed_input_is_one_clean_line(tmp_path, family):
    failures = []
    for i, case in enumerate(c for c in all_cases() if c.family == family):
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        outcome = run_case(case, folder)
        if outcome.kind != "clean":
            failures.append(f"{outcome.kind}: {case.family}/{case.name}: {outcome.detail or outcome.stderr[:200]}")
    assert not failures, "\n".join(failures)


@pytest.mark.subprocess
def test_a_few_cases_as_real_processes(tmp_path):
    """The same guarantees through the installed console script (exit status, stderr)."""
    chosen = {("seeds", "nul_in_field"), ("episodes", "temporal_cycle"), ("usage", "power_contexts_401_digits"),
              ("sweep", "second_model_unknown")}
    cases = [c for c in all_cases() if (c.family, c.name) in chosen]
    assert len(cases) == len(chosen)
    for i, case in enumerate(cases):
        folder = tmp_path / f"p{i}"
        folder.mkdir()
        made = case.make(folder)
        argv, expect = made if isinstance(made, tuple) else (made, [])
        proc = subprocess.run([sys.executable, "-m", "framebench", *argv], capture_output=True, text=True,
                              cwd=REPO, timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (case.name, proc.stderr)
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr
        assert all(part in lines[0] for part in expect), (expect, lines[0])
        assert not (folder / "out").exists()
