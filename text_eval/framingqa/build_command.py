"""``framebench build framingqa``: FramingQA text items from public sources and reviewed decisions."""

from pathlib import Path

import typer


def framingqa(
    source: str = typer.Option(..., "--source", help="A folder holding the public sources "
                               "(legalbench/tasks/, fiqa/FiQA_train_question_final.tsv, "
                               "diagnosisarena/diagnosis_arena_dataset.csv), 'hf' (download LegalBench and "
                               "DiagnosisArena), or a prepared folder with contexts.jsonl + answer_sheets.jsonl (the demo set, "
                               "or your own from 'framebench sheets accept')."),
    out: Path = typer.Option(..., "--out", help="Output folder for items.jsonl and the build report."),
    tasks: str = typer.Option(None, "--tasks",
                              help="Comma-separated tasks to build (default: every registered domain; "
                              "framebench list tasks)."),
    finance_posts: Path = typer.Option(None, "--finance-posts",
                                       help="A Stack Exchange Posts.xml to use instead of the FiQA titles "
                                       "(its posts have no reviewed sheets: with --unreviewed only)."),
    check: bool = typer.Option(False, "--check", help="Exit 1 when the build has a scriptable defect "
                               "(listed in build_report.md): distractors overlapping the gold, leaks, answer cues, "
                               "premises a reviewer would reject."),
    unreviewed: bool = typer.Option(False, "--unreviewed",
                                    help="Audit build: each task's automatic selection of source rows and "
                                    "extractive premises instead of the reviewed decisions (fails --check)."),
    threshold: float = typer.Option(0.05, "--threshold", help="--unreviewed: evidence threshold (TF-IDF cosine)."),
    max_evidence: int = typer.Option(2, "--max-evidence", help="--unreviewed: evidence sets per distractor, at most."),
    rotate_options: bool = typer.Option(False, "--rotate-options",
                                        help="Also write every MC item's cyclic option rotations (the gold "
                                        "in every position; item ids end in @r1..@r3)."),
) -> None:
    """Build FramingQA items (the Table 7 expansion) for law, hearsay, finance and medicine."""
    from framebench.errors import UserError
    from framebench.paths import check_out_folder
    from framebench.text_eval.framingqa.build import BuildOptions, build
    from framebench.text_eval.framingqa.check import summary
    from framebench.text_eval.framingqa.premises import ExtractiveSettings

    check_out_folder(out)
    if max_evidence < 1:
        raise UserError("--max-evidence must be at least 1")
    if finance_posts is not None and not unreviewed:
        raise UserError("--finance-posts: these posts have no reviewed decisions; add --unreviewed, or draft "
                        "and review sheets for them (framebench sheets draft)")
    opts = BuildOptions(source=source, out=out, tasks=tuple(t.strip() for t in (tasks or "").split(",") if t.strip()),
                        finance_posts=finance_posts, unreviewed=unreviewed, rotate_options=rotate_options,
                        extractive=ExtractiveSettings(threshold=threshold, max_per_distractor=max_evidence))
    result = build(opts)
    from framebench.text_eval.framingqa.rotation import rotation_counts

    binary = sum(1 for it in result.items if it["format"] == "binary")
    fixed, rotated = rotation_counts(result.items)
    per_task = ", ".join(f"{t} {n}" for t, n in _count_tasks(result.contexts).items())
    extra = f" + {rotated} rotated MC items" if rotate_options else ""
    typer.echo(f"built {len(result.contexts)} contexts ({per_task}): {binary} binary + {fixed} MC items"
               f"{extra} in {result.seconds:.1f} s -> {out}")
    if result.dropped:
        typer.echo(f"{len(result.dropped)} source records dropped (reasons in {out / 'build_report.md'})")
    if result.defects:
        kinds = "; ".join(f"{task}: {kind} {n}" for (task, kind), n in summary(result.defects).items())
        typer.echo(f"check: {len(result.defects)} defects ({kinds}); all in {out / 'defects.jsonl'}, "
                   f"a sample of each kind in {out / 'build_report.md'}")
        if check:
            raise typer.Exit(1)
    else:
        typer.echo("check: no defects")


def _count_tasks(contexts) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in contexts:
        counts[c.task] = counts.get(c.task, 0) + 1
    return counts
