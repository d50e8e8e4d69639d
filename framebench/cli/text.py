"""``framebench text``: run a model over built items and write records (issue: text evaluator)."""

from pathlib import Path

import typer


def text(
    data: Path = typer.Option(..., "--data", help="Folder holding items.jsonl."),
    out: Path = typer.Option(..., "--out", help="Run folder (records.parquet, run.json, prompts.jsonl, store)."),
    model: str = typer.Option(None, "--model", help="hf:PATH|vllm:PATH|openai:NAME|baseline:KIND|smollm2 (default)."),
    tasks: str = typer.Option(None, "--tasks", help="Comma-separated tasks to run (default: all)."),
    formats: str = typer.Option(None, "--formats", help="Comma-separated formats: binary,mc (default: both)."),
    limit: int = typer.Option(None, "--limit", help="Run only the first N selected items."),
    batch_size: str = typer.Option("auto", "--batch-size", help="HF batch size: N or 'auto'."),
    concurrency: int = typer.Option(8, "--concurrency", help="Parallel requests for openai: models."),
    conditions: str = typer.Option(None, "--conditions",
                                   help="OMIT conditions, e.g. M0,M1,M2 (default: M0; OMIT data only)."),
    base_url: str = typer.Option(None, "--base-url",
                                 help="OpenAI-compatible server for openai: models (default: $OPENAI_BASE_URL)."),
    answer: str = typer.Option("generate", "--answer",
                               help="generate (free text, strictly parsed) or constrained (scored allowed answers)."),
    reasoning_from: list[Path] = typer.Option(
        [], "--reasoning-from", help="Constrained OMIT M1/M4: reuse the reasoning another run folder "
        "already generated (same model, prompt and decoding) instead of generating it again."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    force: bool = typer.Option(False, "--force", help="Replace a different run already in --out."),
    executor: str = typer.Option("local", "--executor", help="local (this process) or ray (a Ray cluster)."),
    ray_address: str = typer.Option(None, "--ray-address",
                                    help="Ray head HOST:PORT or 'auto' (default: start a local Ray instance)."),
    ray_workers: int = typer.Option(None, "--ray-workers", min=1,
                                    help="Worker actors (default: as many as the cluster's CPUs/GPUs allow)."),
) -> None:
    """Evaluate a model on FramingQA text or OMIT items (resumes when re-run with the same arguments)."""
    import logging
    from functools import partial

    from framebench.errors import UserError
    from framebench.executors import check_executor
    from text_eval.runner import run_text

    if batch_size != "auto" and not (batch_size.isdigit() and int(batch_size) > 0):
        raise UserError(f"--batch-size must be a positive integer or 'auto', got {batch_size!r}")
    if concurrency < 1:
        raise UserError(f"--concurrency must be a positive integer, got {concurrency}")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if check_executor(executor) == "ray":
        from framebench.executors.text import run_text_ray

        run_text = partial(run_text_ray, ray_address=ray_address, workers=ray_workers)
    summary = run_text(model, data, out, tasks=tasks, formats=formats, limit=limit,
                       batch_size=batch_size if batch_size == "auto" else int(batch_size),
                       concurrency=concurrency, conditions=conditions, progress=not quiet,
                       base_url=base_url, force=force, answer=answer, reasoning_from=reasoning_from)
    counts = ", ".join(f"{k} {v}" for k, v in summary.parse_counts.items())
    from framebench.records import read_records
    from framebench.scoring.summary import print_summary, summary_report

    print_summary(summary_report(read_records(summary.run_dir)), title=f"framebench text {summary.run_id}")
    typer.echo(f"{summary.n_records} records ({summary.n_generated} generated, {summary.n_from_store} from the "
               f"store; {counts}) in {summary.seconds:.1f}s -> {summary.run_dir}")
