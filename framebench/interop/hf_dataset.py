"""``framebench export hf``: built items as a Hugging Face dataset folder.

One config per suite, task and format (``<suite>-<task>-<format>``), each a ``test`` split in one
parquet file under ``data/<config>/``. A row is one job of an item (FramingQA: one per item; OMIT:
one per ``--conditions`` entry, M0 by default): every field of the item, then what framebench sends
and scores: ``record_id``, ``condition``, ``prompt`` (the last user turn), ``chat`` (every turn),
``max_new_tokens``, ``stop``, ``choices`` (the allowed answers) and ``gold`` (an item field).
``README.md`` is the dataset card: the Hub's YAML header (``configs`` with ``data_files``,
licence, task categories, language, pretty name, size category), then per config its source and
licence (from the build's source notes), its fields, the dataset hash and framebench version, and
both papers' citations. ``datasets.load_dataset(DIR, CONFIG, split="test")`` loads it offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from framebench.bounds import shown
from framebench.errors import UserError
from framebench.items import ITEMS_FILE, read_items
from framebench.jsonl import iter_jsonl, read_text_strict
from framebench.paths import data_path
from framebench.registry import suite

SPLIT = "test"
JOB_FIELDS = ("record_id", "condition", "prompt", "chat", "max_new_tokens", "stop", "choices")
HUB_LICENSES = {"apache-2.0": "apache-2.0", "cc by-nc-sa 4.0": "cc-by-nc-sa-4.0", "cc by 4.0": "cc-by-4.0",
                "cc by-sa": "cc-by-sa-4.0", "cc by-sa 4.0": "cc-by-sa-4.0", "mit": "mit"}
TASK_CATEGORIES = {"binary": "question-answering", "mc": "multiple-choice"}
CITATIONS = (
    "@misc{framingqa,\n  title = {FramingQA: Does the Question Shape the Answer? Measuring the "
    "Compositional Framing Effect},\n  note = {The copy framebench works from names no authors and no arXiv id}\n}",
    "@misc{omit2026,\n  title = {OMIT the Action: Measuring Framing-Invariant Omission Bias under "
    "Philosophical Disagreement},\n  author = {Lee, Sihyeon and Song, Jihun and Kim, Chanwoo and Kum, Jiwoo "
    "and Park, Chanjun},\n  year = {2026},\n  note = {cs.CL, 6 October 2026; Soongsil University}\n}",
)


@dataclass(frozen=True)
class Source:
    """A source note of a build: where its contexts come from and under which licence."""

    name: str
    licence: str


def items_file(data: Path) -> Path:
    data = data_path(data)
    return data / ITEMS_FILE if data.is_dir() else data


def config_name(item: dict[str, Any]) -> str:
    return f"{item['suite']}-{item['task']}-{item['format']}"


def job_row(job: Any) -> dict[str, Any]:
    """One exported row: the item's fields, then how framebench asks and scores it."""
    condition = getattr(job.condition, "name", job.condition)
    return {**job.item, "record_id": job.record_id, "condition": condition or "", "prompt": job.prompt,
            "chat": [{"role": t["role"], "content": t["content"]} for t in job.chat],
            "max_new_tokens": job.decoding.max_new_tokens, "stop": list(job.decoding.stop),
            "choices": list(suite(job.item["suite"]).items.answer_choices(job))}


def item_jobs(data: Path, conditions: Sequence[str] = ()) -> tuple[Path, list[Any]]:
    """The items file of ``data`` and every text job of its items (in items order)."""
    from framebench.pipeline.text import build_jobs

    path = items_file(data)
    items = [it for it in read_items(path) if suite(it["suite"]).items.makes_jobs]
    if not items:
        raise UserError(f"{path}: no text items to export")
    return path, build_jobs(items, conditions, path)


def config_rows(jobs: Sequence[Any]) -> dict[str, list[dict[str, Any]]]:
    """Rows per config, configs and rows in items order."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        rows.setdefault(config_name(job.item), []).append(job_row(job))
    return rows


def _arrow_type(values: list[Any]) -> Any:
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64()
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.float64()
    if present and all(isinstance(v, list) for v in present):
        if any(isinstance(x, dict) for v in present for x in v):
            return pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
        return pa.list_(pa.string())
    return pa.string()


def rows_table(rows: list[dict[str, Any]]) -> Any:
    """The rows as an arrow table, one typed column per field (union of the rows' fields)."""
    import pyarrow as pa

    names = list(dict.fromkeys(k for row in rows for k in row))
    columns = {n: [row.get(n) for row in rows] for n in names}
    schema = pa.schema([(n, _arrow_type(v)) for n, v in columns.items()])
    return pa.table(columns, schema=schema)


def _present(path: Path) -> bool:
    """A build file is there (a dangling or looping link counts: reading it names the problem)."""
    return path.exists() or path.is_symlink()


def context_sources(contexts: Path) -> dict[str, Source]:
    """``context_id -> Source`` from a build's ``contexts.jsonl`` (its ``provenance``: ``dataset``
    or ``source``, and ``license``, each a string), every line checked."""
    by_context: dict[str, Source] = {}
    for n, ctx in iter_jsonl(contexts, "context"):
        where = f"{contexts}: line {n}"
        if not isinstance(ctx.get("context_id"), str):
            raise UserError(f"{where}: field 'context_id': expected a string, got {shown(ctx.get('context_id'))}")
        prov = ctx.get("provenance") or {}
        if not isinstance(prov, dict):
            raise UserError(f"{where}: field 'provenance': expected an object, got {type(prov).__name__}")
        for key in ("dataset", "source", "license"):
            if prov.get(key) is not None and not isinstance(prov[key], str):
                raise UserError(f"{where}: field 'provenance.{key}': expected a string, got {shown(prov[key])}")
        by_context[ctx["context_id"]] = Source(prov.get("dataset") or prov.get("source") or "unknown",
                                               prov.get("license") or "unknown")
    return by_context


def source_notes(data_dir: Path, rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[Source]]:
    """Per config, the sources and licences the build noted: ``contexts.jsonl`` provenance
    (FramingQA), the OMIT build report (project-authored scenarios or MoralChoice)."""
    contexts = data_dir / "contexts.jsonl"
    by_context = context_sources(contexts) if _present(contexts) else {}
    omit = _omit_source(data_dir)
    notes: dict[str, list[Source]] = {}
    for config, config_rows_ in rows.items():
        found = [by_context[r["context_id"]] for r in config_rows_ if r["context_id"] in by_context]
        if not found and omit is not None:  # the build report of an OMIT build folder
            found = [omit]
        notes[config] = list(dict.fromkeys(found)) or [Source("unknown (the build left no source notes)", "unknown")]
    return notes


def _omit_source(data_dir: Path) -> Source | None:
    report = data_dir / "build_report.md"
    text = read_text_strict(report) if _present(report) else ""
    if "OMIT build report" not in text:
        return None
    if "Project-authored" in text:
        return Source("project-authored scenarios (framebench)", "Apache-2.0")
    return Source("MoralChoice (Scherrer et al., 2023), frames written by the build's model",
                  "MIT (MoralChoice repository) / CC-BY-4.0 (its HF mirror)")


def hub_license(licence: str) -> str:
    return HUB_LICENSES.get(licence.strip().lower(), "other")


def size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "n>1M"


def card_header(rows: dict[str, list[dict[str, Any]]], notes: dict[str, list[Source]]) -> dict[str, Any]:
    """The Hub's YAML metadata of the card."""
    licences = sorted({hub_license(s.licence) for sources in notes.values() for s in sources})
    formats = sorted({r[0]["format"] for r in rows.values()})
    return {
        "license": licences[0] if len(licences) == 1 else licences,
        "language": ["en"],
        "pretty_name": "framebench items (" + ", ".join(sorted({r[0]["suite"] for r in rows.values()})) + ")",
        "task_categories": sorted({TASK_CATEGORIES.get(f, "question-answering") for f in formats}),
        "size_categories": [size_category(sum(len(r) for r in rows.values()))],
        "configs": [{"config_name": name, "data_files": [{"split": SPLIT, "path": f"data/{name}/{SPLIT}-*.parquet"}]}
                    for name in rows],
    }


def card_text(rows: dict[str, list[dict[str, Any]]], notes: dict[str, list[Source]],
              dataset_hash: str, version: str) -> str:
    """The card's body: what a row is, then per config its size, sources and fields."""
    lines = ["# framebench items", "",
             "Built framebench items, one config per suite, task and format, each a `test` split. A row",
             "is one prompt framebench sends: every item field, then `record_id`, `condition`, `prompt`",
             "(the last user turn), `chat` (every turn), `max_new_tokens` and `stop` (greedy decoding),",
             "`choices` (the allowed answers) and `gold`.", "",
             f"- dataset hash (sha256 of items.jsonl): `{dataset_hash}`", f"- framebench version: `{version}`", ""]
    for name, config_rows_ in rows.items():
        lines += [f"## {name}", "", f"- rows: {len(config_rows_)}",
                  f"- contexts: {len({r['context_id'] for r in config_rows_})}"]
        lines += [f"- source: {s.name} (licence: {s.licence})" for s in notes[name]]
        lines += ["- fields: " + ", ".join(f"`{k}`" for k in dict.fromkeys(k for r in config_rows_ for k in r)), ""]
    lines += ["## Citation", "", "```bibtex", *"\n\n".join(CITATIONS).splitlines(), "```", ""]
    return "\n".join(lines)


def write_card(out: Path, rows: dict[str, list[dict[str, Any]]], notes: dict[str, list[Source]],
               dataset_hash: str, version: str) -> Path:
    import yaml

    header = yaml.safe_dump(card_header(rows, notes), sort_keys=False, allow_unicode=True)
    path = out / "README.md"
    path.write_text(f"---\n{header}---\n\n{card_text(rows, notes, dataset_hash, version)}", encoding="utf-8")
    return path


def export_hf(data: Path, out: Path, conditions: Sequence[str] = ()) -> dict[str, int]:
    """Write the dataset folder; returns rows per config. Everything is checked (and written to a
    temporary folder) before ``out`` appears."""
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    from framebench.files import file_sha256
    from framebench.paths import check_out_folder
    from framebench.run_folder import code_version
    out = check_out_folder(Path(out))
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out}: exists and is not empty")
    path, jobs = item_jobs(data, conditions)
    rows = config_rows(jobs)
    notes = source_notes(path.parent, rows)
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.exists() else None) as tmp:
        staged = Path(tmp) / "dataset"
        for name, config_rows_ in rows.items():
            (staged / "data" / name).mkdir(parents=True)
            pq.write_table(rows_table(config_rows_), staged / "data" / name / f"{SPLIT}-00000-of-00001.parquet")
        write_card(staged, rows, notes, file_sha256(path), code_version())
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            out.rmdir()
        shutil.move(str(staged), str(out))
    return {name: len(r) for name, r in rows.items()}
