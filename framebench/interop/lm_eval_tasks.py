"""``framebench export lm-eval``: framebench items as lm-evaluation-harness tasks.

Per suite, task and format (a config of ``framebench.interop.hf_dataset``) two tasks and one
group per suite, written with their data into one folder for ``lm_eval --include_path DIR``:

* ``<name>_gen`` (``generate_until``): framebench's prompt as the user turn (a system turn, where a
  condition has one, as the task's ``description``, which lm-eval sends as the system turn with
  ``--apply_chat_template``), greedy, framebench's max new tokens and stop strings (lm-eval adds the
  tokenizer's end-of-sequence string itself). ``process_results`` parses the output with
  framebench's own strict parser (the suite's ``record``): ``acc`` is its ``correct``,
  ``strict_acc`` the share of contexts whose every item is correct (MultiRC-style: the per-sample
  metric is ``(context_id, correct)`` and ``strict_accuracy`` aggregates per group).
* ``<name>_loglik`` (``multiple_choice``): the allowed answers scored by log-likelihood, each in
  the surface forms framebench's constrained answers sum (``a``, ``" " + a``, lower-case forms of
  words: ``framebench.backends.constrained``), with an empty target delimiter so every form is
  scored as written; ``process_results`` sums each answer's forms and normalises over the allowed
  answers (softmax), as framebench does, and scores the most probable one.
* ``framebench_<suite>``: a group of all of a suite's tasks.

``<name>`` is ``framebench_<suite>_<task>_<format>`` (plus ``_<condition>`` for OMIT). The
written ``utils.py`` imports framebench, so lm-eval runs where framebench is installed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from framebench.errors import UserError

TASK_PREFIX = "framebench_"
GEN, LOGLIK = "_gen", "_loglik"
DATA_DIR = "data"
UTILS = '''"""Written by `framebench export lm-eval`: lm-eval calls these; framebench does the work."""

from pathlib import Path

from framebench.interop import lm_eval_tasks as fb

HERE = Path(__file__).resolve().parent


def load(config, **_):
    return fb.load_docs(HERE / "data" / f"{config}.jsonl")


def process_generated(doc, results):
    return fb.generated_metrics(doc, results)


def process_choices(doc, results):
    return fb.choice_metrics(doc, results)


def strict_accuracy(items):
    return fb.strict_accuracy(items)
'''


def task_base(row: Mapping[str, Any]) -> str:
    name = f"{TASK_PREFIX}{row['suite']}_{row['task']}_{row['format']}"
    return f"{name}_{row['condition']}" if row.get("condition") else name


def forms_of(choices: Sequence[str]) -> tuple[list[str], list[str]]:
    """Every allowed answer's surface forms, flattened, and the answer each form belongs to."""
    from framebench.backends.constrained import surface_forms

    forms, owners = [], []
    for answer in choices:
        for form in surface_forms(answer):
            forms.append(form)
            owners.append(answer)
    return forms, owners


def doc_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """An lm-eval doc: ids, the prompt, the answer forms, the gold form's index, and the item."""
    item = {k: v for k, v in row.items() if k not in ("record_id", "condition", "prompt", "chat",
                                                       "max_new_tokens", "stop", "choices")}
    forms, owners = forms_of(row["choices"])
    gold = row.get("gold") or ""
    return {"record_id": row["record_id"], "item_id": row["item_id"], "context_id": row["context_id"],
            "suite": row["suite"], "condition": row["condition"], "prompt": row["prompt"],
            "choices": list(row["choices"]), "forms": forms, "form_answers": owners,
            "gold": gold, "gold_index": owners.index(gold) if gold in owners else 0,
            "item": json.dumps(item, ensure_ascii=False, sort_keys=True)}


def system_turn(rows: Sequence[Mapping[str, Any]], config: str) -> str:
    """The one system turn every prompt of a config has ("" for none); anything else cannot be
    an lm-eval task (one user turn and a task-wide description)."""
    shapes = {tuple((t["role"], t["content"]) for t in r["chat"][:-1]) for r in rows}
    if len(shapes) != 1 or any(r["chat"][-1]["role"] != "user" for r in rows):
        raise UserError(f"{config}: its prompts are not one user turn after one shared system turn; "
                        "lm-eval cannot send them")
    (shape,) = shapes
    if not shape:
        return ""
    if len(shape) != 1 or shape[0][0] != "system":
        raise UserError(f"{config}: its prompts hold earlier turns other than one system turn")
    return shape[0][1]


def task_configs(config: str, rows: Sequence[Mapping[str, Any]], reasons: bool) -> list[dict[str, Any]]:
    """The generate_until task and (unless the suite reasons before answering) its
    multiple_choice twin of one config."""
    from framebench.run_folder import code_version
    base = task_base(rows[0])
    system = system_turn(rows, config)
    common: dict[str, Any] = {
        "tag": [f"{TASK_PREFIX}{rows[0]['suite']}_tasks"],
        "custom_dataset": "!function utils.load", "test_split": "test", "doc_to_text": "prompt",
        "metadata": {"version": 1.0, "config": config, "framebench": code_version()},
    }
    if system:
        common["description"] = system
    stops = {tuple(r["stop"]) for r in rows}
    tokens = {r["max_new_tokens"] for r in rows}
    if len(stops) != 1 or len(tokens) != 1:
        raise UserError(f"{config}: its prompts do not share one decoding")
    strict = {"metric": "strict_acc", "aggregation": "!function utils.strict_accuracy", "higher_is_better": True}
    acc = {"metric": "acc", "aggregation": "mean", "higher_is_better": True}
    gen = {"task": base + GEN, **common, "output_type": "generate_until", "doc_to_target": "gold",
           "generation_kwargs": {"until": list(next(iter(stops))), "max_gen_toks": next(iter(tokens)),
                                 "do_sample": False, "temperature": 0.0},
           "process_results": "!function utils.process_generated", "metric_list": [acc, strict]}
    if reasons:
        return [gen]
    loglik = {"task": base + LOGLIK, **common, "output_type": "multiple_choice", "doc_to_choice": "forms",
              "doc_to_target": "gold_index", "target_delimiter": "",
              "process_results": "!function utils.process_choices", "metric_list": [acc, strict]}
    return [gen, loglik]


def dump_yaml(config: Mapping[str, Any]) -> str:
    """YAML with lm-eval's ``!function`` tags unquoted."""
    import yaml

    text = yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True, width=1000)
    return text.replace("'!function ", "!function ").replace(".load'", ".load").replace(
        ".process_generated'", ".process_generated").replace(".process_choices'", ".process_choices").replace(
        ".strict_accuracy'", ".strict_accuracy")


def task_rows(jobs: Sequence[Any]) -> dict[str, list[dict[str, Any]]]:
    """Rows per exported data file: per config, and per condition within OMIT's."""
    from framebench.interop.hf_dataset import config_rows

    by_task: dict[str, list[dict[str, Any]]] = {}
    for config, rows in config_rows(jobs).items():
        for row in rows:
            by_task.setdefault(f"{config}-{row['condition']}" if row["condition"] else config, []).append(row)
    return by_task


def exported_docs(jobs: Sequence[Any]) -> dict[str, list[dict[str, Any]]]:
    """The docs each exported task holds, by task name (both kinds), in doc-id order."""
    docs: dict[str, list[dict[str, Any]]] = {}
    for rows in task_rows(jobs).values():
        task_docs = [doc_of(r) for r in rows]
        docs[task_base(rows[0]) + GEN] = task_docs
        docs[task_base(rows[0]) + LOGLIK] = task_docs
    return docs


def write_jsonl(path: Path, docs: Iterable[Mapping[str, Any]]) -> None:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")


def export_lm_eval(data: Path, out: Path, conditions: Sequence[str] = ()) -> list[str]:
    """Write the task folder; returns the task and group names (groups last)."""
    import shutil
    import tempfile

    from framebench.interop.hf_dataset import item_jobs
    from framebench.paths import check_out_folder
    from framebench.registry import suite

    out = check_out_folder(Path(out))
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out}: exists and is not empty")
    _, jobs = item_jobs(data, conditions)
    reasons = {j.record_id: suite(j.item["suite"]).items.reasons_first(j) for j in jobs}
    by_task = task_rows(jobs)
    names: list[str] = []
    groups: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.exists() else None) as tmp:
        staged = Path(tmp) / "tasks"
        (staged / DATA_DIR).mkdir(parents=True)
        (staged / "utils.py").write_text(UTILS, encoding="utf-8")
        for key, rows in by_task.items():
            write_jsonl(staged / DATA_DIR / f"{key}.jsonl", (doc_of(r) for r in rows))
            for task in task_configs(key, rows, any(reasons[r["record_id"]] for r in rows)):
                (staged / f"{task['task']}.yaml").write_text(dump_yaml(task), encoding="utf-8")
                names.append(task["task"])
                groups.setdefault(f"{TASK_PREFIX}{rows[0]['suite']}", []).append(task["task"])
        for group, tasks in groups.items():
            body = {"group": group, "task": tasks, "metadata": {"version": 1.0}}
            (staged / f"{group}.yaml").write_text(dump_yaml(body), encoding="utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            out.rmdir()
        shutil.move(str(staged), str(out))
    return names + list(groups)


# ---- called by the exported utils.py, inside lm-eval -------------------------------------------
def load_docs(path: Path) -> dict[str, Any]:
    import datasets

    docs = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
    return {"test": datasets.Dataset.from_list(docs)}


def doc_job(doc: Mapping[str, Any]) -> Any:
    """The framebench job a doc is (its item rebuilt, its condition applied)."""
    from framebench.pipeline.text import build_jobs

    item = json.loads(doc["item"])
    jobs = build_jobs([item], [doc["condition"]] if doc["condition"] else [], Path("lm-eval"))
    (job,) = [j for j in jobs if j.record_id == doc["record_id"]]
    return job


def job_metrics(job: Any) -> dict[str, Any]:
    from framebench.pipeline.text import make_record

    record = make_record(job, "", "")
    correct = bool(record["correct"]) and record["parse"] == "ok"
    return {"acc": float(correct), "strict_acc": (job.item["context_id"], correct)}


def generated_metrics(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """A ``generate_until`` sample scored as framebench scores a generated record."""
    job = doc_job(doc)
    job.output = results[0]
    return job_metrics(job)


def choice_probs(forms_of_answer: Sequence[str], choices: Sequence[str],
                 logliks: Sequence[float]) -> dict[str, float]:
    """``P(a)``: each allowed answer's forms' likelihoods summed, normalised over the answers."""
    from framebench.backends.constrained import logsumexp, normalise

    masses = {a: logsumexp([ll for owner, ll in zip(forms_of_answer, logliks, strict=True) if owner == a])
              for a in choices}
    return normalise(masses)


def choice_metrics(doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """A ``multiple_choice`` sample (one (log-likelihood, is_greedy) per form) scored as
    framebench scores a constrained record."""
    from framebench.registry import answer_mode_with

    job = doc_job(doc)
    job.answer_mode = answer_mode_with("score_answers").name
    job.probs = choice_probs(doc["form_answers"], doc["choices"], [float(r[0]) for r in results])
    return job_metrics(job)


def strict_accuracy(items: Iterable[tuple[str, bool]]) -> float:
    """The share of groups (contexts) whose every member is correct."""
    by_group: dict[str, bool] = {}
    for group, correct in items:
        by_group[group] = by_group.get(group, True) and bool(correct)
    return sum(by_group.values()) / len(by_group) if by_group else math.nan
