"""Framed PARTNR datasets: 7 variants per episode, only instruction and id changed, gzip, atomic."""

from __future__ import annotations

import copy
import gzip
import json

import pytest

from framebench.cli import main
from framebench.errors import UserError
from framebench.partnr_adapters.framed_episodes import frame_file, parse_framed_id

PURPOSES = {
    "action": "putting the candle and the plant container on the table",
    "correct": {"purpose": "decoration", "goal": "decorate the living room", "stance": "appropriate"},
    "incorrect": {"purpose": "clearing the table", "goal": "clear the living room table", "stance": "inappropriate"},
}


def partnr_episode(episode_id: str, instruction: str) -> dict:
    """A PARTNR CollaborationEpisode as it appears in the dataset files (handles made up)."""
    return {
        "episode_id": episode_id, "scene_id": "102344049",
        "scene_dataset_config": "data/hssd-hab/hssd-hab-partnr.scene_dataset_config.json",
        "additional_obj_config_paths": ["data/objects/ycb/configs/"],
        "start_position": [0, 0, 0], "start_rotation": [0, 0, 0, 1],
        "ao_states": {}, "targets": {}, "markers": [],
        "rigid_objs": [["candle_a1.object_config.json", [[1, 0, 0, 1.2], [0, 1, 0, 0.8], [0, 0, 1, -3.1], [0, 0, 0, 1]]]],
        "name_to_receptacle": {"candle_a1_:0000": "shelf_e5_:0000|receptacle_mesh_top"},
        "object_states": {"is_clean": {"candle_a1_:0000": False}},
        "instruction": instruction,
        "evaluation_propositions": [{"function_name": "is_on_top", "args": {
            "object_handles": ["candle_a1_:0000"], "receptacle_handles": ["table_f6_:0000"], "number": 1,
            "is_same_receptacle": False}}],
        "evaluation_proposition_dependencies": [],
        "evaluation_constraints": [{"type": "TerminalSatisfactionConstraint",
                                    "args": {"proposition_indices": [0], "n_propositions": 1}}],
        "info": {"extra_info": {"episode_id": episode_id, "instruction": instruction}},
    }


def write_dataset(path, episodes, **extra):
    path.write_bytes(gzip.compress(json.dumps({"episodes": episodes, **extra}).encode()))
    return path


@pytest.fixture
def source(tmp_path):
    episodes = [partnr_episode("42", "Put the candle and the plant container on the table."),
                partnr_episode("7", "Move the candle to the shelf.")]
    purposes = {"42": PURPOSES, "7": PURPOSES}
    (tmp_path / "purposes.json").write_text(json.dumps(purposes))
    return write_dataset(tmp_path / "val_mini.json.gz", episodes, config=None), tmp_path / "purposes.json", episodes


def read_gz(path):
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b", "output must be gzip"
    return json.loads(gzip.decompress(raw))


def test_round_trip_ids_counts_and_only_instruction_changes(source, tmp_path):
    episodes_file, purposes_file, originals = source
    out = tmp_path / "framed.json.gz"
    assert frame_file(episodes_file, purposes_file, out) == 14
    data = read_gz(out)
    assert data["config"] is None  # top-level keys kept
    ids = [ep["episode_id"] for ep in data["episodes"]]
    assert ids == [f"{base}__{suffix}" for base in ("42", "7") for suffix in (
        "neutral", "correct_root", "correct_propositional", "correct_global",
        "incorrect_root", "incorrect_propositional", "incorrect_global")]
    by_id = {ep["episode_id"]: ep for ep in data["episodes"]}
    for original in originals:
        for suffix in ("neutral", "correct_global", "incorrect_root"):
            variant = copy.deepcopy(by_id[f"{original['episode_id']}__{suffix}"])
            variant.pop("instruction"), variant.pop("episode_id")
            expected = copy.deepcopy(original)
            expected.pop("instruction"), expected.pop("episode_id")
            assert variant == expected
    assert by_id["42__neutral"]["instruction"] == "Put the candle and the plant container on the table."
    assert by_id["42__correct_root"]["instruction"] == (
        "For decoration, put the candle and the plant container on the table.")
    assert by_id["42__incorrect_propositional"]["instruction"] == (
        "To clear the living room table, put the candle and the plant container on the table.")
    assert by_id["7__incorrect_global"]["instruction"] == (
        "To clear the living room table, putting the candle and the plant container on the table is "
        "inappropriate. To achieve that goal, move the candle to the shelf.")


def test_framed_ids_parse_back():
    assert parse_framed_id("42__neutral") == ("42", "neutral", "")
    assert parse_framed_id("a__b__incorrect_global") == ("a__b", "incorrect", "global")
    with pytest.raises(UserError):
        parse_framed_id("42__sideways_root")
    with pytest.raises(UserError):
        parse_framed_id("42")


def test_missing_purposes_is_a_user_error_and_writes_nothing(source, tmp_path):
    episodes_file, purposes_file, _ = source
    purposes_file.write_text(json.dumps({"42": PURPOSES}))
    out = tmp_path / "framed.json.gz"
    with pytest.raises(UserError, match="episode 7: no purposes"):
        frame_file(episodes_file, purposes_file, out)
    assert not out.exists()


def test_bad_purposes_field_is_named(source, tmp_path):
    episodes_file, purposes_file, _ = source
    bad = copy.deepcopy(PURPOSES)
    del bad["incorrect"]["goal"]
    purposes_file.write_text(json.dumps({"42": PURPOSES, "7": bad}))
    with pytest.raises(UserError, match=r"episode 7.*incorrect\.goal"):
        frame_file(episodes_file, purposes_file, tmp_path / "o.json.gz")


def test_output_must_be_json_gz(source, tmp_path):
    episodes_file, purposes_file, _ = source
    with pytest.raises(UserError, match=r"must end in \.json\.gz"):
        frame_file(episodes_file, purposes_file, tmp_path / "framed.json")


def test_framing_twice_is_refused(source, tmp_path):
    episodes_file, purposes_file, _ = source
    framed = tmp_path / "framed.json.gz"
    frame_file(episodes_file, purposes_file, framed)
    with pytest.raises(UserError, match="framed twice"):
        frame_file(framed, purposes_file, tmp_path / "again.json.gz")


def test_cli_frame_and_bad_input_exit_2(source, tmp_path, capsys):
    episodes_file, purposes_file, _ = source
    out = tmp_path / "cli.json.gz"
    with pytest.raises(SystemExit) as ok:
        main(["partnr", "frame", "--episodes", str(episodes_file), "--purposes", str(purposes_file), "--out", str(out)])
    assert ok.value.code == 0
    assert len(read_gz(out)["episodes"]) == 14
    (tmp_path / "broken.json.gz").write_bytes(b"\x1f\x8bnot gzip")
    with pytest.raises(SystemExit) as exc:
        main(["partnr", "frame", "--episodes", str(tmp_path / "broken.json.gz"), "--purposes",
              str(purposes_file), "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.json.gz" in err[0]
