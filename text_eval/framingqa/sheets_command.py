"""``framebench sheets draft|accept``: answer sheets for your own contexts, drafted by a model and
reviewed by a person (``framebench.text_eval.framingqa.sheet_drafts``)."""

from pathlib import Path

import typer

app = typer.Typer(help="Draft FramingQA answer sheets with a model, review them, accept them into a "
                  "source folder for 'framebench build framingqa'.", no_args_is_help=True)


@app.command("draft")
def draft(
    contexts: Path = typer.Option(..., "--contexts", help="JSONL, one context a line: context_id, task, text, "
                                  "gold, distractors (three, ranked)."),
    review: Path = typer.Option(..., "--review", help="Review file to write (JSONL; resumable; drafting again "
                                "redrafts the slots whose drafts were all rejected)."),
    model: str = typer.Option("smollm2", "--model", help="Model spec: hf:PATH, vllm:PATH, openai:NAME, smollm2, ..."),
    call_size: int = typer.Option(16, "--call-size", min=1, max=4096, help="Drafts per model call."),
) -> None:
    """Draft a premise for every option, two rephrasings of the gold premise and one further evidence
    premise per distractor; flags drafts that name their option, copy a clause or miss the length."""
    from rich.progress import Progress

    from framebench.backends import load_backend
    from framebench.text_eval.framingqa.sheet_drafts import draft as run_draft
    from framebench.text_eval.framingqa.sheet_drafts import read_contexts

    found, _ = read_contexts(contexts)  # a bad contexts file fails before any model loads
    backend = load_backend(model)
    with Progress(transient=True) as progress:
        task = progress.add_task("drafting premises", total=len(found) * 9)
        counts = run_draft(contexts, review, backend, call_size, lambda n: progress.advance(task, n))
    typer.echo(f"{review}: {counts['drafted']} drafted, {counts['pending']} awaiting review "
               f"({counts['flagged']} flagged); set each \"decision\" to accept, reject or edit (with "
               "\"edited\"), then run `framebench sheets accept`")


@app.command("blind")
def blind(
    review: Path = typer.Argument(..., help="Review file written by 'framebench sheets draft'."),
    contexts: Path = typer.Option(..., "--contexts", help="The contexts file the review was drafted from."),
    reader: str = typer.Option("", "--reader", help="An engine that reads every reviewed premise blind: "
                               "hf:PATH, vllm:PATH, openai:NAME, smollm2, ..."),
    packet: Path = typer.Option(None, "--packet", help="Instead of an engine: write the unread premises, "
                                "without their labels, for a person to fill in 'read_as'."),
    answers: Path = typer.Option(None, "--answers", help="A filled-in packet: store a person's readings."),
    person: str = typer.Option("", "--person", help="With --answers: who read the packet."),
) -> None:
    """Read every reviewed premise blind: a reader sees the context, the options shuffled and the
    premise, never its label, and names the option it argues for or "none"; the answer is stored
    beside the premise, and 'accept' refuses a premise read as another option unless the review
    gives an "override" reason."""
    from framebench.errors import UserError
    from framebench.text_eval.framingqa import sheet_drafts

    if sum(bool(x) for x in (reader, packet, answers)) != 1:
        raise UserError("sheets blind: give exactly one of --reader SPEC, --packet FILE or --answers FILE")
    if packet:
        n = sheet_drafts.write_packet(review, contexts, packet)
        typer.echo(f"{packet}: {n} premises to read blind; fill in each \"read_as\" (an option or \"none\"), "
                   f"then: framebench sheets blind {review} --contexts {contexts} --answers {packet} --person NAME")
        return
    if answers:
        if not person.strip():
            raise UserError("sheets blind: --answers needs --person NAME (who read the premises)")
        counts = sheet_drafts.read_answers(review, contexts, answers, person)
    else:
        counts = _read_with_engine(review, contexts, reader)
    typer.echo(f"{review}: {counts['read']} read blind; {counts['agree']} read as their own option, "
               f"{counts['disagree']} as another (accept refuses those without an \"override\"), "
               f"{counts['unread']} unread")


def _read_with_engine(review: Path, contexts: Path, reader: str) -> dict[str, int]:
    from rich.progress import Progress

    from framebench.backends import load_backend
    from framebench.text_eval.framingqa.sheet_drafts import blind_read, read_contexts

    read_contexts(contexts)  # a bad contexts file fails before any model loads
    backend = load_backend(reader)
    with Progress(transient=True) as progress:
        task = progress.add_task("reading premises blind", total=None)
        return blind_read(review, contexts, backend, on_progress=lambda n: progress.advance(task, n))


@app.command("accept")
def accept(
    review: Path = typer.Argument(..., help="Review file written by 'framebench sheets draft'."),
    contexts: Path = typer.Option(..., "--contexts", help="The contexts file the review was drafted from."),
    out: Path = typer.Option(..., "--out", help="Folder to write contexts.jsonl and answer_sheets.jsonl into "
                             "(then: framebench build framingqa --source OUT)."),
    reviewer: str = typer.Option(..., "--reviewer", help="Who reviewed the drafts (kept in each sheet's provenance)."),
) -> None:
    """Write answer sheets from the accepted and edited drafts only; contexts with an unreviewed slot are left out."""
    from framebench.paths import check_out_folder
    from framebench.text_eval.framingqa.sheet_drafts import accept as run_accept

    check_out_folder(out)
    written, left_out = run_accept(review, contexts, out, reviewer)
    for line in left_out:
        typer.echo(f"left out {line}")
    typer.echo(f"wrote {written} answer sheets to {out} ({len(left_out)} contexts left out); "
               f"build items with: framebench build framingqa --source {out} --out DIR")
