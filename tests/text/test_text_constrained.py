"""``framebench text --answer constrained``: records keep the mode and each row's answer
probabilities, the store never mixes modes, OMIT M1 scores the answer after the reasoning."""

from __future__ import annotations

import json

import pytest
from test_text_runner import omit_items
from text_helpers import cli_exit_code as _cli
from text_helpers import framingqa_items, make_varied_model, write_items

from framebench.records import decode_answer_probs, read_records
from framebench.store import ResultStore


@pytest.fixture
def data_dir(tmp_path):
    return write_items(tmp_path / "data", framingqa_items(2, 4) + omit_items(2))


def test_baseline_constrained_rows_carry_mode_and_probabilities(data_dir, tmp_path):
    out = tmp_path / "run"
    assert _cli("text", "--model", "baseline:always-no", "--data", str(data_dir), "--out", str(out),
                "--answer", "constrained", "--conditions", "M0,M1", "--quiet") == 0
    df = read_records(out)
    assert set(df["answer_mode"]) == {"constrained"} and (df["parse"] == "ok").all()
    binary = df[(df["suite"] == "framingqa") & (df["format"] == "binary")]
    assert (binary["answer"] == "No").all()
    assert all(decode_answer_probs(p) == {"Yes": 0.0, "No": 1.0} for p in binary["answer_probs"])
    mc = df[df["format"] == "mc"]
    assert all(set(decode_answer_probs(p)) == {"A", "B", "C", "D"} for p in mc["answer_probs"])
    assert set(df[df["suite"] == "omit"]["condition"]) == {"M0", "M1"}
    info = json.loads((out / "run.json").read_text())
    assert info["answer_mode"] == "constrained"


def test_modes_never_share_store_entries_or_run_ids(data_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert _cli("text", "--model", "baseline:always-yes", "--data", str(data_dir), "--out", str(out),
                "--quiet") == 0
    gen = read_records(out)
    with ResultStore(out) as store:
        n_generate = len(store)
    args = ("text", "--model", "baseline:always-yes", "--data", str(data_dir), "--out", str(out),
            "--answer", "constrained", "--quiet")
    assert _cli(*args) == 2  # a folder holds one mode's run
    assert "selection.answer" in capsys.readouterr().err
    assert _cli(*args, "--force") == 0
    con = read_records(out)
    with ResultStore(out) as store:
        assert len(store) == 2 * n_generate  # nothing served across modes
    assert set(gen["answer_mode"]) == {"generate"} and set(gen["answer_probs"]) == {""}
    assert gen["run_id"].iloc[0] != con["run_id"].iloc[0]


def test_bad_answer_mode_is_one_line(data_dir, tmp_path, capsys):
    assert _cli("text", "--model", "baseline:always-yes", "--data", str(data_dir), "--out",
                str(tmp_path / "r"), "--answer", "logits", "--quiet") == 2
    assert "--answer must be one of generate, constrained" in capsys.readouterr().err


def test_hf_constrained_and_omit_m1_resume(tiny_llama_dir, tmp_path):
    varied = make_varied_model(tiny_llama_dir, tmp_path / "varied")
    data = write_items(tmp_path / "data", framingqa_items(2, 4) + omit_items(1))
    out = tmp_path / "run"
    args = ("text", "--model", f"hf:{varied}", "--data", str(data), "--out", str(out),
            "--answer", "constrained", "--conditions", "M0,M1", "--quiet")
    assert _cli(*args) == 0
    first = read_records(out)
    assert (first["parse"] == "ok").all()
    for _, row in first.iterrows():
        probs = decode_answer_probs(row["answer_probs"])
        assert row["answer"] == max(probs, key=probs.get)
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
    m1 = first[first["condition"] == "M1"]
    assert len(m1) == 2 and m1["output"].str.len().gt(0).all()  # reasoning kept as the output
    assert _cli(*args) == 0  # second run: all from the store, identical records
    assert read_records(out).drop(columns=["run_id"]).equals(first.drop(columns=["run_id"]))


def test_reasoning_from_another_run_is_not_generated_again(tiny_llama_dir, tmp_path):
    varied = make_varied_model(tiny_llama_dir, tmp_path / "varied")
    data = write_items(tmp_path / "data", omit_items(1))
    model = f"hf:{varied}"
    assert _cli("text", "--model", model, "--data", str(data), "--out", str(tmp_path / "gen"),
                "--conditions", "M1", "--quiet") == 0
    generated = read_records(tmp_path / "gen")
    out = tmp_path / "con"
    assert _cli("text", "--model", model, "--data", str(data), "--out", str(out), "--conditions", "M1",
                "--answer", "constrained", "--reasoning-from", str(tmp_path / "gen"), "--quiet") == 0
    with ResultStore(out) as store:
        assert len(store) == 2  # the two scored answers; no reasoning generated here
    assert list(read_records(out)["output"]) == list(generated["output"])
    assert _cli("text", "--model", model, "--data", str(data), "--out", str(tmp_path / "x"), "--conditions",
                "M1", "--answer", "constrained", "--reasoning-from", str(tmp_path / "nowhere"), "--quiet") == 2
