"""Draft the purposes file (``{episode_id: purposes}``) with any model backend, for a person to review.

``draft_purposes`` asks the model, per episode, for the framing text of FramingQA Appendix D.4 (the
action as a gerund phrase, a fitting purpose/goal and a conflicting one) and writes a *review file*:

    {"episodes": {"<episode_id>": {"instruction": "...", "purposes": {...} | null,
                                   "status": "drafted" | "unparsed", "raw": "<model text>",
                                   "accepted": false}}}

A person edits ``purposes`` where needed and sets ``accepted: true``; ``accept_purposes`` then writes
the purposes file from accepted entries only (each validated). Drafting is resumable: entries already
drafted or accepted are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from framebench.errors import UserError

SYSTEM = (
    "You write framing text for a household-robot benchmark. Answer with one JSON object and nothing else."
)
PROMPT = """Instruction given to a household robot:
"{instruction}"

Write a JSON object with these fields:
- "action": the instruction's task as a gerund phrase (e.g. "putting the candle and the plant on the table").
- "correct": {{"purpose": a short noun phrase naming a purpose this task plausibly serves,
               "goal": a verb phrase for that goal (e.g. "decorate the living room"),
               "stance": "appropriate"}}
- "incorrect": {{"purpose": a short noun phrase naming a purpose the task does NOT serve or works against,
                 "goal": a verb phrase for that goal, "stance": "inappropriate"}}
JSON:"""
DEFAULT_STANCES = {"correct": "appropriate", "incorrect": "inappropriate"}


def parse_purposes(text: str) -> dict[str, Any] | None:
    """The purposes object in a model reply, or None; the text is untrusted (JSON only, validated)."""
    from framebench.embodied.framing import validate_purposes

    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start:end + 1])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for bias, stance in DEFAULT_STANCES.items():
        if isinstance(data.get(bias), dict):
            data[bias].setdefault("stance", stance)
    try:
        validate_purposes(data)
    except UserError:
        return None
    keep = ("purpose", "goal", "stance")
    return {"action": data["action"].strip(),
            **{b: {k: str(data[b][k]).strip() for k in keep} for b in DEFAULT_STANCES}}


def read_review(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"episodes": {}}
    from framebench.jsonl import loads_strict, read_text_strict

    data = loads_strict(read_text_strict(path), f"{path}: review file")
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), dict):
        raise UserError(f'{path}: expected an object {{"episodes": {{episode_id: entry}}}}')
    return data


def draft_purposes(episodes: str | Path, model: str, review: str | Path, batch_size: int = 8,
                   max_new_tokens: int = 300) -> dict[str, int]:
    """Draft purposes for every episode not yet drafted; returns counts by status."""
    from rich.progress import Progress

    from framebench.backends import Decoding, load_backend
    from framebench.files import write_json_atomic
    from framebench.partnr_adapters.framed_episodes import SUFFIX_SEP, load_episode_file
    review = Path(review)
    data = load_episode_file(episodes)
    state = read_review(review)
    entries: dict[str, Any] = state["episodes"]
    todo = []
    for ep in data["episodes"]:
        episode_id = str(ep["episode_id"])
        if SUFFIX_SEP in episode_id:
            raise UserError(f"{episodes}: episode {episode_id}: already framed; draft from the original episode file")
        if entries.get(episode_id, {}).get("status") != "drafted" and not entries.get(episode_id, {}).get("accepted"):
            todo.append((episode_id, ep["instruction"]))
    if todo:
        backend = load_backend(model)
        decoding = Decoding(max_new_tokens=max_new_tokens, temperature=0.0)
        with Progress() as progress:
            task = progress.add_task("drafting purposes", total=len(todo))
            for start in range(0, len(todo), batch_size):
                chunk = todo[start:start + batch_size]
                chats = [[{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": PROMPT.format(instruction=instruction)}]
                         for _, instruction in chunk]
                for (episode_id, instruction), text in zip(chunk, backend.generate(chats, decoding), strict=True):
                    purposes = parse_purposes(text)
                    entries[episode_id] = {"instruction": instruction, "purposes": purposes,
                                           "status": "drafted" if purposes else "unparsed",
                                           "raw": text, "accepted": False}
                state["model"] = model
                write_json_atomic(state, review)  # after every batch: resumable
                progress.advance(task, len(chunk))
    write_json_atomic(state, review)
    counts = {"drafted": 0, "unparsed": 0, "accepted": 0}
    for entry in entries.values():
        counts["accepted" if entry.get("accepted") else entry.get("status", "unparsed")] += 1
    return counts


def accept_purposes(review: str | Path, out: str | Path) -> int:
    """Write the purposes file from the accepted entries of a review file; returns their number."""
    from framebench.embodied.framing import validate_purposes
    from framebench.files import write_json_atomic
    review = Path(review)
    if not review.is_file():
        raise UserError(f"{review}: no such review file")
    entries = read_review(review)["episodes"]
    accepted = {}
    for episode_id, entry in entries.items():
        if isinstance(entry, dict) and entry.get("accepted") is True:
            accepted[episode_id] = validate_purposes(entry.get("purposes"), where=f"{review}: episode {episode_id}: purposes")
    if not accepted:
        raise UserError(f"{review}: no entry has \"accepted\": true; review the drafts first")
    write_json_atomic(accepted, out)
    return len(accepted)
