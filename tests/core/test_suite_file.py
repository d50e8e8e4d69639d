"""A suite in one file (docs/extending.md, "A suite in one file"): the page's own files and
commands run here in an empty folder (in process; tests/e2e/test_wheel.py runs them against the
installed wheel), with accuracies computed by hand; every wrong ``--suite`` is one line."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from test_plugins import cli

from framebench import registry
from framebench.text_suite import strict_answer

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")


def doc_files() -> dict[str, str]:
    """The files the page shows in full (```python FILE, ```jsonl FILE): name -> text."""
    return dict(re.findall(r"```(?:python|jsonl) ([\w.-]+)\n(.*?)```", DOC, flags=re.S))


def doc_commands() -> list[list[str]]:
    (block,) = re.findall(r"```bash one-file\n(.*?)```", DOC, flags=re.S)
    return [shlex.split(line) for line in block.splitlines() if line.startswith("framebench ")]


def lay_out(folder: Path) -> None:
    for name, text in doc_files().items():
        (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture(autouse=True)
def forget_file_suites():
    yield
    registry.refresh()


# The page's 7 items: c1 (gold Yes: neutral, correct, incorrect), c2 (gold No: the same three),
# c3 (gold Yes: neutral). always-yes is right on the 4 Yes items, always-no on the 3 No items.
EXPECTED = {
    "baseline:always-yes": (7, 4 / 7, {"neutral": (3, 2 / 3), "correct": (2, 1 / 2), "incorrect": (2, 1 / 2)}),
    "baseline:always-no": (7, 3 / 7, {"neutral": (3, 1 / 3), "correct": (2, 1 / 2), "incorrect": (2, 1 / 2)}),
}


def check_report(report: dict) -> None:
    for model, (n, accuracy, by_bias) in EXPECTED.items():
        entry = report["claims"][model]
        assert entry["n"] == n and entry["accuracy"] == pytest.approx(accuracy)
        assert {b: (e["n"], pytest.approx(e["accuracy"])) for b, e in entry["by_bias"].items()} == by_bias


def test_the_page_shows_a_short_suite_file_and_its_commands():
    files = doc_files()
    assert set(files) == {"claims.py", "items.jsonl"}
    assert len(files["claims.py"].splitlines()) <= 20
    assert [c[:2] for c in doc_commands()] == [["framebench", "text"]] * 2 + [["framebench", "score"]]


def test_the_page_runs_from_an_empty_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    lay_out(tmp_path)
    for command in doc_commands():
        assert cli(command[1:]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "Claim support (yes/no)" in out and "scored 14 records from 2 run(s)" in out
    check_report(json.loads((tmp_path / "report" / "report.json").read_text()))
    assert "Claim support (yes/no): accuracy" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize("spec, message", [
    ("claims.py", "--suite claims.py: expected FILE.py:OBJECT, e.g. my_suite.py:MY_SUITE"),
    ("nothere.py:CLAIMS", "--suite nothere.py:CLAIMS: no such file nothere.py"),
    ("sub:CLAIMS", "--suite sub:CLAIMS: no such file sub (a folder)"),
    ("claims.py:CLAIM", "--suite claims.py:CLAIM: claims.py has no CLAIM (its suites: CLAIMS)"),
    ("claims.py:PROMPT", "--suite claims.py:PROMPT: PROMPT is a str, not a framebench Suite "
                         "(framebench.plugin.text_suite or Suite)"),
    ("broken.py:X", "--suite broken.py:X: broken.py failed to import (line 2): NameError: name 'nope' is not defined"),
    ("taken.py:OMIT", "--suite taken.py:OMIT: an installed package already registers a suite named 'omit'; "
                      "give yours another name"),
])
def test_a_wrong_suite_is_one_line(tmp_path, monkeypatch, capsys, spec, message):
    monkeypatch.chdir(tmp_path)
    lay_out(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "broken.py").write_text("import os\nX = nope\n")
    (tmp_path / "taken.py").write_text('from framebench.plugin import text_suite\nOMIT = text_suite("omit", "Mine")\n')
    assert cli(["text", "--suite", spec, "--model", "baseline:always-yes", "--data", "items.jsonl",
                "--out", "runs/x"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {message}"]
    assert not (tmp_path / "runs").exists()
    assert "claims" not in registry.suites()


def test_a_prompt_naming_a_field_the_item_lacks_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    lay_out(tmp_path)
    suite = Path("claims.py").read_text().replace("Passage: {passage}", "Passage: {passage} {source}")
    Path("claims.py").write_text(suite)
    assert cli(["text", "--suite", "claims.py:CLAIMS", "--model", "baseline:always-yes", "--data", "items.jsonl",
                "--out", "runs/x"]) == 2
    assert capsys.readouterr().err.strip() == ("error: items.jsonl: item 'c1-n': the claims prompt cannot be "
                                               "filled from its fields (KeyError: 'source')")


@pytest.mark.parametrize("output, answer", [
    ("Yes", "Yes"), (" no.", "No"), ("**YES**", "Yes"), ('"No"', "No"), ("Yes, it did.", ""),
    ("Maybe", ""), ("", ""), ("B", ""),
])
def test_strict_answer(output, answer):
    assert strict_answer(output, ("Yes", "No")) == answer
