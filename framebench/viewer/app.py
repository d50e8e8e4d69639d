"""The results browser as a Flask app: the records list (filters, search, pagination, one line
per record), the context grid (a row per variant, a column per model), one record's page and the
report.

Everything shown comes from records, prompts and model output — untrusted — and reaches the page
only through Jinja2 autoescaping (our own environment, autoescape on for every template). Every
response carries a Content-Security-Policy without scripts or external loads; the app answers
only requests addressed to the loopback host it listens on (no DNS rebinding).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from flask import Flask, Response, request

from framebench.bounds import shorten, shown
from framebench.errors import UserError
from framebench.scoring import viewer_links as links
from framebench.viewer import pages
from framebench.viewer.data import RunData, choice_filters, parse_query

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
LOCAL_HOSTS = ("127.0.0.1", "localhost")
GRID_SHOW = ("", "disagree", "breaks")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("framebench.viewer", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals["records_url"] = lambda params: links.records_url("/", params)
    env.globals["context_url"] = lambda suite, cid: links.context_url("/", suite, cid)
    return env


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
        return page("error.html.j2", status=404, message=f"no page at {shorten(request.path)}")

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
        columns = pages.list_columns(data, shown.rows, data.suites_in(query))
        rows = [pages.list_row(data, record, columns) for record in shown.rows.to_dict("records")]
        return page(
            "records.html.j2",
            filters=[{"name": name, "choices": data.choices[name],
                      "selected": query.filters.get(name, [])} for name in choice_filters()],
            context_filter=query.filters.get("context", []),
            text=query.text,
            per_page=query.per_page,
            columns=columns,
            rows=rows,
            page=shown,
            page_url=lambda n: links.records_url("/", {**kept, "page": str(n)}),
        )

    @app.get("/context")
    def context_page() -> Response:
        suite = request.args.get("suite", "")
        context_id = request.args.get("id", "")
        show = request.args.get("show", "")
        if not suite or not context_id:
            raise UserError("a context page needs ?suite=SUITE&id=CONTEXT_ID")
        if show not in GRID_SHOW:
            raise UserError(f"show: expected disagree or breaks, got {shown(show)}")
        models = request.args.getlist("model")
        rows = data.context(suite, context_id, models)
        if rows.empty:
            return page("error.html.j2", status=404,
                        message=f"no records for context {shown(context_id)} of suite {shown(suite)}")
        return page("context.html.j2", suite=suite, context_id=context_id, task=str(rows["task"].iloc[0]),
                    passage=data.passage(suite, context_id), grid=pages.context_grid(data, suite, rows, show),
                    show=show, show_url=lambda value: links.context_url("/", suite, context_id, models)
                    + (f"&show={value}" if value else ""),
                    list_url=links.records_url("/", {"suite": suite, "context": context_id}))

    @app.get("/record")
    def record_page() -> Response:
        suite, item_id, model = (request.args.get(name, "") for name in ("suite", "item", "model"))
        if not suite or not item_id or not model:
            raise UserError("a record page needs ?suite=SUITE&item=ITEM_ID&model=MODEL")
        found = pages.find_record(data, suite, item_id, model, request.args.get("run", ""))
        if found is None:
            return page("error.html.j2", status=404,
                        message=f"no record of item {shown(item_id)} ({shorten(suite)}) by model {shown(model)}")
        return page("record.html.j2", **pages.record_page(data, *found))

    @app.get("/report")
    def report_page() -> Response:
        if "html" not in report_cache:
            report_cache["html"] = _render_report(data)
        return Response(report_cache["html"], mimetype="text/html")

    return app


def _render_report(data: RunData) -> str:
    """report.html over the served records, its tables and drill-down linking into the viewer."""
    from framebench.run_folder import Runs, duplicate_key, read_run_json
    from framebench.scoring.html import render_html
    from framebench.scoring.report import compute_report

    records = data.records.drop(columns=["prompt", "run_dir"])
    if records.duplicated(duplicate_key()).any():
        raise UserError("these runs answer the same items twice: score them separately "
                        "(the records pages still show every row)")
    prompts = dict(zip(data.records["item_id"], data.records["prompt"], strict=True))
    folders = [(Path(run_dir), read_run_json(Path(run_dir)), rows.drop(columns=["prompt", "run_dir"]))
               for run_dir, rows in data.records.groupby("run_dir", sort=False)]
    runs = Runs.of(records, prompts, folders)
    return render_html(compute_report(runs), runs.records, runs.prompts, viewer_url="/")
