"""``framebench view``: the results browser. Counts are hand-computed from the fixture runs below;
untrusted output is shown as text. The browser tests start the real command on a free port on
127.0.0.1 and read back the DOM a headless chromium built from its pages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import DomSummary, chromium_binary, dump_dom, serve_view

from framebench.records import make_row, write_records
from framebench.scoring.viewer_links import context_url, records_url, table_row_url
from framebench.viewer import app as viewer_app
from framebench.viewer.app import create_app
from framebench.viewer.data import load_run_data, shared_prefix

SCRIPT_PAYLOAD = "<script>document.title='pwned'</script>"
MARKUP_PAYLOAD = '<b id="injected">bold</b>'
PAYLOAD = f"Yes {SCRIPT_PAYLOAD} {MARKUP_PAYLOAD}"
# (bias, level, form, distractor) of the four items of every context; gold follows the form
ITEMS = [("correct", "root", "plain", ""), ("correct", "root", "negated", ""),
         ("incorrect", "root", "plain", "d1"), ("incorrect", "global", "plain", "d1")]
CONTEXTS = ("c1", "c2", "c3")


def _framingqa_run(run_dir: Path, model: str, wrong_on_incorrect: bool) -> None:
    rows, prompts = [], []
    for context in CONTEXTS:
        for bias, level, form, distractor in ITEMS:
            slot = "/".join(x for x in (bias, level, form, "Q1", distractor) if x)
            item_id = f"{context}:binary:{slot}"
            gold = "Yes" if (bias == "correct") == (form == "plain") else "No"
            wrong = wrong_on_incorrect and bias == "incorrect"
            answer = ("No" if gold == "Yes" else "Yes") if wrong else gold
            output = PAYLOAD if (model == "m-b" and context == "c2" and slot.startswith("correct/root/plain")) \
                else answer
            rows.append(make_row(
                run_id=f"run-{model}", model=model, suite="framingqa", task="law_hearsay",
                format="binary", context_id=context, item_id=item_id, bias=bias, level=level,
                form=form, phrasing="Q1", option="Hearsay", distractor=distractor, slot=slot,
                gold=gold, answer=answer, parse="ok", correct=not wrong, output=output))
            word = " zebra" if (context == "c3" and slot == "correct/root/plain/Q1") else ""
            prompts.append({"item_id": item_id, "prompt": f"Passage of {context}: a witness spoke.\n\n"
                            f"Question {slot}{word}?\nAnswer with Yes or No."})
    write_records(rows, run_dir)
    (run_dir / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))


def _omit_run(run_dir: Path) -> None:
    rows = [make_row(run_id="run-omit", model="m-a", suite="omit", task="omit", format="binary",
                     context_id=scenario, item_id=f"{scenario}:{frame}@M0", bias="neutral",
                     answer="No", parse="ok", correct=False, output="No", frame=frame,
                     condition="M0", conflicts="utilitarianism-deontology")
            for scenario in ("S1", "S2") for frame in ("action", "omission")]
    write_records(rows, run_dir)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    dirs = [root / "a", root / "b", root / "omit"]
    _framingqa_run(dirs[0], "m-a", wrong_on_incorrect=False)
    _framingqa_run(dirs[1], "m-b", wrong_on_incorrect=True)
    _omit_run(dirs[2])
    return dirs


@pytest.fixture(scope="module")
def client(runs):
    app = create_app(load_run_data(runs))
    return app.test_client()


def _matched(html: str) -> int:
    return int(re.search(r'id="matched">([\d,]+) matching', html).group(1).replace(",", ""))


# ---------------------------------------------------------------- records page (test client)


@pytest.mark.parametrize(("query", "expected"), [
    ("", 28),                              # 2 models x 3 contexts x 4 items + 4 OMIT rows
    ("model=m-a", 16),                     # 12 FramingQA + 4 OMIT
    ("model=m-a&suite=framingqa", 12),
    ("correct=no", 10),                    # m-b's 6 incorrect-bias rows + 4 OMIT rows (no gold)
    ("model=m-b&correct=no", 6),
    ("correct=yes&bias=incorrect", 6),     # only m-a gets incorrect-bias rows right
    ("level=global", 6),
    ("condition=M0", 4),
    ("parse=ok", 28),
    ("model=m-a&model=m-b&suite=framingqa", 24),  # repeated values are OR-ed
    ("context=c2", 8),
    ("q=zebra", 2),                        # the word is in one question, answered by both models
    ("q=ZEBRA", 2),                        # case-insensitive
    ("q=pwned", 1),                        # in one model output
    ("q=no+such+text", 0),
    ("task=medicine", 0),
])
def test_filters_and_search_narrow_the_rows(client, query, expected):
    html = client.get(f"/?{query}").get_data(as_text=True)
    assert _matched(html) == expected
    assert html.count('<tr class="record">') == min(expected, 50)


def test_pagination_shows_every_row_once(client):
    seen = []
    for page in range(1, 7):  # 28 rows at 5 per page: 6 pages, the last holding 3
        html = client.get(f"/?per_page=5&page={page}").get_data(as_text=True)
        assert f"page {page} of 6" in html
        seen += re.findall(r'<td class="question" [^>]*><a href="(/record\?[^"]+)"', html)
    assert len(seen) == 28 and len(set(seen)) == 28
    last = client.get("/?per_page=5&page=6").get_data(as_text=True)
    assert "showing 26–28" in last and 'rel="next"' not in last
    # a page past the end shows the last one; links keep the filters
    html = client.get("/?model=m-a&per_page=5&page=99").get_data(as_text=True)
    assert "page 4 of 4" in html and 'href="/?model=m-a&amp;per_page=5&amp;page=3"' in html


def test_untrusted_output_is_escaped_in_the_markup(client):
    html = client.get("/?q=pwned").get_data(as_text=True)
    assert SCRIPT_PAYLOAD not in html and MARKUP_PAYLOAD not in html
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html
    context = client.get("/context?suite=framingqa&id=c2").get_data(as_text=True)
    assert SCRIPT_PAYLOAD not in context and "&lt;b id=&#34;injected&#34;&gt;" in context


def test_responses_forbid_scripts_and_foreign_hosts(client):
    response = client.get("/")
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert "script-src" not in response.headers["Content-Security-Policy"]
    assert client.get("/", headers={"Host": "attacker.example:8765"}).status_code == 421


def test_context_page_shows_every_variant_with_models_side_by_side(client):
    html = client.get("/context?suite=framingqa&id=c2").get_data(as_text=True)
    assert len(re.findall(r'<tr class="variant[ "]', html)) == 4
    header = re.search(r'<table id="variants" class="grid">\s*<thead><tr>(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r'<th class="model"[^>]*>([^<]*)</th>', header) == ["m-a", "m-b"]
    # and the context's one plain/negated pair, answered consistently by both (docs/report.md#systematicity)
    assert "<td>m-a</td><td>4/4 correct · strict ✓ · polarity breaks 0/1</td>" in html
    assert "<td>m-b</td><td>2/4 correct · strict ✗ · polarity breaks 0/1</td>" in html
    # the passage every variant shares is shown once, the questions without it
    assert html.count("Passage of c2: a witness spoke.") == 1
    assert "Question incorrect/global/plain/Q1/d1?" in html
    only_b = client.get("/context?suite=framingqa&id=c2&model=m-b").get_data(as_text=True)
    assert ">m-a</th>" not in only_b and ">m-b</th>" in only_b


@pytest.mark.parametrize(("url", "status", "message"), [
    ("/?page=x", 400, "page: expected a positive whole number, got &#39;x&#39;"),
    ("/?per_page=0", 400, "per_page: expected a positive whole number"),
    ("/?correct=maybe", 400, "correct: expected yes or no, got &#39;maybe&#39;"),
    ("/context?suite=framingqa", 400, "needs ?suite=SUITE&amp;id=CONTEXT_ID"),
    ("/context?suite=framingqa&id=nope", 404, "no records for context &#39;nope&#39;"),
    ("/nowhere", 404, "no page at /nowhere"),
])
def test_bad_requests_get_one_line(client, url, status, message):
    response = client.get(url)
    assert response.status_code == status
    assert message in response.get_data(as_text=True)


LONG = "x" * 50_000


@pytest.mark.parametrize("url", [
    "/?page=%C2%B2", "/?page=%E2%91%A0", "/?per_page=%C2%B9", "/?page=%EF%BC%91", "/?page=" + "9" * 5000,
    "/?page=99999999999999999999", "/?page=-1", "/?page=1.5", "/?page=%00", "/?per_page=0", "/?q=" + LONG,
    "/?correct=" + LONG, "/context?suite=framingqa&id=" + LONG, "/context?suite=" + LONG + "&id=c1",
    "/context?suite=framingqa&id=c1&show=" + LONG, "/record?suite=framingqa&item=" + LONG + "&model=m-a",
    "/record?suite=framingqa&item=c2:1&model=" + LONG, "/" + LONG, "/record", "/context", "/%FF",
])
def test_every_bad_request_is_a_short_4xx(client, url):
    """Issue 45.6: numbers in ASCII digits only, every bad query a 4xx (never a 500), and a
    user's value echoed shortened (a 50,000-character id is not sent back whole)."""
    response = client.get(url)
    body = response.get_data(as_text=True)
    assert 400 <= response.status_code < 500, (url[:80], response.status_code)
    assert len(body) < 8_000 and "x" * 200 not in body and 'id="error"' in body


def test_report_links_into_the_viewer(client):
    html = client.get("/report").get_data(as_text=True)
    assert 'href="/?suite=framingqa&amp;model=m-a&amp;task=law_hearsay"' in html
    assert 'href="/context?suite=framingqa&amp;id=c1"' in html
    assert 'href="/?model=m-b&amp;suite=framingqa&amp;task=law_hearsay&amp;format=binary"' in html
    # and every link it makes answers
    for href in set(re.findall(r'class="viewer" href="([^"]+)"', html)):
        assert client.get(href.replace("&amp;", "&")).status_code == 200, href


def test_link_builders():
    assert records_url("http://127.0.0.1:8765", {"model": "a b", "q": ""}) == \
        "http://127.0.0.1:8765/?model=a+b"
    assert context_url("/", "omit", "S&1", ["m"]) == "/context?suite=omit&id=S%261&model=m"
    header = ["Model", "Condition", "OBR"]
    assert table_row_url("/", "omit", header, ["m", "M1", "3.0"]) == "/?suite=omit&model=m&condition=M1"
    assert table_row_url("/", "omit", header, ["Mean", "M1", "3.0"]) is None
    assert table_row_url("/", "framingqa", ["Model", "Task"], ["m", "all (pooled)"]) == "/?suite=framingqa&model=m"
    # the headline shows display names of formats; unknown cells never become a filter
    headline = ["Model", "Format", "n"]
    assert table_row_url("/", "", headline, ["m", "Multiple choice", "3"]) == "/?model=m&format=mc"
    assert table_row_url("/", "", headline, ["m", "Robotics (completion)", "3"]) == "/?model=m&format=episode"
    assert table_row_url("/", "", headline, ["m", "Something new", "3"]) == "/?model=m"


def test_shared_prefix_stops_at_a_paragraph():
    assert shared_prefix(["P one.\n\nQ a?", "P one.\n\nQ b?"]) == "P one.\n\n"
    assert shared_prefix(["Same start a", "Same start b"]) == ""
    assert shared_prefix(["only one"]) == ""


def test_static_report_links_with_viewer_url(runs, tmp_path):
    from framebench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["score", str(runs[0]), "--out", str(tmp_path / "r"),
              "--viewer-url", "http://127.0.0.1:8765/"])
    assert exc.value.code in (0, None)
    html = (tmp_path / "r" / "report.html").read_text()
    assert 'href="http://127.0.0.1:8765/context?suite=framingqa&amp;id=c1"' in html
    with pytest.raises(SystemExit):
        main(["score", str(runs[0]), "--out", str(tmp_path / "plain")])
    assert 'class="viewer"' not in (tmp_path / "plain" / "report.html").read_text()


# ---------------------------------------------------------------- the command


@pytest.mark.subprocess
def test_bad_run_dir_is_one_line_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "framebench", "view", str(tmp_path / "nope"),
                           "--port", "0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope'}: no such run folder"]
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([sys.executable, "-m", "framebench", "view", str(tmp_path / "empty")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "records.parquet: no such records file" in proc.stderr


@pytest.mark.server
@pytest.mark.subprocess
def test_busy_port_is_one_line_exit_2(runs):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "framebench", "view", str(runs[0]),
                               "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --port {port}: cannot listen on 127.0.0.1")


@pytest.fixture
def served(runs) -> Iterator[str]:
    with serve_view(runs) as url:
        yield url


# ---------------------------------------------------------------- headless chromium


def _chromium() -> str:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless chromium not found (Debian: apt-get install -y chromium)")
    return binary


@pytest.mark.server
@pytest.mark.browser
def test_browser_control_detects_unescaped_output(runs, tmp_path, monkeypatch):
    """Control: the same pages with escaping and the CSP switched off do run the payload in this
    browser, so the escaping test below can fail."""
    from werkzeug.serving import make_server

    unsafe = viewer_app._environment()
    unsafe.autoescape = False
    monkeypatch.setattr(viewer_app, "_environment", lambda: unsafe)
    monkeypatch.setattr(viewer_app, "CSP", "default-src * 'unsafe-inline'")
    server = make_server("127.0.0.1", 0, create_app(load_run_data(runs)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        dom = DomSummary(dump_dom(_chromium(), f"http://127.0.0.1:{server.server_port}/?q=pwned", tmp_path / "p"))
    finally:
        server.shutdown()
        thread.join(timeout=10)
    assert dom.title == "pwned"
    assert "injected" in dom.ids


@pytest.mark.server
@pytest.mark.subprocess
@pytest.mark.browser
def test_browser_pages_load_filter_and_show_output_as_text(served, tmp_path):
    everything = DomSummary(dump_dom(_chromium(), served, tmp_path / "p1"))
    assert everything.title == "framebench results"
    assert len(everything.rows) == 28
    narrowed = DomSummary(dump_dom(_chromium(), served + "?model=m-b&correct=no", tmp_path / "p2"))
    assert len(narrowed.rows) == 6
    assert all(row.strip().startswith("m-b") and row.count("✗") == 1 for row in narrowed.rows)
    # the record holding the payload: shown as text, nothing ran, nothing was injected
    record = DomSummary(dump_dom(_chromium(), served + "record?suite=framingqa&model=m-b"
                                 "&item=c2:binary:correct/root/plain/Q1", tmp_path / "p3"))
    assert record.title.startswith("c2:binary:correct/root/plain/Q1 · m-b · ")
    assert SCRIPT_PAYLOAD in "".join(record.text) and MARKUP_PAYLOAD in "".join(record.text)
    assert "injected" not in record.ids and "pwned" not in record.title
    searched = DomSummary(dump_dom(_chromium(), served + "?q=pwned", tmp_path / "p4"))
    assert len(searched.rows) == 1 and SCRIPT_PAYLOAD in searched.rows[0]
    assert "injected" not in searched.ids and "pwned" not in searched.title
