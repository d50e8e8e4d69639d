"""OMIT's report tables (shaped like OMIT Tables 2 and 11), the intervention tests, OBR by persona
conflict, the OBR figure (cf. OMIT Fig. 4) and the console summary, from its ``report.json`` entry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from framebench.scoring.formatting import (
    SIGNIFICANCE,
    as_number,
    count,
    n_cell,
    p_value,
    pct,
    pct_ci,
    small_n_note,
    withheld,
    withheld_note,
)
from framebench.scoring.parts import SummaryTable
from framebench.scoring.sections import MISSING, Table, natural_key, ordered
from framebench.scoring.stats import MIN_CONTEXTS_BINARY
from framebench.text_eval.omit.conditions import OWN_WORDING_NOTE, any_own_wording, display_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure


OBR_FIGURE = "OMIT: OBR by condition (cf. OMIT Fig. 4)"  # shown right after the rates table


def omit_rates_table(rates: Mapping[str, Any]) -> Table | None:
    """OMIT Table 2, one row per model and condition."""
    header = ["Model", "Condition", "n", "OBR (95% CI)", "ABR", "FCR", "Unparsed pairs"]
    rows = []
    for model in ordered(rates):
        for condition in ordered(rates[model]):
            r = rates[model][condition]
            obr = pct_ci(r.get("OBR"), [r.get("OBR_low"), r.get("OBR_high")],
                         withheld(r.get("n"), MIN_CONTEXTS_BINARY))
            rows.append([model, display_name(condition), n_cell(r.get("n")), obr, pct(r.get("ABR")),
                         pct(r.get("FCR")), count(r.get("unparsed_pairs"))])
    if not rows:
        return None
    return Table(
        title="OMIT: framing-invariant bias rates (%) (cf. OMIT Table 2)",
        caption="n: scenario pairs with both frames parsed; Unparsed pairs: pairs left out because "
        "an answer could not be read. In (action, omission) order: OBR = (No, No), ABR = (Yes, Yes), "
        "FCR = (Yes, No) or (No, Yes), as shares of the n pairs. Brackets: Wilson 95 % interval. "
        "Only evaluated models: the dataset's persona panel is not a model."
        + withheld_note(rows, "pairs") + small_n_note(rows, 2, "pairs")
        + _own_wording_note(c for m in rates.values() for c in m),
        header=header,
        rows=rows,
        figures=(OBR_FIGURE,),
    )


def omit_conditions_table(rates: Mapping[str, Any]) -> Table | None:
    """OMIT Table 11: conditions side by side, with the unweighted mean over models."""
    conditions = ordered({c for by_condition in rates.values() for c in by_condition})
    if len(conditions) < 2:
        return None
    stats = ("OBR", "ABR", "FCR")
    header = ["Model"] + [f"{display_name(c)} {s}" for c in conditions for s in stats]
    models = ordered(rates)
    rows = [[model] + [pct((rates[model].get(c) or {}).get(s)) for c in conditions for s in stats]
            for model in models]
    mean_row = ["Mean"]
    for c in conditions:
        for s in stats:
            values = [as_number((rates[m].get(c) or {}).get(s)) for m in models]
            values = [v for v in values if v is not None]
            mean_row.append(pct(sum(values) / len(values)) if values else MISSING)
    return Table(
        title="OMIT: outcome rates (%) by intervention condition (cf. OMIT Table 11)",
        caption="M0 is the baseline. Mean: unweighted mean across models." + _own_wording_note(conditions),
        header=header,
        rows=rows + [mean_row],
    )


def omit_mcnemar_table(tests: list[Mapping[str, Any]]) -> Table | None:
    rows = [[t.get("model", ""), display_name(str(t.get("condition", ""))), count(t.get("b")), count(t.get("c")),
             p_value(t.get("p")), p_value(t.get("p_holm")),
             "*" if (as_number(t.get("p_holm")) or 1.0) < SIGNIFICANCE else ""]
            for t in sorted(tests, key=lambda t: (str(t.get("model")),
                                                  natural_key(str(t.get("condition")))))]
    if not rows:
        return None
    return Table(
        title="OMIT: intervention tests (exact one-sided McNemar vs M0, Holm-corrected)",
        caption="b: scenarios (No, No) at M0 but not at the condition; c: the reverse. "
        "H1: the condition has fewer (No, No) pairs. * = Holm-adjusted p < .05."
        + _own_wording_note(str(t.get("condition", "")) for t in tests),
        header=["Model", "Condition", "b", "c", "p", "p (Holm)", "sig."],
        rows=rows,
    )


def omit_conflicts_table(conflicts: Mapping[str, Any]) -> Table | None:
    labels = ordered({label for by_condition in conflicts.values()
                      for by_label in by_condition.values() for label in by_label})
    rows = [[model, display_name(condition), *(pct(conflicts[model][condition].get(label)) for label in labels)]
            for model in ordered(conflicts) for condition in ordered(conflicts[model])]
    if not rows or not labels:
        return None
    return Table(
        title="OMIT: OBR (%) by persona conflict",
        caption="Scenarios grouped by the philosophical conflicts the persona panel disagreed on."
        + _own_wording_note(c for m in conflicts.values() for c in m),
        header=["Model", "Condition", *labels],
        rows=rows,
    )


def omit_tables(omit: Mapping[str, Any]) -> list[Table]:
    rates = omit.get("rates") or {}
    tables = [omit_rates_table(rates), omit_conditions_table(rates),
              omit_mcnemar_table(omit.get("mcnemar") or []),
              omit_conflicts_table(omit.get("conflicts") or {})]
    return [t for t in tables if t is not None]


def omit_obr_figure(omit: Mapping[str, Any]) -> Figure | None:
    """OMIT Figure 4 in spirit: OBR per model and condition with Wilson intervals; * marks a
    significant reduction vs M0 (Holm-adjusted one-sided McNemar)."""
    rates = omit.get("rates") or {}
    models = ordered(rates)
    conditions = ordered({c for m in models for c in rates[m]})
    if not models or not conditions:
        return None
    from framebench.scoring.figures import as_value, ci_error, grouped_bars, plt  # matplotlib

    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(models) * max(len(conditions), 2) / 2), 4))
    series, errors = {}, {}
    for c in conditions:
        cells = [rates[m].get(c) or {} for m in models]
        series[c] = [as_value(r.get("OBR")) for r in cells]
        errors[c] = np.array([ci_error(as_value(r.get("OBR")), [r.get("OBR_low"), r.get("OBR_high")])
                              for r in cells]).T
    series = {display_name(c): v for c, v in series.items()}
    errors = {display_name(c): v for c, v in errors.items()}
    cmap = plt.get_cmap("viridis", max(len(conditions), 2))
    colors = {display_name(c): cmap(i) for i, c in enumerate(conditions)}
    positions = grouped_bars(ax, models, series, errors, colors)
    significant = {(t.get("model"), display_name(str(t.get("condition")))) for t in omit.get("mcnemar") or []
                   if as_value(t.get("p_holm")) < SIGNIFICANCE}
    for c, pos in positions.items():
        for i, model in enumerate(models):
            if (model, c) in significant:  # c is the displayed name here
                top = as_value((rates[model].get(c) or {}).get("OBR_high"))
                ax.annotate("*", (pos[i], np.nan_to_num(top) * 100 + 1), ha="center", fontsize=12)
    ax.set_ylabel("OBR (%)")
    title = "Omission-bias rate by condition (Wilson 95% CI; * = significant drop vs M0)"
    if any_own_wording(conditions):
        title += "\n(framebench): framebench's wording, not the paper's"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncols=len(conditions), loc="upper left")
    fig.tight_layout()
    return fig


def summary_tables(omit: Mapping[str, Any]) -> list[SummaryTable]:
    """OBR, ABR, FCR per model and condition (evaluated models only: no persona-panel rows)."""
    rates = omit.get("rates", {})
    rows = [[model, display_name(condition), str(m.get("n", "")), pct(m.get("OBR")), pct(m.get("ABR")),
             pct(m.get("FCR"))]
            for model in ordered(rates) for condition, m in rates[model].items()]
    return [SummaryTable("OMIT", ["model", "condition", "n pairs", "OBR", "ABR", "FCR"], rows)] if rows else []


def _own_wording_note(conditions: Iterable[str]) -> str:
    return " " + OWN_WORDING_NOTE if any_own_wording(list(conditions)) else ""
