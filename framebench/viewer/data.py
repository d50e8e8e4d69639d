"""The records the viewer browses: every row of the given run folders, held once in memory in
display order, with each row's prompt; filtering, free-text search and context look-up.

Filters are exact matches on record columns (several values of one column are OR-ed, columns are
AND-ed); ``q`` is a case-insensitive substring search over the prompt (question) and the model
output. Nothing here touches the HTML: see ``framebench.viewer.app``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from framebench.bounds import MAX_DIGITS, shown
from framebench.errors import UserError

# query parameter -> record column, in the order the filter bar shows them; the registered
# suites' ``filter_columns`` come after ``level``
CORE_FILTERS: dict[str, str] = {name: name for name in ("model", "suite", "task", "format", "bias", "level")}
RESULT_FILTERS: dict[str, str] = {"correct": "correct", "parse": "parse", "context": "context_id"}


def filters() -> dict[str, str]:
    """Every query parameter -> its record column: the core's and the registered suites'."""
    from framebench.scoring.viewer_links import suite_filters

    return {**CORE_FILTERS, **{c: c for c in suite_filters()}, **RESULT_FILTERS}


def choice_filters() -> list[str]:
    """The filters shown as drop-downs (all but ``context``)."""
    return [name for name in filters() if name != "context"]
BOOLEAN_VALUES = {"yes": True, "no": False}
MAX_SEARCH = 1_000  # characters of a search (the page echoes it in the search box)


@dataclass
class Query:
    """One request's filters, search text and page (already validated)."""

    filters: dict[str, list[str]] = field(default_factory=dict)
    text: str = ""
    page: int = 1
    per_page: int = 50


@dataclass
class Page:
    rows: pd.DataFrame
    matched: int
    page: int
    pages: int
    first: int  # 1-based index of the first row shown (0 when none)


class RunData:
    """All records of the run folders, sorted for display, with a ``prompt`` column."""

    def __init__(self, records: pd.DataFrame) -> None:
        from framebench.scoring.html import _display_order

        records = _display_order(records).reset_index(drop=True)
        self.records = records
        columns = filters()
        self.choices: dict[str, list[str]] = {
            name: _choices(records[columns[name]]) if columns[name] in records.columns else []
            for name in choice_filters()
        }
        self._contexts = records.groupby(["suite", "context_id"], sort=False).indices
        prompts = records["prompt"]
        self._prompt_codes, self._prompt_values = pd.factorize(prompts)
        self._suite_codes, self._suite_values = pd.factorize(records["suite"])
        self._passages: dict[tuple[str, str], str] = {}
        self.chats: dict[tuple[str, str], list[dict[str, str]]] = {}  # (run_dir, item_id) -> turns sent
        self.integrity_warnings: list[str] = []  # files that did not match run.json (read with --force)

    def __len__(self) -> int:
        return len(self.records)

    # ------------------------------------------------------------ filtering

    def mask(self, query: Query) -> np.ndarray:
        keep = np.ones(len(self.records), dtype=bool)
        columns = filters()
        for name, values in query.filters.items():
            column = self.records[columns[name]]
            if name == "correct":
                wanted = [BOOLEAN_VALUES[v] for v in values]
                keep &= column.fillna(False).astype(bool).isin(wanted).to_numpy()
            else:
                keep &= column.isin(values).to_numpy()
        if query.text:
            keep &= self._text_mask(query.text)
        return keep

    def _text_mask(self, text: str) -> np.ndarray:
        in_output = self.records["output"].fillna("").str.contains(text, case=False, regex=False)
        # prompts repeat across models and runs: search each distinct prompt once
        prompt_hits = pd.Series(self._prompt_values).str.contains(text, case=False, regex=False)
        in_prompt = prompt_hits.to_numpy()[self._prompt_codes]
        return in_output.to_numpy() | in_prompt

    def page(self, query: Query) -> Page:
        positions = np.flatnonzero(self.mask(query))
        matched = len(positions)
        pages = max(1, -(-matched // query.per_page))
        page = min(query.page, pages)
        start = (page - 1) * query.per_page
        shown = positions[start:start + query.per_page]
        return Page(self.records.iloc[shown], matched, page, pages, start + 1 if len(shown) else 0)

    def suites_in(self, query: Query) -> list[str]:
        """The suites of the rows a query matches, in display order."""
        codes = np.unique(self._suite_codes[self.mask(query)])
        return [str(self._suite_values[c]) for c in codes]

    def passage(self, suite: str, context_id: str) -> str:
        """The start every prompt of a context shares (``shared_prefix``), worked out once."""
        key = (suite, context_id)
        if key not in self._passages:
            rows = self.context(suite, context_id)
            self._passages[key] = shared_prefix(list(dict.fromkeys(rows["prompt"])))
        return self._passages[key]

    def question(self, record: Mapping[str, object]) -> str:
        """What a record's prompt asks beyond its context's shared passage."""
        prompt = str(record.get("prompt") or "")
        return prompt[len(self.passage(str(record["suite"]), str(record["context_id"]))):].strip()

    def item_rows(self, suite: str, item_id: str) -> pd.DataFrame:
        """Every row of one item: the same question under each model (and run)."""
        keep = (self.records["item_id"].to_numpy() == item_id) & (self.records["suite"].to_numpy() == suite)
        return self.records[keep]

    def chat(self, record: Mapping[str, object]) -> list[dict[str, str]]:
        """The turns the record's model was sent (its prompt as one user turn when no more)."""
        turns = self.chats.get((str(record["run_dir"]), str(record["item_id"])))
        return turns or [{"role": "user", "content": str(record.get("prompt") or "")}]

    def context(self, suite: str, context_id: str, models: Sequence[str] = ()) -> pd.DataFrame:
        """Every row of one context (all models unless ``models`` names some), display order."""
        positions = self._contexts.get((suite, context_id))
        if positions is None:
            return self.records.iloc[0:0]
        rows = self.records.iloc[positions]
        return rows[rows["model"].isin(models)] if models else rows


def _choices(column: pd.Series) -> list[str]:
    if column.dtype == bool or column.name == "correct":
        return list(BOOLEAN_VALUES)
    values = column.dropna().astype(str).unique().tolist()
    return sorted(v for v in values if v != "")


def parse_query(args: Mapping[str, Sequence[str]], choices: Mapping[str, list[str]]) -> Query:
    """A Query from request arguments (each name -> its values); a bad value is a UserError."""
    chosen: dict[str, list[str]] = {}
    for name in filters():
        values = [v for v in args.get(name, ()) if v != ""]
        if not values:
            continue
        if name == "correct":
            bad = [v for v in values if v not in BOOLEAN_VALUES]
            if bad:
                raise UserError(f"correct: expected yes or no, got {shown(bad[0])}")
        chosen[name] = values
    text = (args.get("q") or [""])[0].strip()
    if len(text) > MAX_SEARCH:
        raise UserError(f"q: a search of {len(text):,} characters; at most {MAX_SEARCH:,}")
    page = _positive_int(args, "page", 1)
    per_page = min(_positive_int(args, "per_page", 50), 1000)
    return Query(chosen, text, page, per_page)


def _positive_int(args: Mapping[str, Sequence[str]], name: str, default: int) -> int:
    """A page number: ASCII digits only (``str.isdigit`` also takes "²" and "①", which ``int``
    refuses), short enough to convert."""
    values = args.get(name) or [""]
    value = values[0].strip()
    if value == "":
        return default
    if not re.fullmatch(rf"[0-9]{{1,{MAX_DIGITS - 1}}}", value) or int(value) < 1:
        raise UserError(f"{name}: expected a positive whole number, got {shown(value)}")
    return int(value)


# ---------------------------------------------------------------- loading


def load_run_data(run_dirs: Sequence[Path], force: bool = False) -> RunData:
    """Every record of the run folders (validated and verified as ``score`` does), each with its
    prompt (``force``: folders whose files do not match their run.json hashes too, with warnings)."""
    from framebench.records import label_answer_modes, read_records
    from framebench.run_folder import read_chats, read_prompts, verify_run

    frames, warnings, chats = [], [], {}
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise UserError(f"{run_dir}: no such run folder")
        warnings += verify_run(run_dir, force=force)
        records = label_answer_modes(read_records(run_dir))  # the report's model labels
        prompts = read_prompts(run_dir)
        chats.update({(str(run_dir), item_id): turns for item_id, turns in read_chats(run_dir).items()})
        mapped = records["item_id"].map(prompts).astype(object)
        records["prompt"] = mapped.where(mapped.notna(), "")
        records["run_dir"] = str(run_dir)
        frames.append(records)
    if not frames:
        raise UserError("give at least one run folder")
    records = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    data = RunData(records)
    data.integrity_warnings = warnings
    data.chats = chats
    return data


def shared_prefix(texts: Sequence[str]) -> str:
    """The longest common start of ``texts``, cut back to a paragraph (blank line) boundary, so a
    context's shared passage can be shown once above its variants' questions."""
    texts = [t for t in texts if t]
    if len(texts) < 2:
        return ""
    import os

    prefix = os.path.commonprefix(texts)
    cut = prefix.rfind("\n\n")
    return prefix[:cut + 2] if cut > 0 else ""
