"""The 162-episode build: every episode solved by the oracle in all 7 variants, none by doing nothing."""

import collections

import pytest

from framebench.cli import main
from framebench.embodied.checks import idle_percent
from framebench.embodied.episodes import read_episodes
from framebench.embodied.framing import FRAMINGS
from framebench.embodied.planners import OraclePlanner
from framebench.embodied.runner import run_framing


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("robotics")
    with pytest.raises(SystemExit) as exit_info:
        main(["build", "robotics", "--out", str(out), "--n", "162", "--seed", "0"])
    assert exit_info.value.code in (0, None)
    return read_episodes(out / "episodes.json.gz")


def test_count_and_constraint_spread(built):
    assert len(built) == 162
    kinds = collections.Counter(ep["info"]["constraint_type"] for ep in built)
    assert set(kinds) == {"none", "spatial", "temporal", "heterogeneous"}
    assert min(kinds["none"], kinds["spatial"], kinds["temporal"]) >= 45
    assert len({ep["episode_id"] for ep in built}) == 162
    assert len({ep["instruction"] for ep in built}) > 140


def test_oracle_solves_every_variant(built):
    planner = OraclePlanner()
    failures = []
    for ep in built:
        for bias, level in FRAMINGS:
            fields, _ = run_framing(ep, bias, level, planner)
            if not fields["success"] or fields["percent_complete"] != 1.0:
                failures.append((ep["episode_id"], bias, level, fields["percent_complete"]))
    assert failures == []


def test_doing_nothing_solves_none(built):
    assert [ep["episode_id"] for ep in built if idle_percent(ep) >= 1.0] == []


def test_seeded_and_stable(tmp_path):
    from framebench.embodied.generator import generate

    assert generate(6, seed=3) == generate(6, seed=3)
    assert generate(3, seed=3) != generate(3, seed=4)
    assert generate(3, seed=3) == generate(6, seed=3)[:3]  # episode i does not depend on n


def test_demo_episodes_are_valid():
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "robotics" / "episodes.json.gz"
    episodes = read_episodes(demo)
    assert 3 <= len(episodes) <= 6
    planner = OraclePlanner()
    for ep in episodes:
        assert run_framing(ep, "neutral", "", planner)[0]["success"]
        assert idle_percent(ep) < 1.0


def test_partnr_compat_changes_only_arg_constraint_episodes(built):
    # Quirk Q1: handles like table_21 / table_22 share characters, so under PARTNR's comparison the
    # DifferentArg episodes can no longer be solved while SameArg ones still are.
    from framebench.embodied.checks import replay
    from framebench.embodied.oracle import oracle_plan

    by_family = collections.defaultdict(list)
    for ep in built:
        by_family[ep["info"]["family"]].append(ep)
    for ep in by_family["different"][:3]:
        plan = oracle_plan(ep)
        assert replay(ep, plan)["success"]
        assert replay(ep, plan, partnr_compat=True)["percent_complete"] == 0.5
    for ep in by_family["same"][:3] + by_family["move"][:3]:
        assert replay(ep, oracle_plan(ep), partnr_compat=True)["success"]
