"""framebench inside Inspect AI (docs/interop.md): the tasks run through Inspect's own
Transformers provider on SmolLM2, the log comes back through ``framebench import inspect``.

The real model runs on a faithful subset of the demo's first law context: paraphrase Q1 of every
binary and MC variant plus the neutral MC question (about a third of its 94 items; every bias, level
and form of both formats). The whole context takes Inspect about 195 s on 2 CPU cores, past
the test file's budget; docs/interop.md has its measured agreement. Every bad-input case edits or
truncates the real log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import EvalError, read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput  # noqa: E402

from framebench import api  # noqa: E402
from framebench.cli import main  # noqa: E402
from framebench.files import file_sha256  # noqa: E402
from framebench.records import read_records  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return exc.value.code or 0, out, err


def _first_law_subset(out: Path) -> Path:
    rows = [json.loads(line) for line in (DEMO / "framingqa" / "items.jsonl").read_text().splitlines()]
    first = next(r["context_id"] for r in rows if r["task"].startswith("law"))
    chosen = [r for r in rows if r["context_id"] == first and r["phrasing"] in ("Q1", "")]
    out.mkdir(parents=True)
    (out / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in chosen))
    return out


def _inspect(task: str, task_args: dict, model_dir: Path, log_dir: Path, limit: int | None = None) -> Path:
    """``inspect eval`` as a user runs it (from another folder: run from the checkout, ``python -m``
    would find the checkout's build metadata before the editable install and miss the tasks)."""
    argv = [str(Path(sys.executable).parent / "inspect"), "eval", task, "--model", "hf/smollm2-135m-instruct",
            "-M", f"model_path={model_dir}", "-M", "do_sample=false", "-M", "device=cpu",
            "--log-dir", str(log_dir), "--display", "none",
            *[a for k, v in task_args.items() for a in ("-T", f"{k}={v}")],
            *(["--limit", str(limit)] if limit else [])]
    done = subprocess.run(argv, cwd=log_dir.parent, env={**os.environ, "HF_HUB_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (log,) = log_dir.glob("*.eval")
    assert read_eval_log(str(log), header_only=True).status == "success"
    return log


@pytest.fixture(scope="module")
def law(tmp_path_factory, smollm2_dir) -> dict:
    """The subset, Inspect's log of it and framebench's own ``hf:`` run of it (with wall times)."""
    root = tmp_path_factory.mktemp("inspect")
    data = _first_law_subset(root / "data")
    t0 = time.perf_counter()
    log = _inspect("framebench/framingqa", {"data": data}, smollm2_dir, root / "logs")
    t1 = time.perf_counter()
    api.run_text(f"hf:{smollm2_dir}", data, root / "fb-hf", progress=False)
    t2 = time.perf_counter()
    return {"root": root, "data": data, "log": log, "fb": root / "fb-hf",
            "seconds": {"inspect": t1 - t0, "framebench": t2 - t1}}


@pytest.fixture(scope="module")
def imported(law) -> Path:
    out = law["root"] / "imported"
    main_code = _main(["import", "inspect", str(law["log"]), "--data", str(law["data"]), "--out", str(out)])
    assert main_code == 0
    return out


def _main(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code or 0


def test_samples_are_framebench_items(law):
    log = read_eval_log(str(law["log"]))
    prompts = {json.loads(line)["item_id"]: json.loads(line)["prompt"]
               for line in (law["fb"] / "prompts.jsonl").read_text().splitlines()}
    items = {json.loads(line)["item_id"]: json.loads(line)
             for line in (law["data"] / "items.jsonl").read_text().splitlines()}
    assert sorted(s.id for s in log.samples) == sorted(items)
    for sample in log.samples:
        item = items[sample.id]
        assert [m.role for m in sample.messages] == ["user", "assistant"]  # no system turn
        assert sample.messages[0].text == prompts[sample.id]
        assert sample.target == item["gold"]
        assert (sample.choices or []) == item["options"]
        assert {k: sample.metadata[k] for k in item} == item
    for fmt, budget in (("binary", 8), ("mc", 16)):
        used = [s.output.usage.output_tokens for s in log.samples if s.metadata["format"] == fmt]
        assert used and max(used) <= budget and all(s.metadata["max_new_tokens"] == budget
                                                    for s in log.samples if s.metadata["format"] == fmt)


def test_import_agrees_with_framebench_hf(law, imported, capsys):
    mine = read_records(imported).set_index("item_id")
    theirs = read_records(law["fb"]).set_index("item_id")
    assert sorted(mine.index) == sorted(theirs.index)
    same = (mine["answer"] == theirs.loc[mine.index, "answer"]) & (mine["parse"] == theirs.loc[mine.index, "parse"])
    assert same.mean() >= 0.99, mine.loc[~same, ["output"]].join(theirs["output"], rsuffix="_fb")
    with capsys.disabled():
        print(f"\ninspect vs framebench hf: {len(mine)} items, agreement {same.mean():.1%}, "
              f"wall {law['seconds']['inspect']:.0f} s vs {law['seconds']['framebench']:.0f} s")


def test_log_metrics_equal_framebench_score(law, imported):
    log = read_eval_log(str(law["log"]), header_only=True)
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    report = api.score([imported]).report
    model = read_records(imported)["model"].iloc[0]
    for fmt in ("binary", "mc"):
        assert metrics[f"strict_accuracy_{fmt}"] == report["framingqa"][model]["all"][fmt]["strict_all"]
        assert metrics[f"framing_effect_{fmt}"] == report["headline"][model][fmt]["framing_effect"]
    rows = read_records(imported)
    assert metrics["accuracy"] == (rows["correct"] & (rows["parse"] == "ok")).mean()


def test_run_json_carries_the_log(law, imported):
    info = json.loads((imported / "run.json").read_text())
    log = read_eval_log(str(law["log"]), header_only=True)
    (entry,) = info["inspect_logs"]
    assert info["model"] == log.eval.model == entry["model"]
    assert entry["inspect_version"] == log.eval.packages["inspect_ai"]
    assert entry["task_args"] == log.eval.task_args and entry["created"] == log.eval.created
    assert entry["log_sha256"] == file_sha256(law["log"])
    assert info["score_disagreements"] == [] and info["left_out"] == 0
    assert info["executor"] == {"kind": "import"}  # made elsewhere: no executor ran it


def _edited(law, name: str, edit) -> Path:
    log = read_eval_log(str(law["log"]))
    edit(log)
    path = law["root"] / "bad" / f"{name}.eval"
    path.parent.mkdir(exist_ok=True)
    write_eval_log(log, str(path))
    return path


def _rename_task(log) -> None:
    log.eval.task = log.eval.task_registry_name = "other/qa"


def _unknown_sample(log) -> None:
    log.samples[3].id = "not-an-item"


def _no_output(log) -> None:
    log.samples[2].output = ModelOutput(model=log.eval.model)


def _cancelled(log) -> None:
    log.status = "cancelled"


def _errored(log) -> None:
    log.status = "error"
    log.error = EvalError(message="RuntimeError: worker died", traceback="", traceback_ansi="")
    log.samples[1].error = EvalError(message="RuntimeError: worker died", traceback="", traceback_ansi="")


def _write(law, name: str, content: bytes) -> Path:
    path = law["root"] / "bad" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(content)
    return path


BAD = {
    "other-task": (lambda law: _edited(law, "other-task", _rename_task), "not a framebench task", None),
    "unknown-sample": (lambda law: _edited(law, "unknown-sample", _unknown_sample), "no item", "not-an-item"),
    "no-output": (lambda law: _edited(law, "no-output", _no_output), "has no output", 2),
    "cancelled": (lambda law: _edited(law, "cancelled", _cancelled), "status cancelled", None),
    "errored": (lambda law: _edited(law, "errored", _errored), "status error", None),
    "truncated": (lambda law: _write(law, "truncated.eval", law["log"].read_bytes()[: law["log"].stat().st_size // 2]),
                  "not a readable Inspect log", None),
    "not-zip": (lambda law: _write(law, "not-zip.eval", b"this is not a zip archive\n"), "not a readable Inspect log", None),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_exit_2(law, case, capsys):
    make, says, sample = BAD[case]
    path = make(law)
    if isinstance(sample, int):
        sample = read_eval_log(str(path)).samples[sample].id
    out = law["root"] / f"out-{case}"
    code, _, err = run_cli(["import", "inspect", str(path), "--data", str(law["data"]), "--out", str(out)], capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and str(path) in err and says in err, err
    if sample is not None:
        assert repr(sample) in err
    assert not out.exists()


def test_partial_imports_the_complete_samples(law, capsys):
    path = _edited(law, "errored-partial", _errored)
    out = law["root"] / "partial"
    code, stdout, err = run_cli(["import", "inspect", str(path), "--data", str(law["data"]), "--out", str(out),
                                 "--partial"], capsys)
    assert code == 0, err
    n = len(read_eval_log(str(path)).samples)
    assert "1 incomplete sample(s) left out" in stdout
    assert len(read_records(out)) == n - 1
    assert json.loads((out / "run.json").read_text())["left_out"] == 1


def test_two_models_are_refused_into_one_run(law, capsys):
    other = _edited(law, "other-model", lambda log: setattr(log.eval, "model", "hf/another"))
    out = law["root"] / "two-models"
    code, _, err = run_cli(["import", "inspect", str(law["log"]), str(other), "--data", str(law["data"]),
                            "--out", str(out)], capsys)
    assert code == 2 and "own run folder" in err and not out.exists()


def test_omit_rates_equal_framebench_score(tmp_path, smollm2_dir, capsys):
    """OMIT M0 on the first two demo scenarios (both frames each): OBR / ABR / FCR agree."""
    log = _inspect("framebench/omit", {"data": DEMO / "omit"}, smollm2_dir, tmp_path / "logs", limit=4)
    out = tmp_path / "imported"
    code, _, err = run_cli(["import", "inspect", str(log), "--data", str(DEMO / "omit"), "--out", str(out)], capsys)
    assert code == 0, err
    header = read_eval_log(str(log), header_only=True)
    metrics = {name: m.value for s in header.results.scores for name, m in s.metrics.items()}
    rows = read_records(out)
    assert len(rows) == 4 and set(rows["condition"]) == {"M0"}
    rates = api.score([out]).report["omit"]["rates"][rows["model"].iloc[0]]["M0"]
    assert rates["n"] >= 1
    for key in ("OBR", "ABR", "FCR"):
        assert metrics[f"{key}_M0"] == rates[key]


def test_system_turn_travels_to_inspect_and_back(tmp_path, smollm2_dir, capsys):
    """OMIT M3 sends a system turn: the Inspect sample carries it before the user message, and the
    import checks both turns and keeps them in prompts.jsonl."""
    from framebench.interop.samples import item_of, job_of

    log_path = _inspect("framebench/omit", {"data": DEMO / "omit", "condition": "M3"}, smollm2_dir, tmp_path / "logs",
                       limit=2)
    log = read_eval_log(str(log_path))
    for sample in log.samples:
        item, condition = item_of(sample.metadata)
        job = job_of(item, condition, "test")
        assert condition == "M3" and job.chat[0]["role"] == "system"
        assert [m.role for m in sample.input] == ["system", "user"]
        assert [m.text for m in sample.input] == [job.chat[0]["content"], job.prompt]
    out = tmp_path / "imported"
    code, _, err = run_cli(["import", "inspect", str(log_path), "--data", str(DEMO / "omit"), "--out", str(out)], capsys)
    assert code == 0, err
    rows = read_records(out)
    assert len(rows) == 2 and set(rows["condition"]) == {"M3"}
    assert list(rows["output"]) == [s.output.completion for s in sorted(log.samples, key=lambda s: str(s.id))]
    prompts = [json.loads(line) for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert [[turn["role"] for turn in p["chat"]] for p in prompts] == [["system", "user"]] * 2
    # a sample that lost its system turn is not what framebench renders: refused, nothing written
    log.samples[0].input = log.samples[0].input[1:]
    write_eval_log(log, str(tmp_path / "edited.eval"))
    code, _, err = run_cli(["import", "inspect", str(tmp_path / "edited.eval"), "--data", str(DEMO / "omit"),
                            "--out", str(tmp_path / "refused")], capsys)
    assert code == 2 and "not the one framebench renders" in err and not (tmp_path / "refused").exists()
