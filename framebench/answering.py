"""The answering contract: what an answer mode (``--answer NAME``) implements, and all it imports.

A mode is an object registered under the ``framebench.answer_modes`` entry-point group
(:class:`AnswerMode`). It declares what it needs: the engine capability it answers through, whether
its answers are probabilities over the allowed answers, whether it answers after the model's own
reasoning, the settings its result depends on, and its wording for the report. Then it answers a
batch of jobs with a loaded backend (``answer(jobs, backend, emit)``), emitting ``(job, Answer)``
pairs as parts of the batch finish.

The text pipeline (``framebench.pipeline.answers``) does the rest, the same for every mode:
result keys, packing jobs into calls, serving stored answers and storing every emitted batch, and
the reasoning step (a job of a reasoning mode whose suite asks for reasoning first gets it in
``job.output``, generated as :data:`GENERATE` generates, under the same result key, so a generate
run's text or a ``--reasoning-from`` run's is reused). A mode never sees a key or a store. The
modes other than the default (``generate``) are named in the run identity, and their rows are
scored as a model of their own (``MODEL [NAME]``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from framebench.backends.base import Decoding
from framebench.suite import Job

__all__ = ["GENERATE", "Answer", "AnswerMode", "Emit", "GenerateAnswers", "Job", "by_decoding", "choices",
           "keeps_probs", "reasons_first"]


@dataclass(frozen=True)
class Answer:
    """A job's answer: the generated text (or the reasoning the answer followed; ``""``: none)
    and, for a mode that keeps them, the probability of each allowed answer."""

    output: str
    probs: dict[str, float] | None = None

    def stored(self) -> dict[str, Any]:
        """The result store's value."""
        return {"output": self.output} if self.probs is None else {"output": self.output, "probs": self.probs}


Emit = Callable[[Sequence[tuple[Job, Answer]]], None]


class AnswerMode(Protocol):
    """How a text job is answered, registered under ``framebench.answer_modes``."""

    name: str
    capability: str  # the engine capability ``answer`` uses (``framebench.registry.CAPABILITIES``)
    keeps_probs: bool  # answers are probabilities over ``choices(job)``; the records keep them
    reads_reasoning: bool  # answers after the reasoning where ``reasons_first(job)``; --reasoning-from
    description: str  # how the answers were obtained, in words (report provenance)

    def key_settings(self, job: Job) -> dict[str, Any]:
        """What the job's result depends on besides model, record and prompt (two modes never
        share a key: a mode names itself here)."""
        ...

    def answer(self, jobs: list[Job], backend: Any, emit: Emit) -> None:
        """Answer every job with the loaded ``backend`` (one with the engine capability ``capability``); emit
        ``(job, Answer)`` pairs as they finish (each emitted batch is stored at once)."""
        ...


def choices(job: Job) -> tuple[str, ...]:
    """The answers the job may be given, in the suite's tie-break order."""
    from framebench.registry import suite

    return tuple(suite(job.item["suite"]).items.answer_choices(job))


def reasons_first(job: Job) -> bool:
    """Whether the job's suite asks for the model's reasoning before a scored answer."""
    from framebench.registry import suite

    return suite(job.item["suite"]).items.reasons_first(job)


def keeps_probs(job: Job) -> bool:
    """Whether the job's answer mode answers by probabilities (its answer: the most probable)."""
    from framebench.registry import answer_mode

    return answer_mode(job.answer_mode).keeps_probs


def by_decoding(jobs: list[Job]) -> list[list[Job]]:
    """The jobs grouped per decoding, in order of first appearance (a generate call has one)."""
    groups: dict[Decoding, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.decoding, []).append(job)
    return list(groups.values())


class GenerateAnswers:
    """The ``generate`` answer mode: free text, strictly parsed by the suite. The pipeline's own
    mode, written against this contract as any other, and the reasoning step's generator."""

    name, capability = "generate", "generate"
    keeps_probs = reads_reasoning = False
    description = "greedy generation, answer parsed strictly (unparsed = wrong)"

    def key_settings(self, job: Job) -> dict[str, Any]:
        return job.decoding.as_dict()

    def answer(self, jobs: list[Job], backend: Any, emit: Emit) -> None:
        """One backend call per decoding; each batch the backend reports (``on_batch``) emitted as
        it returns, the rest when the call returns."""
        for call in by_decoding(jobs):
            done: set[int] = set()

            def on_batch(indices: list[int], texts: list[str], call=call, done=done) -> None:
                fresh = [(i, t) for i, t in zip(indices, texts, strict=True) if i not in done]
                done.update(i for i, _ in fresh)
                emit([(call[i], Answer(t)) for i, t in fresh])

            outputs = backend.generate([j.chat for j in call], call[0].decoding, on_batch=on_batch)
            if len(outputs) != len(call):
                raise RuntimeError(f"{backend.spec}: returned {len(outputs)} outputs for {len(call)} prompts")
            missing = [i for i in range(len(call)) if i not in done]
            if missing:
                on_batch(missing, [outputs[i] for i in missing])


GENERATE = GenerateAnswers()
