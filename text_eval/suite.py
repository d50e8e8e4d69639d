"""What the text suites share (FramingQA, ``framingqa/suite.py``; OMIT, ``omit/suite.py``): the
fields of their items and the answer-mode cells of their records."""

from __future__ import annotations

from typing import Any

from framebench import records as rec
from framebench.suite import Job

# the fields of a FramingQA or OMIT text item beyond the core ones: ``text`` is the context
# (scenario), ``options`` the MC option texts in A-D order ([] for binary)
TEXT_ITEM_FIELDS: dict[str, type] = {
    "bias": str, "level": str, "form": str, "phrasing": str, "option": str, "distractor": str,
    "slot": str, "gold": str, "text": str, "options": list,
}


def answer_columns(job: Job) -> dict[str, Any]:
    """The records' ``answer_mode`` and ``answer_probs`` cells of a job."""
    return {"answer_mode": job.answer_mode, "answer_probs": rec.encode_answer_probs(job.probs)}


def model_answer(job: Job, parse) -> tuple[str, str]:
    """(answer, parse) of an answered job: its most probable answer where its answer mode keeps
    probabilities, else its output parsed by ``parse``."""
    from framebench.text_eval.constrained import keeps_probs, probs_answer

    return probs_answer(job.probs) if keeps_probs(job) else parse(job.output or "")
