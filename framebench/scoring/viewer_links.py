"""URLs into the results browser (``framebench view``), shared by its pages and by report.html.

The URL scheme (documented in the README, stable):

- ``BASE?model=M&suite=S&task=T&format=F&bias=B&level=L&COLUMN=V&correct=yes|no&parse=P``
  ``&context=ID&q=TEXT&page=N&per_page=N`` — the records, filtered (every parameter optional;
  repeat one to allow several values; ``COLUMN``: a registered suite's ``filter_columns``, OMIT's
  ``condition``);
- ``BASE context?suite=S&id=ID[&model=M...][&show=disagree|breaks]`` — one context as a grid,
  a row per variant and a column per model (``show``: only the variants where the models'
  answers differ, or only those that break a model's strict result);
- ``BASE record?suite=S&item=ITEM_ID&model=M[&run=RUN_ID]`` — one record: the prompt as sent,
  the raw output, its parse and every field, and the same item under the other models;
- ``BASE report`` — the report computed from the served records, its tables linking here.

``BASE`` is where the viewer is served: ``/`` inside the viewer, or the ``--viewer-url`` given
to ``framebench score`` (e.g. ``http://127.0.0.1:8765/``) for a static report.html.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import urlencode

Params = Mapping[str, str | Sequence[str]]


def _base(base: str) -> str:
    return base if base.endswith("/") else base + "/"


def _pairs(params: Params) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        values: Iterable[str] = [value] if isinstance(value, str) else value
        pairs += [(name, str(v)) for v in values if v not in ("", None)]
    return pairs


def records_url(base: str, params: Params) -> str:
    query = urlencode(_pairs(params))
    return _base(base) + (f"?{query}" if query else "")


def context_url(base: str, suite: str, context_id: str, models: Sequence[str] = ()) -> str:
    return _base(base) + "context?" + urlencode(_pairs({"suite": suite, "id": context_id,
                                                         "model": list(models)}))


def record_url(base: str, suite: str, item_id: str, model: str, run_id: str = "") -> str:
    return _base(base) + "record?" + urlencode(_pairs({"suite": suite, "item": item_id, "model": model,
                                                        "run": run_id}))


# report table header -> viewer filter (the registered suites' ``filter_columns`` add theirs);
# "Task" cells are raw task names except the pooled row
CORE_HEADER_FILTERS = {"Model": "model", "Task": "task", "Format": "format"}


def suite_filters() -> dict[str, str]:
    """Record column -> report-table title of each column a registered suite filters by
    (``filter_columns``; OMIT: condition)."""
    from framebench.registry import ordered_suites

    return {c: title for s in ordered_suites() for c, title in s.view.filter_columns.items()}


def header_filters() -> dict[str, str]:
    """Report table header -> the viewer filter its cells set."""
    return {**CORE_HEADER_FILTERS, **{title: c for c, title in suite_filters().items()}}
POOLED = {"task": {"all (pooled)", "all"}, "model": {"Mean"}}
# display names of record values some tables show instead of the value (markdown.FORMAT_NAMES)
DISPLAYED = {"format": {"binary yes/no": "binary", "multiple choice": "mc",
                        "robotics (completion)": "episode"}}
RECORD_VALUES = {"format": {"binary", "mc", "episode"}}


def table_row_url(base: str, suite: str, header: Sequence[str], row: Sequence[str]) -> str | None:
    """The viewer's records behind one row of a report table, or None when the row has no model
    (e.g. a mean over models)."""
    params: dict[str, str] = {"suite": suite}
    by_header = header_filters()
    for name, cell in zip(header, row, strict=False):
        key = by_header.get(name)
        if not key or cell in POOLED.get(key, ()):
            continue
        value = DISPLAYED.get(key, {}).get(cell.lower(), cell)
        if key not in RECORD_VALUES or value in RECORD_VALUES[key]:
            params[key] = value
    if "model" not in params:
        return None
    return records_url(base, params)
