"""``--answer constrained`` for the text runner: the model answers from the allowed set only.

FramingQA binary items and short-answer OMIT conditions: the backend's ``answer_probabilities``
over ``Yes``/``No`` (or the option letters) right after the prompt. OMIT conditions that end with a
final ``ANSWER:`` line (M1, M4): the model first reasons (the same greedy generation as in
``generate`` mode, stored under the same key), then the answer is scored after the reasoning, cut
before any ``ANSWER:`` it wrote, with ``"\\nANSWER:"`` appended. Definitions:
``framebench/backends/constrained.py`` and ``docs/susceptibility.md``.

The store key of a constrained result holds ``answer: constrained``, the allowed answers and the
scoring version, so a constrained and a generated answer are never served for each other. The mode
imports only the answering contract (``framebench.answering``) and the backends; the pipeline
supplies the reasoning, keys and stores (an import contract in pyproject.toml).
"""

from __future__ import annotations

import re
from typing import Any

from framebench.answering import Answer, Emit, Job, choices, keeps_probs, reasons_first

__all__ = ["CONSTRAINED", "ConstrainedAnswers", "answer_prefix", "keeps_probs", "probs_answer", "scoring_settings"]

SCORING_VERSION = "constrained-v1"
DEFAULT_CALL_SIZE = 256
ANSWER_SUFFIX = "\nANSWER:"
_ANSWER_TAG = re.compile(r"\banswer\s*:", re.IGNORECASE)


def probs_answer(probs: dict[str, float] | None) -> tuple[str, str]:
    """(answer, parse) of a job answered by probabilities (``keeps_probs(job)``): the most
    probable allowed answer; ``unparsed`` when the backend gave no probabilities."""
    from framebench.backends.constrained import pick

    return (pick(probs), "ok") if probs else ("", "unparsed")


def scoring_settings(job: Job) -> dict[str, Any]:
    """What the store key of a constrained result depends on, besides model, item and prompt."""
    settings: dict[str, Any] = {"answer": "constrained", "choices": list(choices(job)),
                                "version": SCORING_VERSION}
    if reasons_first(job):
        settings["reasoning"] = job.decoding.as_dict()
        settings["after"] = ANSWER_SUFFIX
    return settings


def answer_prefix(reasoning: str) -> str:
    """The assistant text the answer is scored after: the reasoning up to its last ``ANSWER:``
    tag (or all of it), then ``"\\nANSWER:"``."""
    tags = list(_ANSWER_TAG.finditer(reasoning))
    kept = reasoning[:tags[-1].start()] if tags else reasoning
    return kept.rstrip() + ANSWER_SUFFIX


class ConstrainedAnswers:
    """The ``constrained`` answer mode (registered under ``framebench.answer_modes``; the
    contract is ``framebench.answering.AnswerMode``)."""

    name, capability = "constrained", "score_answers"
    keeps_probs = reads_reasoning = True
    description = "constrained: the most probable allowed answer (probabilities kept)"

    def key_settings(self, job: Job) -> dict[str, Any]:
        return scoring_settings(job)

    def answer(self, jobs: list[Job], backend: Any, emit: Emit) -> None:
        """The allowed answers scored in calls of the backend's ``call_size`` (default
        ``DEFAULT_CALL_SIZE``), after the reasoning (``job.output``) where the suite asks for one."""
        size = getattr(backend, "call_size", None) or DEFAULT_CALL_SIZE
        for start in range(0, len(jobs), size):
            call = jobs[start:start + size]
            prefixes = [answer_prefix(j.output or "") if reasons_first(j) else "" for j in call]
            probs = backend.answer_probabilities([j.chat for j in call], [choices(j) for j in call],
                                                assistant_prefixes=prefixes if any(prefixes) else None)
            if len(probs) != len(call):
                raise RuntimeError(f"{backend.spec}: returned {len(probs)} answers for {len(call)} prompts")
            emit([(j, Answer(j.output or "", dict(p))) for j, p in zip(call, probs, strict=True)])


CONSTRAINED = ConstrainedAnswers()
