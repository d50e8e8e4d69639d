"""report.html: one self-contained page; the same tables as report.md; a capped per-context
drill-down; untrusted model output and prompts shown as text. The browser tests open the page in
a real headless chromium and read back the DOM it built."""

from __future__ import annotations

import random
import re
from typing import Any

import pandas as pd
import pytest
from browser_helpers import DomSummary, chromium_binary, dump_dom

from framebench.records import make_row
from framebench.scoring.html import TITLE, drilldown, render_html

SCRIPT_PAYLOAD = "<script>document.title='pwned'</script>"
IMG_PAYLOAD = "<img src=x onerror=\"document.title='pwned'\">"
PAYLOAD = f"Answer: Yes {SCRIPT_PAYLOAD} {IMG_PAYLOAD}"
LEVELS = ("root", "propositional", "global")
VARIANTS = ("Q1", "Q2", "Q3")


# ---------------------------------------------------------------- realistic records


def _text_rows(rng: random.Random, model: str, skill: float, task: str, fmt: str,
               context: str) -> list[dict[str, Any]]:
    """Every variant of one FramingQA context: binary 18 correct-bias + 2 x 18 incorrect-bias
    rows; mc 1 neutral + 9 correct-bias + 3 x 9 incorrect-bias rows."""
    forms = ("plain", "negated") if fmt == "binary" else ("plain",)
    distractors = ("d1", "d2") if fmt == "binary" else ("d1", "d2", "d3")
    hardness = rng.random() * 0.2 if rng.random() < 0.4 else 0.0  # errors cluster
    specs = [("neutral", "", "", "", "")] if fmt == "mc" else []
    for level in LEVELS:
        for form in forms:
            for variant in VARIANTS:
                specs.append(("correct", level, form, variant, ""))
                specs += [("incorrect", level, form, variant, d) for d in distractors]
    rows = []
    for bias, level, form, variant, distractor in specs:
        if fmt == "binary":
            gold = "Yes" if (bias == "correct") == (form == "plain") else "No"
            wrong = "No" if gold == "Yes" else "Yes"
        else:
            gold, wrong = "B", "C"
        p_right = skill - hardness - (0.15 if bias == "incorrect" and level != "propositional" else 0)
        parse = "unparsed" if rng.random() < 0.01 else "ok"
        answer = "" if parse == "unparsed" else (gold if rng.random() < p_right else wrong)
        slot = "/".join(x for x in (bias, level, form, variant, distractor) if x)
        rows.append(make_row(
            run_id="run-1", model=model, suite="framingqa", task=task, format=fmt,
            context_id=context, item_id=f"{task}/{fmt}/{context}/{slot}", bias=bias, level=level,
            form=form, phrasing=variant, option=distractor or "gold", distractor=distractor,
            slot=slot, gold=gold, answer=answer, parse=parse,
            correct=parse == "ok" and answer == gold,
            output=f"Answer: {answer}" if answer else "I am not sure what the evidence implies.",
        ))
    return rows


def _episode_rows(rng: random.Random, model: str, episode: str) -> list[dict[str, Any]]:
    constraint = rng.choice(["none", "spatial", "temporal"])
    specs = [("neutral", "")] + [(b, lv) for b in ("correct", "incorrect") for lv in LEVELS]
    rows = []
    for bias, level in specs:
        done = rng.random() < (0.6 if bias != "incorrect" else 0.45)
        percent = 1.0 if done else round(rng.random() * 0.9, 2)
        rows.append(make_row(
            run_id="run-1", model=model, suite="embodied", task="robotics", format="episode",
            context_id=episode, item_id=f"{episode}/{bias}/{level or 'neutral'}", bias=bias,
            level=level, phrasing="Q1" if bias != "neutral" else "",
            slot=f"{bias}/{level}", constraint=constraint, percent_complete=percent,
            success=percent == 1.0, sim_steps=rng.randint(200, 900), replans=rng.randint(3, 14),
            output="Final: placed the cup on the table." if done else "Final: gave up.",
        ))
    return rows


def _omit_rows(rng: random.Random, model: str, scenario: str) -> list[dict[str, Any]]:
    conflicts = rng.choice(["utilitarianism-deontology", "care-virtue|utilitarianism-care"])
    rows = []
    for condition in ("M0", "M1", "M2"):
        for frame in ("action", "omission"):
            answer = "No" if rng.random() < (0.55 if condition != "M1" else 0.3) else "Yes"
            rows.append(make_row(
                run_id="run-1", model=model, suite="omit", task="omit", format="binary",
                context_id=scenario, item_id=f"{scenario}/{condition}/{frame}", bias="neutral",
                answer=answer, parse="ok", frame=frame, condition=condition, conflicts=conflicts,
                output=f"Decision: {answer}",
            ))
    return rows


def demo_records(seed: int = 0, contexts: int = 12, episodes: int = 10,
                 scenarios: int = 30) -> pd.DataFrame:
    """A realistic mixed records frame: two models, every suite."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for model, skill in (("hf:/models/SmolLM2-135M-Instruct", 0.9), ("openai:gpt-4.1-mini", 0.995)):
        for task in ("law_hearsay", "finance"):
            for fmt in ("binary", "mc"):
                for i in range(contexts):
                    rows += _text_rows(rng, model, skill, task, fmt, f"{task}-{i:03d}")
        for i in range(episodes):
            rows += _episode_rows(rng, model, f"episode-{i:03d}")
        for i in range(scenarios):
            rows += _omit_rows(rng, model, f"scenario-{i:03d}")
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- a hand-made report

REPORT = {
    "framingqa": {"hf:/m": {"finance": {"binary": {
        "mean": 0.574, "strict_all": 0.0, "strict_correct": 0.277, "strict_correct_ci": [0.201, 0.35],
        "strict_incorrect": 0.385, "strict_pair": 0.083, "expected_correct": 0.068,
        "expected_incorrect": 0.242, "expected_all": 5e-17, "strict_all_yes": 0.308, "strict_all_no": 0.0,
        "unparsed_rate": 0.02, "n_contexts": 40,
        "levels": {lv: {d: {"mean": 0.6, "strict": 0.3} for d in ("correct", "incorrect", "all")}
                   for lv in LEVELS}}}}},
    "omit": {"rates": {"hf:/m": {"M0": {"n": 218, "OBR": 0.55, "OBR_low": 0.4837, "OBR_high": 0.6148,
                                        "ABR": 0.009, "FCR": 0.44, "unparsed_pairs": 0}}},
             "mcnemar": [], "conflicts": {}},
}


def _one_context(output: str, prompt_item: str = "x/1") -> pd.DataFrame:
    return pd.DataFrame([make_row(
        run_id="r", model="hf:/m", suite="framingqa", task="finance", format="binary",
        context_id="ctx-<b>bold</b>", item_id=prompt_item, bias="correct", level="root", form="plain",
        phrasing="Q1", gold="Yes", answer="Yes", parse="ok", correct=True, output=output)])


# ---------------------------------------------------------------- plain tests


def test_drilldown_caps_contexts_and_keeps_every_variant():
    records = demo_records(contexts=5, episodes=4, scenarios=3)
    groups = drilldown(records, {}, limit=3)
    titles = [g.title for g in groups]
    assert len(titles) == len(set(titles)) == 2 * (2 * 2 + 1 + 1)  # models x (tasks x formats + 2)
    finance_mc = next(g for g in groups if g.title == "openai:gpt-4.1-mini · finance · mc")
    assert finance_mc.total == 5 and finance_mc.omitted == 2
    assert [c.context_id for c in finance_mc.contexts] == ["finance-000", "finance-001", "finance-002"]
    assert all(len(c.rows) == 1 + 9 + 27 for c in finance_mc.contexts)
    binary = next(g for g in groups if g.title.endswith("law_hearsay · binary"))
    assert all(len(c.rows) == 18 + 36 for c in binary.contexts)
    episodes = next(g for g in groups if g.title.endswith("robotics · episode"))
    assert episodes.total == 4 and episodes.omitted == 1 and len(episodes.contexts[0].rows) == 7
    assert "percent_complete" in episodes.columns and "success" in episodes.columns


def test_drilldown_rows_show_record_values_in_order():
    records = demo_records(contexts=1, episodes=1, scenarios=1)
    prompts = {item: f"PROMPT for {item}" for item in records["item_id"]}
    group = next(g for g in drilldown(records, prompts) if g.title.endswith("finance · mc"))
    (context,) = group.contexts
    first = context.rows[0]
    cells = dict(zip(group.columns, (c.text for c in first.cells), strict=True))
    assert cells["bias"] == "neutral"  # neutral first, then correct, then incorrect
    assert [v.cells[group.columns.index("bias")].text for v in context.rows[1:10]] == ["correct"] * 9
    assert first.question == f"PROMPT for {cells['item_id']}"
    record = records[records["item_id"] == cells["item_id"]].iloc[0]
    assert first.output == record["output"]
    assert cells["correct"] == ("✓" if record["correct"] else "✗")
    n_correct = int(records[(records["context_id"] == "finance-000") & (records["format"] == "mc")
                            & (records["model"] == group.title.split(" · ")[0])]["correct"].sum())
    assert context.summary.startswith(f"{n_correct}/37 correct")


def test_page_is_self_contained():
    page = render_html(REPORT, demo_records(contexts=2, episodes=2, scenarios=4), {})
    assert "<script" not in page
    for marker in ("http://", "https://", "<link", "@import", "url("):
        assert marker not in page
    assert page.count('src="data:image/png;base64,') >= 3  # accuracy, levels and OBR figures


def test_untrusted_text_is_escaped_in_the_markup():
    records = _one_context(PAYLOAD, prompt_item="item-1")
    page = render_html({}, records, {"item-1": f"Question? {IMG_PAYLOAD}"})
    assert SCRIPT_PAYLOAD not in page and "<img src=x" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in page
    assert page.count("&lt;img src=x onerror=") == 2  # in the output and in the question
    assert "ctx-&lt;b&gt;bold&lt;/b&gt;" in page


# ---------------------------------------------------------------- headless chromium


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless chromium not found (Debian: apt-get install -y chromium; "
                    "or set FRAMEBENCH_CHROMIUM)")
    return binary


@pytest.mark.browser
def test_browser_harness_detects_script_execution(chromium, tmp_path):
    """Control: the same payload left unescaped does run in this browser, so the escaping test
    below can fail."""
    page = tmp_path / "unsafe.html"
    page.write_text(f"<html><head><title>{TITLE}</title></head><body>{PAYLOAD}</body></html>")
    dom = DomSummary(dump_dom(chromium, page.as_uri(), tmp_path / "profile"))
    assert dom.title == "pwned"
    assert "x" in dom.img_srcs


@pytest.mark.browser
def test_browser_renders_tables_and_runs_nothing(chromium, tmp_path):
    records = pd.concat([_one_context(PAYLOAD, prompt_item="item-1"),
                         demo_records(contexts=2, episodes=2, scenarios=3)], ignore_index=True)
    page = tmp_path / "report.html"
    page.write_text(render_html(REPORT, records, {"item-1": f"Q {SCRIPT_PAYLOAD}"}), encoding="utf-8")
    dom = DomSummary(dump_dom(chromium, page.as_uri(), tmp_path / "profile"))
    assert dom.title == TITLE
    assert "x" not in dom.img_srcs
    assert all(src.startswith("data:image/png;base64,") for src in dom.img_srcs) and dom.img_srcs
    # the tables rendered as table cells, with the report's numbers
    for cell in ("Strict correct", "27.7 (20.1, 35.0)", "<0.1", "55.0 (48.4, 61.5)", "OBR (95% CI)"):
        assert cell in dom.cells
    # the payloads are there as visible text in the drill-down cells
    text = "".join(dom.text)
    assert SCRIPT_PAYLOAD in text and IMG_PAYLOAD in text
    assert "ctx-<b>bold</b>" in text
    assert "pwned" not in dom.title


def test_render_html_from_computed_report():
    """Integration with the metric layer: a report computed from the records renders, and the
    drill-down and tables agree on the models."""
    compute = pytest.importorskip("framebench.scoring.report")
    records = demo_records(contexts=4, episodes=3, scenarios=6)
    report = compute.compute_report(records)
    page = render_html(report, records, {})
    for model in records["model"].unique():
        assert page.count(model) >= 5
    assert "cf. FramingQA Table 6" in page and "cf. OMIT Table 2" in page


def test_omit_analysis_section_is_rendered_and_escaped():
    """The OMIT analysis is ordinary tables of the OMIT suite: in the page's sections and nav,
    every cell escaped."""
    m0 = {"OBR": 0.5, "OBR_low": 0.2, "OBR_high": 0.8, "ABR": 0.25, "FCR": 0.25, "n": 4, "unparsed_pairs": 1}
    report = {"omit": {**REPORT["omit"], "analysis": {"rates_selected": {f"care {SCRIPT_PAYLOAD}": {"M0": m0}}}}}
    page = render_html(report, None, {})
    assert '<a href="#section-2">OMIT analyses</a>' in page
    section = page[page.index('<h2 id="section-2">'):]
    assert "OMIT Table 9" in section and "<td>care &lt;script&gt;" in section and "<script" not in page
    assert re.search(r'<td[^>]*class="num"[^>]*>50\.0</td>', section)
