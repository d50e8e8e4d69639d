"""Evaluation items (``items.jsonl``): what a model is asked. One JSON object per line.

Built by ``framebench build framingqa`` (text_eval) and ``framebench build omit``; read by
``framebench text``. Record fields (docs/design.md) are copied from the item into each record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from framebench import records
from framebench.errors import UserError
from framebench.jsonl import iter_jsonl

ITEMS_FILE = "items.jsonl"

# Fields every item carries. ``text`` is the context (scenario), ``question`` the framed question
# as asked, ``options`` the MC option texts in A-D order ([] for binary).
ITEM_FIELDS: dict[str, type] = {
    "item_id": str,
    "context_id": str,
    "suite": str,
    "task": str,
    "format": str,
    "bias": str,
    "level": str,
    "form": str,
    "variant": str,
    "option": str,
    "distractor": str,
    "slot": str,
    "gold": str,
    "text": str,
    "question": str,
    "options": list,
}
# Optional (OMIT): frame = action|omission, conflicts = "|"-joined labels.
OPTIONAL_FIELDS: dict[str, type] = {"frame": str, "conflicts": str}


def validate_item(item: Any, source: str, line: int) -> dict[str, Any]:
    where = f"{source}: line {line}"
    if not isinstance(item, dict):
        raise UserError(f"{where}: an item must be a JSON object")
    for name, typ in ITEM_FIELDS.items():
        if name not in item:
            raise UserError(f"{where}: item {item.get('item_id', '?')!r} is missing field '{name}'")
        if not isinstance(item[name], typ):
            raise UserError(f"{where}: item {item.get('item_id', '?')!r}: field '{name}' must be {typ.__name__}")
    for name, typ in OPTIONAL_FIELDS.items():
        if name in item and not isinstance(item[name], typ):
            raise UserError(f"{where}: item {item['item_id']!r}: field '{name}' must be {typ.__name__}")
    for name, allowed in records.enums().items():
        if name in item and item[name] not in allowed:
            raise UserError(f"{where}: item {item['item_id']!r}: field '{name}' has unknown value {item[name]!r}")
    return item


def read_items(path: str | Path) -> list[dict[str, Any]]:
    """Read ``items.jsonl`` (or a directory holding it); duplicates and bad lines are errors."""
    path = Path(path)
    if path.is_dir():
        path = path / ITEMS_FILE
    if not path.exists():
        raise UserError(f"{path}: no such items file")
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, item in iter_jsonl(path, "item"):
        item = validate_item(item, str(path), n)
        if item["item_id"] in seen:
            raise UserError(f"{path}: line {n}: duplicate item_id {item['item_id']!r}")
        seen.add(item["item_id"])
        items.append(item)
    return items


def write_items(items: list[dict[str, Any]], path: str | Path) -> Path:
    """Write items as JSONL atomically, in the given order, keys sorted (byte-stable output)."""
    from framebench.runinfo import write_text_atomic

    text = "".join(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n" for it in items)
    return write_text_atomic(text, path)
