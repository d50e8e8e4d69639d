"""The record schema: round trip, and malformed files fail with one clear line (exit 2)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from framebench import records
from framebench.records import RecordsError, make_row, read_records, write_records


def text_row(**over):
    base = dict(run_id="r1", model="baseline:always-yes", suite="framingqa", task="finance",
                format="binary", context_id="c1", item_id="c1/correct/root/plain/Q1", bias="correct",
                level="root", form="plain", phrasing="Q1", option="Fees", slot="correct/root/plain/Q1",
                gold="Yes", answer="Yes", parse="ok", correct=True, output="Yes")
    base.update(over)
    return make_row(**base)


def episode_row(**over):
    base = dict(run_id="r2", model="oracle", suite="embodied", task="robotics", format="episode",
                context_id="ep1", item_id="ep1__neutral", bias="neutral", correct=True,
                constraint="spatial", percent_complete=1.0, success=True, sim_steps=812, replans=6)
    base.update(over)
    return make_row(**base)


def test_round_trip_keeps_values_and_types(tmp_path):
    rows = [text_row(), text_row(item_id="x2", answer="", parse="unparsed", correct=False),
            episode_row()]
    path = write_records(rows, tmp_path)
    assert path.name == "records.parquet"
    assert pq.read_schema(path).equals(records.registered_schema().arrow)
    df = read_records(tmp_path)
    assert list(df.columns) == list(records.registered_schema().columns)
    assert df["correct"].tolist() == [True, False, True]
    assert df.loc[2, "sim_steps"] == 812
    assert df.loc[2, "percent_complete"] == 1.0
    assert pd.isna(df.loc[0, "sim_steps"])
    assert df.loc[1, "parse"] == "unparsed"


def test_make_row_rejects_unknown_and_missing_fields():
    with pytest.raises(ValueError, match="unknown record field"):
        text_row(colour="red")
    with pytest.raises(ValueError, match="missing required"):
        make_row(run_id="r")


def test_writer_refuses_invalid_rows_and_leaves_no_file(tmp_path):
    with pytest.raises(RecordsError, match="row 1: column 'bias'"):
        write_records([text_row(), text_row(bias="sideways")], tmp_path)
    assert not any(tmp_path.iterdir())


def _write_raw(tmp_path, df):
    path = tmp_path / "records.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    return path


def test_unknown_enum_value_names_file_row_and_column(tmp_path):
    df = pd.DataFrame([text_row(), text_row(), text_row(bias="sideways")])
    path = _write_raw(tmp_path, df)
    with pytest.raises(RecordsError) as err:
        read_records(path)
    msg = str(err.value)
    assert str(path) in msg and "row 2" in msg and "'bias'" in msg and "sideways" in msg


def test_missing_column_is_named(tmp_path):
    df = pd.DataFrame([text_row()]).drop(columns=["slot"])
    path = _write_raw(tmp_path, df)
    with pytest.raises(RecordsError, match=r"missing column 'slot'"):
        read_records(path)


def test_wrong_type_is_named(tmp_path):
    df = pd.DataFrame([episode_row()])
    df["sim_steps"] = ["many"]
    path = _write_raw(tmp_path, df)
    with pytest.raises(RecordsError, match=r"row 0: column 'sim_steps' has type string \(value .many.\), expected int64"):
        read_records(path)


def test_percent_complete_out_of_range(tmp_path):
    df = pd.DataFrame([episode_row(), episode_row(percent_complete=1.5)])
    path = _write_raw(tmp_path, df)
    with pytest.raises(RecordsError, match=r"row 1: column 'percent_complete'"):
        read_records(path)


def test_unreadable_file(tmp_path):
    path = tmp_path / "records.parquet"
    path.write_text("not parquet")
    with pytest.raises(RecordsError, match="not a readable parquet file"):
        read_records(path)


@pytest.mark.subprocess
def test_cli_reports_bad_records_in_one_line_exit_2(tmp_path):
    df = pd.DataFrame([text_row(bias="sideways")])
    _write_raw(tmp_path, df)
    proc = subprocess.run([sys.executable, "-m", "framebench", "score", str(tmp_path), "--out",
                           str(tmp_path / "report")], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "sideways" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "report" / "report.json").exists()


@pytest.mark.subprocess
def test_cli_missing_run_dir_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "framebench", "score", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "r")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "nope" in proc.stderr


def test_files_from_before_answer_modes_read_with_defaults(tmp_path):
    write_records([text_row(), episode_row()], tmp_path)
    path = tmp_path / "records.parquet"
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(list(records.LATER_COLUMNS)), path)
    df = read_records(tmp_path)
    assert list(df.columns) == list(records.registered_schema().columns)
    assert df["answer_mode"].tolist() == ["", ""] and df["answer_probs"].tolist() == ["", ""]


@pytest.mark.parametrize("probs, problem", [
    ('{"Yes": 0.7, "No": 0.2}', "do not sum to 1"),
    ('{"Maybe": 1.0}', "outside"),
    ('{"Yes": 1.5, "No": -0.5}', r"outside \[0, 1\] \(1.5\)"),
    ('{"Yes": NaN, "No": 0.5}', r"outside \[0, 1\] \(NaN, not a number\)"),
    ('{"Yes": true, "No": false}', r"outside \[0, 1\] \(True\)"),  # JSON true is no probability, though 1 == True
    ("[0.5, 0.5]", "JSON object"),
])
def test_bad_answer_probabilities_are_named(tmp_path, probs, problem):
    row = text_row(answer_mode="constrained", answer_probs=probs)
    with pytest.raises(RecordsError, match=f"row 0: column 'answer_probs' .*{problem}"):
        write_records([row], tmp_path)
    assert not (tmp_path / "records.parquet").exists()


def test_schema_version_is_written_and_older_files_still_read(tmp_path):
    path = write_records([text_row(), episode_row()], tmp_path / "new")
    assert pq.read_schema(path).metadata[records.VERSION_KEY] == str(records.SCHEMA_VERSION).encode()
    table = pq.read_table(path)
    old = tmp_path / "old"
    old.mkdir()
    pq.write_table(table.replace_schema_metadata(None), old / "records.parquet")  # as files before the field
    assert records.schema_version(pq.read_table(old / "records.parquet")) == 1
    assert read_records(old).equals(read_records(path))
    newer = tmp_path / "newer"
    newer.mkdir()
    pq.write_table(table.replace_schema_metadata({records.VERSION_KEY: b"99"}), newer / "records.parquet")
    with pytest.raises(RecordsError, match="records schema version 99 is not one this framebench reads"):
        read_records(newer)


def test_the_validator_takes_its_vocabulary(tmp_path):
    """One contract per call: a schema without the embodied suite refuses its rows and columns;
    a file without a suite's rows may lack that suite's columns."""
    registered = records.registered_schema()
    text_only = records.build_schema({name: entry for name, entry in registered.suites.items()
                                      if name != "embodied"})
    assert "percent_complete" not in text_only.columns
    frame = pd.DataFrame([text_row()])[list(text_only.columns)]
    records.validate_frame(frame, "x", text_only)
    with pytest.raises(RecordsError, match="column 'suite' has unknown value 'embodied'"):
        records.validate_frame(pd.DataFrame([episode_row()]), "x", text_only)
    path = write_records(frame, tmp_path, schema=text_only)  # written where embodied is not installed
    assert "percent_complete" not in pq.read_schema(path).names
    df = read_records(tmp_path)  # read with it installed: its columns hold their defaults
    assert list(df.columns) == list(registered.columns) and df["percent_complete"].isna().all()
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    pq.write_table(pq.read_table(path).replace_schema_metadata(None), legacy / "records.parquet")
    # a version-1 file reads the same way: a suite installed later (a plugin's) adds nothing to it
    assert read_records(legacy)["percent_complete"].isna().all()
    episodes = tmp_path / "episodes"
    episodes.mkdir()
    table = pa.Table.from_pandas(pd.DataFrame([episode_row()])[list(registered.columns)], preserve_index=False)
    pq.write_table(table.drop_columns(["constraint"]), episodes / "records.parquet")
    with pytest.raises(RecordsError, match="missing column 'constraint'"):  # its suite has rows here
        read_records(episodes)


def _many_rows(n=400):
    return [text_row(context_id=f"c{i // 20}", item_id=f"c{i // 20}:{i}", answer=("Yes", "No")[i % 2],
                     correct=i % 2 == 0, output=f"{('Yes', 'No')[i % 2]}, because of reason {i}") for i in range(n)]


def _silently_damaged(raw: bytes, original: pd.DataFrame) -> bytes:
    """The first 64-byte zeroing of ``raw`` that parquet decodes without an error into other values
    when page checksums are not verified (what a reader without verification would score)."""
    import io

    for offset in range(4, len(raw) - 72, 16):
        damaged = raw[:offset] + bytes(64) + raw[offset + 64:]
        try:
            decoded = pq.read_table(io.BytesIO(damaged), page_checksum_verification=False).to_pandas()
        except Exception:
            continue
        if not decoded.equals(original):
            return damaged
    raise AssertionError("no silent damage found: the test would prove nothing")


@pytest.mark.subprocess
def test_records_carry_page_checksums_and_a_damaged_page_is_refused(tmp_path):
    """Issue 28: a run folder with only records.parquet and prompts.jsonl (no run.json, whose sha256
    would catch it) whose data page decodes to other values is refused with one line, exit 2."""
    run = tmp_path / "run"
    path = write_records(_many_rows(), run)
    (run / "prompts.jsonl").write_text("")
    original = pq.read_table(path).to_pandas()
    path.write_bytes(_silently_damaged(path.read_bytes(), original))
    with pytest.raises(RecordsError, match="CRC checksum verification failed"):
        read_records(run)
    proc = subprocess.run([sys.executable, "-m", "framebench", "score", str(run), "--out",
                           str(tmp_path / "report")], capture_output=True, text=True)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(path) in lines[0] and "checksum" in lines[0]
    assert not (tmp_path / "report").exists()


def test_records_without_page_checksums_still_read(tmp_path):
    """A file another tool (or an older framebench) wrote without page checksums reads as before,
    and a checksummed file reads back equal."""
    df = read_records(write_records(_many_rows(), tmp_path / "ours"))
    (tmp_path / "theirs").mkdir()
    pq.write_table(records.to_table(_many_rows()), tmp_path / "theirs" / "records.parquet")  # no checksums
    assert read_records(tmp_path / "theirs").equals(df)
    assert len(df) == 400 and df["output"].iloc[7] == "No, because of reason 7"


def test_two_suites_may_share_a_column_only_alike():
    """FramingQA and embodied both declare ``slot``; a column declared twice with another type is
    refused, and a shared column is left at its default by the other suites' rows."""
    registered = records.registered_schema()
    assert set(registered.owners("slot")) >= {"framingqa", "embodied"} and registered.owners("frame") == ("omit",)
    clash = records.SuiteRecords(formats={"binary": ("Yes", "No")}, columns={"slot": (pa.int64(), None)})
    with pytest.raises(TypeError, match="'slot', which suite 'framingqa' declares with another type"):
        records.build_schema({**registered.suites, "clash": (("t",), clash)})
    with pytest.raises(RecordsError, match="column 'slot' is framingqa's, framingqa_rotated's and embodied's"):
        records.validate_frame(pd.DataFrame([text_row(suite="omit", task="omit", bias="neutral", level="",
                                                      form="", phrasing="", option="", slot="x", gold="",
                                                      frame="action", condition="M0")]), "x")
