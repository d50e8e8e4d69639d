"""PARTNR outputs -> framebench records (one row per framed episode variant).

PARTNR's ``planner_demo`` writes, under ``<paths.results_dir>/<dataset file name>/``:

* ``stats/<episode_id>.json``: ``{"success": true, "stats": "<JSON string>"}`` where the string holds
  ``task_percent_complete``, ``task_state_success``, ``sim_step_count``, ``replanning_count_0``
  (``_1`` for a second agent) and ``runtime``; or ``{"success": false, "info": "<traceback>"}`` when
  the episode crashed.
* ``planner-log/planner-log-episode_<episode_id>_<run>.json``: ``{"task", "steps": [...]}`` with each
  step's ``thought`` and ``high_level_actions`` keyed by agent uid.

Every variant of the framed episode file becomes a row. Crashed episodes, missing stats files and
unreadable stats files are never dropped: they become rows with ``percent_complete=0``,
``success=False``, ``sim_steps=0``, ``replans=0`` and an ``output`` starting with ``[crashed]``,
``[missing stats]`` or ``[unreadable stats]``, and they are listed in ``RUN_DIR/crashes.json``.

The scores are PARTNR's own evaluator's, so they carry its evaluation quirks (``datasets/robotics.md``);
run.json says so (``evaluation: partnr-habitat``) and the report repeats it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embodied.evaluation import MODE_HABITAT
from framebench.errors import UserError
from framebench.runs import PROMPTS_FILE  # noqa: F401  (re-exported)

STATS_DIR = "stats"
PLANNER_LOG_DIR = "planner-log"
MANIFEST_FILE = "framebench-run.json"  # written by partnr_adapters.driver next to PARTNR's outputs
CRASH_FILE = "crashes.json"
DEFAULT_CONSTRAINT = "none"


@dataclass
class IngestReport:
    rows: int = 0
    finished: int = 0
    problems: list[dict[str, str]] = field(default_factory=list)
    unknown_stats: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{self.rows} episode variants: {self.finished} finished, {len(self.problems)} crashed or missing"]
        out += [f"  {p['status']}: {p['item_id']}: {p['detail']}" for p in self.problems]
        if self.unknown_stats:
            out.append(f"  ignored {len(self.unknown_stats)} stats file(s) for episodes not in the framed file")
        return out


def find_output_dir(results_dir: Path, episodes_file: Path) -> Path:
    """The folder holding ``stats/``: RESULTS_DIR itself, or RESULTS_DIR/<dataset file name>."""
    if not results_dir.is_dir():
        raise UserError(f"{results_dir}: no such results folder")
    if (results_dir / STATS_DIR).is_dir():
        return results_dir
    named = results_dir / episodes_file.name
    if (named / STATS_DIR).is_dir():
        return named
    candidates = sorted(p for p in results_dir.iterdir() if (p / STATS_DIR).is_dir())
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise UserError(
            f"{results_dir}: several result sets ({', '.join(p.name for p in candidates)}); "
            f"pass the one for {episodes_file.name}"
        )
    # no stats at all: every episode is reported missing (PARTNR may have died before the first)
    return named


def read_stats(path: Path) -> tuple[str, dict[str, Any] | str]:
    """(status, stats dict or problem detail); status is finished, crashed, missing or unreadable.

    A file that is not JSON text (cut short, wrong bytes) is ``unreadable``: PARTNR may die while
    writing it, so it becomes a listed problem row. A JSON file that breaks PARTNR's stats schema is
    a user error (exit 2): it was not written by PARTNR.
    """
    from framebench.jsonl import check_value

    if not path.is_file():
        return "missing", f"no stats file {path.name}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))  # NaN parses here; the schema rejects it
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return "unreadable", f"{path.name}: {str(exc)[:120] or type(exc).__name__}"
    check_value(data, str(path))
    if not isinstance(data, dict) or not isinstance(data.get("success"), bool):
        raise UserError(f"{path}: expected an object with 'success': true|false (PARTNR's stats file)")
    if not data["success"]:
        info = data.get("info", "")
        if not isinstance(info, str):
            raise UserError(f"{path}: field 'info' must be a string (the traceback)")
        lines = info.strip().splitlines()
        return "crashed", lines[-1] if lines else "no traceback recorded"
    stats = data.get("stats")
    if isinstance(stats, str):
        from framebench.jsonl import loads_strict

        stats = loads_strict(stats, f"{path}: field 'stats'")
    if not isinstance(stats, dict):
        raise UserError(f"{path}: field 'stats' must be an object (or a JSON string holding one)")
    _check_stats(stats, path)
    return "finished", stats


def _check_stats(stats: dict[str, Any], path: Path) -> None:
    from framebench.schema import check

    if "task_percent_complete" not in stats:
        raise UserError(f"{path}: missing field 'task_percent_complete'")
    for key, value in stats.items():
        if key == "task_state_success" and isinstance(value, bool):
            continue
        if key in ("task_percent_complete", "task_state_success", "runtime"):
            check(value, float, str(path), key)
        elif key == "sim_step_count" or key.startswith("replanning_count_"):
            check(value, float, str(path), key)
            if value < 0 or value != int(value):
                raise UserError(f"{path}: field '{key}' must be a whole number >= 0, got {value}")
    pc = stats["task_percent_complete"]
    if not 0.0 <= pc <= 1.0:
        raise UserError(f"{path}: field 'task_percent_complete' must lie in [0, 1], got {pc}")


def planner_logs(log_dir: Path) -> dict[str, Path]:
    """episode id -> its planner log (``planner-log-episode_<id>_<run>.json``; the first run's)."""
    logs: dict[str, Path] = {}
    if log_dir.is_dir():
        for path in sorted(log_dir.glob("planner-log-episode_*.json")):
            stem = path.name[len("planner-log-episode_"):-len(".json")]
            episode_id, _, run = stem.rpartition("_")
            if episode_id and run.isdigit():
                logs.setdefault(episode_id, path)
    return logs


def final_planner_message(log: Path | None, agent: str = "0") -> str:
    """The last thing agent ``agent``'s planner said: ``Thought: ...`` plus its last action ``Tool[args]``."""
    if log is None:
        return ""
    try:
        data = json.loads(log.read_text(encoding="utf-8"))
        steps = data.get("steps", []) if isinstance(data, dict) else []
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    for step in reversed(steps):
        if not isinstance(step, dict):
            continue
        thought = (step.get("thought") or {}).get(agent)
        if thought is None:
            continue
        parts = [f"Thought: {thought}"]
        action = (step.get("high_level_actions") or {}).get(agent)
        if isinstance(action, list) and action and action[0]:
            parts.append(f"{action[0]}[{action[1] or ''}]")
        return "\n".join(parts)
    return ""


def episode_constraint(episode: dict[str, Any], source: str) -> str:
    from framebench.records import CONSTRAINTS

    info = episode.get("info") if isinstance(episode.get("info"), dict) else {}
    constraint = info.get("constraint_type", DEFAULT_CONSTRAINT) or DEFAULT_CONSTRAINT
    if constraint not in CONSTRAINTS:
        raise UserError(
            f"{source}: episode {episode['episode_id']}: field 'info.constraint_type' has unknown value "
            f"{constraint!r} (allowed: none, spatial, temporal, heterogeneous)"
        )
    return constraint


def ingest(results_dir: str | Path, episodes: str | Path, out: str | Path, model: str | None = None) -> IngestReport:
    """Write ``out/records.parquet``, ``out/run.json``, ``out/prompts.jsonl`` and ``out/crashes.json``."""
    from embodied.suite import episode_row
    from framebench.paths import child_path
    from framebench.runinfo import file_sha256, now_iso, write_json_atomic
    from framebench.runs import RunInfo, run_id_for, write_run
    from partnr_adapters.frame import load_episode_file, parse_framed_id

    results_dir, episodes, out = Path(results_dir), Path(episodes), Path(out)
    data = load_episode_file(episodes)
    output_dir = find_output_dir(results_dir, episodes)
    manifest = _read_manifest(results_dir, output_dir)
    model = model or manifest.get("planner") or "partnr:unknown"
    fingerprint = manifest.get("fingerprint") or model
    dataset_hash = file_sha256(episodes)
    run_id = manifest.get("run_id") or run_id_for(model, [fingerprint, dataset_hash, manifest.get("decoding") or {}])

    report = IngestReport()
    logs = planner_logs(output_dir / PLANNER_LOG_DIR)
    rows, prompts, known = [], [], set()
    for episode in data["episodes"]:
        item_id = str(episode["episode_id"])
        try:
            base_id, bias, level = parse_framed_id(item_id)
        except UserError as exc:
            raise UserError(f"{episodes}: {exc}; pass the framed file that was run") from None
        known.add(item_id)
        stats_path = child_path(output_dir / STATS_DIR, item_id, ".json")
        status, stats = read_stats(stats_path)
        pc, steps, replans, output = 0.0, 0, 0, ""
        if status == "finished":
            assert isinstance(stats, dict)
            pc = float(stats["task_percent_complete"])  # checked by read_stats
            steps = int(stats.get("sim_step_count", 0))
            replans = int(stats.get("replanning_count_0", 0))
            output = final_planner_message(logs.get(item_id))
            report.finished += 1
        else:
            report.problems.append({"item_id": item_id, "status": status, "detail": str(stats)})
            output = f"[{status if status != 'missing' else 'missing stats'}] {stats}"
        # PARTNR: task_state_success = 1.0 iff task_percent_complete == 1.0
        success = status == "finished" and pc == 1.0
        rows.append(episode_row(
            run_id=run_id, model=model, episode_id=base_id, item_id=item_id, bias=bias, level=level,
            constraint=episode_constraint(episode, str(episodes)), percent_complete=pc,
            success=success, sim_steps=steps, replans=replans, output=output,
        ))
        prompts.append((item_id, episode["instruction"]))
    stats_dir = output_dir / STATS_DIR
    if stats_dir.is_dir():
        report.unknown_stats = sorted(p.stem for p in stats_dir.glob("*.json") if p.stem not in known)
    report.rows = len(rows)

    write_run(out, rows, prompts, RunInfo(
        run_id=run_id, model=model, fingerprint=fingerprint, decoding=manifest.get("decoding") or {},
        dataset_hash=dataset_hash, started=manifest.get("started") or now_iso(), producer="habitat",
        simulator="habitat",
        extra={"results_dir": str(output_dir.resolve()), "evaluation": MODE_HABITAT,
               "partnr": manifest.get("partnr") or {},
               "finished_episodes": report.finished, "problem_episodes": len(report.problems)}))
    write_json_atomic(report.problems, out / CRASH_FILE)
    return report


def _read_manifest(results_dir: Path, output_dir: Path) -> dict[str, Any]:
    for folder in (results_dir, output_dir, output_dir.parent):
        path = folder / MANIFEST_FILE
        if path.is_file():
            from framebench.jsonl import loads_strict, read_text_strict

            data = loads_strict(read_text_strict(path), f"{path}: manifest")
            return data if isinstance(data, dict) else {}
    return {}
