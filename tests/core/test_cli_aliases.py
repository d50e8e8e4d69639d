"""Renamed options keep their old spelling for one release (issue 52): read with the new name, a
warning, and nothing of it in ``--help``; ``--batch-size`` stays the text run's (prompts per
forward pass), and the call size is ``--call-size`` everywhere else."""

from __future__ import annotations

import pytest
from test_plugins import cli

from framebench.cli.aliases import RENAMED_OPTIONS, renamed


def test_old_spellings_are_read_as_the_new_ones():
    assert renamed(["build", "omit", "--batch-size", "4", "--out", "x"]) == (
        ["build", "omit", "--call-size", "4", "--out", "x"],
        ["framebench build omit --batch-size is now --call-size (the old name goes in the next release)"])
    assert renamed(["sheets", "draft", "--batch-size=2"])[0] == ["sheets", "draft", "--call-size=2"]
    # only under the renamed commands, and not past "--"
    for argv in (["text", "--batch-size", "4"], ["build", "omit", "--", "--batch-size"]):
        assert renamed(argv) == (argv, [])


@pytest.mark.parametrize("path", sorted({path for path, _ in RENAMED_OPTIONS}))
def test_help_shows_only_the_new_name(path, capsys):
    assert cli([*path, "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--call-size" in shown and "--batch-size" not in shown


def test_the_old_spelling_still_checks_its_value(tmp_path, capsys):
    assert cli(["build", "omit", "--source", str(tmp_path), "--batch-size", "0", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("warning: framebench build omit --batch-size is now --call-size")
    assert err[1].startswith("error: --call-size: ") and len(err) == 2
