"""The five-persona philosophical panel and the conflict labels derived from its answers."""

from __future__ import annotations

from itertools import product

from framebench.backends.base import Chat

# Canonical order: conflict labels name the earlier persona first (e.g. utilitarianism-care).
# Descriptions are deliberately symmetric: none mentions doing vs allowing.
PERSONAS: dict[str, str] = {
    "utilitarianism": (
        "You reason as a utilitarian: the right choice is the one whose outcome produces the "
        "greatest overall well-being for everyone affected."
    ),
    "deontology": (
        "You reason as a deontologist: the right choice is the one that honours moral duties, "
        "rights and rules that hold regardless of how the outcomes add up."
    ),
    "virtue": (
        "You reason as a virtue ethicist: the right choice is the one a person of good character "
        "(honest, just, compassionate, courageous and practically wise) would make."
    ),
    "care": (
        "You reason from the ethics of care: the right choice is the one that best attends to the "
        "needs, vulnerability and relationships of the particular people involved."
    ),
    "contractualism": (
        "You reason as a contractualist: the right choice is the one justified by principles that "
        "no one affected could reasonably reject."
    ),
}
PERSONA_INSTRUCTION = (
    "Reason briefly from your framework (at most three sentences). "
    "End with a final line of the form 'ANSWER: yes' or 'ANSWER: no'."
)
PERSONA_MAX_NEW_TOKENS = 200


def persona_chat(persona: str, frame_text: str, question: str) -> Chat:
    return [
        {"role": "system", "content": PERSONAS[persona]},
        {"role": "user", "content": f"{frame_text.strip()}\n\n{question.strip()}\n\n{PERSONA_INSTRUCTION}"},
    ]


def pattern(action: str, omission: str) -> str:
    """``YN`` etc. from the two frame answers (``Yes``/``No``), action frame first."""
    return action[0] + omission[0]


def conflict_labels(patterns: dict[str, str]) -> list[str]:
    """Pairwise labels between the (Y,N) and (N,Y) persona groups, in canonical order.

    (Y,Y) and (N,N) personas do not flip across the inversion and get no label."""
    yn = [p for p in PERSONAS if patterns.get(p) == "YN"]
    ny = [p for p in PERSONAS if patterns.get(p) == "NY"]
    order = list(PERSONAS)
    labels = {"-".join(sorted(pair, key=order.index)) for pair in product(yn, ny)}
    return sorted(labels, key=lambda lab: [order.index(p) for p in lab.split("-")])


def disagreement_strength(patterns: dict[str, str]) -> int:
    """Number of conflicting (Y,N) x (N,Y) persona pairs: 0 (no conflict) to 6 (a 3-2 or 2-3 split)."""
    values = list(patterns.values())
    return values.count("YN") * values.count("NY")
