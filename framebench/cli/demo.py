"""``framebench demo``: the embedded default end to end, offline on a CPU (``framebench.api``).

Runs the packaged SmolLM2 on the demo FramingQA items (binary + MC, four tasks) and on the OMIT
demo scenarios (M0, M1), each twice: free generation with strict parsing (the papers' protocol) and
constrained answers (the probability of each allowed answer, which the report turns into
framing-susceptibility shifts with intervals). Three MC questions per context (neutral, one
correct-bias, one incorrect-bias) are also asked in their three other cyclic option orders
(``datasets/demo/framingqa-rotated``, constrained answers only) for the report's option-position
table (letter prior, position-balanced framing effect). On the demo robotics episodes (7
framings each) it runs SmolLM2 as a generating planner (first episode) and as the choice-scoring planner
(``choice:smollm2``, every episode), with the oracle planner as a reference row. It adds the ``baseline:always-yes`` reference and writes the
unified report. Every step goes through the public Python API and the runs' result stores, so a
second run resumes and finishes in seconds.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path

import typer

from framebench.bounds import LIMIT, REPLAN_CAP, option


def demo_steps(out: Path, model: str, planner_replans: int, choice_replans: int = 12,
               planner_episodes: int = 1, choice_episodes: int | None = None) -> list[tuple[str, Path, Callable[[Path], object]]]:
    """(title, run folder, how to run it) for each run of the demo, in order. The text runs share
    one loaded model: the constrained FramingQA run then reads most answer probabilities from the
    generation run's first decoding step instead of running the prompts again."""
    from framebench import api
    from framebench.backends import load_backend

    shared = functools.cache(lambda: load_backend(model))

    from framebench.paths import demo_root

    runs = out / "runs"
    demo = demo_root()
    fqa, omit, robotics = demo / "framingqa", demo / "omit", demo / "robotics"
    episodes = robotics / "episodes.json.gz"
    return [
        ("FramingQA text, " + model, runs / "framingqa-model",
         lambda run: api.run_text(model, fqa, run, backend=shared(), progress=True)),
        ("FramingQA text, " + model + ", constrained answers", runs / "framingqa-model-constrained",
         lambda run: api.run_text(model, fqa, run, answer="constrained", backend=shared(), progress=True)),
        ("FramingQA multiple choice in rotated option orders, " + model + ", constrained answers",
         runs / "framingqa-rotated-constrained",
         lambda run: api.run_text(model, demo / "framingqa-rotated", run, answer="constrained",
                                  backend=shared(), progress=True)),
        ("FramingQA text, baseline:always-yes", runs / "framingqa-always-yes",
         lambda run: api.run_text("baseline:always-yes", fqa, run, progress=True)),
        ("OMIT M0 + M1, " + model, runs / "omit-model",
         lambda run: api.run_text(model, omit, run, conditions="M0,M1", backend=shared(), progress=True)),
        ("OMIT M0 + M1, " + model + ", constrained answers", runs / "omit-model-constrained",
         lambda run: api.run_text(model, omit, run, conditions="M0,M1", answer="constrained",
                                  reasoning_from=[runs / "omit-model"], backend=shared(), progress=True)),
        ("Robotics, oracle planner", runs / "embodied-oracle",
         lambda run: api.run_embodied("oracle", episodes, run, progress=True)),
        ("Robotics, " + model + " planner", runs / "embodied-model",
         lambda run: api.run_embodied(model, episodes, run, replan_cap=planner_replans,
                                      limit=planner_episodes, progress=True)),
        (f"Robotics, choice:{model} planner (scores the valid actions)", runs / "embodied-choice",
         lambda run: api.run_embodied(f"choice:{model}", episodes, run, replan_cap=choice_replans,
                                      limit=choice_episodes, progress=True)),
    ]


def demo(
    out: Path = typer.Option(Path("framebench-demo"), "--out", help="Output folder (runs/ and report/)."),
    model: str = typer.Option("smollm2", "--model", help="Model spec for every step (default: the packaged SmolLM2)."),
    planner_replans: int = option(REPLAN_CAP, 2, "--planner-replans", help="Replan cap for the LLM planner in the demo."),
    choice_replans: int = option(REPLAN_CAP, 12, "--choice-replans", help="Replan cap for the choice planner in the demo."),
    planner_episodes: int = option(LIMIT, 1, "--planner-episodes",
                                   help="Demo episodes the generating model planner runs (7 variants each)."),
    choice_episodes: int | None = option(LIMIT, None, "--choice-episodes",
                                         help="Demo episodes the choice planner runs (default: all 4)."),
) -> None:
    """Run SmolLM2 on the demo FramingQA, OMIT and robotics sets offline and write the report."""
    from rich.markup import escape

    from framebench import api
    from framebench.cli.text import summary_line
    from framebench.console import console as make_console
    from framebench.paths import check_out_folder, demo_root
    from framebench.records import read_records
    from framebench.scoring.summary import print_summary, summary_report

    console = make_console()
    for folder in (out, out / "runs", out / "report"):
        check_out_folder(folder)  # before any model is loaded
    steps = demo_steps(out, model, planner_replans, choice_replans, planner_episodes, choice_episodes)
    for _title, run_dir, _run in steps:
        check_out_folder(run_dir)
    started = time.perf_counter()
    run_dirs: list[Path] = []
    for title, run_dir, step_run in steps:
        console.rule(f"[bold]{title}")
        step = time.perf_counter()
        result = step_run(run_dir)
        print_summary(summary_report(read_records(run_dir)), title=f"framebench {title}")
        if hasattr(result, "parse_counts"):
            typer.echo(summary_line(result))
        else:
            typer.echo(f"wrote {run_dir / 'records.parquet'}")
        run_dirs.append(run_dir)
        console.print(f"[dim]{title}: {time.perf_counter() - step:.1f} s")
    personas = demo_root() / "omit" / "personas"
    if (personas / "records.parquet").exists():
        run_dirs.append(personas)
    report_dir = out / "report"
    console.rule("[bold]Report")
    scored = api.score(run_dirs)
    for path in api.write_report(scored, report_dir):
        console.print(f"wrote {escape(str(path))}")
    print_summary(scored.report, title="framebench score")
    console.print(f"\nDemo finished in {time.perf_counter() - started:.1f} s. Report: "
                  f"[bold]{escape(str(report_dir / 'report.html'))}[/] (also report.md, report.json)")
