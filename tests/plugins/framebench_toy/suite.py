"""``parity``: is N even? One yes/no job per item; the metric is accuracy per model."""

from __future__ import annotations

from framebench.plugin import (
    Decoding,
    Job,
    Section,
    Suite,
    SuiteItems,
    SuiteMetrics,
    SuiteRecords,
    SuiteView,
    Table,
    make_row,
    standard_formats,
)


class ParityItems(SuiteItems):
    def jobs(self, items, options, where):
        return [Job(item, item["item_id"], [{"role": "user", "content": item["question"]}],
                    Decoding(max_new_tokens=2), decoding_name="parity") for item in items]

    def record(self, job, run_id, model):
        item, output = job.item, (job.output or "").strip()
        answer = output if output in ("Yes", "No") else ""
        return make_row(run_id=run_id, model=model, suite="parity", task="parity",
                        format="binary", context_id=item["context_id"], item_id=job.record_id,
                        bias="neutral", gold=item["gold"], answer=answer,
                        parse="ok" if answer else "unparsed", correct=answer == item["gold"],
                        output=output)


class ParityMetrics(SuiteMetrics):
    def compute(self, inputs):
        mine = inputs.records[inputs.records["suite"] == "parity"]
        return {model: {"n": int(len(rows)), "accuracy": float(rows["correct"].mean())}
                for model, rows in mine.groupby("model")}

    def report_sections(self, report):
        rows = [[model, str(m["n"]), f"{100 * m['accuracy']:.1f}"]
                for model, m in sorted(report["parity"].items())]
        return [Section(self.title, [Table("Parity accuracy", "share of items answered right",
                                           ["Model", "Items", "Accuracy (%)"], rows)])]


PARITY = Suite(ParityItems(tasks=("parity",), records=SuiteRecords(formats=standard_formats("binary"))),
               ParityMetrics("parity", "Parity (toy)", order=90),
               SuiteView(drilldown_columns=("item_id", "gold", "answer", "parse", "correct")))
