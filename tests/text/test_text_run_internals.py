"""The text run's own bookkeeping (issue 52): typed counts, each record made once (the progress
line's parse counts and the records are the same rows), and the result store kept inside the
driver (a front end is handed lookups, never the store)."""

from __future__ import annotations

import pytest
from text_helpers import framingqa_items, write_items

from framebench.api import run_text
from framebench.pipeline import text as text_run
from framebench.store import ResultStore


class ScriptedBackend:
    """Answers by the question's number: 0 "Yes", 1 a refusal, anything else "maybe"."""

    spec = "scripted"

    def fingerprint(self) -> str:
        return "scripted-v1"

    def info(self) -> dict:
        return {}

    def generate(self, chats, decoding, on_batch=None) -> list[str]:
        answers = {"Question 0:": "Yes", "Question 1:": "I cannot say."}
        return [next((a for q, a in answers.items() if q in chat[-1]["content"]), "maybe") for chat in chats]


@pytest.fixture
def made(monkeypatch) -> list[str]:
    calls: list[str] = []
    original = text_run.make_record

    def counting(job, run_id, model):
        calls.append(job.record_id)
        return original(job, run_id, model)

    monkeypatch.setattr(text_run, "make_record", counting)
    return calls


def test_counts_are_typed_and_each_record_is_made_once(tmp_path, made):
    """3 contexts x 4 items: per context question 0 (binary) "Yes" parses, question 1 (MC) is a
    refusal, questions 2 (binary) and 3 (MC) "maybe" are unparsed: ok 3, refusal 3, unparsed 6."""
    data = write_items(tmp_path / "items", framingqa_items(3, 4))
    first = run_text(None, data, tmp_path / "run", backend=ScriptedBackend(), progress=False)
    assert (first.n_records, first.n_generated, first.n_from_store) == (12, 12, 0)
    assert first.parse_counts == {"ok": 3, "unparsed": 6, "refusal": 3}
    assert sorted(made) == sorted(r["item_id"] for r in first.rows)  # each record once, not twice
    assert {r["run_id"] for r in first.rows} == {first.run_id}
    made.clear()
    again = run_text(None, data, tmp_path / "run", backend=ScriptedBackend(), progress=False)
    assert (again.n_records, again.n_generated, again.n_from_store) == (12, 0, 12)
    assert again.parse_counts == first.parse_counts and len(made) == 12
    assert again.records().equals(first.records())


def test_the_front_end_gets_lookups_not_the_store(tmp_path, monkeypatch):
    seen = []
    original = text_run.TextRun.plan

    def spy(self, meta, stored, lookup, workers):
        seen.append(lookup)
        return original(self, meta, stored, lookup, workers)

    monkeypatch.setattr(text_run.TextRun, "plan", spy)
    data = write_items(tmp_path / "items", framingqa_items(1, 2))
    run_text(None, data, tmp_path / "run", backend=ScriptedBackend(), progress=False)
    (lookup,) = seen
    assert not isinstance(lookup, ResultStore) and not hasattr(lookup, "put_many")
    with pytest.raises(Exception, match="closed"):  # it read the driver's store, closed with the run
        lookup(["any key"])
