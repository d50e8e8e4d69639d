"""One writer and one reader for run folders, whatever produced them.

A run folder holds ``records.parquet`` (the contract, ``framebench.records``), ``prompts.jsonl``
(``{item_id, prompt}`` per line, for the report's drill-down), ``run.json`` (``RunInfo``: what
produced the records) and, for resumable producers, the result store ``store.sqlite``.

Run id policy, for every producer: ``<model slug>-<12 hex>``, the hash over everything that
determines the results (model fingerprint, dataset hash, selection, decoding or planner settings).
The same command over the same inputs therefore writes the same run id, resumed or not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench.errors import UserError
from framebench.records import RECORDS_FILE, label_answer_modes, read_records, write_records
from framebench.runinfo import RUN_FILE, write_run_info, write_text_atomic
from framebench.store import STORE_FILE, sha256, stable_json

if TYPE_CHECKING:
    import pandas as pd

PROMPTS_FILE = "prompts.jsonl"
EPISODE_LOGS = "episodes"  # embodied: one JSON log per episode variant
RUN_FILES = (RECORDS_FILE, PROMPTS_FILE, RUN_FILE, STORE_FILE)


def duplicate_key() -> list[str]:
    """One response per model and item, and per value of the suites' ``key_columns`` (OMIT: per
    condition and frame): ``RecordsSchema.key_columns`` of the registered contract."""
    from framebench.records import registered_schema

    return registered_schema().key_columns()


def model_slug(spec: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", spec.rsplit("/", 1)[-1]).strip("-").lower()
    return slug[:40] or "model"


def run_id_for(model: str, determinants: Any) -> str:
    """``<model slug>-<hash>`` over what determines the results (any JSON-able value)."""
    return f"{model_slug(model)}-{sha256(stable_json(determinants))[:12]}"


@dataclass
class RunInfo:
    """``run.json``: the contract fields, then the producer's own (``extra``)."""

    run_id: str
    model: str
    fingerprint: str
    decoding: Mapping[str, Any]
    dataset_hash: str
    started: str
    producer: str  # "text", "embodied", "habitat", "omit-personas", ...
    simulator: str = ""  # embodied runs: "symbolic" or "habitat"
    model_info: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    code: str = ""  # run.json code_version when no code computed the answers ("authored ..."); "" = this checkout

    def fields(self) -> dict[str, Any]:
        """The producer-level fields of run.json (``write_run_info`` adds code version, host,
        timing and the resume history)."""
        info: dict[str, Any] = {"producer": self.producer}
        if self.simulator:
            info["simulator"] = self.simulator
        if self.model_info:
            info["model_info"] = dict(self.model_info)
        clash = set(self.extra) & {*info, "run_id", "model", "model_fingerprint", "decoding",
                                   "dataset_hash", "started", "finished", "code_version", "history"}
        if clash:
            raise ValueError(f"run.json extra fields clash with contract fields: {sorted(clash)}")
        return {**info, **self.extra}


@dataclass
class RunSummary:
    """What a text run did (``framebench.api.run_text``'s answer)."""

    run_dir: Path
    run_id: str
    n_records: int
    n_generated: int
    n_from_store: int
    parse_counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def prompt_entry(item_id: str, prompt: str, chat: Sequence[Mapping[str, str]] = ()) -> dict[str, Any]:
    """A ``prompts.jsonl`` line: the item's prompt (its last user turn) and, when the model was
    sent more than that one turn (a system turn, earlier turns), every turn as sent."""
    entry: dict[str, Any] = {"item_id": item_id, "prompt": prompt}
    if chat and [dict(turn) for turn in chat] != [{"role": "user", "content": prompt}]:
        entry["chat"] = [{"role": turn["role"], "content": turn["content"]} for turn in chat]
    return entry


def write_run(out: str | Path, rows: Iterable[Mapping[str, Any]] | pd.DataFrame,
              prompts: Iterable[tuple[str, str] | tuple[str, str, Sequence[Mapping[str, str]]]], info: RunInfo,
              files: Mapping[str, Any] | None = None) -> Path:
    """Write a run folder's records, prompts, the producer's own ``files`` (name -> JSON value)
    and run.json, each atomically, records first (validated before anything is written) and
    run.json last, holding the sha256 of each (``framebench.integrity``)."""
    from framebench.integrity import FILES_KEY, file_hashes
    from framebench.runinfo import write_json_atomic

    out = Path(out)
    write_records(rows, out)
    write_text_atomic("".join(json.dumps(prompt_entry(*entry), ensure_ascii=False) + "\n"
                              for entry in prompts), out / PROMPTS_FILE)
    for name, value in (files or {}).items():
        write_json_atomic(value, out / name)
    hashes = file_hashes(out, [RECORDS_FILE, PROMPTS_FILE, *(files or {})])
    write_run_info(out, run_id=info.run_id, model=info.model, fingerprint=info.fingerprint,
                   decoding=dict(info.decoding), dataset_hash=info.dataset_hash, started=info.started,
                   code=info.code or None, **info.fields(), **{FILES_KEY: hashes})
    return out


def read_prompts(run_dir: Path) -> dict[str, str]:
    """``item_id -> prompt`` from ``run_dir/prompts.jsonl`` when present (else empty)."""
    from framebench.jsonl import iter_jsonl

    path = Path(run_dir) / PROMPTS_FILE
    prompts: dict[str, str] = {}
    if not path.exists():
        return prompts
    for number, entry in iter_jsonl(path, "prompt entry"):
        if not isinstance(entry.get("item_id"), str) or not isinstance(entry.get("prompt"), str):
            raise UserError(f"{path}: line {number}: expected {{\"item_id\": str, \"prompt\": str}}")
        prompts[entry["item_id"]] = entry["prompt"]
    return prompts


def read_chats(run_dir: Path) -> dict[str, list[dict[str, str]]]:
    """``item_id -> turns as sent`` for the prompts of ``run_dir`` that were sent as more than one
    user turn (``prompt_entry``); a prompt without an entry was sent as that one turn."""
    from framebench.jsonl import iter_jsonl

    path = Path(run_dir) / PROMPTS_FILE
    chats: dict[str, list[dict[str, str]]] = {}
    if not path.exists():
        return chats
    for number, entry in iter_jsonl(path, "prompt entry"):
        chat = entry.get("chat")
        if chat is None:
            continue
        if not isinstance(chat, list) or not all(
                isinstance(t, dict) and isinstance(t.get("role"), str) and isinstance(t.get("content"), str)
                for t in chat):
            raise UserError(f"{path}: line {number}: field 'chat': expected a list of "
                            "{\"role\": str, \"content\": str}")
        chats[entry["item_id"]] = chat
    return chats


@dataclass(frozen=True)
class RunFolder:
    """One scored run folder: where it is, its run.json (empty when absent or unreadable) and its
    records (labelled, see ``Runs``)."""

    path: Path
    info: Mapping[str, Any]
    records: pd.DataFrame


@dataclass(frozen=True)
class Runs:
    """What scoring reads: every folder's records concatenated, with a model's constrained rows
    labelled as a model of their own (``label_answer_modes``, applied once, here), the prompts
    (``item_id -> prompt``), the folders, and the integrity warnings of folders read with ``force``."""

    records: pd.DataFrame
    prompts: Mapping[str, str] = field(default_factory=dict)
    folders: tuple[RunFolder, ...] = ()
    warnings: tuple[str, ...] = ()
    mixed: tuple[str, ...] = ()  # pooled over different datasets, allowed by the caller (marked)

    @classmethod
    def of(cls, records: pd.DataFrame, prompts: Mapping[str, str] | None = None,
           folders: Iterable[tuple[Path, Mapping[str, Any], pd.DataFrame]] = ()) -> Runs:
        """Runs over already read records (labelled here); ``folders``: (path, run.json, rows)."""
        return cls(label_answer_modes(records), dict(prompts or {}),
                   tuple(RunFolder(Path(p), info, label_answer_modes(rows)) for p, info, rows in folders))


def read_run_json(run_dir: Path) -> dict[str, Any]:
    """``run_dir/run.json`` as a dict; empty when the folder has none or it does not parse (the
    report then lists the folder with what its records say). The one reader is
    ``framebench.runinfo.read_run_info``."""
    from framebench.runinfo import read_run_info

    return read_run_info(run_dir) or {}


def run_limit(info: Mapping[str, Any]) -> int | None:
    """The ``--limit`` a run was made with (text: its selection; episodes: its identity), or None."""
    for key in ("selection", "identity"):
        part = info.get(key)
        if isinstance(part, Mapping) and isinstance(part.get("limit"), int) and not isinstance(part["limit"], bool):
            return part["limit"]
    return None


def mixed_datasets(folders: Sequence[RunFolder]) -> list[str]:
    """One line per (model, suite) whose records come from runs over different datasets."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for folder in folders:
        digest = str(folder.info.get("dataset_hash") or "unknown")
        if folder.records.empty:
            continue
        for model, suite in folder.records[["model", "suite"]].drop_duplicates().itertuples(index=False):
            seen.setdefault((str(model), str(suite)), {}).setdefault(str(folder.path), digest)
    lines = []
    for (model, suite), runs in seen.items():
        if len(set(runs.values())) > 1:
            listed = ", ".join(f"{path} (dataset {digest[:12]})" for path, digest in runs.items())
            lines.append(f"model {model!r} ({suite}) pools runs over different datasets: {listed}")
    return lines


def load_runs(run_dirs: list[Path], force: bool = False, allow_mixed: bool = False) -> Runs:
    """All runs' records (validated) concatenated, their prompts and run.json files; each
    folder's files are checked against the hashes in its run.json first (``force``: mismatches
    become ``Runs.warnings``). One model's records of one suite from runs over different datasets
    are refused unless ``allow_mixed`` (then they are pooled and listed in ``Runs.mixed``)."""
    import pandas as pd

    from framebench.integrity import verify_run

    folders, prompts, warnings = [], {}, []
    for run_dir in run_dirs:
        run_dir = Path(run_dir)
        if not run_dir.is_dir():
            raise UserError(f"{run_dir}: no such run folder")
        warnings += verify_run(run_dir, force=force)
        # a model's constrained rows are scored as their own model: labelled once, here
        rows = label_answer_modes(read_records(run_dir))
        folders.append(RunFolder(run_dir, read_run_json(run_dir), rows))
        prompts.update(read_prompts(run_dir))
    if not folders:
        raise UserError("no run folders given")
    frames = [folder.records for folder in folders]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    key = duplicate_key()
    dup = df.duplicated(key, keep="first")
    if dup.any():
        row = df[dup].iloc[0]
        extra = "".join(f", {c} {row[c]!r}" for c in key[3:] if row[c] not in ("", None))
        raise UserError(
            f"record for model {row['model']!r}, item {row['item_id']!r}{extra} appears twice "
            f"(run {row['run_id']!r}): score each run once")
    mixed = mixed_datasets(folders)
    if mixed and not allow_mixed:
        raise UserError(f"{mixed[0]}; score them separately, or pass --allow-mixed-datasets to pool them "
                        "(the report is then marked)")
    return Runs(df, prompts, tuple(folders), tuple(warnings), tuple(mixed))
