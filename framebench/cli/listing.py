"""``framebench list tasks|conditions|engines|planners``: what a run can name, one per line.

Everything listed is read from the registries (the registered suites' tasks, the OMIT conditions
with any registered interventions, the engines), so the list cannot drift from what the commands
accept; each task's description is its suite's (``SuiteItems.task_help``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

Entry = tuple[str, str]  # (name or spec, one-line description)

FIRST = ("smollm2", "hf", "openai")  # the usual model choices lead the lists


def _engines(kind: str) -> list[Any]:
    from framebench.registry import engines_of

    rank = {name: i for i, name in enumerate(FIRST)}
    return sorted(engines_of(kind).values(), key=lambda e: (rank.get(e.name, len(FIRST)), e.name))


def tasks() -> list[Entry]:
    from framebench.registry import ordered_suites

    # the text suites' tasks (what ``framebench text`` runs) first; a task several suites share
    # (FramingQA and its rotations) once, described by the first
    found: dict[str, list[Any]] = {}
    for suite in sorted(ordered_suites(), key=lambda s: not s.items.makes_jobs):
        for task in suite.items.task_names():
            found.setdefault(task, []).append(suite)
    return [(task, f"[{', '.join(s.name for s in suites)}; {', '.join(suites[0].items.records.formats)}] "
                   f"{suites[0].items.task_help.get(task, suites[0].title)}")
            for task, suites in found.items()]


def conditions() -> list[Entry]:
    from framebench.registry import ordered_suites

    return [(name, summary) for suite in ordered_suites() for name, summary in suite.items.conditions_listing()]


def engines() -> list[Entry]:
    from framebench.backends.baseline import KINDS

    models: list[Entry] = []
    for engine in _engines("model"):
        if engine.name == "baseline":  # one line per policy: each is its own spec
            models += [(f"baseline:{kind}", f"model: {engine.help}: {kind.replace('-', ' ')} (text only)")
                       for kind in KINDS]
        else:
            models.append((engine.usage(), f"model: {engine.help}"))
    return [*models, *((e.usage(), f"simulator (embodied --simulator): {e.help}") for e in _engines("simulator"))]


def planners() -> list[Entry]:
    planners = _engines("planner")
    return [*((e.usage(), e.help) for e in planners if not e.options),
            *((e.usage(), f"LLM planner (ReAct loop) on {e.help}") for e in _engines("model") if e.plans),
            *((e.usage(), e.help) for e in planners if e.options)]


CATALOG: dict[str, Callable[[], list[Entry]]] = {
    "tasks": tasks,
    "conditions": conditions,
    "engines": engines,
    "planners": planners,
}


def list_command(
    what: str = typer.Argument(..., metavar="WHAT",
                               help="tasks, conditions, engines or planners."),
) -> None:
    """List the tasks, OMIT conditions, model engines or planners a run can name."""
    from framebench.errors import UserError

    if what not in CATALOG:
        raise UserError(f"framebench list: expected one of {', '.join(CATALOG)}, got {what!r}")
    entries = CATALOG[what]()
    width = max(len(name) for name, _ in entries)
    for name, text in entries:
        typer.echo(f"{name:<{width}}  {text}")
