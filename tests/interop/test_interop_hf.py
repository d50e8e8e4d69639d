"""``framebench export hf``: the demo sets as a Hugging Face dataset folder, loaded back with the
real ``datasets`` offline, the card's YAML read by ``huggingface_hub``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = {"framingqa": ROOT / "datasets/demo/framingqa", "omit": ROOT / "datasets/demo/omit"}


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code or 0


def export(name: str, out: Path) -> Path:
    assert run(["export", "hf", str(DEMO[name]), "--out", str(out)]) == 0
    return out


def demo_items(name: str) -> list[dict]:
    return [json.loads(line) for line in (DEMO[name] / "items.jsonl").read_text().splitlines() if line]


@pytest.mark.parametrize("name", ["framingqa", "omit"])
def test_every_config_loads_with_rows_equal_to_the_items(name: str, tmp_path: Path) -> None:
    from huggingface_hub import DatasetCard

    import datasets

    out = export(name, tmp_path / "hf")
    card = DatasetCard.load(out / "README.md")
    configs = [c["config_name"] for c in card.data.to_dict()["configs"]]
    items = demo_items(name)
    expected = {f"{it['suite']}-{it['task']}-{it['format']}" for it in items}
    assert set(configs) == expected
    seen = []
    for config in configs:
        rows = datasets.load_dataset(str(out), config, split="test").to_list()
        want = [it for it in items if f"{it['suite']}-{it['task']}-{it['format']}" == config]
        assert [{k: row[k] for k in it} for row, it in zip(rows, want, strict=True)] == want
        seen += [row["item_id"] for row in rows]
    assert sorted(seen) == sorted(it["item_id"] for it in items)


def test_rows_carry_framebench_prompt_gold_choices_and_decoding(tmp_path: Path) -> None:
    import datasets
    from framebench.pipeline.text import build_jobs
    from framebench.registry import suite

    out = export("framingqa", tmp_path / "hf")
    rows = datasets.load_dataset(str(out), "framingqa-law_issue_spotting-mc", split="test").to_list()
    items = [it for it in demo_items("framingqa") if it["task"] == "law_issue_spotting" and it["format"] == "mc"]
    jobs = build_jobs(items, [], DEMO["framingqa"] / "items.jsonl")
    for row, job in zip(rows, jobs, strict=True):
        assert row["prompt"] == job.prompt and row["chat"] == job.chat
        assert row["gold"] == job.item["gold"] and row["record_id"] == job.record_id
        assert row["max_new_tokens"] == job.decoding.max_new_tokens
        assert tuple(row["choices"]) == suite("framingqa").items.answer_choices(job)


def test_card_header_and_text(tmp_path: Path) -> None:
    from huggingface_hub import DatasetCard

    from framebench.files import file_sha256
    out = export("framingqa", tmp_path / "hf")
    card = DatasetCard.load(out / "README.md")
    meta = card.data.to_dict()
    assert meta["license"] == "apache-2.0" and meta["language"] == ["en"]
    assert meta["size_categories"] == ["1K<n<10K"] and "multiple-choice" in meta["task_categories"]
    assert meta["pretty_name"]
    assert file_sha256(DEMO["framingqa"] / "items.jsonl") in card.text
    assert "project-authored demo (framebench) (licence: Apache-2.0)" in card.text
    for paper in ("framingqa", "omit"):
        title = (ROOT.parent / "shared/papers" / f"{paper}.txt")
        title = title if title.is_file() else Path("/work/shared/papers") / f"{paper}.txt"
        first = title.read_text(encoding="utf-8").splitlines()[0]
        assert first.strip() in card.text  # the title as the paper gives it
    assert card.text.count("## framingqa-") == 7


def test_out_not_empty_is_refused_and_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "hf"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert run(["export", "hf", str(DEMO["framingqa"]), "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
