"""``framebench embodied --dry-run``: the episode framings and the planner-call bound it prints
equal what the real run on the demo episodes makes, and it runs and writes nothing."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from test_plugins import cli, toy_plugin  # noqa: F401  (toy_plugin: the fixture)

from framebench.records import read_records

EPISODES = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "robotics" / "episodes.json.gz"


def episodes_in_file() -> int:
    with gzip.open(EPISODES, "rt") as fh:
        return len(json.load(fh)["episodes"])


def dry_run(capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli(["embodied", "--episodes", str(EPISODES), "--dry-run", *args]) == 0
    return capsys.readouterr().out


def last_number(pattern: str, text: str) -> int:
    return int(re.search(pattern, text).group(1).replace(",", ""))


@pytest.mark.parametrize("limit", [None, 2])
def test_dry_run_counts_the_oracle_runs_episode_framings(tmp_path, capsys, limit):
    extra = [] if limit is None else ["--limit", str(limit)]
    out = tmp_path / "run"
    text = dry_run(capsys, "--planner", "oracle", "--out", str(out), *extra)
    assert not out.exists()  # nothing written
    episodes = episodes_in_file() if limit is None else limit
    assert f"episodes: {episodes} of {episodes_in_file()} in {EPISODES}" in text
    assert "simulator symbolic: the symbolic PARTNR-semantics household" in text
    assert "planner calls: none to a model" in text
    assert text.rstrip().endswith("nothing was run or written")
    variants = last_number(r"dry run: ([\d,]+) episode framings", text)
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(EPISODES), "--out", str(out), *extra]) == 0
    records = read_records(out)
    assert variants == len(records) == records["item_id"].nunique()
    assert set(records.groupby("context_id").size()) == {7}  # neutral + six framed per episode


@pytest.mark.usefixtures("toy_plugin")
def test_dry_run_bound_is_what_a_planner_that_never_finishes_makes(tmp_path, capsys):
    """``keyword:x`` answers Yes or No, never an action, so each variant runs to the
    replan cap: its planner calls reach the printed bound exactly."""
    text = dry_run(capsys, "--planner", "keyword:x", "--replan-cap", "2", "--limit", "1",
                   "--out", str(tmp_path / "k"))
    assert "planner calls: at most 3 per framing, 21 in all; each generates at most 64 tokens" in text
    bound = last_number(r"at most ([\d,]+) planner calls", text)
    assert cli(["embodied", "--planner", "keyword:x", "--replan-cap", "2", "--limit", "1",
                "--episodes", str(EPISODES), "--out", str(tmp_path / "k")]) == 0
    records = read_records(tmp_path / "k")
    assert len(records) == 7 and records["replans"].sum() == bound


@pytest.mark.usefixtures("toy_plugin")
def test_dry_run_of_a_plugin_planner_says_its_calls_are_unknown(tmp_path, capsys):
    text = dry_run(capsys, "--planner", "firstplan", "--out", str(tmp_path / "f"))
    assert "planner calls: not known before the planner is built" in text
    assert f"dry run: {7 * episodes_in_file()} episode framings; nothing was run or written" in text


@pytest.mark.parametrize("args, message", [
    (["--planner", "nobody"], "unknown planner spec 'nobody'"),
    (["--planner", "oracle", "--simulator", "habitat"], "--dry-run: the habitat simulator cannot count its run"),
])
def test_dry_run_mistakes_are_one_line(tmp_path, capsys, args, message):
    assert cli(["embodied", "--episodes", str(EPISODES), "--dry-run", "--out", str(tmp_path / "x"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "x").exists()


def test_dry_run_takes_the_installed_demo_episodes_by_name(tmp_path, capsys, monkeypatch):
    """``demo:robotics/episodes.json.gz`` names the packaged file from any folder, as for a run."""
    monkeypatch.chdir(tmp_path)
    assert cli(["embodied", "--planner", "oracle", "--episodes", "demo:robotics/episodes.json.gz",
                "--out", "run", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert f"dry run: {7 * episodes_in_file()} episode framings" in text and not (tmp_path / "run").exists()
