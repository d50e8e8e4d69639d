"""The results browser as a Flask app: the records page (filters, search, pagination), the
context page (every variant side by side, one column per model) and the report.

Everything shown comes from records, prompts and model output — untrusted — and reaches the page
only through Jinja2 autoescaping (our own environment, autoescape on for every template). Every
response carries a Content-Security-Policy without scripts or external loads; the app answers
only requests addressed to the loopback host it listens on (no DNS rebinding).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from flask import Flask, Response, request

from framebench.errors import UserError
from framebench.scoring import viewer_links as links
from framebench.scoring.html import format_cell
from framebench.viewer.data import CHOICE_FILTERS, RunData, parse_query, shared_prefix

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
LOCAL_HOSTS = ("127.0.0.1", "localhost")
SNIPPET = 240  # characters of output / question shown per row on the records page
ROW_COLUMNS = ["model", "task", "format", "context_id", "item_id", "bias", "level", "condition",
               "frame", "gold", "answer", "parse", "correct"]
VARIANT_COLUMNS = ["item_id", "format", "bias", "level", "form", "variant", "option", "distractor",
                   "condition", "frame", "constraint", "gold"]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("framebench.viewer", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals["records_url"] = lambda params: links.records_url("/", params)
    env.globals["context_url"] = lambda suite, cid: links.context_url("/", suite, cid)
    return env


def _snippet(text: Any, limit: int = SNIPPET) -> str:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _question(prompt: str) -> str:
    """The last paragraph of a prompt: the question itself, without the shared passage."""
    prompt = prompt.strip()
    parts = [p for p in prompt.split("\n\n") if p.strip()]
    return "\n\n".join(parts[-2:]) if len(parts) > 1 else prompt


def create_app(data: RunData, *, title: str = "framebench results") -> Flask:
    app = Flask(__name__)
    env = _environment()
    report_cache: dict[str, str] = {}

    def page(template: str, status: int = 200, **context: Any) -> Response:
        html = env.get_template(template).render(title=title, n_records=len(data), csp=CSP,
                                                    **context)
        return Response(html, status=status, mimetype="text/html")

    @app.before_request
    def only_local_hosts() -> Response | None:
        host = (request.host or "").rsplit(":", 1)[0].strip("[]")
        if host not in LOCAL_HOSTS:
            return Response("unknown host\n", status=421, mimetype="text/plain")
        return None

    @app.after_request
    def harden(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.errorhandler(UserError)
    def user_error(exc: UserError) -> Response:
        return page("error.html.j2", status=400, message=str(exc))

    @app.errorhandler(404)
    def not_found(_exc: Exception) -> Response:
        return page("error.html.j2", status=404, message=f"no page at {request.path}")

    @app.get("/")
    def records_page() -> Response:
        args = {name: request.args.getlist(name) for name in request.args}
        query = parse_query(args, data.choices)
        shown = data.page(query)
        kept = {name: values for name, values in query.filters.items()}
        if query.text:
            kept["q"] = [query.text]
        if query.per_page != 50:
            kept["per_page"] = [str(query.per_page)]
        rows = [_row_view(record) for record in shown.rows.to_dict("records")]
        return page(
            "records.html.j2",
            filters=[{"name": name, "choices": data.choices[name],
                      "selected": query.filters.get(name, [])} for name in CHOICE_FILTERS],
            context_filter=query.filters.get("context", []),
            text=query.text,
            per_page=query.per_page,
            rows=rows,
            page=shown,
            page_url=lambda n: links.records_url("/", {**kept, "page": str(n)}),
        )

    @app.get("/context")
    def context_page() -> Response:
        suite = request.args.get("suite", "")
        context_id = request.args.get("id", "")
        if not suite or not context_id:
            raise UserError("a context page needs ?suite=SUITE&id=CONTEXT_ID")
        rows = data.context(suite, context_id, request.args.getlist("model"))
        if rows.empty:
            return page("error.html.j2", status=404,
                        message=f"no records for context {context_id!r} of suite {suite!r}")
        return page("context.html.j2", **_context_view(suite, context_id, rows))

    @app.get("/report")
    def report_page() -> Response:
        if "html" not in report_cache:
            report_cache["html"] = _render_report(data)
        return Response(report_cache["html"], mimetype="text/html")

    return app


def _suite(name: str):
    from framebench.scoring.html import _suite as suite_of

    return suite_of(name)


def _row_view(record: dict[str, Any]) -> dict[str, Any]:
    cells = {c: format_cell(c, record.get(c)) for c in ROW_COLUMNS}
    value, mark = _suite(str(record.get("suite"))).result_columns
    cells["answer"] = format_cell(value, record.get(value))
    cells["correct"] = format_cell(mark, record.get(mark))
    return {
        "cells": cells,
        "suite": record["suite"],
        "context_id": record["context_id"],
        "question": _snippet(_question(str(record.get("prompt") or ""))),
        "output": _snippet(record.get("output")),
    }


def _context_view(suite: str, context_id: str, rows: pd.DataFrame) -> dict[str, Any]:
    """The context's variants as rows and its models as columns."""
    models = list(dict.fromkeys(rows["model"]))
    passage = shared_prefix(list(dict.fromkeys(rows["prompt"])))
    columns = [c for c in VARIANT_COLUMNS if (rows[c].fillna("") != "").any()] or ["item_id"]
    by_item: dict[str, dict[str, dict[str, Any]]] = {}
    for record in rows.to_dict("records"):
        by_item.setdefault(record["item_id"], {}).setdefault(record["model"], record)
    variants = []
    for by_model in by_item.values():
        first = next(iter(by_model.values()))
        variants.append({
            "cells": [format_cell(c, first[c]) for c in columns],
            "question": str(first["prompt"])[len(passage):],
            "answers": [_answer_view(suite, by_model.get(m)) for m in models],
        })
    summaries = [_model_summary(suite, rows[rows["model"] == m]) for m in models]
    return {"suite": suite, "context_id": context_id, "task": str(rows["task"].iloc[0]),
            "models": models, "summaries": summaries, "passage": passage, "columns": columns,
            "variants": variants,
            "list_url": links.records_url("/", {"suite": suite, "context": context_id})}


def _answer_view(suite: str, record: dict[str, Any] | None) -> dict[str, Any] | None:
    if record is None:
        return None
    value_column, mark_column = _suite(suite).result_columns
    raw = record.get(value_column)
    value = format_cell(value_column, "—" if raw is None or raw == "" else raw)
    # without a gold answer there is nothing to be right about: show whether it parsed
    mark = (format_cell(mark_column, record.get(mark_column))
            if record.get("gold") or mark_column != "correct" else format_cell("parse", record.get("parse")))
    return {"value": value, "mark": mark, "parse": str(record.get("parse") or ""),
            "output": "" if record.get("output") is None else str(record["output"])}


def _model_summary(suite: str, rows: pd.DataFrame) -> str:
    return _suite(suite).model_summary(rows)


def _render_report(data: RunData) -> str:
    """report.html over the served records, its tables and drill-down linking into the viewer."""
    from framebench.runs import DUPLICATE_KEY, Runs, read_run_json
    from framebench.scoring.compute import compute_report
    from framebench.scoring.html import render_html

    records = data.records.drop(columns=["prompt", "run_dir"])
    if records.duplicated(DUPLICATE_KEY).any():
        raise UserError("these runs answer the same items twice: score them separately "
                        "(the records pages still show every row)")
    prompts = dict(zip(data.records["item_id"], data.records["prompt"], strict=True))
    folders = [(Path(run_dir), read_run_json(Path(run_dir)), rows.drop(columns=["prompt", "run_dir"]))
               for run_dir, rows in data.records.groupby("run_dir", sort=False)]
    runs = Runs.of(records, prompts, folders)
    return render_html(compute_report(runs), runs.records, runs.prompts, viewer_url="/")
