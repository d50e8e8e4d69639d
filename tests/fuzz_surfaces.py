"""The bad-input corpus of issue 45: ``import inspect``, ``import lm-eval``, ``export hf|lm-eval``,
``sweep`` and the usage errors of every command, on real files written by the real tools.

The seeds are made once per process: Inspect AI logs of ``framebench/framingqa`` and
``framebench/omit`` run by Inspect's ``mockllm`` provider (no weights; its outputs answer the
question asked), lm-eval's ``--log_samples`` output of ``framebench export lm-eval``'s tasks run by
lm-eval's ``dummy`` model, and small items folders cut from the demo sets. Each case copies a seed,
damages it the way files get damaged or mistyped, and returns the command line with the parts its
one error line must name (the file, the line or sample, the field). The cases run through
``fuzz_corpus.run_case``: exit 2, one ``error:`` line naming those parts, no traceback, nothing
under ``out``.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from fuzz_corpus import DEMO, Case, _json_line_mutations, _jsonl, byte_mutations

Made = tuple[list[str], list[str]]  # (command line, what its error line must name)
SEED_ITEMS = ("binary:correct/root/plain/Q1", "binary:incorrect/root/plain/Q1/d1", "mc:neutral",
              "mc:incorrect/root/plain/Q1/d1")


# ---------- seeds: real files from the real tools ----------

@functools.cache
def _root() -> Path:
    holder = tempfile.TemporaryDirectory(prefix="framebench-surfaces-")
    _root.holder = holder  # type: ignore[attr-defined]  # removed when the process ends
    return Path(holder.name)


@functools.cache
def seed_data() -> dict[str, Path]:
    """Items folders: four FramingQA items of the first demo law context (binary and MC, correct-
    and incorrect-bias) with its contexts.jsonl line and the build report; two OMIT scenarios."""
    rows = [json.loads(line) for line in (DEMO / "framingqa" / "items.jsonl").open(encoding="utf-8")]
    first = rows[0]["context_id"]
    chosen = [r for r in rows if r["context_id"] == first and r["item_id"].split(":", 1)[1] in SEED_ITEMS]
    assert len(chosen) == len(SEED_ITEMS)
    fq = _root() / "data" / "framingqa"
    fq.mkdir(parents=True)
    (fq / "items.jsonl").write_bytes(_jsonl(chosen))
    contexts = [line for line in (DEMO / "framingqa" / "contexts.jsonl").open(encoding="utf-8")
                if json.loads(line)["context_id"] == first]
    (fq / "contexts.jsonl").write_text("".join(contexts), encoding="utf-8")
    shutil.copy(DEMO / "framingqa" / "build_report.md", fq / "build_report.md")
    omit = _root() / "data" / "omit"
    omit.mkdir()
    scenarios = [json.loads(line) for line in (DEMO / "omit" / "items.jsonl").open(encoding="utf-8")][:4]
    (omit / "items.jsonl").write_bytes(_jsonl(scenarios))
    shutil.copy(DEMO / "omit" / "build_report.md", omit / "build_report.md")
    return {"framingqa": fq, "omit": omit}


def _inspect_seed(root: Path, framingqa: Path, omit: Path) -> None:
    """Run in a child process (Inspect sets up its own logging and event loop): both tasks on
    ``mockllm``, whose outputs answer in the form each prompt asks for."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages, tools, tool_choice, config):
        text = messages[-1].text
        reply = "A" if "\nA)" in text else ("ANSWER: no" if "ANSWER:" in text else "Yes")
        output = ModelOutput.from_content(model="mockllm", content=reply)
        output.usage = ModelUsage(input_tokens=len(text.split()), output_tokens=1, total_tokens=len(text.split()) + 1)
        return output  # usage set: mockllm counts no tokens (its tokenizer download needs a network)

    model = get_model("mockllm/model", custom_outputs=answer)
    for name, data in (("framingqa", framingqa), ("omit", omit)):
        (log,) = inspect_eval(f"framebench/{name}", model=model, task_args={"data": str(data)},
                              log_dir=str(root / name), display="none")
        assert log.status == "success", log.error
        (path,) = (root / name).glob("*.eval")
        path.rename(root / f"{name}.eval")
        write_eval_log(read_eval_log(str(root / f"{name}.eval")), str(root / f"{name}.json"))


@functools.cache
def inspect_seed() -> dict[str, Path]:
    """``framingqa.eval``, ``omit.eval`` and ``framingqa.json`` (the same log as JSON)."""
    data, root = seed_data(), _root() / "inspect"
    root.mkdir()
    done = subprocess.run([sys.executable, __file__, "inspect-seed", str(root), str(data["framingqa"]),
                           str(data["omit"])], capture_output=True, text=True, timeout=600, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"framingqa": root / "framingqa.eval", "omit": root / "omit.eval", "json": root / "framingqa.json"}


@functools.cache
def lm_eval_seed() -> dict[str, Path]:
    """``framebench export lm-eval`` of the FramingQA seed, then the ``lm_eval`` command with the
    ``dummy`` model and ``--log_samples``: its output folder (results and four samples files)."""
    from fuzz_corpus import run_case

    data, root = seed_data()["framingqa"], _root() / "lm-eval"
    root.mkdir()
    export = Case("seed", "export", lambda tmp: ["export", "lm-eval", str(data), "--out", str(root / "tasks")])
    assert run_case(export, root).kind == "accepted"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "dummy", "--include_path",
                           str(root / "tasks"), "--tasks", "framebench_framingqa", "--log_samples", "--output_path",
                           str(root / "out")], capture_output=True, text=True, timeout=600, env=env, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"out": root / "out", "data": data}


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# ---------- helpers: damaged copies ----------

def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _loop(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to(path.name)  # a link to itself: ELOOP


def _folder(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.mkdir()


def _dangling(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to(path.with_name("gone"))


NOT_A_FILE: dict[str, Callable[[Path], None]] = {"folder": _folder, "symlink_loop": _loop, "fifo": _fifo,
                                                 "dangling_link": _dangling}


def _edit_lines(path: Path, edit: Callable[[list[dict]], list[dict] | None]) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (edit(rows) or rows)), encoding="utf-8")


# ---------- import lm-eval ----------

def _lm_copy(tmp: Path) -> tuple[Path, dict[str, Path], Path]:
    seed = lm_eval_seed()
    out = tmp / "lm-out"
    shutil.copytree(seed["out"], out)
    (results,) = out.rglob("results_*.json")
    samples = {p.name.split("framebench_framingqa_law_issue_spotting_")[1].rsplit("_2", 1)[0]: p
               for p in out.rglob("samples_*.jsonl")}
    return out, samples, results


def _lm_argv(tmp: Path, output: Path, data: Path | None = None) -> list[str]:
    return ["import", "lm-eval", str(output), "--data", str(data or lm_eval_seed()["data"]), "--out", str(tmp / "out")]


def lm_eval_cases() -> list[Case]:
    def case(name: str, damage: Callable[[Path, dict[str, Path], Path], list[str]]) -> Case:
        def make(tmp: Path) -> Made:
            output, samples, results = _lm_copy(tmp)
            return _lm_argv(tmp, output), damage(output, samples, results)
        return Case("import_lm_eval", name, make)

    def on_sample(name: str, which: str, line: int, edit: Callable[[dict], object], *fields: str) -> Case:
        def damage(output, samples, results):
            def change(rows):
                edit(rows[line - 1])
            _edit_lines(samples[which], change)
            return [f"{samples[which]}: line {line}", *fields]
        return case(name, damage)

    cases: list[Case] = []
    # the samples file's bytes, and what stands where it should be
    first = _lm_first_sample_bytes()
    for key, payload in byte_mutations(first).items():
        def damage(output, samples, results, payload=payload):
            samples["binary_gen"].write_bytes(payload)
            return [str(samples["binary_gen"])]
        cases.append(case(f"samples_bytes_{key}", damage))
    for key, make in NOT_A_FILE.items():
        def damage(output, samples, results, make=make):
            make(samples["mc_loglik"])
            return [str(samples["mc_loglik"])]
        cases.append(case(f"samples_{key}", damage))

    def oversized(output, samples, results):
        from framebench.jsonl import MAX_LINE_CHARS

        with samples["binary_gen"].open("ab") as fh:
            fh.write(b'{"doc_id": 1, "filtered_resps": ["' + b"a" * MAX_LINE_CHARS + b'"]}\n')
        return [f"{samples['binary_gen']}: line 3", "longer than any sample"]
    cases.append(case("samples_oversized_line", oversized))
    for key, payload in _json_line_mutations({"doc_id": 0}).items():
        if key in ("nan_line", "infinity"):
            continue  # lm-eval writes NaN in fields framebench does not read; the reader allows it
        def damage(output, samples, results, payload=payload):
            lines = samples["binary_gen"].read_bytes().split(b"\n")
            lines[1] = payload.rstrip(b"\n")
            samples["binary_gen"].write_bytes(b"\n".join(lines))
            return [f"{samples['binary_gen']}: line 2"]
        cases.append(case(f"samples_{key}", damage))

    def raw_line(name: str, which: str, old: bytes, new: bytes, *fields: str) -> Case:
        def damage(output, samples, results):
            lines = samples[which].read_bytes().split(b"\n")
            assert re.search(old, lines[0]), (which, old)
            lines[0] = re.sub(old, new.replace(b"\\", b"\\\\"), lines[0], count=1)
            samples[which].write_bytes(b"\n".join(lines))
            return [f"{samples[which]}: line 1", *fields]
        return case(name, damage)

    # generated text: not UTF-8, a lone surrogate, a NUL
    gen = rb'"filtered_resps": \["lol"\]'
    cases += [raw_line("gen_invalid_bytes", "binary_gen", gen, b'"filtered_resps": ["lol\xff\xfe"]'),
              raw_line("gen_lone_surrogate", "binary_gen", gen, b'"filtered_resps": ["lol\\ud800"]',
                       "filtered_resps[0]", "lone surrogate"),
              raw_line("gen_nul", "binary_gen", gen, b'"filtered_resps": ["lol\\u0000"]', "filtered_resps[0]", "NUL"),
              raw_line("loglik_minus_infinity_constant", "mc_loglik", rb'"filtered_resps": \[\["[^"]*"',
                       b'"filtered_resps": [[-Infinity', "filtered_resps[0][0]"),
              raw_line("loglik_nan_constant", "binary_loglik", rb'"filtered_resps": \[\["[^"]*"',
                       b'"filtered_resps": [[NaN', "filtered_resps[0][0]")]
    # log-likelihoods: each must be a finite number <= 0 (lm-eval writes them as text)
    logliks = {"all_minus_inf": "-inf", "plus_inf": "inf", "nan": "nan", "huge": "1e300", "positive": "0.5",
               "word": "likely", "empty": "", "hex": "0x1p-3", "underscored": "-1_000", "number_nan": float("nan"),
               "number_positive": 2.5, "bool": True, "null": None, "list": [-1.0]}
    for key, value in logliks.items():
        def edit(sample, value=value, every=key == "all_minus_inf"):
            for i, pair in enumerate(sample["filtered_resps"]):
                if every or i == 0:
                    pair[0] = value
        cases.append(on_sample(f"loglik_{key}", "binary_loglik", 2, edit, "filtered_resps[0][0]"))
    shapes = {"resps_missing": lambda s: s.pop("filtered_resps"), "resps_string": lambda s: s.update(filtered_resps="x"),
              "resps_short": lambda s: s.update(filtered_resps=s["filtered_resps"][:-1]),
              "resps_extra": lambda s: s.update(filtered_resps=[*s["filtered_resps"], ["-1.0", "False"]]),
              "resps_pair_empty": lambda s: s.update(filtered_resps=[[]] * len(s["filtered_resps"])),
              "resps_numbers": lambda s: s.update(filtered_resps=[-1.0] * len(s["filtered_resps"]))}
    cases += [on_sample(f"loglik_{k}", "mc_loglik", 1, v, "filtered_resps") for k, v in shapes.items()]
    gen_shapes = {"gen_missing": lambda s: s.pop("filtered_resps"), "gen_two": lambda s: s.update(filtered_resps=["a", "b"]),
                  "gen_number": lambda s: s.update(filtered_resps=[5]), "gen_null": lambda s: s.update(filtered_resps=[None]),
                  "gen_nested": lambda s: s.update(filtered_resps=[["lol"]]), "gen_empty": lambda s: s.update(filtered_resps=[])}
    cases += [on_sample(k, "mc_gen", 2, v, "filtered_resps") for k, v in gen_shapes.items()]
    # ids and the doc: the types lm-eval gives them, and what DATA exports
    doc_ids = {"bool": True, "string": "0", "float": 0.0, "negative": -1, "null": None, "huge": 10**30, "beyond": 99,
               "list": [0]}
    cases += [on_sample(f"doc_id_{k}", "binary_gen", 1, lambda s, v=v: s.update(doc_id=v), "doc_id")
              for k, v in doc_ids.items()]
    doc_fields = {"item_id_int": ("item_id", 7), "item_id_list": ("item_id", ["x"]), "item_id_null": ("item_id", None),
                  "item_id_unknown": ("item_id", "demo-law-9:mc:neutral"), "record_id_int": ("record_id", 3),
                  "suite_int": ("suite", 1), "suite_omit": ("suite", "omit"), "condition_int": ("condition", 3),
                  "condition_unknown": ("condition", "M9"), "condition_other": ("condition", "M2"),
                  "prompt_changed": ("prompt", "Is it?"), "forms_changed": ("forms", ["Yes", "No"]),
                  "gold_changed": ("gold", "No")}
    for key, (name, value) in doc_fields.items():
        cases.append(on_sample(f"doc_{key}", "binary_loglik", 1, lambda s, n=name, v=value: s["doc"].update({n: v}),
                               f"doc.{name}" if key != "item_id_unknown" else "doc.item_id"))
    cases += [on_sample("doc_missing", "mc_gen", 1, lambda s: s.pop("doc")),
              on_sample("doc_string", "mc_gen", 1, lambda s: s.update(doc="x"))]

    def duplicated(output, samples, results):
        _edit_lines(samples["mc_gen"], lambda rows: [*rows, rows[0]])
        counts = json.loads(results.read_text(encoding="utf-8"))
        counts["n-samples"]["framebench_framingqa_law_issue_spotting_mc_gen"]["effective"] = 3
        results.write_text(json.dumps(counts), encoding="utf-8")
        return [f"{samples['mc_gen']}: line 3", "doc_id 0 is logged twice"]
    cases.append(case("doc_logged_twice", duplicated))
    # the results file
    cases += _lm_results_cases(case)

    def folder_case(name: str, damage: Callable[[Path], Path], expect: str) -> Case:
        def make(tmp: Path) -> Made:
            output, _, _ = _lm_copy(tmp)
            target = damage(output)
            return _lm_argv(tmp, target), [expect.format(output=output)]
        return Case("import_lm_eval", name, make)

    def empty(output: Path) -> Path:
        shutil.rmtree(output)
        output.mkdir()
        return output

    def no_samples(output: Path) -> Path:
        for p in output.rglob("samples_*"):
            p.unlink()
        return output

    def a_file(output: Path) -> Path:
        shutil.rmtree(output)
        output.write_text("not a folder")
        return output

    def second_results(output: Path) -> Path:
        (results,) = output.rglob("results_*.json")
        shutil.copy(results, results.with_name("results_2020-01-01T00-00-00.000000.json"))
        return output

    cases += [folder_case("output_empty", empty, "{output}"), folder_case("output_no_samples", no_samples, "{output}"),
              folder_case("output_is_a_file", a_file, "{output}"),
              folder_case("output_two_results", second_results, "{output}")]

    def data_case(name: str, items: Callable[[list[dict]], list[dict]], expect: str) -> Case:
        def make(tmp: Path) -> Made:
            output, samples, _ = _lm_copy(tmp)
            data = tmp / "data"
            data.mkdir()
            rows = [json.loads(line) for line in (lm_eval_seed()["data"] / "items.jsonl").open(encoding="utf-8")]
            (data / "items.jsonl").write_bytes(_jsonl(items(rows)))
            return _lm_argv(tmp, output, data), [str(samples["binary_gen"]) if expect == "samples" else expect]
        return Case("import_lm_eval", name, make)

    cases += [data_case("data_lacks_an_item", lambda rows: rows[1:], "samples"),
              data_case("data_other_question", lambda rows: [{**rows[0], "question": "Is it so?"}, *rows[1:]], "samples")]
    return cases


def _lm_first_sample_bytes() -> bytes:
    return b"".join(p.read_bytes() for p in lm_eval_seed()["out"].rglob("samples_*binary_gen*.jsonl"))


def _lm_results_cases(case: Callable) -> list[Case]:
    cases = []

    def results_bytes(payload: bytes) -> Callable:
        def damage(output, samples, results):
            results.write_bytes(payload)
            return [str(results)]
        return damage

    seed = next(lm_eval_seed()["out"].rglob("results_*.json")).read_bytes()
    for key, payload in byte_mutations(seed).items():
        cases.append(case(f"results_bytes_{key}", results_bytes(payload)))
    for key, make in NOT_A_FILE.items():
        def damage(output, samples, results, make=make):
            make(results)
            return [str(results)]
        cases.append(case(f"results_{key}", damage))

    def edit(change: Callable[[dict], object], *fields: str) -> Callable:
        def damage(output, samples, results):
            value = json.loads(results.read_text(encoding="utf-8"))
            change(value)
            results.write_text(json.dumps(value), encoding="utf-8")
            return [str(results), *fields]
        return damage

    task = "framebench_framingqa_law_issue_spotting_binary_gen"
    edits = {
        "configs_missing": (lambda v: v.pop("configs"), "configs"),
        "configs_list": (lambda v: v.update(configs=[]), "configs"),
        "config_not_object": (lambda v: v["configs"].update({task: "x"}), f"configs.{task}.metadata"),
        "metadata_missing": (lambda v: v["configs"][task].pop("metadata"), f"configs.{task}.metadata"),
        "metadata_list": (lambda v: v["configs"][task].update(metadata=["framebench"]), f"configs.{task}.metadata"),
        "task_missing": (lambda v: v["configs"].pop(task), task),
        "n_samples_list": (lambda v: v.update({"n-samples": []}), "n-samples"),
        "n_samples_other_count": (lambda v: v["n-samples"][task].update(effective=99), "another run"),
        "config_list": (lambda v: v.update(config=[1]), "'config'"),
        "versions_string": (lambda v: v.update(versions="1"), "versions"),
        "top_list": (lambda v: v.clear(), "configs"),
    }
    for key, (change, expect) in edits.items():
        if key == "top_list":
            def damage(output, samples, results):
                results.write_text("[1, 2]", encoding="utf-8")
                return [str(results), "configs"]
            cases.append(case(f"results_{key}", damage))
            continue
        cases.append(case(f"results_{key}", edit(change, expect)))
    return cases


# ---------- import inspect ----------

def inspect_cases() -> list[Case]:
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log
    from inspect_ai.model import ChatMessageUser, ModelOutput

    def edited(name: str, edit: Callable[[object], object], expect: Callable[[Path, object], list[str]],
               suite: str = "framingqa") -> Case:
        def make(tmp: Path) -> Made:
            log = read_eval_log(str(inspect_seed()[suite]))
            edit(log)
            path = tmp / f"{name}.eval"
            write_eval_log(log, str(path))
            return _inspect_argv(tmp, [path], suite), expect(path, log)
        return Case("import_inspect", name, make)

    def sample_named(index: int, *more: str) -> Callable[[Path, object], list[str]]:
        return lambda path, log: [f"{path}: sample {log.samples[index].id!r}", *more]

    def file_only(*more: str) -> Callable[[Path, object], list[str]]:
        return lambda path, log: [str(path), *more]

    def setter(index: int, **values: object) -> Callable[[object], None]:
        def edit(log):
            for key, value in values.items():
                setattr(log.samples[index], key, value)
        return edit

    def task(name: str) -> Callable[[object], None]:
        def edit(log):
            log.eval.task = log.eval.task_registry_name = name
        return edit

    def task_args(**values: object) -> Callable[[object], None]:
        return lambda log: log.eval.task_args.update(values)

    def status(value: str, error: bool = False) -> Callable[[object], None]:
        def edit(log):
            log.status = value
            if error:
                log.error = EvalError(message="RuntimeError: worker died\n" + "x" * 5000, traceback="", traceback_ansi="")
        return edit

    def output(index: int, text: str | None) -> Callable[[object], None]:
        def edit(log):
            log.samples[index].output = ModelOutput(model=log.eval.model) if text is None else \
                ModelOutput.from_content(model=log.eval.model, content=text)
        return edit

    def sample_error(log) -> None:
        log.samples[1].error = EvalError(message="RuntimeError: boom", traceback="", traceback_ansi="")

    def input_roles(log) -> None:
        text = log.samples[0].input if isinstance(log.samples[0].input, str) else log.samples[0].input[-1].text
        log.samples[0].input = [ChatMessageUser(content=text), ChatMessageUser(content=text)]

    def no_samples(log) -> None:
        log.samples = []

    def epochs(log) -> None:
        log.samples = [*log.samples, log.samples[0].model_copy(update={"epoch": 2})]

    cases = [
        edited("task_other", task("other/qa"), file_only("not a framebench task")),
        edited("task_omit_on_framingqa_samples", task("framebench/omit"), sample_named(0, "framebench/omit")),
        edited("task_nosuch_suite", task("framebench/nosuch"), file_only("not a framebench task")),
        edited("task_framingqa_on_omit_samples", task("framebench/framingqa"), sample_named(0, "framebench/framingqa"),
               suite="omit"),
        edited("status_started", status("started"), file_only("status started")),
        edited("status_cancelled", status("cancelled"), file_only("status cancelled")),
        edited("status_error_long_message", status("error", error=True), file_only("status error")),
        edited("sample_id_int", setter(0, id=7), sample_named(0, "field 'id'")),
        edited("sample_id_unknown", setter(2, id="not-an-item"), sample_named(2, "no item")),
        edited("sample_id_long", setter(2, id="y" * 50_000), file_only("no item")),
        edited("sample_no_output", output(1, None), sample_named(1, "has no output")),
        edited("sample_error", sample_error, sample_named(1, "errored")),
        edited("sample_input_twice", input_roles, sample_named(0, "prompt")),
        edited("sample_input_changed", setter(3, input=[ChatMessageUser(content="Is it?")]), sample_named(3, "prompt")),
        edited("sample_output_nul", output(0, "Yes\x00"), sample_named(0, "output.completion", "NUL")),
        edited("samples_none", no_samples, file_only("no complete samples")),
        edited("samples_epochs", epochs, file_only("also in this log")),
        edited("condition_on_framingqa", task_args(condition="M0"), file_only("eval.task_args.condition")),
        edited("condition_unknown", task_args(condition="M9"), file_only("eval.task_args.condition", "'M9'"), suite="omit"),
        edited("condition_int", task_args(condition=3), file_only("eval.task_args.condition"), suite="omit"),
        edited("condition_list", task_args(condition=["M0"]), file_only("eval.task_args.condition"), suite="omit"),
    ]

    def raw(name: str, damage: Callable[[Path], Path], *expect: str) -> Case:
        def make(tmp: Path) -> Made:
            path = damage(tmp)
            return _inspect_argv(tmp, [path]), [str(path), *expect]
        return Case("import_inspect", name, make)

    def copy_bytes(payload: Callable[[bytes], bytes], suffix: str = ".eval") -> Callable[[Path], Path]:
        def damage(tmp: Path) -> Path:
            path = tmp / f"log{suffix}"
            source = inspect_seed()["json" if suffix == ".json" else "framingqa"]
            path.write_bytes(payload(source.read_bytes()))
            return path
        return damage

    zips = {"truncated": lambda b: b[: len(b) // 2], "empty": lambda b: b"", "not_zip": lambda b: b"not a zip\n",
            "random": lambda b: bytes(range(256)) * 8, "gzip": gzip.compress, "tail_cut": lambda b: b[:-22]}
    cases += [raw(f"eval_{k}", copy_bytes(v), "not a readable Inspect log") for k, v in zips.items()]
    jsons = {"invalid_utf8": lambda b: b.replace(b'"Yes"', b'"Yes\xff\xfe"', 1), "truncated": lambda b: b[: len(b) // 2],
             "nan_score": lambda b: b.replace(b'"accuracy"', b'"accuracy": NaN, "x"', 1),
             "lone_surrogate": lambda b: b.replace(b'"completion": "Yes"', b'"completion": "Yes\\ud800"', 1),
             "deep": lambda b: b"[" * 100_000 + b"]" * 100_000, "top_list": lambda b: b"[1, 2]"}
    cases += [raw(f"json_{k}", copy_bytes(v, ".json")) for k, v in jsons.items()]
    for key, make_bad in NOT_A_FILE.items():
        def damage(tmp: Path, make_bad=make_bad) -> Path:
            path = tmp / "log.eval"
            path.write_bytes(b"")
            make_bad(path)
            return path
        cases.append(raw(f"log_{key}", damage))

    def two_models(tmp: Path) -> Made:
        log = read_eval_log(str(inspect_seed()["framingqa"]))
        log.eval.model = "mockllm/other"
        other = tmp / "other.eval"
        write_eval_log(log, str(other))
        return _inspect_argv(tmp, [inspect_seed()["framingqa"], other]), [str(inspect_seed()["framingqa"]), "2 models"]

    def same_samples(tmp: Path) -> Made:
        copy = tmp / "copy.eval"
        shutil.copy(inspect_seed()["framingqa"], copy)
        return _inspect_argv(tmp, [inspect_seed()["framingqa"], copy]), [str(copy), "also in"]

    def data_lacks(tmp: Path) -> Made:
        data = tmp / "data"
        data.mkdir()
        rows = (seed_data()["framingqa"] / "items.jsonl").read_bytes().splitlines(keepends=True)
        (data / "items.jsonl").write_bytes(b"".join(rows[1:]))
        log = inspect_seed()["framingqa"]
        first = read_eval_log(str(log)).samples
        missing = json.loads(rows[0])["item_id"]
        assert any(s.id == missing for s in first)
        return ["import", "inspect", str(log), "--data", str(data), "--out", str(tmp / "out")], \
            [f"{log}: sample {missing!r}", "no item"]

    cases += [Case("import_inspect", "two_models", two_models), Case("import_inspect", "same_samples_twice", same_samples),
              Case("import_inspect", "data_lacks_an_item", data_lacks)]
    return cases


def _inspect_argv(tmp: Path, logs: list[Path], suite: str = "framingqa") -> list[str]:
    return ["import", "inspect", *map(str, logs), "--data", str(seed_data()[suite]), "--out", str(tmp / "out")]


# ---------- export hf | lm-eval ----------

def export_cases() -> list[Case]:
    def case(name: str, damage: Callable[[Path], list[str]], kind: str = "hf", suite: str = "framingqa",
             extra: tuple[str, ...] = ()) -> Case:
        def make(tmp: Path) -> Made:
            data = tmp / "data"
            shutil.copytree(seed_data()[suite], data)
            expect = damage(data)
            return ["export", kind, str(data), "--out", str(tmp / "out"), *extra], expect
        return Case("export", f"{kind}_{name}", make)

    def contexts(payload: bytes, *more: str) -> Callable[[Path], list[str]]:
        def damage(data: Path) -> list[str]:
            (data / "contexts.jsonl").write_bytes(payload)
            return [str(data / "contexts.jsonl"), *more]
        return damage

    context = json.loads((seed_data()["framingqa"] / "contexts.jsonl").read_text(encoding="utf-8"))
    valid = _jsonl([context])
    cases = [case(f"contexts_bytes_{k}", contexts(v)) for k, v in byte_mutations(valid).items()
             if k not in ("empty", "whitespace_only")]  # no notes: the card says the source is unknown
    cases += [case(f"contexts_{k}", contexts(v, "line 1")) for k, v in _json_line_mutations(context).items()]
    fields = {"context_id_missing": ({k: v for k, v in context.items() if k != "context_id"}, "context_id"),
              "context_id_int": ({**context, "context_id": 5}, "context_id"),
              "context_id_list": ({**context, "context_id": ["a"]}, "context_id"),
              "provenance_list": ({**context, "provenance": ["x"]}, "provenance"),
              "provenance_string": ({**context, "provenance": "Apache"}, "provenance"),
              "license_int": ({**context, "provenance": {**context["provenance"], "license": 2}}, "provenance.license"),
              "license_list": ({**context, "provenance": {"license": ["MIT"]}}, "provenance.license"),
              "dataset_object": ({**context, "provenance": {"dataset": {"a": 1}}}, "provenance.dataset")}
    cases += [case(f"contexts_{k}", contexts(_jsonl([row]), "line 1", f)) for k, (row, f) in fields.items()]

    def not_a_file(name: str, make_bad: Callable[[Path], None]) -> Callable[[Path], list[str]]:
        def damage(data: Path) -> list[str]:
            make_bad(data / name)
            return [str(data / name)]
        return damage

    for key, make_bad in NOT_A_FILE.items():
        cases.append(case(f"contexts_{key}", not_a_file("contexts.jsonl", make_bad)))
        cases.append(case(f"report_{key}", not_a_file("build_report.md", make_bad), suite="omit"))
        cases.append(case(f"items_{key}", not_a_file("items.jsonl", make_bad), kind="lm-eval"))

    def report(payload: bytes) -> Callable[[Path], list[str]]:
        def damage(data: Path) -> list[str]:
            (data / "build_report.md").write_bytes(payload)
            return [str(data / "build_report.md")]
        return damage

    def items_invalid_utf8(data: Path) -> list[str]:
        items = data / "items.jsonl"
        items.write_bytes(items.read_bytes().replace(b"Is ", b"Is\xff ", 1))
        return [f"{items}: line 1", "UTF-8"]

    text = (seed_data()["omit"] / "build_report.md").read_bytes()
    for key in ("invalid_utf8", "utf16", "nul_byte", "gzip", "random_binary"):
        cases.append(case(f"report_{key}", report(byte_mutations(text)[key]), suite="omit"))
    for kind in ("hf", "lm-eval"):
        cases.append(case("unknown_condition", lambda data: ["--conditions", "'M9'"], kind=kind, suite="omit",
                          extra=("--conditions", "M0,M9")))
        cases.append(case("items_invalid_utf8", items_invalid_utf8, kind=kind))
    return cases


# ---------- sweep plans ----------

EPISODES = DEMO / "robotics" / "episodes.json.gz"


def _plan(text: str | None = "", embodied: str | None = None, top: str = "", models: str = '"baseline:always-yes"',
          datasets: str = f'"{DEMO / "omit"}"', planners: str = '"oracle"', episodes: str = f'"{EPISODES}"') -> str:
    """A valid plan (a text run of the demo OMIT set; with ``embodied``, the oracle on the demo
    episodes too), with ``top``, ``text`` and ``embodied`` lines added to its tables."""
    body = f'out = "out"\nexecutor = "local"\n{top}'
    if text is not None:
        body += f"[text]\nmodels = [{models}]\ndatasets = [{datasets}]\n{text}"
    if embodied is not None:
        body += f"[embodied]\nplanners = [{planners}]\nepisodes = [{episodes}]\n{embodied}"
    return body


def sweep_cases() -> list[Case]:
    def case(name: str, body: str | bytes, *expect: str) -> Case:
        def make(tmp: Path) -> Made:
            plan = tmp / "plan.toml"
            plan.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
            return ["sweep", str(plan), "--quiet"], [str(plan), *expect]
        return Case("sweep", name, make)

    cases = [case(f"bytes_{k}", v) for k, v in byte_mutations(_plan().encode()).items()
             if k not in ("deep_nesting", "lone_surrogate")]  # TOML, not JSON: those are two more bad-TOML cases
    numbers = {"ten": '"ten"', "fraction": "2.5", "inf": "inf", "nan": "nan", "true": "true", "zero": "0",
               "negative": "-5", "huge": "9" * 30, "string_number": '"8"', "array": "[8]"}
    for field, where in (("limit", "text"), ("batch_size", "text"), ("concurrency", "text"),
                         ("replan_cap", "embodied"), ("max_new_tokens", "embodied"), ("limit", "embodied")):
        for key, value in numbers.items():
            if field == "batch_size" and key == "string_number":
                value = '"auto8"'
            line = f"{field} = {value}\n"
            body = _plan(text=line) if where == "text" else _plan(embodied=line)
            cases.append(case(f"{where}_{field}_{key}", body, f"{where}.{field}"))
    for key, value in (("true", "true"), ("zero", "0"), ("string", '"4"'), ("huge", "9" * 30)):
        cases.append(case(f"workers_{key}", _plan(top=f"workers = {value}\n"), "workers"))
    others = {
        "base_url_number": (_plan(text="base_url = 5\n"), "text.base_url"),
        "base_url_no_scheme": (_plan(text='base_url = "localhost:8000"\n'), "text.base_url"),
        "executor_number": (_plan().replace('executor = "local"', "executor = 3"), "executor"),
        "executor_unknown": (_plan().replace('"local"', '"dask"'), "executor"),
        "ray_address_number": (_plan(top="ray_address = 6379\n"), "ray_address"),
        "out_number": (_plan().replace('out = "out"', "out = 5"), "out"),
        "out_blank": (_plan().replace('out = "out"', 'out = ""'), "out"),
        "unknown_top_field": (_plan(top="model = 1\n"), "unknown field 'model'"),
        "unknown_text_field": (_plan(text="model = 1\n"), "unknown field 'model'"),
        "text_not_table": ('out = "out"\nexecutor = "local"\ntext = [1]\n', "text"),
        "second_model_unknown": (_plan(models='"baseline:always-yes", "nosuch:m"'), "text.models", "nosuch:m"),
        "second_model_bad_baseline": (_plan(models='"baseline:always-yes", "baseline:sometimes"'), "text.models"),
        "second_model_missing_folder": (_plan(models='"baseline:always-yes", "hf:/nonexistent/model"'), "text.models"),
        "second_model_no_arg": (_plan(models='"baseline:always-yes", "hf"'), "text.models"),
        "model_option_bad": (_plan(models='"openai:m"', text="concurrency = 0\n"), "text.concurrency"),
        "second_condition_unknown": (_plan(text='conditions = ["M0", "M9"]\n'), "text.conditions", "'M9'"),
        "condition_number": (_plan(text="conditions = [0]\n"), "text.conditions"),
        "second_dataset_missing": (_plan(datasets=f'"{DEMO / "omit"}", "nowhere"'), "text.datasets", "'nowhere'"),
        "dataset_twice": (_plan(datasets=f'"{DEMO / "omit"}", "{DEMO / "omit"}"'), "text.datasets"),
        "second_planner_unknown": (_plan(embodied="", planners='"oracle", "nosuch"'), "embodied.planners", "nosuch"),
        "planner_yes_no_model": (_plan(embodied="", planners='"oracle", "baseline:always-yes"'), "embodied.planners"),
        "planner_script_missing": (_plan(embodied="", planners='"oracle", "script:/nonexistent/plan.json"'),
                                   "embodied.planners"),
        "simulator_unknown": (_plan(embodied='simulators = ["symbolic", "gazebo"]\n'), "embodied.simulators"),
        "simulator_option_unknown": (_plan(embodied='[embodied.simulator_options]\ngravity = 1\n'),
                                     "embodied.simulator_options", "gravity"),
        "simulator_option_type": (_plan(embodied='[embodied.simulator_options]\npartnr_compat = "yes"\n'),
                                  "embodied.simulator_options"),
        "habitat_with_partnr_compat": (_plan(embodied='simulators = ["symbolic", "habitat"]\n'
                                                      '[embodied.simulator_options]\npartnr_compat = true\n'),
                                       "embodied.simulator_options"),
        "episodes_missing": (_plan(embodied="", episodes='"gone.json.gz"'), "embodied.episodes"),
    }
    cases += [case(k, body, *expect) for k, (body, *expect) in others.items()]

    def with_file(name: str, content: Callable[[Path], Path], *expect: str, embodied: bool = False) -> Case:
        def make(tmp: Path) -> Made:
            target = content(tmp)
            body = _plan(embodied="", episodes=f'"{target}"') if embodied else _plan(datasets=f'"{target}"')
            plan = tmp / "plan.toml"
            plan.write_text(body, encoding="utf-8")
            return ["sweep", str(plan), "--quiet"], [str(plan), *expect, str(target)]
        return Case("sweep", name, make)

    def broken_items(tmp: Path) -> Path:
        data = tmp / "data"
        data.mkdir()
        rows = [json.loads(line) for line in (DEMO / "omit" / "items.jsonl").open(encoding="utf-8")][:2]
        (data / "items.jsonl").write_bytes(_jsonl([rows[0], {**rows[1], "frame": "sideways"}]))
        return data

    def broken_episodes(tmp: Path) -> Path:
        path = tmp / "episodes.json.gz"
        path.write_bytes(gzip.compress(b'{"episodes": [{"episode_id": "../x"}]}'))
        return path

    def episodes_folder(tmp: Path) -> Path:
        (tmp / "episodes").mkdir()
        return tmp / "episodes"

    cases += [with_file("dataset_items_broken", broken_items, "text.datasets", "line 2"),
              with_file("episodes_broken", broken_episodes, "embodied.episodes", embodied=True),
              with_file("episodes_a_folder", episodes_folder, "embodied.episodes", embodied=True)]

    def plan_is(name: str, make_bad: Callable[[Path], None]) -> Case:
        def make(tmp: Path) -> Made:
            plan = tmp / "plan.toml"
            plan.write_text(_plan(), encoding="utf-8")
            make_bad(plan)
            return ["sweep", str(plan), "--quiet"], [str(plan)]
        return Case("sweep", f"plan_{name}", make)

    cases += [plan_is(k, v) for k, v in NOT_A_FILE.items()]

    def out_is_a_file(tmp: Path) -> Made:
        (tmp / "taken").write_text("a file")
        plan = tmp / "plan.toml"
        plan.write_text(_plan().replace('out = "out"', 'out = "taken/out"'), encoding="utf-8")
        return ["sweep", str(plan), "--quiet"], [str(plan), "out"]

    cases.append(Case("sweep", "out_under_a_file", out_is_a_file))
    return cases


# ---------- usage errors of every command ----------

def usage_cases() -> list[Case]:
    omit, episodes = str(DEMO / "omit"), str(DEMO / "robotics" / "episodes.json.gz")

    def case(name: str, argv: list[str], *expect: str) -> Case:
        def make(tmp: Path) -> Made:
            return [a.replace("{tmp}", str(tmp)) for a in argv], list(expect)
        return Case("usage", name, make)

    run = str(DEMO / "omit" / "personas")
    text = ["text", "--data", omit, "--model", "baseline:always-yes", "--out", "{tmp}/out", "--quiet"]
    embodied = ["embodied", "--planner", "oracle", "--episodes", episodes, "--out", "{tmp}/out"]
    return [
        case("compare_resamples_gone", ["compare", run, "--resamples", "50"], "--resamples", "no such option"),
        case("compare_no_run", ["compare"], "RUN_DIR", "missing"),
        case("compare_unknown_option", ["compare", run, "--allow-mixed"], "--allow-mixed", "--allow-mixed-datasets"),
        case("power_contexts_word", ["power", "--from", run, "--contexts", "ten"], "--contexts", "'ten' is not an integer"),
        case("power_contexts_one", ["power", "--from", run, "--contexts", "1"], "--contexts"),
        case("power_contexts_401_digits", ["power", "--from", run, "--contexts", "9" * 401], "--contexts", "401-digit"),
        case("power_contexts_5000_digits", ["power", "--from", run, "--contexts", "9" * 5000], "--contexts"),
        case("power_contexts_negative", ["power", "--from", run, "--contexts", "-3"], "--contexts"),
        case("power_contexts_circled", ["power", "--from", run, "--contexts", "①"], "--contexts"),
        case("power_no_from", ["power", "--contexts", "30"], "--from", "missing"),
        case("power_no_contexts", ["power", "--from", run], "--contexts", "missing"),
        case("view_port_above", ["view", run, "--port", "70000"], "--port", "65,535"),
        case("view_port_negative", ["view", run, "--port", "-1"], "--port"),
        case("view_port_word", ["view", run, "--port", "http"], "--port"),
        case("view_no_run", ["view"], "RUN_DIR", "missing"),
        case("text_limit_zero", [*text, "--limit", "0"], "--limit"),
        case("text_limit_fraction", [*text, "--limit", "2.5"], "--limit"),
        case("text_batch_size_zero", [*text, "--batch-size", "0"], "--batch-size"),
        case("text_batch_size_huge", [*text, "--batch-size", "99999999"], "--batch-size"),
        case("text_batch_size_word", [*text, "--batch-size", "max"], "--batch-size"),
        case("text_concurrency_zero", [*text, "--concurrency", "0"], "--concurrency"),
        case("text_base_url_bare", [*text, "--base-url", "localhost:8000"], "--base-url"),
        case("text_model_arg_concurrency", [*text[:-3], "--model", "openai:m", "-M", "concurrency=0", "--out",
                                            "{tmp}/out"], "concurrency"),
        case("text_model_arg_batch_size", ["text", "--data", omit, "--model", "smollm2", "-M", "batch_size=-2", "--out",
                                           "{tmp}/out", "--quiet"], "batch_size"),
        case("text_no_data", ["text", "--out", "{tmp}/out"], "--data", "missing"),
        case("text_unknown_option", [*text, "--limits", "3"], "--limits"),
        case("embodied_replan_cap_zero", [*embodied, "--replan-cap", "0"], "--replan-cap"),
        case("embodied_max_new_tokens_negative", [*embodied, "--max-new-tokens", "-5"], "--max-new-tokens"),
        case("embodied_limit_word", [*embodied, "--limit", "all"], "--limit"),
        case("sweep_ray_workers_zero", ["sweep", "{tmp}/plan.toml", "--ray-workers", "0"], "--ray-workers"),
        case("sweep_no_plan", ["sweep"], "PLAN.TOML", "missing"),
        case("sweep_extra_argument", ["sweep", "a.toml", "b.toml"], "unexpected extra argument"),
        case("import_inspect_no_log", ["import", "inspect", "--data", omit, "--out", "{tmp}/out"], "LOG", "missing"),
        case("import_lm_eval_no_data", ["import", "lm-eval", "{tmp}", "--out", "{tmp}/out"], "--data", "missing"),
        case("export_hf_no_out", ["export", "hf", omit], "--out", "missing"),
        case("export_unknown_kind", ["export", "csv", omit], "csv"),
        case("build_robotics_n_zero", ["build", "robotics", "--n", "0", "--out", "{tmp}/out"], "--n"),
        case("build_omit_call_size_zero", ["build", "omit", "--source", omit, "--call-size", "0", "--out", "{tmp}/out"],
             "--call-size"),
        case("unknown_command", ["evaluate"], "evaluate"),
        *_estimate_usage_cases(case, omit),
        case("build_omit_dry_run_value", ["build", "omit", "--source", omit, "--dry-run=yes", "--out", "{tmp}/out"],
             "--dry-run", "takes no value"),
        case("build_omit_dry_run_no_source", ["build", "omit", "--source", "{tmp}/nowhere", "--dry-run", "--out",
                                              "{tmp}/out"], "nowhere"),
        case("build_omit_dry_run_model_no_arg", ["build", "omit", "--source", "{tmp}", "--model", "hf", "--dry-run",
                                                 "--out", "{tmp}/out"], "'hf'"),
        case("compare_allow_mixed_value", ["compare", run, "--allow-mixed-datasets=yes"], "--allow-mixed-datasets"),
        case("power_allow_mixed_value", ["power", "--from", run, "--contexts", "30", "--allow-mixed-datasets", "1"],
             "extra argument", "(1)"),
        case("score_allow_mixed_value", ["score", run, "--out", "{tmp}/out", "--allow-mixed-datasets=no"],
             "--allow-mixed-datasets"),
    ]


def _estimate_usage_cases(case: Callable[..., Case], data: str) -> list[Case]:
    """``framebench estimate``: its counts and prices take the shared rules (``framebench.bounds``)."""
    est = ["estimate", "--data", data, "--model", "baseline:always-yes"]
    prices = ["--price-in", "1", "--price-out", "2"]
    return [
        case("estimate_sample_word", [*est, "--sample", "ten"], "--sample", "'ten' is not an integer"),
        case("estimate_sample_huge", [*est, "--sample", "99999"], "--sample", "10,000"),
        case("estimate_sample_negative", [*est, "--sample", "-1"], "--sample"),
        case("estimate_sample_401_digits", [*est, "--sample", "9" * 401], "--sample", "401-digit"),
        case("estimate_limit_zero", [*est, "--limit", "0"], "--limit"),
        case("estimate_rate_zero", [*est, "--rate", "0"], "--rate", "above 0"),
        case("estimate_rate_inf", [*est, "--rate", "inf"], "--rate", "'inf'"),
        case("estimate_rate_nan", [*est, "--rate", "nan"], "--rate", "'nan'"),
        case("estimate_rate_superscript", [*est, "--rate", "²"], "--rate"),
        case("estimate_price_nan", [*est, *prices[:2], "--price-out", "nan"], "--price-out", "'nan'"),
        case("estimate_price_inf", [*est, "--price-in", "inf", *prices[2:]], "--price-in", "'inf'"),
        case("estimate_price_overflow", [*est, "--price-in", "1e400", *prices[2:]], "--price-in", "1e400"),
        case("estimate_price_negative", [*est, "--price-in", "-0.5", *prices[2:]], "--price-in", "-0.5"),
        case("estimate_price_alone", [*est, *prices[:2]], "--price-in", "--price-out"),
        case("estimate_price_no_value", [*est, "--price-out"], "--price-out", "needs a value"),
        case("estimate_model_arg_concurrency", ["estimate", "--data", data, "--model", "openai:m", "-M",
                                                "concurrency=0"], "concurrency"),
        case("estimate_model_no_arg", ["estimate", "--data", data, "--model", "hf", "--sample", "0"], "'hf'"),
        case("estimate_no_data", ["estimate"], "--data", "missing"),
        case("estimate_data_missing", ["estimate", "--data", "{tmp}/nowhere"], "nowhere"),
        case("estimate_unknown_option", [*est, "--samples", "3"], "--samples", "--sample"),
    ]


def surface_cases() -> list[Case]:
    """The corpus of issue 45 (the Inspect and lm-eval families where those tools are installed)."""
    cases = export_cases() + sweep_cases() + usage_cases()
    if have("lm_eval"):
        cases += lm_eval_cases()
    if have("inspect_ai"):
        cases += inspect_cases()
    return cases


if __name__ == "__main__" and sys.argv[1:2] == ["inspect-seed"]:
    _inspect_seed(*map(Path, sys.argv[2:5]))
