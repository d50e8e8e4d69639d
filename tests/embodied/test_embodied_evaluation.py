"""Golden tests of PARTNR's evaluation semantics, written from the behaviour in the notes.

Propositions here are abstract: each has a ``key`` and the test scripts, per recorded state, which keys
are true (or, for counted propositions, how many objects are done). Expected values are worked out by
hand in the comments.
"""

import pytest

from framebench.embodied.evaluation import (
    DifferentArgConstraint,
    PropositionResult,
    PropositionTracker,
    SameArgConstraint,
    TemporalConstraint,
    TerminalSatisfactionConstraint,
    percent_complete,
    values_match,
)


def prop(key, number=None, **args):
    a = {"key": key, **args}
    if number is not None:
        a["number"] = number
    return {"function_name": "scripted", "args": a}


def run(props, truth, deps=(), constraints=(), compat=False):
    """Feed one state per entry of ``truth`` (dict key -> bool or count) into a fresh tracker."""
    tracker = PropositionTracker({"evaluation_propositions": props,
                                  "evaluation_proposition_dependencies": list(deps),
                                  "evaluation_constraints": list(constraints)}, partnr_compat=compat)
    for state in truth:
        def evaluate(p, state=state):
            value = state.get(p["args"]["key"], False)
            if isinstance(value, bool):
                return PropositionResult(value, {"key": p["args"]["key"]})
            return PropositionResult(value >= p["args"].get("number", 1), {"key": p["args"]["key"]})
        tracker.update(evaluate)
    return tracker


def dep(gated, on, relation, mode="all"):
    return {"proposition_indices": gated, "depends_on": on, "relation_type": relation, "dependency_mode": mode}


# ------------------------------------------------------------------ dependencies (one-step lag)

def test_while_satisfied_looks_at_the_previous_state():
    # A true from state 1; B true throughout. B is checked at state t only if A held at state t-1:
    # state 0: no previous state -> gated; state 1: A false at 0 -> gated; state 2: A true at 1 -> B counts.
    t = run([prop("A"), prop("B")], [{"B": True}, {"A": True, "B": True}, {"A": True, "B": True}],
            deps=[dep([1], [0], "while_satisfied")])
    assert t.satisfied_at == [1, 2]
    assert [s[1].is_satisfied for s in t.states] == [False, False, True]


def test_while_satisfied_lag_counts_b_after_a_turned_false():
    # A true only at state 1, B only at state 2: the lag lets B count although A is false at state 2.
    t = run([prop("A"), prop("B")], [{}, {"A": True}, {"B": True}], deps=[dep([1], [0], "while_satisfied")])
    assert t.satisfied_at == [1, 2]


def test_while_satisfied_gates_when_a_drops():
    # A true at 0 only; B true at 2 only: at state 2 the previous state (1) has A false -> gated.
    t = run([prop("A"), prop("B")], [{"A": True}, {}, {"B": True}], deps=[dep([1], [0], "while_satisfied")])
    assert t.satisfied_at == [0, -1]


def test_gated_results_are_false_with_empty_args():
    t = run([prop("A"), prop("B")], [{"B": True}], deps=[dep([1], [0], "while_satisfied")])
    assert t.states[0][1] == PropositionResult(False, {"key": ""})


def test_after_satisfied():
    # A true at state 1 only. B true at 1 and 3. State 1: previous states (0) never had A -> gated.
    # State 2: A was true at 1 -> checked, B false. State 3: checked, B true -> satisfied at 3.
    t = run([prop("A"), prop("B")], [{}, {"A": True, "B": True}, {}, {"B": True}],
            deps=[dep([1], [0], "after_satisfied")])
    assert t.satisfied_at == [1, 3]


def test_after_unsatisfied_needs_a_true_then_false_pair_before():
    # A: T, F, F; B always true. State 0: nothing before -> gated. State 1: one previous state, no pair ->
    # gated. State 2: states 0,1 show A T->F -> B checked and satisfied at 2.
    t = run([prop("A"), prop("B")], [{"A": True, "B": True}, {"B": True}, {"B": True}],
            deps=[dep([1], [0], "after_unsatisfied")])
    assert t.satisfied_at == [0, 2]


def test_before_satisfied():
    # B is only checked while A has never been true in the previous states.
    early = run([prop("A"), prop("B")], [{"B": True}, {"A": True}], deps=[dep([1], [0], "before_satisfied")])
    assert early.satisfied_at == [1, 0]  # empty history at state 0 counts as "never satisfied"
    late = run([prop("A"), prop("B")], [{}, {"A": True}, {"B": True}], deps=[dep([1], [0], "before_satisfied")])
    assert late.satisfied_at == [1, -1]
    # the same state: A turns true while B is true -> still checked (lag), B counts
    same = run([prop("A"), prop("B")], [{}, {"A": True, "B": True}], deps=[dep([1], [0], "before_satisfied")])
    assert same.satisfied_at == [1, 1]


@pytest.mark.parametrize(("mode", "expected"), [("all", -1), ("any", 1)])
def test_dependency_mode(mode, expected):
    # C depends on A and B after_satisfied; only A is ever true (state 0). C true at state 1.
    t = run([prop("A"), prop("B"), prop("C")], [{"A": True}, {"C": True}], deps=[dep([2], [0, 1], "after_satisfied",
                                                                                     mode)])
    assert t.satisfied_at[2] == expected


def test_satisfied_at_is_never_reset():
    t = run([prop("A")], [{}, {"A": True}, {}])
    assert t.satisfied_at == [1]
    assert t.percent_complete() == 1.0  # no terminal constraint: a transient satisfaction counts


# ------------------------------------------------------------------ constraints

def test_temporal_requires_strictly_later():
    c = TemporalConstraint({"dag_edges": [[0, 1]], "n_propositions": 2})
    assert c([], [1, 2], False) == [True, True]
    assert c([], [2, 2], False) == [True, False]  # same step is not "after"
    assert c([], [3, 2], False) == [True, False]
    assert c([], [-1, 2], False) == [True, False]  # ancestor never satisfied


def test_temporal_uses_all_ancestors():
    c = TemporalConstraint({"dag_edges": [[0, 1], [1, 2]], "n_propositions": 4})
    # 2's ancestors are {0, 1}; prop 3 is outside the DAG and never touched
    assert c([], [5, 1, 3, 0], False) == [True, False, False, True]
    assert c([], [0, 1, 3, -1], False) == [True, True, True, True]


def test_terminal_satisfaction():
    states = [[PropositionResult(True), PropositionResult(True), PropositionResult(False)],
              [PropositionResult(True), PropositionResult(False), PropositionResult(False)]]
    c = TerminalSatisfactionConstraint({"proposition_indices": [0, 1, 2]})
    # 0 still holds; 1 was satisfied but not at the end; 2 never satisfied -> left valid
    assert c(states, [0, 0, -1], False) == [True, False, True]


def _arg_states(values, times):
    """One state per time; prop i carries its satisfying receptacle value at its time."""
    n = max(times) + 1
    return [[PropositionResult(True, {"receptacle_handles": values[i]}) for i in range(len(values))]
            for _ in range(n)]


def test_same_arg_reference_is_the_first_satisfied():
    c = SameArgConstraint({"proposition_indices": [0, 1, 2], "arg_names": ["receptacle_handles"] * 3})
    states = _arg_states(["table_2", "table_1", "table_1"], [2, 0, 1])
    # prop 1 was satisfied first (t=0) with table_1: prop 2 matches, prop 0 (table_2) does not.
    assert c(states, [2, 0, 1], False) == [False, True, True]


def test_different_arg():
    c = DifferentArgConstraint({"proposition_indices": [0, 1, 2], "arg_names": ["receptacle_handles"] * 3})
    states = _arg_states(["table_1", "table_2", "table_1"], [0, 1, 2])
    assert c(states, [0, 1, 2], False) == [True, True, False]
    assert c(states, [0, 1, -1], False) == [True, True, True]


def test_quirk_q1_strings_compared_by_characters():
    same = SameArgConstraint({"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    diff = DifferentArgConstraint({"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    states = _arg_states(["table_1", "table_2"], [0, 1])
    assert same(states, [0, 1], False) == [True, False]  # intended: different tables break SameArg
    assert same(states, [0, 1], True) == [True, True]  # PARTNR: 'table_1' and 'table_2' share characters
    assert diff(states, [0, 1], False) == [True, True]
    assert diff(states, [0, 1], True) == [True, False]
    disjoint = _arg_states(["xval", "diff"], [0, 1])  # no shared character: PARTNR behaves as intended
    assert same(disjoint, [0, 1], True) == [True, False]
    assert diff(disjoint, [0, 1], True) == [True, True]


def test_values_match_collections():
    assert values_match(["a", "b"], ["b", "c"], False)
    assert not values_match(["a"], ["c"], False)
    assert values_match(["a", "b"], "a", False)
    assert not values_match("ab", "ba", False)
    assert values_match("ab", "ba", True)


def test_clustered_star_args_value():
    c = SameArgConstraint({"proposition_indices": [0, 1], "arg_names": ["*args_1", "*args_0"]})
    states = [[PropositionResult(True, {"*args": (["cup_1"], ["plate_2"])}),
               PropositionResult(True, {"*args": (["plate_2"], ["bowl_3"])})]]
    assert c(states, [0, 0], False) == [True, True]  # plate_2 on both sides


# ------------------------------------------------------------------ unrolling and percent complete

def test_unrolling_gives_partial_credit():
    # "put 3 of the cups on the table": 2 cups done -> copies number=1 and number=2 hold, the original not.
    t = run([prop("cups", number=3)], [{"cups": 2}])
    assert [p["args"]["number"] for p in t.propositions] == [3, 1, 2]
    assert t.satisfied_at == [-1, 0, 0]
    assert t.percent_complete() == pytest.approx(2 / 3)


def test_unrolling_updates_constraints():
    props = [prop("cups", number=2), prop("book")]
    cons = [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]]}},
            {"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": [0]}},
            {"type": "SameArgConstraint", "args": {"proposition_indices": [0, 1], "arg_names": ["key", "key"]}},
            {"type": "DifferentArgConstraint", "args": {"proposition_indices": [0, 1], "arg_names": ["key", "key"]}}]
    t = run(props, [{}], constraints=cons)
    temporal, terminal, same, different, extra = t.constraints
    assert (2, 1) in temporal.dag.edges and temporal.ancestors[2] == temporal.ancestors[0] == set()
    assert terminal.indices == [0, 2]
    assert same.indices == [0, 1, 2]
    assert different.indices == [0, 1]
    assert isinstance(extra, DifferentArgConstraint) and extra.indices == [2, 1]


def test_unrolling_dependencies_intended_vs_quirk_q2():
    # props: [P(number=3), Q, R]; dependency gates P until R was satisfied. Unrolled: [P3, Q, R, P1, P2].
    props = [prop("P", number=3), prop("Q"), prop("R")]
    deps = [dep([0], [2], "after_satisfied")]
    truth = [{"P": 3, "Q": True}, {"P": 3, "Q": True}]  # R never true
    intended = run(props, truth, deps=deps)
    assert intended.dependencies[0].proposition_indices == [0, 3, 4]
    assert intended.satisfied_at == [-1, 0, -1, -1, -1]  # every copy of P is gated
    assert intended.percent_complete() == pytest.approx(1 / 5)
    compat = run(props, truth, deps=deps, compat=True)
    assert compat.dependencies[0].proposition_indices == [0, 1, 2]  # loop counters 1, 2 appended
    # Q (index 1) is wrongly gated; the copies P1, P2 (3, 4) escape the dependency
    assert compat.satisfied_at == [-1, -1, -1, 0, 0]
    assert compat.percent_complete() == pytest.approx(2 / 5)


def test_percent_complete_combines_satisfaction_and_constraints():
    assert percent_complete([0, 1, -1, 2], [[True, False, True, True], [True, True, True, True]]) == 0.5
    assert percent_complete([], []) == 0.0
    assert percent_complete([0, 1], []) == 1.0


def test_terminal_in_tracker_uses_last_state():
    cons = [{"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": [0, 1]}}]
    t = run([prop("A"), prop("B")], [{"A": True, "B": True}, {"A": True}], constraints=cons)
    assert t.satisfied_at == [0, 0]
    assert t.percent_complete() == 0.5
