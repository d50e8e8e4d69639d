"""``framebench export lm-eval`` / ``import lm-eval`` against the real lm-evaluation-harness: its
``lm_eval`` CLI with the ``hf`` model on the packaged SmolLM2 (``--apply_chat_template``,
``--log_samples``) over the demo's first law context (60 binary and 31 MC items), both task
kinds, compared with framebench's own ``hf:`` runs (generated and constrained) on the same items.
lm_eval and the framebench runs run once for the module (about 3-4 minutes on 2 CPU cores)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from framebench.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "datasets/demo/framingqa"
pytestmark = pytest.mark.slow
TASK = "law_issue_spotting"


def run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code or 0


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return time.perf_counter() - t0, proc.stdout


@pytest.fixture(scope="module")
def world(tmp_path_factory, smollm2_dir) -> dict:
    """The first law context as its own items file; lm_eval over its export; framebench's hf:
    runs (generate, constrained) on it; the import of lm_eval's samples."""
    if shutil.which("lm_eval", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("lm-eval is not installed in this venv (pip install 'lm-eval[hf]==0.4.13')")
    tmp = tmp_path_factory.mktemp("lm-eval")
    items = [json.loads(line) for line in (DEMO / "items.jsonl").read_text().splitlines() if line]
    first = next(it["context_id"] for it in items if it["task"] == TASK)
    subset = [it for it in items if it["context_id"] == first]
    data = tmp / "data"
    data.mkdir()
    (data / "items.jsonl").write_text("".join(json.dumps(it, sort_keys=True) + "\n" for it in subset))
    assert run(["export", "lm-eval", str(data), "--out", str(tmp / "tasks")]) == 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "HF_HOME": str(tmp / "hf-home")}
    bindir = Path(sys.executable).parent
    lm_seconds, printed = timed([str(bindir / "lm_eval"), "--model", "hf", "--model_args",
                                 f"pretrained={smollm2_dir},dtype=float32", "--include_path", str(tmp / "tasks"),
                                 "--tasks", "framebench_framingqa", "--apply_chat_template", "--log_samples",
                                 "--output_path", str(tmp / "lm-out"), "--batch_size", "16"], env)
    fb = [sys.executable, "-m", "framebench", "text", "--model", f"hf:{smollm2_dir}", "--data", str(data)]
    gen_seconds, _ = timed([*fb, "--out", str(tmp / "fb-gen")], env)
    con_seconds, _ = timed([*fb, "--answer", "constrained", "--out", str(tmp / "fb-con")], env)
    assert run(["import", "lm-eval", str(tmp / "lm-out"), "--data", str(data), "--out", str(tmp / "imported")]) == 0
    print(f"\nwall: lm_eval {lm_seconds:.1f} s (both task kinds, {len(subset)} items each); framebench hf: "
          f"generate {gen_seconds:.1f} s + constrained {con_seconds:.1f} s")
    return {"tmp": tmp, "data": data, "n": len(subset), "printed": printed, "lm_out": tmp / "lm-out",
            "imported": tmp / "imported", "fb_gen": tmp / "fb-gen", "fb_con": tmp / "fb-con"}


def records(run_dir: Path, mode: str) -> pd.DataFrame:
    from framebench.records import read_records

    df = read_records(run_dir)
    return df[df["answer_mode"] == mode].set_index("item_id").sort_index()


@pytest.mark.subprocess
def test_generated_answers_equal_framebench_hf(world: dict) -> None:
    ours, theirs = records(world["fb_gen"], "generate"), records(world["imported"], "generate")
    assert len(theirs) == world["n"] == len(ours) and list(theirs.index) == list(ours.index)
    same_answer = (ours["answer"] == theirs["answer"]) & (ours["parse"] == theirs["parse"])
    same_output = ours["output"].str.strip() == theirs["output"].str.strip()
    print(f"\ngenerated: answers equal on {same_answer.sum()}/{len(ours)}, outputs on {same_output.sum()}/{len(ours)}")
    for item_id in ours.index[~same_output]:
        print(f"  {item_id}: framebench {ours.at[item_id, 'output']!r} lm-eval {theirs.at[item_id, 'output']!r}")
    assert same_answer.mean() >= 0.99


@pytest.mark.subprocess
def test_choice_picks_and_probabilities_equal_framebench_constrained(world: dict) -> None:
    from framebench.records import decode_answer_probs

    ours, theirs = records(world["fb_con"], "constrained"), records(world["imported"], "constrained")
    assert len(theirs) == world["n"] and list(theirs.index) == list(ours.index)
    worst, decided, agree = 0.0, 0, 0
    for item_id in ours.index:
        p, q = decode_answer_probs(ours.at[item_id, "answer_probs"]), decode_answer_probs(theirs.at[item_id, "answer_probs"])
        assert set(p) == set(q)
        worst = max(worst, *(abs(p[a] - q[a]) for a in p))
        top = sorted(p.values(), reverse=True)
        if top[0] - top[1] > 1e-3:
            decided += 1
            agree += ours.at[item_id, "answer"] == theirs.at[item_id, "answer"]
    print(f"\nconstrained: picks equal on {agree}/{decided} decided items; max |P diff| {worst:.2e}")
    assert decided > 0 and agree == decided
    assert worst < 1e-4


def printed_metric(printed: str, metric: str) -> dict[str, float]:
    """``task -> value`` of ``metric`` from the table lm_eval prints."""
    values, task = {}, ""
    for line in printed.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 8:
            continue
        task = cells[0].lstrip("- ").strip() or task
        if cells[4] == metric:
            values[task] = float(cells[6])
    return values


@pytest.mark.subprocess
def test_printed_strict_accuracy_equals_framebench_score(world: dict) -> None:
    printed = printed_metric(world["printed"], "strict_acc")
    accuracy = printed_metric(world["printed"], "acc")
    assert len(printed) == 4 == len(accuracy), world["printed"]
    out = world["tmp"] / "report"
    assert run(["score", str(world["imported"]), str(world["fb_gen"]), str(world["fb_con"]), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    model = json.loads((world["imported"] / "run.json").read_text())["model"]
    hf = json.loads((world["fb_gen"] / "run.json").read_text())["model"]
    for ours, theirs in ((hf, model), (f"{hf} [constrained]", f"{model} [constrained]")):
        assert report["framingqa"][ours] == report["framingqa"][theirs]  # the same answers, the same report
    for task, value in printed.items():
        fmt = "binary" if "_binary_" in task else "mc"
        label = model if task.endswith("_gen") else f"{model} [constrained]"
        metrics = report["framingqa"][label][TASK][fmt]
        assert metrics["strict_all"] == pytest.approx(value, abs=1e-4), (task, metrics, value)
        assert metrics["mean"] == pytest.approx(accuracy[task], abs=1e-4), (task, metrics, accuracy)



@pytest.mark.subprocess
def test_run_json_carries_lm_eval_provenance(world: dict) -> None:
    from framebench.files import file_sha256
    info = json.loads((world["imported"] / "run.json").read_text())
    lm = info["lm_eval"]
    assert info["producer"] == "lm-eval" and info["executor"] == {"kind": "import"}
    assert lm["version"] and lm["model_args"]["pretrained"] and lm["model_args"]["dtype"] == "float32"
    assert set(lm["task_versions"]) == set(lm["n-shot"]) and len(lm["n-shot"]) == 4
    assert all(v == 0 for v in lm["n-shot"].values())
    for name, digest in lm["files_sha256"].items():
        (path,) = world["lm_out"].rglob(name)
        assert file_sha256(path) == digest


# ---- bad input: one line naming file and line, exit 2, nothing under --out ---------------------
def copy_output(world: dict, tmp_path: Path) -> tuple[Path, Path, dict[str, Path]]:
    dest = tmp_path / "lm-out"
    shutil.copytree(world["lm_out"], dest)
    (results,) = dest.rglob("results_*.json")
    samples = {p.name.split("_2")[0]: p for p in dest.rglob("samples_*.jsonl")}
    return dest, results, samples


def refused(world: dict, output: Path, tmp_path: Path, capsys) -> str:
    out = tmp_path / "run"
    capsys.readouterr()
    assert run(["import", "lm-eval", str(output), "--data", str(world["data"]), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and not out.exists()
    return err


def gen_samples(samples: dict[str, Path]) -> Path:
    return samples["samples_framebench_framingqa_law_issue_spotting_binary_gen"]


@pytest.mark.subprocess
def test_samples_of_another_task_are_refused(world, tmp_path, capsys) -> None:
    output, _, samples = copy_output(world, tmp_path)
    path = gen_samples(samples)
    other = path.with_name(path.name.replace("framebench_framingqa_law_issue_spotting_binary_gen", "arc_easy"))
    path.rename(other)
    err = refused(world, output, tmp_path, capsys)
    assert str(other) in err and "line 1" in err and "arc_easy" in err


@pytest.mark.subprocess
def test_truncated_line_is_refused(world, tmp_path, capsys) -> None:
    output, _, samples = copy_output(world, tmp_path)
    path = gen_samples(samples)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:4]) + lines[4][: len(lines[4]) // 2])
    err = refused(world, output, tmp_path, capsys)
    assert f"{path}: line 5:" in err and "truncated" in err


@pytest.mark.subprocess
@pytest.mark.parametrize("field", ["doc_id", "item_id"])
def test_ids_not_in_data_are_refused(world, tmp_path, capsys, field: str) -> None:
    output, _, samples = copy_output(world, tmp_path)
    path = samples["samples_framebench_framingqa_law_issue_spotting_mc_loglik"]
    lines = path.read_text().splitlines(keepends=True)
    sample = json.loads(lines[2])
    if field == "doc_id":
        sample["doc_id"] = 999
    else:
        sample["doc"]["item_id"] = "demo-law-9:mc:neutral"
    lines[2] = json.dumps(sample) + "\n"
    path.write_text("".join(lines))
    err = refused(world, output, tmp_path, capsys)
    assert f"{path}: line 3:" in err and field in err and "not in DATA" in err


@pytest.mark.subprocess
def test_results_of_another_run_are_refused(world, tmp_path, capsys) -> None:
    output, results, _ = copy_output(world, tmp_path)
    other = results.with_name("results_2020-01-01T00-00-00.000000.json")
    results.rename(other)
    err = refused(world, output, tmp_path, capsys)
    assert str(other) in err and "line 1" in err and "another lm-eval run" in err


@pytest.mark.subprocess
def test_results_counting_other_samples_are_refused(world, tmp_path, capsys) -> None:
    output, results, samples = copy_output(world, tmp_path)
    value = json.loads(results.read_text())
    value["n-samples"]["framebench_framingqa_law_issue_spotting_binary_gen"]["effective"] = 240
    results.write_text(json.dumps(value))
    err = refused(world, output, tmp_path, capsys)
    assert str(gen_samples(samples)) in err and re.search(r"line \d+", err) and "another run" in err


@pytest.mark.subprocess
def test_empty_folder_is_refused(world, tmp_path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    err = refused(world, tmp_path / "empty", tmp_path, capsys)
    assert str(tmp_path / "empty") in err and "no lm-eval" in err


# ---- the export as lm-eval's own task loader reads it (no model) -------------------------------
@pytest.mark.parametrize("name", ["framingqa", "omit"])
def test_exported_tasks_load_in_lm_eval(name: str, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager, get_task_dict

    from framebench.interop.hf_dataset import item_jobs

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    data = ROOT / "datasets/demo" / name
    assert run(["export", "lm-eval", str(data), "--out", str(tmp_path / "tasks")]) == 0
    _, jobs = item_jobs(data)
    tasks = get_task_dict([f"framebench_{name}"], TaskManager(include_path=str(tmp_path / "tasks"), include_defaults=False))
    (group,) = tasks.values()
    loaded = {t.config.task: t for t in group.values()}
    assert len(loaded) == 2 * len({(j.item["task"], j.item["format"]) for j in jobs})
    by_id = {j.record_id: j for j in jobs}
    for task in loaded.values():
        docs = list(task.eval_docs)
        for doc in docs:
            job = by_id[doc["record_id"]]
            assert task.doc_to_text(doc) == job.prompt
        if task.config.output_type == "generate_until":
            assert task.config.generation_kwargs["max_gen_toks"] == by_id[docs[0]["record_id"]].decoding.max_new_tokens
            assert task.config.generation_kwargs["do_sample"] is False
        else:
            assert task.config.output_type == "multiple_choice" and task.config.target_delimiter == ""
    assert sum(len(t.eval_docs) for t in loaded.values()) == 2 * len(jobs)


def test_strict_accuracy_and_choice_probabilities_by_hand() -> None:
    from framebench.interop.lm_eval_tasks import choice_probs, strict_accuracy

    assert strict_accuracy([("a", True), ("a", True), ("b", True), ("b", False), ("c", False)]) == pytest.approx(1 / 3)
    # Yes-forms 0.5 + 0.1, No-forms 0.2 (docs/susceptibility.md's worked example) -> 0.75 / 0.25
    import math

    probs = choice_probs(["Yes", "Yes", "No"], ["Yes", "No"], [math.log(0.5), math.log(0.1), math.log(0.2)])
    assert probs == pytest.approx({"Yes": 0.75, "No": 0.25})
