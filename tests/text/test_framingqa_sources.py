"""Source loaders: dropping malformed rows with reasons, stopping on broken sources, the hearsay
draft handling, finance snippets (markup, truncation, redaction, categories), DiagnosisArena."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from framebench.errors import UserError
from framebench.text_eval.framingqa.contexts import FINANCE_TARGETS, read_table
from framebench.text_eval.framingqa.sources_finance import (
    categorize,
    fiqa_posts,
    load_finance,
    make_snippet,
    redact,
    stackexchange_posts,
)
from framebench.text_eval.framingqa.sources_law import (
    hearsay_table,
    learned_hands_tables,
    load_hearsay,
    load_learned_hands,
)
from framebench.text_eval.framingqa.sources_medicine import (
    diagnosisarena_rows,
    load_medicine,
    parse_options,
)


def _tsv(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")


def _legalbench(root: Path) -> Path:
    tasks = root / "legalbench" / "tasks"
    _tsv(tasks / "learned_hands_consumer" / "test_prefix.tsv", "index\ttext\tanswer", [
        "0\tMy refund for a broken phone was refused by the store.\tYes",
        "1\tThe dog next door bit me and the owner laughs.\tYes",  # also Yes for torts -> multi-label
        "2\t[CT] My refund for a broken phone was refused by the store.\tYes",  # duplicate of 0
        "3\t\tYes",  # empty
        "4\tA question about a parking ticket appeal.\tNo",
        "5\tThe insurer will not pay for my stolen bike.\tMaybe",
        "6\tThe gym keeps charging my card after I cancelled.\tYes",
    ])
    _tsv(tasks / "learned_hands_torts" / "test_prefix.tsv", "index\ttext\tanswer", [
        "0\tThe dog next door bit me and the owner laughs!\tYes",
        "1\tA driver rear-ended me at a light and drove off.\tYes",
    ])
    _tsv(tasks / "learned_hands_courts" / "test_prefix.tsv", "index\ttext\tanswer",
         ["0\tHow do I file an appeal without hiring an attorney?\tYes"])
    _tsv(tasks / "learned_hands_employment" / "test_prefix.tsv", "index\ttext\tanswer",
         ["0\tMy boss withheld my final paycheck after I quit.\tYes"])
    return root


def test_learned_hands_drops_with_reasons(tmp_path):
    contexts, dropped = load_learned_hands(*learned_hands_tables(_legalbench(tmp_path)), per_category=5)
    got = {c.context_id for c in contexts}
    assert got == {"law-consumer-0", "law-consumer-6", "law-torts-1", "law-courts-0", "law-employment-0"}
    reasons = {d.record: d.reason for d in dropped}
    assert reasons["learned_hands_consumer/test_prefix.tsv index 1"].startswith("multi-label: also Yes for Torts")
    assert reasons["learned_hands_torts/test_prefix.tsv index 0"].startswith("multi-label: also Yes for Consumer")
    assert "duplicate" in reasons["learned_hands_consumer/test_prefix.tsv index 2"]
    assert reasons["learned_hands_consumer/test_prefix.tsv index 3"] == "empty text"
    assert "labelled No" in reasons["learned_hands_consumer/test_prefix.tsv index 4"]
    assert "'Maybe'" in reasons["learned_hands_consumer/test_prefix.tsv index 5"]
    assert all(c.options == ["Consumer", "Courts", "Employment", "Torts"] for c in contexts)


def test_missing_column_and_unreadable_file_are_one_clear_error(tmp_path):
    root = _legalbench(tmp_path)
    bad = root / "legalbench" / "tasks" / "learned_hands_courts" / "test_prefix.tsv"
    _tsv(bad, "index\tbody\tanswer", ["0\tsome text\tYes"])
    with pytest.raises(UserError, match=r"learned_hands_courts/test_prefix.tsv: missing column 'text'"):
        learned_hands_tables(root)
    bad.write_bytes(b"index\ttext\tanswer\n0\t\xff\xfe\x00broken\tYes\n")
    with pytest.raises(UserError, match=r"test_prefix.tsv: cannot read source file"):
        learned_hands_tables(root)
    with pytest.raises(UserError, match="source file not found"):
        read_table(tmp_path / "nope.tsv", ("text",))


def test_full_law_source_gives_200_single_label_contexts(shared_data):
    contexts, dropped = load_learned_hands(*learned_hands_tables(shared_data))
    assert Counter(c.gold for c in contexts) == {"Consumer": 50, "Courts": 50, "Employment": 50, "Torts": 50}
    reasons = {d.record: d.reason for d in dropped}
    # the overlaps listed in LEARNED_HANDS_PREFIX.md
    assert reasons["learned_hands_consumer/test_prefix.tsv index 16"].startswith("multi-label")
    assert reasons["learned_hands_torts/test_prefix.tsv index 1"].startswith("multi-label")  # train overlap
    assert "duplicate" in reasons["learned_hands_consumer/test_prefix.tsv index 60"]
    assert "duplicate" in reasons["learned_hands_consumer/test_prefix.tsv index 9"]  # "[CT] " prefix
    assert "near-duplicate" in reasons["learned_hands_courts/test_prefix.tsv index 67"]
    texts = [c.text.lower() for c in contexts]
    assert len(set(texts)) == len(texts)


def test_hearsay_draft_handling(shared_data):
    contexts, dropped, notes = load_hearsay(*hearsay_table(shared_data))
    assert len(contexts) == 94
    assert [d.record for d in dropped] == ["hearsay/test.tsv row 94"]
    row74 = next(c for c in contexts if c.context_id == "hearsay-74")
    assert row74.gold == "Not introduced to prove truth" and row74.provenance["hearsay"] == "No"
    assert any("row 74: relabelled" in n for n in notes)
    assert Counter(c.provenance["hearsay"] for c in contexts) == {"No": 53, "Yes": 41}  # draft 52/43, row 74 Yes->No, row 94 (Yes) dropped


def test_redaction_and_snippets():
    text = ("Mail me at jane.doe@example.com or call (555) 123-4567, see https://example.com/x "
            "and my card 4111 1111 1111 1111 or account 12345678.")
    out = redact(text)
    for secret in ("jane.doe", "555", "example.com", "4111", "12345678"):
        assert secret not in out
    assert out.count("[NUMBER]") == 2 and "[EMAIL]" in out and "[PHONE]" in out and "[URL]" in out
    assert redact("I paid $1,500 in 2019 at 3.5%") == "I paid $1,500 in 2019 at 3.5%"
    body = "<p>" + " ".join(f"w{i}" for i in range(200)) + " &amp; more</p><code>x</code>"
    snippet = make_snippet("Title here", body)
    assert snippet.split()[:3] == ["Title", "here", "w0"] and len(snippet.split()) == 120
    assert "<p>" not in snippet


@pytest.mark.parametrize("title,category", [
    ("How do I pay off my credit card debt faster?", "Debt and repayment"),
    ("Bank put a hold on my deposit for a week", "Banking and payments"),
    ("Is this email asking for my password a phishing scam?", "Fraud and scams"),
    ("Why did my credit score drop after a hard inquiry?", "Credit reporting and score"),
    ("Should we refinance our mortgage now?", "Housing finance"),
    ("Index funds or individual stocks for a Roth IRA?", "Investing and financial advice"),
    ("What is the weather like?", None),
])
def test_categorize(title, category):
    assert categorize(title)[0] == category


def test_stackexchange_posts_xml(tmp_path):
    xml = tmp_path / "Posts.xml"
    xml.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<posts>\n'
        '<row Id="1" PostTypeId="1" Title="Refinance my mortgage?" Body="&lt;p&gt;Our escrow went up. '
        'Call 555-123-4567.&lt;/p&gt;" />\n'
        '<row Id="2" PostTypeId="2" Body="an answer" />\n'
        '<row Id="3" PostTypeId="1" Title="Hi" Body="" />\n</posts>\n', encoding="utf-8")
    name, posts = stackexchange_posts(xml)
    assert [p["id"] for p in posts] == ["1", "3"]
    contexts, dropped, _ = load_finance(name, posts, targets=dict.fromkeys(FINANCE_TARGETS, 1), id_prefix="se")
    assert [c.context_id for c in contexts] == ["se-1"]
    assert contexts[0].gold == "Housing finance"
    assert contexts[0].text == "Refinance my mortgage? Our escrow went up. Call [PHONE]."
    assert dropped[0].record == "Posts.xml id 3" and "shorter" in dropped[0].reason
    xml.write_text("<posts><row Id='1'", encoding="utf-8")
    with pytest.raises(UserError, match="Posts.xml: not a readable Stack Exchange"):
        stackexchange_posts(xml)


def test_fiqa_selection_matches_appendix_counts(shared_data):
    contexts, dropped, pools = load_finance(*fiqa_posts(shared_data), id_prefix="fin-fiqa")
    assert Counter(c.gold for c in contexts) == FINANCE_TARGETS
    assert all(len(c.text.split()) <= 120 for c in contexts)
    assert all(categorize(c.text)[0] == c.gold for c in contexts)
    assert dropped and all(d.reason for d in dropped)


def test_diagnosisarena_rows_and_malformed(tmp_path, shared_data):
    assert parse_options("{'A': 'x', 'B': 'y', 'C': 'z', 'D': 'w'}") == {"A": "x", "B": "y", "C": "z", "D": "w"}
    assert parse_options("__import__('os')") is None
    assert parse_options("{'A': 'x', 'B': 'x', 'C': 'z', 'D': 'w'}") is None
    csv = tmp_path / "diagnosisarena" / "diagnosis_arena_dataset.csv"
    csv.parent.mkdir()
    csv.write_text(
        "id,Case Information,Physical Examination,Diagnostic Tests,Final Diagnosis,Options,Right Option\n"
        "1,A woman with chest pain.,Rub.,ECG ST elevation.,Pericarditis,"
        "\"{'A': 'Pericarditis', 'B': 'MI', 'C': 'Dissection', 'D': 'PE'}\",A\n"
        "2,A man with cough.,Crackles.,CXR.,Pneumonia,\"{'A': 'Pneumonia'}\",A\n"
        "3,A child with rash.,Spots.,None.,Measles,\"{'A': 'Measles', 'B': 'Rubella', 'C': 'Roseola', "
        "'D': 'Scarlet fever'}\",E\n", encoding="utf-8")
    contexts, dropped = load_medicine(*diagnosisarena_rows(tmp_path))
    assert [c.context_id for c in contexts] == ["med-1"]
    assert contexts[0].gold == "Pericarditis" and contexts[0].options == ["Pericarditis", "MI", "Dissection", "PE"]
    assert contexts[0].text.startswith("Case Information: A woman with chest pain.\nPhysical Examination:")
    assert {d.record: d.reason for d in dropped}["diagnosis_arena_dataset.csv id 3"] == "right option 'E' is not A-D"
    csv.write_text("id,Case Information,Options\n1,x,y\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing column 'Physical Examination'"):
        diagnosisarena_rows(tmp_path)
    full, _ = load_medicine(*diagnosisarena_rows(shared_data))
    assert len(full) == 100 and len({c.provenance["specialty"] for c in full}) >= 10


def test_options_cells_are_bounded_before_parsing():
    """Python's parser recurses: too long or too deep cells are errors, other odd cells are drops,
    and nothing but string literals, brackets, commas and colons reaches literal_eval."""
    from framebench.text_eval.framingqa.sources_medicine import (
        MAX_OPTIONS_CHARS,
        OptionsTooLarge,
        literal_shape,
    )

    assert literal_shape("{'A': '[[[[', 'B': \"}}\"}") == (1, True)
    assert literal_shape("{'A': 'it\\'s [', 'B': [[1]]}") == (3, False)
    for cell in ("[" * 5 + "]" * 5, "{'A': " + "(" * 4 + "'x'" + ",)" * 4 + "}", "x" * (MAX_OPTIONS_CHARS + 1)):
        with pytest.raises(OptionsTooLarge):
            parse_options(cell)
    assert parse_options("-" * (MAX_OPTIONS_CHARS - 1) + "1") is None  # a unary chain: never parsed
    assert parse_options("1" + "+1" * 4000) is None
    assert parse_options("{'A': 'x', 'B': 'y', 'C': 'z', 'D': 'w'}  ") == {"A": "x", "B": "y", "C": "z", "D": "w"}
