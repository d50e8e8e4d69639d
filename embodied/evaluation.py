"""PARTNR's evaluation logic, re-implemented: unrolling, dependencies, constraints, percent complete.

Evaluation is a pure function of a *state sequence*: one list of ``PropositionResult`` per recorded
simulator state. Behaviour follows ``habitat_llm/agent/env/evaluation/evaluation_functions.py`` and the
tracker in ``measures.py`` (see ``../shared/notes/partnr-habitat.md`` §2):

* dependencies are judged on the states recorded *before* the one being computed (one-step lag);
* a proposition's first satisfaction index is recorded once and never reset;
* constraints return per-proposition validity; percent complete is the mean of
  (ever satisfied AND valid under every constraint) over the unrolled propositions.

``partnr_compat=True`` reproduces PARTNR's evaluation quirks (default off; the full list with
examples is in ``datasets/robotics.md``). Here:

* Q1: Same/DifferentArg compare satisfying values with "iterables intersect", and a Python ``str``
  is an iterable of characters, so two different handles usually "match";
* Q2: when a proposition with ``number=n`` is unrolled, dependencies gating it get the loop counter
  ``i`` (1..n-1) appended instead of the new copy's index;
* quirk 3: Same/DifferentArg naming ``*args_<i>`` (``is_clustered``) raise in PARTNR once two of
  their propositions are satisfied (it looks the literal key up in the info). The tracker records
  that as an ``evaluation_error``: the episode ends there and scores 0, as a crashed PARTNR episode
  is ingested. (Quirks 1 and 2 are in the predicates, ``framebench.embodied.world``.)

With the switch off, strings are compared as whole values, dependencies gate the copies and
``*args_<i>`` picks group i of the satisfying cluster. In both modes satisfying values are looked up
only when two or more propositions of a constraint are satisfied, as PARTNR does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

RELATIONS = ("while_satisfied", "after_satisfied", "after_unsatisfied", "before_satisfied")
MODES = ("all", "any")
CONSTRAINT_TYPES = (
    "TemporalConstraint", "TerminalSatisfactionConstraint", "SameArgConstraint", "DifferentArgConstraint",
)
STAR_ARGS = "*args"
MODE_INTENDED = "intended"
MODE_COMPAT = "partnr-compat"
MODE_HABITAT = "partnr-habitat"  # records ingested from PARTNR itself: its evaluator, all its quirks
EVALUATION_MODES = {
    MODE_INTENDED: "symbolic simulator, intended semantics (PARTNR's README and docstrings)",
    MODE_COMPAT: "symbolic simulator, --partnr-compat: PARTNR's evaluation quirks reproduced",
    MODE_HABITAT: "PARTNR's own evaluator in Habitat: the scores carry PARTNR's evaluation quirks",
}


def evaluation_mode(partnr_compat: bool) -> str:
    """The name run.json and the report use for a symbolic run's evaluation semantics."""
    return MODE_COMPAT if partnr_compat else MODE_INTENDED


class EvaluationError(Exception):
    """PARTNR's evaluator would raise here (compat mode): the episode ends as crashed."""


@dataclass
class PropositionResult:
    is_satisfied: bool
    info: dict[str, Any] = field(default_factory=dict)


State = list[PropositionResult]


# ---------------------------------------------------------------- value matching (quirk Q1)

def values_match(v1: Any, v2: Any, partnr_compat: bool) -> bool:
    """Do two satisfying values match? Collections match when they share an element; a collection
    matches a scalar it contains; scalars match when equal. Under ``partnr_compat`` a ``str`` is
    treated as a collection of characters (quirk Q1)."""

    def is_collection(v: Any) -> bool:
        return isinstance(v, (list, tuple, set, frozenset)) or (partnr_compat and isinstance(v, str))

    def items(v: Any) -> set:
        return {tuple(x) if isinstance(x, list) else x for x in v}

    def key(v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v

    if is_collection(v1) and is_collection(v2):
        return bool(items(v1) & items(v2))
    if is_collection(v1):
        return key(v2) in items(v1)
    if is_collection(v2):
        return key(v1) in items(v2)
    return v1 == v2


# ---------------------------------------------------------------- constraints

class Constraint:
    """Base: returns a validity flag per proposition."""

    type_name = ""

    def __init__(self, args: dict[str, Any]):
        self.args = copy.deepcopy(args)

    def unroll(self, idx_orig: int, idx_new: int, n_props: int) -> list[Constraint]:
        return []

    def __call__(self, states: Sequence[State], satisfied_at: Sequence[int], partnr_compat: bool) -> list[bool]:
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name, "args": self.args}


class TemporalConstraint(Constraint):
    """Edge (i, j): proposition j must first be satisfied strictly after all its ancestors."""

    type_name = "TemporalConstraint"

    def __init__(self, args: dict[str, Any]):
        super().__init__(args)
        import networkx as nx  # here: scoring imports this module, and networkx takes 0.3 s

        self.dag = nx.DiGraph([tuple(e) for e in args.get("dag_edges", [])])
        if not nx.is_directed_acyclic_graph(self.dag):
            raise ValueError("TemporalConstraint.dag_edges is not a DAG")
        self.ancestors = {node: set(nx.ancestors(self.dag, node)) for node in self.dag}

    def unroll(self, idx_orig: int, idx_new: int, n_props: int) -> list[Constraint]:
        if idx_orig in self.dag:
            # As upstream: the copy inherits the original's edges and ancestors; the ancestor sets of
            # the original's successors are not recomputed.
            for succ in list(self.dag.successors(idx_orig)):
                self.dag.add_edge(idx_new, succ)
            for pred in list(self.dag.predecessors(idx_orig)):
                self.dag.add_edge(pred, idx_new)
            self.ancestors[idx_new] = set(self.ancestors[idx_orig])
        return []

    def generations(self) -> list[list[int]]:
        import networkx as nx

        return [sorted(g) for g in nx.topological_generations(self.dag)]

    def __call__(self, states, satisfied_at, partnr_compat):
        valid = [True] * len(satisfied_at)
        for prop, ancestors in self.ancestors.items():
            if not ancestors:
                continue
            times = [satisfied_at[a] for a in ancestors]
            if -1 in times or satisfied_at[prop] <= max(times):
                valid[prop] = False
        return valid


class TerminalSatisfactionConstraint(Constraint):
    """Listed propositions that were ever satisfied must hold in the last recorded state."""

    type_name = "TerminalSatisfactionConstraint"

    def __init__(self, args: dict[str, Any]):
        super().__init__(args)
        self.indices = list(args.get("proposition_indices", []))

    def unroll(self, idx_orig, idx_new, n_props):
        if idx_orig in self.indices:
            self.indices.append(idx_new)
        return []

    def __call__(self, states, satisfied_at, partnr_compat):
        valid = [True] * len(satisfied_at)
        if not states:
            return valid
        for idx in self.indices:
            if satisfied_at[idx] != -1:
                valid[idx] = states[-1][idx].is_satisfied
        return valid


class _ArgConstraint(Constraint):
    def __init__(self, args: dict[str, Any]):
        super().__init__(args)
        self.indices = list(args.get("proposition_indices", []))
        names = list(args.get("arg_names", []))
        if len(names) != len(self.indices):
            raise ValueError(f"{self.type_name}: proposition_indices and arg_names differ in length")
        self.arg_names = dict(zip(self.indices, names, strict=True))

    def _ordered_values(self, states, satisfied_at, partnr_compat: bool) -> list[tuple[int, Any]]:
        """(proposition, satisfying value) in order of first satisfaction; empty when fewer than two
        are satisfied: there is nothing to compare, and (as upstream) no value is looked up."""
        done = [(satisfied_at[i], i) for i in self.indices if satisfied_at[i] != -1]
        if len(done) < 2:
            return []
        done.sort(key=lambda t: t[0])  # stable: ties keep list order, as upstream
        return [(idx, satisfying_value(states[at][idx], self.arg_names[idx], idx, partnr_compat))
                for at, idx in done]


def satisfying_value(result: PropositionResult, arg_name: str, idx: int, partnr_compat: bool = False) -> Any:
    """The value of ``arg_name`` that satisfied proposition ``idx``; ``*args_<i>`` is group i of
    ``info["*args"]``. Under ``partnr_compat`` a ``*args_<i>`` name raises ``EvaluationError``
    (quirk 3: PARTNR requires the literal key ``*args_<i>`` in the info, which is never there)."""
    if arg_name.startswith(STAR_ARGS):
        if partnr_compat or STAR_ARGS not in result.info:
            raise EvaluationError(f"Arg `{arg_name}` missing from proposition {idx} info dict.")
        return result.info[STAR_ARGS][int(arg_name.split("_")[-1])]
    if arg_name not in result.info:
        raise EvaluationError(f"Arg `{arg_name}` missing from proposition {idx} info dict.")
    return result.info[arg_name]


class SameArgConstraint(_ArgConstraint):
    """Later-satisfied propositions must use the value the first-satisfied one used."""

    type_name = "SameArgConstraint"

    def unroll(self, idx_orig, idx_new, n_props):
        if idx_orig in self.indices:
            self.indices.append(idx_new)
            self.arg_names[idx_new] = self.arg_names[idx_orig]
        return []

    def __call__(self, states, satisfied_at, partnr_compat):
        valid = [True] * len(satisfied_at)
        if not states:
            return valid
        values = self._ordered_values(states, satisfied_at, partnr_compat)
        if not values:
            return valid
        reference = values[0][1]
        for idx, value in values[1:]:
            if not values_match(value, reference, partnr_compat):
                valid[idx] = False
        return valid


class DifferentArgConstraint(_ArgConstraint):
    """Each later-satisfied proposition must use a value no earlier one used."""

    type_name = "DifferentArgConstraint"

    def unroll(self, idx_orig, idx_new, n_props):
        if idx_orig not in self.indices:
            return []
        indices = [idx_new] + [i for i in self.indices if i != idx_orig]
        names = [self.arg_names[idx_orig]] + [self.arg_names[i] for i in self.indices if i != idx_orig]
        return [DifferentArgConstraint({"proposition_indices": indices, "arg_names": names,
                                        "n_propositions": n_props})]

    def __call__(self, states, satisfied_at, partnr_compat):
        valid = [True] * len(satisfied_at)
        if not states:
            return valid
        values = self._ordered_values(states, satisfied_at, partnr_compat)
        seen: list[Any] = []
        for k, (idx, value) in enumerate(values):
            if k > 0 and any(values_match(value, s, partnr_compat) for s in seen):
                valid[idx] = False
            seen.append(value)
        return valid


CONSTRAINT_CLASSES: dict[str, type[Constraint]] = {
    c.type_name: c for c in (TemporalConstraint, TerminalSatisfactionConstraint, SameArgConstraint,
                             DifferentArgConstraint)
}


def build_constraint(record: dict[str, Any]) -> Constraint:
    return CONSTRAINT_CLASSES[record["type"]](record.get("args", {}))


# ---------------------------------------------------------------- dependencies

@dataclass
class Dependency:
    proposition_indices: list[int]
    depends_on: list[int]
    relation_type: str
    dependency_mode: str = "all"


def dependency_satisfied(dep: Dependency, states: Sequence[State]) -> bool:
    """Judge a dependency on the states recorded so far (the caller passes the *previous* states)."""

    def now(p: int) -> bool:
        return bool(states) and states[-1][p].is_satisfied

    def ever(p: int) -> bool:
        return any(s[p].is_satisfied for s in states)

    def became_unsatisfied(p: int) -> bool:
        return any(states[i][p].is_satisfied and not states[i + 1][p].is_satisfied
                   for i in range(len(states) - 1))

    check: Callable[[int], bool] = {
        "while_satisfied": now,
        "after_satisfied": ever,
        "after_unsatisfied": became_unsatisfied,
        "before_satisfied": lambda p: not ever(p),
    }[dep.relation_type]
    combine = all if dep.dependency_mode == "all" else any
    return combine(check(p) for p in dep.depends_on)


# ---------------------------------------------------------------- unrolling

def unroll(
    propositions: list[dict[str, Any]], dependencies: list[Dependency], constraints: list[Constraint],
    partnr_compat: bool = False,
) -> tuple[list[dict[str, Any]], list[Dependency], list[Constraint]]:
    """Unroll integer ``number=n>1`` into n-1 appended copies with number 1..n-1 (in place)."""
    for idx in range(len(propositions)):
        number = propositions[idx].get("args", {}).get("number")
        if not isinstance(number, int) or isinstance(number, bool):
            continue  # list-valued numbers (is_clustered) are not unrolled
        for i in range(1, number):
            new = copy.deepcopy(propositions[idx])
            new["args"]["number"] = i
            propositions.append(new)
            new_idx = len(propositions) - 1
            for j in range(len(constraints)):
                constraints.extend(constraints[j].unroll(idx, new_idx, len(propositions)))
            for dep in dependencies:
                if idx in dep.proposition_indices:
                    dep.proposition_indices.append(i if partnr_compat else new_idx)
    return propositions, dependencies, constraints


# ---------------------------------------------------------------- the tracker

Evaluator = Callable[[dict[str, Any]], PropositionResult]


class PropositionTracker:
    """PARTNR's per-step tracker over one episode's propositions, dependencies and constraints.

    Under ``partnr_compat`` the constraints are evaluated after every recorded state, as PARTNR's
    measures are; the first ``EvaluationError`` is kept in ``error``, later updates are ignored (the
    PARTNR episode would have crashed there) and percent complete is 0."""

    def __init__(self, episode: dict[str, Any], partnr_compat: bool = False):
        self.partnr_compat = partnr_compat
        props = copy.deepcopy(episode.get("evaluation_propositions", []))
        deps = [Dependency(**copy.deepcopy(d)) for d in episode.get("evaluation_proposition_dependencies", [])]
        cons = [build_constraint(c) for c in episode.get("evaluation_constraints", [])]
        self.propositions, self.dependencies, self.constraints = unroll(props, deps, cons, partnr_compat)
        self.satisfied_at = [-1] * len(self.propositions)
        self.states: list[State] = []
        self.error: str | None = None

    def props_to_check(self) -> set[int]:
        check = set(range(len(self.propositions)))
        for dep in self.dependencies:
            if not dependency_satisfied(dep, self.states):
                check.difference_update(dep.proposition_indices)
        return check

    def update(self, evaluate: Evaluator) -> State | None:
        """Record one state: evaluate checked propositions with ``evaluate``, gate the rest.
        Returns None (and records nothing) once an evaluation error ended the episode."""
        if self.error is not None:
            return None
        check = self.props_to_check()
        state: State = []
        for idx, prop in enumerate(self.propositions):
            if idx in check:
                state.append(evaluate(prop))
            else:
                state.append(PropositionResult(False, {k: "" for k in prop.get("args", {})}))
        for idx, result in enumerate(state):
            if result.is_satisfied and self.satisfied_at[idx] == -1:
                self.satisfied_at[idx] = len(self.states)
        self.states.append(state)
        if self.partnr_compat:
            try:
                self.constraint_matrix()
            except EvaluationError as exc:
                self.error = f"state {len(self.states) - 1}: {exc}"
        return state

    def constraint_matrix(self) -> list[list[bool]]:
        return [c(self.states, self.satisfied_at, self.partnr_compat) for c in self.constraints]

    def percent_complete(self) -> float:
        if self.error is not None:
            return 0.0
        return percent_complete(self.satisfied_at, self.constraint_matrix())

    def log(self) -> dict[str, Any]:
        return {
            "propositions": self.propositions,
            "proposition_satisfied_at": list(self.satisfied_at),
            "constraint_satisfaction": None if self.error is not None else self.constraint_matrix(),
            "constraints": [c.to_json() for c in self.constraints],
            "percent_complete": self.percent_complete(),
            "evaluation_mode": evaluation_mode(self.partnr_compat),
            "evaluation_error": self.error,
        }


def percent_complete(satisfied_at: Sequence[int], matrix: Iterable[Sequence[bool]]) -> float:
    n = len(satisfied_at)
    if n == 0:
        return 0.0
    rows = list(matrix)
    ok = [satisfied_at[i] != -1 and all(row[i] for row in rows) for i in range(n)]
    return sum(ok) / n
