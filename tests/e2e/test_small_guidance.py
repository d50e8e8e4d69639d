"""Small guidance: a folder of run folders named where one run folder is expected, and the Inspect
importer without Inspect AI installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from text_helpers import cli_exit_code, framingqa_items, write_items


def test_scoring_a_folder_of_runs_names_the_runs_inside(tmp_path, capsys):
    data = write_items(tmp_path / "data", framingqa_items(2, 2))
    assert cli_exit_code("text", "--model", "baseline:always-no", "--data", str(data), "--out",
                         str(tmp_path / "demo" / "runs" / "one"), "--quiet") == 0
    capsys.readouterr()
    assert cli_exit_code("score", str(tmp_path / "demo"), "--out", str(tmp_path / "r")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no such records file" in err
    assert f"holds run folders further down: {tmp_path / 'demo' / 'runs' / 'one'}" in err


@pytest.mark.subprocess
def test_import_inspect_without_inspect_ai_is_one_line_with_the_install_command(tmp_path):
    log = tmp_path / "x.eval"
    log.write_bytes(b"not a log")
    code = ("import sys; sys.modules['inspect_ai'] = None; sys.modules['inspect_ai.log'] = None\n"
            "from framebench.cli import main\n"
            f"main(['import', 'inspect', {str(log)!r}, '--data', 'datasets/demo/framingqa', '--out', {str(tmp_path / 'o')!r}])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'framebench-eval[inspect]'" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()
