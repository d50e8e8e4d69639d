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
) -> None:
    """Build FramingQA items (the Table 7 expansion) for law, hearsay, finance and medicine."""
    from framebench.errors import UserError
    from framebench.paths import check_out_folder
    from text_eval.build import BuildOptions, build
    from text_eval.premises import ExtractiveSettings

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
                        extractive=ExtractiveSettings(threshold=threshold, max_per_distractor=max_evidence))
    result = build(opts)
    binary = sum(1 for it in result.items if it["format"] == "binary")
    mc = len(result.items) - binary
    per_task = ", ".join(f"{t} {n}" for t, n in _count_tasks(result.contexts).items())
    typer.echo(f"built {len(result.contexts)} contexts ({per_task}): {binary} binary + {mc} MC items "
               f"in {result.seconds:.1f} s -> {out}")
    if result.dropped:
        typer.echo(f"{len(result.dropped)} source records dropped (reasons in {out / 'build_report.md'})")


def _count_tasks(contexts) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in contexts:
        counts[c.task] = counts.get(c.task, 0) + 1
    return counts
