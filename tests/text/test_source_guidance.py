"""Getting the full data: a --source that is not there says what to pass, from wherever the user
runs (a clone has no ../shared/data beside it), and the documented build commands use only options
the build has, the same way in the README and the data card."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from test_plugins import cli

REPO = Path(__file__).resolve().parents[2]
DOCS = {name: (REPO / name).read_text(encoding="utf-8") for name in ("README.md", "datasets/framingqa.md")}


def build_lines(text: str) -> list[list[str]]:
    return [shlex.split(line.split("#")[0]) for line in text.splitlines()
            if line.strip().startswith("framebench build framingqa ")]


@pytest.mark.parametrize("args, expected", [
    (["build", "framingqa"], ["legalbench/tasks/", "fiqa/FiQA_train_question_final.tsv",
                              "diagnosisarena/diagnosis_arena_dataset.csv", "or hf to download LegalBench and DiagnosisArena"]),
    (["build", "omit", "--model", "baseline:random"], ["moralchoice/scenarios/moralchoice_high_ambiguity.csv",
                                                       "scenarios.jsonl"]),
])
def test_a_missing_source_says_where_it_looked_and_what_to_pass(tmp_path, monkeypatch, capsys, args, expected):
    clone = tmp_path / "clone"
    clone.mkdir()
    monkeypatch.chdir(clone)
    assert cli([*args, "--source", "../shared/data", "--out", "built"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: ../shared/data: no such folder (looked for {tmp_path / 'shared' / 'data'})")
    assert all(part in err[0] for part in expected), err[0]
    assert "laid out like ../shared/data" not in err[0]  # the circular answer
    assert not (clone / "built").exists()


def test_a_folder_without_the_source_files_says_what_it_needs(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli(["build", "framingqa", "--source", str(tmp_path / "empty"), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert "source file not found" in err and "--source takes a folder holding legalbench/tasks/" in err
    assert not (tmp_path / "b").exists()


def test_documented_build_commands_agree_and_use_real_options(capsys):
    assert cli(["build", "framingqa", "--help"]) == 0
    options = set(re.findall(r"--[a-z-]+", capsys.readouterr().out))
    hf_lines = {}
    for name, text in DOCS.items():
        lines = build_lines(text)
        assert lines, name
        for args in lines:
            assert {a for a in args if a.startswith("--")} <= options, (name, args)
            if args[args.index("--source") + 1] == "hf":
                hf_lines[name] = args
    assert set(hf_lines) == set(DOCS)  # both show how to download the originals
    for args in hf_lines.values():  # finance is not on the Hub (sources_finance.py): the others only
        assert args[args.index("--tasks") + 1] == "law_issue_spotting,law_hearsay,medicine"


def test_hf_with_finance_is_the_error_the_docs_avoid(tmp_path, capsys):
    assert cli(["build", "framingqa", "--source", "hf", "--tasks", "finance", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "finance is not on the Hub" in err and "--tasks law_issue_spotting,law_hearsay,medicine" in err
