"""A third-party plugin (tests/plugins/framebench_toy, registered by its dist-info's entry points)
adds a model engine, a planner and a suite; ``framebench text``, ``embodied`` and ``score`` use
them with no edit to framebench. The worked examples of docs/extending.md."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from framebench import records, registry
from framebench.cli import main
from framebench.items import read_items
from framebench.records import read_records
from framebench.text_eval.framingqa.answer_sheets import read_sheets
from framebench.text_eval.framingqa.domains import domains
from framebench.text_eval.omit.conditions import conditions

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
EPISODES = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "robotics" / "episodes.json.gz"
# (number, gold): "Is N even?"
PARITY = [(4, "Yes"), (7, "No"), (10, "Yes"), (3, "No")]


def forget_registries() -> None:
    registry.refresh()
    domains.cache_clear()
    conditions.cache_clear()


@pytest.fixture
def toy_plugin(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))
    importlib.invalidate_caches()
    forget_registries()
    yield
    forget_registries()


def cli(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def parity_items(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    blank = dict.fromkeys(("level", "form", "phrasing", "option", "distractor", "slot", "text"), "")
    lines = [json.dumps({**blank, "item_id": f"p{n}", "context_id": f"p{n}", "suite": "parity",
                         "task": "parity", "format": "binary", "bias": "neutral", "gold": gold,
                         "question": f"Is {n} even?", "options": []}) for n, gold in PARITY]
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_plugin_entries_are_registered_only_while_installed(toy_plugin, monkeypatch):
    assert registry.engines()["keyword"].kind == "model"
    assert registry.engines()["firstplan"].kind == "planner"
    assert registry.suite("parity").items.tasks == ("parity",)
    assert list(domains())[-1] == "toy_weather"
    assert "stars_off" in records.registered_schema().columns  # the rating suite's own column joins the records contract
    monkeypatch.undo()
    for _ in range(5):  # each reload builds the contract anew (a reused object id must not revive it)
        forget_registries()
        assert "keyword" not in registry.engines() and "parity" not in registry.suites()
        assert "toy_weather" not in domains()
        assert "stars_off" not in records.registered_schema().columns and "rating" not in records.known_suites()


def test_toy_engine_and_suite_through_text_and_score(toy_plugin, tmp_path, capsys):
    data = parity_items(tmp_path / "items")
    assert cli(["text", "--model", "keyword:4", "--data", str(data), "--out", str(tmp_path / "run"),
                "--quiet"]) == 0
    df = read_records(tmp_path / "run")
    # keyword:4 says Yes only to "Is 4 even?": right on 4, 7 and 3, wrong on 10
    assert dict(zip(df.item_id, df.answer, strict=True)) == {"p4": "Yes", "p7": "No", "p10": "No", "p3": "No"}
    assert df.correct.tolist() == [True, True, False, True]
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["model_info"] == {"word": "4"} and info["decoding"]["parity"]["max_new_tokens"] == 2

    assert cli(["score", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report.pop("meta")["runs"][0]["models"] == ["keyword:4"]  # provenance names the plugin's model
    assert report == {"parity": {"keyword:4": {"n": 4, "accuracy": 0.75}}}
    assert "| keyword:4 | 4 | 75.0 |" in (tmp_path / "report" / "report.md").read_text()
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Parity accuracy" in html and "Is 10 even?" in html  # table and drill-down


def test_model_args_are_typed_and_checked(toy_plugin, tmp_path, capsys):
    data = parity_items(tmp_path / "items")
    assert cli(["text", "--model", "keyword:4", "--model-arg", "shout=true", "--data", str(data),
                "--out", str(tmp_path / "loud"), "--quiet"]) == 0
    df = read_records(tmp_path / "loud")
    assert df.output.tolist() == ["YES", "NO", "NO", "NO"] and set(df.parse) == {"unparsed"}
    capsys.readouterr()
    for arg, message in (("volume=3", "engine 'keyword' has no option 'volume' (its options: shout)"),
                         ("shout=maybe", "model option 'shout' of engine 'keyword': expected bool"),
                         ("shout", "--model-arg: expected key=value")):
        assert cli(["text", "--model", "keyword:4", "-M", arg, "--data", str(data),
                    "--out", str(tmp_path / "bad"), "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "bad" / "records.parquet").exists()


def test_toy_planner_through_embodied(toy_plugin, tmp_path):
    assert cli(["embodied", "--planner", "firstplan", "--episodes", str(EPISODES), "--limit", "1",
                "--out", str(tmp_path / "run")]) == 0
    df = read_records(tmp_path / "run")
    assert len(df) == 7 and set(df.model) == {"firstplan"}
    # Navigate, then Done: two decisions (replans are for LLM planners: null), nothing placed
    assert df.replans.isna().all() and set(df.percent_complete) == {0.0} and not df.success.any()
    logs = [json.loads(p.read_text()) for p in (tmp_path / "run" / "episodes").glob("*.json")]
    assert len(logs) == 7 and all(len(log["steps"]) == 2 for log in logs)


@pytest.mark.subprocess
def test_plugin_found_by_a_fresh_interpreter(toy_plugin, tmp_path):
    """The entry points come from the dist-info on the path, as for an installed package."""
    data = parity_items(tmp_path / "items")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "framebench", "text", "--model", "keyword:7",
                           "--data", str(data), "--out", str(tmp_path / "run"), "--quiet"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "4 records (4 generated" in proc.stdout
    assert read_records(tmp_path / "run").answer.tolist() == ["No", "Yes", "No", "No"]


WEATHER = [("1", "Rain", "The streets were wet after the morning showers. Everyone carried an umbrella "
            "to the station. Puddles formed along the road and the gutters overflowed."),
           ("2", "Snow", "Snowfall closed the mountain pass overnight. Drivers scraped ice from their "
            "windshields. The town sent shovels and trucks to clear the frozen roads."),
           ("3", "Heat", "The hot sun baked the fields for a week. Farmers worried about the drought "
            "and people sweated in the streets. Strong gusts later tore branches from trees.")]


def test_toy_framingqa_domain_is_one_file_and_one_line(toy_plugin, tmp_path):
    """framebench_toy/domain.py plus its entry-point line: built into Table 7 items, run, scored."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "toy_weather.tsv").write_text("".join("\t".join(row) + "\n" for row in WEATHER) + "4\tFog\tGrey.\n")
    assert cli(["build", "framingqa", "--source", str(src), "--tasks", "toy_weather",
                "--out", str(tmp_path / "nope")]) == 2  # no reviewed decisions for a new domain
    assert cli(["build", "framingqa", "--source", str(src), "--tasks", "toy_weather", "--unreviewed",
                "--out", str(tmp_path / "built")]) == 0
    items = read_items(tmp_path / "built")
    sheets = {s.context_id: s for s in read_sheets(tmp_path / "built" / "answer_sheets.jsonl")}
    assert sorted(sheets) == ["wx-1", "wx-2", "wx-3"]
    for cid, sheet in sheets.items():
        mine = [it for it in items if it["context_id"] == cid]
        e = len(sheet.evidence)
        # FramingQA Table 1: 54 + 2E binary and 28 + E multiple-choice items per context
        assert sum(it["format"] == "binary" for it in mine) == 54 + 2 * e
        assert sum(it["format"] == "mc" for it in mine) == 28 + e
        neutral = next(it for it in mine if it["format"] == "mc" and it["bias"] == "neutral")
        assert neutral["question"].startswith("Which weather does this report describe")
        assert sorted(neutral["options"]) == ["Heat", "Rain", "Snow", "Wind"]  # in the order the id fixes
        assert neutral["options"]["ABCD".index(neutral["gold"])] == sheet.gold
    assert "toy_weather.tsv line 4" in (tmp_path / "built" / "build_report.md").read_text()  # dropped, listed

    assert cli(["text", "--model", "baseline:always-yes", "--data", str(tmp_path / "built"),
                "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert cli(["score", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    binary = report["framingqa"]["baseline:always-yes"]["toy_weather"]["binary"]
    rows = read_records(tmp_path / "run").query("format == 'binary'")
    assert (rows.correct == (rows.gold == "Yes")).all()  # always-yes: right exactly on gold Yes
    per_context = rows.groupby("context_id").correct.mean().mean()  # the "mean" metric's definition
    assert binary["n_contexts"] == 3 and binary["mean"] == pytest.approx(per_context)


def test_toy_omit_intervention(toy_plugin, tmp_path):
    """keyword:Picture says Yes only where M7's instruction is in the prompt: every M0 pair is
    (No, No), every M7 pair (Yes, Yes)."""
    omit = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "omit"
    assert cli(["text", "--model", "keyword:Picture", "--data", str(omit), "--conditions", "M0,M7",
                "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert cli(["score", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0
    omit_report = json.loads((tmp_path / "report" / "report.json").read_text())["omit"]
    rates = omit_report["rates"]["keyword:Picture"]
    n_scenarios = len({it["context_id"] for it in read_items(omit) if it["conflicts"]})  # the selected ones
    assert (rates["M0"]["n"], rates["M0"]["OBR"], rates["M0"]["ABR"]) == (n_scenarios, 1.0, 0.0)
    assert (rates["M7"]["n"], rates["M7"]["OBR"], rates["M7"]["ABR"]) == (n_scenarios, 0.0, 1.0)
    # McNemar M0 vs M7: every scenario leaves (N,N), none enters it: P(X >= n) = 0.5 ** n
    (test,) = omit_report["mcnemar"]
    assert (test["condition"], test["b"], test["c"]) == ("M7", n_scenarios, 0)
    assert test["p"] == pytest.approx(0.5 ** n_scenarios)



def test_omit_conditions_group_keeps_its_first_name(monkeypatch):
    """A package that registered its condition under ``framebench.omit_interventions`` (the
    group's first name) still has it in ``conditions()``."""
    from types import SimpleNamespace

    from framebench.text_eval.omit import conditions as omit_conditions

    m8 = omit_conditions.Condition("M8", "Think twice.", 8, False, summary="test condition")
    legacy = SimpleNamespace(name="M8", load=lambda: m8)
    monkeypatch.setattr(omit_conditions, "entry_points",
                        lambda group: [legacy] if group == omit_conditions.LEGACY_GROUP else [])
    omit_conditions.conditions.cache_clear()
    try:
        found = omit_conditions.conditions()
        assert found["M8"] is m8 and list(found) == ["M0", "M1", "M2", "M3", "M4", "M8"]
    finally:
        omit_conditions.conditions.cache_clear()


# (review, gold stars): count:★ answers the stars the review shows
REVIEWS = [("★★★★ solid", "4"), ("★★ meh", "4"), ("★★★ fine", "4"), ("★★★★★ love it", "5"), ("no stars", "1")]


def rating_items(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"item_id": f"r{k}", "context_id": f"r{k}", "suite": "rating", "task": "reviews",
                         "format": "stars", "gold": gold, "question": f"How many stars? {text}"})
             for k, (text, gold) in enumerate(REVIEWS)]
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_a_suite_with_its_own_answer_format_through_every_output(toy_plugin, tmp_path, capsys):
    """A 1-5 star rating with a numeric gold, right within one star, and a column of its own:
    registered through entry points only, it runs, validates, scores and shows everywhere."""
    from framebench.viewer.app import create_app
    from framebench.viewer.data import load_run_data

    run, report_dir = tmp_path / "run", tmp_path / "report"
    assert cli(["text", "--model", "count:★", "--data", str(rating_items(tmp_path / "items")),
                "--out", str(run), "--quiet"]) == 0
    shown = capsys.readouterr().out
    assert "summary: Star ratings" in shown and "count:★" in shown
    df = read_records(run)  # validated against the merged contract
    # answers 4, 2, 3, 5, 0 -> off by 0, 2, 1, 0; "0" is no rating (unparsed)
    assert df.answer.tolist() == ["4", "2", "3", "5", ""] and df.format.unique().tolist() == ["stars"]
    assert df.stars_off.tolist()[:4] == [0, 2, 1, 0] and pd.isna(df.stars_off.iloc[4])
    assert df.correct.tolist() == [True, False, True, True, False]

    assert cli(["score", str(run), "--out", str(report_dir)]) == 0
    assert "summary: Star ratings" in capsys.readouterr().out
    report = json.loads((report_dir / "report.json").read_text())
    assert report["rating"] == {"count:★": {"n": 5, "within_one": 0.6, "mean_off": 0.75}}
    assert "| count:★ | 5 | 60.0 | 0.75 |" in (report_dir / "report.md").read_text()
    html = (report_dir / "report.html").read_text()
    assert "Star ratings" in html and "4/5 rated, off by 3 star(s)" not in html  # one line per context
    assert "1/1 rated, off by 2 star(s)" in html and "How many stars? ★★ meh" in html

    client = create_app(load_run_data([run])).test_client()
    page = client.get("/?suite=rating").get_data(as_text=True)
    assert "r1" in page and "How many stars? ★★ meh" in page
    context = client.get("/context?suite=rating&id=r1").get_data(as_text=True)
    assert "★★ meh" in context and "0/1 correct" not in context  # the suite's own summary, not FramingQA's
    assert "Star ratings" in client.get("/report").get_data(as_text=True)


def test_the_contract_rejects_what_the_suite_declares_wrong(toy_plugin, tmp_path):
    from framebench.records import RecordsError, make_row, validate_frame

    row = dict(run_id="r", model="m", suite="rating", task="reviews", format="stars", context_id="c",
               item_id="i", bias="neutral", gold="4", answer="3", correct=True, stars_off=1)
    validate_frame(pd.DataFrame([make_row(**row)]), "x")
    for change, message in [({"answer": "7"}, "column 'answer' must be one of 1, 2, 3, 4, 5 for stars rows"),
                            ({"format": "binary"}, "column 'format' does not fit the row's suite"),
                            ({"correct": False}, "column 'correct' must say whether stars_off <= 1")]:
        with pytest.raises(RecordsError, match=message):
            validate_frame(pd.DataFrame([make_row(**{**row, **change})]), "x")
    parity = {**row, "suite": "parity", "task": "parity", "format": "binary", "gold": "Yes", "answer": "Yes",
              "stars_off": None}
    validate_frame(pd.DataFrame([make_row(**parity)]), "x")
    with pytest.raises(RecordsError, match="column 'frame' is omit's: other suites' rows leave it ''"):
        validate_frame(pd.DataFrame([make_row(**parity, frame="action")]), "x")


def test_a_third_party_suite_alone_has_the_core_and_its_own_columns(toy_plugin, tmp_path):
    """Schema 3: the core is what every suite has; the star-rating plugin's contract is the core
    columns, its ``stars_off`` and the answer-mode columns, with no FramingQA, OMIT or embodied
    column, and its rows validate and read back through it."""
    rating = registry.suite("rating")
    schema = records.build_schema({"rating": (rating.items.task_names(), rating.items.records)})
    assert list(schema.columns) == [*records.CORE_COLUMNS, "stars_off", *records.TRAILING_COLUMNS]
    row = {c: schema.defaults.get(c) for c in schema.columns} | dict(
        run_id="r", model="m", suite="rating", task="reviews", format="stars", context_id="c", item_id="c:1",
        bias="neutral", gold="4", answer="5", correct=True, stars_off=1)
    path = records.write_records([row], tmp_path, schema=schema)
    assert records.read_records(path, schema=schema)["stars_off"].tolist() == [1]

