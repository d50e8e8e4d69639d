"""LegalBench loaders: learned_hands issue spotting (Appendix C.1) and hearsay.

Both read a local folder laid out like ``../shared/data/legalbench`` or, with ``source == "hf"``,
``nguha/legalbench`` through HF ``datasets``; after loading, both paths share the same code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from framebench.text_eval.framingqa.contexts import (
    HEARSAY_OFFICIAL_ROWS,
    HEARSAY_SCOPES,
    LAW_PER_CATEGORY,
    LAW_SCOPES,
    Context,
    Dropped,
    clean_text,
    hf_table,
    read_table,
)
from framebench.text_eval.framingqa.domains import Domain, Loaded

LAW_TASK = "law_issue_spotting"
HEARSAY_TASK = "law_hearsay"
NEAR_DUPLICATE_COSINE = 0.7  # TF-IDF cosine above which two posts count as the same narrative

Table = tuple[str, list[dict[str, Any]]]  # (name for messages, rows)


def _legalbench_dir(source: str | Path) -> Path:
    root = Path(source)
    return root / "legalbench" if (root / "legalbench").is_dir() else root


def learned_hands_tables(source: str | Path) -> tuple[dict[str, Table], dict[str, Table]]:
    """Test and train tables per category; local test files are ``test.tsv`` or ``test_prefix.tsv``."""
    required = ("index", "text", "answer")
    tests: dict[str, Table] = {}
    trains: dict[str, Table] = {}
    for label in LAW_SCOPES:
        task = f"learned_hands_{label.lower()}"
        if source == "hf":
            tests[label] = (f"hf:{task}/test", hf_table("nguha/legalbench", task, "test", required))
            trains[label] = (f"hf:{task}/train", hf_table("nguha/legalbench", task, "train", required))
            continue
        folder = _legalbench_dir(source) / "tasks" / task
        test = folder / "test.tsv"
        if not test.exists():
            test = folder / "test_prefix.tsv"
        tests[label] = (f"{task}/{test.name}", read_table(test, required))
        train = folder / "train.tsv"
        trains[label] = (f"{task}/train.tsv", read_table(train, required) if train.exists() else [])
    return tests, trains


def normalize_narrative(text: str) -> str:
    """Key for duplicate detection: lower case, no leading ``[XX]`` tags, alphanumerics only."""
    text = re.sub(r"^(\s*\[[^\]]{1,12}\]\s*)+", "", text.lower())
    return " ".join(re.findall(r"[a-z0-9]+", text))


def learned_hands_candidates(tests: dict[str, Table], trains: dict[str, Table]) -> tuple[list[Context], list[Dropped]]:
    """Every usable test row as a context of its category (the Yes rows), and the rows that are not.

    A candidate's provenance lists ``yes_in``: every category whose files (test or train) label the
    same narrative Yes, so a selection can see multi-label posts."""
    dropped: list[Dropped] = []
    rows: list[tuple[str, str, str, str]] = []  # (label, record, index, text)
    yes_labels: dict[str, set[str]] = {}
    for split_tables in (trains, tests):
        for label, (name, table) in split_tables.items():
            for n, row in enumerate(table):
                text, answer = clean_text(row.get("text")), str(row.get("answer", "")).strip()
                if text and answer == "Yes":
                    yes_labels.setdefault(normalize_narrative(text), set()).add(label)
                if split_tables is trains:
                    continue
                record = f"{name} index {row.get('index', n)}"
                if not text:
                    dropped.append(Dropped(LAW_TASK, record, "empty text"))
                elif answer not in ("Yes", "No"):
                    dropped.append(Dropped(LAW_TASK, record, f"answer {answer!r} is not Yes/No"))
                elif answer == "No":
                    dropped.append(Dropped(LAW_TASK, record, f"labelled No for {label}: names no category"))
                else:
                    rows.append((label, record, str(row.get("index", n)), text))
    contexts = [Context(
        context_id=f"law-{label.lower()}-{index}", task=LAW_TASK, text=text, gold=label, options=list(LAW_SCOPES),
        provenance={"source": record, "dataset": "LegalBench learned_hands", "license": "CC BY-NC-SA 4.0",
                    "yes_in": sorted(yes_labels[normalize_narrative(text)])})
        for label, record, index, text in rows]
    return contexts, dropped


def select_learned_hands(candidates: list[Context], per_category: int = LAW_PER_CATEGORY
                         ) -> tuple[list[Context], list[Dropped]]:
    """The automatic selection (``--unreviewed``): the first ``per_category`` single-label rows per
    category. Dropped: narratives labelled Yes in more than one category, duplicates within a file,
    and cross-category near duplicates (TF-IDF cosine >= 0.7)."""
    dropped: list[Dropped] = []
    seen: set[tuple[str, str]] = set()
    unique: list[Context] = []
    for ctx in candidates:
        key = normalize_narrative(ctx.text)
        others = [label for label in ctx.provenance["yes_in"] if label != ctx.gold]
        if others:
            dropped.append(Dropped(LAW_TASK, ctx.provenance["source"], f"multi-label: also Yes for {', '.join(others)}"))
        elif (ctx.gold, key) in seen:
            dropped.append(Dropped(LAW_TASK, ctx.provenance["source"], "duplicate of an earlier row in the same file"))
        else:
            seen.add((ctx.gold, key))
            unique.append(ctx)
    near = _cross_label_near_duplicates([(c.gold, c.text) for c in unique])
    chosen: list[Context] = []
    taken = dict.fromkeys(LAW_SCOPES, 0)
    for i, ctx in enumerate(unique):
        if i in near:
            dropped.append(Dropped(LAW_TASK, ctx.provenance["source"],
                                   f"near-duplicate of {unique[near[i]].provenance['source']} (other category)"))
        elif taken[ctx.gold] < per_category:  # a full quota is not a defect
            taken[ctx.gold] += 1
            chosen.append(ctx)
    return chosen, dropped


def load_learned_hands(tests: dict[str, Table], trains: dict[str, Table],
                       per_category: int = LAW_PER_CATEGORY) -> tuple[list[Context], list[Dropped]]:
    """The automatic selection from the tables (candidates, then ``select_learned_hands``)."""
    candidates, dropped = learned_hands_candidates(tests, trains)
    chosen, lost = select_learned_hands(candidates, per_category)
    return chosen, dropped + lost


def _cross_label_near_duplicates(rows: list[tuple[str, str]]) -> dict[int, int]:
    """Map row -> an earlier/later row of another label whose TF-IDF cosine is >= the threshold."""
    if len(rows) < 2:
        return {}
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    matrix = TfidfVectorizer(sublinear_tf=True).fit_transform([t for _, t in rows])
    sims = cosine_similarity(matrix, dense_output=True)
    out: dict[int, int] = {}
    for i in range(len(rows)):
        for j in range(len(rows)):
            if i != j and rows[i][0] != rows[j][0] and sims[i, j] >= NEAR_DUPLICATE_COSINE:
                out[i] = j
                break
    return out


def hearsay_table(source: str | Path) -> tuple[Table, Table | None]:
    """The hearsay test table and, when present, the HF-sample table used to reconcile it."""
    if source == "hf":
        rows = hf_table("nguha/legalbench", "hearsay", "test", ("index", "text", "answer", "slice"))
        return ("hf:hearsay/test", rows), None
    root = _legalbench_dir(source)
    path = root / "tasks" / "hearsay" / "test.tsv"
    rows = read_table(path, ("text", "slice"))
    if rows and "label" not in rows[0] and "answer" not in rows[0]:
        read_table(path, ("answer",))  # raises the missing-column error
    sample_path = root / "datasaur_hf_subset" / "hearsay" / "test.tsv"
    sample = ("datasaur_hf_subset/hearsay/test.tsv",
              read_table(sample_path, ("index", "text", "answer", "slice"))) if sample_path.exists() else None
    return ("hearsay/test.tsv", rows), sample


def load_hearsay(table: Table, hf_sample: Table | None = None,
                 official_rows: int = HEARSAY_OFFICIAL_ROWS) -> tuple[list[Context], list[Dropped], list[str]]:
    """Hearsay contexts (binary-only; the target is the slice).

    The local file is the 95-row 2022 pre-release; its row indices line up with the HF ``index``.
    Handling, reported as notes: rows that an HF sample row with the same index and identical text
    relabels take the HF label and slice; rows whose index lies beyond the official split
    (``index >= official_rows``) are dropped. HF rows carry their own ``index``.
    """
    name, rows = table
    notes: list[str] = []
    dropped: list[Dropped] = []
    fixes: dict[int, dict[str, Any]] = {}
    if hf_sample is not None:
        for row in hf_sample[1]:
            try:
                fixes[int(row["index"])] = row
            except (TypeError, ValueError):
                continue
    contexts: list[Context] = []
    for n, row in enumerate(rows):
        index = int(row["index"]) if str(row.get("index", "")).strip().isdigit() else n
        record = f"{name} row {index}"
        text = clean_text(row.get("text"))
        answer = str(row.get("answer", row.get("label", ""))).strip()
        slice_ = clean_text(row.get("slice"))
        fix = fixes.get(index)
        if fix is not None and clean_text(fix.get("text")) == text:
            new_answer, new_slice = str(fix["answer"]).strip(), clean_text(fix["slice"])
            if (new_answer, new_slice) != (answer, slice_):
                notes.append(f"{record}: relabelled from {answer} / {slice_} to {new_answer} / {new_slice} "
                             f"to match the HF release ({hf_sample[0]} index {index})")
                answer, slice_ = new_answer, new_slice
        if index >= official_rows:
            dropped.append(Dropped(HEARSAY_TASK, record, f"draft row beyond the official {official_rows}-row "
                                   f"split (HF index range 0-{official_rows - 1})"))
        elif not text:
            dropped.append(Dropped(HEARSAY_TASK, record, "empty text"))
        elif slice_ not in HEARSAY_SCOPES:
            dropped.append(Dropped(HEARSAY_TASK, record, f"unknown slice {slice_!r}"))
        elif answer not in ("Yes", "No"):
            dropped.append(Dropped(HEARSAY_TASK, record, f"label {answer!r} is not Yes/No"))
        else:
            contexts.append(Context(
                context_id=f"hearsay-{index}", task=HEARSAY_TASK, text=text, gold=slice_,
                options=list(HEARSAY_SCOPES),
                provenance={"source": record, "dataset": "LegalBench hearsay", "hearsay": answer,
                            "license": "CC BY 4.0"}))
    if len(rows) > official_rows:
        notes.append(f"{name} has {len(rows)} rows, the official split {official_rows}: the local file is "
                     "the 2022 pre-release; rows beyond the official index range are dropped")
    return contexts, dropped, notes


# ---------------------------------------------------------------- the two law domains

# LegalBench's slices split hearsay by the form of the assertion: "standard" is spoken, "non-verbal"
# is written or gestured. The question says so, or a written assertion offered for its truth would
# be "standard hearsay" too and the five options would not be exclusive as asked.
_HEARSAY_PHRASES = {
    "Standard hearsay": "standard (oral) hearsay",
    "Non-assertive conduct": "non-assertive conduct",
    "Not introduced to prove truth": "a statement offered for something other than its truth",
    "Statement made in-court": "a statement made in court",
    "Non-verbal hearsay": "non-verbal (written or gestured) hearsay",
}


def _load_issue_spotting(opts: Any) -> Loaded:
    return Loaded(*learned_hands_candidates(*learned_hands_tables(opts.source)))


def _select_issue_spotting(candidates: list[Context]) -> Loaded:
    return Loaded(*select_learned_hands(candidates))


def _load_hearsay(opts: Any) -> Loaded:
    found, lost, notes = load_hearsay(*hearsay_table(opts.source))
    return Loaded(found, lost, notes)


def _issue_phrase(option: str) -> str:
    word = option.lower()
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word} issue"


ISSUE_SPOTTING = Domain(
    LAW_TASK, order=10, load=_load_issue_spotting, select=_select_issue_spotting,
    mc_ask="Which legal issue does this narrative raise", phrase=_issue_phrase, scopes=LAW_SCOPES)
HEARSAY = Domain(  # binary only (FramingQA Table 2)
    HEARSAY_TASK, order=20, load=_load_hearsay,
    phrase=lambda option: _HEARSAY_PHRASES.get(option, option.lower()), scopes=HEARSAY_SCOPES)
