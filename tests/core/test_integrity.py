"""Run folders carry the sha256 of every file ``write_run`` wrote (run.json ``files``, and a seal of
run.json itself); ``score`` and ``view`` verify them: one line naming the changed file, or
``--force`` to read anyway with a warning."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from text_helpers import cli_run as cli
from text_helpers import framingqa_items, make_varied_model, write_items

from framebench.run_folder import SEAL_KEY, content_seal, run_problems
from framebench.viewer.data import load_run_data

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def text_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "omit"
    code, _, err = cli("text", "--data", str(DEMO / "omit"), "--model", "baseline:always-yes", "--out", str(out),
                       "--quiet")
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def ingest_run(tmp_path_factory) -> Path:
    """A PARTNR ingest: its crashes.json goes through write_run too."""
    root = tmp_path_factory.mktemp("partnr")
    suffixes = ("neutral", "correct_root", "correct_propositional", "correct_global",
                "incorrect_root", "incorrect_propositional", "incorrect_global")
    framed = root / "framed.json.gz"
    framed.write_bytes(gzip.compress(json.dumps({"episodes": [
        {"episode_id": f"1__{s}", "instruction": f"Do ({s}).", "info": {}} for s in suffixes]}).encode()))
    stats = root / "results" / "stats"
    stats.mkdir(parents=True)
    for s in suffixes[:-1]:  # the last one is missing: a row in crashes.json
        (stats / f"1__{s}.json").write_text(json.dumps({"success": True, "stats": json.dumps(
            {"task_percent_complete": 0.5, "sim_step_count": 10, "replanning_count_0": 1})}))
    code, _, err = cli("partnr", "ingest", str(root / "results"), "--episodes", str(framed), "--out",
                       str(root / "run"))
    assert code == 0, err
    return root / "run"


def test_run_json_records_the_hash_of_every_file_write_run_wrote(text_run, ingest_run):
    for run, names in ((text_run, {"records.parquet", "prompts.jsonl"}),
                       (ingest_run, {"records.parquet", "prompts.jsonl", "crashes.json"})):
        info = json.loads((run / "run.json").read_text())
        assert set(info["files"]) == names
        assert all(info["files"][name] == sha(run / name) for name in names)  # hashed independently here
        assert info[SEAL_KEY] == content_seal(info) and run_problems(run) == []
        assert len(info[SEAL_KEY]) == 64


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _damaged_copies(text_run: Path, ingest_run: Path, tmp_path: Path) -> list[tuple[Path, str]]:
    """(run folder, damaged file name): one byte flipped in each kind of file."""
    cases = []
    for source, name in ((text_run, "records.parquet"), (text_run, "prompts.jsonl"), (text_run, "run.json"),
                         (ingest_run, "crashes.json"), (ingest_run, "records.parquet")):
        run = tmp_path / f"{source.name}-{name}"
        shutil.copytree(source, run)
        target = run / name
        if name == "run.json":  # inside the model name: still valid JSON, only the seal tells
            _flip(target, target.read_bytes().rindex(b'"model": "baseline:always-yes"') + 12)
            assert json.loads(target.read_text())["model"] != "baseline:always-yes"
        else:
            _flip(target, len(target.read_bytes()) // 2)
        cases.append((run, name))
    return cases


def test_a_flipped_byte_in_each_file_kind_is_one_line_naming_it(text_run, ingest_run, tmp_path):
    for run, name in _damaged_copies(text_run, ingest_run, tmp_path):
        out = tmp_path / f"report-{run.name}"
        code, _, err = cli("score", str(run), "--out", str(out))
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (name, err)
        assert f"{run / name}:" in lines[0] and "--force" in lines[0] and "Traceback" not in err
        assert not out.exists()
        code, _, err = cli("view", str(run), "--port", "0")  # verified before the server starts
        assert code == 2 and f"{run / name}:" in err and len(err.strip().splitlines()) == 1


def test_force_scores_and_views_anyway_with_a_warning(text_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(text_run, run)
    prompts = run / "prompts.jsonl"
    prompts.write_text(prompts.read_text().replace("?", "?!", 1))  # still a valid prompts file
    code, _, err = cli("score", str(run), "--out", str(tmp_path / "report"), "--force")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and str(prompts) in warnings[0]
    assert (tmp_path / "report" / "report.json").is_file()
    data = load_run_data([run], force=True)
    assert len(data) > 0 and data.integrity_warnings and str(prompts) in data.integrity_warnings[0]


def test_folders_without_hashes_are_read_as_they_are(text_run, tmp_path):
    """Runs written before the hashes existed (and hand-made records) still score."""
    run = tmp_path / "old"
    shutil.copytree(text_run, run)
    info = json.loads((run / "run.json").read_text())
    del info["files"], info[SEAL_KEY]
    (run / "run.json").write_text(json.dumps(info))
    assert run_problems(run) == []
    (run / "run.json").unlink()
    assert run_problems(run) == []
    code, _, err = cli("score", str(run), str(DEMO / "omit" / "personas"), "--out", str(tmp_path / "r"))
    assert code == 0, err


def test_a_file_listed_but_gone_is_named(text_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(text_run, run)
    (run / "prompts.jsonl").unlink()
    code, _, err = cli("score", str(run), "--out", str(tmp_path / "r"))
    assert code == 2 and "prompts.jsonl: missing" in err


@pytest.fixture(scope="module")
def varied_dir(tiny_llama_dir, tmp_path_factory):
    return make_varied_model(tiny_llama_dir, tmp_path_factory.mktemp("varied"))


def _store_count(run_dir: Path) -> int:
    try:
        with sqlite3.connect(run_dir / "store.sqlite", timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.subprocess
def test_resume_after_a_clean_kill_still_verifies(varied_dir, tmp_path):
    data = write_items(tmp_path / "data", framingqa_items(4, 5))
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "framebench", "text", "--model", f"hf:{varied_dir}", "--data", str(data),
           "--batch-size", "1", "--quiet", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while (not (out / "store.sqlite").exists() or _store_count(out) < 3) and proc.poll() is None \
            and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)  # a clean kill: the process ends, the store keeps what it had
    proc.wait(timeout=60)
    assert 0 < _store_count(out) < 20 and not (out / "run.json").exists()
    for _ in range(2):  # the resumed run, then one more invocation that takes everything from the store
        code, _, err = cli(*cmd[3:])  # in-process: faster
        assert code == 0, err
        assert run_problems(out) == []
        code, _, err = cli("score", str(out), "--out", str(tmp_path / "report"))
        assert code == 0, err
        shutil.rmtree(tmp_path / "report")
    info = json.loads((out / "run.json").read_text())
    assert len(info["history"]) == 2 and info["files"]["records.parquet"] == sha(out / "records.parquet")
