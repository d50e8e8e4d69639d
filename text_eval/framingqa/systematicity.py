"""FramingQA's systematicity diagnostics (paper §2.3) per context: polarity consistency, paraphrase
invariance, and the framing effect beside the rewording effect (docs/report.md "Systematicity").

A *polarity pair* is a binary plain row and the negated row of the same context, level, bias,
distractor and phrasing (and the same evidence set: the slot without its form); it is
*consistent* when both are parsed and their answers differ (Yes to "is A" with No to "is not A",
or the reverse), right or wrong. A *rewording triple* is the three rows of one stance (context,
format, level, bias, form, distractor) phrased Q1, Q2 and Q3: the question rewordings at the root
and global levels, the premise rewordings of correct-bias propositional rows (incorrect-bias
propositional rows differ by the distractor their evidence points to, not by a rewording, and
form no triple); it is *alike* when all three are parsed and give the same answer.

Per (model, task, format, context, level, bias), ``bias`` also ``all`` (both biases) and
``level`` also ``all`` (every level):
``polarity`` share of the pairs consistent, ``polarity_strict`` 1 when every pair is,
``invariance`` share of the triples alike, ``invariance_strict`` 1 when every triple is,
``spread`` mean over the triples of max - min P(gold) (constrained rows).

Per (model, task, format, context, level; ``all``: every level): ``framing`` the share right among its correct-bias rows
minus among its incorrect-bias rows (unparsed rows are wrong), ``rewording`` the mean over the
pairs of rewordings of one stance (3 per triple) of |right_i - right_j|: how often swapping one
rewording for another changes whether the answer is right; ``framing_p`` and ``rewording_p`` the
same of P(gold) (mean |P_i - P_j| over the pairs, 2/3 of the triple's spread).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from framebench.vocabulary import BIASES, FORMS, PHRASINGS

KEY = ["model", "task", "format", "context_id"]
ALL = "all"  # the bias (level) of every bias (level)
DIAGNOSTICS = ["polarity", "polarity_strict", "invariance", "invariance_strict", "spread"]
EFFECTS = ["framing", "rewording", "framing_p", "rewording_p"]
# what each context's value is a share of (for the SE floor of its interval)
UNITS = ["pairs", "triples"]
EFFECT_UNITS = ["correct", "incorrect", "n_correct", "n_incorrect", "mixed", "triples"]
NEEDED = [*KEY, "suite", "bias", "level", "form", "phrasing", "distractor", "slot", "gold", "answer",
          "parse", "correct"]
FORM_IN_SLOT = r"/(?:plain|negated)(?=/|$)"


def prepared(df: pd.DataFrame) -> pd.DataFrame:
    """The biased FramingQA rows with ``right`` (right and parsed), ``parsed`` and ``p`` (P(gold);
    NaN without answer probabilities)."""
    rows = df.loc[(df["suite"] == "framingqa") & df["bias"].isin(BIASES)]
    cols = [c for c in [*NEEDED, "answer_probs"] if c in rows.columns]
    rows = rows[cols].fillna({c: "" for c in ("form", "phrasing", "distractor", "slot", "answer", "level")})
    parsed = (rows["parse"] == "ok").to_numpy()
    out = rows.assign(parsed=parsed, right=(rows["correct"].fillna(False).astype(bool).to_numpy() & parsed)
                      .astype(float))
    if "answer_probs" in rows.columns and (rows["answer_probs"].fillna("") != "").any():
        from framebench.records import p_of_answers

        return out.assign(p=p_of_answers(rows["answer_probs"], rows["gold"]))
    return out.assign(p=np.nan)


def polarity_pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per polarity pair: the pair's KEY, level, bias and ``consistent`` (0/1)."""
    binary = rows[(rows["format"] == "binary") & rows["form"].isin(FORMS)]
    binary = binary.assign(stem=binary["slot"].str.replace(FORM_IN_SLOT, "", regex=True))
    key = [*KEY, "level", "bias", "distractor", "phrasing", "stem"]
    sides = [binary.loc[binary["form"] == form, [*key, "parsed", "answer"]].drop_duplicates(key, keep=False)
             for form in FORMS]
    both = sides[0].merge(sides[1], on=key, how="inner", suffixes=("_plain", "_negated"))
    consistent = both["parsed_plain"] & both["parsed_negated"] & (both["answer_plain"] != both["answer_negated"])
    return both[[*KEY, "level", "bias"]].assign(consistent=consistent.astype(float))


def rewording_triples(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per rewording triple: KEY, level, bias, ``alike`` (0/1), ``rewording`` (mean
    |right_i - right_j| over its three pairs), ``spread`` (max - min P(gold); NaN without)."""
    reworded = rows["phrasing"].isin(PHRASINGS) & ~((rows["bias"] == "incorrect")
                                                    & (rows["level"] == "propositional"))
    key = [*KEY, "level", "bias", "form", "distractor"]
    grouped = rows[reworded].groupby(key, sort=True)
    out = grouped.agg(n=("phrasing", "size"), phrasings=("phrasing", "nunique"), parsed=("parsed", "all"),
                      answers=("answer", "nunique"), k=("right", "sum"), high=("p", "max"),
                      low=("p", "min"), with_p=("p", "count"))
    out = out[(out["n"] == len(PHRASINGS)) & (out["phrasings"] == len(PHRASINGS))]
    spread = np.where(out["with_p"] == out["n"], out["high"] - out["low"], np.nan)
    return pd.DataFrame({"alike": (out["parsed"] & (out["answers"] == 1)).astype(float),
                         "rewording": out["k"] * (3 - out["k"]) / 3, "spread": spread},
                        index=out.index).reset_index()[[*KEY, "level", "bias", "alike", "rewording", "spread"]]


def _with_all(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` once more with ``column`` set to ``all`` (every bias, or every level)."""
    return pd.concat([frame, frame.assign(**{column: ALL})], ignore_index=True)


def diagnostic_contexts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (KEY, level, bias) with a pair or a triple: the DIAGNOSTICS columns (NaN: none there)."""
    cell = [*KEY, "level", "bias"]
    pairs = _with_all(_with_all(polarity_pairs(rows), "bias"), "level").groupby(cell, sort=True)["consistent"]
    triples = _with_all(_with_all(rewording_triples(rows), "bias"), "level").groupby(cell, sort=True)
    out = pd.concat([pairs.mean().rename("polarity"), pairs.min().rename("polarity_strict"),
                     triples["alike"].mean().rename("invariance"),
                     triples["alike"].min().rename("invariance_strict"),
                     triples["spread"].mean().rename("spread"), pairs.size().rename("pairs"),
                     triples.size().rename("triples")], axis=1)
    return out.reindex(columns=[*DIAGNOSTICS, *UNITS]).fillna({"pairs": 0, "triples": 0})


def effect_contexts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (KEY, level) with both biases and a triple: the EFFECTS columns (P(gold) ones NaN
    without answer probabilities)."""
    cell = [*KEY, "level"]
    grouped = _with_all(rows, "level").assign(n=1.0).groupby([*cell, "bias"], sort=True)
    by_bias = grouped.agg(right=("right", "mean"), p=("p", "mean"), n=("n", "sum")).unstack("bias")
    by_bias = by_bias.reindex(columns=pd.MultiIndex.from_product([["right", "p", "n"], BIASES]))
    triples = _with_all(rewording_triples(rows), "level")
    moved = triples.assign(rewording_p=triples["spread"] * 2 / 3, mixed=triples["rewording"] * 3 / 2)
    moved = moved.groupby(cell, sort=True)
    out = pd.DataFrame({
        "framing": by_bias[("right", "correct")] - by_bias[("right", "incorrect")],
        "framing_p": by_bias[("p", "correct")] - by_bias[("p", "incorrect")],
        "correct": by_bias[("right", "correct")], "incorrect": by_bias[("right", "incorrect")],
        "n_correct": by_bias[("n", "correct")], "n_incorrect": by_bias[("n", "incorrect")]})
    out = out.join(moved[["rewording", "rewording_p", "mixed"]].mean(), how="inner")
    out = out.join(moved.size().rename("triples"), how="inner")
    return out[out["framing"].notna()].reindex(columns=[*EFFECTS, *EFFECT_UNITS])
