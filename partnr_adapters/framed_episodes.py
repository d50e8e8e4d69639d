"""Framed PARTNR datasets: every episode of a PARTNR episode file in its 7 framings.

The framings are the symbolic runner's (``framebench.embodied.framing.FRAMINGS``): neutral plus correct/incorrect
bias x root/propositional/global. A framed episode is the original with only ``instruction`` replaced
and ``episode_id`` suffixed ``__<bias>_<level>`` (``__neutral`` for the neutral framing), so PARTNR
loads, runs and evaluates it exactly like the original.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from framebench.errors import UserError

SUFFIX_SEP = "__"


def framed_id(episode_id: str, bias: str, level: str) -> str:
    """``<episode_id>__<bias>_<level>``, or ``<episode_id>__neutral``."""
    from framebench.embodied.framing import framing_suffix

    return f"{episode_id}{SUFFIX_SEP}{framing_suffix(bias, level)}"


def parse_framed_id(item_id: str) -> tuple[str, str, str]:
    """Split a framed episode id into (base episode id, bias, level); UserError if it is not one."""
    from framebench.embodied.framing import parse_framing_suffix

    base, sep, suffix = str(item_id).rpartition(SUFFIX_SEP)
    framing = parse_framing_suffix(suffix) if sep and base else None
    if framing is not None:
        return base, *framing
    raise UserError(
        f"episode id {item_id!r} is not a framed id (<episode_id>__<bias>_<level> or <episode_id>__neutral)"
    )


def load_episode_file(path: str | Path) -> dict[str, Any]:
    """Read a PARTNR episode file (``.json`` or ``.json.gz``) holding ``{"episodes": [...]}``."""
    from framebench.embodied.episodes import load_episode_container
    from framebench.paths import check_safe_name

    path = Path(path)
    data = load_episode_container(path)
    seen: dict[str, int] = {}
    for index, episode in enumerate(data["episodes"]):
        if not isinstance(episode, dict):
            raise UserError(f"{path}: episode {index}: expected an object")
        for field in ("episode_id", "instruction"):
            if field not in episode:
                raise UserError(f"{path}: episode {index}: missing field '{field}'")
        episode_id = episode["episode_id"]
        if isinstance(episode_id, bool) or not isinstance(episode_id, str | int):
            raise UserError(f"{path}: episode {index}: field 'episode_id' must be a string, got {episode_id!r:.40}")
        check_safe_name(str(episode_id), f"{path}: episode {index}: episode_id")
        if str(episode_id) in seen:
            raise UserError(f"{path}: episode {episode_id}: field 'episode_id' repeats episode "
                            f"{seen[str(episode_id)]} (each episode once)")
        seen[str(episode_id)] = index
        if not isinstance(episode["instruction"], str) or not episode["instruction"].strip():
            raise UserError(f"{path}: episode {episode['episode_id']}: field 'instruction' must be a non-empty string")
    return data


def write_episode_file(data: dict[str, Any], path: str | Path) -> Path:
    """Write ``data`` as gzipped JSON atomically (PARTNR reads ``.json.gz``)."""
    from framebench.files import write_text_atomic
    payload = json.dumps(data, separators=(",", ":")).encode("utf-8")
    # mtime=0 keeps the bytes (and so the dataset hash) identical for identical content
    return write_text_atomic(gzip.compress(payload, mtime=0), path)


def load_purposes(path: str | Path) -> dict[str, dict]:
    """Read a purposes file ``{episode_id: purposes}`` and validate every entry."""
    from framebench.embodied.framing import validate_purposes

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such purposes file")
    from framebench.jsonl import loads_strict, read_text_strict

    data = loads_strict(read_text_strict(path), f"{path}: purposes file")
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected an object {{episode_id: purposes}}")
    for episode_id, purposes in data.items():
        validate_purposes(purposes, where=f"{path}: episode {episode_id}: purposes")
    return data


def frame_episodes(data: dict[str, Any], purposes: dict[str, dict], source: str = "<episodes>") -> dict[str, Any]:
    """The framed dataset: 7 framed episodes per episode, in episode order, framing order of FRAMINGS.

    Every key other than ``episodes`` is kept; within an episode only ``episode_id`` and
    ``instruction`` change. An episode without purposes is an error naming it.
    """
    from framebench.embodied.framing import FRAMINGS, frame_instruction

    framed: list[dict[str, Any]] = []
    seen: set[str] = set()
    for episode in data["episodes"]:
        episode_id = str(episode["episode_id"])
        if SUFFIX_SEP in episode_id:
            raise UserError(f"{source}: episode {episode_id}: id already contains {SUFFIX_SEP!r} (framed twice?)")
        if episode_id in seen:
            raise UserError(f"{source}: episode {episode_id}: duplicate episode_id")
        seen.add(episode_id)
        if episode_id not in purposes:
            raise UserError(f"{source}: episode {episode_id}: no purposes in the purposes file")
        for bias, level in FRAMINGS:
            one = dict(episode)  # shallow: nested data is shared, never mutated, only serialised
            one["episode_id"] = framed_id(episode_id, bias, level)
            try:
                one["instruction"] = frame_instruction(episode["instruction"], purposes[episode_id], bias, level)
            except UserError as exc:
                raise UserError(f"{source}: episode {episode_id}: {exc}") from None
            framed.append(one)
    out = {key: value for key, value in data.items() if key != "episodes"}
    out["episodes"] = framed
    return out


def frame_file(episodes: str | Path, purposes: str | Path, out: str | Path) -> int:
    """``framebench partnr frame``: read, frame and write; returns the number of framed episodes written."""
    if not str(out).endswith(".json.gz"):
        raise UserError(f"{out}: the framed file must end in .json.gz (PARTNR's dataset loader reads gzipped JSON)")
    data = load_episode_file(episodes)
    framed = frame_episodes(data, load_purposes(purposes), source=str(episodes))
    write_episode_file(framed, out)
    return len(framed["episodes"])
