"""Feedback while and after running: per-batch progress (plain lines off a terminal), rate and ETA,
the metric summary after ``text``/``embodied``/``score``, and the ``--conditions``/``--limit``
warnings."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from text_helpers import cli_exit_code, framingqa_items, write_items

from framebench.api import run_text
from framebench.backends.baseline import BaselineBackend
from framebench.console import ProgressReporter, clock

REPO = Path(__file__).resolve().parents[2]
EPISODES = REPO / "datasets" / "demo" / "robotics" / "episodes.json.gz"


class BatchedBaseline(BaselineBackend):
    """A baseline that reports its outputs in batches of ``size`` through ``on_batch``."""

    def __init__(self, size: int):
        super().__init__("always-yes")
        self.size, self.batches = size, 0

    def generate(self, chats, decoding, on_batch=None):
        texts = super().generate(chats, decoding)
        for start in range(0, len(chats), self.size):
            idx = list(range(start, min(start + self.size, len(chats))))
            self.batches += 1
            if on_batch is not None:
                on_batch(idx, [texts[i] for i in idx])
        return texts


def test_status_line_has_counts_rate_eta_and_fields(monkeypatch):
    reporter = ProgressReporter("m", 100, completed=20, stream=io.StringIO(), terminal=False, interval=0,
                                fields={"unparsed": 0, "refusal": 0})
    monkeypatch.setattr(reporter, "elapsed", lambda: 10.0)
    assert reporter.rate() is None and "--:--" in reporter.status()  # nothing generated yet
    reporter.completed = 60  # 40 generated in 10 s: store hits (20) do not count toward the rate
    reporter.fields["unparsed"] = 3
    assert reporter.rate() == pytest.approx(4.0) and reporter.eta() == pytest.approx(10.0)
    assert reporter.status() == "60/100 (60.0%) | 4.00 items/s | 0:10 elapsed | ETA 0:10 | unparsed 3 | refusal 0"
    assert clock(3725) == "1:02:05"


def test_text_progress_prints_a_plain_line_per_batch_off_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FRAMEBENCH_PROGRESS_INTERVAL", "0")  # every update prints
    data = write_items(tmp_path / "data", framingqa_items(3, 8))
    backend = BatchedBaseline(size=5)
    run_text(None, data, tmp_path / "run", backend=backend, progress=True)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(backend.spec)]
    assert backend.batches >= 5
    assert len(lines) >= backend.batches + 2  # start, one per batch, end
    counts = [int(line.split(": ", 1)[1].split("/")[0]) for line in lines]
    assert counts == sorted(counts) and counts[-1] == 24 and len(set(counts)) >= backend.batches
    assert "items/s" in lines[-1] and "ETA" in lines[-1] and "unparsed 0 | refusal 0" in lines[-1]
    assert all("\x1b" not in line for line in lines)  # plain text, no terminal escapes


def test_plain_lines_are_periodic_and_not_cut(monkeypatch):
    stream = io.StringIO()
    with ProgressReporter("x" * 150, 10, stream=stream, terminal=False, interval=3600) as reporter:
        for _ in range(10):
            reporter.advance(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2  # the first line and the final one; none in between within the interval
    assert lines[-1].startswith("x" * 150 + ": 10/10 (100.0%)") and len(lines[-1]) > 160


def test_embodied_progress_moves_per_planner_decision(tmp_path, capsys, monkeypatch):
    from framebench.embodied.planners import OraclePlanner
    from framebench.embodied.runner import run

    monkeypatch.setenv("FRAMEBENCH_PROGRESS_INTERVAL", "0")
    run(OraclePlanner(), EPISODES, tmp_path / "run", limit=1)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("oracle episode framings")]
    decisions = [int(line.rsplit("planner decisions ", 1)[1]) for line in lines]
    assert decisions[-1] > 7 and len(lines) >= decisions[-1] // 7  # one line per decision round
    assert lines[-1].split(": ", 1)[1].startswith("7/7 (100.0%)") and "framings/s" in lines[-1]


def test_text_embodied_and_score_print_a_metric_summary(tmp_path, capsys):
    data = write_items(tmp_path / "data", framingqa_items(3, 4))
    assert cli_exit_code("text", "--model", "baseline:always-no", "--data", str(data), "--out", str(tmp_path / "t"),
                "--quiet") == 0
    out = capsys.readouterr().out
    assert "framebench text baseline-always-no-" in out and "summary: FramingQA (%)" in out and "strict_all" in out
    rows = {tuple(line.split("│")[1:4]): line for line in out.splitlines() if "all tasks" in line}
    assert len(rows) == 2  # the pooled binary and mc rows
    assert cli_exit_code("embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--out", str(tmp_path / "e"),
                "--limit", "1") == 0
    out = capsys.readouterr().out
    oracle = [line for line in out.splitlines() if "│ oracle" in line][0]
    assert "Robotics completion" in out and oracle.count("100.0") == 4  # the oracle completes all
    assert cli_exit_code("text", "--model", "baseline:always-no", "--data", str(REPO / "datasets/demo/omit"),
                "--out", str(tmp_path / "o"), "--quiet") == 0
    capsys.readouterr()
    assert cli_exit_code("score", str(tmp_path / "t"), str(tmp_path / "o"), "--out", str(tmp_path / "r")) == 0
    out = capsys.readouterr().out
    # always-no answers (No, No) on every pair: OBR 100, ABR 0, FCR 0
    m0 = [line for line in out.splitlines() if "baseline:always-no" in line and "M0" in line][0]
    assert [c.strip() for c in m0.split("│")[3:7]] == ["12", "100.0", "0.0", "0.0"] and "FramingQA" in out


def test_conditions_on_framingqa_data_refused_and_limit_warns(tmp_path, capsys):
    data = write_items(tmp_path / "data", framingqa_items(3, 4))
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data), "--out", str(tmp_path / "x"),
                "--conditions", "M1", "--quiet") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--conditions M1" in err and "no OMIT items" in err
    assert not (tmp_path / "x").exists()
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data), "--out", str(tmp_path / "a"),
                "--limit", "5", "--quiet") == 0
    err = capsys.readouterr().err
    assert "warning: --limit 5: running 5 of 12" in err and "not the benchmark's" in err
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data), "--out", str(tmp_path / "b"),
                "--quiet") == 0
    assert "warning" not in capsys.readouterr().err
    assert cli_exit_code("embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--out", str(tmp_path / "e"),
                "--limit", "1") == 0
    assert "warning: --limit 1: running 1 of" in capsys.readouterr().err


def test_constrained_progress_reaches_the_total_and_counts_as_the_summary(tmp_path, capsys):
    """An in-process worker sets results on the plan's own jobs: each is still counted once."""
    assert cli_exit_code("text", "--model", "baseline:random", "--answer", "constrained", "--data",
                         str(REPO / "datasets" / "demo" / "omit"), "--out", str(tmp_path / "c"),
                         "--conditions", "M0,M1") == 0
    out = capsys.readouterr().out
    progress = [line for line in out.splitlines() if "items/s" in line]
    assert progress[-1].startswith("baseline:random: 64/64 (100.0%)")
    summary = [line for line in out.splitlines() if line.startswith("64 records")][0]
    unparsed = progress[-1].split("unparsed ")[1].split(" ")[0]
    assert f"unparsed {unparsed}," in summary
