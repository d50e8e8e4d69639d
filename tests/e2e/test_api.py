"""framebench.api: the README's Python example runs as written; the API and the CLI write the same
run folders and reports; every producer's run id is deterministic; the simulator flag rename."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from test_plugins import cli

from framebench import api
from framebench.errors import UserError
from framebench.records import read_records

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
EPISODES = DEMO / "robotics" / "episodes.json.gz"


@pytest.mark.slow  # runs and scores the three demo suites
def test_readme_python_example_runs(tmp_path, monkeypatch):
    readme = (REPO / "README.md").read_text()
    (code,) = re.findall(r"## Python API.*?```python\n(.*?)```", readme, flags=re.S)
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102  (the project's own README)
    report = json.loads((tmp_path / "runs" / "api-report" / "report.json").read_text())
    assert set(report) == {"meta", "cautions", "finding", "headline", "framingqa", "systematicity", "omit", "embodied"}
    (caution,) = report["cautions"]["lines"]  # the oracle ran 2 of the 4 episodes (--limit 2)
    assert caution.startswith("runs/api-oracle was run with --limit 2: a smoke test")
    mean = report["framingqa"]["baseline:always-yes"]["all"]["binary"]["mean"]
    assert printed.getvalue().strip() == str(mean)
    # always-yes is right exactly on the gold-Yes binary items
    df = read_records(tmp_path / "runs" / "api-yes")
    binary = df[df.format == "binary"]
    assert (binary.correct == (binary.gold == "Yes")).all()
    assert report["embodied"]["oracle"]["overall"]["completion_strict_all"] == 1.0
    omit = read_records(tmp_path / "runs" / "api-omit")
    assert set(omit.condition) == {"M0", "M1"}


def test_api_and_cli_write_the_same_records_and_report(tmp_path):
    data = DEMO / "framingqa"
    api.run_text("baseline:random", data, tmp_path / "api", tasks="finance", model_args={"seed": 3})
    assert cli(["text", "--model", "baseline:random", "-M", "seed=3", "--tasks", "finance", "--data",
                str(data), "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    a, c = read_records(tmp_path / "api"), read_records(tmp_path / "cli")
    assert a.equals(c) and a.run_id.nunique() == 1  # same run id: deterministic, not per call
    # the seed is an engine option, so it changes the fingerprint and the run id
    api.run_text("baseline:random", data, tmp_path / "seed4", tasks="finance", model_args={"seed": 4})
    assert read_records(tmp_path / "seed4").run_id[0] != a.run_id[0]

    api.write_report(api.score([tmp_path / "api"]), tmp_path / "report-api")
    assert cli(["score", str(tmp_path / "cli"), "--out", str(tmp_path / "report-cli")]) == 0
    reports = [json.loads((tmp_path / d / "report.json").read_text()) for d in ("report-api", "report-cli")]
    metas = [r.pop("meta") for r in reports]
    assert reports[0] == reports[1] and reports[0]["framingqa"]["baseline:random"]["finance"]
    assert [m["runs"][0]["run_ids"] for m in metas] == [[a.run_id[0]]] * 2


def test_embodied_run_id_is_deterministic(tmp_path):
    first = api.run_embodied("oracle", EPISODES, tmp_path / "a", limit=1)
    second = api.run_embodied("oracle", EPISODES, tmp_path / "b", limit=1)
    ids = {read_records(first).run_id[0], read_records(second).run_id[0]}
    assert len(ids) == 1 and ids.pop().startswith("oracle-")
    info = json.loads((first / "run.json").read_text())
    assert (info["producer"], info["simulator"]) == ("embodied", "symbolic")
    assert set(read_records(first).slot) == {"neutral", "correct/root", "correct/propositional",
                                             "correct/global", "incorrect/root",
                                             "incorrect/propositional", "incorrect/global"}


def test_simulator_flag(tmp_path, capsys):
    args = ["embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--limit", "1"]
    assert cli([*args, "--simulator", "symbolic", "--out", str(tmp_path / "new")]) == 0
    capsys.readouterr()
    assert cli([*args, "--simulator", "mujoco", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown simulator spec 'mujoco': use habitat, symbolic" in err[0]
    assert cli([*args, "--backend", "symbolic", "--out", str(tmp_path / "old")]) == 2  # the old name is gone


def test_write_report_refuses_a_file_as_folder(tmp_path):
    api.run_text("baseline:always-no", DEMO / "framingqa", tmp_path / "run", limit=3)
    target = tmp_path / "taken"
    target.write_text("")
    with pytest.raises(UserError, match="exists and is not a folder"):
        api.write_report(api.score([tmp_path / "run"]), target)
    assert os.path.getsize(target) == 0
