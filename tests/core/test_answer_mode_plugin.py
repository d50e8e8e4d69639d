"""A third party's answer mode (tests/plugins_answer_mode: ``firstword``, first-token argmax over
the job's fixed answer list) runs end to end through ``framebench text`` and ``api.run_text`` with
no edit to framebench: ``--answer`` choices, the records' vocabulary, the run identity, the store
and resume all come from the registry."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from text_helpers import cli_exit_code as _cli
from text_helpers import framingqa_items, write_items

from framebench import api, registry
from framebench.records import decode_answer_probs, label_answer_modes, read_records
from framebench.store import ResultStore

PLUGIN = Path(__file__).resolve().parents[1] / "plugins_answer_mode"


@pytest.fixture
def firstword(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    importlib.invalidate_caches()
    registry.refresh()
    yield
    registry.refresh()


@pytest.fixture
def data_dir(tmp_path):
    return write_items(tmp_path / "data", framingqa_items(2, 4))


def expected(output: str, allowed: list[str]) -> str:
    """The answer by hand: the output's first word when it is allowed, else the first allowed."""
    word = re.match(r"\s*([A-Za-z0-9]*)", output).group(1)
    return word if word in allowed else allowed[0]


def test_unregistered_mode_is_refused_in_one_line(data_dir, tmp_path, capsys):
    assert _cli("text", "--model", "baseline:always-no", "--data", str(data_dir), "--out",
                str(tmp_path / "r"), "--answer", "firstword", "--quiet") == 2
    assert "--answer must be one of generate, constrained, got 'firstword'" in capsys.readouterr().err


def test_plugin_mode_runs_end_to_end_and_resumes(firstword, data_dir, tmp_path, capsys):
    assert list(registry.answer_modes()) == ["generate", "constrained", "firstword"]
    out = tmp_path / "run"
    args = ("text", "--model", "baseline:always-no", "--data", str(data_dir), "--out", str(out),
            "--answer", "firstword", "--quiet")
    assert _cli(*args) == 0
    df = read_records(out)  # the records' answer_mode vocabulary holds the plugin's mode
    assert len(df) == 8 and set(df["answer_mode"]) == {"firstword"} and (df["parse"] == "ok").all()
    for row in df.itertuples():
        probs = decode_answer_probs(row.answer_probs)
        assert row.answer == expected(row.output, list(probs))
        assert sum(probs.values()) == pytest.approx(1.0)
    assert (df[df["format"] == "binary"]["answer"] == "No").all()  # always-no says "No"
    info = json.loads((out / "run.json").read_text())
    assert info["answer_mode"] == "firstword" and info["selection"]["answer"] == "firstword"
    assert set(label_answer_modes(df)["model"]) == {"baseline:always-no [firstword]"}
    with ResultStore(out) as store:
        assert len(store) == 8

    summary = api.run_text("baseline:always-no", data_dir, out, answer="firstword", progress=False)
    assert summary.n_generated == 0 and summary.n_from_store == 8  # resumed from the store
    assert read_records(out).equals(df)

    gen = api.run_text("baseline:always-no", data_dir, tmp_path / "gen", progress=False)
    assert gen.run_id != summary.run_id  # the mode is part of the run identity
    generated = read_records(tmp_path / "gen").set_index("item_id")
    assert (generated.loc[df["item_id"], "output"].to_numpy() == df["output"].to_numpy()).all()


def test_help_lists_the_plugin_mode(firstword, capsys):
    from framebench.cli import text as text_cli

    importlib.reload(text_cli)
    assert "constrained | firstword | generate" in text_cli.ANSWER_HELP
    importlib.reload(text_cli)
