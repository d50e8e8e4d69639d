"""``framebench import inspect``: Inspect AI logs of framebench's tasks become a run folder.

Every sample's output is parsed again with framebench's parser against the item in DATA (Inspect's
stored scores are compared, never trusted); the prompt must be the one framebench renders from
DATA. Bad input (another task, an unreadable log, an unfinished run, a sample not in DATA or
without output) is refused in one line naming the file and the sample, before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench.bounds import shorten, shown
from framebench.errors import UserError
from framebench.interop.samples import CONDITION, items_file, job_of, turns
from framebench.items import read_items
from framebench.jsonl import check_text, user_file
from framebench.records import PARSES
from framebench.registry import suite
from framebench.suite import Job

PREFIX = "framebench/"  # Inspect names a package's tasks <package>/<task>; each task is a suite


def task_suite(name: str | None) -> str | None:
    """The suite an Inspect task name stands for (``framebench/<suite>``), None for another task."""
    from framebench.registry import suites

    suite_name = (name or "").removeprefix(PREFIX)
    found = suites().get(suite_name) if (name or "").startswith(PREFIX) else None
    return suite_name if found is not None and found.items.makes_jobs else None


def scorer_name(suite_name: str) -> str:
    return f"{suite_name}_scorer"


@dataclass
class LogImport:
    """What one log contributes: its jobs (outputs set), provenance and what was left out."""

    path: Path
    model: str
    jobs: list[Job]
    provenance: dict[str, Any]
    left_out: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportSummary:
    out: Path
    run_id: str
    model: str
    n_records: int
    left_out: int
    disagreements: list[str]


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise UserError("framebench import inspect needs Inspect AI: pip install 'framebench-eval[inspect]' "
                        "(or pip install inspect-ai)") from None

    user_file(path)  # a folder, a link loop or a FIFO is named before Inspect opens it
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # zip, JSON and schema errors of a damaged file alike
        first = (str(exc).strip().splitlines() or [""])[0]
        raise UserError(f"{path}: not a readable Inspect log ({type(exc).__name__}: {first})") from None


def _suite_of(path: Path, log: Any) -> str:
    name = log.eval.task_registry_name or log.eval.task
    found = task_suite(name)
    if found is None:
        raise UserError(f"{path}: task {name!r} is not a framebench task ({PREFIX}<suite>)")
    return found


def _check_status(path: Path, log: Any, partial: bool) -> None:
    if log.status == "success" or (partial and log.status in ("error", "cancelled")):
        return
    why = f": {shorten((log.error.message.splitlines() or [''])[0])}" if log.error else ""
    hint = " (--partial imports its complete samples)" if log.status in ("error", "cancelled") else ""
    raise UserError(f"{path}: the Inspect run did not finish (status {log.status}{why}){hint}")


def _problem(sample: Any) -> str | None:
    """Why a sample cannot be imported (None: it can)."""
    if sample.error is not None:
        return f"errored ({shorten((sample.error.message.splitlines() or [''])[0])})"
    if sample.output is None or not sample.output.choices:
        return "has no output"
    return None


def _turns_of(sample: Any) -> tuple[str, str] | None:
    """(system, user) of a sample's input; None for any other shape."""
    if isinstance(sample.input, str):
        return "", sample.input
    roles = [m.role for m in sample.input]
    if roles == ["user"]:
        return "", sample.input[0].text
    if roles == ["system", "user"]:
        return sample.input[0].text, sample.input[1].text
    return None


def _condition(path: Path, log: Any, suite_name: str) -> str | None:
    """The log's condition (``task_args``), one its suite offers; None: the suite's default."""
    condition = log.eval.task_args.get(CONDITION)
    if condition is None:
        return None
    offered = [name for name, _ in suite(suite_name).items.conditions_listing()]
    where = f"{path}: field 'eval.task_args.{CONDITION}'"
    if not isinstance(condition, str) or condition not in offered:
        known = f"{PREFIX}{suite_name} offers {', '.join(offered)}" if offered else \
            f"{PREFIX}{suite_name} takes none"
        raise UserError(f"{where}: unknown condition {shown(condition)} ({known})")
    return condition


def _job(path: Path, sample: Any, items: Mapping[str, dict[str, Any]], suite_name: str,
         condition: str | None) -> Job:
    where = f"{path}: sample {shown(sample.id)}"
    if not isinstance(sample.id, str):
        raise UserError(f"{where}: field 'id': expected the item id (a string), got {type(sample.id).__name__}")
    item = items.get(sample.id)
    if item is None:
        raise UserError(f"{where}: no item with that id in DATA")
    if item["suite"] != suite_name:
        raise UserError(f"{where}: DATA holds it as a {item['suite']!r} item, but the log's task is {PREFIX}{suite_name}")
    job = job_of(item, condition, str(path))
    if _turns_of(sample) != turns(job):
        raise UserError(f"{where}: its prompt is not the one framebench renders from DATA")
    job.output = check_text(sample.output.completion, f"{where}: field 'output.completion'")
    return job


def _disagrees(sample: Any, record: Mapping[str, Any], scorer: str) -> bool:
    stored = (sample.scores or {}).get(scorer)
    if stored is None:
        return True
    parse = (stored.metadata or {}).get("parse")
    return stored.answer != record["answer"] or parse != record["parse"]


def read_log(path: Path, items: Mapping[str, dict[str, Any]], partial: bool) -> LogImport:
    """One log's jobs, refused in one line on bad input."""
    from framebench.files import file_sha256
    log = _read(path)
    name = _suite_of(path, log)
    _check_status(path, log, partial)
    condition = _condition(path, log, name)
    result = LogImport(path, log.eval.model, [], {
        "log": str(path), "log_sha256": file_sha256(path), "task": log.eval.task,
        "task_args": dict(log.eval.task_args), "model": log.eval.model, "created": log.eval.created,
        "inspect_version": (log.eval.packages or {}).get("inspect_ai", ""), "status": log.status,
        "eval_id": log.eval.eval_id})
    for sample in log.samples or []:
        problem = _problem(sample)
        if problem is not None:
            if not partial:
                raise UserError(f"{path}: sample {sample.id!r} {problem} (--partial leaves such samples out)")
            result.left_out.append(str(sample.id))
            continue
        job = _job(path, sample, items, name, condition)
        if _disagrees(sample, suite(name).items.record(job, "", ""), scorer_name(name)):
            result.disagreements.append(f"{path.name}:{sample.id}")
        result.jobs.append(job)
    if not result.jobs:
        raise UserError(f"{path}: no complete samples to import")
    return result


def _check_models(logs: Sequence[LogImport]) -> str:
    models = sorted({entry.model for entry in logs})
    if len(models) > 1:
        raise UserError(f"{logs[0].path}: the logs hold {len(models)} models ({', '.join(models)}): import each "
                        "model into its own run folder, then `framebench compare` them")
    return models[0]


def _check_duplicates(logs: Sequence[LogImport]) -> None:
    seen: dict[str, Path] = {}
    for entry in logs:
        for job in entry.jobs:
            if job.record_id in seen:
                other = "this log (epochs > 1?)" if seen[job.record_id] == entry.path else seen[job.record_id]
                raise UserError(f"{entry.path}: sample {shown(job.record_id)} is also in {other}")
            seen[job.record_id] = entry.path


def import_logs(paths: Sequence[Path], data: Path, out: Path, partial: bool = False) -> ImportSummary:
    """Logs -> one run folder (``framebench.run_folder.write_run``); nothing is written on bad input."""
    from framebench.files import file_sha256
    from framebench.paths import check_out_folder
    from framebench.run_folder import IMPORTED, RunJson, now_iso, run_id_for, write_run
    from framebench.store import stable_json

    out, started = check_out_folder(Path(out)), now_iso()
    if out.is_dir() and any(out.iterdir()):
        raise UserError(f"--out {out}: exists and is not empty")
    path = items_file(data)
    items = {it["item_id"]: it for it in read_items(path)}
    logs = [read_log(Path(p), items, partial) for p in paths]
    model = _check_models(logs)
    _check_duplicates(logs)
    jobs = [job for entry in logs for job in entry.jobs]
    dataset_hash = file_sha256(path)
    provenance = [entry.provenance for entry in logs]
    run_id = run_id_for(model, [[p["log_sha256"] for p in provenance], dataset_hash])
    rows = [suite(j.item["suite"]).items.record(j, run_id, model) for j in jobs]
    disagreements = [d for entry in logs for d in entry.disagreements]
    left_out = sum(len(entry.left_out) for entry in logs)
    write_run(out, rows, ((j.record_id, j.prompt, j.chat) for j in jobs), RunJson(
        run_id=run_id, model=model, model_fingerprint=f"inspect:{model}:{stable_json(provenance[0]['task_args'])}",
        decoding={j.decoding_name: j.decoding.as_dict() for j in jobs}, dataset_hash=dataset_hash,
        started=started, producer="inspect-import",
        extra={**IMPORTED, "data": str(path), "n_records": len(rows), "inspect_logs": provenance,
               "left_out": left_out, "score_disagreements": disagreements,
               "parse_counts": {p: sum(r["parse"] == p for r in rows) for p in PARSES}},
    ))
    return ImportSummary(out, run_id, model, len(rows), left_out, disagreements)
