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
from framebench.jsonl import read_jsonl
from framebench.vocabulary import NEUTRAL

ITEMS_FILE = "items.jsonl"

# Fields every item carries; a suite requires more (``SuiteItems.item_fields``) and may allow
# optional ones (``SuiteItems.item_extras``). ``question`` is the framed question as asked.
ITEM_FIELDS: dict[str, type] = {
    "item_id": str,
    "context_id": str,
    "suite": str,
    "task": str,
    "format": str,
    "question": str,
}


def validate_item(item: Any, source: str, line: int) -> dict[str, Any]:
    where = f"{source}: line {line}"
    if not isinstance(item, dict):
        raise UserError(f"{where}: an item must be a JSON object")
    _check_types(item, ITEM_FIELDS, where, required=True)
    suite = _text_suite(item, f"{where}: item {item['item_id']!r}")
    item = current_fields(item, suite)
    _check_types(item, dict(suite.items.item_fields), where, required=True)
    _check_types(item, dict(suite.items.item_extras), where, required=False)
    _check_vocabulary(item, suite, f"{where}: item {item['item_id']!r}")
    _check_consistency(item, suite, f"{where}: item {item['item_id']!r}")
    return item


def _check_vocabulary(item: dict[str, Any], suite: Any, where: str) -> None:
    """Each field that fills an enumerated records column holds one of its values (checked under
    the item's own field name, before any model runs)."""
    from framebench.bounds import shown

    enums = records.enums()
    for name, value in item.items():
        allowed = enums.get(name)
        if allowed is not None and value not in allowed:
            raise UserError(f"{where}: field '{name}' has unknown value {shown(value)} "
                            f"(allowed: {', '.join(map(repr, allowed))})")


def current_fields(item: dict[str, Any], suite: Any) -> dict[str, Any]:
    """``item`` with the fields its suite renamed under their names now (``SuiteItems.former_fields``)."""
    renamed = {old: new for old, new in suite.items.former_fields.items() if old in item and new not in item}
    if not renamed:
        return item
    return {renamed.get(name, name): value for name, value in item.items()}


def _check_types(item: dict[str, Any], fields: dict[str, type], where: str, required: bool) -> None:
    for name, typ in fields.items():
        if name not in item:
            if required:
                raise UserError(f"{where}: item {item.get('item_id', '?')!r} is missing field '{name}'")
            continue
        if not isinstance(item[name], typ):
            raise UserError(f"{where}: item {item.get('item_id', '?')!r}: field '{name}' must be {typ.__name__}")


def _text_suite(item: dict[str, Any], where: str) -> Any:
    """The registered suite whose text items these are (its name in the item's ``suite``)."""
    from framebench.registry import ordered_suites

    text_suites = {s.name: s for s in ordered_suites() if s.items.makes_jobs}
    found = text_suites.get(item["suite"])
    if found is None:
        raise UserError(f"{where}: field 'suite': {item['suite']!r} items are not text items "
                        f"(use {' or '.join(text_suites)})")
    return found


def _check_consistency(item: dict[str, Any], suite: Any, where: str) -> None:
    """Agreement between fields: task and format of the suite, no other suite's fields, framing
    level with bias, then the suite's own checks (``SuiteItems.check_item``)."""
    for name in ("item_id", "context_id", "question"):
        if not item[name].strip():
            raise UserError(f"{where}: field '{name}' must not be empty")
    tasks, formats = suite.items.task_names(), tuple(suite.items.records.formats)
    if item["task"] not in tasks:
        raise UserError(f"{where}: field 'task': {item['task']!r} is not a {suite.name} task "
                        f"(expected {', '.join(tasks)})")
    if item["format"] not in formats:
        raise UserError(f"{where}: field 'format': {suite.name} items are {' or '.join(formats)}, "
                        f"got {item['format']!r}")
    for name in _extras_of_other_suites(suite):
        if item.get(name):
            raise UserError(f"{where}: field '{name}': only items of the suites that declare it have one")
    if "bias" in item and (item["bias"] == NEUTRAL) != (item.get("level", "") == ""):
        raise UserError(f"{where}: field 'level' must be empty exactly when bias is neutral "
                        f"(bias {item['bias']!r}, level {item.get('level', '')!r})")
    problem = suite.items.check_item(item)
    if problem:
        name, message = problem
        raise UserError(f"{where}: field '{name}': {message}")


def _extras_of_other_suites(suite: Any) -> set[str]:
    from framebench.registry import ordered_suites

    own = set(suite.items.item_fields) | set(suite.items.item_extras)
    return {f for s in ordered_suites() if s.name != suite.name for f in s.items.item_extras} - own


def read_items(path: str | Path) -> list[dict[str, Any]]:
    """Read ``items.jsonl`` (or a directory holding it); duplicates and bad lines are errors."""
    path = Path(path)
    if path.is_dir() and path.name != ITEMS_FILE:  # a folder named items.jsonl is refused as one
        path = path / ITEMS_FILE
    if not path.exists() and not path.is_symlink():  # a link loop or a dangling link is named as such
        raise UserError(f"{path}: no such items file")
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, item in read_jsonl(path, "item"):
        item = validate_item(item, str(path), n)
        if item["item_id"] in seen:
            raise UserError(f"{path}: line {n}: duplicate item_id {item['item_id']!r}")
        seen.add(item["item_id"])
        items.append(item)
    return items


def write_items(items: list[dict[str, Any]], path: str | Path) -> Path:
    """Write items as JSONL atomically, in the given order, keys sorted (byte-stable output)."""
    from framebench.files import write_text_atomic
    text = "".join(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n" for it in items)
    return write_text_atomic(text, path)
