"""``framebench compare`` and ``framebench power`` on small written runs: the tables, the power
arithmetic by hand, and one ``error:`` line with exit 2 for bad input."""

from __future__ import annotations

import math
import re

import pytest
from text_helpers import cli_exit_code

from framebench.records import make_row, write_records
from framebench.scoring import stats

# per context: (correct-bias row right?, incorrect-bias row right?)
PILOT = {"m-a": {"c1": (1, 1), "c2": (1, 0), "c3": (1, 0), "c4": (1, 1), "c5": (0, 0)},
         "m-b": {"c1": (1, 0), "c2": (0, 0), "c3": (1, 1), "c4": (0, 0), "c5": (1, 1)}}


def run(tmp_path, model: str, answers: dict, prefix: str = "") -> str:
    rows = []
    for ctx, pair in answers.items():
        for n, (bias, right) in enumerate(zip(("correct", "incorrect"), pair, strict=True)):
            rows.append(make_row(run_id=model, model=model, suite="framingqa", task="finance", format="binary",
                                 context_id=prefix + ctx, item_id=f"{prefix}{ctx}:{n}", bias=bias,
                                 level="root", slot=f"s{n}", gold="Yes", answer="Yes" if right else "No",
                                 correct=bool(right)))
    folder = tmp_path / f"{model}{prefix}"
    write_records(rows, folder)
    return str(folder)


def test_compare_prints_the_paired_table(tmp_path, capsys):
    dirs = [run(tmp_path, m, a) for m, a in PILOT.items()]
    assert cli_exit_code("compare", *dirs) == 0
    out = capsys.readouterr().out
    assert "model A vs model B" in out and "m-a" in out and "m-b" in out
    # mean accuracy A (1, .5, .5, 1, 0) = .6 vs B (.5, 0, 1, 0, 1) = .5: +10.0 pp
    assert "+10.0" in out


def test_plan_by_hand(tmp_path, capsys):
    """m-a's framing effects per context: 0, 1, 1, 0, 0: SD = sqrt(0.3) = 0.5477; with 30
    contexts the MDE is 2.8016 * 0.5477 / sqrt(30) = 28.0 pp."""
    from framebench import api

    dirs = [run(tmp_path, m, a) for m, a in PILOT.items()]
    rows = api.power_plan(dirs[:1], 30)
    effect = [r for r in rows if r["kind"] == "effect" and r["group"]["task"] == "finance"]
    (row,) = effect
    assert row["sd"] == pytest.approx(math.sqrt(0.3))
    assert row["mde"] == pytest.approx(stats.z_sum() * math.sqrt(0.3) / math.sqrt(30))
    single = [r for r in rows if r["kind"].startswith("difference (one model") and r["measure"] == "Mean accuracy"
              and r["group"]["task"] == "finance"]
    # per-context accuracy 1, .5, .5, 1, 0: SD = sqrt(0.175); sqrt(2) * SD for an uncorrelated second model
    assert single[0]["mde"] == pytest.approx(stats.z_sum() * math.sqrt(2 * 0.175) / math.sqrt(30))
    paired = [r for r in api.power_plan(dirs, 30) if r["kind"] == "difference (paired)" and r["measure"] == "Mean accuracy"
              and r["group"]["task"] == "finance"]
    # per-context differences .5, .5, -.5, 1, -1 (mean .1): SD = sqrt(2.7 / 4)
    assert paired[0]["sd"] == pytest.approx(math.sqrt(0.675))
    assert cli_exit_code("power", "--from", dirs[0], "--contexts", "30") == 0
    assert "28.0" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["no shared items", "missing folder", "N < 2"])
def test_bad_input_is_one_error_line(tmp_path, capsys, case):
    a = run(tmp_path, "m-a", PILOT["m-a"])
    if case == "no shared items":
        args = ["compare", a, run(tmp_path, "m-b", PILOT["m-b"], prefix="other-")]
    elif case == "missing folder":
        args = ["compare", a, str(tmp_path / "nope")]
    else:
        args = ["power", "--from", a, "--contexts", "1"]
    assert cli_exit_code(*args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err


def test_the_old_name_plan_still_runs_hidden_from_help(tmp_path, capsys):
    """``framebench plan`` was the power plan's command until issue 52 (a sweep plan and a unit
    plan are other things): kept for one release, out of ``--help``."""
    a = run(tmp_path, "m-a", PILOT["m-a"])
    assert cli_exit_code("power", "--from", a, "--contexts", "30") == 0
    new = capsys.readouterr().out
    assert cli_exit_code("plan", "--from", a, "--contexts", "30") == 0
    assert capsys.readouterr().out == new and "28.0" in new
    assert cli_exit_code("--help") == 0
    commands = capsys.readouterr().out
    assert re.search(r"│ power ", commands) and not re.search(r"│ plan ", commands)
