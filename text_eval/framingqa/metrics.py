"""FramingQA text metrics (docs/design.md "Metric definitions"; FramingQA paper Tables 3-5).

Every metric is first computed per context, then averaged over contexts, per (model, task,
format) and pooled over tasks as task ``all`` (slot probabilities always stay within a task).

Conventions, all applied per context:

* A row is right when ``correct`` is true and ``parse == "ok"``: unparsed answers and refusals
  count as wrong.
* A context with no rows of a metric's set (e.g. no correct-bias rows, no distractor, no gold-Yes
  row) is left out of that metric's average (its per-context value is NaN). A metric no context
  has is reported as None.
* ``strict_incorrect`` and ``expected_incorrect`` average over the context's distractors d the
  value for "the incorrect-bias rows of d", so ``expected_incorrect`` is exactly what
  ``strict_incorrect`` would be under independent errors. Incorrect-bias rows with an empty
  ``distractor`` form one distractor group of their own.
* ``strict_pair`` uses, for distractor d, the set "correct-bias rows + rows of d"; a context with
  no correct-bias rows is scored on the rows of d alone.
* ``mean``, ``strict_all`` and ``expected_all`` cover every row of the context, the neutral
  question included (MC). ``expected_*`` multiply ``p_slot``, the share of the task's contexts
  that got the row's slot right (rows with an empty ``slot`` share one slot).
* ``expected_all_yes`` / ``expected_all_no`` (binary) are the expectations of
  ``strict_all_yes`` / ``strict_all_no`` (paper Table 4, All (Yes) / All (No)).
* ``unparsed_rate`` / ``refusal_rate`` are row shares (parse == "unparsed" / "refusal").
* ``levels`` -> level -> direction -> {mean, strict}: the rows at that level with that bias
  (``all`` = both biases); strict = every such row right (no per-distractor split).
* ``<metric>_ci`` (and ``strict_ci`` inside ``levels``), on the strict metrics: the 95 % score
  interval of (sum of the per-context values, contexts with a value) (docs/statistics.md "Wilson
  intervals"; a distractor-averaged context contributes its share): a task's is Wilson's, the
  pooled task's the stratified score interval over its tasks (each with Brown, Cai & DasGupta's
  boundary modification); None when fewer than ``stats.MIN_CONTEXTS_BINARY`` contexts have the
  metric (docs/statistics.md "Small samples"; the tables print "n < 10"). Unlike a
  percentile bootstrap it does not collapse to (0, 0) or (1, 1) at the boundary.
* ``n_contexts``, ``n_rows``: the group's contexts and records; ``small_sample``: fewer than
  ``stats.SMALL_N`` contexts (the tables' †).
* ``answer_shares`` / ``gold_shares`` (pooled task only): each answer's share of the parsed
  answers, and of the gold answers of every row (how far the answers follow one answer or letter
  rather than the questions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring.stats import small_sample, stratified_proportion_intervals
from framebench.vocabulary import LEVELS

GROUP = ["model", "task", "format"]
CONTEXT = [*GROUP, "context_id"]
DIRECTIONS = ("correct", "incorrect", "all")
POOLED_TASK = "all"
COUNTS = ["n_rows", "n_unparsed", "n_refusal"]  # per-context counts, summed (not averaged)
NEEDED = [*CONTEXT, "bias", "level", "distractor", "slot", "gold", "answer", "parse", "correct"]

# per-context columns that are strict metrics and so get a Wilson interval
STRICT = ["strict_all", "strict_correct", "strict_incorrect", "strict_pair",
          "strict_all_yes", "strict_all_no",
          *[f"levels.{lv}.{d}.strict" for lv in LEVELS for d in DIRECTIONS]]
BINARY_ONLY = {"strict_all_yes", "strict_all_no", "expected_all_yes", "expected_all_no",
               "strict_all_yes_ci", "strict_all_no_ci"}
MC_ONLY = {"neutral"}


def _count(codes: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes, minlength=n).astype(float)


def _mean(codes: np.ndarray, x: np.ndarray, n: int) -> np.ndarray:
    cnt = _count(codes, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, np.bincount(codes, weights=x, minlength=n) / cnt, np.nan)


def _all(codes: np.ndarray, ok: np.ndarray, n: int) -> np.ndarray:
    """1.0 when every row of the group is right, 0.0 otherwise, NaN for an empty group."""
    cnt = _count(codes, n)
    hits = np.bincount(codes, weights=ok, minlength=n)
    return np.where(cnt > 0, (hits == cnt).astype(float), np.nan)


def _prod(codes: np.ndarray, p: np.ndarray, n: int) -> np.ndarray:
    with np.errstate(divide="ignore"):
        logs = np.log(p)
    total = np.bincount(codes, weights=logs, minlength=n)  # -inf when some p is 0
    return np.where(_count(codes, n) > 0, np.exp(total), np.nan)


def _per_distractor(ctx: np.ndarray, distractor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of (context, distractor) pairs among the given rows, and each pair's context."""
    dist_codes = pd.factorize(distractor)[0]
    width = dist_codes.max(initial=0) + 1
    pairs, pair_codes = np.unique(ctx.astype(np.int64) * width + dist_codes, return_inverse=True)
    return pair_codes, pairs // width


def context_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per-context metric values for FramingQA records, indexed by (model, task, format, context_id).

    NaN marks a context with no rows of that metric's set; ``COUNTS`` columns count rows.
    """
    grouped = df.groupby(CONTEXT, sort=True, observed=True)
    ctx = grouped.ngroup().to_numpy()
    index = grouped.size().index
    n = len(index)
    ok = (df["correct"].fillna(False).astype(bool) & (df["parse"] == "ok")).to_numpy(float)
    bias = df["bias"]

    slot = df.groupby([*GROUP, "slot"], sort=False, observed=True).ngroup().to_numpy()
    p_slot = _mean(slot, ok, slot.max(initial=-1) + 1)[slot]

    parse = df["parse"]
    cols: dict[str, np.ndarray] = {
        "n_rows": _count(ctx, n),
        "n_unparsed": np.bincount(ctx, weights=(parse == "unparsed").to_numpy(float), minlength=n),
        "n_refusal": np.bincount(ctx, weights=(parse == "refusal").to_numpy(float), minlength=n),
        "mean": _mean(ctx, ok, n),
        "strict_all": _all(ctx, ok, n),
        "expected_all": _prod(ctx, p_slot, n),
    }
    correct = (bias == "correct").to_numpy()
    cols["strict_correct"] = _all(ctx[correct], ok[correct], n)
    cols["expected_correct"] = _prod(ctx[correct], p_slot[correct], n)

    incorrect = (bias == "incorrect").to_numpy()
    pair_codes, pair_ctx = _per_distractor(ctx[incorrect], df["distractor"].to_numpy()[incorrect])
    n_pairs = len(pair_ctx)
    dist_all = _all(pair_codes, ok[incorrect], n_pairs)
    cols["strict_incorrect"] = _mean(pair_ctx, dist_all, n)
    cols["expected_incorrect"] = _mean(pair_ctx, _prod(pair_codes, p_slot[incorrect], n_pairs), n)
    correct_all = np.nan_to_num(cols["strict_correct"], nan=1.0)  # no correct-bias rows: vacuous
    cols["strict_pair"] = _mean(pair_ctx, dist_all * correct_all[pair_ctx], n)

    neutral = (bias == "neutral").to_numpy()
    cols["neutral"] = _mean(ctx[neutral], ok[neutral], n)
    for answer in ("yes", "no"):
        rows = (df["gold"] == answer.capitalize()).to_numpy()
        cols[f"strict_all_{answer}"] = _all(ctx[rows], ok[rows], n)
        cols[f"expected_all_{answer}"] = _prod(ctx[rows], p_slot[rows], n)

    for lv in LEVELS:
        at_level = (df["level"] == lv).to_numpy()
        for direction in DIRECTIONS:
            in_direction = (bias != "neutral") if direction == "all" else (bias == direction)
            rows = at_level & in_direction.to_numpy()
            cols[f"levels.{lv}.{direction}.mean"] = _mean(ctx[rows], ok[rows], n)
            cols[f"levels.{lv}.{direction}.strict"] = _all(ctx[rows], ok[rows], n)
    return pd.DataFrame(cols, index=index)


def _value(x: Any) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


@dataclass(frozen=True)
class Groups:
    """Per group of contexts: the means of the metric columns, the summed counts, the number of
    contexts and each strict column's interval, for every group at once."""

    means: pd.DataFrame
    counts: pd.DataFrame
    sizes: pd.Series
    intervals: list[dict[str, list[float] | None]]

    @classmethod
    def of(cls, table: pd.DataFrame, keys: list[str]) -> Groups:
        grouped = table.groupby(level=keys, sort=True)
        return cls(grouped[[c for c in table.columns if c not in COUNTS]].mean(), grouped[COUNTS].sum(),
                   grouped.size(), _strict_intervals(table, keys))

    def __iter__(self):
        """(group key, metrics entry) per group, in key order."""
        fmt_at = self.means.index.names.index("format")
        for i, (key, means) in enumerate(zip(self.means.index, self.means.to_dict("records"), strict=True)):
            counts = self.counts.iloc[i]
            yield key, _metrics(means, counts, int(self.sizes.iloc[i]), self.intervals[i], key[fmt_at])


def _strict_intervals(table: pd.DataFrame, keys: list[str]) -> list[dict[str, list[float] | None]]:
    """Per group of ``keys`` (in sorted order), each strict column's interval from (sum of the
    per-context 0/1 or share values, contexts with a value) per task: a group pooling tasks gets
    the stratified interval (the tasks are fixed strata), a task's group Wilson's."""
    by = keys if "task" in keys else [*keys, "task"]
    strict = table[STRICT]
    sums = strict.fillna(0.0).groupby(level=by, sort=True).sum()
    present = strict.notna().groupby(level=by, sort=True).sum()
    if "task" not in keys:  # groups x (column, task), a task without contexts counting 0
        sums, present = (x.unstack("task", fill_value=0) for x in (sums, present))
    groups, width = len(sums), len(STRICT)
    tasks = sums.shape[1] // width
    flat = stratified_proportion_intervals(sums.to_numpy(float).reshape(groups * width, tasks),
                                           present.to_numpy(float).reshape(groups * width, tasks))
    return [dict(zip(STRICT, flat[i * width:(i + 1) * width], strict=True)) for i in range(groups)]


def _metrics(means: dict[str, float], counts: pd.Series, n: int, ci: dict[str, list[float] | None],
             fmt: str) -> dict[str, Any]:
    """The report entry for one group: its metric means, row counts, contexts and intervals."""
    out: dict[str, Any] = {}
    for col, value in means.items():
        if col.startswith("levels."):
            continue
        out[col] = _value(value)
        if col in ci:
            out[f"{col}_ci"] = ci[col]
    drop = MC_ONLY if fmt == "binary" else BINARY_ONLY if fmt == "mc" else set()
    out = {k: v for k, v in out.items() if k not in drop}
    out["unparsed_rate"] = float(counts["n_unparsed"] / counts["n_rows"])
    out["refusal_rate"] = float(counts["n_refusal"] / counts["n_rows"])
    out["n_contexts"] = n
    out["small_sample"] = small_sample(n)
    out["n_rows"] = int(counts["n_rows"])
    out["levels"] = {
        lv: {
            d: {
                "mean": _value(means[f"levels.{lv}.{d}.mean"]),
                "strict": _value(means[f"levels.{lv}.{d}.strict"]),
                "strict_ci": ci[f"levels.{lv}.{d}.strict"],
            }
            for d in DIRECTIONS
        }
        for lv in LEVELS
    }
    return out


def score_framingqa(df: pd.DataFrame) -> dict[str, Any]:
    """``{model: {task: {format: metrics}}}`` for the FramingQA text records in ``df``.

    Rows of other suites are ignored; an empty result means no FramingQA records. The pooled
    task's intervals count every context of the format, stratified by task.
    """
    df = df.loc[df["suite"] == "framingqa", NEEDED]
    if df.empty:
        return {}
    table = context_table(df)
    report: dict[str, Any] = {}
    for (model, task, fmt), entry in Groups.of(table, GROUP):
        report.setdefault(model, {}).setdefault(task, {})[fmt] = entry
    for (model, fmt), entry in Groups.of(table, ["model", "format"]):
        report[model].setdefault(POOLED_TASK, {})[fmt] = entry
    for (model, fmt), rows in df.groupby(["model", "format"], sort=True):
        report[model][POOLED_TASK][fmt].update(answer_shares(rows))
    return {model: dict(sorted(tasks.items())) for model, tasks in report.items()}


def answer_shares(rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``answer_shares``: each answer's share of the parsed answers; ``gold_shares``: each gold
    answer's share of the rows."""
    def shares(values: pd.Series) -> dict[str, float]:
        return {str(k): float(v) for k, v in values.value_counts(normalize=True).sort_index().items()}

    return {"answer_shares": shares(rows.loc[rows["parse"] == "ok", "answer"]),
            "gold_shares": shares(rows["gold"])}
