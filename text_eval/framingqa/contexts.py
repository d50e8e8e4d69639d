"""The normalized FramingQA context record, the label sets of Appendix C, and source-table reading.

Every loader (law, hearsay, finance, medicine, demo) turns its source into ``Context`` records and
``Dropped`` notes (a skipped source row and why). Structural problems (unreadable file, missing
column) stop the build with one ``UserError``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from framebench.errors import UserError

# Appendix C.1: issue-spotting labels and scopes (LegalBench learned_hands categories).
LAW_SCOPES = {
    "Consumer": "Debt and money, insurance, consumer goods and contracts, taxes, small claims about "
    "quality of service.",
    "Courts": "Court system or lawyers: procedures, court rules, filing requirements, hiring or "
    "managing lawyers.",
    "Employment": "Job-related problems before, during, or after employment: discrimination, "
    "harassment, payment, unionizing, pensions, termination, drug testing, background checks, "
    "worker's compensation, contractor classification.",
    "Torts": "Accident or conflict with another person involving perceived harm: car accidents, "
    "neighbour disputes, dog bites, bullying, harassment, data-privacy breaches, suing or being sued.",
}
# Appendix C.1 / LegalBench hearsay task card: the five slices and what each covers.
HEARSAY_SCOPES = {
    "Standard hearsay": "An oral statement made out of court and introduced to prove the truth of "
    "the matter asserted: someone told, said, stated.",
    "Non-assertive conduct": "Evidence that is conduct or a fact, not a statement, so the hearsay "
    "rule does not apply: the fact that someone did something.",
    "Not introduced to prove truth": "An out-of-court statement introduced to prove something other "
    "than what it asserts: that it was said, the listener's belief, notice, the speaker's identity.",
    "Statement made in-court": "A statement made while testifying at trial, on the stand, on direct "
    "or cross-examination, so it is not hearsay.",
    "Non-verbal hearsay": "A hearsay statement made in writing or by assertive conduct: an email, a "
    "letter, a report, a post, pointing, nodding, shaking the head.",
}
# Appendix C.2: finance categories, scopes and target counts (sum 200).
FINANCE_SCOPES = {
    "Debt and repayment": "Credit cards, loans, collections, repayment, interest, default.",
    "Banking and payments": "Transfers, holds, chargebacks, disputed transactions, account issues.",
    "Fraud and scams": "Phishing, identity theft, account takeover, scam payment requests.",
    "Credit reporting and score": "Credit bureaus, disputes, credit-file entries, score changes.",
    "Housing finance": "Mortgages, refinancing, arrears, escrow, foreclosure.",
    "Investing and financial advice": "Brokerage accounts, funds, asset allocation, fees, suitability.",
}
FINANCE_TARGETS = {
    "Debt and repayment": 34,
    "Banking and payments": 43,
    "Fraud and scams": 25,
    "Credit reporting and score": 17,
    "Housing finance": 34,
    "Investing and financial advice": 47,
}
LAW_PER_CATEGORY = 50
HEARSAY_OFFICIAL_ROWS = 94  # rows in the official HF test split (nguha/legalbench "hearsay")
MEDICINE_CASES = 100


@dataclass
class Context:
    """One context: the fixed text, its gold option and option set, and where it came from.

    ``options`` is the full candidate set the gold is drawn from (law: 4 categories, hearsay: 5
    slices, finance: 6 categories, medicine: the case's 4 options in source letter order).
    """

    context_id: str
    task: str
    text: str
    gold: str
    options: list[str]
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Dropped:
    """A source record that was skipped, and why (listed in the build report)."""

    task: str
    record: str  # e.g. "learned_hands_consumer/test_prefix.tsv index 12"
    reason: str


# what --source takes, said wherever a source is missing (a clone has no ../shared/data beside it)
SOURCE_LAYOUT = ("--source takes a folder holding legalbench/tasks/, fiqa/FiQA_train_question_final.tsv and "
                 "diagnosisarena/diagnosis_arena_dataset.csv (where to get each: datasets/framingqa.md, Sources), "
                 "or hf to download LegalBench and DiagnosisArena (--tasks law_issue_spotting,law_hearsay,medicine: "
                 "the reviewed finance contexts are FiQA titles, read from fiqa/)")


def read_table(path: Path, required: tuple[str, ...], sep: str = "\t") -> list[dict[str, str]]:
    """Read a TSV/CSV source file into string rows; unreadable files or missing columns are errors."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise UserError(f"{path}: source file not found; {SOURCE_LAYOUT}") from None
    except Exception as exc:  # any parser/IO failure is a structurally broken source
        raise UserError(f"{path}: cannot read source file ({type(exc).__name__}: {exc})") from None
    return check_columns(frame.to_dict("records"), list(frame.columns), required, str(path))


def check_columns(rows: list[dict[str, Any]], columns: list[str], required: tuple[str, ...],
                  where: str) -> list[dict[str, Any]]:
    missing = [c for c in required if c not in columns]
    if missing:
        raise UserError(f"{where}: missing column '{missing[0]}' (found: {', '.join(map(str, columns))})")
    if not rows:
        raise UserError(f"{where}: no rows (a header only); the source file is cut short or empty")
    return rows


def hf_table(dataset: str, config: str | None, split: str, required: tuple[str, ...]) -> list[dict[str, Any]]:
    """Load one split of a public HF dataset (``--source hf``); rows then follow the local path."""
    import datasets

    try:
        ds = datasets.load_dataset(dataset, config, split=split) if config else datasets.load_dataset(
            dataset, split=split)
    except Exception as exc:
        raise UserError(f"hf:{dataset}/{config or ''} [{split}]: cannot load ({type(exc).__name__}: {exc})") from None
    frame = ds.to_pandas().astype(str)
    return check_columns(frame.to_dict("records"), list(frame.columns), required, f"hf:{dataset}/{config or ''}")


def clean_text(value: Any) -> str:
    """Collapse whitespace; non-strings become ``""`` (and are then dropped as empty)."""
    return " ".join(value.split()) if isinstance(value, str) else ""
