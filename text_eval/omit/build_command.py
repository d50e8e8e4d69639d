"""``framebench build omit``: the OMIT construction pipeline (issue: OMIT)."""

from pathlib import Path

import typer

from framebench.bounds import CALL_BATCH, option


def omit(
    source: Path = typer.Option(..., "--source", help="A folder laid out like ../shared/data (MoralChoice "
                                "seed), or a folder with project-authored scenarios.jsonl (the demo)."),
    model: str = typer.Option(None, "--model", help="Model spec used for frames and the persona panel."),
    out: Path = typer.Option(..., "--out", help="Output folder."),
    batch_size: int = option(CALL_BATCH, 16, help="Chats per backend call."),
) -> None:
    """Build OMIT paired action/omission frames selected by a five-persona panel."""
    import time

    from framebench.errors import UserError
    from framebench.paths import check_out_folder
    from text_eval.omit.construction import (
        AUTHORED_FILE,
        build_from_authored,
        build_from_moralchoice,
    )

    check_out_folder(out)
    if not source.is_dir():
        raise UserError(f"{source}: not a folder")
    started = time.perf_counter()
    if (source / AUTHORED_FILE).is_file():
        report = build_from_authored(source, out)
    else:
        from framebench.backends import load_backend
        from text_eval.omit.seed import load_seed, locate_seed

        seed = load_seed(locate_seed(source))  # checked before any model is loaded
        report = build_from_moralchoice(source, load_backend(model), out, batch_size=batch_size, seed=seed)
    funnel = " -> ".join(str(row["count"]) for row in report["funnel"])
    typer.echo(f"funnel {funnel}; {report['items']} items ({report['selected']} selected, "
               f"{report['pool']} pool); {report['new_calls_total']} new model calls of "
               f"{report['calls_total']}; {time.perf_counter() - started:.1f}s -> {out}")
