"""``rating``: how many stars does a review give, 1-5? An answer format framebench does not know
(a number, right within one star of the gold), a column of its own, a report table, a console
summary and a context line for the drill-down and the viewer; and ``count:CHAR``, a model
engine that answers how often CHAR occurs in the prompt."""

from __future__ import annotations

import pyarrow as pa

from framebench.plugin import (
    Decoding,
    Engine,
    Job,
    Section,
    Suite,
    SuiteItems,
    SuiteMetrics,
    SuiteRecords,
    SuiteView,
    SummaryTable,
    Table,
    make_row,
)

STARS = ("1", "2", "3", "4", "5")


def rating_rows_agree(rows):
    """A rating is right exactly when it is within one star of the gold."""
    close = rows["stars_off"].notna() & (rows["stars_off"] <= 1)
    yield rows["correct"].astype(bool) != close, "column 'correct' must say whether stars_off <= 1"


class RatingItems(SuiteItems):
    def jobs(self, items, options, where):
        return [Job(item, item["item_id"], [{"role": "user", "content": item["question"]}],
                    Decoding(max_new_tokens=3), decoding_name="rating") for item in items]

    def record(self, job, run_id, model):
        item, output = job.item, (job.output or "").strip()
        answer = output if output in STARS else ""
        off = abs(int(answer) - int(item["gold"])) if answer else None
        return make_row(run_id=run_id, model=model, suite="rating", task="reviews", format="stars",
                        context_id=item["context_id"], item_id=job.record_id, bias="neutral",
                        gold=item["gold"], answer=answer, parse="ok" if answer else "unparsed",
                        correct=off is not None and off <= 1, output=output, stars_off=off)


class RatingMetrics(SuiteMetrics):
    def compute(self, inputs):
        mine = inputs.records[inputs.records["suite"] == "rating"]
        return {model: {"n": len(rows), "within_one": float(rows["correct"].mean()),
                        "mean_off": float(rows["stars_off"].mean())}
                for model, rows in mine.groupby("model")}

    def report_sections(self, report):
        rows = [[model, str(m["n"]), f"{100 * m['within_one']:.1f}", f"{m['mean_off']:.2f}"]
                for model, m in sorted(report["rating"].items())]
        return [Section(self.title, [Table("Star ratings", "right = within one star of the gold",
                                           ["Model", "Reviews", "Within one star (%)", "Mean stars off"],
                                           rows)])]

    def summary_tables(self, report):
        return [SummaryTable("Star ratings", ["model", "n", "within one"],
                             [[m, str(v["n"]), f"{100 * v['within_one']:.1f}"]
                              for m, v in sorted(report["rating"].items())])]


class RatingView(SuiteView):
    def context_summary(self, records):
        off = [int(r["stars_off"]) for r in records if r["stars_off"] == r["stars_off"]]  # NaN: unrated
        return f"{len(off)}/{len(records)} rated, off by {sum(off)} star(s)", ""


RATING = Suite(
    RatingItems(tasks=("reviews",), item_fields={"gold": str},
                records=SuiteRecords(formats={"stars": STARS}, columns={"stars_off": (pa.int64(), None)},
                                     check=rating_rows_agree)),
    RatingMetrics("rating", "Star ratings (toy)", order=95),
    RatingView(drilldown_columns=("item_id", "gold", "answer", "stars_off", "correct")))


class CountBackend:
    def __init__(self, char: str):
        self.spec, self.char = f"count:{char}", char

    def fingerprint(self) -> str:
        return self.spec

    def info(self) -> dict[str, str]:
        return {}

    def generate(self, chats, decoding: Decoding, on_batch=None) -> list[str]:
        return [str(chat[-1]["content"].count(self.char)) for chat in chats]


COUNT = Engine("count", "model", lambda char: CountBackend(char), arg_help="CHAR",
               help="answers how often CHAR occurs in the prompt")
