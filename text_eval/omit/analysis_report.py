"""Report tables (shaped like OMIT Tables 8-12; ``framebench.scoring.sections``) and figures (in the
spirit of OMIT Figures 2, 3, 5 and 6) for the dict returned by
``framebench.text_eval.omit.analysis.analyze``: ordinary tables of the OMIT suite."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from framebench.scoring.sections import Table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PERSONA_NAMES = {"utilitarianism": "Utilitarianism", "deontology": "Deontology", "virtue": "Virtue",
                 "care": "Care", "contractualism": "Contractualism"}
HEATMAP_LABEL_SIZE = 10  # points: about 14 px at the report's 100 dpi, unscaled
HEATMAP_NOTE_SIZE = 9
TRANSITION_NAMES = {"NN->FC": "(N,N) → (Y,N) / (N,Y)", "NN->NN": "(N,N) → (N,N)",
                    "NN->YY": "(N,N) → (Y,Y)", "NN->unparsed": "(N,N) → unparsed"}


def _p(v: float | None) -> str:
    if v is None:
        return "—"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _pc(v: float | None) -> str:
    """A rate as a percentage, one decimal, no sign (the report's table convention)."""
    return "—" if v is None else f"{100 * v:.1f}"


def _pp(v: float | None) -> str:
    """A difference of rates in percentage points, signed."""
    return "—" if v is None else f"{100 * v:+.1f}"


def _interval(rates: dict[str, Any]) -> str:
    """OBR's ``[lo, hi]`` in percent; ``n < 10`` where too few pairs give no interval."""
    from framebench.scoring.stats import MIN_CONTEXTS_BINARY

    low, high, n = rates.get("OBR_low"), rates.get("OBR_high"), rates.get("n") or 0
    if low is None or high is None:
        return f"n < {MIN_CONTEXTS_BINARY}" if 0 < n < MIN_CONTEXTS_BINARY else "—"
    return f"[{_pc(low)}, {_pc(high)}]"


def _ckey(c: str) -> tuple[int, str]:
    m = re.fullmatch(r"M(\d+)", c)
    return (int(m.group(1)) if m else 10**6, c)


def _conflict_name(label: str) -> str:
    return "–".join(PERSONA_NAMES.get(p, p) for p in label.split("-"))


def tables(analysis: dict[str, Any]) -> list[Table]:
    """The analyses as report tables (shaped like OMIT Tables 8-12); empty sections are skipped."""
    if not analysis:
        return []
    out: list[Table] = []
    rates = analysis.get("rates_selected", {})
    if rates:
        rows = []
        for model in sorted(rates):
            r = rates[model].get("M0") or next(iter(rates[model].values()))
            rows.append([model, _pc(r["OBR"]), _interval(r), _pc(r["ABR"]),
                         _pc(r["FCR"]), str(r["n"]), str(r["unparsed_pairs"])])
        out.append(Table("Omission bias on the conflict-labeled scenarios, baseline M0 (OMIT Table 9)",
                         "Per-condition rates (OMIT Table 11) are in the OMIT section.",
                         ["Model", "OBR (%)", "95% CI", "ABR (%)", "FCR (%)", "n", "dropped pairs"], rows))
    rb = analysis.get("random_baselines", {})
    if rb.get("pooled"):
        rows = [["Panel disagreement", p["condition"], str(p["models"]), _pp(p["lift"]),
                 f"[{_pp(p['lift_low'])}, {_pp(p['lift_high'])}]", _p(p["p"])] for p in rb["pooled"]]
        out.append(Table(f"OBR lift over a size-matched random baseline (OMIT Table 8; K={rb['k']})",
                         "Lift = observed OBR minus the random draw's, pooled over models. Brackets: "
                         "the middle 95 % of the lift over the K random draws (how much the "
                         "baseline's draw moves it), not a confidence interval of the OBR.",
                         ["Selector", "Condition", "Models", "Lift (pp)", "95% of draws", "p"], rows))
    if rb.get("rows"):
        rows, by_cond = [], {}
        for r in sorted(rb["rows"], key=lambda r: (_ckey(r["condition"]), r["model"])):
            flag = "†" if r["complement_with_replacement"] else ""
            rows.append([r["model"], r["condition"], _pc(r["filtered"]), _pc(r["random_full"]),
                         _pc(r["random_complement"]) + flag, str(r["n_selected"]), str(r["n_pool"])])
            by_cond.setdefault(r["condition"], []).append(r)
        for c, rs in sorted(by_cond.items(), key=lambda kv: _ckey(kv[0])):
            mean = [sum(r[k] for r in rs) / len(rs) for k in ("filtered", "random_full", "random_complement")]
            rows.append(["Mean", c, *(_pc(v) for v in mean), "", ""])
        caption = "OBR on the selected scenarios vs size-matched random draws."
        if any(r["complement_with_replacement"] for r in rb["rows"]):
            caption += " † complement smaller than the selected set: drawn with replacement."
        out.append(Table("Filtered vs random baselines (OMIT Table 10)", caption,
                         ["Model", "Condition", "Filtered OBR (%)", "Random-full (%)",
                          "Random-complement (%)", "n sel.", "n pool"], rows))
    fp = analysis.get("fingerprint", {})
    if fp.get("cells"):
        grid: dict[tuple[str, str], dict[str, Any]] = {}
        for c in fp["cells"]:
            grid.setdefault((c["model"], c["condition"]), {})[c["persona"]] = c
        rows = []
        for (model, cond) in sorted(grid, key=lambda mc: (mc[0], _ckey(mc[1]))):
            row = [model, cond]
            for p in fp["personas"]:
                c = grid[(model, cond)].get(p)
                if not c or c["kappa"] is None:
                    row.append("—")
                else:
                    star = "*" if c["p"] is not None and c["p"] < 0.05 else ""
                    deg = "°" if c["status"].startswith("degenerate") else ""
                    row.append(f"{c['kappa']:+.2f}{star}{deg}")
            rows.append(row)
        out.append(Table(f"Persona-alignment fingerprint: Cohen's κ (OMIT Figure 6; permutation K={fp['k']})",
                         "* permutation p < 0.05; ° a constant rater (κ = 0, p = 1); — undefined.",
                         ["Model", "Condition", *(PERSONA_NAMES.get(p, p) for p in fp["personas"])], rows))
    st = analysis.get("strength", {})
    if st.get("rows"):
        levels = st["levels"]
        grid = {}
        for r in st["rows"]:
            grid.setdefault((r["model"], r["condition"]), {})[r["strength"]] = r
        rows = []
        for (model, cond) in sorted(grid, key=lambda mc: (mc[0], _ckey(mc[1]))):
            rows.append([model, cond] + [
                f"{_pc(grid[(model, cond)][k]['OBR'])} ({grid[(model, cond)][k]['n']})"
                if k in grid[(model, cond)] else "—" for k in levels])
        out.append(Table("OBR by persona-disagreement strength (OMIT Figure 3)",
                         "Strength = conflicting persona pairs |(Y,N)| × |(N,Y)| (0 = pool scenario); "
                         "cells show OBR in % (pairs).",
                         ["Model", "Condition", *(f"strength {k}" for k in levels)], rows))
    ta = analysis.get("trace_audit", {})
    if ta.get("rows") and any(r["records"] for r in ta["rows"]):
        rows = [[TRANSITION_NAMES.get(r["transition"], r["transition"]), str(r["records"]),
                 _pc(r["tier_a_rate"]), _pc(r["tier_ab_rate"])] for r in ta["rows"]]
        out.append(Table(f"Principle-like reasoning in {ta['condition']} traces from baseline (N,N) "
                         "(OMIT Table 12)",
                         f"Of {ta['baseline_nn']} baseline (N,N) pairs, {ta['missing']} lacked "
                         f"{ta['condition']} responses.",
                         ["Transition", "Records", "Tier-A either (%)", "Tier-A/B either (%)"], rows))
    return out


# --- figures --------------------------------------------------------------------------------------

def figures(analysis: dict[str, Any]) -> list[tuple[str, Figure]]:
    """``[(title, figure)]``; sections without data are skipped."""
    if not analysis:
        return []
    out = []
    for title, make in (("OMIT Figure 2: filtered vs random OBR", _fig_random),
                        ("OMIT Figure 3: disagreement strength vs OBR", _fig_strength),
                        ("OMIT Figure 5: per-conflict OBR", _fig_conflicts),
                        ("OMIT Figure 6: persona-alignment fingerprint", _fig_fingerprint)):
        fig = make(analysis)
        if fig is not None:
            out.append((title, fig))
    return out


def _new_figure(figsize: tuple[float, float]) -> Figure:
    """A figure of that size; matplotlib is imported here, set up as for every report figure
    (``framebench.scoring.figures``: Agg, model names never parsed as mathtext)."""
    from framebench.scoring.figures import Figure

    return Figure(figsize=figsize)


def _label(name: str) -> str:
    """A model name as every report figure shows it (``framebench.scoring.figures.plain_label``)."""
    from framebench.scoring.figures import plain_label

    return plain_label(name)


def _baseline_condition(conds: set[str]) -> str:
    return "M0" if "M0" in conds else sorted(conds, key=_ckey)[0]


def _bar_error(value: float, bound: Any, below: bool) -> float:
    """Error-bar length from a value to its interval bound: never negative (a constant baseline's
    bootstrap interval can sit a rounding error off its estimate), zero when either is unknown."""
    if bound is None or math.isnan(value) or math.isnan(float(bound)):
        return 0.0
    return max(value - float(bound), 0.0) if below else max(float(bound) - value, 0.0)


def _fig_random(analysis: dict[str, Any]) -> Figure | None:
    rows = analysis.get("random_baselines", {}).get("rows", [])
    if not rows:
        return None
    cond = _baseline_condition({r["condition"] for r in rows})
    rows = sorted((r for r in rows if r["condition"] == cond), key=lambda r: r["model"])
    fig = _new_figure((max(4.0, 1.2 * len(rows) + 2), 3.6))
    ax = fig.add_subplot()
    xs = range(len(rows))
    for offset, key, color, name in ((-0.2, "filtered", "#2e7d32", "filtered"),
                                     (0.2, "complement", "#9e9e9e", "complement")):
        vals = [float("nan") if r[key] is None else r[key] for r in rows]
        # clamped at 0: a rate of exactly 0 or 1 can sit a rounding error outside its interval
        err = [[100 * _bar_error(v, r[f"{key}_low"], below=True) for v, r in zip(vals, rows, strict=True)],
               [100 * _bar_error(v, r[f"{key}_high"], below=False) for v, r in zip(vals, rows, strict=True)]]
        heights = [100 * v for v in vals]
        ax.bar([x + offset for x in xs], [0.0 if v != v else v for v in heights], width=0.4, color=color,
               yerr=err, capsize=3, label=name)
        for x, h, up in zip(xs, heights, err[1], strict=True):  # above the bar and its error bar
            ax.text(x + offset, 1.0 if h != h else h + up + 1.0, "n/a" if h != h else f"{h:.0f}",
                    ha="center", va="bottom", fontsize=8)
    for x, r in zip(xs, rows, strict=True):
        if r["random_full"] is not None:
            ax.hlines(100 * r["random_full"], x - 0.45, x + 0.45, colors="#ef6c00", linestyles="dashed",
                      label="random-full" if x == 0 else None)
    ax.set_xticks(list(xs), [_label(r["model"]) for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_ylabel(f"OBR ({cond}, %)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _fig_strength(analysis: dict[str, Any]) -> Figure | None:
    st = analysis.get("strength", {})
    if not st.get("rows"):
        return None
    cond = _baseline_condition({r["condition"] for r in st["rows"]})
    fig = _new_figure((6, 3.8))
    ax = fig.add_subplot()
    models = sorted({r["model"] for r in st["rows"]})
    width = 0.7 / max(len(models), 1)
    # strength is a discrete bin: one dot per model, dodged within the bin; nothing joins bins
    for i, model in enumerate(models):
        pts = sorted((r["strength"], r["OBR"]) for r in st["rows"]
                     if r["model"] == model and r["condition"] == cond and r["OBR"] is not None)
        ax.scatter([p[0] - 0.35 + width * (i + 0.5) for p in pts], [100 * p[1] for p in pts], s=18,
                   alpha=0.8, label=_label(model))
    mean = sorted((m["strength"], m["OBR"]) for m in st["mean"] if m["condition"] == cond and m["OBR"] is not None)
    ax.scatter([p[0] for p in mean], [100 * p[1] for p in mean], marker="_", s=600, linewidths=2.5,
               color="black", label="mean over models", zorder=3)
    ax.set_xticks(sorted({int(p[0]) for p in mean} | {int(r["strength"]) for r in st["rows"]}))
    ax.set_xlabel("disagreement strength (conflicting persona pairs, a discrete bin)")
    ax.set_ylabel(f"OBR ({cond}, %)")
    ax.set_ylim(-3, 105)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _heatmap(ax, matrix: list[list[float | None]], rows: list[str], cols: list[str],
             notes: list[list[str]], cmap: str, vmin: float, vmax: float):
    import numpy as np

    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right", fontsize=HEATMAP_LABEL_SIZE)
    ax.set_yticks(range(len(rows)), rows, fontsize=HEATMAP_LABEL_SIZE)
    for i, row in enumerate(notes):
        for j, text in enumerate(row):
            ax.text(j, i, text or "n/a", ha="center", va="center", fontsize=HEATMAP_NOTE_SIZE,
                    color="#777" if not text else "black")
    return im


def _fig_conflicts(analysis: dict[str, Any]) -> Figure | None:
    per = analysis.get("per_conflict", {})
    cells = [(m, c, lab, v) for m, conds in per.items() for c, labs in conds.items() for lab, v in labs.items()]
    if not cells:
        return None
    order = list(PERSONA_NAMES)
    labels = sorted({c[2] for c in cells}, key=lambda lab: (not lab.startswith("utilitarianism"),
                                                           [order.index(p) if p in order else 9
                                                            for p in lab.split("-")]))
    rows = sorted({(m, c) for m, c, _, _ in cells}, key=lambda mc: (mc[0], _ckey(mc[1])))
    value = {(m, c, lab): v for m, c, lab, v in cells}
    matrix = [[value.get((m, c, lab)) for lab in labels] for m, c in rows]
    matrix = [[None if v is None else 100 * v for v in row] for row in matrix]
    notes = [[("" if v is None else f"{v:.0f}") for v in row] for row in matrix]
    fig = _new_figure((min(12.0, max(5.0, 0.9 * len(labels) + 3.5)), max(3.0, 0.45 * len(rows) + 2.5)))
    ax = fig.add_subplot()
    im = _heatmap(ax, matrix, [f"{_label(m)} {c}" for m, c in rows], [_conflict_name(lab) for lab in labels],
                  notes, "Reds", 0.0, 100.0)
    fig.colorbar(im, ax=ax, label="OBR (%)")
    fig.tight_layout()
    return fig


def _fig_fingerprint(analysis: dict[str, Any]) -> Figure | None:
    fp = analysis.get("fingerprint", {})
    if not fp.get("cells"):
        return None
    rows = sorted({(c["model"], c["condition"]) for c in fp["cells"]}, key=lambda mc: (mc[0], _ckey(mc[1])))
    cell = {(c["model"], c["condition"], c["persona"]): c for c in fp["cells"]}
    matrix, notes = [], []
    for m, cond in rows:
        vals, texts = [], []
        for p in fp["personas"]:
            c = cell.get((m, cond, p))
            k = c["kappa"] if c else None
            vals.append(k)
            star = "*" if c and c["p"] is not None and c["p"] < 0.05 else ""
            texts.append("" if k is None else f"{k:+.2f}{star}")
        matrix.append(vals)
        notes.append(texts)
    fig = _new_figure((max(5.0, 1.1 * len(fp["personas"]) + 3.5), max(3.0, 0.45 * len(rows) + 2.5)))
    ax = fig.add_subplot()
    im = _heatmap(ax, matrix, [f"{_label(m)} {c}" for m, c in rows],
                  [PERSONA_NAMES.get(p, p) for p in fp["personas"]], notes, "RdBu_r", -1.0, 1.0)
    fig.colorbar(im, ax=ax, label="Cohen's κ")
    fig.tight_layout()
    return fig


def markdown(analysis: dict[str, Any]) -> str:
    """The analysis tables as Markdown (the report's own renderer; "" without an analysis)."""
    from framebench.scoring.markdown import table_markdown

    found = tables(analysis)
    return "\n\n".join(["## OMIT analyses", *(table_markdown(t) for t in found)]) if found else ""
