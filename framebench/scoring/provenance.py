"""The report's ``meta`` block: what was scored, by which code, when (report.json, top of report.md
and report.html).

Read from the records (run ids, models) and each scored folder's ``run.json`` (fingerprint,
dataset hash, decoding, code version, times); a folder without ``run.json`` is listed with what its
records say. Nothing here is a secret: ``run.json`` never holds keys.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from framebench.scoring.parts import ReportInput, ReportPart
from framebench.scoring.sections import Section

if TYPE_CHECKING:
    from framebench.run_folder import RunFolder

SCHEMA_VERSION = 1  # report.json layout; bump when a key changes meaning or moves


def git_commit() -> str | None:
    """The commit of the framebench checkout, when it is one (None for an installed package)."""
    root = Path(__file__).resolve().parents[2]
    try:
        return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=True).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _suites_of(records: pd.DataFrame) -> list[Any]:
    """The metrics of the registered suites whose rows ``records`` holds."""
    from framebench.registry import suites

    present = set(records["suite"].unique()) if not records.empty else set()
    return [suite.metrics for name, suite in suites().items() if name in present]


GENERIC_ANSWERS = "greedy generation, answer parsed strictly (unparsed = wrong)"


def answer_mode(model: str, suite: str, info: Mapping[str, Any], records: pd.DataFrame | None = None) -> str:
    """How the answers were obtained, in words: a reference baseline, else what the suite says
    of who answered (``SuiteMetrics.answer_mode``: a persona panel, a scripted or LLM planner), else the
    run's answer mode (run.json ``answer_mode`` or the records' ``answer_mode`` column) as the
    registered mode describes itself (``AnswerMode.description``)."""
    from framebench.registry import answer_modes, suites

    if model.startswith("baseline:"):
        return "reference baseline (answers from the prompt's format alone)"
    said = suites()[suite].metrics.answer_mode(model, info) if suite in suites() else None
    if said:
        return said
    declared = str(info.get("answer_mode") or "")
    if not declared and records is not None and "answer_mode" in records.columns:
        declared = ", ".join(sorted({str(m) for m in records["answer_mode"].dropna() if str(m)}))
    mode = answer_modes().get(declared)
    if mode is not None:
        return mode.description
    return GENERIC_ANSWERS


def run_entry(folder: RunFolder) -> dict[str, Any]:
    """One scored folder: its runs, models, suites and run.json fields, plus what the suites of
    its records add (``SuiteMetrics.run_fields``)."""
    info, records = folder.info, folder.records
    models = sorted(records["model"].unique()) if not records.empty else []
    suites = sorted(records["suite"].unique()) if not records.empty else []
    from framebench.paths import display_path

    entry: dict[str, Any] = {
        "run_dir": display_path(folder.path),
        "run_ids": sorted(records["run_id"].unique()) if not records.empty else [],
        "models": models,
        "suites": suites,
        "n_records": len(records),
        "model_fingerprint": info.model_fingerprint or None,
        "dataset_hash": info.dataset_hash or None,
        "decoding": info.get("decoding"),
        "code_version": info.code_version or None,
        "started": info.started or None,
        "finished": info.finished or None,
        "answer_mode": answer_mode(models[0] if len(models) == 1 else "", suites[0] if suites else "", info,
                                   records),
    }
    for suite in _suites_of(records):
        entry.update(suite.run_fields(info, records))
    data, selection = info.get("data"), info.get("selection")
    if data:
        entry["data"] = display_path(data) if isinstance(data, str) else data
    if selection:
        entry["selection"] = selection
    return entry


def report_meta(folders: Sequence[RunFolder], generated: str | None = None) -> dict[str, Any]:
    """The ``meta`` block for the scored run folders."""
    from framebench import __version__
    from framebench.registry import suites
    from framebench.run_folder import now_iso
    entries = [run_entry(folder) for folder in folders]
    fingerprints = {m: e["model_fingerprint"] for e in entries for m in e["models"] if e["model_fingerprint"]}
    meta = {
        "schema_version": SCHEMA_VERSION,
        "generated": generated or now_iso(),
        "framebench_version": __version__,
        "git_commit": git_commit(),
        "run_ids": sorted({r for e in entries for r in e["run_ids"]}),
        "model_fingerprints": dict(sorted(fingerprints.items())),
        "dataset_hashes": sorted({e["dataset_hash"] for e in entries if e["dataset_hash"]}),
        "runs": entries,
    }
    for suite in suites().values():
        meta.update(suite.metrics.meta_fields(entries))
    return meta


def meta_summary(meta: Mapping[str, Any]) -> str:
    """One line: when, by which framebench, which report schema."""
    commit = meta.get("git_commit")
    code = f"framebench {meta.get('framebench_version', '')}" + (f" (git {commit[:12]})" if commit else "")
    return (f"Generated {meta.get('generated', '')} by {code}; report schema version "
            f"{meta.get('schema_version', '')}; {len(meta.get('runs', []))} run folder(s) scored.")


def meta_table(meta: Mapping[str, Any]):
    """The scored run folders as a display table (``framebench.scoring.markdown.Table``)."""
    from framebench.scoring.sections import MISSING, Table

    rows = []
    for run in meta.get("runs", []):
        times = f"{run['started']} → {run.get('finished') or '?'}" if run.get("started") else MISSING
        rows.append([
            str(run.get("run_dir", "")), ", ".join(run.get("models", [])) or MISSING,
            f"{run.get('n_records', 0):,}", ", ".join(run.get("run_ids", [])) or MISSING,
            str(run.get("answer_mode", "")), _short(run.get("model_fingerprint") or MISSING),
            str(run.get("dataset_hash") or MISSING)[:16], _decoding_text(run.get("decoding")),
            str(run.get("code_version") or MISSING), times,
        ])
    return Table(
        title="Provenance: scored run folders",
        caption="From each folder's records and run.json. Model fingerprint: weights and chat-template "
        "hashes (or API model and server); dataset: sha256 of the items or episodes file (first 16 "
        "hex digits); decoding: the generation settings per format or condition, or the planner's.",
        header=["Run folder", "Model(s)", "Records", "Run id(s)", "Answers", "Model fingerprint",
                "Dataset sha256", "Decoding", "Code", "Started → finished"],
        rows=rows,
    )


def _short(text: Any, keep: int = 48) -> str:
    text = str(text)
    return text if len(text) <= keep else text[:keep] + "…"


def _decoding_text(decoding: Any) -> str:
    """A compact, stable rendering of run.json's decoding entry: per format or condition
    ``binary: 8 tok, T=0``; planner settings as ``key=value``."""
    if not decoding:
        return "–"
    if not isinstance(decoding, Mapping):
        return str(decoding)
    parts = []
    for key in sorted(decoding):
        value = decoding[key]
        if isinstance(value, Mapping) and "max_new_tokens" in value:
            parts.append(f"{key}: {_generation_text(value)}")
        elif isinstance(value, Mapping):
            parts.append(f"{key}: {_decoding_text(value)}")
        else:
            parts.append(f"{key}={json.dumps(value, default=str) if not isinstance(value, str) else value}")
    if "max_new_tokens" in decoding:
        return _generation_text(decoding)
    return "; ".join(parts)


def _generation_text(d: Mapping[str, Any]) -> str:
    tokens = d.get("max_new_tokens")
    text = f"{tokens} tok" if tokens is not None else "no limit"
    temperature = d.get("temperature")
    text += ", greedy" if not temperature else f", T={temperature}"
    if d.get("stop"):
        text += f", stop {json.dumps(list(d['stop']))}"
    return text


class Provenance(ReportPart):
    """The ``meta`` block: what was scored, by which code, when; shown last (report.json keeps it
    first); report.html folds its table under the summary line."""

    name = "meta"
    title = "Provenance"
    order = 0
    last = True

    def compute(self, inputs: ReportInput) -> dict[str, Any] | None:
        if inputs.quick or not inputs.runs.folders:
            return None
        return report_meta(inputs.runs.folders)

    def report_sections(self, report: Mapping[str, Any]) -> list[Section]:
        meta = report[self.name]
        return [Section(self.title, [meta_table(meta)], note=meta_summary(meta))]


PROVENANCE = Provenance()
