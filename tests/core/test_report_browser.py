"""report.html as a person sees it: a report over the demo sets (FramingQA generated and
constrained, rotated options, OMIT with its persona panel, robotics) opened in Debian's chromium at
1280 x 800, read by the elements' boxes (as the viewer's browser tests do). The finding is on the
first screen; no table or figure runs past the window unless it scrolls inside its own box; each
figure sits right after its table; the provenance comes last. ``FRAMEBENCH_SCREENSHOTS=DIR`` keeps
the screenshot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import chromedriver_binary, chromium_binary, open_browser
from text_helpers import cli_exit_code

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report-browser")
    runs = []

    def text(name: str, *args: str) -> None:
        assert cli_exit_code("text", "--out", str(tmp / name), "--quiet", *args) == 0
        runs.append(tmp / name)

    fqa = ["--data", str(DEMO / "framingqa")]
    text("yes", "--model", "baseline:always-yes", *fqa)
    text("random", "--model", "baseline:random@7", *fqa)
    text("random-constrained", "--model", "baseline:random@7", "--answer", "constrained", *fqa)
    text("rotated", "--model", "baseline:random@7", "--answer", "constrained", "--data", str(DEMO / "framingqa-rotated"))
    text("omit", "--model", "baseline:random@7", "--data", str(DEMO / "omit"), "--conditions", "M0,M1")
    assert cli_exit_code("embodied", "--planner", "oracle", "--episodes", str(DEMO / "robotics" / "episodes.json.gz"),
                         "--out", str(tmp / "emb"), "--limit", "1") == 0
    runs += [tmp / "emb", DEMO / "omit" / "personas"]
    assert cli_exit_code("score", *map(str, runs), "--out", str(tmp / "report")) == 0
    return tmp / "report" / "report.html"


@pytest.fixture(scope="module")
def browser():
    chromium, chromedriver = chromium_binary(), chromedriver_binary()
    if chromium is None or chromedriver is None:
        pytest.skip("chromium or chromedriver not found (Debian: apt-get install -y chromium chromium-driver; "
                    "scripts/setup.sh --test installs both)")
    driver = open_browser(chromium, chromedriver, WIDTH, HEIGHT)
    yield driver
    driver.quit()


# every table and figure image: its box, and the box of the nearest ancestor that scrolls sideways
BOXES = """
const scroller = e => { for (let p = e.parentElement; p; p = p.parentElement) {
  const x = getComputedStyle(p).overflowX; if (x === 'auto' || x === 'scroll') return p; } return null; };
return Array.from(document.querySelectorAll(arguments[0])).filter(e => e.getClientRects().length).map(e => {
  const s = scroller(e);
  return {box: e.getBoundingClientRect().toJSON(), scroller: s && s.getBoundingClientRect().toJSON(),
          what: (e.closest('section, details') || e).querySelector('h3, h2, summary, figcaption')?.textContent || ''};
});"""


def test_the_finding_is_on_the_first_screen(page, browser):
    browser.get(page.as_uri())
    shots = os.environ.get("FRAMEBENCH_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(shots) / "report-first-screen.png"))
    # the first section, or the second after the one-line Cautions (the fixture's embodied run is --limit 1)
    headings = [browser.find_element("id", f"section-{n}").text for n in (1, 2)]
    assert headings in (["Finding", "Headline"], ["Cautions", "Finding"])
    first = browser.find_element("css selector", "ul.finding > li").rect
    assert first["y"] + first["height"] <= HEIGHT  # its first model, every line of it, without scrolling
    assert "framing effect" in browser.find_element("css selector", "ul.finding").text


def test_nothing_runs_past_the_window_unless_it_scrolls_in_its_box(page, browser):
    browser.get(page.as_uri())
    # open every folded block (the drill-down, the provenance) so its tables are laid out too
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    window, page_width = browser.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
    assert window == WIDTH and page_width <= WIDTH
    found = browser.execute_script(BOXES, "table, figure img")
    assert len(found) > 20
    wide = [f for f in found if f["box"]["right"] > WIDTH]
    assert wide, "no table is wider than the window: this report does not test scrolling"
    for f in found:
        holder = f["box"] if f["box"]["right"] <= WIDTH else f["scroller"]
        assert holder is not None and holder["left"] >= 0 and holder["right"] <= WIDTH, f["what"]
    images = [f for f in browser.execute_script(BOXES, "figure img")]
    assert images and all(f["box"]["right"] <= WIDTH for f in images)  # figures shrink to fit


def test_figures_follow_their_tables_and_the_provenance_comes_last(page, browser):
    browser.get(page.as_uri())
    order = browser.execute_script("""
return Array.from(document.querySelectorAll('h2, h3, figcaption, details.provenance')).map(e =>
  [e.tagName, e.tagName === 'DETAILS' ? 'provenance' : e.textContent.trim(), e.getBoundingClientRect().top]);""")
    names = [name for _, name, _ in order]
    tops = [top for _, _, top in order]
    assert tops == sorted(tops)  # document order is top-to-bottom order
    binary = next(i for i, n in enumerate(names) if n.startswith("Binary yes/no: context-level accuracy"))
    assert names[binary + 1] == "Binary yes/no: mean and strict accuracy (cf. FramingQA Fig. 3)"
    rates = next(i for i, n in enumerate(names) if n.startswith("OMIT: framing-invariant bias rates"))
    assert names[rates + 1] == "OMIT: OBR by condition (cf. OMIT Fig. 4)"
    shifts = names.index("Shift of P(gold) under framing (percentage points)")
    assert names[shifts + 1] == "Framing susceptibility: shift of P(gold), with 95 % intervals"
    assert names[-2:] == ["Provenance", "provenance"] and "Per-context drill-down" in names[:-2]
