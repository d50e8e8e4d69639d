"""framebench items as framework-neutral samples and back: one item (and OMIT condition) is one
sample whose id is the item id, whose input is the user message framebench renders, and whose
metadata holds the item's fields. The parser is the suite's own (``SuiteItems.record``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.items import ITEMS_FILE, read_items
from framebench.paths import data_path
from framebench.registry import suite
from framebench.suite import Job, TextOptions

CONDITION = "condition"  # the metadata key of an OMIT sample's condition


@dataclass(frozen=True)
class TextSample:
    """What a framework's sample carries of one framebench job."""

    id: str
    prompt: str
    system: str  # "" when framebench sends no system turn
    target: str
    choices: list[str]
    max_new_tokens: int
    metadata: dict[str, Any]


def items_file(data: str | Path) -> Path:
    data = data_path(data)
    return data / ITEMS_FILE if data.is_dir() else data


def load_items(data: str | Path, suite_name: str) -> list[dict[str, Any]]:
    """The items of one suite in ``data`` (a folder holding items.jsonl, or the file)."""
    path = items_file(data)
    items = [it for it in read_items(path) if it["suite"] == suite_name]
    if not items:
        raise UserError(f"{path}: no {suite_name} items")
    return items


def job_of(item: Mapping[str, Any], condition: str | None, where: str) -> Job:
    """The suite's own job for an item (OMIT: under ``condition``)."""
    options = TextOptions(conditions=(condition,) if condition else ())
    jobs = suite(item["suite"]).items.jobs([dict(item)], options, where)
    if len(jobs) != 1:
        raise UserError(f"{where}: item {item['item_id']!r} gives {len(jobs)} jobs, expected one")
    return jobs[0]


def turns(job: Job) -> tuple[str, str]:
    """(system, user): the turns framebench sends, one user message after at most one system turn
    ("" for none)."""
    roles = [m["role"] for m in job.chat]
    if roles not in (["user"], ["system", "user"]):
        raise UserError(f"item {job.record_id!r}: its chat is not one user message after at most one system turn")
    return (job.chat[0]["content"] if len(roles) == 2 else ""), job.prompt


def to_sample(job: Job) -> TextSample:
    item = dict(job.item)
    metadata = {**item, CONDITION: job.condition.name} if job.condition is not None else item
    system, user = turns(job)
    return TextSample(id=item["item_id"], prompt=user, system=system, target=str(item.get("gold") or ""),
                      choices=list(item.get("options") or []),
                      max_new_tokens=job.decoding.max_new_tokens, metadata=metadata)


def item_of(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(item, condition) from a sample's metadata (``to_sample``'s inverse)."""
    item = dict(metadata)
    return item, item.pop(CONDITION, None)


def parse_output(metadata: Mapping[str, Any], output: str, where: str) -> dict[str, Any]:
    """The framebench record of a sample's output (run id and model left empty)."""
    item, condition = item_of(metadata)
    job = job_of(item, condition, where)
    job.output = output
    return suite(item["suite"]).items.record(job, "", "")
