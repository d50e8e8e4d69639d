"""The report's provenance block (report.json ``meta``, the end of report.md and report.html) and the
OMIT persona panel labelled as the dataset's, not counted as models."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from text_helpers import cli_exit_code, framingqa_items, write_items

from framebench.records import read_records

REPO = Path(__file__).resolve().parents[2]
EPISODES = REPO / "datasets" / "demo" / "robotics" / "episodes.json.gz"
PERSONAS = REPO / "datasets" / "demo" / "omit" / "personas"


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prov")
    data = write_items(tmp / "data", framingqa_items(3, 4))
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data), "--out", str(tmp / "text"),
                "--quiet") == 0
    assert cli_exit_code("embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--out", str(tmp / "emb"),
                "--limit", "1") == 0
    assert cli_exit_code("text", "--model", "baseline:always-no", "--data", str(REPO / "datasets/demo/omit"),
                "--out", str(tmp / "omit"), "--conditions", "M0,M1", "--quiet") == 0
    runs = [tmp / "text", tmp / "emb", tmp / "omit", PERSONAS]
    assert cli_exit_code("score", *map(str, runs), "--out", str(tmp / "report")) == 0
    return tmp, runs, data


def test_report_json_meta_names_what_was_scored(scored):
    tmp, runs, data = scored
    meta = json.loads((tmp / "report" / "report.json").read_text())["meta"]
    assert meta["schema_version"] == 1 and meta["framebench_version"] == "0.1.0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", meta["generated"])
    assert meta["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", meta["git_commit"])
    run_ids = set()
    for run in runs:
        run_ids |= set(read_records(run)["run_id"])
    assert set(meta["run_ids"]) == run_ids and len(run_ids) == 4
    assert [r["run_dir"] for r in meta["runs"]] == [str(r) for r in runs[:3]] + ["datasets/demo/omit/personas"]
    assert meta["model_fingerprints"]["baseline:always-yes"] == "baseline:always-yes:v2"
    assert meta["model_fingerprints"]["oracle"] == "oracle-v1"
    items_sha = hashlib.sha256((data / "items.jsonl").read_bytes()).hexdigest()
    assert items_sha in meta["dataset_hashes"]
    assert hashlib.sha256(EPISODES.read_bytes()).hexdigest() in meta["dataset_hashes"]
    text, emb, omit, panel = meta["runs"]
    assert text["decoding"]["binary"]["max_new_tokens"] == 8 and text["n_records"] == 12
    assert omit["decoding"]["omit_M1"]["max_new_tokens"] == 160
    assert emb["decoding"]["replan_cap"] == 25 and "scripted planner" in emb["answer_mode"]
    assert "baseline" in text["answer_mode"] and "persona panel" in panel["answer_mode"]
    assert all(r["started"] and r["finished"] and r["code_version"].startswith("0.1.0") for r in meta["runs"][:3])
    assert panel["code_version"].startswith("authored (hand-written persona answers")  # not a git state


def test_markdown_and_html_end_with_the_provenance(scored):
    tmp, runs, _ = scored
    md = (tmp / "report" / "report.md").read_text()
    head, tail = md.split("\n## Provenance\n", 1)
    assert "\n## " not in tail  # the last section
    assert "_Generated " in tail and "report schema version 1" in tail
    assert "### Provenance: scored run folders" in tail and "report schema version" not in head
    for run in runs[:3]:  # outside the working directory and the project: as given
        assert str(run) in tail
    assert "| datasets/demo/omit/personas |" in tail and str(REPO) not in md  # the project's own folder
    html = (tmp / "report" / "report.html").read_text()
    assert html.index('id="drilldown"') < html.index('class="provenance"')  # after everything else
    finding = re.search(r'<h2 id="section-\d+">Finding</h2>', html)
    assert finding and finding.start() < html.index('class="provenance"')
    # the embodied run's --limit is in its identity: it is marked as a smoke test, as a text run's is
    assert re.search(r"emb</code> was run with --limit 1|emb was run with --limit 1", html)
    assert "report schema version 1" in html and "baseline:always-yes:v2" in html


def test_persona_panel_is_labelled_and_not_counted_as_models(scored):
    tmp, _, _ = scored
    html = (tmp / "report" / "report.html").read_text()
    meta_line = re.search(r'<p class="meta">(.*?)</p>', html, re.S).group(1)
    # three models were run (two baselines and the oracle); the five personas are the dataset's panel
    assert "3 model(s): baseline:always-no, baseline:always-yes, oracle" in meta_line
    assert "persona panel (5 personas: " in meta_line and "not models" in meta_line


def test_persona_drilldown_groups_are_labelled_as_the_panel(scored):
    tmp, _, _ = scored
    html = (tmp / "report" / "report.html").read_text()
    titles = re.findall(r"<summary>(persona:[^<]*?) &mdash;", html)
    assert len(titles) == 5
    assert all("persona panel, not a model" in t for t in titles)
