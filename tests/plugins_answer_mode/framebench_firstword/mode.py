"""``--answer firstword``: the model generates; the answer is the argmax over the job's fixed
answer list of a one-hot on the output's first token (uniform when that token is no allowed
answer, so the list's first answer wins the tie). It keeps its probabilities in the records and is
scored as a model of its own, through the answering contract only (no framebench edit)."""

from __future__ import annotations

import re
from typing import Any

from framebench.answering import Answer, Emit, Job, by_decoding, choices

VERSION = "firstword-v1"


def first_token(text: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9]+)", text)
    return match.group(1) if match else ""


def one_hot(text: str, allowed: tuple[str, ...]) -> dict[str, float]:
    token = first_token(text)
    if token in allowed:
        return {a: float(a == token) for a in allowed}
    return {a: 1.0 / len(allowed) for a in allowed}


class FirstWord:
    name, capability = "firstword", "generate"
    keeps_probs, reads_reasoning = True, False
    description = "first word of the generated text, as a one-hot over the allowed answers"

    def key_settings(self, job: Job) -> dict[str, Any]:
        return {"answer": self.name, "choices": list(choices(job)), "version": VERSION,
                **job.decoding.as_dict()}

    def answer(self, jobs: list[Job], backend: Any, emit: Emit) -> None:
        for call in by_decoding(jobs):
            outputs = backend.generate([j.chat for j in call], call[0].decoding)
            emit([(j, Answer(text, one_hot(text, choices(j)))) for j, text in zip(call, outputs, strict=True)])


FIRST_WORD = FirstWord()
