"""``framebench import lm-eval``: lm-eval's logged samples of framebench's exported tasks as a
framebench run folder (``score``, ``compare``, ``plan``, ``view`` take it).

Reads one lm-eval run: its ``results_<time>.json`` and the ``samples_<task>_<time>.jsonl`` of the
same time (in OUTPUT_DIR or one folder below, where lm-eval writes them). Every sample is checked
against DATA: its task must be one ``framebench export lm-eval`` writes, its doc id and doc equal
to the doc that export writes from DATA. ``_gen`` samples become generated records (the output
parsed by framebench's strict parser), ``_loglik`` samples constrained-answer records: each
allowed answer's forms' log-likelihoods summed, normalised over the allowed answers (softmax), as
framebench's own constrained answers (``framebench.interop.lm_eval_tasks.choice_probs``).
Anything wrong is one line naming the file and line, before anything is written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from framebench.bounds import shown
from framebench.errors import UserError
from framebench.interop.lm_eval_tasks import GEN, LOGLIK, TASK_PREFIX
from framebench.jsonl import iter_jsonl, loads_strict, read_text_strict

SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")
FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.I)
RESULTS = re.compile(r"^results_(?P<time>\d{4}-\d\d-\d\dT[\d.\-]+)\.json$")


@dataclass
class Sample:
    """One logged sample: where it is, its task and what lm-eval recorded."""

    path: Path
    line: int
    task: str
    value: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.path}: line {self.line}"


def lm_eval_files(output_dir: Path) -> tuple[Path, list[Path]]:
    """The one results file and its samples files (OUTPUT_DIR or its model subfolders)."""
    output_dir = Path(output_dir)
    if not output_dir.is_dir():
        what = "is not a folder" if output_dir.exists() else "no such folder"
        raise UserError(f"{output_dir}: {what} (expected lm-eval's --output_path folder)")
    results = sorted(p for p in (*output_dir.glob("results_*.json"), *output_dir.glob("*/results_*.json"))
                     if RESULTS.match(p.name))
    samples = sorted(p for p in (*output_dir.glob("samples_*.jsonl"), *output_dir.glob("*/samples_*.jsonl"))
                     if SAMPLES.match(p.name))
    if not results and not samples:
        raise UserError(f"{output_dir}: no lm-eval results_*.json or samples_*.jsonl (run lm_eval with "
                        "--output_path and --log_samples)")
    if len(results) != 1:
        found = ", ".join(str(p) for p in results) or "none"
        raise UserError(f"{output_dir}: expected one lm-eval results_*.json, found {found}")
    (result,) = results
    time = RESULTS.match(result.name)["time"]
    for path in samples:
        if SAMPLES.match(path.name)["time"] != time or path.parent != result.parent:
            raise UserError(f"{result}: line 1: results of another lm-eval run than {path} "
                            f"(its time {time}; one run's files share it)")
    if not samples:
        raise UserError(f"{output_dir}: no samples_*.jsonl next to {result} (run lm_eval with --log_samples)")
    return result, samples


# the results file's tables framebench reads (each an object where present)
RESULT_TABLES = ("config", "versions", "n-shot", "task_hashes", "n-samples")


def read_results(path: Path) -> dict[str, Any]:
    """The results file, checked: an object with ``configs`` and well-formed tables (lm-eval
    writes NaN for some metrics, which parse here; framebench reads no metric)."""
    where = f"{path}: line 1"
    value = loads_strict(read_text_strict(path), where, constants=True)
    if not isinstance(value, dict) or not isinstance(value.get("configs"), dict):
        raise UserError(f"{where}: not an lm-eval results file (no 'configs' object)")
    for key in RESULT_TABLES:
        if value.get(key) is not None and not isinstance(value[key], dict):
            raise UserError(f"{where}: field {key!r}: expected an object, got {type(value[key]).__name__}")
    return value


def check_task(task: str, path: Path, results: Mapping[str, Any], result_path: Path) -> None:
    config = results["configs"].get(task)
    if not task.startswith(TASK_PREFIX) or not task.endswith((GEN, LOGLIK)):
        raise UserError(f"{path}: line 1: task {task!r} is not one `framebench export lm-eval` writes")
    if config is None:
        raise UserError(f"{result_path}: line 1: results of another lm-eval run (no task {task!r}, "
                        f"whose samples are {path})")
    metadata = config.get("metadata") if isinstance(config, dict) else None
    if not isinstance(metadata, dict) or "framebench" not in metadata:
        raise UserError(f"{result_path}: line 1: field 'configs.{task}.metadata': task {task!r} was not "
                        "exported by framebench (no framebench metadata)")


def check_sample(value: dict[str, Any], where: str) -> dict[str, Any]:
    """A logged sample's ids as lm-eval writes them: ``doc_id`` a whole number, ``doc`` an object
    whose ids and condition are strings."""
    doc_id, doc = value.get("doc_id"), value.get("doc")
    if "doc_id" not in value or not isinstance(doc, dict):
        raise UserError(f"{where}: not an lm-eval sample (no doc_id and doc)")
    if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
        raise UserError(f"{where}: field 'doc_id': expected a whole number (lm-eval's index of the doc), "
                        f"got {shown(doc_id)}")
    for key in ("record_id", "item_id", "suite", "condition"):
        if not isinstance(doc.get(key), str):
            raise UserError(f"{where}: field 'doc.{key}': expected a string, got {shown(doc.get(key))}")
    return value


def read_samples(path: Path, results: Mapping[str, Any], result_path: Path) -> list[Sample]:
    task = SAMPLES.match(path.name)["task"]
    check_task(task, path, results, result_path)
    samples = [Sample(path, number, task, check_sample(value, f"{path}: line {number}"))
               for number, value in iter_jsonl(path, "sample", constants=True)]
    if not samples:
        raise UserError(f"{path}: line 1: no samples")
    expected = ((results.get("n-samples") or {}).get(task) or {}).get("effective")
    if expected is not None and expected != len(samples):
        raise UserError(f"{path}: line {len(samples)}: {len(samples)} samples, but {result_path} "
                        f"counts {expected} for {task} (results of another run, or a cut file)")
    return samples


def sample_conditions(samples: list[Sample]) -> list[str]:
    """The conditions the samples' docs name, each one a registered suite offers (an unknown one
    is named with its file and line)."""
    from framebench.registry import ordered_suites

    known = [name for s in ordered_suites() if s.items.makes_jobs for name, _ in s.items.conditions_listing()]
    for sample in samples:
        condition = sample.value["doc"]["condition"]
        if condition and condition not in known:
            raise UserError(f"{sample.where}: field 'doc.condition': unknown condition {shown(condition)} "
                            f"(known: {', '.join(known) or 'none'})")
    return sorted({s.value["doc"]["condition"] for s in samples} - {""})


def check_doc(sample: Sample, docs: Mapping[str, list[dict[str, Any]]], items: Mapping[str, Any]) -> dict[str, Any]:
    """The exported doc a sample is, checked against DATA."""
    doc, doc_id = sample.value["doc"], sample.value["doc_id"]
    item_id = doc["item_id"]
    if item_id not in items:
        raise UserError(f"{sample.where}: field 'doc.item_id': {shown(item_id)} is not in DATA")
    task_docs = docs.get(sample.task)
    if task_docs is None:
        raise UserError(f"{sample.where}: task {sample.task!r} is not among the tasks DATA exports")
    if not doc_id < len(task_docs):
        raise UserError(f"{sample.where}: field 'doc_id': {shown(doc_id)} is not in DATA (task {sample.task} has "
                        f"{len(task_docs)} docs)")
    expected = task_docs[doc_id]
    for key in ("record_id", "item_id", "suite", "condition", "prompt", "forms", "gold"):
        if doc.get(key) != expected[key]:
            raise UserError(f"{sample.where}: field 'doc.{key}' differs from DATA's doc {doc_id} "
                            f"(exported from other data?)")
    return expected


def loglikelihood(value: Any) -> float | None:
    """A logged log-likelihood (lm-eval writes it as the text of a float, e.g. ``"-0.61"``) as a
    float; None unless it is a finite number <= 0 (the log of a probability)."""
    if isinstance(value, str) and FLOAT_TEXT.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value <= 0 else None


def loglikelihoods(sample: Sample, n_forms: int) -> list[float]:
    """One log-likelihood per answer form, each checked (``loglikelihood``)."""
    resps = sample.value.get("filtered_resps")
    if not isinstance(resps, list) or not all(isinstance(r, list) and r for r in resps):
        raise UserError(f"{sample.where}: field 'filtered_resps': expected one [log-likelihood, "
                        "is_greedy] per answer form")
    if len(resps) != n_forms:
        raise UserError(f"{sample.where}: field 'filtered_resps': {len(resps)} log-likelihoods for {n_forms} forms")
    values = [loglikelihood(r[0]) for r in resps]
    for i, value in enumerate(values):
        if value is None:
            raise UserError(f"{sample.where}: field 'filtered_resps[{i}][0]': {shown(resps[i][0])} is not a "
                            "log-likelihood (a finite number <= 0)")
    return values


def generated_text(sample: Sample) -> str:
    """The generated text: one string of valid Unicode (the reader refused lone surrogates)."""
    resps = sample.value.get("filtered_resps")
    if not isinstance(resps, list) or len(resps) != 1 or not isinstance(resps[0], str):
        raise UserError(f"{sample.where}: field 'filtered_resps': expected one generated string")
    return resps[0]


def sample_job(sample: Sample, doc: Mapping[str, Any]) -> Any:
    """The framebench job of a sample, answered as lm-eval answered it."""
    from framebench.interop.lm_eval_tasks import choice_probs, doc_job

    job = doc_job(doc)
    if sample.task.endswith(GEN):
        job.output = generated_text(sample)
    else:
        job.answer_mode = scored_mode()
        job.output = ""
        job.probs = choice_probs(doc["form_answers"], doc["choices"], loglikelihoods(sample, len(doc["forms"])))
    return job


def model_spec(results: Mapping[str, Any]) -> str:
    config = results.get("config") or {}
    args = config.get("model_args") or {}
    if isinstance(args, str):  # older lm-eval: "pretrained=PATH,dtype=float32"
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    name = args.get("pretrained") if isinstance(args, dict) else None
    return f"lm-eval-{config.get('model', 'model')}:{name or results.get('model_name') or args}"


def run_info(results: Mapping[str, Any], tasks: list[str], files: list[Path], dataset_hash: str,
             jobs: list[Any], started: str) -> Any:
    from framebench.files import file_sha256
    from framebench.run_folder import IMPORTED, RunJson, run_id_for
    from framebench.store import sha256, stable_json

    config = results.get("config") or {}
    spec = model_spec(results)
    fingerprint = sha256(stable_json([config.get("model"), config.get("model_args"), config.get("model_sha"),
                                      results.get("lm_eval_version"), results.get("chat_template_sha")]))
    hashes = {str(p.name): file_sha256(p) for p in files}
    run_id = run_id_for(spec, [fingerprint, dataset_hash, sorted(hashes.values())])
    decoding = {t: (results["configs"][t].get("generation_kwargs") or {"output_type": "multiple_choice"})
                for t in tasks}
    return RunJson(
        run_id=run_id, model=spec, model_fingerprint=fingerprint, decoding=decoding, dataset_hash=dataset_hash,
        started=started, producer="lm-eval",
        model_info={"chat_template_sha": str(results.get("chat_template_sha") or "")},
        extra={**IMPORTED, "lm_eval": {"version": results.get("lm_eval_version"), "model": config.get("model"),
                           "model_args": config.get("model_args"), "limit": config.get("limit"),
                           "batch_size": config.get("batch_size"),
                           "task_versions": {t: results.get("versions", {}).get(t) for t in tasks},
                           "n-shot": {t: results.get("n-shot", {}).get(t) for t in tasks},
                           "task_hashes": {t: results.get("task_hashes", {}).get(t) for t in tasks},
                           "files_sha256": hashes,
                           "seconds": results.get("total_evaluation_time_seconds")},
               "n_records": len(jobs), "answer_mode": sorted({j.answer_mode for j in jobs})},
        identity={"model": spec, "dataset_hash": dataset_hash})


def import_lm_eval(output_dir: Path, data: Path, out: Path) -> str:
    """Write the run folder; returns a one-line summary. Nothing is written when any check fails."""
    from framebench.files import file_sha256
    from framebench.interop.hf_dataset import item_jobs
    from framebench.interop.lm_eval_tasks import exported_docs
    from framebench.paths import check_out_folder
    from framebench.pipeline.text import make_record
    from framebench.run_folder import now_iso, write_run
    started = now_iso()
    out = check_out_folder(Path(out))
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out}: exists and is not empty")
    result_path, sample_paths = lm_eval_files(output_dir)
    results = read_results(result_path)
    samples = [s for p in sample_paths for s in read_samples(p, results, result_path)]
    items_path, data_jobs = item_jobs(data, sample_conditions(samples))
    docs = exported_docs(data_jobs)
    items = {j.item["item_id"]: j.item for j in data_jobs}
    jobs, seen = [], set()
    for sample in samples:
        doc = check_doc(sample, docs, items)
        if (sample.task, sample.value["doc_id"]) in seen:
            raise UserError(f"{sample.where}: doc_id {sample.value['doc_id']} is logged twice")
        seen.add((sample.task, sample.value["doc_id"]))
        jobs.append(sample_job(sample, doc))
    tasks = list(dict.fromkeys(s.task for s in samples))
    info = run_info(results, tasks, [result_path, *sample_paths], file_sha256(items_path), jobs, started)
    rows = [make_record(j, info.run_id, info.model) for j in jobs]
    prompts = {j.record_id: (j.record_id, j.prompt, j.chat) for j in reversed(jobs)}  # one per item
    write_run(out, rows, reversed(prompts.values()), info)
    kinds = {mode: sum(j.answer_mode == mode for j in jobs) for mode in (generated_mode(), scored_mode())}
    counts = ", ".join(f"{n} {'generated' if mode == generated_mode() else mode}" for mode, n in kinds.items())
    return f"{len(rows)} records ({counts}) from {len(tasks)} tasks"


def generated_mode() -> str:
    """The answer mode of lm-eval's generated samples: the one that generates text."""
    from framebench.registry import answer_mode_with

    return answer_mode_with("generate").name


def scored_mode() -> str:
    """The answer mode of lm-eval's log-likelihood samples: the one that scores allowed answers."""
    from framebench.registry import answer_mode_with

    return answer_mode_with("score_answers").name
