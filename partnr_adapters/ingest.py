"""PARTNR outputs -> framebench records (one row per framed episode).

PARTNR's ``planner_demo`` writes, under ``<paths.results_dir>/<dataset file name>/``:

* ``stats/<episode_id>.json``: ``{"success": true, "stats": "<JSON string>"}`` where the string holds
  ``task_percent_complete``, ``task_state_success``, ``sim_step_count``, ``replanning_count_0``
  (``_1`` for a second agent) and ``runtime``; or ``{"success": false, "info": "<traceback>"}`` when
  the episode crashed.
* ``planner-log/planner-log-episode_<episode_id>_<run>.json``: ``{"task", "steps": [...]}`` with each
  step's ``thought`` and ``high_level_actions`` keyed by agent uid.

Every episode of the framed episode file becomes a row. Crashed episodes, missing stats files and
unreadable stats files are never dropped: they become rows with ``percent_complete=0``,
``success=False``, ``sim_steps=0``, ``replans=0`` and an ``output`` starting with ``[crashed]``,
``[missing stats]`` or ``[unreadable stats]``, and they are listed in ``RUN_DIR/crashes.json``.

PARTNR's files are written by another program that can die mid-write or change shape between
versions: stats files cut short become problem rows (above); everything else that breaks the shapes
above (a planner log's steps, the in-container runner's manifest ``framebench-run.json``, counts beyond
``MAX_COUNT``, a framed episode listed twice) is a user error naming the file, the episode and the field.

The scores are PARTNR's own evaluator's, so they carry its evaluation quirks (``datasets/robotics.md``);
run.json says so (``evaluation: partnr-habitat``) and the report repeats it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench.embodied.evaluation import MODE_HABITAT
from framebench.errors import UserError

STATS_DIR = "stats"
PLANNER_LOG_DIR = "planner-log"
MANIFEST_FILE = "framebench-run.json"  # written by partnr_adapters.in_container next to PARTNR's outputs
CRASH_FILE = "crashes.json"
DEFAULT_CONSTRAINT = "none"
MAX_COUNT = 10**12  # simulator steps or replans beyond this are not a real episode (records hold int64)


@dataclass
class IngestReport:
    rows: int = 0
    finished: int = 0
    problems: list[dict[str, str]] = field(default_factory=list)
    unknown_stats: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{self.rows} episode framings: {self.finished} finished, {len(self.problems)} crashed or missing"]
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

    where = f"{path}: episode {path.stem}"

    if "task_percent_complete" not in stats:
        raise UserError(f"{where}: missing field 'task_percent_complete'")
    for key, value in stats.items():
        if key == "task_state_success" and isinstance(value, bool):
            continue
        if key in ("task_percent_complete", "task_state_success", "runtime"):
            check(value, float, where, key)
        elif key == "sim_step_count" or key.startswith("replanning_count_"):
            check(value, float, where, key)
            if value < 0 or value != int(value) or value > MAX_COUNT:
                raise UserError(f"{where}: field '{key}' must be a whole number from 0 to {MAX_COUNT:.0e}, "
                                f"got {value}")
    pc = stats["task_percent_complete"]
    if not 0.0 <= pc <= 1.0:
        raise UserError(f"{where}: field 'task_percent_complete' must lie in [0, 1], got {pc}")


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


def final_planner_message(log: Path | None, agent: str = "0", episode: str = "") -> str:
    """The last thing agent ``agent``'s planner said: ``Thought: ...`` plus its last action ``Tool[args]``.

    The log is checked whole first (``read_planner_log``): a log of the wrong shape is a user error
    naming the file, the episode and the field, never a silently empty message.
    """
    if log is None:
        return ""
    for step in reversed(read_planner_log(log, episode)):
        thought = (step.get("thought") or {}).get(agent)
        if thought is None:
            continue
        parts = [f"Thought: {thought}"]
        action = (step.get("high_level_actions") or {}).get(agent)
        if action and action[0]:
            parts.append(f"{action[0]}[{action[1] or ''}]")
        return "\n".join(parts)
    return ""


def read_planner_log(log: Path, episode: str = "") -> list[dict[str, Any]]:
    """The steps of a planner log, each checked: ``thought`` an object {agent: text or null},
    ``high_level_actions`` an object {agent: [tool, args] or [tool, args, error]} (tool, args and
    error text or null). A log that is not JSON (PARTNR died writing it) is named too."""
    from framebench.jsonl import loads_strict, read_text_strict

    where = f"{log}: episode {episode}" if episode else str(log)
    data = loads_strict(read_text_strict(log), f"{where}: planner log")
    if not isinstance(data, dict):
        raise UserError(f"{where}: planner log must be an object {{\"task\", \"steps\"}}")
    steps = data.get("steps", [])
    if not isinstance(steps, list):
        raise UserError(f"{where}: field 'steps' must be a list, got {_shown(steps)}")
    for number, step in enumerate(steps):
        if not isinstance(step, dict):
            raise UserError(f"{where}: field 'steps[{number}]' must be an object, got {_shown(step)}")
        _check_by_agent(step.get("thought"), f"{where}: field 'steps[{number}].thought'", _is_text)
        _check_by_agent(step.get("high_level_actions"), f"{where}: field 'steps[{number}].high_level_actions'",
                        _is_action)
    return steps


def _is_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_action(value: Any) -> bool:
    return isinstance(value, list) and len(value) in (2, 3) and all(_is_text(v) for v in value)


def _check_by_agent(value: Any, where: str, ok: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise UserError(f"{where} must be an object keyed by agent uid, got {_shown(value)}")
    for agent, entry in value.items():
        if not ok(entry):
            wanted = "text or null" if ok is _is_text else "[tool, args] or [tool, args, error] (text or null)"
            raise UserError(f"{where[:-1]}.{agent}' must be {wanted}, got {_shown(entry)}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def episode_constraint(episode: dict[str, Any], source: str) -> str:
    from framebench.embodied.suite import CONSTRAINTS

    info = episode.get("info") if isinstance(episode.get("info"), dict) else {}
    constraint = info.get("constraint_type", DEFAULT_CONSTRAINT) or DEFAULT_CONSTRAINT
    if constraint not in CONSTRAINTS:
        raise UserError(
            f"{source}: episode {episode['episode_id']}: field 'info.constraint_type' has unknown value "
            f"{constraint!r} (allowed: none, spatial, temporal, heterogeneous)"
        )
    return constraint


@dataclass
class Ingested:
    """PARTNR's outputs read as a run folder's content (written by ``ingest``, or by the driver
    when the Habitat simulator ran them)."""

    rows: list[dict[str, Any]]
    prompts: list[tuple[str, str]]
    run: Any  # framebench.run_folder.RunJson
    files: dict[str, Any]
    report: IngestReport


def ingest(results_dir: str | Path, episodes: str | Path, out: str | Path, model: str | None = None) -> IngestReport:
    """Write ``out/records.parquet``, ``out/run.json``, ``out/prompts.jsonl`` and ``out/crashes.json``."""
    from framebench.run_folder import write_run

    made = ingested(results_dir, episodes, model)
    write_run(out, made.rows, made.prompts, made.run, made.files)
    return made.report


def ingested(results_dir: str | Path, episodes: str | Path, model: str | None = None,
             run_id: str | None = None, variants: int | None = None) -> Ingested:
    """PARTNR's outputs for the framed file ``episodes`` (its first ``variants`` episode framings;
    None: all) as records, prompts and run.json (``run_id``: the driver's; else the manifest's,
    else one over what the manifest says)."""
    from framebench.embodied.suite import episode_row
    from framebench.files import file_sha256
    from framebench.partnr_adapters.framed_episodes import load_episode_file, parse_framed_id
    from framebench.paths import child_path
    from framebench.run_folder import RunJson, now_iso, run_id_for

    results_dir, episodes = Path(results_dir), Path(episodes)
    data = load_episode_file(episodes)
    output_dir = find_output_dir(results_dir, episodes)
    manifest = _read_manifest(results_dir, output_dir)
    model = model or manifest.get("planner") or "partnr:unknown"
    fingerprint = manifest.get("fingerprint") or model
    dataset_hash = file_sha256(episodes)
    run_id = run_id or manifest.get("run_id") or run_id_for(model, [fingerprint, dataset_hash, manifest.get("decoding") or {}])

    report = IngestReport()
    logs = planner_logs(output_dir / PLANNER_LOG_DIR)
    rows, prompts, known = [], [], set()
    for episode in data["episodes"][:variants]:
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
            output = final_planner_message(logs.get(item_id), episode=item_id)
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

    run = RunJson(
        run_id=run_id, model=model, model_fingerprint=fingerprint, decoding=manifest.get("decoding") or {},
        dataset_hash=dataset_hash, started=manifest.get("started") or now_iso(), producer="habitat",
        simulator="habitat",
        extra={"results_dir": str(output_dir.resolve()), "evaluation": MODE_HABITAT,
               "partnr": manifest.get("partnr") or {},
               "finished_episodes": report.finished, "problem_episodes": len(report.problems)})
    return Ingested(rows, prompts, run, {CRASH_FILE: report.problems}, report)


# the manifest partnr_adapters.in_container writes; every field optional (a hand-made manifest may hold a few)
MANIFEST_FIELDS: dict[str, Any] = {"run_id": str, "planner": str, "fingerprint": str, "decoding": dict,
                                   "started": str, "partnr": dict, "batches": list}


def _read_manifest(results_dir: Path, output_dir: Path) -> dict[str, Any]:
    from framebench.jsonl import loads_strict, read_text_strict
    from framebench.paths import check_safe_name
    from framebench.schema import check

    for folder in (results_dir, output_dir, output_dir.parent):
        path = folder / MANIFEST_FILE
        if path.is_file():
            data = loads_strict(read_text_strict(path), f"{path}: manifest")
            if not isinstance(data, dict):
                raise UserError(f"{path}: the manifest must be an object (partnr_adapters.in_container writes one)")
            for name, spec in MANIFEST_FIELDS.items():
                if data.get(name) is not None:
                    check(data[name], spec, f"{path}: manifest", name)
            for name in ("run_id", "planner"):
                if data.get(name) is not None and not data[name].strip():
                    raise UserError(f"{path}: manifest: field '{name}' is empty")
            if data.get("run_id"):
                check_safe_name(data["run_id"], f"{path}: manifest: field 'run_id'")
            return data
    return {}
