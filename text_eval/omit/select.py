"""Stage 5: the two persona filters and the conflict labels (paper Figure 1, Table 5)."""

from __future__ import annotations

from framebench.text_eval.omit.personas import PERSONAS, conflict_labels, disagreement_strength

UNANIMOUS = "unanimous"
YN_ONLY = "YN-only"
NY_ONLY = "NY-only"
ALL_EXCLUDED = "all-excluded"


def classify(patterns: dict[str, str]) -> tuple[str | None, list[str]]:
    """``(drop_reason or None, conflict labels)`` for one scenario's persona patterns."""
    if set(patterns) != set(PERSONAS):
        raise ValueError(f"persona patterns must cover {list(PERSONAS)}, got {sorted(patterns)}")
    values = set(patterns.values())
    if len(values) == 1:
        return UNANIMOUS, []
    has_yn, has_ny = "YN" in values, "NY" in values
    if has_yn and has_ny:
        return None, conflict_labels(patterns)
    if has_yn:
        return YN_ONLY, []
    if has_ny:
        return NY_ONLY, []
    return ALL_EXCLUDED, []


__all__ = ["classify", "disagreement_strength", "UNANIMOUS", "YN_ONLY", "NY_ONLY", "ALL_EXCLUDED"]
