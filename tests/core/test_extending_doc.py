"""docs/extending.md shows the tested plugin's code: each block headed by a path comment is that
file, byte for byte (so the worked examples cannot drift from what tests/core/test_plugins.py runs)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```(?:python|ini)\n# (tests/plugins[\w]*/\S+)\n(.*?)```", re.DOTALL)


def test_every_example_is_the_plugin_file():
    doc = (REPO / "docs" / "extending.md").read_text()
    shown = {path: body for path, body in BLOCK.findall(doc)}
    assert len(shown) >= 4, sorted(shown)
    for path, body in shown.items():
        assert (REPO / path).read_text() == body, f"docs/extending.md: the block for {path} differs from the file"
    plugin_files = {str(p.relative_to(REPO)) for p in (REPO / "tests" / "plugins" / "framebench_toy").glob("*.py")
                    if p.name != "__init__.py"}
    assert plugin_files <= set(shown), f"not shown in docs/extending.md: {sorted(plugin_files - set(shown))}"
