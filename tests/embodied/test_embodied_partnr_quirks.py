"""PARTNR's evaluation quirks 1-5 (datasets/robotics.md), each in both modes.

Expected numbers are worked out by hand from PARTNR's rules (notes §2): a ``number=n`` proposition
is unrolled into n propositions with number n, 1, .., n-1 and percent complete is the share of them
satisfied (and valid). Under PARTNR, a set predicate whose count never reaches ``number`` returns
the result of the last (a, b) pair it evaluated (quirk 1), and one handle ignores ``number`` (quirk 2).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from framebench.embodied.evaluation import EvaluationError, PropositionResult, SameArgConstraint
from framebench.embodied.runner import run_framing
from framebench.embodied.world import World
from tests.partnr_quirk_helpers import SCENE, SPOONS, clustered, episode, on_top, place, scores

# ------------------------------------------------------------------ quirk 1: last pair's result


def test_quirk1_only_the_last_spoon_placed():
    # is_on_top(spoon_1..4, table_1, number=4) -> propositions with number 4, 1, 2, 3.
    # Intended: one spoon on the table satisfies only number=1 -> 1/4.
    # PARTNR: every count stops short, but the last pair evaluated (spoon_4, table_1) holds -> all 4.
    ep = episode([on_top(SPOONS, ["table_1"], number=4)])
    intended, compat = scores(ep, place("spoon_4", "table_1"))
    assert intended["percent_complete"] == 0.25 and not intended["success"]
    assert compat["percent_complete"] == 1.0 and compat["success"]


def test_quirk1_first_three_spoons_placed():
    # spoons 1-3 on the table: numbers 1, 2, 3 are met; number=4 is not, and the last pair
    # (spoon_4, table_1) fails, so PARTNR agrees with the intended 3/4.
    ep = episode([on_top(SPOONS, ["table_1"], number=4)])
    plan = [a for s in SPOONS[:3] for a in place(s, "table_1")]
    intended, compat = scores(ep, plan)
    assert intended["percent_complete"] == compat["percent_complete"] == 0.75


def test_quirk1_two_of_three_with_the_last_one():
    # "put two of the three spoons on the table": only spoon_3 placed -> intended 1/2, PARTNR 1.0.
    ep = episode([on_top(SPOONS[:3], ["table_1"], number=2)])
    intended, compat = scores(ep, place("spoon_3", "table_1"))
    assert (intended["percent_complete"], compat["percent_complete"]) == (0.5, 1.0)
    # the first spoon instead: the last pair (spoon_3, table_1) fails -> 1/2 in both modes
    intended, compat = scores(ep, place("spoon_1", "table_1"))
    assert (intended["percent_complete"], compat["percent_complete"]) == (0.5, 0.5)


def test_quirk1_defeats_is_same_receptacle():
    # two spoons on the same table wanted; they end on different tables. Per table only one spoon
    # counts, so number=2 fails (intended 1/2); PARTNR returns the last pair (spoon_2, table_2): true.
    ep = episode([on_top(SPOONS[:2], ["table_1", "table_2"], number=2, same=True)])
    plan = place("spoon_1", "table_1") + place("spoon_2", "table_2")
    intended, compat = scores(ep, plan)
    assert (intended["percent_complete"], compat["percent_complete"]) == (0.5, 1.0)


def test_quirk1_predicate_level():
    world = World(SCENE, partnr_compat=True)
    world.objects["spoon_4"].on = "table_1"
    prop = on_top(SPOONS, ["table_1"], number=4)
    assert world.evaluate(prop) == PropositionResult(True, {"object_handles": "spoon_4",
                                                            "receptacle_handles": "table_1"})
    world.partnr_compat = False
    assert not world.evaluate(prop).is_satisfied


# ------------------------------------------------------------------ quirk 2: one handle ignores number


def test_quirk2_single_handle_ignores_number():
    # is_clean(cup_5, number=2) with the cup clean: unrolled to number 2 and 1. Intended: one cup
    # cannot make two -> 1/2. PARTNR judges the single handle alone -> both hold -> 1.0.
    # (Episode files with such a count are rejected at load; see test_embodied_validation.py.)
    ep = episode([{"function_name": "is_clean", "args": {"object_handles": ["cup_5"], "number": 2}}])
    intended, compat = scores(ep, [])
    assert (intended["percent_complete"], compat["percent_complete"]) == (0.5, 1.0)
    assert compat["success"] and not intended["success"]


def test_quirk2_single_pair_only():
    # one object with two receptacles is a set predicate in PARTNR too: number counts pairs there.
    world = World(SCENE, partnr_compat=True)
    world.objects["spoon_1"].on = "table_1"
    assert world.evaluate(on_top(["spoon_1"], ["table_1"], number=2)).is_satisfied  # single pair: ignored
    two = on_top(["spoon_1"], ["table_2", "table_1"], number=2)
    assert world.evaluate(two).is_satisfied  # last pair (spoon_1, table_1) holds: quirk 1
    assert not world.evaluate(on_top(["spoon_1"], ["table_1", "table_2"], number=2)).is_satisfied


# ------------------------------------------------------------------ quirks 3 and 4: *args_i, late lookup


def _cluster_episode():
    # two clusters that must share their first member (SameArg on *args_0)
    props = [clustered([["spoon_1"], ["spoon_2"]], [1, 1]), clustered([["spoon_1"], ["spoon_3"]], [1, 1])]
    cons = [{"type": "SameArgConstraint", "args": {"proposition_indices": [0, 1],
                                                   "arg_names": ["*args_0", "*args_0"], "n_propositions": 2}}]
    return episode(props, cons)


def test_quirk3_and_4_one_cluster_satisfied_scores_partially_in_both_modes():
    # one satisfied proposition: nothing to compare, and no value is looked up (quirk 4 fixed),
    # so PARTNR does not raise yet -> 1/2 in both modes.
    plan = place("spoon_1", "table_1") + place("spoon_2", "table_1", next_to="spoon_1")
    intended, compat = scores(_cluster_episode(), plan)
    assert intended["percent_complete"] == compat["percent_complete"] == 0.5
    assert intended["evaluation_error"] is None and compat["evaluation_error"] is None


def test_quirk3_two_clusters_satisfied():
    plan = (place("spoon_1", "table_1") + place("spoon_2", "table_1", next_to="spoon_1")
            + place("spoon_3", "table_1", next_to="spoon_1"))
    intended, compat = scores(_cluster_episode(), plan)
    assert intended["percent_complete"] == 1.0 and intended["evaluation_error"] is None  # spoon_1 in both
    # PARTNR raises once both are satisfied: recorded as a crashed episode that scores 0
    assert compat["percent_complete"] == 0.0 and not compat["success"]
    assert "Arg `*args_0` missing from proposition 0 info dict." in compat["evaluation_error"]


def test_quirk3_episode_ends_and_is_recorded_as_crashed():
    from framebench.embodied.planners import PlanPlanner

    class Fixed(PlanPlanner):
        spec = "fixed"

        def plan_for(self, episode):
            return (place("spoon_1", "table_1") + place("spoon_2", "table_1", next_to="spoon_1")
                    + place("spoon_3", "table_1", next_to="spoon_1") + ["Navigate[table_2]"] * 3)

    fields, log = run_framing(_cluster_episode(), "neutral", "", Fixed(), partnr_compat=True)
    assert log["end"] == "evaluation_error" and fields["evaluation_error"]
    assert fields["output"].startswith("[crashed] state ")
    assert fields["replans"] == 12  # the planner is not asked again after the failing Place
    assert log["evaluation"]["evaluation_mode"] == "partnr-compat"
    fields, log = run_framing(_cluster_episode(), "neutral", "", Fixed())
    assert log["end"] == "done" and fields["success"] and fields["evaluation_error"] is None


def test_quirk4_value_lookup_waits_for_two_satisfied():
    # prop 0 satisfied with an info lacking the constraint's arg name; prop 1 never satisfied
    c = SameArgConstraint({"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    states = [[PropositionResult(True, {"object_handles": "spoon_1"}), PropositionResult(False, {})]]
    for compat in (False, True):
        assert c(states, [0, -1], compat) == [True, True]
        states2 = [[PropositionResult(True, {"object_handles": "spoon_1"}),
                    PropositionResult(True, {"object_handles": "spoon_2"})]]
        with pytest.raises(EvaluationError, match="receptacle_handles"):
            c(states2, [0, 0], compat)


# ------------------------------------------------------------------ quirk 5: which cluster is reported


def _two_pairs(world):
    world.next_to |= {frozenset({"spoon_2", "spoon_4"}), frozenset({"spoon_1", "spoon_3"})}


@pytest.mark.parametrize("compat", [False, True])
def test_quirk5_ties_broken_by_name_and_largest_wins(compat):
    prop = clustered([["spoon_1", "spoon_2"], ["spoon_3", "spoon_4"]], [1, 1])
    world = World(SCENE, partnr_compat=compat)
    _two_pairs(world)  # components {spoon_1, spoon_3} and {spoon_2, spoon_4}: same size
    assert world.evaluate(prop).info == {"*args": (["spoon_1"], ["spoon_3"])}
    world.next_to.add(frozenset({"spoon_4", "cup_5"}))  # cup_5 is not in the groups: no change
    assert world.evaluate(prop).info == {"*args": (["spoon_1"], ["spoon_3"])}
    prop3 = clustered([["spoon_1", "spoon_2"], ["spoon_3", "spoon_4", "cup_5"]], [1, 1])
    assert world.evaluate(prop3).info == {"*args": (["spoon_2"], ["spoon_4", "cup_5"])}  # largest first


@pytest.mark.subprocess
def test_quirk5_same_choice_under_every_hash_seed():
    code = ("from tests.partnr_quirk_helpers import SCENE, clustered\nfrom framebench.embodied.world import World\n"
            "w = World(SCENE)\n"
            "w.next_to |= {frozenset({'spoon_2', 'spoon_4'}), frozenset({'spoon_1', 'spoon_3'})}\n"
            "print(w.evaluate(clustered([['spoon_1', 'spoon_2'], ['spoon_3', 'spoon_4']], [1, 1])).info)")
    root = Path(__file__).resolve().parents[2]
    seen = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2, 3)}
    assert seen == {"{'*args': (['spoon_1'], ['spoon_3'])}\n"}


def test_quirk5_decides_a_score_in_intended_mode():
    # The cluster (prop 1) is gated until the cup is on table_1, so it is first satisfied when both
    # spoon pairs already stand: a tie. SameArg wants its first group to hold spoon_1 (prop 2's
    # object). The tie-break picks {spoon_1, spoon_3} -> valid -> 1.0; {spoon_2, spoon_4} would give 2/3.
    props = [on_top(["cup_5"], ["table_1"]), clustered([["spoon_1", "spoon_2"], ["spoon_3", "spoon_4"]], [1, 1]),
             on_top(["spoon_1"], ["table_1"])]
    deps = [{"proposition_indices": [1], "depends_on": [0], "relation_type": "after_satisfied"}]
    cons = [{"type": "SameArgConstraint", "args": {"proposition_indices": [2, 1],
                                                   "arg_names": ["object_handles", "*args_0"]}}]
    plan = (place("spoon_1", "table_1") + place("spoon_3", "table_1", next_to="spoon_1")
            + place("spoon_2", "table_2") + place("spoon_4", "table_2", next_to="spoon_2")
            + place("cup_5", "table_1"))
    intended, compat = scores(episode(props, cons, deps), plan)
    assert intended["percent_complete"] == 1.0
    assert compat["evaluation_error"] is not None  # *args_0 under PARTNR: quirk 3
