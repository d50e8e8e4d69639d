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
from framebench.vocabulary import BINARY_ANSWERS, MC_ANSWERS

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
    _check_consistency(item, f"{where}: item {item['item_id']!r}")
    return item


# which tasks and formats each suite's items may have: the registered text suites' (embodied
# episodes are not items)
MIN_OPTIONS, MAX_OPTIONS = 2, len(MC_ANSWERS)


def _check_consistency(item: dict[str, Any], where: str) -> None:
    """Agreement between fields: suite/task/format, gold among the options, level with bias."""
    for name in ("item_id", "context_id", "question"):
        if not item[name].strip():
            raise UserError(f"{where}: field '{name}' must not be empty")
    suite = item["suite"]
    SUITE_TASKS, SUITE_FORMATS = records.suite_tasks(text_only=True), records.suite_formats(text_only=True)  # noqa: N806
    if suite not in SUITE_TASKS:
        raise UserError(f"{where}: field 'suite': {suite!r} items are not text items (use {' or '.join(SUITE_TASKS)})")
    if item["task"] not in SUITE_TASKS[suite]:
        raise UserError(f"{where}: field 'task': {item['task']!r} is not a {suite} task "
                        f"(expected {', '.join(SUITE_TASKS[suite])})")
    if item["format"] not in SUITE_FORMATS[suite]:
        raise UserError(f"{where}: field 'format': {suite} items are {' or '.join(SUITE_FORMATS[suite])}, "
                        f"got {item['format']!r}")
    options = item["options"]
    if any(not isinstance(o, str) or not o.strip() for o in options):
        raise UserError(f"{where}: field 'options' must hold non-empty strings")
    if (item["bias"] == "neutral") != (item["level"] == ""):
        raise UserError(f"{where}: field 'level' must be empty exactly when bias is neutral "
                        f"(bias {item['bias']!r}, level {item['level']!r})")
    if suite == "omit":
        if item["bias"] != "neutral":
            raise UserError(f"{where}: field 'bias': OMIT items are neutral")
        if item.get("frame") not in ("action", "omission"):
            raise UserError(f"{where}: field 'frame': OMIT items need frame action or omission")
        if options:
            raise UserError(f"{where}: field 'options': OMIT items have none")
        return
    if item.get("frame"):
        raise UserError(f"{where}: field 'frame': only OMIT items have a frame")
    if item["format"] == "binary":
        if options:
            raise UserError(f"{where}: field 'options': binary items have none (got {len(options)})")
        allowed = BINARY_ANSWERS
    else:
        if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
            raise UserError(f"{where}: field 'options': mc items need {MIN_OPTIONS}-{MAX_OPTIONS} options, "
                            f"got {len(options)}")
        allowed = MC_ANSWERS[: len(options)]
    if item["gold"] not in allowed:
        raise UserError(f"{where}: field 'gold' must be one of {', '.join(allowed)}, got {item['gold']!r}")


def read_items(path: str | Path) -> list[dict[str, Any]]:
    """Read ``items.jsonl`` (or a directory holding it); duplicates and bad lines are errors."""
    path = Path(path)
    if path.is_dir():
        path = path / ITEMS_FILE
    if not path.exists():
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
    from framebench.runinfo import write_text_atomic

    text = "".join(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n" for it in items)
    return write_text_atomic(text, path)
