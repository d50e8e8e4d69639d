"""``framebench text``: run a model over built items and write records (``framebench.api.run_text``)."""

from pathlib import Path

import typer

from framebench.bounds import BASE_URL, BATCH_SIZE, CONCURRENCY, LIMIT, option
from framebench.cli.options import EXECUTOR, FORCE, RAY_ADDRESS, RAY_WORKERS
from framebench.registry import DEFAULT_ANSWER_MODE, answer_mode_names

MODEL_ARG_HELP = ("An option of the model engine, key=value (repeatable), e.g. batch_size=32, "
                  "dtype=bfloat16, base_url=http://host:8000/v1. Each engine declares its options.")


SUITE_HELP = ("A suite from a Python file, FILE.py:OBJECT (repeatable), registered for this run without "
              "installing anything; score its runs with the same --suite.")
ANSWER_HELP = (f"How each job is answered: {' | '.join(answer_mode_names())} (the answer modes registered "
               "under framebench.answer_modes).")


def text(
    data: Path = typer.Option(..., "--data", help="Folder holding items.jsonl."),
    out: Path = typer.Option(..., "--out", help="Run folder (records.parquet, run.json, prompts.jsonl, store)."),
    model: str = typer.Option(None, "--model", help="hf:PATH|vllm:PATH|openai:NAME|baseline:KIND|smollm2 "
                              "(default), or any registered model engine."),
    model_arg: list[str] = typer.Option(None, "--model-arg", "-M", help=MODEL_ARG_HELP),
    tasks: str = typer.Option(None, "--tasks", help="Comma-separated tasks to run (default: all)."),
    formats: str = typer.Option(None, "--formats", help="Comma-separated formats: binary,mc (default: both)."),
    limit: int = option(LIMIT, None, help="Run only the first N selected items."),
    batch_size: str = option(BATCH_SIZE, "auto", help="HF batch size."),
    concurrency: int = option(CONCURRENCY, 8, help="Parallel requests for openai: models."),
    conditions: str = typer.Option(None, "--conditions",
                                   help="OMIT conditions, e.g. M0,M1,M2 (default: M0; OMIT data only)."),
    base_url: str = option(BASE_URL, None, help="OpenAI-compatible server for openai: models "
                           "(default: $OPENAI_BASE_URL)"),
    answer: str = typer.Option(DEFAULT_ANSWER_MODE, "--answer", help=ANSWER_HELP),
    reasoning_from: list[Path] = typer.Option(
        [], "--reasoning-from", help="Constrained OMIT M1/M4: reuse the reasoning another run folder "
        "already generated (same model, prompt and decoding) instead of generating it again."),
    suite: list[str] = typer.Option([], "--suite", help=SUITE_HELP),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    force: bool = FORCE,
    executor: str = EXECUTOR,
    ray_address: str = RAY_ADDRESS,
    ray_workers: int = RAY_WORKERS,
) -> None:
    """Evaluate a model on FramingQA text or OMIT items (resumes when re-run with the same arguments)."""
    import logging

    from framebench import api
    from framebench.registry import parse_model_args
    from framebench.suite_file import add_suite_files

    add_suite_files(suite)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    request = api.text_request(model, data, out, tasks=tasks, formats=formats, limit=limit, conditions=conditions,
                               answer=answer, reasoning_from=reasoning_from, model_args=parse_model_args(model_arg),
                               batch_size=batch_size, concurrency=concurrency, base_url=base_url,
                               progress=not quiet, force=force, executor=executor, ray_address=ray_address,
                               ray_workers=ray_workers)
    summary = api.run(request)
    from framebench.scoring.summary import print_summary, summary_report

    print_summary(summary_report(summary.records()), title=f"framebench text {summary.run_id}")
    typer.echo(summary_line(summary))


def summary_line(summary) -> str:
    """One line on a finished text run (``framebench.pipeline.text.RunSummary``)."""
    counts = ", ".join(f"{k} {v}" for k, v in summary.parse_counts.items())
    return (f"{summary.n_records} records ({summary.n_generated} generated, {summary.n_from_store} from the "
            f"store; {counts}) in {summary.seconds:.1f}s -> {summary.run_dir}")
