"""The record schema (docs/design.md "Records", a contract) with its writer and validating reader.

One row per model response (text suites) or per episode variant (embodied). Every run writes
``RUN_DIR/records.parquet``; scoring reads nothing else.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from framebench.errors import UserError
from framebench.vocabulary import BIASES, BINARY_ANSWERS, LEVELS, MC_ANSWERS, NEUTRAL

RECORDS_FILE = "records.parquet"
# Written into every records file's parquet metadata. 1: files from before the field (read as
# they are); 2: the open contract (core columns plus the registered suites' columns); 3: only what
# every suite has is core (the suites declare the rest, FramingQA's ``variant`` is ``phrasing``;
# files of 1 and 2 map on read through the suites' ``former_names``).
SCHEMA_VERSION = 3
VERSION_KEY = b"framebench.records_schema_version"

# The core columns every row has, whatever its suite (column -> arrow type, in contract order):
# ids, model, suite/task/format, context and item, the framing every suite shares (``bias``,
# ``level``: docs/design.md "Records"), gold, answer, parse, correct, output; the registered
# suites' own columns come between ``output`` and the trailing answer-mode columns.
CORE_COLUMNS: dict[str, pa.DataType] = {
    "run_id": pa.string(),
    "model": pa.string(),
    "suite": pa.string(),
    "task": pa.string(),
    "format": pa.string(),
    "context_id": pa.string(),
    "item_id": pa.string(),
    "bias": pa.string(),
    "level": pa.string(),
    "gold": pa.string(),
    "answer": pa.string(),
    "parse": pa.string(),
    "correct": pa.bool_(),
    "output": pa.string(),
}
# the answer-mode contract's columns (``framebench.answering.AnswerMode``: any mode may keep
# the allowed answers' probabilities, ``keeps_probs``), after every suite's
TRAILING_COLUMNS: dict[str, pa.DataType] = {"answer_mode": pa.string(), "answer_probs": pa.string()}

PARSES = ("ok", "unparsed", "refusal")


def answer_mode_values() -> tuple[str, ...]:
    """The ``answer_mode`` vocabulary: the registered answer modes, and "" (no text run)."""
    from framebench.registry import answer_modes

    return (*answer_modes(), "")


# ``suite``, ``task`` and ``format`` take the values the registered suites declare; these
# enumerated core columns are fixed here (a suite adds the enums of its own columns).
CORE_ENUMS: dict[str, tuple[str, ...]] = {
    "bias": (NEUTRAL, *BIASES),
    "level": (*LEVELS, ""),
    "parse": PARSES,
}

# Defaults for columns a suite does not use, so producers only fill what they know.
CORE_DEFAULTS: dict[str, Any] = {
    "level": "",
    "gold": "",
    "answer": "",
    "parse": "ok",
    "correct": False,
    "output": "",
    "answer_mode": "",
    "answer_probs": "",
}
# Columns added after the first records files were written: a file without them reads as if they
# held their defaults (answer_mode "" = not a text run or written before answer modes existed).
LATER_COLUMNS = ("answer_mode", "answer_probs")
NON_EMPTY = ("run_id", "model", "context_id", "item_id")
# The answer sets of the standard formats, for a suite that names its formats only.
STANDARD_ANSWERS: dict[str, tuple[str, ...]] = {"binary": BINARY_ANSWERS, "mc": MC_ANSWERS}

RowCheck = Callable[[pd.DataFrame], Iterable[tuple[pd.Series, str]]]


@dataclass(frozen=True)
class SuiteRecords:
    """What a suite's rows carry beyond the core columns (``SuiteItems.records``).

    ``formats``: each ``format`` value its rows may have -> the answers ``gold`` and ``answer``
    may hold there (``()``: both stay empty, e.g. an episode); ``gold_optional``: gold may also be
    empty (a question without a right answer). ``columns``: its own columns, name -> (arrow type,
    default); other suites' rows hold the default. Two suites may declare the same column with the
    same type and default (FramingQA's and embodied's ``slot``): it is theirs together.
    ``enums``: the allowed values of its own columns (the default included). ``check``: its rows
    -> (bad rows, message) pairs, for what the declarations cannot say. ``column_order``: where
    its columns go among the suites' columns in a records file (low first; ties in registration
    order). ``former_names``: an earlier name of one of its columns -> (the column, the first
    records schema version with the new name); older files are read under the new name.
    ``key_columns``: its columns that, with ``model``, ``suite`` and ``item_id``, tell one
    response from another (OMIT: a scenario's frame and condition), for the duplicate check and
    the model comparisons' item matching.
    """

    formats: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    columns: Mapping[str, tuple[pa.DataType, Any]] = field(default_factory=dict)
    enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    gold_optional: bool = False
    check: RowCheck | None = None
    column_order: int = 50  # where its columns go among the suites' (low first), so a file's layout is stable
    former_names: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    key_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordsSchema:
    """The records contract the validator checks against: the core columns merged with every
    suite's declarations (``build_schema``)."""

    columns: dict[str, pa.DataType]
    defaults: dict[str, Any]
    enums: dict[str, tuple[str, ...]]
    suites: dict[str, tuple[tuple[str, ...], SuiteRecords]]  # name -> (tasks, declarations)

    @property
    def arrow(self) -> pa.Schema:
        return pa.schema([pa.field(name, typ) for name, typ in self.columns.items()])

    @property
    def required(self) -> list[str]:
        return [c for c in self.columns if c not in self.defaults]

    def owner(self, column: str) -> str | None:
        """The (first) suite that declares ``column`` (None: a core column)."""
        return next(iter(self.owners(column)), None)

    def owners(self, column: str) -> tuple[str, ...]:
        """The suites that declare ``column`` (empty: a core column)."""
        return tuple(name for name, (_, decl) in self.suites.items() if column in decl.columns)

    def suite_columns(self) -> tuple[str, ...]:
        """Every column a suite declares, in file order."""
        return tuple(c for c in self.columns if self.owners(c))

    def key_columns(self) -> list[str]:
        """What tells one response from another: ``model``, ``suite``, ``item_id`` and every
        suite's ``key_columns``."""
        return ["model", "suite", "item_id",
                *dict.fromkeys(c for _, decl in self.suites.values() for c in decl.key_columns)]

    def former_names(self, version: int) -> dict[str, str]:
        """Old column name -> its column, for a file of records schema ``version``."""
        return {old: new for _, decl in self.suites.values()
                for old, (new, since) in decl.former_names.items() if version < since}


def build_schema(suites: Mapping[str, tuple[Sequence[str], SuiteRecords]]) -> RecordsSchema:
    """The contract for these suites (name -> (tasks, declarations), in column order)."""
    columns, defaults = dict(CORE_COLUMNS), dict(CORE_DEFAULTS)
    enums = {"suite": tuple(suites), "task": tuple(dict.fromkeys(t for tasks, _ in suites.values() for t in tasks)),
             "format": tuple(dict.fromkeys(f for _, decl in suites.values() for f in decl.formats)),
             **CORE_ENUMS, "answer_mode": answer_mode_values()}
    owners: dict[str, str] = {}
    for name, (_, decl) in sorted(suites.items(), key=lambda kv: kv[1][1].column_order):
        for column, (typ, default) in decl.columns.items():
            if column in CORE_COLUMNS or column in TRAILING_COLUMNS:
                raise TypeError(f"suite {name!r} declares record column {column!r}, a core column")
            if column in owners and (columns[column], defaults[column]) != (typ, default):
                raise TypeError(f"suite {name!r} declares record column {column!r}, which suite "
                                f"{owners[column]!r} declares with another type or default")
            owners.setdefault(column, name)
            columns[column], defaults[column] = typ, default
        for column, allowed in decl.enums.items():
            if column in enums and column in owners and tuple(enums[column]) != tuple(allowed):
                raise TypeError(f"suite {name!r} declares other values for record column {column!r}")
            enums[column] = allowed
    columns.update(TRAILING_COLUMNS)
    return RecordsSchema(columns, defaults, enums,
                         {name: (tuple(tasks), decl) for name, (tasks, decl) in suites.items()})


_registered: list[tuple[object, RecordsSchema]] = []


def registered_schema() -> RecordsSchema:
    """The contract of the registered suites (``framebench.registry``; rebuilt when the registry
    is refreshed)."""
    from framebench.registry import ordered_suites, suites

    # the registry object itself is the key (kept alive here): an id() could be reused by the
    # registry loaded after a refresh, and the old contract would live on
    current = suites()
    if not _registered or _registered[0][0] is not current:
        schema = build_schema({s.name: (s.items.task_names(), s.items.records) for s in ordered_suites()})
        _registered[:] = [(current, schema)]
    return _registered[0][1]


def known_suites() -> tuple[str, ...]:
    """The registered suites' names (``framebench.registry``)."""
    return registered_schema().enums["suite"]


def known_tasks() -> tuple[str, ...]:
    """Every task a registered suite declares, in suite order."""
    return registered_schema().enums["task"]


def enums() -> dict[str, tuple[str, ...]]:
    """Each enumerated column's allowed values (registered contract)."""
    return dict(registered_schema().enums)


class RecordsError(UserError):
    """A records file or row breaks the schema."""


def make_row(**fields: Any) -> dict[str, Any]:
    """A complete record row of the registered contract: defaults filled in, unknown keys
    rejected."""
    schema = registered_schema()
    unknown = set(fields) - set(schema.columns)
    if unknown:
        raise ValueError(f"unknown record field(s): {sorted(unknown)}")
    missing = [c for c in schema.required if c not in fields]
    if missing:
        raise ValueError(f"record is missing required field(s): {missing}")
    return {c: fields.get(c, schema.defaults.get(c)) for c in schema.columns}


def to_table(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, schema: RecordsSchema | None = None) -> pa.Table:
    """Rows (dicts or a frame) as an arrow table in the contract schema, validated; the table
    carries the records schema version in its metadata."""
    schema = schema or registered_schema()
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=list(schema.columns))
    for col, default in schema.defaults.items():
        if col not in df.columns:
            df[col] = default
    validate_frame(df, source="<records>", schema=schema)
    arrow = schema.arrow.with_metadata({VERSION_KEY: str(SCHEMA_VERSION).encode()})
    return pa.Table.from_pandas(df[list(schema.columns)], schema=arrow, preserve_index=False)


def write_records(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, run_dir: str | Path,
                  schema: RecordsSchema | None = None) -> Path:
    """Write ``run_dir/records.parquet`` atomically (temp file + rename: never half-written)."""
    table = to_table(rows, schema)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    target = run_dir / RECORDS_FILE
    fd, tmp = tempfile.mkstemp(prefix=".records.", suffix=".parquet", dir=run_dir)
    os.close(fd)
    try:
        pq.write_table(table, tmp, write_page_checksum=True)  # verified on every read
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def schema_version(table: pa.Table) -> int:
    """The records schema version a file was written with (1: before the field existed)."""
    raw = (table.schema.metadata or {}).get(VERSION_KEY)
    try:
        return int(raw) if raw is not None else 1
    except ValueError:
        return 0  # unreadable: reported as such


def _runs_hint(folder: Path) -> str:
    """Where the run folders are when ``folder`` holds runs one level down (a demo or sweep output)."""
    inside = sorted(p.parent.parent.name + "/" + p.parent.name for p in folder.glob(f"*/*/{RECORDS_FILE}"))
    inside += sorted(p.parent.name for p in folder.glob(f"*/{RECORDS_FILE}"))
    if not inside:
        return ""
    shown = ", ".join(str(folder / name) for name in inside[:3]) + (", ..." if len(inside) > 3 else "")
    return f" ({folder} holds run folders further down: {shown})"


def read_records(path: str | Path, schema: RecordsSchema | None = None) -> pd.DataFrame:
    """Read and validate a records file (or a run directory holding one) against a contract
    (default: the registered suites')."""
    schema = schema or registered_schema()
    path = Path(path)
    if path.is_dir():
        path = path / RECORDS_FILE
    if not path.exists():
        raise RecordsError(f"{path}: no such records file{_runs_hint(path.parent)}")
    try:
        # Pages written with a CRC (``write_records``) are verified; a file written without them
        # (an older framebench, another tool) still reads.
        table = pq.read_table(path, page_checksum_verification=True)
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise RecordsError(f"{path}: not a readable parquet file ({exc})") from None
    version = schema_version(table)
    if not 1 <= version <= SCHEMA_VERSION:
        raise RecordsError(f"{path}: records schema version {version} is not one this framebench reads "
                           f"(1-{SCHEMA_VERSION}; upgrade framebench)")
    renamed = {old: new for old, new in schema.former_names(version).items()
               if old in table.column_names and new not in table.column_names}
    if renamed:
        table = table.rename_columns([renamed.get(c, c) for c in table.column_names])
    columns = schema.columns
    # a suite with no row in the file (one installed after it was written) adds nothing to it
    for col in [*LATER_COLUMNS, *_absent_suite_columns(table, schema)]:
        if col not in table.column_names:
            table = table.append_column(col, pa.array([schema.defaults[col]] * table.num_rows, type=columns[col]))
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise RecordsError(f"{path}: missing column '{missing[0]}'")
    for name, typ in columns.items():
        actual = table.schema.field(name).type
        if not _compatible(actual, typ):
            column = table.column(name).to_pandas()
            row = _first_uncastable(column, typ)
            shown = "string" if pa.types.is_large_string(actual) else str(actual)
            raise RecordsError(
                f"{path}: row {row}: column '{name}' has type {shown} "
                f"(value {column.iloc[row]!r}), expected {typ}"
            )
    table = _cast_to_contract(table.select(list(columns)), path, columns)
    df = table.to_pandas()
    validate_frame(df, source=str(path), schema=schema)
    return df


def _absent_suite_columns(table: pa.Table, schema: RecordsSchema) -> list[str]:
    """The columns of suites that have no row in the file: a file written where such a suite was
    not installed lacks them, and reads as if they held their defaults."""
    if "suite" not in table.column_names:
        return []
    present = set(table.column("suite").to_pylist())
    return [c for c in schema.suite_columns() if not present & set(schema.owners(c))]


def _cast_to_contract(table: pa.Table, path: Path, columns: Mapping[str, pa.DataType]) -> pa.Table:
    """Every column in its contract type; a value that does not fit (an unsigned integer beyond
    int64) is named by row and column instead of wrapping around or escaping as an arrow error."""
    for name, typ in columns.items():
        column = table.column(name)
        if column.type == typ:
            continue
        try:
            cast = column.cast(typ, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values = column.to_pylist()
            row = _first_uncastable(pd.Series(values, dtype=object), typ)
            raise RecordsError(f"{path}: row {row}: column '{name}' value {values[row]!r} does not fit {typ}") from None
        table = table.set_column(table.schema.get_field_index(name), pa.field(name, typ), cast)
    return table


def _compatible(actual: pa.DataType, expected: pa.DataType) -> bool:
    if actual == expected or pa.types.is_null(actual):
        return True
    if pa.types.is_integer(expected):
        return pa.types.is_integer(actual)
    if pa.types.is_floating(expected):
        return pa.types.is_floating(actual) or pa.types.is_integer(actual)
    if pa.types.is_string(expected):
        return pa.types.is_large_string(actual) or pa.types.is_string_view(actual)
    return False


def _first_uncastable(column: pd.Series, typ: pa.DataType) -> int:
    """Index of the first value that does not fit ``typ`` (0 if every value is off)."""
    for row, value in enumerate(column):
        if value is None or (isinstance(value, float) and pd.isna(value)):
            continue
        try:
            pa.array([value], type=typ)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            return row
    return 0


def validate_frame(df: pd.DataFrame, source: str, schema: RecordsSchema | None = None) -> None:
    """Check a records frame against a contract (default: the registered suites'); raise one
    clear line naming source, row and column."""
    schema = schema or registered_schema()
    for col in schema.required:
        if col not in df.columns:
            raise RecordsError(f"{source}: missing column '{col}'")
        bad = df[col].isna()
        if bad.any():
            raise RecordsError(f"{source}: row {int(bad.to_numpy().argmax())}: column '{col}' is empty")
    for col, allowed in schema.enums.items():
        values = df[col].fillna("")
        bad = ~values.isin(allowed)
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise RecordsError(
                f"{source}: row {row}: column '{col}' has unknown value {values.iloc[row]!r} "
                f"(allowed: {', '.join(repr(a) for a in allowed)})"
            )
    for col in (c for c, typ in schema.columns.items() if pa.types.is_boolean(typ)):
        values = df[col]
        if pd.api.types.is_bool_dtype(values.dtype):
            continue
        bad = values.notna() & ~values.isin([True, False])
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise RecordsError(f"{source}: row {row}: column '{col}' must be a boolean")
    _check_agreement(df, source, schema)
    _validate_answer_probs(df, source, schema)
    for name, (_, decl) in schema.suites.items():
        if decl.check is None:
            continue
        rows = df["suite"] == name
        if not rows.any():
            continue
        for bad, message in decl.check(df[rows]):
            _first_bad(source, bad.reindex(df.index, fill_value=False), message)


# which formats each suite's rows (and items) may have
def suite_formats(text_only: bool = False) -> dict[str, tuple[str, ...]]:
    from framebench.registry import ordered_suites

    return {s.name: tuple(s.items.records.formats) for s in ordered_suites()
            if s.items.makes_jobs or not text_only}


def _first_bad(source: str, bad: pd.Series, message: str) -> None:
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise RecordsError(f"{source}: row {row}: {message}")


def _check_agreement(df: pd.DataFrame, source: str, schema: RecordsSchema) -> None:
    """Rows agree with themselves and their suite: task and format, the suite's own columns only
    on its rows, gold and answer from the format's answer set."""
    for col in NON_EMPTY:
        _first_bad(source, df[col].astype(str).str.strip() == "", f"column '{col}' is empty")
    suite, task, fmt = df["suite"], df["task"], df["format"]
    ok_task = pd.Series(False, index=df.index)
    ok_format = pd.Series(False, index=df.index)
    for name, (tasks, decl) in schema.suites.items():
        ok_task |= (suite == name) & task.isin(tasks)
        ok_format |= (suite == name) & fmt.isin(tuple(decl.formats))
    _first_bad(source, ~ok_task, "column 'task' does not belong to the row's suite "
               + "; ".join(f"{k}: {', '.join(tasks)}" for k, (tasks, _) in schema.suites.items()))
    _first_bad(source, ~ok_format, "column 'format' does not fit the row's suite "
               + "; ".join(f"{k}: {', '.join(d.formats)}" for k, (_, d) in schema.suites.items()))
    for column in schema.suite_columns():
        default, owners = schema.defaults[column], schema.owners(column)
        values = df[column]
        set_here = values.notna() if default is None else values.fillna(default) != default
        whose = [f"{o}'s" for o in owners]
        whose_text = whose[0] if len(whose) == 1 else f"{', '.join(whose[:-1])} and {whose[-1]}"
        _first_bad(source, ~suite.isin(owners) & set_here, f"column '{column}' is {whose_text}: other "
                   f"suites' rows leave it {'empty' if default is None else repr(default)}")
    gold, answer = df["gold"].fillna(""), df["answer"].fillna("")
    for name, (_, decl) in schema.suites.items():
        for fmt_name, allowed in decl.formats.items():
            rows = (suite == name) & (fmt == fmt_name)
            gold_ok = (gold.isin(allowed) | (gold == "") & decl.gold_optional) if allowed else gold == ""
            _first_bad(source, rows & ~gold_ok, f"column 'gold' must be one of "
                       f"{', '.join(allowed) or '(empty)'} for {fmt_name} rows")
            _first_bad(source, rows & ~(answer.isin(allowed) | (answer == "")),
                       f"column 'answer' must be one of {', '.join(allowed) or '(empty)'} for {fmt_name} rows")


def encode_answer_probs(probs: Mapping[str, float] | None) -> str:
    """The ``answer_probs`` cell: a JSON object {allowed answer: probability}, "" when none."""
    import json

    if not probs:
        return ""
    return json.dumps({str(k): round(float(v), 8) for k, v in probs.items()}, separators=(",", ":"))


def decode_answer_probs(cell: Any) -> dict[str, float]:
    import json

    if cell is None or cell == "" or (isinstance(cell, float) and pd.isna(cell)):
        return {}
    return {str(k): float(v) for k, v in json.loads(cell).items()}


def probability_of(cell: str, answer: str) -> float:
    """The ``answer_probs`` cell's probability of ``answer`` (NaN: empty cell, or not in it)."""
    import json

    if not cell:
        return float("nan")
    probs = json.loads(cell)
    return float(probs.get(answer, float("nan")))


PROBABILITY = r"\s*:\s*(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"


def p_of_answers(cells: pd.Series, answers: pd.Series) -> np.ndarray:
    """Per row: the ``answer_probs`` entry (a JSON object) of that row's answer, NaN where the cell
    is empty or lacks it; as :func:`probability_of` row by row, but one regular expression per distinct
    answer (a million cells in about a second), with JSON parsing only where it finds nothing."""
    import json
    import re

    cells = cells.fillna("").astype(str)
    answers = answers.fillna("").astype(str)
    out = np.full(len(cells), np.nan)
    for answer in answers.unique():
        at = np.flatnonzero((answers == answer).to_numpy())
        found = cells.iloc[at].str.extract(re.escape(json.dumps(answer)) + PROBABILITY, expand=False)
        out[at] = pd.to_numeric(found, errors="coerce").to_numpy(float)
    missing = np.flatnonzero(np.isnan(out) & (cells != "").to_numpy())
    out[missing] = [probability_of(cells.iloc[i], answers.iloc[i]) for i in missing]
    return out


def _probs_problem(cell: str, mode: str, allowed: set[str]) -> str:
    """What is wrong with one non-empty ``answer_probs`` cell ("" when nothing)."""
    import json

    try:
        probs = json.loads(cell)
    except ValueError:
        return "is not JSON"
    if not isinstance(probs, dict) or not probs:
        return "must be a JSON object {answer: probability}"
    if not set(probs) <= allowed:
        return f"names an answer outside {sorted(allowed)}"
    bad = [v for v in probs.values() if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0]
    if bad:
        what = "NaN, not a number" if isinstance(bad[0], float) and bad[0] != bad[0] else repr(bad[0])
        return f"holds a probability outside [0, 1] ({what})"
    if abs(sum(probs.values()) - 1.0) > 1e-4:
        return "probabilities do not sum to 1"
    from framebench.registry import answer_modes

    keeping = [m.name for m in answer_modes().values() if m.keeps_probs]
    if mode not in keeping:
        return f"is set on a row whose answer_mode is not {' or '.join(map(repr, keeping)) or 'one that keeps them'}"
    return ""


def _validate_answer_probs(df: pd.DataFrame, source: str, schema: RecordsSchema) -> None:
    """``answer_probs``: "" or a JSON object of allowed answers (any declared answer set) ->
    numbers in [0, 1] summing to 1 (within 1e-4); only on rows of an answer mode that keeps them."""
    allowed = {a for _, decl in schema.suites.values() for answers in decl.formats.values() for a in answers}
    cells = df["answer_probs"].fillna("").to_numpy(object)
    modes = df["answer_mode"].fillna("").to_numpy(object)
    for row in np.flatnonzero(cells != ""):  # only the rows that carry probabilities
        problem = _probs_problem(cells[row], modes[row], allowed)
        if problem:
            raise RecordsError(f"{source}: row {row}: column 'answer_probs' {problem}")


def label_suffix(answer_mode: str) -> str:
    """What a model's label adds for its rows in ``answer_mode``: " [NAME]" for every registered
    mode but the default (its rows are scored as a model of their own), else ""."""
    from framebench.registry import DEFAULT_ANSWER_MODE, answer_modes

    labelled = answer_mode in answer_modes() and answer_mode != DEFAULT_ANSWER_MODE
    return f" [{answer_mode}]" if labelled else ""


def model_label(model: str, answer_mode: str = "") -> str:
    """The one name a scored model goes by everywhere (console summaries, report.md/html/json,
    ``framebench view``): the records' ``model``, plus " [MODE]" for rows of a mode other than the default,
    so a model's generated and scored rows are never shown or scored as one
    (idempotent)."""
    suffix = label_suffix(answer_mode)
    if suffix and not model.endswith(suffix):
        return model + suffix
    return model


def label_answer_modes(df: pd.DataFrame) -> pd.DataFrame:
    """Records with ``model`` replaced by ``model_label`` (a copy when any label changes); every
    reader that shows or scores models goes through here."""
    if "answer_mode" not in df.columns or df.empty:
        return df
    modes = df["answer_mode"].fillna("")
    relabel = np.zeros(len(df), dtype=bool)
    suffixes = {m: label_suffix(m) for m in modes.unique()}
    for mode, suffix in suffixes.items():
        if suffix:  # the same test as model_label, on whole columns
            relabel |= ((modes == mode) & ~df["model"].str.endswith(suffix)).to_numpy(bool)
    if not relabel.any():
        return df
    df = df.copy()
    df.loc[relabel, "model"] = df.loc[relabel, "model"] + modes[relabel].map(suffixes)
    return df
