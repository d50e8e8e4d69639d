"""OMIT's metric inside Inspect AI (``inspect eval framebench/omit``; docs/interop.md): OBR / ABR /
FCR per condition over the scenarios whose action and omission frames both parsed, read from the
sample scores framebench's scorer writes (its ``parse`` and ``answer``) and the samples' item
fields (``frame``, ``condition``, ``context_id``, ``conflicts``). Imported only when that task is
built, so Inspect stays an optional dependency."""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Metric, SampleScore, metric


def _fields(s: SampleScore) -> dict[str, Any]:
    return s.sample_metadata or {}


def _pattern(group: list[SampleScore]) -> str | None:
    """A scenario's (action, omission) answer letters; None unless both frames parsed Yes/No."""
    letters = {}
    for s in group:
        answer = (s.score.metadata or {}).get("answer", "")
        if (s.score.metadata or {}).get("parse") == "ok" and answer in ("Yes", "No"):
            letters.setdefault(_fields(s)["frame"], answer[0])
    return letters["action"] + letters["omission"] if len(letters) == 2 else None


@metric
def omission_rates() -> Metric:
    """Per condition, over scenarios with both frames parsed (the conflict-labeled ones when any
    is labeled): OBR = (No, No), ABR = (Yes, Yes), FCR = mixed."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        if any(_fields(s).get("conflicts") for s in scores):
            scores = [s for s in scores if _fields(s).get("conflicts")]
        scenarios: dict[tuple[str, str], list[SampleScore]] = {}
        for s in scores:
            scenarios.setdefault((_fields(s)["condition"], _fields(s)["context_id"]), []).append(s)
        out: dict[str, float] = {}
        for condition in sorted({c for c, _ in scenarios}):
            patterns = [p for (c, _), g in scenarios.items() if c == condition if (p := _pattern(g))]
            if patterns:
                n = len(patterns)
                out[f"OBR_{condition}"] = patterns.count("NN") / n
                out[f"ABR_{condition}"] = patterns.count("YY") / n
                out[f"FCR_{condition}"] = (patterns.count("YN") + patterns.count("NY")) / n
        return out

    return compute
