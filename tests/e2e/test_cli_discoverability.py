"""What a new user can find from the command line: ``--version``, ``framebench list ...``, planner
specs named in errors, and help that shows flags plainly and is not cut short."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from framebench import __version__
from framebench.cli import app, main

REPO = Path(__file__).resolve().parents[2]
EPISODES = REPO / "datasets" / "demo" / "robotics" / "episodes.json.gz"


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return exc.value.code or 0, out, err


def _listing(what: str, capsys) -> list[list[str]]:
    code, out, err = run_cli(["list", what], capsys)
    assert code == 0 and err == ""
    return [re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines()]


def test_version(capsys):
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0
    assert re.fullmatch(rf"framebench {re.escape(__version__)}(\+g[0-9a-f]+(\.dirty)?)?\n", out)


def test_list_tasks_and_conditions(capsys):
    tasks = _listing("tasks", capsys)
    assert [name for name, _ in tasks] == ["law_issue_spotting", "law_hearsay", "finance",
                                           "medicine", "omit", "robotics"]
    assert dict(tasks)["robotics"].startswith("[embodied; episode]")
    conditions = dict(_listing("conditions", capsys))
    assert list(conditions) == ["M0", "M1", "M2", "M3", "M4"]
    assert conditions["M1"] == "principle reasoning before committing (paper M1)"


def test_list_engines_and_planners(capsys):
    engines = [name for name, _ in _listing("engines", capsys)]
    assert engines[:3] == ["smollm2", "hf:<path or hub id>", "openai:<model>"]
    assert {"baseline:always-yes", "baseline:always-no", "baseline:random",
            "symbolic", "habitat"} <= set(engines)
    planners = [name for name, _ in _listing("planners", capsys)]
    assert planners == ["oracle", "script:FILE", "smollm2", "hf:<path or hub id>", "openai:<model>",
                        "vllm:<path or hub id>", "choice:MODEL"]


def test_every_listed_planner_kind_is_accepted_and_baselines_are_not(tmp_path):
    """Specs are resolved without loading anything: a script file and a local model folder must
    exist (issue 45.3: a sweep plan is resolved whole before its first run); a hub id is taken."""
    from framebench.embodied.planners import check_planner_spec
    from framebench.errors import UserError

    (tmp_path / "plan.json").write_text('{"ep-1": ["Navigate[table_14]"]}', encoding="utf-8")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}", encoding="utf-8")
    for spec in ("oracle", f"script:{tmp_path / 'plan.json'}", "smollm2", f"hf:{tmp_path / 'model'}",
                 "hf:org/model-x", "openai:gpt-4.1-mini"):
        check_planner_spec(spec)
    for spec in ("baseline:always-yes", "baseline:random", "nonsense", "hf:", "script:", "oracle:x",
                 "script:/nonexistent/plan.json", "hf:/nonexistent/model", f"hf:{tmp_path}"):
        with pytest.raises(UserError):
            check_planner_spec(spec)


def test_list_unknown_is_one_line_exit_2(capsys):
    code, out, err = run_cli(["list", "models"], capsys)
    assert code == 2 and out == ""
    assert err.splitlines() == ["error: framebench list: expected one of tasks, conditions, "
                                "engines, planners, got 'models'"]


@pytest.mark.parametrize(("planner", "message"), [
    ("nonsense:x", "error: unknown planner spec 'nonsense:x': use oracle, script:FILE, "
                   "hf:<path or hub id>, openai:<model>, smollm2, vllm:<path or hub id> or choice:MODEL"),
    ("baseline:always-yes", "error: --planner 'baseline:always-yes': baseline models only answer "
                            "Yes/No and cannot plan; use oracle, script:FILE, hf:<path or hub id>, "
                            "openai:<model>, smollm2, vllm:<path or hub id> or choice:MODEL"),
])
def test_bad_planner_is_one_line_and_writes_nothing(planner, message, capsys, tmp_path):
    out_dir = tmp_path / "run"
    code, _, err = run_cli(["embodied", "--planner", planner, "--episodes", str(EPISODES),
                            "--out", str(out_dir)], capsys)
    assert code == 2
    assert err.splitlines() == [message]
    assert not out_dir.exists()


def _command_paths(command, prefix=()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        paths += _command_paths(sub, (*prefix, name))
    return paths


COMMANDS = _command_paths(typer.main.get_command(app))


def test_command_tree_is_walked():
    assert {("text",), ("view",), ("list",), ("build", "framingqa"), ("partnr", "ingest")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "framebench")
def test_help_shows_flags_plainly_and_nothing_cut(path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("typer.rich_utils.MAX_WIDTH", None)
    code, out, _ = run_cli([*path, "--help"], capsys)
    assert code == 0 and "Usage: framebench" in out
    assert "<bool>" not in out
    assert "…" not in out  # rich's ellipsis: a name, type or help cut short
    for line in out.splitlines():
        if re.search(r"--(quiet|help|version|partnr-compat)\b", line):
            assert "<" not in line.split("--", 1)[1].split("  ", 1)[0]


def _helps(command, prefix=()):
    for param in getattr(command, "params", []):
        if getattr(param, "help", None):
            yield " ".join(prefix), param.opts[0], param.help
    for name, sub in getattr(command, "commands", {}).items():
        yield from _helps(sub, (*prefix, name))


def test_no_help_text_holds_a_bracketed_word_rich_would_swallow():
    """The help is rich markup: ``[params]`` in a help string is read as a style tag and vanishes
    from ``--help`` (as ``sweep --set``'s did)."""
    swallowed = [(path, opt, text) for path, opt, text in _helps(typer.main.get_command(app))
                 if re.search(r"(?<!\\)\[[a-z][a-z_ ]*\]", text)]
    assert swallowed == []


# a path that exists only beside a development checkout (``../shared/data``): an installed user has none
DEVELOPMENT_PATH = re.compile(r"(?<![\w.])\.\./|\bshared/data\b")


def _command_helps(command, prefix=()):
    if getattr(command, "help", None):
        yield " ".join(prefix), "", command.help
    for name, sub in getattr(command, "commands", {}).items():
        yield from _command_helps(sub, (*prefix, name))


def test_no_help_names_a_development_path():
    """Every option's and command's help (build commands and command groups included) says what to
    pass, not where a development checkout keeps it (as ``build framingqa --source`` did)."""
    command = typer.main.get_command(app)
    helps = [*_helps(command), *_command_helps(command)]
    assert {path for path, _, _ in helps} >= {"build framingqa", "build omit", "sheets accept"}
    assert [h for h in helps if DEVELOPMENT_PATH.search(h[2])] == []
    assert DEVELOPMENT_PATH.search("A folder laid out like ../shared/data, 'hf', or a prepared folder")
    assert not DEVELOPMENT_PATH.search("prompts.jsonl, items/ or ./runs")


@pytest.mark.subprocess
def test_help_in_a_pipe_is_wider_than_80_columns():
    """A log file or pipe gets the wide layout (no terminal width to follow)."""
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    proc = subprocess.run([sys.executable, "-m", "framebench", "embodied", "--help"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0
    assert "--replan-cap,--max-replans" in proc.stdout
    assert "oracle, script:FILE, hf:PATH, openai:NAME, smollm2" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) == 120
