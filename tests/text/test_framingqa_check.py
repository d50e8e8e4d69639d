"""framebench.text_eval.framingqa.check on hand-made contexts: each defect named where it is."""

from __future__ import annotations

from framebench.text_eval.framingqa.check import duplicate_defects, text_defects
from framebench.text_eval.framingqa.contexts import Context

LAW = ["Consumer", "Courts", "Employment", "Torts"]


def _ctx(cid: str, text: str, task: str = "law_issue_spotting") -> Context:
    return Context(cid, task, text, "Consumer", LAW)


def test_a_repeated_post_is_a_duplicate_whatever_its_case_and_punctuation():
    contexts = [_ctx("law-consumer-12", "My gym charged me twice. What now?"),
                _ctx("law-consumer-13", "A different post about a landlord."),
                _ctx("law-consumer-60", "my gym charged me twice -- what now"),
                _ctx("hearsay-1", "My gym charged me twice. What now?", task="law_hearsay")]
    (d,) = duplicate_defects(contexts)
    assert (d.task, d.context_id, d.kind, d.detail) == (
        "law_issue_spotting", "law-consumer-60", "duplicate context", "same text as law-consumer-12")


def test_html_entities_and_doubled_words_in_a_text():
    kinds = sorted(d.kind for d in text_defects(_ctx("c", "Tom &amp; Jerry paid the the bill")))
    assert kinds == ["doubled word", "html entity"]
