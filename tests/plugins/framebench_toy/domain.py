"""``toy_weather``: a FramingQA domain. Each line of ``SOURCE/toy_weather.tsv`` is
``id<TAB>label<TAB>report``; the question asks which weather the report describes."""

from __future__ import annotations

import csv
from pathlib import Path

from framebench.errors import UserError
from framebench.text_eval.framingqa.contexts import Context, Dropped
from framebench.text_eval.framingqa.domains import Domain, Loaded

SCOPES = {
    "Rain": "Rain, showers, drizzle, wet streets, umbrellas, puddles.",
    "Snow": "Snow, sleet, ice, frozen roads, shovels, snowfall.",
    "Heat": "Heat, hot sun, high temperatures, drought, sweating.",
    "Wind": "Wind, gusts, storms, blown trees, flying debris.",
}


def load(opts) -> Loaded:
    path = Path(opts.source) / "toy_weather.tsv"
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    contexts, dropped = [], []
    with path.open(encoding="utf-8", newline="") as fh:
        for n, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if len(row) != 3 or row[1] not in SCOPES:
                dropped.append(Dropped("toy_weather", f"{path.name} line {n}", "not id, known label, report"))
                continue
            contexts.append(Context(f"wx-{row[0]}", "toy_weather", row[2], row[1], list(SCOPES)))
    return Loaded(contexts, dropped)


WEATHER = Domain("toy_weather", order=90, load=load, mc_ask="Which weather does this report describe",
                 phrase=lambda option: f"a report of {option.lower()}", scopes=SCOPES)
