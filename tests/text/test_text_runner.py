"""``framebench text``: records, prompts, run.json, resume (also after SIGKILL), bad input."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from text_helpers import cli_exit_code, framingqa_items, make_varied_model, write_items

from framebench.api import run_text
from framebench.records import read_records

REPO = Path(__file__).resolve().parents[2]


def omit_items(n: int = 2) -> list[dict]:
    items = []
    for s in range(n):
        for frame in ("action", "omission"):
            items.append({
                "item_id": f"sc{s}:{frame}", "context_id": f"sc{s}", "suite": "omit", "task": "omit",
                "format": "binary", "bias": "neutral", "level": "", "form": "", "phrasing": "",
                "option": "", "distractor": "", "slot": "", "gold": "",
                "text": f"Scenario {s}: a stranger asks for help ({frame}).",
                "question": "Do you help?" if frame == "action" else "Do you walk on?",
                "options": [], "frame": frame, "conflicts": "utilitarianism-deontology",
            })
    return items


@pytest.fixture
def data_dir(tmp_path):
    return write_items(tmp_path / "data", framingqa_items(3, 4) + omit_items(2))


def test_baseline_run_writes_records_prompts_and_run_info(data_dir, tmp_path):
    out = tmp_path / "run"
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data_dir), "--out", str(out),
                "--conditions", "M0,M2", "--quiet") == 0
    df = read_records(out)
    fqa = framingqa_items(3, 4)
    assert len(df) == len(fqa) + 4 * 2  # OMIT: 4 frame items x 2 conditions
    assert list(df["item_id"][: len(fqa)]) == [it["item_id"] for it in fqa]  # items order
    expected_answer = {"binary": "Yes", "mc": "A"}
    for row, item in zip(df.head(len(fqa)).itertuples(), fqa, strict=True):
        assert row.answer == expected_answer[item["format"]] and row.parse == "ok"
        assert row.correct == (item["gold"] == row.answer)
        assert (row.gold, row.bias, row.slot, row.task) == (item["gold"], item["bias"], item["slot"], item["task"])
    omit = df[df["suite"] == "omit"]
    assert list(omit["item_id"]) == ["sc0:action@M0", "sc0:action@M2", "sc0:omission@M0", "sc0:omission@M2",
                                     "sc1:action@M0", "sc1:action@M2", "sc1:omission@M0", "sc1:omission@M2"]
    assert set(omit["condition"]) == {"M0", "M2"} and set(omit["frame"]) == {"action", "omission"}
    assert set(omit["answer"]) == {"Yes"} and not omit["correct"].any() and set(omit["gold"]) == {""}
    assert set(omit["conflicts"]) == {"utilitarianism-deontology"}
    assert df["run_id"].nunique() == 1 and set(df["model"]) == {"baseline:always-yes"}

    prompts = [json.loads(line) for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert [p["item_id"] for p in prompts] == list(df["item_id"])
    mc_prompt = next(p["prompt"] for p, f in zip(prompts, df["format"], strict=True) if f == "mc")
    assert "\nA) Housing\nB) Family\nC) Crime\nD) Torts\n" in mc_prompt and mc_prompt.startswith("The tenant")
    assert "Answer with exactly one word: Yes or No." in prompts[-1]["prompt"]  # D's M0/M2 instruction

    info = json.loads((out / "run.json").read_text())
    assert info["run_id"] == df["run_id"][0]
    assert info["model_fingerprint"] == "baseline:always-yes:v2"
    assert info["n_records"] == len(df) and info["n_generated"] == len(df)
    assert info["decoding"]["binary"]["max_new_tokens"] == 8 and info["decoding"]["mc"]["max_new_tokens"] == 16
    assert len(info["dataset_hash"]) == 64 and "chat_template_hash" in info

    # re-running serves everything from the store and writes the same records
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data_dir), "--out", str(out),
                "--conditions", "M0,M2", "--quiet") == 0
    again = json.loads((out / "run.json").read_text())
    assert again["n_generated"] == 0 and again["n_from_store"] == len(df)
    assert read_records(out).equals(df)


def test_random_baseline_is_seeded_and_per_item(tmp_path):
    data_dir = write_items(tmp_path / "data", framingqa_items(5, 8))
    cli_exit_code("text", "--model", "baseline:random", "--data", str(data_dir), "--out", str(tmp_path / "a"), "--quiet")
    cli_exit_code("text", "--model", "baseline:random", "--data", str(data_dir), "--out", str(tmp_path / "b"),
         "--formats", "mc", "--quiet")
    a, b = read_records(tmp_path / "a"), read_records(tmp_path / "b")
    assert set(a["answer"]) == {"Yes", "No", "A", "B", "C", "D"}
    merged = a.merge(b, on="item_id")
    assert len(merged) == len(b) and (merged["answer_x"] == merged["answer_y"]).all()  # same item, same answer


def test_selection_flags(data_dir, tmp_path):
    out = tmp_path / "sel"
    assert cli_exit_code("text", "--model", "baseline:always-no", "--data", str(data_dir), "--out", str(out),
                "--tasks", "finance,omit", "--formats", "binary", "--limit", "3", "--quiet") == 0
    df = read_records(out)
    assert list(df["item_id"]) == ["ctx1-binary-0", "ctx1-binary-2", "sc0:action@M0"]
    assert list(df["answer"]) == ["No", "No", "No"]


@pytest.mark.parametrize(("args", "message"), [
    (["--conditions", "M9"], "unknown condition 'M9'"),
    (["--tasks", "astrology"], "unknown task 'astrology'"),
    (["--formats", "essay"], "unknown format 'essay'"),
    (["--batch-size", "zero"], "--batch-size"),
    (["--model", "nonsense:x"], "unknown model spec"),
    (["--limit", "0"], "--limit"),
])
def test_bad_flags_exit_2_with_one_line(data_dir, tmp_path, capsys, args, message):
    base = ["text", "--model", "baseline:always-yes", "--data", str(data_dir), "--out", str(tmp_path / "x"), "--quiet"]
    code = cli_exit_code(*(base + args))
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x" / "records.parquet").exists()


def test_bad_items_name_the_file_and_item(tmp_path, capsys):
    items = framingqa_items(1, 2)
    items[1]["options"] = ["only one"]
    data = write_items(tmp_path / "bad", items)
    assert cli_exit_code("text", "--model", "baseline:always-yes", "--data", str(data), "--out", str(tmp_path / "o"),
                "--quiet") == 2
    err = capsys.readouterr().err
    assert "items.jsonl" in err and "ctx0-mc-1" in err and "options" in err
    assert cli_exit_code("text", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")) == 2


@pytest.fixture(scope="module")
def varied_dir(tiny_llama_dir, tmp_path_factory):
    return make_varied_model(tiny_llama_dir, tmp_path_factory.mktemp("varied"))


def _store_count(run_dir: Path) -> int:
    path = run_dir / "store.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0


@pytest.mark.subprocess
def test_sigkill_mid_run_then_resume_gives_identical_records(varied_dir, tmp_path):
    items = framingqa_items(4, 5)
    data = write_items(tmp_path / "data", items)
    cmd = [sys.executable, "-m", "framebench", "text", "--model", f"hf:{varied_dir}", "--data", str(data),
           "--batch-size", "1", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    killed = tmp_path / "killed"
    proc = subprocess.Popen(cmd + ["--out", str(killed)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while _store_count(killed) < 3 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = _store_count(killed)
    assert 0 < partial < len(items), "the run must be killed mid-way"
    assert not (killed / "records.parquet").exists()

    for out in (killed, tmp_path / "clean"):  # resume, and an uninterrupted run (in-process: faster)
        run_text(f"hf:{varied_dir}", data, out, batch_size=1, progress=False)
    resumed, clean = read_records(killed), read_records(tmp_path / "clean")
    assert json.loads((killed / "run.json").read_text())["n_from_store"] >= partial
    assert resumed.equals(clean)
    assert len(clean) == len(items) and clean["output"].str.len().gt(0).all()


@pytest.mark.slow
def test_smollm2_on_demo_items(smollm2_dir, tmp_path):
    demo = REPO / "datasets" / "demo" / "framingqa" / "items.jsonl"
    if demo.exists():
        items = [json.loads(line) for line in demo.read_text().splitlines() if line.strip()]
        ctx = items[0]["context_id"]
        chosen = [it for it in items if it["context_id"] == ctx and it["format"] == "binary"][:4]
        chosen += [it for it in items if it["context_id"] == ctx and it["format"] == "mc"][:2]
    else:
        chosen = framingqa_items(1, 6)
    data = write_items(tmp_path / "data", chosen)
    assert cli_exit_code("text", "--data", str(data), "--out", str(tmp_path / "run"), "--quiet") == 0
    df = read_records(tmp_path / "run")
    assert len(df) == len(chosen) and set(df["model"]) == {"smollm2"}
    assert df["output"].str.strip().str.len().gt(0).all()  # real text, not empty
    assert (df["parse"] == "ok").mean() >= 0.5  # SmolLM2 mostly answers in the asked format
    ok = df[df["parse"] == "ok"]
    assert ok.apply(lambda r: r["answer"] in (("Yes", "No") if r["format"] == "binary" else tuple("ABCD")),
                    axis=1).all()
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["model_fingerprint"].startswith("hf:weights=") and len(info["chat_template_hash"]) == 64


def test_calls_never_split_a_context(monkeypatch):
    from framebench.pipeline import answers
    from framebench.suite import Job

    monkeypatch.setattr(answers, "CALL_SIZE", 5)
    jobs = [Job({"context_id": c}, f"{c}{i}", [], None) for c, n in (("a", 3), ("b", 3), ("c", 7), ("d", 1))
            for i in range(n)]
    calls = answers.pack_calls(jobs)
    assert [[j.record_id for j in call] for call in calls] == [
        ["a0", "a1", "a2"], ["b0", "b1", "b2"], [f"c{i}" for i in range(7)], ["d0"]]


def test_baselines_answer_in_each_omit_conditions_format(tmp_path):
    """M1 and M4 want a final ``ANSWER:`` line: every baseline row parses under all conditions."""
    data = REPO / "datasets" / "demo" / "omit"
    for kind in ("random", "always-no"):
        out = tmp_path / kind
        assert cli_exit_code("text", "--model", f"baseline:{kind}", "--data", str(data), "--conditions",
                    "M0,M1,M4", "--out", str(out), "--quiet") == 0
        df = read_records(out)
        assert set(df["condition"]) == {"M0", "M1", "M4"}
        assert (df["parse"] == "ok").all(), df.loc[df["parse"] != "ok", ["condition", "output"]].head()
        m1 = df[df["condition"] == "M1"]
        assert m1["output"].str.fullmatch(r"ANSWER: (yes|no)").all()
        assert set(df[df["condition"] == "M0"]["output"]) <= {"Yes", "No"}
        if kind == "always-no":
            assert (df["answer"] == "No").all()


def test_resume_does_not_load_the_model_when_the_store_has_every_answer(tiny_llama_dir, tmp_path, monkeypatch):
    """Lazy model load: the fingerprint needs only the tokenizer and the weights hashes."""
    from framebench.backends import hf
    from framebench.embodied.planners import load_planner
    from framebench.embodied.runner import run as run_embodied

    data = write_items(tmp_path / "data", framingqa_items(1, 2))
    first = run_text(f"hf:{tiny_llama_dir}", data, tmp_path / "run", progress=False)
    episodes = REPO / "datasets" / "demo" / "robotics" / "episodes.json.gz"
    run_embodied(load_planner(f"hf:{tiny_llama_dir}"), episodes, tmp_path / "emb", replan_cap=1,
                 progress=False, limit=1)

    def refuse(self):
        raise AssertionError("the model was loaded although every answer is in the store")

    monkeypatch.setattr(hf.HFBackend, "_load_model", refuse)
    again = run_text(f"hf:{tiny_llama_dir}", data, tmp_path / "run", progress=False)
    assert again.n_generated == 0 and again.n_from_store == first.n_records
    planner = load_planner(f"hf:{tiny_llama_dir}")
    run_embodied(planner, episodes, tmp_path / "emb", replan_cap=1, progress=False, limit=1)
    assert not planner.backend.loaded
