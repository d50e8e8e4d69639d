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


def _sheet(cid: str, premises: dict[str, str], evidence: list[tuple[str, str]], readings=None, rephrasings=None):
    from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, numbered
    from framebench.text_eval.framingqa.blind import BlindReading

    sheet = AnswerSheet(cid, "law_issue_spotting", "Consumer", ["Courts", "Employment", "Torts"], premises,
                        rephrasings or ["the shop keeping my deposit for a sofa it never delivered to my home",
                                        "a store holding on to my money for furniture that never arrived at my flat"],
                        numbered([{"distractor": d, "premise": p} for d, p in evidence]))
    own = {**{p: o for o, p in premises.items()}, **{p: "Consumer" for p in sheet.gold_rephrasings},
           **{p: d for d, p in evidence}}
    sheet.blind_readings = [BlindReading(p, (readings or {}).get(p, o), "reader B") for p, o in own.items()]
    return sheet


PREMISES = {
    "Consumer": "the furniture shop taking my deposit for a sofa and never delivering it to my flat",
    "Courts": "my plan to file in small claims and the hearing date I expect to be given for it",
    "Employment": "my sense that the shop's staff were let go, so nobody there could process my order",
    "Torts": "the damage I believe the shop's delay did to me, a harm I think they must answer for",
}
EVIDENCE = [("Courts", "the letter I want a lawyer to send before I take the matter before a judge"),
            ("Employment", "the manager telling me he had just been hired and knew nothing of my order"),
            ("Torts", "the stress and lost days off work I blame on the shop's broken promise to me")]


def test_new_premise_checks_each_name_their_defect():
    from framebench.text_eval.framingqa.check import (
        blind_defects,
        premise_defects,
        shared_premise_defects,
        voice_defects,
    )

    ctx = _ctx("law-consumer-1", "I paid a deposit for a sofa at a furniture shop and it was never delivered to my "
               "flat. The manager says he was just hired and the staff were let go, so nobody can process my "
               "order. The delay cost me stress and days off work, damage I think they must answer for. Should "
               "I have a lawyer send a letter, or file in small claims and wait for a hearing date before a judge?")
    good = _sheet("law-consumer-1", PREMISES, EVIDENCE)
    assert premise_defects(ctx, good) == []
    copied = _sheet("law-consumer-1", PREMISES, [*EVIDENCE, ("Courts", PREMISES["Courts"])])
    assert [d.kind for d in premise_defects(ctx, copied)].count("evidence copies a premise") == 1
    wrong = _sheet("law-consumer-1", PREMISES, EVIDENCE, readings={PREMISES["Courts"]: "Consumer"})
    assert [(d.kind, d.detail) for d in blind_defects(ctx, wrong)] == [
        ("blind reading disagrees", "premise <Courts> read as 'Consumer'")]
    unread = _sheet("law-consumer-1", PREMISES, EVIDENCE)
    unread.blind_readings = unread.blind_readings[1:]
    assert [d.kind for d in blind_defects(ctx, unread)] == ["no blind reading"]
    from framebench.text_eval.framingqa.blind import BlindReading
    kept = _sheet("law-consumer-1", PREMISES, EVIDENCE)
    kept.blind_readings[1] = BlindReading(PREMISES["Courts"], "none", "reader B", override="the reviewer's reason")
    assert blind_defects(ctx, kept) == []
    mixed = _sheet("law-consumer-1", {**PREMISES, "Torts": "the asker's belief that the delay harmed them in a way the shop must pay for"}, EVIDENCE)
    assert [d.kind for d in voice_defects(ctx, mixed)] == ["mixed voice"]
    other = _ctx("law-consumer-2", "I bought a sofa that never came from a furniture shop, and my deposit is gone.")
    twice = shared_premise_defects([ctx, other], {"law-consumer-1": good, "law-consumer-2": good})
    assert len(twice) == 9 and twice[0].detail.endswith("also in law-consumer-1")


def test_gold_premise_longest_more_often_than_chance_is_a_task_defect():
    from framebench.text_eval.framingqa.check import gold_longest_defects, gold_premise_longest

    long_gold = {**PREMISES, "Consumer": PREMISES["Consumer"] + " after I had paid the whole price up front by card"}
    sheets = [_sheet(f"c{i}", long_gold if i < 26 else PREMISES, EVIDENCE) for i in range(100)]
    assert sum(gold_premise_longest(s) for s in sheets) == 26
    (d,) = gold_longest_defects("law_issue_spotting", sheets)
    assert d.detail == "26 of 100 contexts (at most 1 in 4, the chance rate)"
    assert gold_longest_defects("law_issue_spotting", sheets[1:] + sheets[-1:]) == []  # 25 of 100


def test_urls_dict_text_and_question_words_after_given_are_defects():
    from framebench.text_eval.framingqa.check import rendered_defects

    kinds = sorted(d.kind for d in text_defects(_ctx("c", "See https://example.org and Tests: {'Imaging': 'x'}")))
    assert kinds == ["dict text in text", "url in text"]
    items = [{"question": q, "task": "finance", "context_id": "c", "item_id": f"i{n}"} for n, q in enumerate((
        "Given whether I can deposit a cheque, is this a banking issue?",
        "Is this a banking issue, based on how the bank holds my cheque?",
        "Given my question of whether I can deposit a cheque, is this a banking issue?",
        "Is this a banking issue, based on my sense that lenders decide based on what my report shows?",
        "Given what is the best way to pay, is this a banking issue?"))]
    found = [d.detail for d in rendered_defects(items)]
    assert found == ["i0: 'Given whether': a question word after 'Given' or 'based on'",
                     "i1: 'based on how': a question word after 'Given' or 'based on'",
                     "i4: 'Given what is': a question word after 'Given' or 'based on'"]
