"""Drafting the purposes file with a model into a review file, and accepting reviewed entries."""

from __future__ import annotations

import gzip
import json

import pytest

import framebench.backends as backends
from framebench.cli import main
from framebench.errors import UserError
from framebench.partnr_adapters.framed_episodes import frame_file
from framebench.partnr_adapters.purposes import accept_purposes, draft_purposes, parse_purposes

GOOD = ('Sure! {"action": "putting the cup on the table", '
        '"correct": {"purpose": "tidying", "goal": "tidy the kitchen"}, '
        '"incorrect": {"purpose": "cooking", "goal": "cook dinner", "stance": "inappropriate"}} Hope it helps.')


class FakeBackend:
    spec = "fake"

    def __init__(self, replies):
        self.replies, self.prompts = replies, []

    def fingerprint(self):
        return "fake"

    def generate(self, chats, decoding):
        self.prompts += [chat[-1]["content"] for chat in chats]
        return [self.replies.get(next(k for k in self.replies if k in chat[-1]["content"]), "")
                for chat in chats]


@pytest.fixture
def episodes(tmp_path):
    data = {"episodes": [{"episode_id": "1", "instruction": "Put the cup on the table."},
                         {"episode_id": "2", "instruction": "Wash the bowl."}]}
    path = tmp_path / "eps.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def test_parse_purposes_is_strict():
    parsed = parse_purposes(GOOD)
    assert parsed == {"action": "putting the cup on the table",
                      "correct": {"purpose": "tidying", "goal": "tidy the kitchen", "stance": "appropriate"},
                      "incorrect": {"purpose": "cooking", "goal": "cook dinner", "stance": "inappropriate"}}
    assert parse_purposes("no json here") is None
    assert parse_purposes('{"action": "x", "correct": {"purpose": "p"}}') is None  # goal missing
    assert parse_purposes("{not: json}") is None


def test_draft_review_accept_and_frame(episodes, tmp_path, monkeypatch):
    fake = FakeBackend({"cup": GOOD, "bowl": "I cannot help with that."})
    monkeypatch.setattr(backends, "load_backend", lambda spec, **kw: fake)
    review = tmp_path / "review.json"
    assert draft_purposes(episodes, "fake", review, batch_size=1) == {"drafted": 1, "unparsed": 1, "accepted": 0}
    assert "Put the cup on the table." in fake.prompts[0]
    state = json.loads(review.read_text())
    assert state["episodes"]["2"]["status"] == "unparsed" and state["episodes"]["2"]["purposes"] is None
    assert state["episodes"]["2"]["raw"] == "I cannot help with that."

    with pytest.raises(UserError, match="no entry has"):
        accept_purposes(review, tmp_path / "p.json")
    # a person accepts draft 1 as is and writes purposes for 2 by hand
    state["episodes"]["1"]["accepted"] = True
    state["episodes"]["2"].update(accepted=True, purposes={
        "action": "washing the bowl",
        "correct": {"purpose": "hygiene", "goal": "keep the dishes clean", "stance": "appropriate"},
        "incorrect": {"purpose": "decoration", "goal": "decorate the sink", "stance": "inappropriate"}})
    review.write_text(json.dumps(state))
    assert accept_purposes(review, tmp_path / "p.json") == 2
    assert frame_file(episodes, tmp_path / "p.json", tmp_path / "framed.json.gz") == 14

    fake.prompts.clear()  # resumable: nothing left to draft
    draft_purposes(episodes, "fake", review)
    assert fake.prompts == []


def test_accept_rejects_a_broken_edit(tmp_path):
    review = tmp_path / "r.json"
    review.write_text(json.dumps({"episodes": {"9": {"accepted": True, "purposes": {"action": "x"}}}}))
    with pytest.raises(UserError, match=r"episode 9: purposes\.correct"):
        accept_purposes(review, tmp_path / "p.json")


def test_cli_draft_purposes(episodes, tmp_path, monkeypatch):
    monkeypatch.setattr(backends, "load_backend", lambda spec, **kw: FakeBackend({"cup": GOOD, "bowl": GOOD}))
    with pytest.raises(SystemExit) as exc:
        main(["partnr", "draft-purposes", "--episodes", str(episodes), "--review", str(tmp_path / "r.json"),
              "--model", "baseline:always-yes"])
    assert exc.value.code == 0
    assert json.loads((tmp_path / "r.json").read_text())["model"] == "baseline:always-yes"


def test_draft_with_a_real_backend_marks_unparsed(episodes, tmp_path):
    counts = draft_purposes(episodes, "baseline:always-yes", tmp_path / "r.json")
    assert counts == {"drafted": 0, "unparsed": 2, "accepted": 0}
