"""The scriptable defects of a FramingQA build: what a reviewer would reject without domain knowledge.

Options and texts (per context): an empty or repeated option; a distractor whose words are a subset
or superset of the gold's (it overlaps the gold; synonyms and narrower terms under another name need a
reader: ``text_eval/framingqa/reviewed/``); an option that contains another option; a free-text option named
verbatim in the context (a leak); HTML entities; doubled words; a context that repeats another
one's text.
Answer cues (per task): the gold at one letter, an option at one letter, or the gold the longest
option, more often than chance allows (binomial and chi-square tests, p < ``ALPHA``).
Premises (per sheet): a premise outside 12-40 words, cut with an ellipsis, repeated within its
context, naming its own option, quoting a sentence with a label attached, or sharing fewer than two
content words with its context (one in a context under ``SHORT_CONTEXT_WORDS``), an evidence premise that repeats another premise of its context, a
premise that another context also uses, first person mixed with "the asker" in one context, and a
premise whose blind reading (``framingqa.blind``) is missing or names another option without an
override. Per task: the gold premise the longest of a context's four more often than 1 in 4 (chance),
and premises that voice the user's view ("my sense that ...") far more common in one direction.
Texts: a URL or Python dict text. Rendered items: a capitalised article or pronoun after "Given" or
"based on", "Given/based on" followed by a question word, doubled words, stray punctuation.

``find_defects`` returns every defect; ``build framingqa --check`` fails on any.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from framebench.text_eval.framingqa.answer_sheets import AnswerSheet
from framebench.text_eval.framingqa.blind import disagreements
from framebench.text_eval.framingqa.contexts import Context
from framebench.text_eval.framingqa.domains import domain

ALPHA = 0.01
PREMISE_WORDS = (12, 40)
MIN_SHARED_CONTENT_WORDS = 2
# A one-line context (a finance title of ~12 words, a hearsay sentence) has a handful of content words:
# asking two of them back makes a premise restate the context, which reads as the gold (issue 49).
# There one shared word anchors the premise to the detail it reads.
SHORT_CONTEXT_WORDS = 40
DOUBLED_OK = {"that", "had", "is"}  # "that that", "had had", "is is" can be English
_ENTITY = re.compile(r"&(?:[a-z]+|#\d+|#x[0-9a-f]+);", re.I)
_DOUBLED = re.compile(r"\b([a-z]+)\s+\1\b", re.I)
_QUOTED_LABEL = re.compile(r'"[^"]{12,}"\s*,?\s*which\b', re.I)
_CAPITAL_AFTER = re.compile(r"\b(?:Given|based on)\s+(?:The|A|An|My|His|Her|Their|This|That|Its|Our|Your)\b")
# "Given whether I can ..., is this ...?" and "based on how do I ...": a question where a noun phrase must
# stand. "what" alone can start a noun phrase ("based on what my report shows"), so only "what" + a verb.
# The templates write "Given" capitalised at the start and "based on" in lower case; a premise's own
# "…, given how much we owe" is English.
_WH_AFTER = re.compile(r"\b(?:Given|based on)\s+(?:whether|how|why|when|where|which|who|if|"
                       r"what\s+(?:is|are|was|were|do|does|did|should|can|could|would|will|happens)\b)\b")
_URL = re.compile(r"https?://|\bwww\.", re.I)
_DICT_TEXT = re.compile(r"\{\s*'[^']+'\s*:")
_THIRD_PERSON_USER = re.compile(r"\bthe (?:asker|poster|questioner|user)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:I|my|me|mine|myself)\b")
# A premise that voices the user's own reading ("my sense that ...", "... read as ..."). Where most
# incorrect-bias premises do and gold premises do not, the voice itself tells the directions apart.
_USER_VIEW = re.compile(
    r"\b(?:my sense|my view|the view that|on this view|the sense that|I see|I picture|I take|I read|I feel|"
    r"I think|I fear|I worry|my worry|my suspicion|my assumption|my belief|my guess|read as|taken as|which I|"
    r"the thought that|a reading of|I'd|I would)\b", re.I)
VOICE_GAP = 0.15  # the most the two directions' shares of premises that voice a view may differ
GOLD_LONGEST_CHANCE = 0.25  # the gold premise strictly the longest of four by chance at most 1 in 4
_STRAY = re.compile(r"\s[,.?]|,,|\.\.|\?\.|\.\?|,\?")
_STOP = frozenset(
    "a an the of to in on for and or but with by at from as is are was were be been being this that these those "
    "it its my me i we our you your he she his her they their them not no do does did have has had about into "
    "over after before than then so if when while which who whom what there here can could would should will "
    "just also more most very any some all one two".split())


@dataclass(frozen=True)
class Defect:
    task: str
    context_id: str  # "" for a task-level defect
    kind: str
    detail: str


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"['’]s\b", "", text.lower()))


def content_stems(text: str) -> set[str]:
    """Content words cut to six letters, a crude stem that matches 'bankrupt' with 'bankruptcy'."""
    return {w[:6] for w in words(text) if w not in _STOP and len(w) > 2}


def find_defects(contexts: list[Context], sheets: list[AnswerSheet], items: list[dict[str, Any]]) -> list[Defect]:
    sheet_of = {s.context_id: s for s in sheets}
    defects: list[Defect] = []
    for ctx in contexts:
        sheet = sheet_of[ctx.context_id]
        defects += option_defects(ctx, sheet)
        defects += text_defects(ctx)
        defects += premise_defects(ctx, sheet)
    defects += duplicate_defects(contexts)
    defects += shared_premise_defects(contexts, sheet_of)
    for task in dict.fromkeys(c.task for c in contexts):
        task_sheets = [sheet_of[c.context_id] for c in contexts if c.task == task]
        defects += gold_longest_defects(task, task_sheets)
        defects += voice_cue_defects(task, task_sheets)
    layouts = {it["context_id"]: (it["options"], it["gold"]) for it in items
               if it["format"] == "mc" and it["slot"] == "neutral" and not it.get("rotation")}
    for task in dict.fromkeys(c.task for c in contexts):
        shown = [layouts[c.context_id] for c in contexts if c.task == task and c.context_id in layouts]
        defects += cue_defects(task, shown)
    defects += rendered_defects(items)
    return defects


def duplicate_defects(contexts: list[Context]) -> list[Defect]:
    """A context whose text (case, punctuation and spacing aside) repeats an earlier one of its task."""
    first: dict[tuple[str, str], str] = {}
    out: list[Defect] = []
    for ctx in contexts:
        key = (ctx.task, " ".join(words(ctx.text)))
        if key in first:
            out.append(Defect(ctx.task, ctx.context_id, "duplicate context", f"same text as {first[key]}"))
        else:
            first[key] = ctx.context_id
    return out


def shared_premise_defects(contexts: list[Context], sheet_of: dict[str, AnswerSheet]) -> list[Defect]:
    """A premise that two contexts use (a copy from one context into another)."""
    first: dict[str, str] = {}
    out: list[Defect] = []
    for ctx in contexts:
        for slot, _, premise in premises_of(sheet_of[ctx.context_id]):
            key = " ".join(words(premise))
            owner = first.setdefault(key, ctx.context_id)
            if owner != ctx.context_id:
                out.append(Defect(ctx.task, ctx.context_id, "premise in two contexts", f"{slot}: also in {owner}"))
    return out


def gold_longest_defects(task: str, sheets: list[AnswerSheet]) -> list[Defect]:
    """A cue between directions: the gold premise strictly the longest of a context's four premises
    in more than the chance share of contexts."""
    if not sheets:
        return []
    longest = sum(1 for s in sheets if gold_premise_longest(s))
    if longest / len(sheets) <= GOLD_LONGEST_CHANCE:
        return []
    return [Defect(task, "", "gold premise the longest",
                   f"{longest} of {len(sheets)} contexts (at most 1 in 4, the chance rate)")]


def voice_cue_defects(task: str, sheets: list[AnswerSheet]) -> list[Defect]:
    """A cue between directions: the share of incorrect-bias premises that voice the user's view and
    the share of gold premises that do differ by more than ``VOICE_GAP``."""
    gold = [p for s in sheets for p in [s.premises[s.gold], *s.gold_rephrasings]]
    incorrect = [p for s in sheets for p in [*(s.premises[d] for d in s.distractors), *(e.premise for e in s.evidence)]]
    if not gold or not incorrect:
        return []
    share_gold, share_incorrect = (sum(bool(_USER_VIEW.search(p)) for p in ps) / len(ps) for ps in (gold, incorrect))
    if abs(share_gold - share_incorrect) <= VOICE_GAP:
        return []
    return [Defect(task, "", "voice differs between directions",
                   f"{share_incorrect:.0%} of incorrect-bias premises voice the user's view, {share_gold:.0%} of gold "
                   f"premises (at most {VOICE_GAP:.0%} apart)")]


def gold_premise_longest(sheet: AnswerSheet) -> bool:
    lengths = {o: len(p.split()) for o, p in sheet.premises.items()}
    return all(lengths[sheet.gold] > n for o, n in lengths.items() if o != sheet.gold)


def option_defects(ctx: Context, sheet: AnswerSheet) -> list[Defect]:
    out: list[Defect] = []

    def add(kind: str, detail: str) -> None:
        out.append(Defect(ctx.task, ctx.context_id, kind, detail))

    options = sheet.options
    if any(not o.strip() for o in options):
        add("empty option", "an option is empty")
    if len({o.strip().lower() for o in options}) != len(options):
        add("repeated option", f"{options}")
    gold_words = option_words(sheet.gold)
    for d in sheet.distractors:
        mine = option_words(d)
        if mine and gold_words and (mine <= gold_words or gold_words <= mine):
            add("distractor overlaps gold", f"{d!r} against gold {sheet.gold!r}: words are a subset or superset")
    for a in options:
        for b in options:
            if a != b and re.search(rf"\b{re.escape(a.lower())}\b", b.lower()):
                add("option inside option", f"{a!r} occurs in {b!r}")
    if not domain(ctx.task).labels:  # free-text options: the text must not name one
        for o in options:
            if re.search(rf"\b{re.escape(o.lower())}\b", ctx.text.lower()):
                add("option named in text", f"the context names {o!r}")
    return out


def option_words(option: str) -> set[str]:
    """An option's words, hyphenated words joined ('post-infectious' is 'postinfectious')."""
    return set(words(re.sub(r"(?<=\w)-(?=\w)", "", option)))


def text_defects(ctx: Context) -> list[Defect]:
    out = [Defect(ctx.task, ctx.context_id, "html entity", m) for m in sorted(set(_ENTITY.findall(ctx.text)))]
    out += [Defect(ctx.task, ctx.context_id, "doubled word", f"{w} {w}") for w in _doubled(ctx.text)]
    if _URL.search(ctx.text):
        out.append(Defect(ctx.task, ctx.context_id, "url in text", _URL.search(ctx.text).group(0)))
    if _DICT_TEXT.search(ctx.text):
        out.append(Defect(ctx.task, ctx.context_id, "dict text in text", _DICT_TEXT.search(ctx.text).group(0)))
    return out


def _doubled(text: str) -> list[str]:
    return sorted({m.group(1).lower() for m in _DOUBLED.finditer(text)
                   if m.group(1).lower() not in DOUBLED_OK and not m.group(1).isdigit()})


def premises_of(sheet: AnswerSheet) -> list[tuple[str, str, str]]:
    """(slot name, option it points to, premise) for every premise of a sheet."""
    out = [(f"premise <{o}>", o, p) for o, p in sheet.premises.items()]
    out += [(f"rephrasing {i}", sheet.gold, p) for i, p in enumerate(sheet.gold_rephrasings, 1)]
    out += [(f"evidence {e.evidence_id}", e.distractor, e.premise) for e in sheet.evidence]
    return out


def premise_defects(ctx: Context, sheet: AnswerSheet) -> list[Defect]:
    out: list[Defect] = []
    context_words = content_stems(ctx.text)
    min_shared = MIN_SHARED_CONTENT_WORDS if len(ctx.text.split()) >= SHORT_CONTEXT_WORDS else 1
    labels = domain(ctx.task).labels or tuple(sheet.options)
    low, high = PREMISE_WORDS
    for slot, option, premise in premises_of(sheet):
        def add(kind: str, detail: str, slot: str = slot) -> None:
            out.append(Defect(ctx.task, ctx.context_id, kind, f"{slot}: {detail}"))

        n = len(premise.split())
        if not low <= n <= high:
            add("premise length", f"{n} words (allowed {low}-{high})")
        if "…" in premise or "..." in premise:
            add("premise cut", "holds an ellipsis")
        if re.search(rf"\b{re.escape(option.lower())}\b", premise.lower()):
            add("premise names its option", f"names {option!r}")
        if _QUOTED_LABEL.search(premise) or (re.search(r'"[^"]{12,}"', premise) and any(
                re.search(rf"\b{re.escape(label.lower())}\b", premise.lower()) for label in labels)):
            add("quoted sentence with a label", premise[:80])
        if _ENTITY.search(premise):
            add("html entity", premise[:80])
        if _doubled(premise):
            add("doubled word", ", ".join(_doubled(premise)))
        shared = content_stems(premise) & context_words
        if len(shared) < min_shared:
            add("premise ungrounded", f"shares {len(shared)} content words with the context")
    out += _repeats(ctx, sheet)
    out += voice_defects(ctx, sheet)
    out += blind_defects(ctx, sheet)
    return out


def voice_defects(ctx: Context, sheet: AnswerSheet) -> list[Defect]:
    """One context keeps one voice: never the poster's "I" beside "the asker"."""
    texts = [p for *_, p in premises_of(sheet)]
    if any(_THIRD_PERSON_USER.search(t) for t in texts) and any(_FIRST_PERSON.search(t) for t in texts):
        return [Defect(ctx.task, ctx.context_id, "mixed voice", "premises say both 'I/my' and 'the asker'")]
    return []


def blind_defects(ctx: Context, sheet: AnswerSheet) -> list[Defect]:
    missing, wrong = disagreements(premises_of(sheet), sheet.blind_readings)
    out = [Defect(ctx.task, ctx.context_id, "no blind reading", slot) for slot in missing]
    out += [Defect(ctx.task, ctx.context_id, "blind reading disagrees", slot) for slot in wrong]
    return out


def _repeats(ctx: Context, sheet: AnswerSheet) -> list[Defect]:
    """Premises must be distinct: an evidence set foregrounds details of its own, so it never repeats a
    distractor premise (or any other premise of the context)."""
    texts: Counter[str] = Counter(premise.strip().lower() for *_, premise in premises_of(sheet))
    out = [Defect(ctx.task, ctx.context_id, "premise repeated", f"{n} times: {text[:60]!r}")
           for text, n in texts.items() if n > 1]
    others = {p.strip().lower() for p in [*sheet.premises.values(), *sheet.gold_rephrasings]}
    out += [Defect(ctx.task, ctx.context_id, "evidence copies a premise", f"evidence {e.evidence_id}")
            for e in sheet.evidence if e.premise.strip().lower() in others]
    return out


def cue_defects(task: str, layouts: list[tuple[list[str], str]]) -> list[Defect]:
    """Answer cues over a task's MC contexts, from the options as the items show them: (A-D order,
    gold letter) per context."""
    from scipy.stats import binomtest, chisquare

    out: list[Defect] = []
    if len(layouts) >= 20:
        letters = Counter(letter for _, letter in layouts)
        p = chisquare([letters.get(x, 0) for x in "ABCD"]).pvalue
        if p < ALPHA:
            out.append(Defect(task, "", "gold letter imbalance", f"{dict(sorted(letters.items()))} (chi-square p = {p:.2g})"))
        by_option: dict[str, Counter[str]] = {}
        for order, _ in layouts:
            for i, option in enumerate(order):
                by_option.setdefault(option, Counter())["ABCD"[i]] += 1
        for option, counts in sorted(by_option.items()):
            if sum(counts.values()) >= 20:
                p = chisquare([counts.get(x, 0) for x in "ABCD"]).pvalue
                if p < ALPHA:
                    out.append(Defect(task, "", "option at one letter",
                                      f"{option!r}: {dict(sorted(counts.items()))} (chi-square p = {p:.2g})"))
        longest = sum(1 for order, letter in layouts if _strictly_longest(order, "ABCD".index(letter)))
        p = binomtest(longest, len(layouts), 0.25, alternative="greater").pvalue
        if p < ALPHA:
            out.append(Defect(task, "", "gold is the longest option",
                              f"{longest} of {len(layouts)} contexts (chance 1 in 4; binomial p = {p:.2g})"))
    return out


def _strictly_longest(options: list[str], gold: int) -> bool:
    return all(len(options[gold]) > len(o) for i, o in enumerate(options) if i != gold)


def rendered_defects(items: list[dict[str, Any]]) -> list[Defect]:
    """Grammar of the rendered questions that a premise or a template can break."""
    out: list[Defect] = []
    for item in items:
        question = item["question"]
        problems = []
        if _CAPITAL_AFTER.search(question):
            problems.append("a capitalised article or pronoun after 'Given' or 'based on'")
        if _WH_AFTER.search(question):
            problems.append(f"'{_WH_AFTER.search(question).group(0)}': a question word after 'Given' or 'based on'")
        if _doubled(question):
            problems.append("doubled word " + ", ".join(_doubled(question)))
        if _STRAY.search(question):
            problems.append("stray punctuation")
        if not question.endswith("?"):
            problems.append("does not end with a question mark")
        for problem in problems:
            out.append(Defect(item["task"], item["context_id"], "rendered question", f"{item['item_id']}: {problem}"))
    return out


def summary(defects: list[Defect]) -> dict[tuple[str, str], int]:
    """Defect counts per (task, kind)."""
    return dict(sorted(Counter((d.task, d.kind) for d in defects).items()))
