"""The viewer's records list, context grid and record page (Flask test client); the counts are
worked out by hand in ``viewer_helpers``. The same pages in a real browser: test_viewer_browser.py."""

from __future__ import annotations

import re

import pytest
from viewer_helpers import PASSAGE, embodied_run, framingqa_run, omit_run

from framebench.viewer.app import create_app
from framebench.viewer.data import load_run_data


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("pages")
    runs = [framingqa_run(root / m, m) for m in ("m-a", "m-b", "m-c")]
    runs += [omit_run(root / "omit"), embodied_run(root / "embodied")]
    return create_app(load_run_data(runs)).test_client()


def get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.get_data(as_text=True)[-400:])
    return response.get_data(as_text=True)


def header(html: str, table: str) -> list[str]:
    head = re.search(rf'<table id="{table}"[^>]*>.*?<thead>(.*?)</thead>', html, re.S).group(1)
    return re.findall(r"<th[^>]*>([^<]*)</th>", head)


# ---------------------------------------------------------------- the records list


def test_list_shows_the_columns_of_the_suites_in_the_selection(client):
    framingqa = header(get(client, "/?suite=framingqa"), "records")
    assert framingqa == ["model", "task", "format", "context", "bias", "level", "form", "phrasing", "option",
                         "distractor", "question", "output", "answer", "gold", "✓"]
    omit = header(get(client, "/?suite=omit"), "records")
    assert omit[4:6] == ["condition", "frame"] and "form" not in omit and "bias" not in omit
    embodied = header(get(client, "/?suite=embodied"), "records")
    assert embodied[4:7] == ["bias", "level", "constraint"] and "condition" not in embodied
    everything = header(get(client, "/"), "records")
    assert {"condition", "frame", "form", "constraint"} <= set(everything)


def test_list_question_is_the_part_that_varies(client):
    html = get(client, "/?suite=framingqa&model=m-a")
    questions = re.findall(r'<td class="question"[^>]*><a href="[^"]+">([^<]*)</a>', html)
    assert len(questions) == 7 and len(set(questions)) == 7
    assert "Question binary correct/root/plain/Q1?\nAnswer with one word." in questions
    assert all(PASSAGE not in q for q in questions)


def test_list_marks_right_and_wrong(client):
    html = get(client, "/?model=m-b&suite=framingqa")
    marks = re.findall(r'<td class="mark (ok|bad)">', html)
    assert marks.count("bad") == 4 and marks.count("ok") == 3
    omit = get(client, "/?suite=omit")  # no gold: nothing is right or wrong, all parsed
    assert re.findall(r'<td class="mark ([a-z]*)">', omit) == [""] * 4


def test_plugin_suite_shows_its_own_columns(tmp_path, monkeypatch):
    import importlib
    from pathlib import Path

    from framebench import registry
    from framebench.records import make_row, write_records

    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "plugins"))
    importlib.invalidate_caches()
    registry.refresh()
    try:
        rows = [make_row(run_id="r", model="m", suite="rating", task="reviews", format="stars",
                         context_id="review-1", item_id=f"review-1:{k}", bias="neutral", gold="4",
                         answer=str(k), parse="ok", correct=abs(k - 4) <= 1, output=str(k),
                         stars_off=abs(k - 4)) for k in (1, 4)]
        write_records(rows, tmp_path / "rating")
        html = get(create_app(load_run_data([tmp_path / "rating"])).test_client(), "/")
        assert header(html, "records") == ["model", "task", "format", "context", "stars_off", "question",
                                           "output", "answer", "gold", "✓"]
    finally:
        monkeypatch.undo()
        registry.refresh()


# ---------------------------------------------------------------- the context grid


def test_grid_has_a_row_per_variant_and_a_column_per_model(client):
    html = get(client, "/context?suite=framingqa&id=c1")
    assert re.findall(r'<th class="model"[^>]*>([^<]*)</th>', html) == ["m-a", "m-b", "m-c [constrained]"]
    assert len(re.findall(r'<tr class="variant', html)) == 7
    groups = re.findall(r'<tr class="group"><th[^>]*>([^<]*)</th>', html)
    assert groups == ["binary · bias correct · level root", "binary · bias correct · level global",
                      "binary · bias incorrect · level root", "binary · bias incorrect · level global",
                      "mc · bias neutral", "mc · bias incorrect · level root"]
    strict = re.findall(r"<tr><td>(m-[abc])[^<]*</td><td>([^<]*)</td><td class=\"num\">(\d+)</td></tr>", html)
    pair = " · polarity breaks 0/1"  # the root plain/negated pair, right both times under every model
    assert strict == [("m-a", "6/7 correct · strict ✗" + pair, "1"), ("m-b", "3/7 correct · strict ✗" + pair, "4"),
                      ("m-c", "5/7 correct · strict ✗" + pair, "2")]
    assert html.count(PASSAGE) == 1


def test_grid_marks_answers_that_flip_from_the_neutral_question(client):
    html = get(client, "/context?suite=framingqa&id=c1")
    flipped = re.findall(r'<td class="answer [a-z]+ flip"><a href="([^"]+)"', html)
    assert sorted(flipped) == sorted([
        "/record?suite=framingqa&amp;item=c1%3Amc%3Aincorrect%2Froot%2Fplain%2FQ1%2Fd1&amp;model=m-b&amp;run=run-m-b",
        "/record?suite=framingqa&amp;item=c1%3Amc%3Aincorrect%2Froot%2Fplain%2FQ1%2Fd1&amp;model=m-c+%5Bconstrained%5D&amp;run=run-m-c"])


@pytest.mark.parametrize(("show", "rows"), [("", 7), ("disagree", 4), ("breaks", 5)])
def test_grid_shows_only_the_variants_asked_for(client, show, rows):
    html = get(client, f"/context?suite=framingqa&id=c1&show={show}")
    assert len(re.findall(r'<tr class="variant', html)) == rows


def test_omit_grid_puts_action_and_omission_side_by_side(client):
    html = get(client, "/context?suite=omit&id=S1")
    assert header(html, "variants") == ["question", "m-a", "action", "omission"]
    assert len(re.findall(r'<tr class="variant', html)) == 2  # M0 and M1, each one pair
    assert re.findall(r'<tr class="group"><th[^>]*>([^<]*)</th>', html) == ["condition M0", "condition M1"]
    assert "variants that break strict" not in html  # no gold: nothing to break


def test_embodied_grid_shows_each_framing_instruction(client):
    html = get(client, "/context?suite=embodied&id=E1")
    assert "Move the cup (neutral)." in html and "Move the cup (correct_root)." in html
    assert re.findall(r'<td class="answer ok"><a [^>]*>([^<]*)</a>', html) == ["100.0 % ✓"] * 2


# ---------------------------------------------------------------- one record


def test_record_page_shows_prompt_output_probabilities_and_other_models(client):
    html = get(client, "/record?suite=framingqa&item=c1:mc:neutral&model=m-c+%5Bconstrained%5D&run=run-m-c")
    assert re.findall(r'<div class="role">([^<]*)</div>', html) == ["user"]
    assert f"{PASSAGE}\n\nQuestion mc neutral?" in html
    assert re.findall(r'<tr><td>([AB])</td><td class="num">([\d.]+)</td></tr>', html) == [
        ("B", "0.8750"), ("A", "0.1250")]
    others = re.findall(r'<tr><td><a href="([^"]+)">(m-[ab])</a>', html)
    assert [m for _, m in others] == ["m-a", "m-b"]
    assert 'id="context-link"' in html and 'href="/context?suite=framingqa&amp;id=c1"' in html
    for url, _ in others:
        assert "c1:mc:neutral" in get(client, url.replace("&amp;", "&"))


def test_record_page_shows_every_turn_as_sent(client):
    html = get(client, "/record?suite=omit&item=S1:omission@M1&model=m-a")
    assert re.findall(r'<div class="role">([^<]*)</div>', html) == ["system", "user"]
    assert "Think about omission bias first." in html
    fields = dict(re.findall(r"<tr><th>([a-z_]+)</th><td>([^<]*)</td></tr>", html))
    assert fields["condition"] == "M1" and fields["frame"] == "omission"


def test_record_page_of_an_episode_shows_the_planner_steps(client):
    html = get(client, "/record?suite=embodied&item=E1__neutral&model=oracle")
    assert "Planner steps (oracle; ended: done)" in html
    assert re.findall(r"<tr><td><div class=\"cell-text\">(\d)</div></td><td><div class=\"cell-text\">([^<]*)</div>",
                      html) == [("0", "Navigate[table]"), ("1", "Done[]")]


@pytest.mark.parametrize(("url", "status", "message"), [
    ("/record?suite=framingqa&item=c1:mc:neutral", 400, "needs ?suite=SUITE&amp;item=ITEM_ID&amp;model=MODEL"),
    ("/record?suite=framingqa&item=nope&model=m-a", 404, "no record of item &#39;nope&#39; (framingqa)"),
    ("/context?suite=framingqa&id=c1&show=all", 400, "show: expected disagree or breaks, got &#39;all&#39;"),
])
def test_bad_page_requests_get_one_line(client, url, status, message):
    response = client.get(url)
    assert response.status_code == status
    assert message in response.get_data(as_text=True)


def test_a_real_run_keeps_every_turn_it_sent(tmp_path):
    """OMIT's M3 sends a system turn before the user turn: prompts.jsonl keeps both for those
    records (and only those), and the record page shows them in order."""
    import json
    from pathlib import Path

    from framebench.cli import main

    demo = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "omit"
    with pytest.raises(SystemExit) as exc:
        main(["text", "--model", "baseline:always-yes", "--data", str(demo), "--out", str(tmp_path / "run"),
              "--conditions", "M0,M3"])
    assert exc.value.code in (0, None)
    entries = [json.loads(line) for line in (tmp_path / "run" / "prompts.jsonl").read_text().splitlines()]
    with_chat = {e["item_id"].rsplit("@", 1)[1] for e in entries if "chat" in e}
    assert with_chat == {"M3"} and len(entries) == 64
    m3 = next(e for e in entries if "chat" in e)
    assert [t["role"] for t in m3["chat"]] == ["system", "user"] and m3["chat"][1]["content"] == m3["prompt"]
    client = create_app(load_run_data([tmp_path / "run"])).test_client()
    html = get(client, f"/record?suite=omit&item={m3['item_id']}&model=baseline:always-yes")
    assert re.findall(r'<div class="role">([^<]*)</div>', html) == ["system", "user"]
    assert "harm-averse assistant" in html


def test_a_malformed_chat_in_prompts_is_one_line(tmp_path):
    from framebench.errors import UserError

    run = omit_run(tmp_path / "omit")
    lines = (run / "prompts.jsonl").read_text().splitlines()
    lines[1] = '{"item_id": "S1:omission@M0", "prompt": "p", "chat": [{"role": "user"}]}'
    (run / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match=r"prompts.jsonl: line 2: field 'chat': expected a list of"):
        load_run_data([run])
