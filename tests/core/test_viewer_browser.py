"""The viewer as a person sees it: the real ``framebench view`` in Debian's chromium, driven by
chromedriver (selenium) at 1280 x 800, reading the layout (bounding boxes), clicking through the
pages and saving a screenshot of each (``FRAMEBENCH_SCREENSHOTS=DIR`` keeps them there; the
docs' pictures are made that way)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import chromedriver_binary, chromium_binary, open_browser, serve_view
from viewer_helpers import embodied_run, framingqa_run, omit_run

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.subprocess]
WIDTH, HEIGHT = 1280, 800
EXTRA_MODELS = [f"m-{c}" for c in "defgh"]  # answering like m-a: eight models in all


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("browser")
    runs = [framingqa_run(root / m, m) for m in ("m-a", "m-b", "m-c")]
    runs += [framingqa_run(root / m, m, wrong_as="m-a") for m in EXTRA_MODELS]
    runs += [omit_run(root / "omit"), embodied_run(root / "embodied")]
    with serve_view(runs) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    chromium, chromedriver = chromium_binary(), chromedriver_binary()
    if chromium is None or chromedriver is None:
        pytest.skip("chromium or chromedriver not found (Debian: apt-get install -y chromium chromium-driver; "
                    "scripts/setup.sh --test installs both)")
    driver = open_browser(chromium, chromedriver, WIDTH, HEIGHT)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    folder = os.environ.get("FRAMEBENCH_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


def boxes(driver, selector: str) -> list[dict[str, float]]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.getBoundingClientRect().toJSON())",
        selector)


def page_width(driver) -> tuple[int, int]:
    """(the window's width, the page's scroll width): wider means the page scrolls sideways."""
    return tuple(driver.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]"))


def inside_window(box: dict[str, float]) -> bool:
    return box["left"] >= 0 and box["right"] <= WIDTH and box["width"] > 0


def test_records_list_fits_the_window_one_line_a_record(served, browser, screenshots):
    browser.get(served + "?suite=framingqa")
    browser.save_screenshot(str(screenshots / "viewer-records.png"))
    window, page = page_width(browser)
    assert window == WIDTH and page <= WIDTH
    for cell in ("question", "output", "answer", "gold", "mark"):
        found = boxes(browser, f"tr.record td.{cell}")
        assert len(found) == 50, cell  # the first page: 50 of the 63 FramingQA records
        assert all(inside_window(box) for box in found), (cell, found[0])
        assert found[0]["top"] < HEIGHT
    rows = boxes(browser, "tr.record")
    assert max(r["height"] for r in rows) < 32  # one line of text each
    assert sum(r["bottom"] <= HEIGHT for r in rows) >= 15  # a screenful shows many records


def test_context_grid_shows_every_model_and_scrolls_inside_its_box(served, browser, screenshots):
    three = "&".join(f"model={m}" for m in ("m-a", "m-b", "m-c+%5Bconstrained%5D"))
    browser.get(served + f"context?suite=framingqa&id=c1&{three}")
    browser.save_screenshot(str(screenshots / "viewer-context.png"))
    models = boxes(browser, "th.model")
    assert len(models) == 3 and all(inside_window(box) for box in models), models
    assert page_width(browser)[1] <= WIDTH
    # eight models: the grid scrolls inside its box, the page does not
    browser.get(served + "context?suite=framingqa&id=c1")
    assert len(boxes(browser, "th.model")) == 8
    box_width, box_scroll = browser.execute_script(
        "const b = document.querySelector('.grid-box'); return [b.clientWidth, b.scrollWidth]")
    assert page_width(browser)[1] <= WIDTH and box_width <= WIDTH
    assert box_scroll >= box_width


def test_click_from_list_to_record_to_context(served, browser, screenshots):
    browser.get(served + "?suite=framingqa&model=m-b")
    first = browser.find_element("css selector", "tr.record td.question a")
    first.click()
    assert browser.find_element("id", "record-title").text.startswith("c1:binary:")
    assert browser.find_elements("css selector", "#turns .turn")
    browser.save_screenshot(str(screenshots / "viewer-record.png"))
    browser.find_element("id", "context-link").click()
    assert browser.find_elements("css selector", "#variants tr.variant")
    assert browser.current_url.startswith(served + "context?")


def test_other_suites_pages(served, browser, screenshots):
    browser.get(served + "context?suite=omit&id=S1")
    assert [e.text for e in browser.find_elements("css selector", "th.model")] == ["m-a", "action", "omission"]
    browser.save_screenshot(str(screenshots / "viewer-omit.png"))
    browser.get(served + "record?suite=embodied&item=E1__neutral&model=oracle")
    assert "Planner steps" in browser.find_element("tag name", "body").text
    browser.save_screenshot(str(screenshots / "viewer-episode.png"))


def test_script_in_a_model_output_does_not_run(served, browser):
    browser.get(served + "record?suite=framingqa&model=m-b&item=c1:binary:correct/root/plain/Q1")
    assert "<script>window.fbPwned = 1" in browser.find_element("id", "output").text
    assert browser.execute_script("return typeof window.fbPwned") == "undefined"
    assert browser.title != "pwned"
    browser.get(served + "?q=fbPwned")
    assert browser.execute_script("return typeof window.fbPwned") == "undefined"
    assert len(browser.find_elements("css selector", "tr.record")) == 1


def test_control_the_same_output_unescaped_does_run(tmp_path, browser, monkeypatch):
    """Control for the test above: with autoescaping and the CSP off, this browser runs the
    output's script, so ``typeof window.fbPwned`` does tell."""
    import threading

    from werkzeug.serving import make_server

    from framebench.viewer import app as viewer_app
    from framebench.viewer.data import load_run_data

    unsafe = viewer_app._environment()
    unsafe.autoescape = False
    monkeypatch.setattr(viewer_app, "_environment", lambda: unsafe)
    monkeypatch.setattr(viewer_app, "CSP", "default-src * 'unsafe-inline'")
    server = make_server("127.0.0.1", 0, viewer_app.create_app(load_run_data([framingqa_run(tmp_path / "b", "m-b")])))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(f"http://127.0.0.1:{server.server_port}/record?suite=framingqa&model=m-b"
                    "&item=c1:binary:correct/root/plain/Q1")
        assert browser.execute_script("return window.fbPwned") == 1
    finally:
        server.shutdown()
        thread.join(timeout=10)
