"""The record schema (docs/design.md "Records", a contract) with its writer and validating reader.

One row per model response (text suites) or per episode variant (embodied). Every run writes
``RUN_DIR/records.parquet``; scoring reads nothing else.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from framebench.errors import UserError
from framebench.vocabulary import (
    BIASES,
    BINARY_ANSWERS,
    FORMS,
    LEVELS,
    MC_ANSWERS,
    NEUTRAL,
    PHRASINGS,
)

RECORDS_FILE = "records.parquet"

# column -> arrow type, in contract order
COLUMNS: dict[str, pa.DataType] = {
    "run_id": pa.string(),
    "model": pa.string(),
    "suite": pa.string(),
    "task": pa.string(),
    "format": pa.string(),
    "context_id": pa.string(),
    "item_id": pa.string(),
    "bias": pa.string(),
    "level": pa.string(),
    "form": pa.string(),
    "variant": pa.string(),
    "option": pa.string(),
    "distractor": pa.string(),
    "slot": pa.string(),
    "gold": pa.string(),
    "answer": pa.string(),
    "parse": pa.string(),
    "correct": pa.bool_(),
    "output": pa.string(),
    "frame": pa.string(),
    "condition": pa.string(),
    "conflicts": pa.string(),
    "constraint": pa.string(),
    "percent_complete": pa.float64(),
    "success": pa.bool_(),
    "sim_steps": pa.int64(),
    "replans": pa.int64(),
    "answer_mode": pa.string(),
    "answer_probs": pa.string(),
}
SCHEMA = pa.schema([pa.field(name, typ) for name, typ in COLUMNS.items()])

FORMATS = ("binary", "mc", "episode")
PARSES = ("ok", "unparsed", "refusal")
FRAMES = ("action", "omission", "")
CONSTRAINTS = ("none", "spatial", "temporal", "heterogeneous", "")
ANSWER_MODES = ("generate", "constrained", "")

# ``suite`` and ``task`` take the values the registered suites declare (``known_suites``,
# ``known_tasks``); the other enumerated columns are fixed here.
ENUMS: dict[str, tuple[str, ...]] = {
    "format": FORMATS,
    "bias": (NEUTRAL, *BIASES),
    "level": (*LEVELS, ""),
    "form": (*FORMS, ""),
    "variant": (*PHRASINGS, ""),  # the phrasing (Q1-Q3); the column keeps its first name
    "parse": PARSES,
    "frame": FRAMES,
    "constraint": CONSTRAINTS,
    "answer_mode": ANSWER_MODES,
}
CONDITION_PATTERN = r"^(M\d+)?$"

# Defaults for columns a suite does not use, so producers only fill what they know.
DEFAULTS: dict[str, Any] = {
    "level": "",
    "form": "",
    "variant": "",
    "option": "",
    "distractor": "",
    "slot": "",
    "gold": "",
    "answer": "",
    "parse": "ok",
    "correct": False,
    "output": "",
    "frame": "",
    "condition": "",
    "conflicts": "",
    "constraint": "",
    "percent_complete": None,
    "success": None,
    "sim_steps": None,
    "replans": None,
    "answer_mode": "",
    "answer_probs": "",
}
# Columns added after the first records files were written: a file without them reads as if they
# held their defaults (answer_mode "" = not a text run or written before answer modes existed).
LATER_COLUMNS = ("answer_mode", "answer_probs")
REQUIRED = [c for c in COLUMNS if c not in DEFAULTS]


def known_suites() -> tuple[str, ...]:
    """The registered suites' names (``framebench.registry``)."""
    from framebench.registry import ordered_suites

    return tuple(s.name for s in ordered_suites())


def known_tasks() -> tuple[str, ...]:
    """Every task a registered suite declares, in suite order."""
    from framebench.registry import ordered_suites

    return tuple(dict.fromkeys(t for s in ordered_suites() for t in s.task_names()))


def enums() -> dict[str, tuple[str, ...]]:
    """Each enumerated column's allowed values."""
    return {"suite": known_suites(), "task": known_tasks(), **ENUMS}


class RecordsError(UserError):
    """A records file or row breaks the schema."""


def make_row(**fields: Any) -> dict[str, Any]:
    """A complete record row: defaults filled in, unknown keys rejected."""
    unknown = set(fields) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown record field(s): {sorted(unknown)}")
    missing = [c for c in REQUIRED if c not in fields]
    if missing:
        raise ValueError(f"record is missing required field(s): {missing}")
    return {c: fields.get(c, DEFAULTS.get(c)) for c in COLUMNS}


def to_table(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pa.Table:
    """Rows (dicts or a frame) as an arrow table in the contract schema, validated."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=list(COLUMNS))
    for col, default in DEFAULTS.items():
        if col not in df.columns:
            df[col] = default
    validate_frame(df, source="<records>")
    return pa.Table.from_pandas(df[list(COLUMNS)], schema=SCHEMA, preserve_index=False)


def write_records(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, run_dir: str | Path) -> Path:
    """Write ``run_dir/records.parquet`` atomically (temp file + rename: never half-written)."""
    table = to_table(rows)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    target = run_dir / RECORDS_FILE
    fd, tmp = tempfile.mkstemp(prefix=".records.", suffix=".parquet", dir=run_dir)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def read_records(path: str | Path) -> pd.DataFrame:
    """Read and validate a records file (or a run directory holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / RECORDS_FILE
    if not path.exists():
        raise RecordsError(f"{path}: no such records file")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise RecordsError(f"{path}: not a readable parquet file ({exc})") from None
    for col in LATER_COLUMNS:
        if col not in table.column_names:
            table = table.append_column(col, pa.array([DEFAULTS[col]] * table.num_rows, type=COLUMNS[col]))
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise RecordsError(f"{path}: missing column '{missing[0]}'")
    for name, typ in COLUMNS.items():
        actual = table.schema.field(name).type
        if not _compatible(actual, typ):
            column = table.column(name).to_pandas()
            row = _first_uncastable(column, typ)
            shown = "string" if pa.types.is_large_string(actual) else str(actual)
            raise RecordsError(
                f"{path}: row {row}: column '{name}' has type {shown} "
                f"(value {column.iloc[row]!r}), expected {typ}"
            )
    table = _cast_to_contract(table.select(list(COLUMNS)), path)
    df = table.to_pandas()
    validate_frame(df, source=str(path))
    return df


def _cast_to_contract(table: pa.Table, path: Path) -> pa.Table:
    """Every column in its contract type; a value that does not fit (an unsigned integer beyond
    int64) is named by row and column instead of wrapping around or escaping as an arrow error."""
    for name, typ in COLUMNS.items():
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


def validate_frame(df: pd.DataFrame, source: str) -> None:
    """Check a records frame; raise one clear line naming source, row and column."""
    for col in REQUIRED:
        if col not in df.columns:
            raise RecordsError(f"{source}: missing column '{col}'")
        bad = df[col].isna()
        if bad.any():
            raise RecordsError(f"{source}: row {int(bad.to_numpy().argmax())}: column '{col}' is empty")
    for col, allowed in enums().items():
        values = df[col].fillna("")
        bad = ~values.isin(allowed)
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise RecordsError(
                f"{source}: row {row}: column '{col}' has unknown value {values.iloc[row]!r} "
                f"(allowed: {', '.join(repr(a) for a in allowed)})"
            )
    cond = df["condition"].fillna("").astype(str)
    bad = ~cond.str.match(CONDITION_PATTERN)
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise RecordsError(f"{source}: row {row}: column 'condition' has unknown value {cond.iloc[row]!r}")
    for col in ("correct", "success"):
        values = df[col]
        if pd.api.types.is_bool_dtype(values.dtype):
            continue
        bad = values.notna() & ~values.isin([True, False])
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise RecordsError(f"{source}: row {row}: column '{col}' must be a boolean")
    _check_agreement(df, source)
    _validate_answer_probs(df, source)
    pc = pd.to_numeric(df["percent_complete"], errors="coerce")
    bad = df["percent_complete"].notna() & ~pc.between(0.0, 1.0)
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise RecordsError(f"{source}: row {row}: column 'percent_complete' must lie in [0, 1]")


# which tasks, formats, golds and answers each suite's rows may have
def suite_tasks(text_only: bool = False) -> dict[str, tuple[str, ...]]:
    """Each registered suite's tasks (``text_only``: the suites whose items are text items)."""
    from framebench.registry import ordered_suites

    return {s.name: s.task_names() for s in ordered_suites() if s.text_items or not text_only}


def suite_formats(text_only: bool = False) -> dict[str, tuple[str, ...]]:
    from framebench.registry import ordered_suites

    return {s.name: s.formats for s in ordered_suites() if s.text_items or not text_only}


FORMAT_ANSWERS = {"binary": BINARY_ANSWERS, "mc": MC_ANSWERS, "episode": ()}
NON_EMPTY = ("run_id", "model", "context_id", "item_id")


def _first_bad(source: str, bad: pd.Series, message: str) -> None:
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise RecordsError(f"{source}: row {row}: {message}")


def _check_agreement(df: pd.DataFrame, source: str) -> None:
    """Rows agree with themselves: suite/task/format, OMIT frame+condition, gold/answer per format."""
    for col in NON_EMPTY:
        _first_bad(source, df[col].astype(str).str.strip() == "", f"column '{col}' is empty")
    suite, task, fmt = df["suite"], df["task"], df["format"]
    ok_task = pd.Series(False, index=df.index)
    ok_format = pd.Series(False, index=df.index)
    tasks_of, formats_of = suite_tasks(), suite_formats()
    for name, tasks in tasks_of.items():
        ok_task |= (suite == name) & task.isin(tasks)
        ok_format |= (suite == name) & fmt.isin(formats_of[name])
    _first_bad(source, ~ok_task, "column 'task' does not belong to the row's suite "
               + "; ".join(f"{k}: {', '.join(v)}" for k, v in tasks_of.items()))
    _first_bad(source, ~ok_format, "column 'format' does not fit the row's suite "
               + "; ".join(f"{k}: {', '.join(v)}" for k, v in formats_of.items()))
    frame, cond = df["frame"].fillna(""), df["condition"].fillna("")
    omit = suite == "omit"
    _first_bad(source, omit & ~frame.isin(("action", "omission")), "OMIT rows need frame action or omission")
    _first_bad(source, omit & (cond == ""), "OMIT rows need a condition (M0, M1, ...)")
    _first_bad(source, ~omit & ((frame != "") | (cond != "")), "only OMIT rows have a frame and a condition")
    gold, answer = df["gold"].fillna(""), df["answer"].fillna("")
    for name, allowed in FORMAT_ANSWERS.items():
        rows = fmt == name
        gold_ok = gold.isin(allowed) | (omit & (gold == "")) if allowed else gold == ""
        _first_bad(source, rows & ~gold_ok, f"column 'gold' must be one of {', '.join(allowed) or '(empty)'} "
                   f"for {name} rows")
        _first_bad(source, rows & ~(answer.isin(allowed) | (answer == "")),
                   f"column 'answer' must be one of {', '.join(allowed) or '(empty)'} for {name} rows")


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


def _validate_answer_probs(df: pd.DataFrame, source: str) -> None:
    """``answer_probs``: "" or a JSON object of allowed answers (Yes/No or A-D) -> numbers in [0, 1]
    summing to 1 (within 1e-4); only on ``constrained`` rows."""
    import json

    allowed = set(BINARY_ANSWERS) | set(MC_ANSWERS)
    modes = df["answer_mode"].fillna("")
    for row, (cell, mode) in enumerate(zip(df["answer_probs"].fillna(""), modes, strict=True)):
        if cell == "":
            continue
        problem = ""
        try:
            probs = json.loads(cell)
        except ValueError:
            probs, problem = None, "is not JSON"
        if not problem and (not isinstance(probs, dict) or not probs):
            problem = "must be a JSON object {answer: probability}"
        elif not problem and not set(probs) <= allowed:
            problem = f"names an answer outside {sorted(allowed)}"
        elif not problem and not all(isinstance(v, int | float) and 0.0 <= v <= 1.0 for v in probs.values()):
            problem = "holds a probability outside [0, 1]"
        elif not problem and abs(sum(probs.values()) - 1.0) > 1e-4:
            problem = "probabilities do not sum to 1"
        elif not problem and mode != "constrained":
            problem = "is set on a row whose answer_mode is not 'constrained'"
        if problem:
            raise RecordsError(f"{source}: row {row}: column 'answer_probs' {problem}")


CONSTRAINED_SUFFIX = " [constrained]"


def label_answer_modes(df: pd.DataFrame) -> pd.DataFrame:
    """Constrained rows get ``model`` + " [constrained]", so a model's generate and constrained
    rows are scored and shown as two models and never mixed (idempotent)."""
    if "answer_mode" not in df.columns:
        return df
    constrained = (df["answer_mode"] == "constrained") & ~df["model"].str.endswith(CONSTRAINED_SUFFIX)
    if not constrained.any():
        return df
    df = df.copy()
    df.loc[constrained, "model"] = df.loc[constrained, "model"] + CONSTRAINED_SUFFIX
    return df
