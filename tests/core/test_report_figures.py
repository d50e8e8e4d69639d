"""Report figures: the bars carry the report's values (as percentages), intervals become error
bars, significant McNemar tests get an asterisk; figures encode to PNG."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle

from framebench.scoring.figures import plain_label, png_base64
from framebench.scoring.report import report_figures
from framebench.text_eval.framingqa.figures import (
    framingqa_accuracy_figure,
    framingqa_levels_figure,
)
from framebench.text_eval.omit.tables import omit_obr_figure

LEVELS = {"root": {"correct": {"mean": 0.9, "strict": 0.8}, "incorrect": {"mean": 0.3, "strict": 0.2}},
          "propositional": {"correct": {"mean": 0.8, "strict": 0.7}, "incorrect": {"mean": 0.6, "strict": 0.5}},
          "global": {"correct": {"mean": 0.7, "strict": 0.6}, "incorrect": {"mean": 0.3, "strict": 0.1}}}
MC = {"neutral": 0.55, "strict_correct": 0.6, "strict_correct_ci": [0.5, 0.75], "strict_incorrect": 0.2,
      "strict_all": 0.1, "expected_correct": 0.3, "expected_incorrect": 0.01, "expected_all": 1e-6,
      "levels": LEVELS}
FQA = {"m1": {"finance": {"mc": MC}, "all": {"mc": MC}}, "m2": {"all": {"mc": {**MC, "neutral": 0.25}}}}
OMIT = {"rates": {"m1": {"M0": {"OBR": 0.5, "OBR_low": 0.4, "OBR_high": 0.6},
                         "M1": {"OBR": 0.2, "OBR_low": 0.15, "OBR_high": 0.3}},
                  "m2": {"M0": {"OBR": 0.1, "OBR_low": 0.05, "OBR_high": 0.2}}},
        "mcnemar": [{"model": "m1", "condition": "M1", "b": 30, "c": 2, "p": 1e-6, "p_holm": 2e-6}]}


def bar_heights(ax) -> list[float]:
    return [round(p.get_height(), 6) for p in ax.patches if isinstance(p, Rectangle)]


def test_accuracy_figure_bars_are_the_report_values():
    fig = framingqa_accuracy_figure(FQA, "mc")
    assert fig is not None
    axes = fig.axes
    assert len(axes) == 2 * 2  # tasks finance and all, each (i) mean and (ii) strict
    mean_all, strict_all = axes[2], axes[3]
    assert mean_all.get_title() == "all (pooled): (i) mean"
    # series neutral, correct, incorrect; within each, models m1, m2
    correct_mean = np.mean([0.9, 0.8, 0.7]) * 100
    incorrect_mean = np.mean([0.3, 0.6, 0.3]) * 100
    assert bar_heights(mean_all) == pytest.approx([55, 25, correct_mean, correct_mean,
                                                   incorrect_mean, incorrect_mean])
    assert bar_heights(strict_all) == pytest.approx([60, 60, 20, 20, 10, 10])
    # the expected-strict diamonds sit at the expected values
    offsets = np.concatenate([c.get_offsets()[:, 1] for c in strict_all.collections
                              if isinstance(c, PathCollection)])
    assert sorted(np.round(offsets, 6)) == pytest.approx(sorted([30, 30, 1, 1, 1e-4, 1e-4]))
    segments = [seg for c in strict_all.collections for seg in getattr(c, "get_segments", list)()]
    assert (50.0, 75.0) in {(round(s[0][1], 6), round(s[1][1], 6)) for s in segments}  # bootstrap CI
    # the finance row only has m1 data: m2's bars are empty (NaN drawn as 0)
    assert bar_heights(axes[1])[:2] == pytest.approx([60, 0])


def test_levels_figure_per_level_correct_vs_incorrect():
    fig = framingqa_levels_figure(FQA, "mc")
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["root: mean", "propositional: mean", "global: mean",
                      "root: strict", "propositional: strict", "global: strict"]
    assert bar_heights(fig.axes[1]) == pytest.approx([80, 80, 60, 60])  # correct m1, m2; incorrect
    assert bar_heights(fig.axes[5]) == pytest.approx([60, 60, 10, 10])


def test_obr_figure_with_wilson_errors_and_significance():
    fig = omit_obr_figure(OMIT)
    (ax,) = fig.axes
    assert bar_heights(ax) == pytest.approx([50, 10, 20, 0])  # M0: m1, m2; M1: m1, (m2 none)
    segments = [seg for c in ax.collections for seg in c.get_segments()]
    spans = sorted((round(s[0][1], 6), round(s[1][1], 6)) for s in segments)
    assert (40, 60) in spans and (15, 30) in spans and (5, 20) in spans
    stars = [t for t in ax.texts if t.get_text() == "*"]
    assert len(stars) == 1 and stars[0].xy[1] == pytest.approx(31)


def test_png_and_labels():
    fig = omit_obr_figure(OMIT)
    data = base64.b64decode(png_base64(fig))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert plain_label("hf:/models/org/SmolLM2-135M-Instruct") == "hf:…/SmolLM2-135M-Instruct"
    assert plain_label("cost $5") == "cost $5"  # shown as is: mathtext is off


def test_report_figures_skip_missing_suites():
    titles = [title for title, _ in report_figures({"omit": OMIT})]
    assert titles == ["OMIT: OBR by condition (cf. OMIT Fig. 4)"]
    assert report_figures({}) == []


def inside_figure(fig, texts) -> bool:
    """Whether every text's drawn box lies within the figure's (nothing cut off at its edges)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)  # as savefig draws
    canvas.draw()
    renderer = canvas.get_renderer()
    box = fig.bbox
    extents = [t.get_window_extent(renderer) for t in texts if t.get_text()]
    return bool(extents) and all(e.x0 >= box.x0 - 0.5 and e.x1 <= box.x1 + 0.5 and e.y0 >= box.y0 - 0.5
                                 and e.y1 <= box.y1 + 0.5 for e in extents)


def test_a_zero_bar_is_labelled_at_the_bar_not_at_its_whisker():
    """A strict cell of 0 with a Wilson interval up to 49 %: its label sits at 0, not near 50."""
    zero = {**MC, "strict_correct": 0.0, "strict_correct_ci": [0.0, 0.49]}
    fig = framingqa_accuracy_figure({"m1": {"all": {"mc": zero}}}, "mc")
    strict = fig.axes[1]
    labels = [t for t in strict.texts if t.get_text() != "*"]
    heights = bar_heights(strict)
    assert heights[0] == 0.0 and labels[0].get_text() == "0"
    assert [t.get_position()[1] for t in labels] == pytest.approx([h + 1.0 for h in heights])
    segments = [seg for c in strict.collections for seg in getattr(c, "get_segments", list)()]
    assert (0.0, 49.0) in {(round(s[0][1], 6), round(s[1][1], 6)) for s in segments}  # the whisker stays


def test_susceptibility_labels_read_horizontally_inside_the_figure_with_a_legend():
    from framebench.text_eval.susceptibility_report import susceptibility_figure

    long_name = "hf:/models/some-org/A-Rather-Long-Model-Name-Instruct [constrained]"
    cell = {"shift": -0.05, "shift_ci": [-0.08, -0.01]}
    levels = {lv: {"correct": cell, "incorrect": cell} for lv in ("root", "propositional", "global")}
    sus = {"framingqa": {m: {"all": {"mc": levels, "binary": {"root": {"incorrect": cell}}}}
                         for m in ("m1", "m2", long_name)}}
    fig = susceptibility_figure(sus)
    labels = [t for ax in fig.axes for t in ax.get_yticklabels()]
    assert len(labels) == 3 * 6 + 3 and all(t.get_rotation() == 0 for t in labels)
    assert inside_figure(fig, labels)
    fig.canvas.draw()
    boxes = sorted((t.get_window_extent() for t in fig.axes[1].get_yticklabels()), key=lambda b: b.y0)
    assert all(lower.y1 <= upper.y0 + 0.5 for lower, upper in zip(boxes, boxes[1:], strict=False))  # no overlap
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["correct-bias framing", "incorrect-bias framing"]
    assert inside_figure(fig, legend.get_texts())


def test_heat_map_labels_are_whole_and_inside_the_figure():
    from framebench.text_eval.omit.analysis_report import _fig_conflicts, _fig_fingerprint

    model = "smollm2 [constrained]"  # 21 characters: the heat maps used to keep the last 20
    conflicts = {"per_conflict": {model: {"M0": {"care-virtue": 0.5, "deontology-care": 0.25}}}}
    fingerprint = {"fingerprint": {"personas": ["care", "virtue"], "cells": [
        {"model": model, "condition": "M0", "persona": p, "kappa": 0.1, "p": 0.5} for p in ("care", "virtue")]}}
    for fig in (_fig_conflicts(conflicts), _fig_fingerprint(fingerprint)):
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == [f"{model} M0"]
        assert inside_figure(fig, ax.get_yticklabels() + ax.get_xticklabels())
