"""Model comparisons: every pair of models scored on the same items, paired (docs/statistics.md).

A suite that supports comparisons declares a :class:`Comparison` in ``SuiteMetrics.comparison``: the
measures it compares and a function from records to per-context values, indexed by
``(model, *group levels, context_id)``. For each pair of models, the core keeps the records of the
items both answered (same ``task``, ``format``, ``condition`` and ``item_id``), asks the suite for
the per-context values of those records, and per group and measure reports the paired difference
``A - B`` with its interval (:func:`stats.paired_difference`: Tango's score interval for a 0/1
measure, the t interval of the per-context differences otherwise, stratified by ``spec.stratum``
in a pooled group) and, for the suite's test measure (a 0/1 per-context indicator), the exact
McNemar test. The p-values are Holm-adjusted across every comparison of the report.

``report["comparisons"]`` = ``{"n_tests", "suites": {suite: {"title", "group", "measures",
"test", "pooled", "rows"}}}`` (``pooled``: the spec's (group level, value) of the groups pooling
the others, or None); a row = ``{"group": {level: value}, "model_a", "model_b", "n_contexts",
"small_sample", "measures": {key: {"a", "b", "diff", "diff_ci", "n", "method"}}, "test": {"b",
"c", "p", "p_holm"} | None}``; ``method``: ``t`` or ``tango`` (``stats.PAIRED_T``,
``PAIRED_SCORE``); ``diff_ci`` is None below that method's minimum number of contexts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring import stats
from framebench.scoring.parts import ReportInput, ReportPart


def match_columns() -> list[str]:
    """What makes two models' records the same item: task, format, the registered suites'
    ``key_columns`` (OMIT: condition and frame) and item_id."""
    from framebench.records import registered_schema

    return ["task", "format", *registered_schema().key_columns()[3:], "item_id"]


@dataclass(frozen=True)
class Measure:
    key: str  # the per-context values' column
    label: str  # the report's column title
    # What a per-context value of 1 means, for a 0/1 measure the McNemar test may run on (the
    # caption's "b = contexts where <means> under A only").
    means: str = ""
    # False for a measure a trivial baseline scores trivially (a constant answer is perfectly
    # invariant to rewording): it does not count when telling a model from such a baseline
    baseline: bool = True


@dataclass(frozen=True)
class Comparison:
    """What a suite compares: ``values(records)`` -> per-context values (a DataFrame indexed by
    ``(model, *group, context_id)`` with one column per measure, NaN = no value)."""

    title: str
    group: tuple[str, ...]
    measures: tuple[Measure, ...]
    values: Callable[[pd.DataFrame], pd.DataFrame]
    test: str | None = None  # the 0/1 measure the exact McNemar test runs on
    effect: str | None = None  # the measure whose value 0 means "no framing effect" (power)
    pooled: tuple[str, str] | None = None  # (group level, value) of the groups pooling the others
    # True when a model's values depend on its own records only (each group is one model's): the
    # values of two models that share all their items are then read from the values of all models
    per_model: bool = False
    # The models ``values`` can give values for (e.g. OMIT leaves out its persona panel): a pair
    # with another model never has a row, so it is not formed
    compares: Callable[[str], bool] = lambda model: True
    # The record columns ``values`` reads besides ``suite``, ``model`` and the ``match_columns``
    # (the rows it gets hold no others, so the suite's rows are copied once, narrow); () = all
    columns: tuple[str, ...] = ()
    # A column of ``values`` naming each context's stratum (FramingQA: the task it comes from), so
    # the interval of a group pooling fixed strata is the stratified one; None: no strata
    stratum: str | None = None


def item_codes(records: pd.DataFrame) -> np.ndarray:
    """One integer per record naming its item (``match_columns``): equal codes, same item."""
    return records.groupby([records[c].astype(str) for c in match_columns() if c in records.columns],
                           sort=False, dropna=False).ngroup().to_numpy()


def _shared_rows(codes: np.ndarray, model: np.ndarray, a: str, b: str) -> np.ndarray:
    """Positions of both models' records of the items both answered (in record order)."""
    of_a, of_b = model == a, model == b
    rows = np.flatnonzero(of_a | of_b)
    answered_a, answered_b = (np.zeros(len(codes) + 1, bool) for _ in range(2))  # by item code
    answered_a[codes[of_a]], answered_b[codes[of_b]] = True, True
    return rows[(answered_a & answered_b)[codes[rows]]]


class PairValues:
    """The per-context values of each pair of models over the items both answered: the spec's
    ``values`` of the pair's shared records, or (``per_model`` specs, when the pair shares every
    record of both) the pair's rows of the values of all records, computed once."""

    def __init__(self, records: pd.DataFrame, spec: Comparison) -> None:
        self.records, self.spec = records, spec
        self.codes, self.model = item_codes(records), records["model"].to_numpy(object)
        self._all: pd.DataFrame | None = None

    def __call__(self, a: str, b: str) -> pd.DataFrame | None:
        """None when the two share no item."""
        rows = _shared_rows(self.codes, self.model, a, b)
        if not len(rows):
            return None
        if self.spec.per_model and len(rows) == int(np.isin(self.model, [a, b]).sum()):
            return self._of_all(a, b)
        return self.spec.values(self.records.iloc[rows])

    def _of_all(self, a: str, b: str) -> pd.DataFrame:
        if self._all is None:
            self._all = self.spec.values(self.records)
        keep = self._all.index.get_level_values("model").isin([a, b])
        part = self._all[keep]
        return part.set_axis(part.index.remove_unused_levels(), axis=0)


def _value(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _compare_group(values: pd.DataFrame, a: str, b: str, spec: Comparison) -> dict[str, Any] | None:
    """The row for one group: ``values`` indexed by (model, context_id); None when either model
    has no values there (a suite may leave some models out, e.g. OMIT's persona panel) or no
    context has a value under both, so a vacuous row adds no test to the Holm family. ``n_contexts``
    counts the contexts valued under both models (the largest ``n`` of the measures)."""
    present = values.index.get_level_values("model")
    if a not in present or b not in present:
        return None
    va, vb = values.xs(a, level="model"), values.xs(b, level="model")
    va, vb = va.align(vb, join="inner", axis=0)
    if va.empty:
        return None
    strata = None if spec.stratum is None else va[spec.stratum].to_numpy(object)
    measures = {}
    for m in spec.measures:
        x, y = va[m.key].to_numpy(float), vb[m.key].to_numpy(float)
        both = np.isfinite(x) & np.isfinite(y)
        diff = stats.paired_difference(x, y, strata)
        measures[m.key] = {"a": _value(x[both].mean()) if both.any() else None,
                           "b": _value(y[both].mean()) if both.any() else None,
                           "diff": diff.estimate, "diff_ci": diff.interval(), "n": diff.n,
                           "method": diff.method}
    n = max(m["n"] for m in measures.values())
    if n == 0:  # shared items, but no context valued under both (e.g. no parsed OMIT pair)
        return None
    test = None
    if spec.test is not None and measures[spec.test]["n"]:
        result = stats.mcnemar_exact(va[spec.test].to_numpy(float), vb[spec.test].to_numpy(float))
        test = {"measure": spec.test, "b": result.b, "c": result.c, "p": result.p}
    return {"model_a": a, "model_b": b, "n_contexts": n, "small_sample": stats.small_sample(n),
            "measures": measures, "test": test}


def _groups(values: pd.DataFrame, group: tuple[str, ...]) -> Iterable[tuple[dict[str, str], pd.DataFrame]]:
    if not group:
        yield {}, values
        return
    for labels, part in values.groupby(level=list(group), sort=True):
        labels = labels if isinstance(labels, tuple) else (labels,)
        yield dict(zip(group, map(str, labels), strict=True)), part.droplevel(list(group))


def paired_groups(records: pd.DataFrame, spec: Comparison, models: list[str]) -> Iterable[
        tuple[str, str, dict[str, str], pd.DataFrame, pd.DataFrame]]:
    """Every pair of ``models`` (in order) with the items both answered, by the spec's groups:
    (a, b, group labels, the pair's per-context values, this group's part of them)."""
    pair_values = PairValues(records, spec)
    for a, b in combinations(models, 2):
        values = pair_values(a, b)
        if values is None:
            continue
        for labels, part in _groups(values, spec.group):
            yield a, b, labels, values, part


def compare_suite(records: pd.DataFrame, spec: Comparison, models: list[str]) -> list[dict[str, Any]]:
    """The comparison rows of one suite, pairs in the order of ``models``."""
    rows = []
    for a, b, labels, _values, part in paired_groups(records, spec, models):
        row = _compare_group(part, a, b, spec)
        if row is not None:
            rows.append({"group": labels, **row})
    return rows


def adjust(report: dict[str, Any]) -> None:
    """Holm-adjust every McNemar p-value of the comparisons in place (one family)."""
    tests = [row["test"] for part in report["suites"].values() for row in part["rows"] if row["test"]]
    for test, p in zip(tests, stats.holm([t["p"] for t in tests]), strict=True):
        test["p_holm"] = p
    report["n_tests"] = len(tests)


def compare_models(records: pd.DataFrame, specs: Iterable[tuple[str, Comparison]]) -> dict[str, Any]:
    """``report["comparisons"]`` for the records of every (suite name, comparison); ``{}`` when no
    two models share an item."""
    from framebench.scoring.sections import natural_key

    out: dict[str, Any] = {"suites": {}}
    for suite, spec in specs:
        of_suite = (records["suite"] == suite).to_numpy(bool)
        models = sorted((m for m in records.loc[of_suite, "model"].unique() if spec.compares(m)),
                        key=natural_key)
        # one model (or none): no pair, so no need to look at the rows
        found = (compare_suite(records.loc[of_suite, _needed(records, spec)], spec, models)
                 if len(models) > 1 else [])
        if found:
            out["suites"][suite] = {"title": spec.title, "group": list(spec.group),
                                    "measures": [{"key": m.key, "label": m.label, "means": m.means,
                                                  **({} if m.baseline else {"baseline": False})}
                                                 for m in spec.measures],
                                    "test": spec.test, "pooled": list(spec.pooled) if spec.pooled else None,
                                    "rows": found}
    if not out["suites"]:
        return {}
    adjust(out)
    return out


def _needed(records: pd.DataFrame, spec: Comparison) -> list[str]:
    """The columns of ``records`` that comparing by ``spec`` reads, in record order."""
    if not spec.columns:
        return list(records.columns)
    wanted = {"suite", "model", *match_columns(), *spec.columns}
    return [c for c in records.columns if c in wanted]


def registered_comparisons() -> list[tuple[str, Comparison]]:
    """(suite name, comparison) of every registered suite that compares models."""
    from framebench.registry import ordered_suites

    return [(s.name, spec) for s in ordered_suites() if (spec := s.metrics.comparison) is not None]


class Comparisons(ReportPart):
    """The report's model-comparison section (a part under ``framebench.report_parts``)."""

    name = "comparisons"
    title = "Model comparisons"
    order = 70  # after the suites, before framing susceptibility
    concurrent = True  # from the records alone: computed by a second process alongside the suites

    def compute(self, inputs: ReportInput) -> dict[str, Any] | None:
        if inputs.quick:  # the console summary after a run shows no comparisons
            return None
        return compare_models(inputs.records, registered_comparisons())

    def preload(self, inputs: ReportInput) -> None:
        # scipy.stats (McNemar, the t quantiles) is what the suites' intervals import too
        # (statsmodels' Wilson); one model: no pair, so nothing to import
        if inputs.records["model"].nunique() > 1:
            import scipy.optimize  # noqa: F401
            import scipy.stats  # noqa: F401
            import statsmodels.stats.multitest  # noqa: F401

    def report_sections(self, report):
        from framebench.scoring.comparisons_report import comparison_section

        section = comparison_section(report)
        return [] if section is None else [section]

    def finding(self, report):
        from framebench.scoring.comparisons_report import baseline_finding

        return baseline_finding(report[self.name])


COMPARISONS = Comparisons()
