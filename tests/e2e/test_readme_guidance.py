"""What a new user needs from the README beyond runnable commands: how to reach ``framebench``,
how long things take (docs/speed.md), one definition of replans (docs/report.md), references, honest
"offline" wording, and a README short enough to read, in the order a user needs it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SPEED = (REPO / "docs" / "speed.md").read_text(encoding="utf-8")
REPORT = (REPO / "docs" / "report.md").read_text(encoding="utf-8")
DEMO = (REPO / "docs" / "demo.md").read_text(encoding="utf-8")
PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"


def test_first_line_does_not_claim_setup_is_offline():
    first = README.splitlines()[2]
    assert "package index" in first and "offline" in first


def test_the_venv_is_activated_before_the_first_bare_framebench_example():
    activation = README.index("source .venv/bin/activate")
    blocks = [m.start() for m in re.finditer(r"```bash\n(?:.*\n)*?framebench ", README)]
    assert blocks and activation < blocks[0] + README[blocks[0]:].index("framebench ")
    assert ".venv/bin/framebench" in README.split("## Commands")[0]


def test_expected_durations_are_given():
    section = SPEED.split("## How long things take", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) >= 6 and all(re.search(r"\d+ (s|min)", row) for row in rows[:-1])
    assert "DEMO_" not in section


def test_replans_has_one_definition_matching_the_runner():
    assert "at most 3 planner calls" in " ".join(DEMO.split())
    definition = " ".join(REPORT.split("| `replans` (records) |", 1)[1].split("|", 1)[0].split())
    assert "first call and the final `Done[]` call included" in definition
    assert "at most T + 1 calls" in definition and "null" in definition
    assert not any("caps the LLM planner at 2 replans" in text for text in (README, DEMO, REPORT))


def test_papers_are_cited_with_references():
    refs = README.split("## References", 1)[1]
    if PAPERS.exists():  # titles and authors as the shared copies give them
        for name in ("framingqa.txt", "omit.txt"):
            title = (PAPERS / name).read_text(encoding="utf-8").splitlines()[0].strip()
            assert title in " ".join(refs.split())
    assert "Sihyeon Lee" in refs and "arXiv 2308.11462" in refs and "arXiv 2505.14107" in refs


def test_the_readme_is_a_users_guide_in_order():
    """At most about 200 lines; the fresh-machine commands, what it measures, the demo, running
    your own model, commands, then the docs index (benchmarks and internals live in docs/)."""
    assert len(README.splitlines()) <= 200
    headings = [line for line in README.splitlines() if line.startswith("## ")]
    order = ["## What framebench measures", "## What the demo shows", "## Run your own model on the full benchmark",
             "## Commands", "## Docs"]
    assert [h for h in headings if h in order] == order
    assert not re.search(r"issue #\d+|\b[0-9a-f]{7}\b commit|this session|this round", README)
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    for page in sorted((REPO / "docs").glob("*.md")):
        assert page.name == "README.md" or f"({page.name})" in index, page.name
