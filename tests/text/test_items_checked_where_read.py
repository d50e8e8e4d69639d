"""Items are checked where ``text`` reads them, before any model runs: a bad enum value is one line
naming the items file, its line and the item's own field, and nothing is left in the output folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.errors import UserError

DEMO_ITEMS = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "framingqa" / "items.jsonl"


def _run(args: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code, capsys.readouterr().err


@pytest.mark.parametrize(("field", "value"), [("phrasing", "Q9"), ("form", "shouted"), ("bias", "sideways"),
                                              ("level", "cosmic"), ("format", "essay")])
def test_bad_enum_value_is_refused_before_the_run(tmp_path, capsys, field, value):
    items = [json.loads(line) for line in DEMO_ITEMS.read_text().splitlines()[:3]]
    items[1][field] = value
    data = tmp_path / "data"
    data.mkdir()
    (data / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    out = tmp_path / "out"
    code, err = _run(["text", "--data", str(data), "--model", "baseline:always-yes", "--out", str(out),
                      "--quiet"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(data / "items.jsonl") in lines[0] and "line 2" in lines[0] and f"'{field}'" in lines[0]
    assert value in lines[0]
    assert not out.exists() or not any(out.iterdir())  # no store.sqlite, no half-written run


def test_items_written_before_the_rename_still_read(tmp_path):
    """FramingQA items named the phrasing ``variant`` until issue 52 (``SuiteItems.former_fields``):
    such a file reads, its phrasings checked and carried under the name ``phrasing``."""
    from framebench.items import read_items

    items = [json.loads(line) for line in DEMO_ITEMS.read_text().splitlines()[:4]]
    old = [{("variant" if k == "phrasing" else k): v for k, v in it.items()} for it in items]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in old))
    assert read_items(tmp_path) == items
    old[1]["variant"] = "Q9"
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in old))
    with pytest.raises(UserError, match="field 'phrasing' has unknown value 'Q9'"):
        read_items(tmp_path)
