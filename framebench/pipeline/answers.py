"""The text pipeline's side of an answer mode (``framebench.answering``): what every mode gets
without knowing of it. Result keys, packing jobs into calls, stored results read into jobs and
returned ones stored, and the reasoning step (generated as ``generate`` generates, under its
result key, unless this run's store or a ``--reasoning-from`` run's already holds it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from framebench.answering import (
    GENERATE,
    Answer,
    AnswerMode,
    Job,
    by_decoding,
    choices,
    reasons_first,
)
from framebench.executors.base import Entry
from framebench.registry import DEFAULT_ANSWER_MODE, answer_mode
from framebench.store import result_key

CALL_SIZE = 256
T = TypeVar("T")


def job_key(fingerprint: str, job: Job) -> str:
    """The result-store key: model, record, prompt and how it is answered (results of two answer
    modes are never served for each other)."""
    return result_key(fingerprint, job.record_id, job.chat, answer_mode(job.answer_mode).key_settings(job))


def generation_key(fingerprint: str, job: Job) -> str:
    """The store key of a job's generated text (also the reasoning a reasoning mode reads)."""
    return result_key(fingerprint, job.record_id, job.chat, GENERATE.key_settings(job))


def pack_calls(jobs: list[T], size: int | None = None,
               context_of: Callable[[T], str] = lambda job: job.item["context_id"]) -> list[list[T]]:
    """Pack whole contexts into calls of about ``size`` jobs, so that the variants of a context
    reach the backend together (one shared prefix) and a call never splits a context. A backend
    that batches across contexts (GPU ``hf:``, ``vllm:``) asks for larger calls (``call_size``). ``context_of``: an entry's context (a job's by default)."""
    size = size or CALL_SIZE
    by_context: dict[str, list[T]] = {}
    for job in jobs:
        by_context.setdefault(context_of(job), []).append(job)
    calls: list[list[T]] = [[]]
    for group in by_context.values():
        if calls[-1] and len(calls[-1]) + len(group) > size:
            calls.append([])
        calls[-1].extend(group)
    return [c for c in calls if c]


def generation_calls(jobs: list[Job], size: int | None) -> list[list[Job]]:
    """Jobs grouped per decoding (in order of first appearance), each group packed into calls."""
    return [call for group in by_decoding(jobs) for call in pack_calls(group, size)]


def entries(answered: Sequence[tuple[Job, Answer]]) -> list[Entry]:
    return [(job.key, job.record_id, answer.stored()) for job, answer in answered]


class ModeRunner:
    """A registered answer mode as the text run drives it."""

    def __init__(self, mode: AnswerMode):
        self.mode, self.name, self.capability = mode, mode.name, mode.capability
        self.reads_reasoning = mode.reads_reasoning
        self.in_identity = mode.name != DEFAULT_ANSWER_MODE  # generate runs keep their run ids

    def key_settings(self, job: Job) -> dict[str, Any]:
        return self.mode.key_settings(job)

    def check(self, backend: Any) -> None:
        """A built backend (e.g. one passed to the API) implements the mode's capability."""
        from framebench.backends.base import require

        require(backend, self.capability, f"--answer {self.name}")

    def reasons(self, job: Job) -> bool:
        return self.reads_reasoning and reasons_first(job)

    def restore(self, job: Job, stored: Mapping[str, Any]) -> None:
        """A stored result (the store sorts keys: the allowed answers' order, which breaks ties,
        comes back from the suite)."""
        job.output = stored["output"]
        if self.mode.keeps_probs:
            job.probs = {a: stored["probs"][a] for a in choices(job) if a in stored["probs"]}

    def apply(self, job: Job, value: Mapping[str, Any]) -> None:
        """A result a worker just returned (the engine's own answer order kept)."""
        job.output = value["output"]
        if self.mode.keeps_probs:
            job.probs = dict(value["probs"])

    def has_result(self, job: Job) -> bool:
        return (job.probs if self.mode.keeps_probs else job.output) is not None

    def calls(self, jobs: list[Job], size: int) -> list[list[Job]]:
        """Whole contexts per call; one decoding per call for a mode that generates (a backend's
        generate call takes one decoding)."""
        if self.capability == GENERATE.capability:
            return generation_calls(jobs, size)
        return pack_calls(jobs, size)

    def known_keys(self, fingerprint: str, jobs: list[Job]) -> list[str]:
        """The reasoning the jobs may find already stored (here or in ``--reasoning-from`` runs)."""
        return [generation_key(fingerprint, j) for j in jobs if self.reasons(j)]

    def work(self, backend: Any, fingerprint: str, jobs: list[Job], known: Mapping[str, Any],
             emit: Callable[[tuple[list[Entry], int]], None]) -> None:
        """Reasoning first where needed, then the mode's answers; emits ``(store entries, records
        finished)`` per returned batch."""
        self._reason(backend, fingerprint, [j for j in jobs if self.reasons(j)], known, emit)

        def answered(batch: Sequence[tuple[Job, Answer]]) -> None:
            emit((entries(batch), len(batch)))

        self.mode.answer(jobs, backend, answered)

    def _reason(self, backend: Any, fingerprint: str, jobs: list[Job], known: Mapping[str, Any],
                emit: Callable[[tuple[list[Entry], int]], None]) -> None:
        """``job.output`` := the reasoning, found in ``known`` or generated (stored under its
        generation key, shared with ``--answer generate``; it finishes no record)."""
        for job in jobs:
            hit = known.get(generation_key(fingerprint, job))
            if hit is not None:
                job.output = hit["output"]
        missing = [j for j in jobs if j.output is None]
        if not missing:
            return
        copies = [replace(j, key=generation_key(fingerprint, j), output=None, answer_mode=GENERATE.name)
                  for j in missing]
        texts: dict[str, str] = {}

        def keep(batch: Sequence[tuple[Job, Answer]]) -> None:
            texts.update((copy.key, answer.output) for copy, answer in batch)
            emit((entries(batch), 0))

        GENERATE.answer(copies, backend, keep)
        for job, copy in zip(missing, copies, strict=True):
            job.output = texts[copy.key]
