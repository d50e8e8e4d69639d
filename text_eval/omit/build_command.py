"""``framebench build omit``: the OMIT construction pipeline (issue: OMIT)."""

from pathlib import Path

import typer

from framebench.bounds import CALL_SIZE, option


def omit(
    source: Path = typer.Option(..., "--source", help="A folder holding the MoralChoice seed "
                                "(moralchoice/scenarios/moralchoice_high_ambiguity.csv), or a folder with "
                                "project-authored scenarios.jsonl (the demo)."),
    model: str = typer.Option(None, "--model", help="Model spec used for frames and the persona panel."),
    out: Path = typer.Option(..., "--out", help="Output folder."),
    call_size: int = option(CALL_SIZE, 16, help="Chats per backend call."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the model calls and tokens each stage "
                                 "would need, and stop before any call (nothing is written)."),
) -> None:
    """Build OMIT paired action/omission frames selected by a five-persona panel."""
    import time

    from framebench.errors import UserError
    from framebench.paths import check_out_folder
    from framebench.text_eval.omit.construction import (
        AUTHORED_FILE,
        build_from_authored,
        build_from_moralchoice,
    )
    from framebench.text_eval.omit.seed import SEED_FILE

    check_out_folder(out)
    if not source.is_dir():
        what = "not a folder" if source.exists() else f"no such folder (looked for {source.resolve()})"
        raise UserError(f"{source}: {what}; --source takes a folder holding {SEED_FILE} (where to get it: "
                        f"datasets/omit.md), or a folder with {AUTHORED_FILE} (the demo: datasets/demo/omit)")
    started = time.perf_counter()
    if (source / AUTHORED_FILE).is_file():
        if dry_run:
            typer.echo(f"dry run: {source} holds project-authored scenarios ({AUTHORED_FILE}); the build makes no "
                       "model calls; nothing was called or written")
            return
        report = build_from_authored(source, out)
    else:
        from framebench.backends import DEFAULT_MODEL, load_backend
        from framebench.registry import check_model
        from framebench.text_eval.omit.seed import load_seed, locate_seed

        check_model(model or DEFAULT_MODEL)  # a mistyped spec is named before the seed is read
        seed = load_seed(locate_seed(source))  # checked before any model is loaded
        if dry_run:
            _print_plan(seed, model)
            return
        report = build_from_moralchoice(source, load_backend(model), out, batch_size=call_size, seed=seed)
    funnel = " -> ".join(f"{row['stage']} {row['count']}" for row in report["funnel"])
    if not report["items"]:
        (out / "items.jsonl").unlink(missing_ok=True)  # no dataset, so no items file that looks like one
        raise UserError(f"{out}: the build yielded 0 items ({empty_stage(report['funnel'])}; funnel {funnel}); "
                        "no items.jsonl was written; the stage files and the model-call store stay there, so a rerun "
                        "resumes")
    typer.echo(f"funnel {funnel}; {report['items']} items ({report['selected']} selected, "
               f"{report['pool']} pool); {report['new_calls_total']} new model calls of "
               f"{report['calls_total']}; {time.perf_counter() - started:.1f}s -> {out}")


def _print_plan(seed: list[dict], model: str | None) -> None:
    from framebench.estimate import counter
    from framebench.text_eval.omit.construction import planned_calls

    encode, _, source = counter(model)
    total_in = total_out = total_calls = 0
    for stage in planned_calls(seed):
        tokens = sum(len(encode(chat)) for chat in stage["chats"])
        if "approximation" in source:
            tokens = -(-tokens // 4)
        bound_out = stage["calls"] * stage["max_new_tokens"]
        shown = f"{tokens:,} input tokens" if stage["chats"] else "input tokens known after the frames stage"
        typer.echo(f"{stage['stage']}: {stage['bound']} {stage['calls']:,} calls; {shown}; "
                   f"at most {bound_out:,} output tokens")
        total_calls, total_in, total_out = total_calls + stage["calls"], total_in + tokens, total_out + bound_out
    typer.echo(f"dry run: {len(seed)} seed scenarios; at most {total_calls:,} model calls; {total_in:,} input "
               f"tokens for the stages known now, at most {total_out:,} output tokens (tokens counted with "
               f"{source}); nothing was called or written")


def empty_stage(funnel: list[dict]) -> str:
    """Which stage left nothing, and its main drop reason."""
    before = None
    for row in funnel:
        if row["count"] == 0:
            reasons = row.get("dropped") or {}
            top = max(reasons, key=reasons.get) if reasons else ""
            kept = f"kept 0 of {before['count']}" if before else "holds 0"
            return f"stage '{row['stage']}' ({row['label']}) {kept}" + (f", mostly: {top}" if top else "")
        before = row
    return "every scenario was dropped at selection"
