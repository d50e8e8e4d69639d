"""Ctrl-C and SIGTERM during a real ``hf:`` generation: one line saying how many answers are stored,
exit 130, nothing half-written, and the same command resumes from the store."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from framebench.store import ResultStore

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "datasets" / "demo" / "framingqa"
TASK = ("--tasks", "law_issue_spotting")  # the demo's 4 law issue-spotting contexts
TOTAL = sum(json.loads(line)["task"] == TASK[1] for line in (DATA / "items.jsonl").read_text().splitlines() if line)
PROGRESS = re.compile(r": (\d+)/(\d+) \(")


def _start(model_dir: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "FRAMEBENCH_PROGRESS_INTERVAL": "1"}
    return subprocess.Popen([sys.executable, "-m", "framebench", "text", "--model", f"hf:{model_dir}",
                             "--data", str(DATA), "--out", str(out), *TASK],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


def _wait_for_answers(proc: subprocess.Popen, deadline: float = 240) -> int:
    """Read progress lines until some answers are stored; their number."""
    start = time.monotonic()
    assert proc.stdout is not None
    for line in proc.stdout:
        found = PROGRESS.search(line)
        if found and int(found.group(1)) > 0:
            return int(found.group(1))
        assert time.monotonic() - start < deadline, "no answers within the deadline"
    raise AssertionError("the run ended before any progress line")


@pytest.mark.subprocess
@pytest.mark.slow  # loads SmolLM2 through hf: and generates until interrupted, twice
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_generation_stops_cleanly_and_the_rerun_resumes(tmp_path, smollm2_dir, signum):
    out = tmp_path / "run"
    proc = _start(smollm2_dir, out)
    seen = _wait_for_answers(proc)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and "terminate called" not in err
    stored, total = map(int, re.search(r"interrupted: (\d+) of (\d+) answers stored", lines[0]).groups())
    assert stored >= seen and total == TOTAL and "run the same command again to resume" in lines[0]
    assert sorted(p.name for p in out.iterdir()) == ["store.sqlite"]  # no records, no run.json yet
    with ResultStore(out) as store:
        assert len(store) == stored  # every answer the line counts is committed, no other

    if signum == signal.SIGINT:  # the same command resumes: only the rest is generated
        rerun = subprocess.run([sys.executable, "-m", "framebench", "text", "--model", f"hf:{smollm2_dir}",
                                "--data", str(DATA), "--out", str(out), *TASK, "--quiet"],
                               capture_output=True, text=True, cwd=REPO, timeout=600)
        assert rerun.returncode == 0, rerun.stderr
        assert f"{TOTAL} records ({TOTAL - stored} generated, {stored} from the store" in rerun.stdout
