"""framebench's public Python API: what the CLI, ``framebench demo`` and ``bench/`` call.

    from framebench import api

    api.run_text("baseline:always-yes", "demo:framingqa", "runs/yes")
    api.run_text("hf:/models/llama", "items/", "runs/llama", model_args={"batch_size": 32})
    api.run_embodied("oracle", "demo:robotics/episodes.json.gz", "runs/oracle")
    scored = api.score(["runs/yes", "runs/oracle"])
    api.write_report(scored, "report/")        # report.json, report.md, report.html

Models, planners and simulators are named by engine specs (``framebench.registry``); suites come
from the ``framebench.suites`` entry points, text runs go through the core pipeline
(``framebench.pipeline``), so this module, like the rest of framebench, imports no suite package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench.registry import DEFAULT_ANSWER_MODE
from framebench.simulation import DEFAULT_SIMULATOR  # the CLI's default too

if TYPE_CHECKING:
    import pandas as pd

    from framebench.pipeline.text import RunSummary, TextRequest
    from framebench.run_folder import Runs
    from framebench.simulation import DryRun

__all__ = ["Scored", "compare", "embodied_dry_run", "power_plan", "run", "run_embodied", "run_text", "score", "text_request",
           "write_report"]


def text_request(model: str | None, data: str | Path, out: str | Path, *, progress: bool = False,
                 force: bool = False, executor: str = "local", ray_address: str | None = None,
                 ray_workers: int | None = None, **fields: Any) -> TextRequest:
    """A text run as a :class:`TextRequest`: a model (engine spec; None = the embedded default)
    over ``data/items.jsonl`` (``data``: a folder, or ``demo:NAME`` for a demo dataset installed
    with framebench) into the run folder ``out``. ``fields``: the request's other fields
    (``tasks``, ``formats`` and ``conditions`` also as "a,b" strings). ``force``: replace a
    different run already in ``out`` (else that is a user error); ``executor="ray"`` spreads the
    jobs over a Ray cluster (``ray_address``, ``ray_workers``)."""
    from dataclasses import fields as fields_of

    from framebench.executors import check_executor
    from framebench.paths import data_path
    from framebench.pipeline.driver import Execution
    from framebench.pipeline.text import TextRequest, split_list

    known = {f.name for f in fields_of(TextRequest)} - {"model", "data", "out", "execution"}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise TypeError(f"text_request: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    for name in ("tasks", "formats", "conditions"):
        if name in fields:
            fields[name] = tuple(split_list(fields[name]))
    if "reasoning_from" in fields:
        fields["reasoning_from"] = tuple(Path(p) for p in fields["reasoning_from"])
    fields["model_args"] = dict(fields.get("model_args") or {})
    fields.setdefault("answer", DEFAULT_ANSWER_MODE)
    execution = Execution(check_executor(executor), ray_address, ray_workers, progress, force)
    return TextRequest(model, data_path(data), Path(out), execution=execution, **fields)


def run(request: TextRequest) -> RunSummary:
    """Run a text request (:func:`text_request`); resumes from its run folder's result store."""
    from framebench.pipeline.text import run_text as run_request

    return run_request(request)


def run_text(model: str | None, data: str | Path, out: str | Path, **options: Any) -> RunSummary:
    """``run(text_request(model, data, out, **options))``, e.g. ``model_args={"batch_size": 32}``
    (the engine's declared options, ``--model-arg``), ``answer="constrained"`` (score the allowed
    answers instead of generating text), ``reasoning_from=[run folders]`` (whose stores already
    hold the reasoning of OMIT M1/M4 jobs), ``backend=`` an already built backend."""
    return run(text_request(model, data, out, **options))


def run_embodied(planner: str, episodes: str | Path, out: str | Path, *,
                 simulator: str = DEFAULT_SIMULATOR, replan_cap: int = 25, max_new_tokens: int = 64,
                 simulator_options: Mapping[str, Any] | None = None, limit: int | None = None,
                 model_args: Mapping[str, Any] | None = None, progress: bool = False,
                 force: bool = False, executor: str = "local", ray_address: str | None = None,
                 ray_workers: int | None = None) -> Path:
    """Run a planner (``oracle``, ``script:FILE`` or any model spec) on every episode in its
    neutral and six framed variants in a simulator engine (``symbolic`` or ``habitat``);
    ``simulator_options``: that simulator's own options (``SimulationSettings.options``).
    ``executor="ray"`` runs the episodes on a Ray cluster (``ray_address``, ``ray_workers``)."""
    from framebench.executors import check_executor
    from framebench.paths import data_path
    from framebench.pipeline.driver import Execution
    from framebench.registry import build_engine
    from framebench.simulation import SimulationSettings

    sim = build_engine(simulator, "simulator")
    settings = SimulationSettings(replan_cap=replan_cap, max_new_tokens=max_new_tokens,
                                  limit=limit, model_args=dict(model_args or {}),
                                  options=dict(simulator_options or {}))
    execution = Execution(check_executor(executor), ray_address, ray_workers, progress, force)
    return sim.run(planner, data_path(episodes), Path(out), settings, execution)


def embodied_dry_run(planner: str, episodes: str | Path, *, simulator: str = DEFAULT_SIMULATOR,
                     replan_cap: int = 25, max_new_tokens: int = 64,
                     simulator_options: Mapping[str, Any] | None = None, limit: int | None = None) -> DryRun:
    """What ``run_embodied`` with these arguments would run (episodes, episode framings, the
    bound on planner calls), checked as it checks them; nothing is run or written."""
    from framebench.paths import data_path
    from framebench.registry import build_engine
    from framebench.simulation import SimulationSettings

    settings = SimulationSettings(replan_cap=replan_cap, max_new_tokens=max_new_tokens, limit=limit,
                                  options=dict(simulator_options or {}))
    return build_engine(simulator, "simulator").dry_run(planner, data_path(episodes), settings)


@dataclass
class Scored:
    """A computed report with the runs it came from (records and prompts for the drill-down)."""

    report: dict[str, Any]
    runs: Runs

    @property
    def records(self) -> pd.DataFrame:
        return self.runs.records

    @property
    def prompts(self) -> Mapping[str, str]:
        return self.runs.prompts


def score(run_dirs: Iterable[str | Path], *, force: bool = False,
          allow_mixed: bool = False) -> Scored:
    """Read and validate the runs and compute every registered report part's entry (each suite's
    metrics, provenance, headline, ...); ``force``: score folders whose files do not match their
    run.json hashes too (``Scored.runs.warnings``); ``allow_mixed``: pool one model's runs over
    different datasets (refused otherwise; the report's cautions list them)."""
    from framebench.run_folder import load_runs
    from framebench.scoring.report import compute_report

    runs = load_runs([Path(d) for d in run_dirs], force=force, allow_mixed=allow_mixed)
    return Scored(compute_report(runs), runs)


def _records(run_dirs: Iterable[str | Path], allow_mixed: bool = False) -> pd.DataFrame:
    from framebench.errors import UserError
    from framebench.run_folder import load_runs

    dirs = [Path(d) for d in run_dirs]
    if not dirs:
        raise UserError("no run folders given")
    return load_runs(dirs, allow_mixed=allow_mixed).records


def compare(run_dirs: Iterable[str | Path], *, allow_mixed: bool = False) -> dict[str, Any]:
    """``report["comparisons"]`` for the models of the given runs: every pair of models on the
    items both answered (docs/statistics.md). No two models sharing an item is a user error."""
    from framebench.errors import UserError
    from framebench.scoring.comparisons import compare_models, registered_comparisons
    from framebench.scoring.report import jsonable

    dirs = [Path(d) for d in run_dirs]
    records = _records(dirs, allow_mixed)
    out = compare_models(records, registered_comparisons())
    if not out:
        models = sorted(records["model"].unique())
        raise UserError(f"{', '.join(map(str, dirs))}: no two models share an item "
                        f"(models: {', '.join(models)}); compare runs over the same items")
    return jsonable(out)


def power_plan(run_dirs: Iterable[str | Path], contexts: int, *, allow_mixed: bool = False) -> list[dict[str, Any]]:
    """From pilot runs: the framing effect and between-model differences detectable at 80 %
    power, alpha 0.05, with ``contexts`` contexts per task (docs/statistics.md "Power")."""
    from framebench.bounds import CONTEXTS
    from framebench.errors import UserError
    from framebench.scoring.comparisons import registered_comparisons
    from framebench.scoring.power import plan as plan_rows
    from framebench.scoring.report import jsonable

    CONTEXTS.check(contexts, "--contexts")
    dirs = [Path(d) for d in run_dirs]
    rows = plan_rows(_records(dirs, allow_mixed), registered_comparisons(), contexts)
    if not rows:
        raise UserError(f"{', '.join(map(str, dirs))}: no records of a suite that plans power")
    return jsonable(rows)


def write_report(scored: Scored, out: str | Path, *, viewer_url: str | None = None) -> list[Path]:
    """Write report.json, report.md and report.html into ``out``, each atomically; with a
    ``viewer_url`` (where ``framebench view`` serves the records) report.html links to it."""
    from framebench.errors import UserError
    from framebench.files import write_json_atomic, write_text_atomic
    from framebench.scoring.figure_work import start_figures
    from framebench.scoring.html import render_html
    from framebench.scoring.markdown import render_markdown

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a folder")
    figures = start_figures(scored.report)  # drawn by a second process while the rest is written
    try:
        return [write_json_atomic(scored.report, out / "report.json"),
                write_text_atomic(render_markdown(scored.report), out / "report.md"),
                write_text_atomic(render_html(scored.report, scored.records, scored.prompts,
                                              viewer_url=viewer_url, figures=figures), out / "report.html")]
    finally:
        figures.cancel()  # nothing left to stop unless writing failed
