"""Reading text input strictly: wrong bytes, bad JSON and odd values are user errors naming file and line.

Every file-reading entry point goes through here: ``read_text_strict`` for the bytes (UTF-8 only; gzip,
parquet, UTF-16 and NUL bytes are named), ``loads_strict`` for one JSON document (no NaN/Infinity, no
lone surrogates or NUL characters in strings, nesting bounded), ``iter_jsonl`` for JSON Lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from framebench.errors import UserError

MAX_DEPTH = 64  # deeper JSON is not data any of our files hold


def sniff_binary(raw: bytes, path: str | Path) -> None:
    """Name the common wrong containers before trying to decode text."""
    if raw[:2] == b"\x1f\x8b":
        raise UserError(f"{path}: is gzip-compressed; expected plain UTF-8 text (decompress it first)")
    if raw[:4] == b"PAR1":
        raise UserError(f"{path}: is a parquet file; expected UTF-8 text")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise UserError(f"{path}: is UTF-16 text; save it as UTF-8")


def decode_strict(raw: bytes, path: str | Path) -> str:
    """``raw`` as UTF-8 text (a leading BOM dropped); invalid bytes and NUL bytes name their line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(f"{path}: line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}); "
                        "save the file as UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise UserError(f"{path}: line {line}: contains a NUL byte (a binary file?)")
    return text.removeprefix("\ufeff")


def read_text_strict(path: str | Path, allow_gzip: bool = False) -> str:
    """A whole text file, checked; with ``allow_gzip`` a gzipped file is decompressed first."""
    import gzip
    import zlib

    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if allow_gzip and raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise UserError(f"{path}: not a readable gzip file ({exc})") from None
    sniff_binary(raw, path)
    return decode_strict(raw, path)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_strict(text: str, where: str) -> Any:
    """One JSON document; every problem is a ``UserError`` starting with ``where``."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:
        raise UserError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply") from None
    check_value(value, where)
    return value


def check_value(value: Any, where: str) -> None:
    """Reject nesting deeper than ``MAX_DEPTH``, lone surrogates and NUL characters in strings."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise UserError(f"{where}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(node, str):
            _check_string(node, where)
        elif isinstance(node, dict):
            for key, child in node.items():
                _check_string(key, where)
                stack.append((child, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


def _check_string(s: str, where: str) -> None:
    if "\x00" in s:
        raise UserError(f"{where}: a string holds a NUL character")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(f"{where}: a string holds a lone surrogate (\\ud800-\\udfff escape)") from None


def iter_jsonl(path: str | Path, what: str = "line") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; ``what`` names a line's kind."""
    path = Path(path)
    text = read_text_strict(path)
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        obj = loads_strict(line, f"{path}: line {n}")
        if not isinstance(obj, dict):
            raise UserError(f"{path}: line {n}: a {what} must be a JSON object")
        yield n, obj


def read_jsonl(path: str | Path, what: str = "line") -> list[tuple[int, dict[str, Any]]]:
    """All lines of a JSONL file, read and checked before the caller uses any of them."""
    return list(iter_jsonl(path, what))
