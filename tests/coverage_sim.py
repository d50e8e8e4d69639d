"""Simulated FramingQA studies for the coverage test (tests/core/test_coverage.py; docs/statistics.md
"Coverage").

A study is what a report shows for two models on the same items: ``size`` contexts per task,
each with the real variant structure of the demo items (``datasets/demo/framingqa/items.jsonl``:
bias, level, form, phrasing, distractor and gold of every row; the contexts of a (task, format)
share one structure, so one template per (task, format) describes them all).

The answers come from a logistic model. Per context c of task t: a difficulty ``a_c ~
N(ability_t, sd_ability²)`` and a framing sensitivity ``δ_c ~ N(framing_t, sd_framing²)``, shared
by both models; per model m a deviation ``u_mc ~ N(0, sd_model²)``. Per row r (bias sign s = +1
correct, -1 incorrect, 0 neutral; level weight ω): an item difficulty ``e_r ~ N(0, sd_item²)``
shared by the models and a model's own ``o_mr ~ N(0, sd_own²)``. Then

    P_m(gold | r) = σ(a_c + u_mc + offset_m + s ω framing_m δ_c / 2 + e_r + o_mr)

is the row's constrained ``P(gold)`` and its answer is right with that probability.

Studies are simulated as arrays (studies x contexts x rows), so a thousand studies of 100
contexts per task take seconds. The per-context values (accuracy by bias, framing effect, strict
sets, shifts of P(gold)) are computed here from the arrays by the definitions of
docs/design.md, and every interval by framebench's own interval code (``headline._intervals``,
``susceptibility_cells``, ``stats.proportion_intervals``, ``stats.grouped_mean_intervals`` as in
``stats.paired_difference``, ``stats.tango_interval``). :func:`records` turns a few simulated
studies into records, so the test can check that framebench's scoring of the records prints the
same intervals as computed here from the arrays.

The true value of everything a report estimates is an expectation under the model, computed by
Gauss-Hermite quadrature (:class:`Truth`), not by simulation: for a measure linear in the answers
(accuracies, framing effects, shifts, their differences) the measure of the expected P(gold) of
each row; for a strict set, the expected product of its rows' P(gold).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import coverage_sim_sys as sys_sim
import numpy as np
import pandas as pd
from scipy.special import expit

ITEMS = Path(__file__).resolve().parent.parent / "datasets" / "demo" / "framingqa" / "items.jsonl"
SIGN = {"correct": 1.0, "incorrect": -1.0, "neutral": 0.0}
LEVEL_WEIGHT = {"root": 1.0, "propositional": 0.5, "global": 1.0, "": 0.0}
LEVELS = ("root", "propositional", "global")
SIZES = (4, 16, 100)
MODELS = ("A", "B")


@dataclass(frozen=True)
class Model:
    """A simulated model: its ability offset (logit) and how strongly framing moves it."""

    offset: float = 0.0
    framing: float = 1.0


@dataclass(frozen=True)
class Scenario:
    """The generating model's parameters (logit scale; see the module docstring)."""

    name: str
    ability: dict[str, float]
    framing: dict[str, float]
    models: tuple[Model, Model] = (Model(), Model())
    sd_ability: float = 0.5
    sd_framing: float = 0.5
    sd_model: float = 0.3
    sd_item: float = 0.6
    sd_own: float = 0.5
    rewording: float = 0.0  # logit offsets +r, 0, -r of a rewording row phrased Q1, Q2, Q3


    @property
    def sd_row(self) -> float:
        return float(np.hypot(self.sd_item, self.sd_own))

    @property
    def sd_context(self) -> float:
        return float(np.hypot(self.sd_ability, self.sd_model))


# Accuracies from near chance (as the demo's model, binary 50-70 %) to a strong model's (about
# 98 %), so the strict rates span 0 to about 0.5.
TASK_ABILITY = {"finance": 0.5, "law_hearsay": 0.0, "law_issue_spotting": 2.5, "medicine": 4.0}
# No framing effect and two identical models: every true framing effect, shift and difference is 0.
NULL = Scenario("null", TASK_ABILITY, dict.fromkeys(TASK_ABILITY, 0.0), sd_framing=0.0)
# A known effect, uneven across tasks as the demo's (finance framed most, hearsay hardly), and a
# second model that is weaker and half as framed.
EFFECT = Scenario("effect", TASK_ABILITY,
                  {"finance": 1.6, "law_hearsay": 0.1, "law_issue_spotting": 0.8, "medicine": 0.3},
                  models=(Model(), Model(offset=-0.5, framing=0.5)))
# No framing at all, but every rewording row's answer depends on its phrasing (Q1 easier than Q2,
# Q3 harder): what the report must not call a framing effect.
REWORDING = Scenario("rewording", TASK_ABILITY, dict.fromkeys(TASK_ABILITY, 0.0), sd_framing=0.0, rewording=1.0)
SCENARIOS = (NULL, EFFECT, REWORDING)


# ---------------------------------------------------------------- the demo's context structure


@dataclass(frozen=True)
class Template:
    """One (task, format)'s context structure: the rows of its first demo context."""

    task: str
    fmt: str
    rows: pd.DataFrame

    @property
    def width(self) -> int:
        return len(self.rows)

    def mask(self, **where: str) -> np.ndarray:
        keep = np.ones(self.width, bool)
        for column, value in where.items():
            keep &= (self.rows[column] == value).to_numpy()
        return keep

    @cached_property
    def sign(self) -> np.ndarray:
        return self.rows["bias"].map(SIGN).to_numpy(float)

    @cached_property
    def offset(self) -> np.ndarray:
        """Per row: +1, 0, -1 for a rewording row phrased Q1, Q2, Q3 (question rewordings at the
        root and global levels, premise rewordings of correct-bias propositional rows), else 0."""
        rows = self.rows
        reworded = ~((rows["bias"] == "incorrect") & (rows["level"] == "propositional")).to_numpy()
        return np.where(reworded, rows["phrasing"].map({"Q1": 1.0, "Q2": 0.0, "Q3": -1.0}).fillna(0.0), 0.0)

    @cached_property
    def weight(self) -> np.ndarray:
        return self.rows["level"].map(LEVEL_WEIGHT).to_numpy(float)

    @cached_property
    def strict_sets(self) -> dict[str, list[np.ndarray]]:
        """FramingQA's strict metrics (text_eval/framingqa/metrics.py) as sets of row positions: a
        context's value is the mean over the metric's sets of "every row of the set is right"."""
        rows, every = self.rows, np.arange(self.width)
        correct, incorrect = self.mask(bias="correct"), self.mask(bias="incorrect")
        groups = [every[incorrect & (rows["distractor"] == d).to_numpy()]
                  for d in pd.unique(rows.loc[incorrect, "distractor"])]
        out = {"strict_all": [every], "strict_correct": [every[correct]], "strict_incorrect": groups,
               "strict_pair": [np.concatenate([every[correct], g]) for g in groups]}
        if self.fmt == "binary":
            out |= {"strict_all_yes": [every[self.mask(gold="Yes")]],
                    "strict_all_no": [every[self.mask(gold="No")]]}
        for lv in LEVELS:
            at = self.mask(level=lv)
            for direction, rows_of in (("correct", correct), ("incorrect", incorrect),
                                       ("all", correct | incorrect)):
                out[f"levels.{lv}.{direction}.strict"] = [every[at & rows_of]]
        return {k: [s for s in sets if len(s)] for k, sets in out.items() if any(len(s) for s in sets)}

    @cached_property
    def shift_cells(self) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
        """(level, bias) -> (rows, their reference rows) as text_eval/susceptibility.py pairs
        them: MC, every biased row against the neutral question; binary, every incorrect-bias row
        against its correct-bias mirror (same level, form and phrasing)."""
        rows, out = self.rows, {}
        if self.fmt == "mc":
            neutral = int(np.flatnonzero(self.mask(bias="neutral"))[0])
            for lv in LEVELS:
                for bias in ("correct", "incorrect"):
                    at = np.flatnonzero(self.mask(level=lv, bias=bias))
                    out[(lv, bias)] = (at, np.full(len(at), neutral))
            return out
        mirror = {key: i for i, key in reversed(list(enumerate(
            zip(rows["level"], rows["form"], rows["phrasing"], rows["bias"], strict=True))))}
        for lv in LEVELS:
            at = np.flatnonzero(self.mask(level=lv, bias="incorrect"))
            refs = np.array([mirror[(lv, rows["form"].iat[i], rows["phrasing"].iat[i], "correct")] for i in at])
            out[(lv, "incorrect")] = (at, refs)
        return out

    def means(self, right: np.ndarray) -> dict[str, np.ndarray]:
        """Per context (``right``: ... x rows, 0/1 or expected): accuracy on correct- and on
        incorrect-bias rows, their difference (the framing effect) and the mean over all rows."""
        correct = right[..., self.mask(bias="correct")].mean(axis=-1)
        incorrect = right[..., self.mask(bias="incorrect")].mean(axis=-1)
        return {"correct": correct, "incorrect": incorrect, "effect": correct - incorrect,
                "mean": right.mean(axis=-1)}

    def strict(self, right: np.ndarray) -> dict[str, np.ndarray]:
        """Per context and strict metric: the mean over its sets of "every row right"."""
        return {k: np.mean([right[..., s].all(axis=-1) for s in sets], axis=0)
                for k, sets in self.strict_sets.items()}

    def shifts(self, p: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
        """Per context and susceptibility cell: the mean shift of P(gold) from the reference."""
        return {cell: (p[..., at] - p[..., refs]).mean(axis=-1) for cell, (at, refs) in self.shift_cells.items()}


@functools.cache
def templates() -> tuple[Template, ...]:
    """Every (task, format) of the demo items, from its first context (the others share its
    structure; MC contexts differ only in the gold letter)."""
    items = pd.read_json(ITEMS, lines=True, dtype=False)
    items = items.fillna({"form": "", "phrasing": "", "distractor": "", "level": ""})
    out = []
    for (task, fmt), group in items.groupby(["task", "format"], sort=True):
        first = group[group["context_id"] == group["context_id"].iloc[0]].reset_index(drop=True)
        out.append(Template(task, fmt, first))
    return tuple(out)


# ---------------------------------------------------------------- simulation


@dataclass
class Draw:
    """One (task, format)'s simulated answers of every study: P(gold) and right (0/1) per
    model, each studies x contexts x rows."""

    template: Template
    p: dict[str, np.ndarray]
    right: dict[str, np.ndarray]


def simulate(scenario: Scenario, template: Template, size: int, studies: int,
             rng: np.random.Generator) -> Draw:
    sc, shape, f32 = scenario, (studies, size, template.width), np.float32  # float32: twice as fast
    difficulty = rng.normal(sc.ability[template.task], sc.sd_ability, (studies, size, 1)).astype(f32)
    framed = rng.normal(sc.framing[template.task], sc.sd_framing, (studies, size, 1)).astype(f32)
    item = f32(sc.sd_item) * rng.standard_normal(shape, dtype=f32)
    tilt = (template.sign * template.weight / 2).astype(f32)
    reworded = (sc.rewording * template.offset).astype(f32)
    p, right = {}, {}
    for name, model in zip(MODELS, sc.models, strict=True):
        context = difficulty + rng.normal(model.offset, sc.sd_model, (studies, size, 1)).astype(f32)
        eta = context + tilt * (f32(model.framing) * framed) + item + reworded
        eta += f32(sc.sd_own) * rng.standard_normal(shape, dtype=f32)
        p[name] = expit(eta).astype(float)
        right[name] = (rng.random(shape, dtype=f32) < p[name]).astype(float)
    return Draw(template, p, right)


def draws(scenario: Scenario, size: int, studies: int, seed: int) -> list[Draw]:
    rng = np.random.default_rng([seed, size, SCENARIOS.index(scenario)])
    return [simulate(scenario, t, size, studies, rng) for t in templates()]


# ---------------------------------------------------------------- per-context values


def _frame(draw: Draw, values: dict[str, np.ndarray], **labels: str) -> pd.DataFrame:
    """Long per-context frame: model (the study), task, format, context_id, the value columns."""
    studies, size = next(iter(values.values())).shape
    out = pd.DataFrame({"model": np.repeat(np.arange(studies), size),
                        "context_id": np.tile(np.arange(size), studies)})
    out = out.assign(task=draw.template.task, format=draw.template.fmt, **labels)
    for key, v in values.items():
        out[key] = v.ravel()
    return out


def means_frame(all_draws: list[Draw], model: str) -> pd.DataFrame:
    """Per context: the :meth:`Template.means` and ``strict_all`` (every row right)."""
    return pd.concat([_frame(d, d.template.means(d.right[model]) | {"strict_all": d.right[model].min(axis=-1)})
                      for d in all_draws], ignore_index=True)


def strict_counts(all_draws: list[Draw], model: str) -> pd.DataFrame:
    """Per (study, task, format, strict metric): the sum of the per-context values and the
    contexts with a value (what a strict interval is computed from)."""
    parts = []
    for d in all_draws:
        for metric, v in d.template.strict(d.right[model]).items():
            parts.append(pd.DataFrame({"model": np.arange(v.shape[0]), "task": d.template.task,
                                       "format": d.template.fmt, "metric": metric,
                                       "sum": np.nansum(v, axis=1), "n": np.isfinite(v).sum(axis=1)}))
    return pd.concat(parts, ignore_index=True)


def shift_frame(all_draws: list[Draw], model: str) -> pd.DataFrame:
    parts = [_frame(d, {"shift": v}, level=lv, bias=bias)
             for d in all_draws for (lv, bias), v in d.template.shifts(d.p[model]).items()]
    return pd.concat(parts, ignore_index=True).assign(p=0.0, p_ref=0.0)


# ---------------------------------------------------------------- intervals, by framebench's code

PER_TASK, POOLED, ALL = "per task", "pooled", "all"
KINDS = {  # kind -> how the coverage table names it
    "framing_effect": "Framing effect (headline), t",
    "accuracy": "Correct-/incorrect-bias accuracy (headline), t",
    "shift": "Shift of P(gold) (susceptibility), t",
    "strict": "Strict cells, 0/1 per context (FramingQA tables), score",
    "strict_share": "Strict cells, a share per context (strict incorrect, pair), score",
    "diff_mean": "Δ mean accuracy (comparisons), paired t",
    "diff_framing_effect": "Δ framing effect (comparisons), paired t",
    "diff_strict_all": "Δ strict accuracy (comparisons), Tango",
    **sys_sim.DIAGNOSTIC_KINDS, **sys_sim.EFFECT_KINDS, **sys_sim.DIFF_KINDS,
}
COLUMNS = ["kind", "scope", "cell", "study", "low", "high"]
SHARES = ("strict_incorrect", "strict_pair")  # averaged over a context's distractors: a share, not 0/1


def _long(found: pd.DataFrame, kind: str, cell: pd.Series, scope: pd.Series | str) -> pd.DataFrame:
    return pd.DataFrame({"kind": kind, "scope": scope, "cell": cell.to_numpy(object),
                         "study": found.index.get_level_values("model").to_numpy(int),
                         "low": found["low"].to_numpy(float), "high": found["high"].to_numpy(float)})


def headline_intervals(means: pd.DataFrame) -> pd.DataFrame:
    """Accuracies and framing effect per (study, format), pooled over tasks, by the headline's
    own function (t, stratified by task)."""
    from framebench.text_eval.framingqa.headline import KEYS, _intervals

    table = means.set_index(["model", "format", "task", "context_id"])[["correct", "incorrect", "effect"]]
    out = []
    for key, found in _intervals(table).items():
        fmt = found.index.get_level_values("format").to_series()
        kind = "framing_effect" if key == "framing_effect" else "accuracy"
        out.append(_long(found, kind, "all|" + fmt + ("" if kind == "framing_effect" else f"|{key}"), POOLED))
    assert len(out) == len(KEYS)
    return pd.concat(out, ignore_index=True)


def shift_intervals(shifts: pd.DataFrame) -> pd.DataFrame:
    """Every susceptibility cell, per task and pooled, by ``susceptibility_cells``."""
    from framebench.text_eval.susceptibility import susceptibility_cells

    cells = susceptibility_cells(shifts)
    index = cells.index.to_frame(index=False)
    cell = index["task"] + "|" + index["format"] + "|" + index["level"] + "|" + index["bias"]
    scope = np.where(index["task"] == ALL, POOLED, PER_TASK)
    return _long(cells, "shift", cell, scope)


def _pooled(frame: pd.DataFrame) -> pd.DataFrame:
    """The per-context frame once per task and once more under task ``all``, with ``stratum``."""
    frame = frame.assign(stratum=frame["task"])
    return pd.concat([frame, frame.assign(task=ALL)], ignore_index=True)


def strict_intervals(counts: pd.DataFrame) -> pd.DataFrame:
    """The interval of every strict metric per (study, task, format), Wilson's, and pooled over
    tasks, the stratified score interval, as ``score_framingqa``: from (sum of the per-context
    values, contexts with a value) per task (:func:`strict_counts`)."""
    from framebench.scoring.stats import stratified_proportion_intervals

    per_task = counts.set_index(["model", "format", "metric", "task"]).sort_index()
    pooled = per_task.unstack("task", fill_value=0)
    out = []
    for found, sums, ns, scope in ((per_task, per_task[["sum"]], per_task[["n"]], PER_TASK),
                                   (pooled, pooled["sum"], pooled["n"], POOLED)):
        bounds = stratified_proportion_intervals(sums.to_numpy(float), ns.to_numpy(float))
        found = pd.DataFrame(np.array([(np.nan, np.nan) if ci is None else ci for ci in bounds], dtype=float),
                             index=found.index, columns=["low", "high"])
        index = found.index.to_frame(index=False)
        task = index["task"] if scope == PER_TASK else ALL
        kind = np.where(index["metric"].isin(SHARES), "strict_share", "strict")
        out.append(_long(found, kind, task + "|" + index["format"] + "|" + index["metric"], scope))
    return pd.concat(out, ignore_index=True)


@functools.cache
def _tango(b: int, c: int, n: int) -> tuple[float, float]:
    from framebench.scoring.stats import MIN_CONTEXTS_BINARY, tango_interval

    return tuple(tango_interval(b, c, n)) if n >= MIN_CONTEXTS_BINARY else (np.nan, np.nan)


def diff_intervals(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The comparisons' paired differences A - B per (study, task, format) and pooled: the t
    interval of the per-context differences (stratified by task when pooled), as
    ``stats.paired_difference`` gives for measures that are not 0/1, and Tango's for strict_all."""
    from framebench.scoring.stats import grouped_mean_intervals

    d = a[["model", "task", "format", "context_id"]].assign(
        diff_mean=a["mean"] - b["mean"], diff_framing_effect=a["effect"] - b["effect"])
    d = _pooled(d)
    by = ["model", "task", "format"]
    out = []
    for kind in ("diff_mean", "diff_framing_effect"):
        found = grouped_mean_intervals(d, by, kind, "stratum")
        index = found.index.to_frame(index=False)
        out.append(_long(found, kind, index["task"] + "|" + index["format"],
                         np.where(index["task"] == ALL, POOLED, PER_TASK)))
    pairs = _pooled(a[by].assign(only_a=a["strict_all"] > b["strict_all"],
                                 only_b=a["strict_all"] < b["strict_all"]))
    counts = pairs.groupby(by, sort=True).agg(b=("only_a", "sum"), c=("only_b", "sum"), n=("only_a", "size"))
    bounds = np.array([_tango(int(x), int(y), int(n)) for x, y, n in zip(counts["b"], counts["c"], counts["n"],
                                                                         strict=True)], dtype=float)
    counts["low"], counts["high"] = bounds[:, 0], bounds[:, 1]
    index = counts.index.to_frame(index=False)
    out.append(_long(counts, "diff_strict_all", index["task"] + "|" + index["format"],
                     np.where(index["task"] == ALL, POOLED, PER_TASK)))
    return pd.concat(out, ignore_index=True)


def intervals(all_draws: list[Draw]) -> pd.DataFrame:
    """Every interval kind of every simulated study (``COLUMNS``; NaN bounds: withheld)."""
    means = {m: means_frame(all_draws, m) for m in MODELS}
    return pd.concat([headline_intervals(means["A"]), shift_intervals(shift_frame(all_draws, "A")),
                      strict_intervals(strict_counts(all_draws, "A")),
                      diff_intervals(means["A"], means["B"]), sys_sim.intervals(all_draws, "A", _long),
                      sys_sim.diff_intervals(all_draws, _long)],
                     ignore_index=True)


# ---------------------------------------------------------------- truth


def _gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for E[f(Z)], Z ~ N(0, 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


@dataclass
class Truth:
    """The true values of one model of a scenario, by quadrature over the context-level
    variables (difficulty + model deviation, framing sensitivity) of ``E[Π_r g(x + s_r ω_r f δ /
    2)]``, g the row-level logistic-normal mean ``E[σ(η + N(0, sd_row²))]``."""

    scenario: Scenario
    model: Model

    @cached_property
    def _nodes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z, w = _gauss_hermite(40)
        zx, zd = np.meshgrid(z, z, indexing="ij")
        return zx.ravel(), zd.ravel(), np.outer(w, w).ravel()

    def eta(self, template: Template) -> np.ndarray:
        """context-level nodes x rows: each row's logit before its row-level noise."""
        sc = self.scenario
        zx, zd, _ = self._nodes
        x = sc.ability[template.task] + self.model.offset + sc.sd_context * zx
        delta = sc.framing[template.task] + sc.sd_framing * zd
        eta = x[:, None] + (template.sign * template.weight)[None, :] * self.model.framing * delta[:, None] / 2
        return eta + sc.rewording * template.offset[None, :]

    def _row_means(self, template: Template) -> np.ndarray:
        """context-level nodes x rows: g of each row at each node."""
        sc = self.scenario
        eta = self.eta(template)
        z, w = _gauss_hermite(60)
        return expit(eta[..., None] + sc.sd_row * z) @ w

    def expected_p(self, template: Template) -> np.ndarray:
        """E[P(gold)] of each row (= P(right))."""
        return self._nodes[2] @ self._row_means(template)

    def strict(self, template: Template) -> dict[str, float]:
        g, w = self._row_means(template), self._nodes[2]
        return {k: float(np.mean([w @ np.prod(g[:, s], axis=1) for s in sets]))
                for k, sets in template.strict_sets.items()}


def _with_pooled(per_task: dict[tuple[str, str], tuple[float, ...]]) -> dict[tuple[str, str], tuple[float, ...]]:
    """(task, rest) -> values, plus ("all", rest): their mean over the tasks that have them (each
    task contributes the same number of contexts), and the number of those tasks."""
    pooled: dict[str, list[tuple[float, ...]]] = {}
    for (_, rest), values in per_task.items():
        pooled.setdefault(rest, []).append(values)
    return ({key: (*v, 1) for key, v in per_task.items()}
            | {(ALL, rest): (*np.mean(v, axis=0).tolist(), len(v)) for rest, v in pooled.items()})


_TRUTHS: dict[str, pd.DataFrame] = {}


def truths(scenario: Scenario) -> pd.DataFrame:
    """:func:`_truths`, once per scenario."""
    if scenario.name not in _TRUTHS:
        _TRUTHS[scenario.name] = _truths(scenario)
    return _TRUTHS[scenario.name]


def _truths(scenario: Scenario) -> pd.DataFrame:
    """Per (kind, cell) that :func:`intervals` names: ``truth``, the true value; ``rarer``, for a
    0/1 measure (strict, Δ strict) the smaller of min(p, 1 - p) over its model(s)' true rates
    (NaN otherwise); ``tasks``, the tasks the cell pools."""
    models = dict(zip(MODELS, (Truth(scenario, m) for m in scenario.models), strict=True))
    per_kind: dict[str, dict[tuple[str, str], tuple[float, ...]]] = {k: {} for k in KINDS}
    nan = float("nan")
    for t in templates():
        ep = {name: truth.expected_p(t) for name, truth in models.items()}
        means = {name: t.means(p) for name, p in ep.items()}
        strict = {name: truth.strict(t) for name, truth in models.items()}
        fmt, a, b = t.fmt, means["A"], means["B"]
        per_kind["framing_effect"][(t.task, fmt)] = (float(a["effect"]), nan, nan)
        for key, column in (("accuracy_correct", "correct"), ("accuracy_incorrect", "incorrect")):
            per_kind["accuracy"][(t.task, f"{fmt}|{key}")] = (float(a[column]), nan, nan)
        for (lv, bias), v in t.shifts(ep["A"]).items():
            per_kind["shift"][(t.task, f"{fmt}|{lv}|{bias}")] = (float(v), nan, nan)
        for metric, v in strict["A"].items():
            per_kind["strict_share" if metric in SHARES else "strict"][(t.task, f"{fmt}|{metric}")] = (v, v, v)
        per_kind["diff_mean"][(t.task, fmt)] = (float(a["mean"] - b["mean"]), nan, nan)
        per_kind["diff_framing_effect"][(t.task, fmt)] = (float(a["effect"] - b["effect"]), nan, nan)
        rates = strict["A"]["strict_all"], strict["B"]["strict_all"]
        per_kind["diff_strict_all"][(t.task, fmt)] = (rates[0] - rates[1], *rates)
        found = {name: sys_sim.truths(truth, t) for name, truth in models.items()}
        for (kind, rest), values in (found["A"] | sys_sim.diff_truths(found["A"], found["B"], fmt)).items():
            per_kind[kind][(t.task, rest)] = values
    rows = [(kind, f"{task}|{rest}", value, min(min(r, 1 - r) for r in rates), tasks)
            for kind, values in per_kind.items()
            for (task, rest), (value, *rates, tasks) in _with_pooled(values).items()]
    return pd.DataFrame(rows, columns=["kind", "cell", "truth", "rarer", "tasks"]).set_index(["kind", "cell"])


# ---------------------------------------------------------------- coverage


def coverage(found: pd.DataFrame, truth: pd.DataFrame, size: int) -> pd.DataFrame:
    """``found`` (:func:`intervals`, of studies of ``size`` contexts per task) with ``truth``,
    ``covered`` (NaN where withheld) and ``informative``: false for a 0/1 measure's cell where
    ``n · min(p, 1 - p) < INFORMATIVE`` (n its contexts): there a count takes so few values that
    no interval can hold 95 % without covering more."""
    known = truth.reindex(pd.MultiIndex.from_arrays([found["kind"], found["cell"]]))
    assert known["truth"].notna().all(), "a cell without a true value"
    value = known["truth"].to_numpy(float)
    shown = np.isfinite(found["low"].to_numpy(float))
    tolerance = 1e-9  # bounds clipped to a measure's range, or a zero-width interval at its truth
    covered = (found["low"].to_numpy() - tolerance <= value) & (value <= found["high"].to_numpy() + tolerance)
    rarer, contexts = known["rarer"].to_numpy(float), size * known["tasks"].to_numpy(float)
    informative = np.isnan(rarer) | (contexts * np.nan_to_num(rarer) >= INFORMATIVE)
    return found.assign(truth=value, covered=np.where(shown, covered.astype(float), np.nan),
                        informative=informative)


INFORMATIVE = 5.0


def study_coverage(scenario: Scenario, size: int, studies: int, seed: int = 1) -> pd.DataFrame:
    return coverage(intervals(draws(scenario, size, studies, seed)), truths(scenario), size)


def coverage_table(covered: pd.DataFrame) -> pd.DataFrame:
    """Per (scenario, size, kind, scope) of ``covered`` (:func:`study_coverage` rows with
    ``scenario`` and ``size``): studies; intervals shown and withheld; coverage (%) over every
    (study, cell) shown, and over the informative cells only; the lowest coverage of a single
    cell (over its studies)."""
    by = ["scenario", "size", "kind", "scope"]
    shown = covered.dropna(subset=["covered"])
    informative = shown[shown["informative"]]
    cells = shown.groupby([*by, "cell"], sort=False)["covered"].mean()
    out = pd.DataFrame({
        "studies": covered.groupby(by, sort=False)["study"].nunique(),
        "intervals": shown.groupby(by, sort=False).size(),
        "withheld": covered[covered["covered"].isna()].groupby(by, sort=False).size(),
        "coverage": 100 * shown.groupby(by, sort=False)["covered"].mean(),
        "informative_coverage": 100 * informative.groupby(by, sort=False)["covered"].mean(),
        "worst_cell": 100 * cells.groupby(level=by, sort=False).min(),
    })
    return out.fillna({"intervals": 0, "withheld": 0}).astype({"intervals": int, "withheld": int})


def markdown(table: pd.DataFrame) -> str:
    """The coverage table as docs/statistics.md shows it: a row per interval kind and scope, a
    column per scenario and contexts per task; a cell is the coverage (%), then in brackets the
    coverage on the informative cells where it differs, or "withheld"; the last column is the
    lowest coverage of a single cell anywhere in the row."""
    settings = [(sc.name, size) for sc in SCENARIOS for size in SIZES]
    header = ["interval", "scope", *(f"{name}, {size}" for name, size in settings), "worst cell"]
    lines = ["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * (len(settings) + 1)]
    for kind in KINDS:
        for scope in (PER_TASK, POOLED):
            cells, worst = [], []
            for name, size in settings:
                key = (name, size, kind, scope)
                if key not in table.index or table.loc[key, "intervals"] == 0:
                    cells.append("withheld")
                    continue
                row = table.loc[key]
                text = f"{row['coverage']:.1f}"
                informative = row["informative_coverage"]
                if pd.isna(informative):
                    text += " (–)"
                elif round(informative, 1) != round(row["coverage"], 1):
                    text += f" ({informative:.1f})"
                cells.append(text)
                worst.append(row["worst_cell"])
            if worst:
                lines.append(f"| {KINDS[kind]} | {scope} | " + " | ".join(cells) + f" | {min(worst):.1f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- records of a few studies


def _number(p: np.ndarray) -> np.ndarray:
    """Shortest round-trip text of each float (so the records' probabilities are exact)."""
    return np.array([repr(float(x)) for x in p], dtype=object)


def records(all_draws: list[Draw], study: int) -> pd.DataFrame:
    """One simulated study's records (models ``A`` and ``B``; only A's rows carry
    ``answer_probs``), shaped as framebench's records of a text run."""
    parts = []
    for d in all_draws:
        t = d.template
        size = d.p["A"].shape[1]
        rows = pd.concat([t.rows] * size, ignore_index=True)
        context = np.repeat(np.arange(size), t.width)
        rows["context_id"] = [f"{t.task}-c{j}" for j in context]
        rows["item_id"] = rows["context_id"] + ":" + rows["item_id"].str.split(":", n=1).str[1]
        for name in MODELS:
            p = d.p[name][study].ravel()
            probs = _answer_probs(rows, p) if name == "A" else ""
            correct = d.right[name][study].ravel().astype(bool)
            parts.append(rows.assign(model=name, correct=correct, answer=_answers(rows["gold"], correct),
                                     answer_probs=probs))
    return pd.concat(parts, ignore_index=True).assign(suite="framingqa", parse="ok")


def _answers(gold: pd.Series, correct: np.ndarray) -> list[str]:
    """The answer each row gave: its gold when right, else another answer of its set."""
    other = {"Yes": "No", "No": "Yes", "A": "B", "B": "C", "C": "D", "D": "A"}
    return [g if ok else other[g] for g, ok in zip(gold, correct, strict=True)]


def _answer_probs(rows: pd.DataFrame, p_gold: np.ndarray) -> list[str]:
    """``answer_probs`` JSON with ``p_gold`` on each row's gold (binary: the rest on the other
    answer; MC: spread evenly over the other letters)."""
    out = []
    for gold, p, text in zip(rows["gold"], p_gold, _number(p_gold), strict=True):
        others = ["No" if gold == "Yes" else "Yes"] if gold in ("Yes", "No") else [x for x in "ABCD" if x != gold]
        rest = repr(float((1 - p) / len(others)))
        out.append("{" + ", ".join([f'"{gold}": {text}', *(f'"{o}": {rest}' for o in others)]) + "}")
    return out
