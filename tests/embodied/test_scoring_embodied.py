"""Embodied (Table 6) metrics on three hand-made episodes; values derived by hand below."""

from __future__ import annotations

import pandas as pd
import pytest

from framebench.embodied.metrics import score_embodied
from framebench.records import make_row, to_table

MODEL = "openai:planner"
VARIANTS = [("neutral", ""), ("correct", "root"), ("correct", "propositional"), ("correct", "global"),
            ("incorrect", "root"), ("incorrect", "propositional"), ("incorrect", "global")]
# per episode, in VARIANTS order: (percent_complete, sim_steps, replans)
EPISODES = {
    "e1": ("spatial", [(1.0, 10, 1), (1.0, 12, 2), (1.0, 14, 0), (1.0, 16, 1),
                       (0.5, 20, 3), (1.0, 18, 2), (1.0, 22, 4)]),
    "e2": ("spatial", [(0.5, 30, 5), (1.0, 8, 1), (0.0, 40, 6), (1.0, 10, 2),
                       (1.0, 6, 0), (1.0, 12, 1), (1.0, 14, 2)]),
    "e3": ("temporal", [(0.0, 60, 8)] + [(0.25, 50, 7)] * 6),  # never succeeds
}


def records() -> pd.DataFrame:
    rows = []
    for ep, (constraint, values) in EPISODES.items():
        for (bias, level), (pc, steps, replans) in zip(VARIANTS, values, strict=True):
            rows.append(make_row(
                run_id="r", model=MODEL, suite="embodied", task="robotics", format="episode",
                context_id=ep, item_id=f"{ep}-{bias}-{level}", bias=bias, level=level,
                constraint=constraint, percent_complete=pc, success=pc == 1.0,
                sim_steps=steps, replans=replans))
    return to_table(rows).to_pandas()


@pytest.fixture(scope="module")
def report() -> dict:
    return score_embodied(records())[MODEL]


def test_rows_present_in_order(report):
    assert list(report) == ["overall", "root", "propositional", "global", "spatial", "temporal"]
    assert report["overall"]["n_episodes"] == 3 and report["spatial"]["n_episodes"] == 2


def test_overall(report):
    r = report["overall"]
    assert r["completion_mean_neutral"] == pytest.approx(0.5)
    assert r["completion_mean_correct"] == pytest.approx(5.75 / 9)
    assert r["completion_mean_incorrect"] == pytest.approx(6.25 / 9)
    assert r["replans_mean_neutral"] == pytest.approx(14 / 3)
    assert r["replans_mean_correct"] == pytest.approx(33 / 9)
    assert r["steps_mean_neutral"] == pytest.approx(100 / 3)
    assert r["completion_strict_correct"] == pytest.approx(1 / 3)    # e1
    assert r["completion_strict_incorrect"] == pytest.approx(1 / 3)  # e2
    assert r["replans_strict_correct"] == pytest.approx(1.0)        # e1: 2, 0, 1
    assert r["steps_strict_correct"] == pytest.approx(14.0)
    assert r["steps_strict_incorrect"] == pytest.approx(32 / 3)     # e2: 6, 12, 14
    # no episode succeeds on all six biased variants
    assert r["completion_strict_all"] == 0
    assert r["replans_strict_all"] is None and r["steps_strict_all"] is None
    # strict completion's Wilson interval over episodes needs 10 (no interval of a rate holds its
    # level with fewer): 3 episodes give none, and the row is flagged as a small sample
    assert r["completion_strict_all_ci"] is None and r["completion_strict_correct_ci"] is None
    assert r["n_episodes"] == 3 and r["small_sample"] is True


def test_single_level_uses_one_or_two_variants(report):
    r = report["root"]
    assert r["completion_mean_neutral"] == pytest.approx(0.5)  # every neutral variant
    assert r["completion_mean_correct"] == pytest.approx(0.75)
    assert r["completion_strict_correct"] == pytest.approx(2 / 3)  # e1, e2
    assert r["replans_strict_correct"] == pytest.approx(1.5)
    assert r["steps_strict_correct"] == pytest.approx(10.0)
    assert r["completion_strict_incorrect"] == pytest.approx(1 / 3)  # e2
    assert r["replans_strict_incorrect"] == 0.0  # a real zero, not "no episode"
    assert r["completion_strict_all"] == pytest.approx(1 / 3)  # e2: both root variants
    assert r["replans_strict_all"] == pytest.approx(0.5)
    assert r["steps_strict_all"] == pytest.approx(7.0)
    assert report["propositional"]["completion_strict_correct"] == pytest.approx(1 / 3)


def test_constraint_row_where_no_episode_qualifies(report):
    t = report["temporal"]
    assert t["completion_mean_neutral"] == 0.0
    assert t["completion_mean_correct"] == pytest.approx(0.25)
    for d in ("correct", "incorrect", "all"):
        assert t[f"completion_strict_{d}"] == 0
        assert t[f"replans_strict_{d}"] is None and t[f"steps_strict_{d}"] is None
    s = report["spatial"]
    assert s["completion_strict_correct"] == pytest.approx(1 / 2)
    assert s["completion_mean_incorrect"] == pytest.approx(5.5 / 6)


def test_success_falls_back_to_percent_complete():
    df = records().assign(success=None)
    assert score_embodied(df)[MODEL]["overall"]["completion_strict_correct"] == pytest.approx(1 / 3)


def test_no_embodied_records():
    assert score_embodied(records().assign(suite="omit")) == {}
