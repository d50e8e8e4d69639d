"""``--answer firstword``: the model generates; the answer is the argmax over the job's fixed
answer list of a one-hot on the output's first token (uniform when that token is no allowed
answer, so the list's first answer wins the tie). It keeps its probabilities in the records and is
scored as a model of its own, through the answer-mode interface only (no framebench edit)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from framebench.pipeline.text import generation_calls
from framebench.registry import suite

VERSION = "firstword-v1"


def choices(job: Any) -> tuple[str, ...]:
    return tuple(suite(job.item["suite"]).items.answer_choices(job))


def first_token(text: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9]+)", text)
    return match.group(1) if match else ""


def one_hot(text: str, allowed: tuple[str, ...]) -> dict[str, float]:
    token = first_token(text)
    if token in allowed:
        return {a: float(a == token) for a in allowed}
    return {a: 1.0 / len(allowed) for a in allowed}


class FirstWord:
    name, order, capability = "firstword", 50, "generate"
    in_identity = keeps_probs = labelled = True
    reads_reasoning = False
    description = "first word of the generated text, as a one-hot over the allowed answers"

    def check(self, backend: Any) -> None:
        """Every backend generates."""

    def key_settings(self, job: Any) -> dict[str, Any]:
        return {"answer": self.name, "choices": list(choices(job)), "version": VERSION,
                **job.decoding.as_dict()}

    def restore(self, job: Any, stored: Mapping[str, Any]) -> None:
        job.output = stored["output"]
        job.probs = {a: stored["probs"][a] for a in choices(job)}

    def apply(self, job: Any, value: Mapping[str, Any]) -> None:
        job.output, job.probs = value["output"], dict(value["probs"])

    def has_result(self, job: Any) -> bool:
        return job.probs is not None

    def calls(self, jobs: list[Any], size: int) -> list[list[Any]]:
        return generation_calls(jobs, size)

    def known_keys(self, fingerprint: str, jobs: list[Any]) -> list[str]:
        return []

    def work(self, worker: Any, payload: Any, emit: Callable[[Any], None]) -> None:
        for call in generation_calls(payload.jobs, len(payload.jobs)):
            outputs = worker.backend.generate([j.chat for j in call], call[0].decoding)
            emit(([(j.key, j.record_id, {"output": text, "probs": one_hot(text, choices(j))})
                   for j, text in zip(call, outputs, strict=True)], len(call)))


FIRST_WORD = FirstWord()
