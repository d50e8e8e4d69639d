"""``framebench build framingqa``: FramingQA text items from public sources (issue: datasets)."""

from pathlib import Path

import typer


def framingqa(
    source: str = typer.Option(..., "--source", help="A folder laid out like ../shared/data, 'hf', or a "
                               "prepared folder with contexts.jsonl + answer_sheets.jsonl (the demo set)."),
    out: Path = typer.Option(..., "--out", help="Output folder for items.jsonl and the build report."),
    generator: str = typer.Option("extractive", "--generator", help="extractive or llm."),
    tasks: str = typer.Option(None, "--tasks",
                              help="Comma-separated tasks to build (default: every registered domain; "
                              "framebench list tasks)."),
    model: str = typer.Option(None, "--model", help="llm generator: backend spec (hf:..., openai:..., smollm2)."),
    review: Path = typer.Option(None, "--review", help="llm generator: review JSONL "
                                "(default OUT/premise_review.jsonl); mark 'accepted' true/false, then rerun."),
    finance_posts: Path = typer.Option(None, "--finance-posts",
                                       help="A Stack Exchange Posts.xml to use instead of the FiQA titles."),
    threshold: float = typer.Option(0.05, "--threshold", help="Extractive evidence threshold (TF-IDF cosine)."),
    max_evidence: int = typer.Option(2, "--max-evidence", help="Extractive: evidence sets per distractor, at most."),
    rotate_options: bool = typer.Option(False, "--rotate-options",
                                        help="Also write every MC item's cyclic option rotations (the gold "
                                        "in every position; item ids end in @r1..@r3). Default: the "
                                        "paper's fixed order only."),
) -> None:
    """Build FramingQA items (the Table 7 expansion) for law, hearsay, finance and medicine."""
    from framebench.text_eval.framingqa.build import BuildOptions, build
    from framebench.text_eval.framingqa.premises import ExtractiveSettings

    from framebench.errors import UserError
    from framebench.paths import check_out_folder

    check_out_folder(out)
    if max_evidence < 1:
        raise UserError("--max-evidence must be at least 1")
    backend = None
    if generator == "llm":
        if not model:
            raise UserError("--generator llm needs --model SPEC")
        from framebench.backends import load_backend

        backend = load_backend(model)
        review = review or out / "premise_review.jsonl"
    opts = BuildOptions(source=source, out=out, generator=generator,
                        tasks=tuple(t.strip() for t in (tasks or "").split(",") if t.strip()),
                        finance_posts=finance_posts, backend=backend, review=review,
                        rotate_options=rotate_options,
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


def _count_tasks(contexts) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in contexts:
        counts[c.task] = counts.get(c.task, 0) + 1
    return counts
