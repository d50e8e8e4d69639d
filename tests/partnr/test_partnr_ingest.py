"""Ingestion of PARTNR outputs (stats/<id>.json, planner-log) into framebench records."""

from __future__ import annotations

import gzip
import json

import pytest

from framebench.cli import main
from framebench.errors import UserError
from framebench.partnr_adapters.ingest import ingest
from framebench.records import read_records

SUFFIXES = ("neutral", "correct_root", "correct_propositional", "correct_global",
            "incorrect_root", "incorrect_propositional", "incorrect_global")


def framed_file(tmp_path, constraint_by_base):
    episodes = []
    for base, constraint in constraint_by_base.items():
        for suffix in SUFFIXES:
            info = {} if constraint is None else {"constraint_type": constraint}
            episodes.append({"episode_id": f"{base}__{suffix}", "instruction": f"Do {base} ({suffix}).",
                             "scene_id": "s", "info": info, "evaluation_propositions": []})
    path = tmp_path / "framed.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"episodes": episodes}).encode()))
    return path


def write_stats(folder, episode_id, **stats):
    """A stats file exactly as planner_demo.save_success_message writes it (stats as a JSON string)."""
    (folder / f"{episode_id}.json").write_text(json.dumps({"success": True, "stats": json.dumps(stats)}))


@pytest.fixture
def results(tmp_path):
    framed = framed_file(tmp_path, {"42": "spatial", "7": None})
    root = tmp_path / "results"
    out_dir = root / framed.name  # <paths.results_dir>/<dataset file name>/
    stats = out_dir / "stats"
    stats.mkdir(parents=True)
    for i, suffix in enumerate(SUFFIXES):
        write_stats(stats, f"42__{suffix}", task_percent_complete=1.0 if i % 2 == 0 else 0.5,
                    task_state_success=1.0 if i % 2 == 0 else 0.0, sim_step_count=100 + i,
                    replanning_count_0=3 + i, runtime=12.5)
    for suffix in SUFFIXES[:5]:
        write_stats(stats, f"7__{suffix}", task_percent_complete=0.25, task_state_success=0.0,
                    sim_step_count=900, replanning_count_0=26, replanning_count_1=4)
    # 7__incorrect_propositional crashed; 7__incorrect_global has no stats file at all
    (stats / "7__incorrect_propositional.json").write_text(json.dumps(
        {"success": False, "info": "Traceback (most recent call last):\n  ...\nValueError: Object cup_3 has no parent\n"}))
    # a stats file of an episode that is not in the framed file is ignored (and reported)
    write_stats(stats, "99__neutral", task_percent_complete=1.0, task_state_success=1.0, sim_step_count=1,
                replanning_count_0=1)
    log = out_dir / "planner-log"
    log.mkdir()
    (log / "planner-log-episode_42__neutral_0.json").write_text(json.dumps({"task": "Do 42.", "steps": [
        {"thought": {"0": "I will go to the table."}, "high_level_actions": {"0": ["Navigate", "table_14", None]},
         "log_index": 0},
        {"thought": {"0": None}, "high_level_actions": {"0": ["Navigate", "table_14", None]}, "log_index": 1},
        {"thought": {"0": "Everything is on the table."}, "high_level_actions": {"0": ["Done", None, None]},
         "log_index": 2},
        {"thought": {"0": None}, "log_index": 3},
    ]}))
    return root, framed


def test_rows_values_crashes_and_missing(results, tmp_path, capsys):
    root, framed = results
    run = tmp_path / "run"
    report = ingest(root, framed, run, model="openai:llama-3.1-8b")
    df = read_records(run).set_index("item_id")
    assert len(df) == 14 and report.rows == 14
    assert report.finished == 12
    assert {(p["item_id"], p["status"]) for p in report.problems} == {
        ("7__incorrect_propositional", "crashed"), ("7__incorrect_global", "missing")}
    assert report.unknown_stats == ["99__neutral"]

    row = df.loc["42__correct_root"]
    assert (row.suite, row.task, row.format, row.context_id) == ("embodied", "robotics", "episode", "42")
    assert (row.bias, row.level, row.slot, row.constraint) == ("correct", "root", "correct/root", "spatial")
    assert row.percent_complete == 0.5 and not row.success and not row.correct
    assert (row.sim_steps, row.replans) == (101, 4)
    neutral = df.loc["42__neutral"]
    assert (neutral.bias, neutral.level, neutral.slot) == ("neutral", "", "neutral")  # as the symbolic runner writes
    assert neutral.success and neutral.correct and neutral.percent_complete == 1.0
    assert neutral.output == "Thought: Everything is on the table.\nDone[]"
    assert df.loc["7__neutral"].constraint == "none"  # no info.constraint_type -> none
    assert df.loc["7__neutral"].replans == 26  # agent 0's count, not agent 1's

    crashed, missing = df.loc["7__incorrect_propositional"], df.loc["7__incorrect_global"]
    for r in (crashed, missing):
        assert r.percent_complete == 0.0 and not r.success and r.sim_steps == 0 and r.replans == 0
    assert crashed.output.startswith("[crashed]") and "has no parent" in crashed.output
    assert missing.output.startswith("[missing stats]")

    crash_file = json.loads((run / "crashes.json").read_text())
    assert sorted(c["item_id"] for c in crash_file) == ["7__incorrect_global", "7__incorrect_propositional"]
    prompts = [json.loads(line) for line in (run / "prompts.jsonl").read_text().splitlines()]
    assert prompts[1] == {"item_id": "42__correct_root", "prompt": "Do 42 (correct_root)."}
    info = json.loads((run / "run.json").read_text())
    assert info["model"] == "openai:llama-3.1-8b" and info["simulator"] == "habitat"
    assert info["problem_episodes"] == 2
    assert info["evaluation"] == "partnr-habitat"  # PARTNR's own scores: its quirks included


def test_results_dir_may_be_the_dataset_folder_and_manifest_names_model(results, tmp_path):
    root, framed = results
    (root / "framebench-run.json").write_text(json.dumps({"planner": "openai:m", "run_id": "r1",
                                                         "started": "2026-01-01T00:00:00+00:00"}))
    run = tmp_path / "run2"
    ingest(root / framed.name, framed, run)  # manifest found one level up
    df = read_records(run)
    assert set(df.model) == {"openai:m"} and set(df.run_id) == {"r1"}


def test_no_stats_at_all_reports_every_episode(tmp_path):
    framed = framed_file(tmp_path, {"1": "temporal"})
    (tmp_path / "empty").mkdir()
    report = ingest(tmp_path / "empty", framed, tmp_path / "run")
    assert report.finished == 0 and len(report.problems) == 7
    assert read_records(tmp_path / "run").success.sum() == 0


def test_bad_values_are_user_errors(results, tmp_path):
    root, framed = results
    write_stats(root / framed.name / "stats", "42__neutral", task_percent_complete=1.5, sim_step_count=1)
    with pytest.raises(UserError, match=r"42__neutral\.json.*task_percent_complete"):
        ingest(root, framed, tmp_path / "run")
    assert not (tmp_path / "run" / "records.parquet").exists()
    with pytest.raises(UserError, match="no such results folder"):
        ingest(tmp_path / "nope", framed, tmp_path / "run")


def test_unknown_constraint_type_is_named(tmp_path):
    framed = framed_file(tmp_path, {"1": "sideways"})
    (tmp_path / "r").mkdir()
    with pytest.raises(UserError, match=r"episode 1__neutral: field 'info.constraint_type'"):
        ingest(tmp_path / "r", framed, tmp_path / "run")


def test_cli_ingest_prints_problems(results, tmp_path, capsys):
    root, framed = results
    with pytest.raises(SystemExit) as exc:
        main(["partnr", "ingest", str(root), "--episodes", str(framed), "--out", str(tmp_path / "cli")])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "14 episode framings: 12 finished, 2 crashed or missing" in out
    assert "crashed: 7__incorrect_propositional" in out and "missing: 7__incorrect_global" in out


def test_framebench_score_reads_ingested_habitat_runs(results, tmp_path):
    """Scoring treats an ingested Habitat run like a symbolic one (Table 6 block, hand-computed values)."""
    root, framed = results
    run = tmp_path / "run"
    ingest(root, framed, run, model="openai:m")
    with pytest.raises(SystemExit) as exc:
        main(["score", str(run), "--out", str(tmp_path / "report")])
    assert exc.value.code == 0
    block = json.loads((tmp_path / "report" / "report.json").read_text())["embodied"]["openai:m"]
    # episode 42: correct-bias variants complete 0.5, 1.0, 0.5; episode 7: 0.25 each -> (2/3 + 1/4) / 2
    assert block["overall"]["completion_mean_correct"] == pytest.approx((2 / 3 + 0.25) / 2)
    # global level: 42__incorrect_global succeeded, 7__incorrect_global is missing (a failure) -> 1/2
    assert block["global"]["completion_strict_incorrect"] == pytest.approx(0.5)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["meta"]["embodied_evaluation"] == {"openai:m": ["partnr-habitat"]}
    assert "PARTNR's own evaluator in Habitat" in (tmp_path / "report" / "report.md").read_text()


def test_unframed_episode_file_is_refused_with_its_name(tmp_path):
    path = tmp_path / "raw.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"episodes": [{"episode_id": "5", "instruction": "x"}]}).encode()))
    (tmp_path / "r").mkdir()
    with pytest.raises(UserError, match=r"raw\.json\.gz: episode id '5' is not a framed id"):
        ingest(tmp_path / "r", path, tmp_path / "run")
