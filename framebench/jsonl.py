"""Reading a user's files strictly: a wrong kind of file, wrong bytes, bad JSON and odd values are
user errors naming the file, the line and the field.

Every file-reading entry point goes through here: ``user_file`` opens nothing but a regular file (a
folder, a symbolic link loop, a FIFO or an unreadable file is named as such; other tools' readers,
such as Inspect's, get the path only after it), ``read_user_bytes`` reads one, ``read_text_strict``
decodes it (UTF-8 only; gzip, parquet, UTF-16 and NUL bytes are named), ``loads_strict`` parses one
JSON document (no NaN/Infinity, no lone surrogates or NUL characters in strings, nesting bounded,
the field of a bad string named), ``iter_jsonl`` reads JSON Lines (a line longer than
``MAX_LINE_CHARS`` is refused before it is parsed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from framebench.errors import UserError

MAX_DEPTH = 64  # deeper JSON is not data any of our files hold
MAX_LINE_CHARS = 64 * 2**20  # a longer JSON line is not a record, an item or a sample of any tool's


def user_file(path: str | Path) -> Path:
    """``path`` when it is a regular file this process may read; else a one-line error saying what
    it is instead (missing, a folder, a symbolic link loop, a FIFO or device, unreadable)."""
    import os
    import stat

    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise UserError(f"{path}: is a folder; expected a file")
    if not stat.S_ISREG(mode):
        raise UserError(f"{path}: is not a regular file (a FIFO, socket or device?)")
    if not os.access(path, os.R_OK):
        raise UserError(f"{path}: cannot be read (permission denied)")
    return path


def read_user_bytes(path: str | Path) -> bytes:
    """The bytes of a user's file (``user_file`` first)."""
    path = user_file(path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except MemoryError:
        raise UserError(f"{path}: too large to read into memory") from None


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
    raw = read_user_bytes(path)
    if allow_gzip and raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise UserError(f"{path}: not a readable gzip file ({exc})") from None
    sniff_binary(raw, path)
    return decode_strict(raw, path)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_strict(text: str, where: str, constants: bool = False) -> Any:
    """One JSON document; every problem is a ``UserError`` starting with ``where``. ``constants``:
    NaN and Infinity parse (for another tool's files that write them; the caller checks the
    fields it reads)."""
    try:
        value = json.loads(text, parse_constant=None if constants else _reject_constant)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated")
        early = "; it ends early (truncated?)" if cut else ""
        raise UserError(f"{where}: not valid JSON ({exc.msg} at {at}{early})") from None
    except ValueError as exc:
        raise UserError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply") from None
    check_value(value, where)
    return value


def check_value(value: Any, where: str) -> None:
    """Reject nesting deeper than ``MAX_DEPTH``, lone surrogates and NUL characters in strings
    (naming the field that holds one, e.g. ``filtered_resps[0]``)."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        node, depth, at = stack.pop()
        if depth > MAX_DEPTH:
            raise UserError(f"{where}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(node, str):
            check_text(node, _field(where, at))
        elif isinstance(node, dict):
            for key, child in node.items():
                check_text(key, _field(where, at))
                stack.append((child, depth + 1, f"{at}.{key}" if at else str(key)))
        elif isinstance(node, list):
            stack.extend((child, depth + 1, f"{at}[{i}]") for i, child in enumerate(node))


def _field(where: str, at: str) -> str:
    from framebench.bounds import shorten

    return f"{where}: field {shorten(at)!r}" if at else where


def check_text(s: str, where: str) -> str:
    """``s`` when it is text a file can hold: no NUL character, no lone surrogate (valid Unicode)."""
    if "\x00" in s:
        raise UserError(f"{where}: holds a NUL character")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UserError(f"{where}: holds a lone surrogate at character {exc.start} (not valid Unicode; "
                        "a \\ud800-\\udfff escape without its pair)") from None
    return s


def iter_jsonl(path: str | Path, what: str = "line",
               constants: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; ``what`` names a line's kind;
    ``constants``: as in ``loads_strict``."""
    path = Path(path)
    text = read_text_strict(path)
    for n, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE_CHARS:
            raise UserError(f"{path}: line {n}: {len(line):,} characters, longer than any {what} "
                            f"({MAX_LINE_CHARS:,} at most)")
        if not line.strip():
            continue
        obj = loads_strict(line, f"{path}: line {n}", constants)
        if not isinstance(obj, dict):
            raise UserError(f"{path}: line {n}: a {what} must be a JSON object")
        yield n, obj


def read_jsonl(path: str | Path, what: str = "line") -> list[tuple[int, dict[str, Any]]]:
    """All lines of a JSONL file, read and checked before the caller uses any of them."""
    return list(iter_jsonl(path, what))
