"""Finance contexts: Stack Exchange "Personal Finance & Money" posts (Appendix C.2).

Two loaders: the public Stack Exchange data dump (``Posts.xml``: title + body) and the FiQA-2018
question file (``fiqa/FiQA_train_question_final.tsv``: post titles only). Snippets are stripped of
markup, truncated to 120 words and redacted by rule. The benchmark's 200 contexts and their categories
are reviewed decisions (``text_eval/framingqa/reviewed/finance.jsonl``); the keyword lexicon below is
the automatic selection of ``--unreviewed`` builds (the category with the most distinct matching
cues; ties and no match are dropped; per-category counts as close as possible to Appendix C.2).
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.text_eval.framingqa.contexts import (
    FINANCE_SCOPES,
    FINANCE_TARGETS,
    Context,
    Dropped,
    clean_text,
    read_table,
)
from framebench.text_eval.framingqa.domains import Domain, Loaded

TASK = "finance"
MAX_WORDS = 120
MIN_WORDS = 4

# Category cues (regular expressions on lower-cased text). A snippet's category is the one with
# the most distinct matching cues; a tie for the maximum, or no cue at all, leaves it unassigned.
CATEGORY_CUES: dict[str, tuple[str, ...]] = {
    "Debt and repayment": (
        r"\bdebts?\b", r"\bloans?\b", r"\bcredit cards?\b", r"\bpay(ing)? off\b", r"\bpayoff\b",
        r"\brepay", r"\bcollections?\b", r"\bcollectors?\b", r"\bdefault", r"\binterest rates?\b",
        r"\bapr\b", r"\bowe[ds]?\b", r"\bbankrupt", r"\bconsolidat", r"\bminimum payments?\b",
        r"\bbalance transfer", r"\bpayday\b", r"\bborrow"),
    "Banking and payments": (
        r"\bbank accounts?\b", r"\bchecking\b", r"\bsavings accounts?\b", r"\btransfer", r"\bwire\b",
        r"\bdeposit", r"\bcheques?\b", r"\bchecks?\b", r"\batm\b", r"\bdebit cards?\b", r"\bpaypal\b",
        r"\boverdraft", r"\bon hold\b", r"\bchargebacks?\b", r"\brouting\b", r"\bach\b", r"\bbanks?\b",
        r"\bpayments? (app|service|processor)", r"\bvenmo\b", r"\bcurrency exchange\b"),
    "Fraud and scams": (
        r"\bscam", r"\bfraud", r"\bphishing\b", r"\bidentity theft\b", r"\bstolen\b", r"\bhack",
        r"\bsuspicious\b", r"\bfake\b", r"\bunauthori[sz]ed\b", r"\blegit(imate)?\b", r"\bponzi\b",
        r"\bpyramid scheme", r"\bcon artist", r"\btoo good to be true\b", r"\bnigerian?\b", r"\bsteal"),
    "Credit reporting and score": (
        r"\bcredit scores?\b", r"\bcredit reports?\b", r"\bcredit bureaus?\b", r"\bequifax\b",
        r"\bexperian\b", r"\btransunion\b", r"\bfico\b", r"\bcredit history\b", r"\bhard (inquiry|pull)",
        r"\bcredit ratings?\b", r"\bcredit files?\b", r"\bcredit check", r"\bbuild(ing)? credit\b",
        r"\bcredit utili[sz]ation\b"),
    "Housing finance": (
        r"\bmortgages?\b", r"\brefinanc", r"\bhome loans?\b", r"\bescrow\b", r"\bforeclos",
        r"\bdown ?payments?\b", r"\bpmi\b", r"\bheloc\b", r"\bhome equity\b", r"\bclosing costs?\b",
        r"\b(buy|buying|bought|purchase|purchasing) (a |my |our )?(house|home|condo|property)\b",
        r"\barrears\b", r"\bhousing\b", r"\bproperty tax"),
    "Investing and financial advice": (
        r"\binvest", r"\bstocks?\b", r"\bshares?\b", r"\betfs?\b", r"\bindex funds?\b",
        r"\bmutual funds?\b", r"\bbrokerage", r"\bbrokers?\b", r"\bportfolio", r"\b401\s?\(?k\)?",
        r"\bira\b", r"\broth\b", r"\bdividends?\b", r"\bbonds?\b", r"\basset allocation\b",
        r"\bcapital gains?\b", r"\bexpense ratio", r"\bvanguard\b", r"\bfidelity\b", r"\bfinancial advis",
        r"\boptions? trading\b", r"\bstock market\b"),
}
_COMPILED = {cat: [re.compile(p) for p in cues] for cat, cues in CATEGORY_CUES.items()}

_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PHONE = re.compile(r"(?<!\w)(?:\+?\d{1,2}[\s.-]?)?(?:\(\d{3}\)|\d{3})[\s.-]\d{3}[\s.-]\d{4}(?!\w)")
_ACCOUNT = re.compile(r"(?<!\w)\d(?:[ -]?\d){7,18}(?!\w)")


def redact(text: str) -> str:
    """Rule-based PII redaction: URLs, e-mails, phone numbers, account/card-like digit runs."""
    text = _URL.sub("[URL]", text)
    text = _EMAIL.sub("[EMAIL]", text)
    text = _PHONE.sub("[PHONE]", text)
    return _ACCOUNT.sub("[NUMBER]", text)


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.parts.append(" ")


def strip_markup(markup: str) -> str:
    parser = _TextOnly()
    parser.feed(markup)
    parser.close()
    return " ".join(html.unescape("".join(parser.parts)).split())


def make_snippet(title: str, body: str = "") -> str:
    """Title + body, markup stripped, redacted, truncated to 120 words."""
    text = " ".join(part for part in (clean_text(title), strip_markup(body) if body else "") if part)
    words = redact(text).split()
    return " ".join(words[:MAX_WORDS])


def categorize(text: str) -> tuple[str | None, dict[str, int]]:
    """The category with the most distinct cue matches, or None (no cue, or a tie)."""
    lowered = text.lower()
    scores = {cat: sum(1 for rx in rxs if rx.search(lowered)) for cat, rxs in _COMPILED.items()}
    best = max(scores.values())
    winners = [c for c, s in scores.items() if s == best]
    return (winners[0] if best > 0 and len(winners) == 1 else None), scores


def fiqa_posts(source: str | Path) -> tuple[str, list[dict[str, str]]]:
    root = Path(source)
    path = root / "fiqa" / "FiQA_train_question_final.tsv" if (root / "fiqa").is_dir() else root
    rows = read_table(path, ("qid", "question"))
    return path.name, [{"id": str(r["qid"]), "title": r["question"], "body": ""} for r in rows]


def stackexchange_posts(path: str | Path) -> tuple[str, list[dict[str, str]]]:
    """Questions (PostTypeId 1) from a Stack Exchange dump ``Posts.xml``."""
    import xml.etree.ElementTree as ET

    path = Path(path)
    posts: list[dict[str, str]] = []
    try:
        for _, elem in ET.iterparse(path, events=("end",)):
            if elem.tag == "row" and elem.get("PostTypeId") == "1":
                posts.append({"id": elem.get("Id", ""), "title": elem.get("Title", ""),
                              "body": elem.get("Body", "")})
            elem.clear()
    except FileNotFoundError:
        raise UserError(f"{path}: source file not found") from None
    except ET.ParseError as exc:
        raise UserError(f"{path}: not a readable Stack Exchange Posts.xml ({exc})") from None
    return path.name, posts


def finance_candidates(name: str, posts: list[dict[str, str]], id_prefix: str = "fin"
                       ) -> tuple[list[Context], list[Dropped]]:
    """Every usable post as a candidate (``gold`` empty: the source has no category)."""
    dropped: list[Dropped] = []
    contexts: list[Context] = []
    seen: set[str] = set()
    for post in posts:
        record = f"{name} id {post.get('id') or '?'}"
        if not str(post.get("id", "")).strip():
            dropped.append(Dropped(TASK, record, "missing post id"))
            continue
        snippet = make_snippet(post.get("title") or "", post.get("body") or "")
        key = " ".join(re.findall(r"[a-z0-9]+", snippet.lower()))
        if len(snippet.split()) < MIN_WORDS:
            dropped.append(Dropped(TASK, record, f"snippet shorter than {MIN_WORDS} words"))
        elif key in seen:
            dropped.append(Dropped(TASK, record, "duplicate snippet"))
        else:
            seen.add(key)
            contexts.append(Context(
                context_id=f"{id_prefix}-{post['id']}", task=TASK, text=snippet, gold="",
                options=list(FINANCE_SCOPES),
                provenance={"source": record, "dataset": "Personal Finance & Money Stack Exchange",
                            "license": "CC BY-SA"}))
    return contexts, dropped


def select_finance(candidates: list[Context], targets: dict[str, int] | None = None
                   ) -> tuple[list[Context], list[Dropped], dict[str, int]]:
    """The automatic selection (``--unreviewed``): categorize by the keyword lexicon, then take
    per category the snippets with the most cue matches (then file order) up to the targets."""
    from dataclasses import replace

    targets = targets or FINANCE_TARGETS
    dropped: list[Dropped] = []
    pools: dict[str, list[tuple[int, int, Context]]] = {c: [] for c in FINANCE_SCOPES}
    for order, ctx in enumerate(candidates):
        category, scores = categorize(ctx.text)
        if category is None:
            top = max(scores.values())
            reason = "no category cue" if top == 0 else "ambiguous: tie between " + ", ".join(
                c for c, s in scores.items() if s == top)
            dropped.append(Dropped(TASK, ctx.provenance["source"], reason))
        else:
            pools[category].append((-scores[category], order, replace(ctx, gold=category)))
    quotas = _quotas({c: len(p) for c, p in pools.items()}, targets)
    chosen = [ctx for category, pool in pools.items() for _, _, ctx in sorted(pool, key=lambda p: p[:2])[: quotas[category]]]
    chosen.sort(key=lambda c: (list(FINANCE_SCOPES).index(c.gold), c.context_id))
    return chosen, dropped, {c: len(p) for c, p in pools.items()}


def load_finance(name: str, posts: list[dict[str, str]], targets: dict[str, int] | None = None,
                 id_prefix: str = "fin") -> tuple[list[Context], list[Dropped], dict[str, int]]:
    """The automatic selection from posts (candidates, then ``select_finance``)."""
    candidates, dropped = finance_candidates(name, posts, id_prefix)
    chosen, lost, pool = select_finance(candidates, targets)
    return chosen, dropped + lost, pool


def _quotas(available: dict[str, int], targets: dict[str, int]) -> dict[str, int]:
    """Target counts, capped by what is available; any shortfall goes to categories with spare posts,
    in order of target size, so the total stays at the target total when possible."""
    quotas = {c: min(targets[c], available[c]) for c in targets}
    short = sum(targets.values()) - sum(quotas.values())
    for c in sorted(targets, key=lambda c: -targets[c]):
        extra = min(short, available[c] - quotas[c])
        quotas[c] += extra
        short -= extra
    return quotas


# ---------------------------------------------------------------- the finance domain


def _load(opts: Any) -> Loaded:
    notes = []
    if getattr(opts, "finance_posts", None) is not None:
        name, posts = stackexchange_posts(opts.finance_posts)
        prefix = "fin-se"
    elif opts.source == "hf":
        raise UserError("finance is not on the Hub: its reviewed contexts are FiQA-2018 titles, read from "
                        "fiqa/FiQA_train_question_final.tsv in a --source folder; with --source hf build "
                        "--tasks law_issue_spotting,law_hearsay,medicine (or --unreviewed --finance-posts Posts.xml "
                        "for an audit build from a Stack Exchange dump)")
    else:
        name, posts = fiqa_posts(opts.source)
        prefix = "fin-fiqa"
        notes.append("finance snippets are FiQA post titles only (the FiQA question file has no bodies)")
    found, lost = finance_candidates(name, posts, id_prefix=prefix)
    return Loaded(found, lost, notes)


def _select(candidates: list[Context]) -> Loaded:
    chosen, lost, pool = select_finance(candidates)
    return Loaded(chosen, lost, [], pool)


FINANCE = Domain(TASK, order=30, load=_load, select=_select, mc_ask="Which category does this post belong to",
                 phrase=lambda option: f"an issue of {option.lower()}", scopes=FINANCE_SCOPES)
