"""A run folder, written and read here and nowhere else.

A run folder holds ``records.parquet`` (the contract, ``framebench.records``), ``prompts.jsonl``
(``{item_id, prompt}`` per line, for the report's drill-down), ``run.json`` (:class:`RunJson`:
what produced the records) and, for resumable producers, the result store ``store.sqlite``.

- **One type.** :class:`RunJson` is run.json, written by :func:`write_run` and read back by
  :func:`read_run_json`, the one writer and the one reader.
- **One identity.** :class:`RunIdentity` is what makes two invocations the same run, known
  before any model loads: it is stored in run.json, compared by :func:`check_reuse` (``--force``),
  and the run id derives from it (:meth:`RunIdentity.run_id`).
- **Run id policy**, for every producer: ``<model slug>-<12 hex>``, the hash over everything that
  determines the results (model fingerprint, dataset hash, selection, decoding or planner
  settings), so the same command over the same inputs writes the same run id, resumed or not.
- **Integrity.** :func:`write_run` records the sha256 of every file it wrote (``files``) and seals
  run.json with the hash of its own content (``sha256``); :func:`verify_run` checks both before
  ``score`` and ``view`` read a folder.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench.errors import UserError
from framebench.files import file_sha256, write_json_atomic, write_text_atomic
from framebench.records import RECORDS_FILE, label_answer_modes, read_records, write_records
from framebench.store import STORE_FILE, sha256, stable_json

if TYPE_CHECKING:
    import pandas as pd

RUN_FILE = "run.json"
PROMPTS_FILE = "prompts.jsonl"
EPISODE_LOGS = "episodes"  # embodied: one JSON log per episode variant
RUN_FILES = (RECORDS_FILE, PROMPTS_FILE, RUN_FILE, STORE_FILE)
SEAL_KEY = "sha256"  # run.json's seal: the hash of its own content
FILES_KEY = "files"  # run.json: {file name: sha256} of the files the run wrote
FORCE_HINT = "pass --force to read it anyway"
HISTORY_FIELDS = ("n_generated", "n_from_store", "seconds")  # a run's own fields its history keeps
IMPORTED = {"executor": {"kind": "import"}, "persist": {}}  # run.json of records another tool produced


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def code_version() -> str:
    """Package version plus the git commit of the checkout, when there is one."""
    from framebench import __version__

    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        return f"{__version__}+g{commit}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return __version__


def _host() -> str:
    import socket

    return socket.gethostname()


def duplicate_key() -> list[str]:
    """One response per model and item, and per value of the suites' ``key_columns`` (OMIT: per
    condition and frame): ``RecordsSchema.key_columns`` of the registered contract."""
    from framebench.records import registered_schema

    return registered_schema().key_columns()


# ---------------------------------------------------------------- identity and run id


def model_slug(spec: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", spec.rsplit("/", 1)[-1]).strip("-").lower()
    return slug[:40] or "model"


def run_id_for(model: str, determinants: Any) -> str:
    """``<model slug>-<hash>`` over what determines the results (any JSON-able value)."""
    return f"{model_slug(model)}-{sha256(stable_json(determinants))[:12]}"


@dataclass(frozen=True)
class RunIdentity:
    """What makes two invocations the same run, known before any model loads: the model as
    asked, the dataset hash and the selection (what was selected, and how it runs). Stored in
    run.json as ``identity``; the run id derives from it once the model's fingerprint is known."""

    model: str
    dataset_hash: str
    selection: Mapping[str, Any] = field(default_factory=dict)
    # what else the run id hashes, when the selection knows it (text: the decodings); None: what
    # the worker reports (``WorkerMeta.settings``: a planner's settings)
    settings: Any = None
    # the part of the selection the run id hashes, when not all of it (episode runs: the limit;
    # their other settings enter the id with the planner's own settings)
    hashed_selection: Mapping[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {"model": self.model, "dataset_hash": self.dataset_hash, "selection": dict(self.selection)}

    def run_id(self, spec: str, fingerprint: str, worker_settings: Any = None) -> str:
        """The run id of this identity answered by the model ``spec`` with ``fingerprint``."""
        hashed = self.selection if self.hashed_selection is None else self.hashed_selection
        settings = worker_settings if self.settings is None else self.settings
        return run_id_for(spec, [fingerprint, self.dataset_hash, hashed, settings])


# ---------------------------------------------------------------- run.json


@dataclass(frozen=True)
class RunJson:
    """``run.json``: the contract fields, then the producer's own (``extra``, stored at the top
    level beside them). ``code_version``, ``finished``, ``host``, ``history`` and ``files`` are
    filled by :func:`write_run`; ``code_version`` given: what made records no code computed
    ("authored ...")."""

    run_id: str
    model: str
    model_fingerprint: str
    decoding: Mapping[str, Any]
    dataset_hash: str
    started: str
    producer: str  # the front end or tool that wrote it: "text", "embodied", "habitat", "omit-personas", ...
    simulator: str = ""  # embodied runs: "symbolic" or "habitat"
    model_info: Mapping[str, Any] = field(default_factory=dict)
    identity: Mapping[str, Any] = field(default_factory=dict)  # RunIdentity.as_json()
    extra: Mapping[str, Any] = field(default_factory=dict)
    code_version: str = ""
    finished: str = ""
    host: str = ""
    history: tuple[Mapping[str, Any], ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clash = set(self.extra) & ({f.name for f in fields(self)} | {SEAL_KEY})
        if clash:
            raise ValueError(f"run.json extra fields clash with contract fields: {sorted(clash)}")

    def get(self, name: str, default: Any = None) -> Any:
        """A field by its run.json name (a contract field, else the producer's own); ``default``
        when the run.json does not have it."""
        if name not in _CONTRACT or name == "extra":
            return self.extra.get(name, default)
        value = getattr(self, name)
        absent = value == "" or (isinstance(value, Mapping | tuple) and not value)
        return default if absent else value

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {**self.extra}
        for name in _CONTRACT:
            value = getattr(self, name)
            if name == "extra" or (name in _OPTIONAL and not value):
                continue
            data[name] = list(map(dict, value)) if name == "history" else \
                dict(value) if isinstance(value, Mapping) else value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunJson:
        """A parsed run.json; fields it lacks (older runs, hand-made folders) take their defaults."""
        known: dict[str, Any] = {}
        for name in _CONTRACT:
            if name == "extra" or name not in data:
                continue
            value = data[name]
            if name == "history":
                known[name] = tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, list) else ()
            elif name in _MAPPINGS:
                known[name] = value if isinstance(value, Mapping) else {}
            else:
                known[name] = "" if value is None else str(value)
        extra = {k: v for k, v in data.items() if k not in _CONTRACT and k != SEAL_KEY}
        base = {"run_id": "", "model": "", "model_fingerprint": "", "decoding": {}, "dataset_hash": "",
                "started": "", "producer": ""}
        return cls(**{**base, **known}, extra=extra)


_CONTRACT = tuple(f.name for f in fields(RunJson))
_OPTIONAL = ("simulator", "model_info", "identity", "files")  # written only when set
_MAPPINGS = ("decoding", "model_info", "identity", "files")
NO_RUN_JSON = RunJson.from_json({})  # a folder without a readable run.json


def content_seal(info: Mapping[str, Any]) -> str:
    """sha256 of run.json's content without its seal, as it reads back from the file."""
    body = json.loads(json.dumps({k: v for k, v in info.items() if k != SEAL_KEY}, default=str))
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256(canonical)


def _raw_run_json(run_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(run_dir) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_run_json(run_dir: str | Path) -> RunJson | None:
    """``run_dir/run.json`` when there is a readable one (else None): the one reader."""
    data = _raw_run_json(Path(run_dir))
    return None if data is None else RunJson.from_json(data)


def _with_history(run: RunJson, previous: RunJson | None) -> RunJson:
    """``run`` as it is written: on a resumed run the first invocation's ``started``/``finished``/
    ``host`` stay and every invocation is appended to ``history`` (when, where, what it generated)."""
    version = run.code_version or code_version()
    entry = {"started": run.started, "finished": now_iso(), "host": _host(), "code_version": version,
             **{k: run.extra[k] for k in HISTORY_FIELDS if k in run.extra}}
    history: tuple[Mapping[str, Any], ...] = ()
    first = entry
    if previous is not None and previous.run_id == run.run_id:
        history = previous.history or ({k: previous.get(k) for k in ("started", "finished", "host", "code_version")
                                        if previous.get(k) is not None},)
        first = {k: previous.get(k) or entry[k] for k in ("started", "finished", "host")}
    return replace(run, code_version=version, started=first["started"], finished=first["finished"],
                   host=first["host"], history=(*history, entry))


def prompt_line(item_id: str, prompt: str, chat: Sequence[Mapping[str, str]] = ()) -> dict[str, Any]:
    """A ``prompts.jsonl`` line: the item's prompt (its last user turn) and, when the model was
    sent more than that one turn (a system turn, earlier turns), every turn as sent."""
    entry: dict[str, Any] = {"item_id": item_id, "prompt": prompt}
    if chat and [dict(turn) for turn in chat] != [{"role": "user", "content": prompt}]:
        entry["chat"] = [{"role": turn["role"], "content": turn["content"]} for turn in chat]
    return entry


def write_run(out: str | Path, rows: Iterable[Mapping[str, Any]] | pd.DataFrame,
              prompts: Iterable[tuple[str, str] | tuple[str, str, Sequence[Mapping[str, str]]]], run: RunJson,
              files: Mapping[str, Any] | None = None) -> Path:
    """Write a run folder's records, prompts, the producer's own ``files`` (name -> JSON value)
    and run.json, each atomically, records first (validated before anything is written) and
    run.json last, sealed and holding the sha256 of each: the one writer."""
    out = Path(out)
    write_records(rows, out)
    write_text_atomic("".join(json.dumps(prompt_line(*entry), ensure_ascii=False) + "\n"
                              for entry in prompts), out / PROMPTS_FILE)
    for name, value in (files or {}).items():
        write_json_atomic(value, out / name)
    hashes = {name: file_sha256(out / name) for name in [RECORDS_FILE, PROMPTS_FILE, *(files or {})]}
    written = _with_history(replace(run, files=hashes), read_run_json(out)).to_json()
    write_json_atomic({**written, SEAL_KEY: content_seal(written)}, out / RUN_FILE)
    return out


# ---------------------------------------------------------------- reuse and integrity


def check_reuse(run_dir: str | Path, identity: RunIdentity, force: bool = False) -> None:
    """Refuse to write a different run into a folder that holds one (unless ``force``).

    The stored identity is compared with ``identity`` on the next invocation, before any model is
    loaded. With ``force`` the old run.json is removed, so the history starts again.
    """
    run_dir = Path(run_dir)
    previous = read_run_json(run_dir)
    if previous is None:
        return
    new = identity.as_json()
    stored = dict(previous.identity)
    if not stored and previous.dataset_hash:  # run.json from before identities were stored
        stored = {"dataset_hash": previous.dataset_hash}
    differs = sorted(k for k in stored if k in new and stored[k] != new[k])
    if not differs:
        return
    if force:
        (run_dir / RUN_FILE).unlink(missing_ok=True)
        return
    changes = []
    for key in differs:
        old, now = stored[key], new[key]
        if isinstance(old, dict) and isinstance(now, dict):
            changes += [f"{key}.{k} {old.get(k)!r} -> {now.get(k)!r}" for k in sorted(set(old) | set(now))
                        if old.get(k) != now.get(k)]
        else:
            changes.append(f"{key} {str(old)[:40]!r} -> {str(now)[:40]!r}")
    raise UserError(f"{run_dir}: holds another run ({'; '.join(changes)}); choose another --out, or pass "
                    "--force to replace its records")


class IntegrityError(UserError):
    """A run folder's file does not match the hash its run.json recorded."""


def run_problems(run_dir: str | Path) -> list[str]:
    """Each way the folder differs from what its run.json recorded (empty: it verifies). Folders
    without the hashes (written before they existed, or made by hand) are read as they are."""
    run_dir = Path(run_dir)
    path = run_dir / RUN_FILE
    if not path.exists():
        return []
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [f"{path}: not readable JSON ({str(exc)[:80]}): damaged after the run wrote it"]
    if not isinstance(info, dict):
        return [f"{path}: not a JSON object: damaged after the run wrote it"]
    problems = []
    if SEAL_KEY in info and info[SEAL_KEY] != content_seal(info):
        problems.append(f"{path}: content does not match its sha256 (edited or damaged after the run wrote it)")
    hashes = info.get(FILES_KEY)
    if hashes is None:
        return problems
    if not isinstance(hashes, dict):
        return [*problems, f"{path}: field '{FILES_KEY}' must be an object {{file: sha256}}"]
    for name, expected in sorted(hashes.items()):
        target = run_dir / str(name)
        if Path(str(name)).name != name or not target.is_file():
            problems.append(f"{target}: missing (run.json records its sha256)")
        elif file_sha256(target) != expected:
            problems.append(f"{target}: sha256 does not match run.json (the file changed after the run wrote it)")
    return problems


def verify_run(run_dir: str | Path, force: bool = False) -> list[str]:
    """Raise ``IntegrityError`` on the first problem; with ``force`` return them (for warnings)."""
    problems = run_problems(run_dir)
    if problems and not force:
        raise IntegrityError(f"{problems[0]}; {FORCE_HINT}")
    return problems


# ---------------------------------------------------------------- reading


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
    user turn (``prompt_line``); a prompt without an entry was sent as that one turn."""
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
    info: RunJson  # NO_RUN_JSON when the folder has none or it does not parse
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
           folders: Iterable[tuple[Path, RunJson | None, pd.DataFrame]] = ()) -> Runs:
        """Runs over already read records (labelled here); ``folders``: (path, run.json, rows)."""
        return cls(label_answer_modes(records), dict(prompts or {}),
                   tuple(RunFolder(Path(p), info or NO_RUN_JSON, label_answer_modes(rows))
                         for p, info, rows in folders))


def run_limit(info: RunJson) -> int | None:
    """The ``--limit`` a run was made with (text: its selection; episodes: its identity), or None."""
    for part in (info.get("selection"), info.identity.get("selection"), info.identity):
        if isinstance(part, Mapping) and isinstance(part.get("limit"), int) and not isinstance(part["limit"], bool):
            return part["limit"]
    return None


def mixed_datasets(folders: Sequence[RunFolder]) -> list[str]:
    """One line per (model, suite) whose records come from runs over different datasets."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for folder in folders:
        digest = folder.info.dataset_hash or "unknown"
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

    folders, prompts, warnings = [], {}, []
    for run_dir in run_dirs:
        run_dir = Path(run_dir)
        if not run_dir.is_dir():
            raise UserError(f"{run_dir}: no such run folder")
        warnings += verify_run(run_dir, force=force)
        # a model's constrained rows are scored as their own model: labelled once, here
        rows = label_answer_modes(read_records(run_dir))
        folders.append(RunFolder(run_dir, read_run_json(run_dir) or NO_RUN_JSON, rows))
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
