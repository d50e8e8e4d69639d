"""FramingQA text domains: what a task contributes to building and asking its items.

A domain is one loader file that ends with a ``Domain`` and one registry line, the entry point
that names it (group ``framebench.framingqa_domains``; framebench's own four are in
pyproject.toml). Everything else that differs per task — the neutral MC question, how a question
names an option, the option scopes used to find evidence, the build report's gold
distribution, the task list of ``--tasks`` and of the records contract — is read from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from framebench.errors import UserError

if TYPE_CHECKING:
    from framebench.text_eval.framingqa.contexts import Context, Dropped

GROUP = "framebench.framingqa_domains"


@dataclass
class Loaded:
    """What a domain's loader returns: contexts, dropped source rows and why, notes for the build
    report, and the pre-selection category counts (or None)."""

    contexts: list[Context]
    dropped: list[Dropped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pool: dict[str, Any] | None = None


def _as_written(option: str) -> str:
    return option


@dataclass(frozen=True)
class Domain:
    """One FramingQA task.

    ``load(opts)`` reads every usable source row of ``opts.source`` (a folder, or ``"hf"``) as a
    candidate context, with the source's own label (``""`` where the source has none);
    ``select(candidates)`` is the automatic selection that ``--unreviewed`` builds use (default: every
    candidate); a normal build takes the reviewed contexts instead (``framebench.text_eval.framingqa.review``);
    ``mc_ask`` is the neutral MC question (no option named; ``""``: binary only, like hearsay);
    ``phrase(option)`` how a question names an option ("a consumer issue"); ``scopes`` maps each
    label to its Appendix C scope (extractive evidence retrieval; empty: options are free text);
    ``all_distractors``: every non-gold option is a distractor (no nearest-three choice);
    ``describe(contexts)`` Markdown lines for the build report's gold distribution (default: a
    gold count table).
    """

    task: str
    order: int
    load: Callable[[Any], Loaded]
    mc_ask: str = ""
    phrase: Callable[[str], str] = _as_written
    scopes: Mapping[str, str] = field(default_factory=dict)
    select: Callable[[list[Context]], Loaded] | None = None
    all_distractors: bool = False
    describe: Callable[[list[Context]], list[str]] | None = None

    @property
    def has_mc(self) -> bool:
        return bool(self.mc_ask)

    @property
    def labels(self) -> tuple[str, ...]:
        """The fixed label set (law, hearsay, finance); ``()`` where options are free text (medicine)."""
        return tuple(self.scopes)


@cache
def domains() -> dict[str, Domain]:
    """Every registered domain by task, in their declared order."""
    found: dict[str, Domain] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in found:
            continue
        value = ep.load()
        if not isinstance(value, Domain) or value.task != ep.name:
            raise TypeError(f"entry point {GROUP}:{ep.name} is not a Domain for task {ep.name!r}")
        found[ep.name] = value
    return dict(sorted(found.items(), key=lambda kv: (kv[1].order, kv[0])))


def task_names() -> tuple[str, ...]:
    return tuple(domains())


def domain(task: str) -> Domain:
    table = domains()
    if task not in table:
        raise UserError(f"unknown task {task!r} (choose from {', '.join(table)})")
    return table[task]
