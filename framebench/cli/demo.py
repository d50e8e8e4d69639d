"""``framebench demo``: the embedded default end to end, offline on a CPU.

Runs the packaged SmolLM2 on the demo FramingQA items (binary + MC, four tasks) and on the OMIT
demo scenarios (M0, M1), each twice: free generation with strict parsing (the papers' protocol) and
constrained answers (``--answer constrained``: the probability of each allowed answer, which the
report turns into framing-susceptibility shifts with intervals). On the demo robotics episodes (7
variants each) it runs SmolLM2 as a generating planner and as the choice-scoring planner
(``choice:smollm2``), with the oracle planner as a reference row. It adds the
``baseline:always-yes`` reference and writes the unified report. Every step goes through the public CLI commands and their result stores, so a
second run resumes and finishes in seconds.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"


def demo_steps(out: Path, model: str, planner_replans: int,
               choice_replans: int = 14, choice_episodes: int = 2) -> list[tuple[str, list[str]]]:
    """(title, CLI arguments) for each run of the demo, in order."""
    runs = out / "runs"
    fqa, omit, robotics = DEMO / "framingqa", DEMO / "omit", DEMO / "robotics"
    episodes = str(robotics / "episodes.json.gz")
    return [
        ("FramingQA text, " + model,
         ["text", "--model", model, "--data", str(fqa), "--out", str(runs / "framingqa-model")]),
        ("FramingQA text, " + model + ", constrained answers",
         ["text", "--model", model, "--data", str(fqa), "--answer", "constrained",
          "--out", str(runs / "framingqa-model-constrained")]),
        ("FramingQA text, baseline:always-yes",
         ["text", "--model", "baseline:always-yes", "--data", str(fqa),
          "--out", str(runs / "framingqa-always-yes")]),
        ("OMIT M0 + M1, " + model,
         ["text", "--model", model, "--data", str(omit), "--conditions", "M0,M1",
          "--out", str(runs / "omit-model")]),
        ("OMIT M0 + M1, " + model + ", constrained answers",
         ["text", "--model", model, "--data", str(omit), "--conditions", "M0,M1", "--answer", "constrained",
          "--reasoning-from", str(runs / "omit-model"), "--out", str(runs / "omit-model-constrained")]),
        ("Robotics, oracle planner",
         ["embodied", "--planner", "oracle", "--episodes", episodes,
          "--out", str(runs / "embodied-oracle")]),
        ("Robotics, " + model + " planner",
         ["embodied", "--planner", model, "--episodes", episodes, "--max-replans",
          str(planner_replans), "--out", str(runs / "embodied-model")]),
        ("Robotics, choice:" + model + " planner (scores the valid actions)",
         ["embodied", "--planner", f"choice:{model}", "--episodes", episodes, "--max-replans",
          str(choice_replans), "--limit", str(choice_episodes), "--out", str(runs / "embodied-choice")]),
    ]


def demo(
    out: Path = typer.Option(Path("framebench-demo"), "--out", help="Output folder (runs/ and report/)."),
    model: str = typer.Option("smollm2", "--model", help="Model spec for every step (default: the packaged SmolLM2)."),
    planner_replans: int = typer.Option(2, "--planner-replans", help="Replan cap for the LLM planner in the demo."),
    choice_replans: int = typer.Option(14, "--choice-replans", help="Replan cap for the choice planner in the demo."),
    choice_episodes: int = typer.Option(2, "--choice-episodes", min=1,
                                        help="Demo episodes the choice planner runs (7 variants each)."),
) -> None:
    """Run SmolLM2 on the demo FramingQA, OMIT and robotics sets offline and write the report."""
    from framebench.cli import app
    from framebench.console import console as make_console
    from framebench.errors import UserError
    from framebench.paths import check_out_folder

    console = make_console()
    for folder in (out, out / "runs", out / "report"):
        check_out_folder(folder)  # before any model is loaded
    for _title, args in demo_steps(out, model, planner_replans):
        check_out_folder(Path(args[args.index("--out") + 1]))
    if not DEMO.exists():
        raise UserError(f"{DEMO}: demo datasets not found (run the demo from a framebench checkout)")
    started = time.perf_counter()
    run_dirs: list[str] = []
    for title, args in demo_steps(out, model, planner_replans, choice_replans, choice_episodes):
        console.rule(f"[bold]{title}")
        step = time.perf_counter()
        app(args=args, prog_name="framebench", standalone_mode=False)
        run_dirs.append(args[args.index("--out") + 1])
        console.print(f"[dim]{title}: {time.perf_counter() - step:.1f} s")
    personas = DEMO / "omit" / "personas"
    if (personas / "records.parquet").exists():
        run_dirs.append(str(personas))
    report_dir = out / "report"
    console.rule("[bold]Report")
    app(args=["score", *run_dirs, "--out", str(report_dir)], prog_name="framebench",
        standalone_mode=False)
    console.print(f"\nDemo finished in {time.perf_counter() - started:.1f} s. Report: "
                  f"[bold]{report_dir / 'report.html'}[/] (also report.md, report.json)")
