"""Reading JSON Lines input strictly: every bad line is a user error naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from framebench.errors import UserError


def iter_jsonl(path: str | Path, what: str = "line") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; ``what`` names a line's kind."""
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}: line {n}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise UserError(f"{path}: line {n}: a {what} must be a JSON object")
            yield n, obj
