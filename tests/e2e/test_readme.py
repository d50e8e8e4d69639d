"""Every offline command the README shows is run here, exactly as written.

Fenced ```bash blocks are run line by line (``framebench ...`` lines, from an empty scratch folder:
the demo data is named ``demo:NAME``, installed with framebench; every file a ```toml FILE block shows
is written there first);
blocks tagged ```bash no-test need a GPU, an API or Docker.
The two fresh-machine commands in the first lines are checked for their shape here and run for real
by ``scripts/fresh_check.sh`` (new clone, new venv). The demo itself runs in test_demo.py.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
DEMO_CMD = "bash scripts/setup.sh && .venv/bin/framebench demo"
TEST_CMD = "bash scripts/setup.sh --test && .venv/bin/python -m pytest"


def offline_commands() -> list[str]:
    commands = []
    for tag, body in re.findall(r"```(bash[^\n]*)\n(.*?)```", README, flags=re.S):
        if "no-test" in tag:
            continue
        commands += [line.strip() for line in body.splitlines() if line.strip().startswith("framebench ")]
    return commands


def readme_files() -> dict[str, str]:
    """The files the README shows in full (```toml FILE blocks): name -> text."""
    return dict(re.findall(r"```toml ([\w.-]+)\n(.*?)```", README, flags=re.S))


def test_first_lines_give_the_two_fresh_machine_commands():
    head = "\n".join(README.splitlines()[:6])
    assert f"`{DEMO_CMD}`" in head
    assert f"`{TEST_CMD}`" in head


def test_ci_runs_exactly_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    assert TEST_CMD in [line.strip() for line in ci.splitlines()]


def test_readme_has_offline_commands_to_run():
    assert len(offline_commands()) >= 5


@pytest.mark.subprocess
def test_offline_readme_commands_run(tmp_path):
    for name, text in readme_files().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    for command in offline_commands():
        args = shlex.split(command)[1:]
        proc = subprocess.run([sys.executable, "-m", "framebench", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    report = tmp_path / "runs" / "report"
    for name in ("report.json", "report.md", "report.html"):
        assert (report / name).stat().st_size > 0


@pytest.mark.parametrize("command", ["framebench --help"] + sorted({
    " ".join(shlex.split(c)[:3 if shlex.split(c)[1] in ("build", "partnr") else 2]) + " --help"
    for c in offline_commands()
}))
@pytest.mark.subprocess
def test_help_works(command):
    proc = subprocess.run([sys.executable, "-m", "framebench", *shlex.split(command)[1:]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Usage" in proc.stdout
