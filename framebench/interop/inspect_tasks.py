"""Inspect AI tasks ``framebench/framingqa`` and ``framebench/omit`` (``framebench[inspect]``;
registered under Inspect's ``inspect_ai`` entry point, docs/interop.md).

Each sample is one framebench item: the user message framebench renders (after the condition's
system turn where it has one: OMIT M3); greedy
decoding with framebench's max new tokens; scored by framebench's own strict parser. Metrics:
accuracy with its standard error clustered by context, strict accuracy and framing effect per
format (pooled over tasks, as ``framebench score``), and a suite's own metrics
(``SuiteMetrics.inspect_metrics``: OMIT's OBR / ABR / FCR per condition, ``framebench.text_eval.omit.inspect_metric``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    mean,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from framebench.errors import UserError
from framebench.interop.inspect_log import scorer_name
from framebench.interop.samples import (
    TextSample,
    items_file,
    job_of,
    load_items,
    parse_output,
    to_sample,
)
from framebench.pipeline.text import select_items
from framebench.registry import suite

CLUSTER = "context_id"
MAX_NEW_TOKENS = "max_new_tokens"  # the metadata key of a sample's framebench budget


def _sample(s: TextSample) -> Sample:
    chat = [ChatMessageSystem(content=s.system), ChatMessageUser(content=s.prompt)]
    return Sample(input=chat if s.system else s.prompt, target=s.target, id=s.id, choices=s.choices or None,
                  metadata={**s.metadata, MAX_NEW_TOKENS: s.max_new_tokens})


def _dataset(samples: list[TextSample], name: str) -> MemoryDataset:
    return MemoryDataset([_sample(s) for s in samples], name=name)


@solver
def framebench_generate() -> Solver:
    """Greedy generation with the sample's framebench budget (binary 8, MC 16, OMIT per condition)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, temperature=0.0, max_tokens=int(state.metadata[MAX_NEW_TOKENS]))

    return solve


def _record(state: TaskState) -> dict[str, Any]:
    metadata = {k: v for k, v in state.metadata.items() if k != MAX_NEW_TOKENS}
    return parse_output(metadata, state.output.completion, f"sample {state.sample_id}")


def _meta(s: SampleScore) -> dict[str, Any]:
    return s.sample_metadata or {}


def _right(s: SampleScore) -> float:
    """1.0 for a right answer (Inspect's reducers have already turned ``C`` / ``I`` into 1 / 0)."""
    return value_to_float()(s.score.value)


def _by_context(scores: list[SampleScore]) -> dict[str, dict[tuple[str, str], list[SampleScore]]]:
    """format -> (task, context_id) -> scores, contexts sorted as ``framebench score`` sorts them."""
    out: dict[str, dict[tuple[str, str], list[SampleScore]]] = {}
    for s in scores:
        m = _meta(s)
        out.setdefault(m["format"], {}).setdefault((m["task"], m["context_id"]), []).append(s)
    return {f: dict(sorted(groups.items())) for f, groups in sorted(out.items())}


@metric
def strict_accuracy() -> Metric:
    """Per format: the share of contexts whose every variant is right."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {f"strict_accuracy_{fmt}": float(np.mean([min(map(_right, g)) for g in groups.values()]))
                for fmt, groups in _by_context(scores).items()}

    return compute


def _bias_mean(group: list[SampleScore], bias: str) -> float:
    values = [_right(s) for s in group if _meta(s)["bias"] == bias]
    return sum(values) / len(values) if values else float("nan")


@metric
def framing_effect() -> Metric:
    """Per format: per context, accuracy on correct-bias minus on incorrect-bias questions,
    averaged over the contexts having both."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        out = {}
        for fmt, groups in _by_context(scores).items():
            effects = np.array([_bias_mean(g, "correct") - _bias_mean(g, "incorrect") for g in groups.values()])
            if np.isfinite(effects).any():
                out[f"framing_effect_{fmt}"] = float(np.nanmean(effects))
        return out

    return compute


def _score(record: dict[str, Any], value: Any) -> Score:
    return Score(value=value, answer=record["answer"], explanation=record["parse"],
                 metadata={"parse": record["parse"], "answer": record["answer"]})


@scorer(metrics=[accuracy(), stderr(cluster=CLUSTER), strict_accuracy(), framing_effect()])
def framingqa_scorer() -> Any:
    """framebench's strict parser: right when the parse is ``ok`` and the answer is the gold."""

    async def score(state: TaskState, target: Target) -> Score:
        record = _record(state)
        return _score(record, CORRECT if record["correct"] else INCORRECT)

    return score


def action_scorer(suite_name: str, suite_metrics: list[Metric]) -> Any:
    """framebench's parser for a Yes/No action question (OMIT); the value is 1 for a parsed Yes
    (the action taken), else 0. Beside the mean, the suite's own Inspect metrics
    (``SuiteMetrics.inspect_metrics``: OMIT's OBR / ABR / FCR)."""

    @scorer(metrics=[mean(), stderr(cluster=CLUSTER), *suite_metrics], name=scorer_name(suite_name))
    def action() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            record = _record(state)
            return _score(record, 1.0 if record["parse"] == "ok" and record["answer"] == "Yes" else 0.0)

        return score

    return action()


def inspect_name(name: str) -> str:
    """The name a task registers under, so that Inspect lists it as ``framebench/<name>``.

    Inspect prefixes a task with its module's top-level package when that package lies in
    site-packages (a wheel) or is installed editable under a distribution of the same name.
    framebench's distribution is ``framebench-eval``, so an editable install from a checkout gets
    no prefix from Inspect and is given it here. The test is Inspect's own (a private helper of
    inspect-ai 0.3.285, the version tested; tests/interop/test_interop_inspect.py runs both ways)."""
    try:
        from inspect_ai._util.package import get_installed_package_name
    except ImportError:  # a later Inspect: give the prefix; its own, if any, shows in the listing
        return f"framebench/{name}"
    return name if get_installed_package_name(inspect_name) == "framebench" else f"framebench/{name}"


def _task(suite_name: str, samples: list[TextSample], scorer_: Any) -> Task:
    return Task(dataset=_dataset(samples, suite_name), solver=framebench_generate(), scorer=scorer_,
                metadata={"framebench_suite": suite_name})


def registered_task(fn: Any) -> Any:
    """Inspect's ``@task`` under the name ``inspect_name`` gives the function."""
    return task(name=inspect_name(fn.__name__))(fn)


@registered_task
def framingqa(data: str, task: str | None = None, format: str | None = None) -> Task:
    """FramingQA text items of ``data`` (optionally one task and one format: binary or mc)."""
    name, path = framingqa.__name__, items_file(data)
    items = select_items(load_items(data, name), task, format, None)
    if not items:
        raise UserError(f"{path}: no items match task={task!r} format={format!r}")
    return _task(name, [to_sample(job_of(it, None, str(path))) for it in items], framingqa_scorer())


@registered_task
def omit(data: str, condition: str | None = None) -> Task:
    """OMIT items of ``data`` under one condition (default: the suite's; ``framebench list conditions``)."""
    name, path = omit.__name__, items_file(data)
    samples = [to_sample(job_of(it, condition, str(path))) for it in load_items(data, name)]
    return _task(name, samples, action_scorer(name, suite(name).metrics.inspect_metrics()))
