"""A generated corpus of malformed inputs over every file-reading entry point of the CLI.

Each case writes its files under a fresh folder and returns the ``framebench`` arguments to run,
or (arguments, what the error line must name: the file, the line or sample, the field); every
case must end with exit 2, one short ``error:`` line on stderr naming those, no traceback and
nothing written under ``out``. ``run_case`` runs one in-process and classifies the outcome;
``tally`` counts them. The families of issue 45 (import, export, sweep, usage errors) are in
tests/fuzz_surfaces.py. Used by tests/e2e/test_fuzz_inputs.py and runnable as a script for the
before/after tallies (``python tests/fuzz_corpus.py [FAMILY ...]``).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import functools
import gzip
import io
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "datasets" / "demo"
SHARED_DATA = Path(os.environ.get("FRAMEBENCH_SHARED_DATA", REPO.parent / "shared" / "data"))
SEED_CSV = SHARED_DATA / "moralchoice" / "scenarios" / "moralchoice_high_ambiguity.csv"


MAX_ERROR_LINE = 1_500  # characters: a user's long value is echoed shortened


@dataclass
class Case:
    family: str
    name: str
    # writes files under the folder, returns the CLI args, or (args, what the error line names)
    make: Callable[[Path], list[str] | tuple[list[str], list[str]]]


@dataclass
class Outcome:
    kind: str  # clean | traceback | accepted | messy | vague (a part it must name is missing) | runaway
    code: object
    stderr: str
    detail: str = ""


# ---------- valid baselines ----------

def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def _demo_items() -> list[dict]:
    rows = [json.loads(line) for line in (DEMO / "framingqa" / "items.jsonl").open(encoding="utf-8")]
    binary = next(r for r in rows if r["format"] == "binary" and r["bias"] == "correct")
    mc = next(r for r in rows if r["format"] == "mc" and r["bias"] == "neutral")
    return [binary, mc]


def _omit_items() -> list[dict]:
    return [json.loads(line) for line in (DEMO / "omit" / "items.jsonl").open(encoding="utf-8")][:2]


def _sheets() -> tuple[list[dict], list[dict]]:
    src = DEMO / "framingqa" / "source"
    contexts = [json.loads(line) for line in (src / "contexts.jsonl").open(encoding="utf-8")][:1]
    sheets = [json.loads(line) for line in (src / "answer_sheets.jsonl").open(encoding="utf-8")][:1]
    return contexts, sheets


def _episode() -> dict:
    data = json.loads(gzip.decompress((DEMO / "robotics" / "episodes.json.gz").read_bytes()))
    return data["episodes"][0]


def _seed_rows() -> tuple[list[str], list[list[str]]]:
    if SEED_CSV.is_file():
        with SEED_CSV.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        return rows[0], rows[1:3]
    header = ["scenario_id", "ambiguity", "generation_type", "generation_rule", "context", "action1", "action2"]
    return header, [["H_001", "high", "Hand-Written", "Do not kill", "You are a soldier.",
                     "I do not throw the grenade.", "I throw the grenade."],
                    ["H_002", "high", "Hand-Written", "Do not kill", "Your mother is ill.",
                     "I refuse to assist.", "I assist."]]


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _parquet_bytes() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"a": [1, 2]}), buf)
    return buf.getvalue()


def _deep(n: int = 200_000) -> bytes:
    return b'{"x": ' + b"[" * n + b"]" * n + b"}\n"


# ---------- byte-level mutations of a valid JSON/JSONL/CSV payload ----------

def byte_mutations(valid: bytes, gz_ok: bool = False) -> dict[str, bytes]:
    """Ways a text file can be the wrong bytes; ``gz_ok``: gzip is a valid container here."""
    text = valid.decode("utf-8")
    first = valid.split(b"\n", 1)[0]
    muts = {
        "invalid_utf8": valid[: len(first) // 2] + b"\xff\xfe\xc3\x28" + valid[len(first) // 2:],
        "utf16": text.encode("utf-16"),
        "utf16_be": text.encode("utf-16-be"),
        "parquet": _parquet_bytes(),
        "nul_byte": valid[: len(first) // 2] + b"\x00" + valid[len(first) // 2:],
        "nul_line": b"\x00\x00\x00\n" + valid,
        "random_binary": bytes(range(256)) * 4,
        "latin1": text.replace("e", "\u00e9", 3).encode("latin-1", errors="replace"),
        "truncated": valid[: max(1, len(first) * 2 // 3)],
        "deep_nesting": _deep(),
        "lone_surrogate": text.replace('"', '"\\ud800', 2).encode("utf-8")
        if text.lstrip().startswith(("{", "[")) else b'"\\ud800"\n',
        "empty": b"",
        "whitespace_only": b"  \n\n\t\n",
    }
    if not gz_ok:
        muts["gzip"] = gzip.compress(valid)
    else:
        muts["gzip_truncated"] = gzip.compress(valid)[:40]
        muts["gzip_of_garbage"] = gzip.compress(b"\xff\xfe garbage")
        muts["gzip_deep"] = gzip.compress(_deep())
    return muts


def _json_line_mutations(valid_row: dict) -> dict[str, bytes]:
    """Lines that are JSON but not an object, or objects with odd numbers."""
    return {
        "array_line": b"[1, 2, 3]\n",
        "scalar_line": b"42\n",
        "null_line": b"null\n",
        "string_line": b'"hello"\n',
        "nan_line": json.dumps({**valid_row, "nan": float("nan")}).encode() + b"\n",
        "infinity": json.dumps({**valid_row, "x": float("inf")}).encode() + b"\n",
        "trailing_garbage": json.dumps(valid_row).encode() + b" }}\n",
    }


# ---------- families ----------

_TYPE_SWAPS = {"int": 7, "none": None, "list": ["x"], "dict": {"a": 1}, "bool": True}


def _field_mutations(row: dict, fields: list[str]) -> dict[str, dict | None]:
    out: dict[str, dict | None] = {}
    for name in fields:
        dropped = copy.deepcopy(row)
        dropped.pop(name, None)
        out[f"missing_{name}"] = dropped
        for label, value in _TYPE_SWAPS.items():
            if isinstance(row.get(name), type(value)) and not (label == "int" and isinstance(row.get(name), bool)):
                continue
            changed = copy.deepcopy(row)
            changed[name] = value
            out[f"{name}_as_{label}"] = changed
    return out


def item_cases() -> list[Case]:
    binary, mc = _demo_items()
    omit_rows = _omit_items()

    def case(name: str, payload: bytes) -> Case:
        def make(tmp: Path) -> list[str]:
            (tmp / "data").mkdir()
            (tmp / "data" / "items.jsonl").write_bytes(payload)
            return ["text", "--data", str(tmp / "data"), "--model", "baseline:always-yes",
                    "--out", str(tmp / "out"), "--quiet"]
        return Case("items", name, make)

    cases = [case(f"bytes_{k}", v) for k, v in byte_mutations(_jsonl([binary, mc])).items()]
    cases += [case(f"line_{k}", v) for k, v in _json_line_mutations(binary).items()]
    fields = ["item_id", "context_id", "suite", "task", "format", "bias", "level", "form", "phrasing",
              "option", "distractor", "slot", "gold", "text", "question", "options"]
    for name, row in _field_mutations(mc, fields).items():
        cases.append(case(f"mc_{name}", _jsonl([binary, row])))
    semantic = {
        "mc_gold_E": {**mc, "gold": "E"},
        "mc_gold_D_two_options": {**mc, "gold": "D", "options": mc["options"][:2]},
        "mc_gold_empty": {**mc, "gold": ""},
        "mc_gold_lowercase": {**mc, "gold": "a"},
        "binary_gold_maybe": {**binary, "gold": "Maybe"},
        "binary_gold_empty": {**binary, "gold": ""},
        "binary_gold_yes_lower": {**binary, "gold": "yes"},
        "mc_options_ints": {**mc, "options": [1, 2, 3, 4]},
        "mc_options_mixed": {**mc, "options": ["a", None, "c", "d"]},
        "mc_options_one": {**mc, "options": ["only"], "gold": "A"},
        "mc_options_five": {**mc, "options": ["a", "b", "c", "d", "e"]},
        "mc_options_empty_string": {**mc, "options": ["", "b", "c", "d"]},
        "binary_with_options": {**binary, "options": ["Yes", "No"]},
        "suite_omit_task_finance": {**binary, "suite": "omit"},
        "suite_framingqa_task_omit": {**binary, "task": "omit"},
        "suite_framingqa_task_robotics": {**binary, "task": "robotics"},
        "suite_embodied": {**binary, "suite": "embodied", "task": "robotics"},
        "format_episode": {**binary, "format": "episode"},
        "bias_unknown": {**binary, "bias": "sideways"},
        "neutral_with_level": {**mc, "level": "root"},
        "biased_without_level": {**binary, "level": ""},
        "item_id_blank": {**binary, "item_id": ""},
        "context_id_blank": {**binary, "context_id": ""},
        "question_blank": {**binary, "question": "   "},
        "text_nul": {**binary, "text": "a\x00b"},
    }
    for name, row in semantic.items():
        cases.append(case(name, _jsonl([row, mc] if row is not mc else [row])))
    cases.append(case("duplicate_item_id", _jsonl([binary, binary])))
    omit_sem = {
        "omit_no_frame": {k: v for k, v in omit_rows[0].items() if k != "frame"},
        "omit_frame_blank": {**omit_rows[0], "frame": ""},
        "omit_frame_unknown": {**omit_rows[0], "frame": "sideways"},
        "omit_format_mc": {**omit_rows[0], "format": "mc"},
        "omit_conflicts_int": {**omit_rows[0], "conflicts": 3},
        "omit_bias_correct": {**omit_rows[0], "bias": "correct"},
    }
    for name, row in omit_sem.items():
        cases.append(case(name, _jsonl([row, omit_rows[1]])))
    return cases


def sheet_cases() -> list[Case]:
    contexts, sheets = _sheets()
    sheet = sheets[0]

    def case(name: str, sheet_bytes: bytes, context_bytes: bytes | None = None) -> Case:
        def make(tmp: Path) -> list[str]:
            src = tmp / "src"
            src.mkdir()
            (src / "contexts.jsonl").write_bytes(context_bytes if context_bytes is not None else _jsonl(contexts))
            (src / "answer_sheets.jsonl").write_bytes(sheet_bytes)
            return ["build", "framingqa", "--source", str(src), "--out", str(tmp / "out")]
        return Case("answer_sheets", name, make)

    cases = [case(f"bytes_{k}", v) for k, v in byte_mutations(_jsonl(sheets)).items()
             if k not in ("empty", "whitespace_only")]
    cases += [case(f"line_{k}", v) for k, v in _json_line_mutations(sheet).items()
              if k not in ("nan_line", "infinity")]
    fields = ["context_id", "task", "gold", "distractors", "premises", "gold_rephrasings", "evidence"]
    for name, row in _field_mutations(sheet, fields).items():
        cases.append(case(name, _jsonl([row])))
    ev = sheet["evidence"]
    semantic = {
        "distractors_ints": {**sheet, "distractors": [1, 2, 3]},
        "distractors_string": {**sheet, "distractors": "Courts"},
        "premises_list": {**sheet, "premises": ["a", "b"]},
        "premises_values_int": {**sheet, "premises": {k: 1 for k in sheet["premises"]}},
        "premises_value_none": {**sheet, "premises": {**sheet["premises"], sheet["gold"]: None}},
        "rephrasings_string": {**sheet, "gold_rephrasings": "one"},
        "rephrasings_ints": {**sheet, "gold_rephrasings": [1, 2]},
        "rephrasings_none": {**sheet, "gold_rephrasings": [None, None]},
        "evidence_not_list": {**sheet, "evidence": {"a": 1}},
        "evidence_entry_string": {**sheet, "evidence": ["e1"]},
        "evidence_missing_premise": {**sheet, "evidence": [{k: v for k, v in e.items() if k != "premise"} for e in ev]},
        "evidence_sentences_string": {**sheet, "evidence": [{**e, "sentences": "text"} for e in ev]},
        "evidence_premise_int": {**sheet, "evidence": [{**e, "premise": 3} for e in ev]},
        "evidence_extra_key": {**sheet, "evidence": [{**e, "bogus": 1} for e in ev]},
        "notes_string": {**sheet, "notes": "note"},
        "unknown_key": {**sheet, "bogus": 1},
        "provenance_ints": {**sheet, "provenance": {"drafted_by": 1}},
    }
    for name, row in semantic.items():
        cases.append(case(name, _jsonl([row])))
    for k, v in list(byte_mutations(_jsonl(contexts)).items())[:6]:
        cases.append(case(f"contexts_bytes_{k}", _jsonl(sheets), v))
    return cases


def seed_cases() -> list[Case]:
    header, rows = _seed_rows()

    def case(name: str, payload: bytes) -> Case:
        def make(tmp: Path) -> list[str]:
            src = tmp / "src"
            (src / "scenarios").mkdir(parents=True)
            (src / "scenarios" / "moralchoice_high_ambiguity.csv").write_bytes(payload)
            return ["build", "omit", "--source", str(src),
                    "--model", "baseline:always-yes", "--out", str(tmp / "out")]
        return Case("seeds", name, make)

    valid = _csv(header, rows)
    cases = [case(f"bytes_{k}", v) for k, v in byte_mutations(valid).items()
             if k not in ("deep_nesting", "lone_surrogate")]
    cid = header.index("context")
    for col in ("scenario_id", "ambiguity", "context", "action1", "action2"):
        i = header.index(col)
        cases.append(case(f"missing_column_{col}", _csv(header[:i] + header[i + 1:],
                                                        [r[:i] + r[i + 1:] for r in rows])))
        if col != "ambiguity":
            blank = [list(r) for r in rows]
            blank[0][i] = "  "
            cases.append(case(f"blank_{col}", _csv(header, blank)))
    nul = [list(r) for r in rows]
    nul[0][cid] = "A\x00context"
    cases.append(case("nul_in_field", _csv(header, nul)))
    cases.append(case("duplicate_id", _csv(header, [rows[0], rows[0]])))
    short = [list(r) for r in rows]
    short[1] = short[1][:3]
    cases.append(case("short_row", _csv(header, short)))
    cases.append(case("no_high_rows", _csv(header, [[*r[:1], "low", *r[2:]] for r in rows])))
    return cases


def scenario_cases() -> list[Case]:
    rows = [json.loads(line) for line in (DEMO / "omit" / "scenarios.jsonl").open(encoding="utf-8")][:2]

    def case(name: str, payload: bytes) -> Case:
        def make(tmp: Path) -> list[str]:
            src = tmp / "src"
            src.mkdir()
            (src / "scenarios.jsonl").write_bytes(payload)
            return ["build", "omit", "--source", str(src), "--out", str(tmp / "out")]
        return Case("scenarios", name, make)

    cases = [case(f"bytes_{k}", v) for k, v in byte_mutations(_jsonl(rows)).items()]
    for name, row in list(_field_mutations(rows[0], list(rows[0])).items())[:24]:
        cases.append(case(name, _jsonl([row, rows[1]])))
    return cases


def _episode_file(episodes: list) -> bytes:
    return gzip.compress(json.dumps({"episodes": episodes}).encode("utf-8"))


def episode_cases() -> list[Case]:
    ep = _episode()

    def case(name: str, payload: bytes, suffix: str = ".json.gz") -> Case:
        def make(tmp: Path) -> list[str]:
            path = tmp / f"episodes{suffix}"
            path.write_bytes(payload)
            return ["embodied", "--planner", "oracle", "--episodes", str(path), "--out", str(tmp / "out")]
        return Case("episodes", name, make)

    plain = json.dumps({"episodes": [ep]}).encode("utf-8")
    cases = [case(f"bytes_{k}", v, ".json") for k, v in byte_mutations(plain, gz_ok=True).items()]
    scene = ep["scene"]
    f0, o0 = scene["furniture"][0], scene["objects"][0]

    def with_scene(**changes) -> dict:
        return {**copy.deepcopy(ep), "scene": {**copy.deepcopy(scene), **changes}}

    props = ep["evaluation_propositions"]
    semantic: dict[str, object] = {
        "not_object": [1],
        "episodes_not_list": None,
        "rooms_as_dicts": with_scene(rooms=[{"name": r} for r in scene["rooms"]]),
        "rooms_as_ints": with_scene(rooms=[1, 2]),
        "rooms_string": with_scene(rooms="kitchen"),
        "rooms_duplicate": with_scene(rooms=[*scene["rooms"], scene["rooms"][0]]),
        "position_string": with_scene(furniture=[{**f0, "position": "1,2"}, *scene["furniture"][1:]]),
        "position_strings": with_scene(furniture=[{**f0, "position": ["a", "b"]}, *scene["furniture"][1:]]),
        "position_three": with_scene(furniture=[{**f0, "position": [1, 2, 3]}, *scene["furniture"][1:]]),
        "position_nan": with_scene(furniture=[{**f0, "position": [float("nan"), 1]}, *scene["furniture"][1:]]),
        "receptacles_string": with_scene(furniture=[{**f0, "receptacles": "on"}, *scene["furniture"][1:]]),
        "receptacles_ints": with_scene(furniture=[{**f0, "receptacles": [1]}, *scene["furniture"][1:]]),
        "furniture_not_object": with_scene(furniture=["table", *scene["furniture"][1:]]),
        "furniture_duplicate": with_scene(furniture=[*scene["furniture"], f0]),
        "furniture_articulated_string": with_scene(furniture=[{**f0, "articulated": "yes"}, *scene["furniture"][1:]]),
        "furniture_components_int": with_scene(furniture=[{**f0, "components": 3}, *scene["furniture"][1:]]),
        "object_duplicate": with_scene(objects=[*scene["objects"], o0]),
        "object_named_as_furniture": with_scene(objects=[{**o0, "name": f0["name"]}, *scene["objects"][1:]]),
        "affordances_int": with_scene(objects=[{**o0, "affordances": 3}, *scene["objects"][1:]]),
        "affordances_ints": with_scene(objects=[{**o0, "affordances": [1, 2]}, *scene["objects"][1:]]),
        "object_type_int": with_scene(objects=[{**o0, "type": 5}, *scene["objects"][1:]]),
        "object_not_object": with_scene(objects=[3, *scene["objects"][1:]]),
        "agents_empty": with_scene(agents=[]),
        "agents_string": with_scene(agents=["robot"]),
        "agents_list_of_ints": with_scene(agents=[1]),
        "scene_missing": {k: v for k, v in ep.items() if k != "scene"},
        "episode_id_int": {**ep, "episode_id": 5},
        "instruction_list": {**ep, "instruction": ["a"]},
        "propositions_empty": {**ep, "evaluation_propositions": []},
        "proposition_args_list": {**ep, "evaluation_propositions": [{**props[0], "args": []}]},
        "proposition_handle_int": {**ep, "evaluation_propositions": [
            {**props[0], "args": {**props[0]["args"], "object_handles": [3]}}]},
        "dependency_cycle": {**ep, "evaluation_proposition_dependencies": [
            {"proposition_indices": [0], "depends_on": [1], "relation_type": "after_satisfied"},
            {"proposition_indices": [1], "depends_on": [0], "relation_type": "after_satisfied"}]},
        "dependency_self": {**ep, "evaluation_proposition_dependencies": [
            {"proposition_indices": [0], "depends_on": [0], "relation_type": "while_satisfied"}]},
        "temporal_cycle": {**ep, "evaluation_constraints": [
            *ep["evaluation_constraints"],
            {"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1], [1, 0]], "n_propositions": 2}}]},
        "temporal_self_loop": {**ep, "evaluation_constraints": [
            *ep["evaluation_constraints"],
            {"type": "TemporalConstraint", "args": {"dag_edges": [[0, 0]], "n_propositions": 2}}]},
        "constraints_not_list": {**ep, "evaluation_constraints": {"a": 1}},
        "dependencies_not_list": {**ep, "evaluation_proposition_dependencies": "x"},
        "constraint_args_list": {**ep, "evaluation_constraints": [
            {"type": "TerminalSatisfactionConstraint", "args": [0, 1]}]},
        "info_purposes_missing": {**ep, "info": {k: v for k, v in ep["info"].items() if k != "purposes"}},
        "object_states_list": {**ep, "object_states": [1]},
        "id_dotdot": {**ep, "episode_id": "../escaped"},
        "id_absolute": {**ep, "episode_id": "/tmp/framebench-fuzz-escape"},
        "id_slash": {**ep, "episode_id": "a/b"},
        "id_nul": {**ep, "episode_id": "a\x00b"},
        "id_dot": {**ep, "episode_id": ".."},
        "duplicate_episode_id": [ep, ep],
    }
    for name, value in semantic.items():
        if value is None:
            payload = gzip.compress(b'{"episodes": {"a": 1}}')
        else:
            payload = _episode_file(value if isinstance(value, list) else [value])
        cases.append(case(name, payload))
    def purposes_case(name: str, payload: bytes) -> Case:
        def make(tmp: Path) -> list[str]:
            (tmp / "eps.json.gz").write_bytes(_episode_file([{"episode_id": "7", "instruction": "Tidy up."}]))
            (tmp / "purposes.json").write_bytes(payload)
            return ["partnr", "frame", "--episodes", str(tmp / "eps.json.gz"), "--purposes",
                    str(tmp / "purposes.json"), "--out", str(tmp / "out" / "framed.json.gz")]
        return Case("episodes", f"purposes_{name}", make)

    valid_purposes = json.dumps({"7": ep["info"]["purposes"]}).encode()
    cases += [purposes_case(k, v) for k, v in byte_mutations(valid_purposes).items()]
    for name, row in list(_field_mutations(ep, ["episode_id", "instruction", "scene", "info",
                                               "evaluation_propositions"]).items()):
        cases.append(case(f"field_{name}", _episode_file([row])))
    return cases


def _records_frame():
    import pandas as pd

    from framebench import records as rec

    rows = [
        rec.make_row(run_id="r", model="baseline:always-yes", suite="framingqa", task="finance", format="binary",
                     context_id="c1", item_id="c1:1", bias="correct", level="root", form="plain", phrasing="Q1",
                     gold="Yes", answer="Yes", correct=True, output="Yes"),
        rec.make_row(run_id="r", model="baseline:always-yes", suite="omit", task="omit", format="binary",
                     context_id="s1", item_id="s1:action@M0", bias="neutral", answer="Yes", output="Yes",
                     frame="action", condition="M0"),
        rec.make_row(run_id="r", model="baseline:always-yes", suite="omit", task="omit", format="binary",
                     context_id="s1", item_id="s1:omission@M0", bias="neutral", answer="No", output="No",
                     frame="omission", condition="M0"),
        rec.make_row(run_id="r", model="oracle", suite="embodied", task="robotics", format="episode",
                     context_id="e1", item_id="e1__neutral", bias="neutral", correct=True, constraint="none",
                     percent_complete=1.0, success=True, sim_steps=10, replans=1),
    ]
    return pd.DataFrame(rows, columns=list(rec.registered_schema().columns))


def _contract_typed(df):
    """The frame as an arrow table, each column in its contract type where its values fit that
    type, else as text (a mutation's wrong value), so each case fails on what it mutated."""
    import pandas as pd
    import pyarrow as pa

    from framebench import records as rec

    arrays = []
    for col in df.columns:
        values = [None if not isinstance(v, str | bool) and pd.isna(v) else v for v in df[col].tolist()]
        try:
            arrays.append(pa.array(values, type=rec.registered_schema().arrow.field(col).type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            arrays.append(pa.array([None if v is None else str(v) for v in values], type=pa.string()))
    return pa.Table.from_arrays(arrays, names=list(df.columns))


def records_cases() -> list[Case]:
    def case(name: str, mutate: Callable | None = None, raw: bytes | None = None) -> Case:
        def make(tmp: Path) -> list[str]:
            run = tmp / "run"
            run.mkdir()
            if raw is not None:
                (run / "records.parquet").write_bytes(raw)
            else:
                import pyarrow.parquet as pq

                pq.write_table(_contract_typed(mutate(_records_frame())), run / "records.parquet")
            return ["score", str(run), "--out", str(tmp / "out")]
        return Case("records", name, make)

    valid = b"".join(json.dumps(r).encode() + b"\n" for r in _records_frame().to_dict("records"))
    cases = [case(f"bytes_{k}", raw=v) for k, v in byte_mutations(valid).items()]

    def setcell(col, value, row=0):
        def f(df):
            df[col] = df[col].astype(object)
            df.at[row, col] = value
            return df
        return f

    def drop(col):
        return lambda df: df.drop(columns=[col])

    def prompts_case(name: str, payload: bytes) -> Case:
        def make(tmp: Path) -> list[str]:
            run = tmp / "run"
            run.mkdir()
            _records_frame().to_parquet(run / "records.parquet", index=False)
            (run / "prompts.jsonl").write_bytes(payload)
            return ["score", str(run), "--out", str(tmp / "out")]
        return Case("records", f"prompts_{name}", make)

    prompt = {"item_id": "c1:1", "prompt": "Is it?"}
    cases += [prompts_case(k, v) for k, v in byte_mutations(_jsonl([prompt])).items()
              if k not in ("empty", "whitespace_only")]
    cases += [prompts_case("prompt_int", _jsonl([{**prompt, "prompt": 3}])),
              prompts_case("item_id_missing", _jsonl([{"prompt": "x"}]))]

    from framebench import records as rec

    present = set(_records_frame()["suite"])
    schema = rec.registered_schema()
    for col in rec.registered_schema().columns:
        # LATER_COLUMNS read as their defaults from older files, and so do the columns of a suite
        # with no row in the file (one installed after it was written)
        if col not in rec.LATER_COLUMNS and (not schema.owners(col) or present & set(schema.owners(col))):
            cases.append(case(f"drop_{col}", drop(col)))
    for col in ("suite", "task", "format", "bias", "level", "parse", "frame", "condition", "constraint",
                "answer_mode"):
        cases.append(case(f"bad_{col}", setcell(col, "bogus")))
    cases += [case("answer_probs_not_json", setcell("answer_probs", "{")),
              case("answer_probs_without_constrained_mode", setcell("answer_probs", '{"Yes":0.5,"No":0.5}'))]
    semantic = {
        "suite_omit_task_finance": setcell("suite", "omit"),
        "task_robotics_suite_framingqa": setcell("task", "robotics"),
        "format_episode_framingqa": setcell("format", "episode"),
        "format_mc_omit": setcell("format", "mc", 1),
        "omit_no_frame": setcell("frame", "", 1),
        "omit_no_condition": setcell("condition", "", 2),
        "framingqa_with_frame": setcell("frame", "action", 0),
        "binary_gold_maybe": setcell("gold", "Maybe"),
        "binary_answer_E": setcell("answer", "E"),
        "correct_string": setcell("correct", "yes"),
        "percent_complete_2": setcell("percent_complete", 2.0),
        "item_id_blank": setcell("item_id", ""),
        "context_id_blank": setcell("context_id", ""),
        "model_blank": setcell("model", ""),
        "run_id_none": setcell("run_id", None),
        "duplicate_row": lambda df: __import__("pandas").concat([df, df.iloc[[0]]], ignore_index=True),
        "sim_steps_string": setcell("sim_steps", "many"),
    }
    for name, fn in semantic.items():
        cases.append(case(name, fn))
    cases += _wide_integer_cases()
    return cases


def _wide_integer_cases() -> list[Case]:
    """Integer columns stored in wider or other arrow types, holding values int64 cannot."""
    import decimal

    import pyarrow as pa

    def case(name: str, column: str, values: list, typ) -> Case:
        def make(tmp: Path) -> list[str]:
            import pyarrow.parquet as pq

            run = tmp / "run"
            run.mkdir()
            from framebench.records import to_table

            table = to_table(_records_frame())  # every other column in its contract type
            index = table.schema.get_field_index(column)
            table = table.set_column(index, column, pa.array(values, type=typ))
            pq.write_table(table, run / "records.parquet")
            return ["score", str(run), "--out", str(tmp / "out")]
        return Case("records", f"wide_{name}", make)

    cases = []  # the fourth row is the episode's; the others are text rows
    for column in ("sim_steps", "replans"):
        for label, value in (("2p63", 2**63), ("2p64m1", 2**64 - 1), ("1e19", 10**19)):
            cases.append(case(f"{column}_uint64_{label}", column, [value, None, None, 1], pa.uint64()))
            cases.append(case(f"{column}_uint64_{label}_last", column, [None, None, None, value], pa.uint64()))
        cases.append(case(f"{column}_decimal_2p70", column, [decimal.Decimal(2**70)] * 4, pa.decimal128(38, 0)))
        cases.append(case(f"{column}_float_1e30", column, [1e30, None, None, 1.0], pa.float64()))
        cases.append(case(f"{column}_string_digits", column, [str(2**70), None, None, "1"], pa.string()))
    cases.append(case("percent_complete_uint64", "percent_complete", [2**64 - 1, None, None, 1], pa.uint64()))
    return cases


def stats_cases() -> list[Case]:
    suffixes = ("neutral", "correct_root", "correct_propositional", "correct_global",
                "incorrect_root", "incorrect_propositional", "incorrect_global")
    good = {"task_percent_complete": 0.5, "task_state_success": 0.0, "sim_step_count": 10,
            "replanning_count_0": 2, "runtime": 1.0}

    def case(name: str, stats_file: object) -> Case:
        def make(tmp: Path) -> list[str]:
            episodes = [{"episode_id": f"42__{s}", "instruction": "Do it.", "scene_id": "s",
                         "info": {"constraint_type": "none"}, "evaluation_propositions": []} for s in suffixes]
            framed = tmp / "framed.json.gz"
            framed.write_bytes(gzip.compress(json.dumps({"episodes": episodes}).encode()))
            stats = tmp / "results" / "stats"
            stats.mkdir(parents=True)
            for s in suffixes:
                (stats / f"42__{s}.json").write_text(json.dumps({"success": True, "stats": json.dumps(good)}))
            payload = stats_file if isinstance(stats_file, bytes) else json.dumps(stats_file).encode()
            (stats / "42__neutral.json").write_bytes(payload)
            return ["partnr", "ingest", str(tmp / "results"), "--episodes", str(framed), "--out", str(tmp / "out")]
        return Case("stats", name, make)

    cases = []
    for key in good:
        for label, value in (("string", "x"), ("none", None), ("list", [1]), ("bool", True)):
            if (key == "runtime" and label == "none") or (key == "task_state_success" and label == "bool"):
                continue  # runtime may be absent; PARTNR may write the success flag as a boolean
            cases.append(case(f"{key}_{label}", {"success": True, "stats": json.dumps({**good, key: value})}))
    cases += [
        case("percent_above_one", {"success": True, "stats": json.dumps({**good, "task_percent_complete": 1.5})}),
        case("percent_negative", {"success": True, "stats": json.dumps({**good, "task_percent_complete": -0.1})}),
        case("steps_negative", {"success": True, "stats": json.dumps({**good, "sim_step_count": -3})}),
        case("steps_fraction", {"success": True, "stats": json.dumps({**good, "sim_step_count": 2.5})}),
        case("replans_negative", {"success": True, "stats": json.dumps({**good, "replanning_count_0": -1})}),
        case("percent_missing", {"success": True, "stats": json.dumps({k: v for k, v in good.items()
                                                                       if k != "task_percent_complete"})}),
        case("success_string", {"success": "yes", "stats": json.dumps(good)}),
        case("success_missing", {"stats": json.dumps(good)}),
        case("stats_list", {"success": True, "stats": [1, 2]}),
        case("stats_number", {"success": True, "stats": 3}),
        case("stats_string_not_json", {"success": True, "stats": "not json"}),
        case("stats_string_list", {"success": True, "stats": "[1]"}),
        case("top_level_list", [1, 2]),
        case("info_dict_on_crash", {"success": False, "info": {"a": 1}}),
        case("percent_nan_literal", b'{"success": true, "stats": {"task_percent_complete": NaN}}'),
        case("stats_deep_string", {"success": True, "stats": _deep(50_000).decode()}),
    ]
    return cases


def ingest_id_cases() -> list[Case]:
    """Framed episode ids that would walk out of the results tree."""
    def case(name: str, base: str) -> Case:
        def make(tmp: Path) -> list[str]:
            suffixes = ("neutral",)
            episodes = [{"episode_id": f"{base}__{s}", "instruction": "Do it.", "scene_id": "s",
                         "info": {}, "evaluation_propositions": []} for s in suffixes]
            framed = tmp / "framed.json.gz"
            framed.write_bytes(gzip.compress(json.dumps({"episodes": episodes}).encode()))
            (tmp / "results" / "stats").mkdir(parents=True)
            return ["partnr", "ingest", str(tmp / "results"), "--episodes", str(framed), "--out", str(tmp / "out")]
        return Case("stats", name, make)

    return [case("id_dotdot", "../../secret"), case("id_absolute", "/etc/passwd"), case("id_slash", "a/b")]


# ---------- PARTNR ingest: the planner log, the driver's manifest, stats bounds, framed ids ----------

_SUFFIXES = ("neutral", "correct_root", "correct_propositional", "correct_global",
             "incorrect_root", "incorrect_propositional", "incorrect_global")
_GOOD_STATS = {"task_percent_complete": 1.0, "task_state_success": 1.0, "sim_step_count": 120,
               "replanning_count_0": 3, "runtime": 9.5}
_GOOD_LOG = {"task": "Do it.", "steps": [
    {"thought": {"0": "I will go to the table."}, "high_level_actions": {"0": ["Navigate", "table_14", None]}},
    {"thought": {"0": None}, "high_level_actions": {"0": ["Navigate", "table_14", None]}},
    {"thought": {"0": "Everything is on the table."}, "high_level_actions": {"0": ["Done", None, None]}},
]}
_GOOD_MANIFEST = {"planner": "openai:m", "run_id": "partnr-0123456789ab", "fingerprint": "openai:m@http://h/v1",
                  "decoding": {"temperature": 0.0, "max_tokens": 256}, "started": "2026-01-01T00:00:00+00:00",
                  "partnr": {"baseline": "single_agent_zero_shot_react_summary"}, "batches": []}


def _framed_episodes(base: str = "42") -> list[dict]:
    return [{"episode_id": f"{base}__{s}", "instruction": f"Do {base} ({s}).", "scene_id": "s",
             "info": {"constraint_type": "spatial"}, "evaluation_propositions": []} for s in _SUFFIXES]


def partnr_ingest_cases() -> list[Case]:
    """``framebench partnr ingest`` over PARTNR output folders with one file broken at a time."""

    def case(name: str, log: object = None, manifest: object = None, stats: dict | None = None,
             episodes: list | None = None) -> Case:
        def make(tmp: Path) -> list[str]:
            framed = tmp / "framed.json.gz"
            eps = _framed_episodes() if episodes is None else episodes
            framed.write_bytes(gzip.compress(json.dumps({"episodes": eps}).encode()))
            out_dir = tmp / "results" / framed.name
            (out_dir / "stats").mkdir(parents=True)
            for suffix in _SUFFIXES:
                body = {**_GOOD_STATS, **(stats or {})} if suffix == "neutral" else _GOOD_STATS
                (out_dir / "stats" / f"42__{suffix}.json").write_text(
                    json.dumps({"success": True, "stats": json.dumps(body)}))
            (out_dir / "planner-log").mkdir()
            payload = log if isinstance(log, bytes) else json.dumps(_GOOD_LOG if log is None else log).encode()
            (out_dir / "planner-log" / "planner-log-episode_42__neutral_0.json").write_bytes(payload)
            body = manifest if isinstance(manifest, bytes) else json.dumps(
                _GOOD_MANIFEST if manifest is None else manifest).encode()
            (tmp / "results" / "framebench-run.json").write_bytes(body)
            return ["partnr", "ingest", str(tmp / "results"), "--episodes", str(framed), "--out", str(tmp / "out")]
        return Case("partnr_ingest", name, make)

    cases: list[Case] = []
    # the planner log: every level of its shape wrong in turn, then its bytes
    step = _GOOD_LOG["steps"][0]
    shapes: dict[str, object] = {"top_list": [step], "top_string": "steps", "top_number": 3, "top_null": None,
                                 "steps_string": {"steps": "x"}, "steps_object": {"steps": {"0": step}},
                                 "steps_number": {"steps": 7}}
    for label, value in (("string", "x"), ("list", [1]), ("number", 3), ("null", None)):
        if value is not None:
            shapes[f"step_{label}"] = {"steps": [value, *_GOOD_LOG["steps"]]}
    for label, value in (("string", "I will go."), ("list", ["I will go."]), ("number", 1), ("bool", True)):
        shapes[f"thought_{label}"] = {"steps": [{**step, "thought": value}]}
    for label, value in (("int", 3), ("list", ["a"]), ("object", {"t": "a"}), ("bool", False)):
        shapes[f"thought_value_{label}"] = {"steps": [{**step, "thought": {"0": value}}]}
    for label, value in (("list", ["Navigate", "table_14", None]), ("string", "Navigate[table_14]"), ("number", 2)):
        shapes[f"actions_{label}"] = {"steps": [{**step, "high_level_actions": value}]}
    for n in (0, 1, 4):
        shapes[f"action_length_{n}"] = {"steps": [{**step, "high_level_actions": {"0": ["Navigate", "t", None, "x"][:n]}}]}
    for label, value in (("string", "Navigate"), ("object", {"tool": "Navigate"}), ("number", 5)):
        shapes[f"action_{label}"] = {"steps": [{**step, "high_level_actions": {"0": value}}]}
    for pos in range(3):
        for label, value in (("int", 4), ("list", ["x"]), ("object", {"a": 1})):
            action = ["Navigate", "table_14", None]
            action[pos] = value
            shapes[f"action_element{pos}_{label}"] = {"steps": [{**step, "high_level_actions": {"0": action}}]}
    shapes["bad_step_before_good_ones"] = {"steps": [{"thought": "early"}, *_GOOD_LOG["steps"]]}
    shapes["other_agent_bad"] = {"steps": [{**step, "thought": {"0": "ok", "1": 5}}]}
    cases += [case(f"log_{k}", log=json.dumps(v).encode()) for k, v in shapes.items()]
    valid_log = json.dumps(_GOOD_LOG).encode()
    cases += [case(f"log_bytes_{k}", log=v) for k, v in byte_mutations(valid_log).items()]
    # the driver's manifest: each field the wrong type, then its bytes
    swaps = {"int": 42, "float": 1.5, "list": ["openai:m"], "object": {"a": 1}, "bool": True, "string": "x"}
    for name, good in _GOOD_MANIFEST.items():
        for label, value in swaps.items():
            if isinstance(value, type(good)) and not isinstance(value, bool):
                continue
            cases.append(case(f"manifest_{name}_as_{label}", manifest={**_GOOD_MANIFEST, name: value}))
    for name in ("run_id", "planner"):
        cases.append(case(f"manifest_{name}_blank", manifest={**_GOOD_MANIFEST, name: "  "}))
    cases.append(case("manifest_run_id_path", manifest={**_GOOD_MANIFEST, "run_id": "../../elsewhere"}))
    for label, value in (("list", [_GOOD_MANIFEST]), ("string", "openai:m"), ("number", 1), ("null", None)):
        cases.append(case(f"manifest_top_{label}", manifest=json.dumps(value).encode()))
    cases += [case(f"manifest_bytes_{k}", manifest=v)
              for k, v in byte_mutations(json.dumps(_GOOD_MANIFEST).encode()).items()]
    # counts PARTNR writes as numbers: beyond any real episode, beyond int64
    for key in ("sim_step_count", "replanning_count_0", "replanning_count_1"):
        for label, value in (("1e30", 1e30), ("1e19", 1e19), ("2p63", 2**63), ("2p64", 2**64), ("1e300", 1e300),
                             ("10p40", 10**40)):
            cases.append(case(f"stats_{key}_{label}", stats={key: value}))
    # the framed episode file
    eps = _framed_episodes()
    framed = {
        "duplicate_id": [*eps, eps[0]],
        "duplicate_id_adjacent": [eps[0], eps[0], *eps[1:]],
        "duplicate_variant_other_text": [*eps, {**eps[3], "instruction": "Another text."}],
        "id_list": [{**eps[0], "episode_id": ["42__neutral"]}, *eps[1:]],
        "id_object": [{**eps[0], "episode_id": {"id": "42"}}, *eps[1:]],
        "id_bool": [{**eps[0], "episode_id": True}, *eps[1:]],
        "id_float": [{**eps[0], "episode_id": 4.2}, *eps[1:]],
        "id_null": [{**eps[0], "episode_id": None}, *eps[1:]],
        "id_unframed": [{**eps[0], "episode_id": "42"}, *eps[1:]],
        "id_bad_suffix": [{**eps[0], "episode_id": "42__sideways"}, *eps[1:]],
        "instruction_int": [{**eps[0], "instruction": 5}, *eps[1:]],
        "instruction_blank": [{**eps[0], "instruction": " "}, *eps[1:]],
        "constraint_int": [{**eps[0], "info": {"constraint_type": 3}}, *eps[1:]],
        "constraint_list": [{**eps[0], "info": {"constraint_type": ["spatial"]}}, *eps[1:]],
        "constraint_unknown": [{**eps[0], "info": {"constraint_type": "sideways"}}, *eps[1:]],
        "episode_string": ["42__neutral", *eps[1:]],
    }
    cases += [case(f"framed_{k}", episodes=v) for k, v in framed.items()]
    return cases


# ---------- FramingQA sources: DiagnosisArena options, empty tables, prepared contexts ----------

_MED_HEADER = ["id", "Case Information", "Physical Examination", "Diagnostic Tests", "Final Diagnosis",
               "Options", "Right Option"]


def _medicine_rows() -> list[list[str]]:
    path = SHARED_DATA / "diagnosisarena" / "diagnosis_arena_dataset.csv"
    if path.is_file():
        csv.field_size_limit(1 << 24)
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == _MED_HEADER
        return rows[1:4]
    return [["1", "A woman with chest pain.", "Rub.", "ECG ST elevation.", "Pericarditis",
             "{'A': 'Pericarditis', 'B': 'MI', 'C': 'Dissection', 'D': 'PE'}", "A"],
            ["2", "A man with cough.", "Crackles.", "CXR.", "Pneumonia",
             "{'A': 'Pneumonia', 'B': 'Asthma', 'C': 'COPD', 'D': 'Sarcoidosis'}", "A"]]


def _nested(kind: str, depth: int, inner: str = "'x'") -> str:
    opening, closing = {"list": ("[", "]"), "tuple": ("(", ",)"), "dict": ("{'k': ", "}"), "set": ("{", "}")}[kind]
    return opening * depth + inner + closing * depth


def _options_mutations() -> dict[str, str]:
    """Options cells too deep or too long to parse safely (each must be an error, never parsed)."""
    out: dict[str, str] = {}
    for kind in ("list", "tuple", "dict", "set"):
        for depth in (4, 50, 1000, 100_000):
            if depth <= 1000 or kind in ("list", "dict"):
                out[f"{kind}_depth_{depth}"] = _nested(kind, depth)
        out[f"{kind}_in_value"] = "{'A': " + _nested(kind, 200) + ", 'B': 'b', 'C': 'c', 'D': 'd'}"
    out["unclosed_deep"] = "[" * 100_000
    out["brackets_in_strings_then_deep"] = "{'A': '[[[['" + ", 'B': " + _nested("list", 500) + "}"
    for size in (10_001, 200_000, 5_000_000):
        out[f"long_string_{size}"] = "{'A': '" + "x" * size + "', 'B': 'b', 'C': 'c', 'D': 'd'}"
    out["long_list"] = "[" + ", ".join(["1"] * 1_000_000) + "]"
    out["many_keys"] = "{" + ", ".join(f"'k{i}': 'v'" for i in range(100_000)) + "}"
    out["long_number"] = "9" * 50_000
    out["long_unary_chain"] = "-" * 1_000_000 + "1"
    return out


def framingqa_source_cases() -> list[Case]:
    """``framebench build framingqa --source DIR`` over source folders with one file broken."""
    rows = _medicine_rows()

    def medicine(name: str, options: str) -> Case:
        def make(tmp: Path) -> list[str]:
            changed = [list(r) for r in rows]
            changed[0][_MED_HEADER.index("Options")] = options
            path = tmp / "src" / "diagnosisarena" / "diagnosis_arena_dataset.csv"
            path.parent.mkdir(parents=True)
            path.write_bytes(_csv(_MED_HEADER, changed))
            return ["build", "framingqa", "--source", str(tmp / "src"), "--out", str(tmp / "out"),
                    "--tasks", "medicine"]
        return Case("framingqa_sources", f"options_{name}", make)

    cases = [medicine(k, v) for k, v in _options_mutations().items()]

    def header_only(name: str, relative: str, header: list[str], tasks: str, sep: str = "\t") -> Case:
        def make(tmp: Path) -> list[str]:
            src = tmp / "src"
            legal = SHARED_DATA / "legalbench"
            if legal.is_dir() and relative.startswith("legalbench"):
                import shutil
                shutil.copytree(legal, src / "legalbench")
            path = src / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                path.chmod(0o644)
            text = sep.join(header) + "\n"
            path.write_text(text if name != "header_crlf" else text.replace("\n", "\r\n"), encoding="utf-8")
            return ["build", "framingqa", "--source", str(src), "--out", str(tmp / "out"), "--tasks", tasks]
        return Case("framingqa_sources", f"header_only_{name}", make)

    cases += [
        header_only("hearsay", "legalbench/tasks/hearsay/test.tsv", ["label", "text", "slice"], "law_hearsay"),
        header_only("hearsay_answer_column", "legalbench/tasks/hearsay/test.tsv", ["answer", "index", "text", "slice"],
                    "law_hearsay"),
        header_only("hearsay_hf_sample", "legalbench/datasaur_hf_subset/hearsay/test.tsv",
                    ["answer", "index", "slice", "text"], "law_hearsay"),
        header_only("learned_hands_courts", "legalbench/tasks/learned_hands_courts/test_prefix.tsv",
                    ["index", "text", "answer"], "law_issue_spotting"),
        header_only("learned_hands_train", "legalbench/tasks/learned_hands_torts/train.tsv",
                    ["index", "text", "answer"], "law_issue_spotting"),
        header_only("medicine", "diagnosisarena/diagnosis_arena_dataset.csv", _MED_HEADER, "medicine", sep=","),
    ]

    contexts, sheets = _sheets()
    ctx, sheet = contexts[0], sheets[0]

    def prepared(name: str, context_rows: list[dict] | bytes, sheet_rows: list[dict] | None = None,
                 tasks: str | None = None) -> Case:
        def make(tmp: Path) -> list[str]:
            src = tmp / "src"
            src.mkdir()
            body = context_rows if isinstance(context_rows, bytes) else _jsonl(context_rows)
            (src / "contexts.jsonl").write_bytes(body)
            (src / "answer_sheets.jsonl").write_bytes(_jsonl(sheets if sheet_rows is None else sheet_rows))
            return ["build", "framingqa", "--source", str(src), "--out", str(tmp / "out"),
                    *(["--tasks", tasks] if tasks else [])]
        return Case("framingqa_sources", f"contexts_{name}", make)

    other = {**ctx, "context_id": ctx["context_id"] + "-b"}
    cases += [
        prepared("empty", b""),
        prepared("whitespace_only", b"\n \n"),
        prepared("duplicate_id", [ctx, ctx]),
        prepared("duplicate_id_other_text", [ctx, {**ctx, "text": ctx["text"] + " Again."}]),
        prepared("duplicate_id_later", [ctx, other, ctx], [sheet, {**sheet, "context_id": other["context_id"]}]),
        prepared("id_blank", [{**ctx, "context_id": " "}]),
        prepared("options_repeated", [{**ctx, "options": [*ctx["options"], ctx["options"][0]]}]),
        prepared("options_one", [{**ctx, "options": [ctx["gold"]]}]),
        prepared("options_blank_entry", [{**ctx, "options": [*ctx["options"], " "]}]),
        prepared("no_context_of_task", [ctx], tasks="medicine" if ctx["task"] != "medicine" else "law_hearsay"),
        prepared("sheets_duplicate", [ctx], [sheet, sheet]),
    ]
    return cases


@functools.cache
def all_cases() -> list[Case]:
    from fuzz_surfaces import surface_cases

    return (item_cases() + sheet_cases() + seed_cases() + scenario_cases() + episode_cases()
            + records_cases() + stats_cases() + ingest_id_cases() + partnr_ingest_cases()
            + framingqa_source_cases() + surface_cases())


# ---------- running ----------

class _Runaway(Exception):
    pass


def _alarm(*_args):
    raise _Runaway()


def run_case(case: Case, tmp: Path, seconds: int = 60) -> Outcome:
    from framebench.cli import main

    made = case.make(tmp)
    argv, expect = made if isinstance(made, tuple) else (made, [])
    out = tmp / "out"
    err, std = io.StringIO(), io.StringIO()
    code: object = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    limit = sys.getrecursionlimit()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code
    except _Runaway:
        return Outcome("runaway", None, err.getvalue())
    except BaseException as exc:  # noqa: BLE001 - anything escaping main is a traceback
        return Outcome("traceback", None, err.getvalue(), f"{type(exc).__name__}: {str(exc)[:200]}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        sys.setrecursionlimit(limit)
    stderr = err.getvalue()
    if code in (0, None):
        return Outcome("accepted", 0, stderr)
    lines = [line for line in stderr.splitlines() if line.strip()]
    partial = out.exists() and any(p.is_file() for p in out.rglob("*"))
    escaped = Path("/tmp/framebench-fuzz-escape").exists() or (tmp.parent / "escaped").exists()
    if code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and not partial and not escaped \
            and "Traceback" not in stderr and len(lines[0]) <= MAX_ERROR_LINE:
        missing = [part for part in expect if part not in lines[0]]
        if missing:
            return Outcome("vague", code, stderr, f"does not name {missing}: {lines[0][:300]}")
        return Outcome("clean", code, stderr)
    return Outcome("messy", code, stderr, f"lines={len(lines)} partial={partial} escaped={escaped} "
                   f"length={max(map(len, lines), default=0)}")


def tally(outcomes: list[Outcome]) -> Counter:
    return Counter(o.kind for o in outcomes)


if __name__ == "__main__":  # python tests/fuzz_corpus.py: print the tallies
    import tempfile

    sys.path.insert(0, str(REPO))
    only = set(sys.argv[1:])  # family names to run (default: all)
    cases = [c for c in all_cases() if not only or c.family in only]
    results: list[tuple[Case, Outcome]] = []
    with tempfile.TemporaryDirectory() as root:
        for i, c in enumerate(cases):
            folder = Path(root) / f"c{i}"
            folder.mkdir()
            results.append((c, run_case(c, folder)))
    by_family: dict[str, Counter] = {}
    for c, o in results:
        by_family.setdefault(c.family, Counter())[o.kind] += 1
    print(f"{len(cases)} cases: {dict(tally([o for _, o in results]))}")
    for fam, counts in by_family.items():
        print(f"  {fam}: {dict(counts)}")
    for c, o in results:
        if o.kind != "clean":
            print(f"{o.kind:9} {c.family}/{c.name}: {o.detail or o.stderr.strip()[:160]!r}")
