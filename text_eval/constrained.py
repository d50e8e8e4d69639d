"""``--answer constrained`` for the text runner: the model answers from the allowed set only.

FramingQA binary items and short-answer OMIT conditions: the backend's ``answer_probabilities``
over ``Yes``/``No`` (or the option letters) right after the prompt. OMIT conditions that end with a
final ``ANSWER:`` line (M1, M4): the model first reasons (the same greedy generation as in
``generate`` mode, stored under the same key), then the answer is scored after the reasoning, cut
before any ``ANSWER:`` it wrote, with ``"\\nANSWER:"`` appended. Definitions:
``framebench/backends/constrained.py`` and ``docs/susceptibility.md``.

The store key of a constrained result holds ``answer: constrained``, the allowed answers and the
scoring version, so a constrained and a generated answer are never served for each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from framebench.backends.base import require
from framebench.pipeline.text import GENERATE, TextPayload, generation_key, pack_calls
from framebench.registry import require_capability, suite
from framebench.suite import Job

SCORING_VERSION = "constrained-v1"
DEFAULT_CALL_SIZE = 256
ANSWER_SUFFIX = "\nANSWER:"
_ANSWER_TAG = re.compile(r"\banswer\s*:", re.IGNORECASE)


def job_choices(job: Job) -> tuple[str, ...]:
    return suite(job.item["suite"]).items.answer_choices(job)


def needs_reasoning(job: Job) -> bool:
    return suite(job.item["suite"]).items.reasons_first(job)


def keeps_probs(job: Job) -> bool:
    """Whether the job's answer mode answers by probabilities (``constrained``, or any registered
    mode that keeps them): its answer is then the most probable allowed one."""
    from framebench.registry import answer_mode

    return answer_mode(job.answer_mode).keeps_probs


def probs_answer(probs: dict[str, float] | None) -> tuple[str, str]:
    """(answer, parse) of a job answered by probabilities: the most probable allowed answer;
    ``unparsed`` when the engine gave no probabilities."""
    from framebench.backends.constrained import pick

    return (pick(probs), "ok") if probs else ("", "unparsed")


NEEDED_BY = "--answer constrained"


def check_engine(spec: str) -> None:
    """Before any model loads: the engine ``spec`` names declares that it scores answers."""
    require_capability(spec, "score_answers", NEEDED_BY)


def check_backend(backend: Any) -> None:
    """A built backend (e.g. one passed to the API) implements ``ScoresAnswers``."""
    require(backend, "score_answers", NEEDED_BY)


def scoring_settings(job: Any) -> dict[str, Any]:
    """What the store key of a constrained result depends on, besides model, item and prompt."""
    settings: dict[str, Any] = {"answer": "constrained", "choices": list(job_choices(job)),
                                "version": SCORING_VERSION}
    if needs_reasoning(job):
        settings["reasoning"] = job.decoding.as_dict()
        settings["after"] = ANSWER_SUFFIX
    return settings


def answer_prefix(reasoning: str) -> str:
    """The assistant text the answer is scored after: the reasoning up to its last ``ANSWER:``
    tag (or all of it), then ``"\\nANSWER:"``."""
    tags = list(_ANSWER_TAG.finditer(reasoning))
    kept = reasoning[:tags[-1].start()] if tags else reasoning
    return kept.rstrip() + ANSWER_SUFFIX


def score_jobs(backend: Any, jobs: list[Any], store: Any, reasoning_key: Callable[[Any], str],
               generate: Callable[[list[Any]], None], on_done: Callable[[list[Any]], None],
               call_size: int | None = None, reasoning_stores: Sequence[Any] = ()) -> None:
    """Fill ``job.probs`` for every job (``job.output`` holds the reasoning where one is needed),
    storing each call's results as soon as it is scored. Reasoning is looked up in ``store``, then
    in ``reasoning_stores`` (other runs' stores: the key pins model, item, prompt and decoding),
    and generated only where none has it. Calls hold ``call_size`` jobs (default: the backend's
    declared ``call_size``, else ``DEFAULT_CALL_SIZE``)."""
    check_backend(backend)
    call_size = call_size or getattr(backend, "call_size", None) or DEFAULT_CALL_SIZE
    reasoning = [j for j in jobs if needs_reasoning(j)]
    if reasoning:
        found: dict[str, Any] = {}
        for source in (store, *reasoning_stores):
            found = {**source.get_many(reasoning_key(j) for j in reasoning), **found}
        for job in reasoning:
            hit = found.get(reasoning_key(job))
            if hit is not None:
                job.output = hit["output"]
        missing = [j for j in reasoning if j.output is None]
        if missing:
            generate(missing)  # stores the reasoning under its generation key
    for start in range(0, len(jobs), call_size):
        call = jobs[start:start + call_size]
        prefixes = [answer_prefix(j.output or "") if needs_reasoning(j) else "" for j in call]
        probs = backend.answer_probabilities([j.chat for j in call], [job_choices(j) for j in call],
                                             assistant_prefixes=prefixes if any(prefixes) else None)
        if len(probs) != len(call):
            raise RuntimeError(f"{backend.spec}: returned {len(probs)} answers for {len(call)} prompts")
        for job, p in zip(call, probs, strict=True):
            job.probs = dict(p)
        store.put_many((j.key, j.record_id, {"probs": j.probs, "output": j.output or ""}) for j in call)
        on_done(call)


class _Sink:
    """The result store as a worker's scoring code sees it: what the driver shipped with the
    unit, and every ``put_many`` handed on as a chunk."""

    def __init__(self, known: Mapping[str, Any], emit: Callable[[list], None]):
        self.known, self.emit = dict(known), emit

    def get_many(self, keys) -> dict[str, Any]:
        return {k: self.known[k] for k in keys if k in self.known}

    def put_many(self, entries) -> None:
        entries = list(entries)
        self.known.update((k, v) for k, _, v in entries)
        self.emit(entries)


class ConstrainedAnswers:
    """The ``constrained`` answer mode (registered under ``framebench.answer_modes``; the
    interface is ``framebench.pipeline.text.AnswerMode``), over the functions above."""

    name, order, capability = "constrained", 10, "score_answers"
    in_identity = reads_reasoning = keeps_probs = labelled = True
    description = "constrained: the most probable allowed answer (probabilities kept)"

    def check_engine(self, spec: str) -> None:
        """Before any data is read or model loaded: the engine declares it scores answers."""
        check_engine(spec)

    def check(self, backend: Any) -> None:
        check_backend(backend)

    def key_settings(self, job: Job) -> dict[str, Any]:
        return scoring_settings(job)

    def restore(self, job: Job, stored: Any) -> None:
        """A stored result (the store sorts keys: the allowed answers' order, which breaks ties,
        comes back from the suite)."""
        job.output = stored["output"]
        job.probs = {a: stored["probs"][a] for a in job_choices(job) if a in stored["probs"]}

    def apply(self, job: Job, value: Mapping[str, Any]) -> None:
        """A result a worker just returned (the backend's own answer order kept)."""
        job.output = value["output"]
        job.probs = dict(value["probs"])

    def has_result(self, job: Job) -> bool:
        return job.probs is not None

    def calls(self, jobs: list[Job], size: int) -> list[list[Job]]:
        """Whole contexts, every decoding together (reasoning first)."""
        return pack_calls(jobs, size)

    def known_keys(self, fingerprint: str, jobs: list[Job]) -> list[str]:
        """The reasoning a unit may find already stored (here or in ``--reasoning-from`` runs)."""
        return [generation_key(fingerprint, j) for j in jobs]

    def work(self, worker: Any, payload: Any, emit: Callable[[Any], None]) -> None:
        """Reasoning first where the suite asks for it (stored under its generation key, shared
        with ``--answer generate``), then the scored answers."""
        pending: list[list] = []
        sink = _Sink(payload.known, pending.append)

        def reasoning_key(job: Job) -> str:
            return generation_key(worker.fingerprint, job)

        def generate(jobs: list[Job]) -> None:
            copies = [replace(j, key=reasoning_key(j), output=None, answer_mode=GENERATE.name) for j in jobs]
            stored: dict[str, str] = {}

            def keep(chunk: Any) -> None:
                entries, _ = chunk
                stored.update((k, v["output"]) for k, _, v in entries)
                emit((entries, 0))  # reasoning: stored, but no record is finished yet

            worker.generate(TextPayload(copies), keep, records=False)
            for job, copy in zip(jobs, copies, strict=True):
                job.output = stored[copy.key]

        def on_done(call: list[Job]) -> None:
            entries = [e for batch in pending for e in batch]
            pending.clear()
            emit((entries, len(call)))

        self.score(worker.backend, payload.jobs, sink, reasoning_key, generate, on_done)

    def score(self, backend: Any, jobs: list[Any], store: Any, reasoning_key: Callable[[Any], str],
              generate: Callable[[list[Any]], None], on_done: Callable[[list[Any]], None]) -> None:
        score_jobs(backend, jobs, store, reasoning_key, generate, on_done)


CONSTRAINED = ConstrainedAnswers()
