"""OMIT M2-M4 are framebench's own wording (the paper names them without wording): every report
table and the figure label them so, and M0/M1 are shown as they are."""

from __future__ import annotations

from framebench.text_eval.omit.conditions import CONDITIONS, OWN_WORDING_NOTE, display_name
from framebench.text_eval.omit.tables import omit_obr_figure, omit_tables, summary_tables


def _rate(obr: float) -> dict:
    return {"n": 20, "OBR": obr, "OBR_low": obr / 2, "OBR_high": min(1.0, obr * 1.5), "ABR": 0.1, "FCR": 0.2,
            "unparsed_pairs": 0}


def _omit(conditions: tuple[str, ...]) -> dict:
    return {"rates": {"m1": {c: _rate(0.4) for c in conditions}},
            "mcnemar": [{"model": "m1", "condition": c, "b": 3, "c": 1, "p": 0.3, "p_holm": 0.6}
                        for c in conditions if c != "M0"],
            "conflicts": {"m1": {c: {"care-virtue": 0.5} for c in conditions}}}


def test_which_conditions_are_framebench_wording():
    assert [n for n, c in CONDITIONS.items() if c.own_wording] == ["M2", "M3", "M4"]
    assert display_name("M1") == "M1" and display_name("M4") == "M4 (framebench)"
    assert display_name("MyPlugin") == "MyPlugin"


def test_every_table_labels_m2_to_m4():
    tables = omit_tables(_omit(("M0", "M1", "M2", "M4")))
    assert len(tables) == 4
    for table in tables:
        cells = [str(c) for row in table.rows for c in row] + list(table.header)
        text = " ".join(cells)
        assert "M2 (framebench)" in text and "M4 (framebench)" in text, table.title
        assert "M1 (framebench)" not in text and "M0 (framebench)" not in text
        assert OWN_WORDING_NOTE in table.caption, table.title
    (summary,) = summary_tables(_omit(("M0", "M3")))
    assert [row[1] for row in summary.rows] == ["M0", "M3 (framebench)"]


def test_paper_conditions_alone_carry_no_note():
    tables = omit_tables(_omit(("M0", "M1")))
    assert tables and all(OWN_WORDING_NOTE not in t.caption for t in tables)


def test_figure_legend_and_title():
    fig = omit_obr_figure(_omit(("M0", "M2")))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["M0", "M2 (framebench)"]
    assert "not the paper's" in ax.get_title()
