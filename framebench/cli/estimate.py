"""``framebench estimate``: a text run's requests, tokens, time and cost before it runs
(``framebench.estimate``)."""

from pathlib import Path

import typer

from framebench.bounds import LIMIT, PRICE, RATE, SAMPLE, option
from framebench.cli.text import ANSWER_HELP, MODEL_ARG_HELP
from framebench.registry import DEFAULT_ANSWER_MODE


def estimate(
    data: Path = typer.Option(..., "--data", help="Folder holding items.jsonl (as for framebench text)."),
    model: str = typer.Option(None, "--model", help="The model spec the run will use (default: smollm2)."),
    model_arg: list[str] = typer.Option(None, "--model-arg", "-M", help=MODEL_ARG_HELP),
    tasks: str = typer.Option(None, "--tasks", help="Comma-separated tasks (default: all)."),
    formats: str = typer.Option(None, "--formats", help="Comma-separated formats: binary,mc (default: both)."),
    limit: int = option(LIMIT, None, help="Only the first N selected items."),
    conditions: str = typer.Option(None, "--conditions", help="OMIT conditions, e.g. M0,M1 (OMIT data only)."),
    answer: str = typer.Option(DEFAULT_ANSWER_MODE, "--answer", help=ANSWER_HELP),
    sample: int = option(SAMPLE, None, help="Time N real requests to project the run's time and output tokens "
                         "(whole contexts, at least N requests; default: 64 for a model run on this machine, 0 for "
                         "a remote API, whose requests are billed)."),
    rate: float = option(RATE, None, help="Requests per second you measured on the server: projects the time "
                         "without a sample."),
    price_in: float = option(PRICE, None, "--price-in", help="Price per million input tokens."),
    price_out: float = option(PRICE, None, "--price-out", help="Price per million output tokens."),
) -> None:
    """Count what a text run would send (requests, input and output tokens, prefix sharing) and
    project its time and cost, before any request is made."""
    from rich.table import Table
    from rich.text import Text

    from framebench.console import console
    from framebench.errors import UserError
    from framebench.estimate import estimate as run_estimate
    from framebench.estimate import lines, select_jobs
    from framebench.executors.resources import engine_device
    from framebench.pipeline.text import split_list
    from framebench.registry import parse_model_args

    if (price_in is None) != (price_out is None):
        raise UserError("--price-in and --price-out go together (prices per million input and output tokens)")
    jobs, items = select_jobs(data, tasks, formats, limit, split_list(conditions), answer)
    if sample is None:
        sample = 0 if engine_device(model) == "remote" else 64
    prices = (price_in, price_out) if price_in is not None else None
    est = run_estimate(model, jobs, items, sample=sample, rate=rate, prices=prices,
                       model_args=parse_model_args(model_arg))
    table = Table(title="framebench estimate", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    for what, value in lines(est):
        table.add_row(Text(what), Text(value))
    console().print(table)
