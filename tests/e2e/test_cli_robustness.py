"""Crashes and lost work, and the security items of issue 16: each ends in one line (exit 2) or
a correct report, never a traceback, a half-written output or a file outside the run folder."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pandas as pd
import pytest
from text_helpers import cli_run as cli

from framebench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
EPISODES = DEMO / "robotics" / "episodes.json.gz"


def one_error_line(code: int, err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (code, err)
    return lines[0]


def omit_run(tmp_path: Path, kind: str, name: str | None = None) -> Path:
    out = tmp_path / (name or kind)
    code, _, err = cli("text", "--data", str(DEMO / "omit"), "--model", f"baseline:{kind}", "--out", str(out),
                       "--quiet")
    assert code == 0, err
    return out


# ---------- crashes and lost work ----------

def test_constant_baselines_score_without_crashing(tmp_path):
    """always-no and always-yes OMIT runs: the random-baseline figure's bootstrap intervals sit a
    rounding error inside the estimate (0.9999999999999999 < 1.0); error bars must clamp at 0."""
    runs = [omit_run(tmp_path, "always-no"), omit_run(tmp_path, "always-yes")]
    code, _, err = cli("score", *map(str, runs), "--out", str(tmp_path / "report"))
    assert code == 0, err
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    rates = report["omit"]["rates"]
    assert rates["baseline:always-no"]["M0"]["OBR"] == 1.0 and rates["baseline:always-yes"]["M0"]["ABR"] == 1.0
    assert (tmp_path / "report" / "report.html").stat().st_size > 0


def test_bar_error_is_never_negative():
    from framebench.text_eval.omit.analysis_report import _bar_error

    assert _bar_error(1.0, 0.9999999999999999, below=False) == 0.0
    assert _bar_error(0.0, 1e-17, below=True) == 0.0
    assert _bar_error(0.5, 0.25, below=True) == 0.25 and _bar_error(0.5, None, below=True) == 0.0


@pytest.mark.parametrize("argv", [
    ["text", "--data", str(DEMO / "omit"), "--model", "baseline:always-yes"],
    ["embodied", "--planner", "oracle", "--episodes", str(EPISODES)],
    ["build", "robotics", "--n", "2"],
    ["demo"],
    ["score", str(DEMO / "omit" / "personas")],
    ["build", "framingqa", "--source", str(DEMO / "framingqa" / "source")],
    ["build", "omit", "--source", str(DEMO / "omit")],
    ["partnr", "ingest", ".", "--episodes", str(EPISODES)],
])
def test_out_naming_a_file_is_one_line_before_any_work(argv, tmp_path, monkeypatch):
    import framebench.backends
    import framebench.embodied.generator

    def forbidden(*_a, **_k):
        raise AssertionError("work started before --out was checked")

    monkeypatch.setattr(framebench.backends, "load_backend", forbidden)
    monkeypatch.setattr(framebench.embodied.generator, "generate", forbidden)
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    for out in (blocker, blocker / "sub"):
        code, _, err = cli(*argv, "--out", str(out))
        assert "is not a folder" in one_error_line(code, err)
    assert blocker.read_text() == "a file"


def test_invalid_utf8_items_and_seed_and_nul_seed(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    good = (DEMO / "framingqa" / "items.jsonl").read_bytes().split(b"\n")[:3]
    (data / "items.jsonl").write_bytes(good[0] + b"\n" + good[1][:50] + b"\xff\xfe" + good[1][50:] + b"\n")
    code, _, err = cli("text", "--data", str(data), "--model", "baseline:always-yes", "--out", str(tmp_path / "o"))
    line = one_error_line(code, err)
    assert "items.jsonl: line 2: not valid UTF-8" in line and not (tmp_path / "o").exists()

    seed_dir = tmp_path / "mc" / "scenarios"
    seed_dir.mkdir(parents=True)
    header = "scenario_id,ambiguity,generation_rule,context,action1,action2\n"
    seed = seed_dir / "moralchoice_high_ambiguity.csv"
    for body, expected in ((b"H_1,high,r,A context\xe9,a1,a2\n", "line 2: not valid UTF-8"),
                           (b"H_1,high,r,A con\x00text,a1,a2\n", "line 2: contains a NUL byte")):
        seed.write_bytes(header.encode() + body)
        code, _, err = cli("build", "omit", "--source", str(tmp_path / "mc"), "--model", "baseline:always-yes",
                           "--out", str(tmp_path / "omit-out"))
        assert expected in one_error_line(code, err)
        assert not (tmp_path / "omit-out").exists()


@pytest.mark.parametrize("suite, field, value", [
    ("framingqa", "phrasing", "Q9"), ("framingqa", "form", "sideways"), ("framingqa", "level", "deep"),
    ("framingqa", "bias", "slanted"), ("framingqa", "format", "essay"), ("framingqa", "task", "astrology"),
    ("framingqa", "suite", "nosuch"), ("omit", "frame", "inaction"), ("omit", "format", "mc"),
])
def test_bad_item_values_are_refused_where_items_are_read(tmp_path, suite, field, value):
    """Issue 40.6: every item field is checked when ``text`` reads the items, before any model
    runs: one line naming the items file, the line and the item's own field; no store left."""
    data = tmp_path / "data"
    data.mkdir()
    folder = "framingqa" if suite == "framingqa" else "omit"
    lines = (DEMO / folder / "items.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    lines[1] = json.dumps({**json.loads(lines[1]), field: value})
    (data / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    code, _, err = cli("text", "--data", str(data), "--model", "baseline:always-yes", "--out", str(out), "--quiet")
    line = one_error_line(code, err)
    assert f"{data / 'items.jsonl'}: line 2: " in line and f"field '{field}'" in line and repr(value) in line, line
    assert "<records>" not in line and not out.exists()


def test_out_reuse_for_another_run_is_refused_unless_forced(tmp_path):
    out = omit_run(tmp_path, "always-yes", "run")
    before = pd.read_parquet(out / "records.parquet")
    code, _, err = cli("text", "--data", str(DEMO / "omit"), "--model", "baseline:always-no", "--out", str(out),
                       "--quiet")
    line = one_error_line(code, err)
    assert "holds another run" in line and "--force" in line
    assert pd.read_parquet(out / "records.parquet").equals(before)  # untouched
    code, _, err = cli("text", "--data", str(DEMO / "framingqa"), "--model", "baseline:always-yes",
                       "--out", str(out), "--quiet", "--limit", "4")
    assert "holds another run" in one_error_line(code, err)
    code, _, err = cli("text", "--data", str(DEMO / "omit"), "--model", "baseline:always-no", "--out", str(out),
                       "--quiet", "--force")
    assert code == 0, err
    replaced = pd.read_parquet(out / "records.parquet")
    assert set(replaced["model"]) == {"baseline:always-no"}
    info = json.loads((out / "run.json").read_text())
    assert len(info["history"]) == 1 and info["identity"]["model"] == "baseline:always-no"


def test_embodied_out_reuse_is_refused(tmp_path):
    out = tmp_path / "emb"
    args = ["embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--out", str(out)]
    assert cli(*args, "--limit", "1")[0] == 0
    code, _, err = cli(*args, "--limit", "2")
    assert "holds another run" in one_error_line(code, err)


def test_habitat_out_reuse_is_refused_unless_forced(tmp_path, monkeypatch):
    """``embodied --simulator habitat`` into a folder holding another run is refused before any
    launcher is looked for or anything is written, as text and symbolic runs are; --force goes on
    (here to the missing launcher: no Docker, no habitat_llm)."""
    from framebench.partnr_adapters import habitat_simulator

    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(habitat_simulator.shutil, "which", lambda name: None)
    monkeypatch.delenv("FRAMEBENCH_HABITAT_PYTHON", raising=False)
    out = tmp_path / "emb"
    assert cli("embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--out", str(out), "--limit", "1")[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    args = ["embodied", "--simulator", "habitat", "--planner", "openai:m", "--episodes", str(EPISODES), "--out", str(out)]
    code, _, err = cli(*args)
    line = one_error_line(code, err)
    assert "holds another run (" in line and "model 'oracle' -> 'openai:m'" in line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # nothing written
    code, _, err = cli(*args, "--force")
    assert "Docker" in one_error_line(code, err)


def test_run_json_keeps_first_timing_and_a_history(tmp_path):
    out = omit_run(tmp_path, "always-yes", "run")
    first = json.loads((out / "run.json").read_text())
    first["started"] = "2000-01-01T00:00:00+00:00"  # mark the first invocation's timing
    first["history"][0]["started"] = first["started"]
    (out / "run.json").write_text(json.dumps(first))
    omit_run(tmp_path, "always-yes", "run")
    again = json.loads((out / "run.json").read_text())
    assert again["run_id"] == first["run_id"]
    assert again["started"] == "2000-01-01T00:00:00+00:00" and again["host"] == socket.gethostname()
    assert [h["started"] for h in again["history"]][0] == "2000-01-01T00:00:00+00:00"
    assert len(again["history"]) == 2
    n_items = len((DEMO / "omit" / "items.jsonl").read_text().splitlines())  # one job per item at M0
    assert again["history"][0]["n_generated"] == n_items and again["history"][1]["n_generated"] == 0
    assert again["history"][1]["n_from_store"] == n_items


# ---------- security ----------

@pytest.mark.parametrize("bad", ["../x", "/tmp/abs", "a/b", "..", ".hidden", "a\\b", "a\x00b", ""])
def test_ids_never_become_paths_unchecked(bad, tmp_path):
    from framebench.paths import check_safe_name, child_path

    with pytest.raises(UserError):
        check_safe_name(bad, "where")
    with pytest.raises(UserError):
        child_path(tmp_path, bad, ".json")
    assert child_path(tmp_path, "robo_0__correct_root", ".json") == tmp_path / "robo_0__correct_root.json"


def test_embodied_episode_id_escaping_the_run_folder_is_rejected(tmp_path):
    import gzip

    data = json.loads(gzip.decompress(EPISODES.read_bytes()))
    data["episodes"] = [{**data["episodes"][0], "episode_id": "../../escaped"}]
    path = tmp_path / "eps.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    code, _, err = cli("embodied", "--planner", "oracle", "--episodes", str(path), "--out", str(tmp_path / "r" / "o"))
    assert "cannot name a file" in one_error_line(code, err)
    assert not any(tmp_path.rglob("escaped*")) and not (tmp_path / "r").exists()


def test_partnr_ingest_does_not_follow_ids_out_of_the_results_tree(tmp_path):
    import gzip

    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"success": True, "stats": json.dumps({"task_percent_complete": 1.0})}))
    framed = tmp_path / "framed.json.gz"
    framed.write_bytes(gzip.compress(json.dumps({"episodes": [
        {"episode_id": "../../secret__neutral", "instruction": "x", "info": {}}]}).encode()))
    (tmp_path / "results" / "stats").mkdir(parents=True)
    code, _, err = cli("partnr", "ingest", str(tmp_path / "results"), "--episodes", str(framed),
                       "--out", str(tmp_path / "out"))
    assert "cannot name a file" in one_error_line(code, err) and not (tmp_path / "out").exists()


def _records(model: str, output: str) -> pd.DataFrame:
    from framebench import records as rec

    rows = []
    for scenario in ("s1", "s2"):
        for frame, answer in (("action", "No"), ("omission", "No")):
            rows.append(rec.make_row(run_id="r", model=model, suite="omit", task="omit", format="binary",
                                     context_id=scenario, item_id=f"{scenario}:{frame}@M0", bias="neutral",
                                     answer=answer, output=output, frame=frame, condition="M0"))
    rows.append(rec.make_row(run_id="r", model=model, suite="framingqa", task="finance", format="binary",
                             context_id="c1", item_id="c1:1", bias="correct", level="root", form="plain",
                             phrasing="Q1", gold="Yes", answer="Yes", correct=True, output=output))
    return pd.DataFrame(rows)


def test_hostile_model_names_and_outputs_in_the_report(tmp_path):
    """mathtext in a model name, markdown links, pipes, CR and <script> in names and outputs."""
    from framebench.records import write_records

    names = ["$\\undefinedmathcmd$", "[click](javascript:alert(1))", "a|b\r<script>alert(1)</script>"]
    runs = []
    for i, name in enumerate(names):
        run = tmp_path / f"run{i}"
        write_records(_records(name, "[evil](http://evil.example) <script>alert(2)</script>"), run)
        runs.append(str(run))
    personas = tmp_path / "personas"
    shutil.copytree(DEMO / "omit" / "personas", personas)
    code, _, err = cli("score", *runs, str(personas), "--out", str(tmp_path / "report"))
    assert code == 0, err
    md = (tmp_path / "report" / "report.md").read_text()
    html = (tmp_path / "report" / "report.html").read_text()
    assert "OMIT analyses" in md and "OMIT analyses" in html
    assert "<script>" not in md and "<script>alert" not in html
    assert "](javascript:" not in md.replace("\\](javascript:", "")
    assert 'href="javascript' not in html and 'href="http://evil' not in html
    assert "\r" not in md
    lines = md.splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("| ") and "a\\|b" in line]
    assert rows
    for i in rows:  # the escaped pipe keeps the row's column count equal to its table header's
        header = max(j for j in range(i) if lines[j].startswith("| ") and lines[j + 1].startswith("|--")
                     or lines[j].startswith("| ") and lines[j + 1].startswith("| ---"))
        assert _columns(lines[i]) == _columns(lines[header])


def _columns(line: str) -> int:
    import re

    return len(re.findall(r"(?<!\\)\|", line))


def test_omit_analysis_section_renders_no_live_links(tmp_path):
    from framebench.scoring.html import render_html

    text_report = {"omit": {"analysis": {"rates_selected": {"[x](http://evil.example)": {"M0": {
        "OBR": 0.5, "OBR_low": 0.1, "OBR_high": 0.9, "ABR": 0.25, "FCR": 0.25, "n": 4, "unparsed_pairs": 0}}}}}}
    html = render_html(text_report, None, {})
    section = html[html.index(">OMIT analyses</h2>"):]  # an ordinary table of the OMIT suite
    assert "<a " not in section and "[x](http://evil.example)" in section


def test_markdown_cell_escapes():
    from framebench.scoring.markdown import _md_cell

    assert _md_cell("a|b\r\nc") == "a\\|b  c"
    assert _md_cell("<script>") == "&lt;script&gt;"
    assert _md_cell("[x](y)") == "\\[x\\](y)"


def test_url_credentials_are_redacted_from_run_json(tmp_path, monkeypatch, httpserver):
    from framebench.backends.openai_api import OpenAIBackend, redact_url

    assert redact_url("https://user:sk-SECRET@host.example:8443/v1?api_key=K2&x=1") == \
        "https://***@host.example:8443/v1?api_key=***&x=1"
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        {"id": "1", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "No"}}]})
    url = httpserver.url_for("/v1").replace("http://", "http://user:sk-SECRETKEY@")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = OpenAIBackend("m")
    assert "SECRETKEY" not in backend.fingerprint() and "SECRETKEY" not in json.dumps(backend.info())
    code, _, err = cli("text", "--data", str(DEMO / "omit"), "--model", "openai:m", "--out", str(tmp_path / "o"),
                       "--quiet", "--limit", "2")
    assert code == 0, err
    for path in (tmp_path / "o").iterdir():
        assert b"SECRETKEY" not in path.read_bytes(), path


def test_server_that_stays_down_is_one_line(tmp_path, monkeypatch, caplog):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("FRAMEBENCH_OPENAI_MAX_RETRIES", "2")
    monkeypatch.setenv("FRAMEBENCH_OPENAI_BACKOFF", "0.01")
    code, _, err = cli("text", "--data", str(DEMO / "omit"), "--model", "openai:m", "--base-url",
                       f"http://127.0.0.1:{port}/v1", "--out", str(tmp_path / "o"), "--quiet", "--limit", "1")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert "failed request 0 3 times" in errors[0] and "is it running?" in errors[0]
    assert len([r for r in caplog.records if r.getMessage().startswith("retry ")]) == 2  # budget from env
