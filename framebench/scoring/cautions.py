"""The report's cautions: what a reader must know before trusting a number, shown first in every
report and in the console summary. Runs pooled over different datasets (``--allow-mixed-datasets``),
runs cut short with ``--limit``, and run folders scored with ``--force`` although their files
changed after the run wrote them. ``framebench score`` prints them after its summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.parts import ReportInput, ReportPart
from framebench.scoring.sections import Section

FORCED = "scored with --force: "


def cautions(inputs: ReportInput) -> list[str]:
    from framebench.paths import display_path
    from framebench.run_folder import run_limit

    lines = [f"{line} (pooled as asked: --allow-mixed-datasets)" for line in inputs.runs.mixed]
    for folder in inputs.runs.folders:
        limit = run_limit(folder.info)
        if limit is not None:
            lines.append(f"{display_path(folder.path)} was run with --limit {limit}: a smoke test over the "
                         "first items only, whose contexts may be cut short; its numbers are not the benchmark's")
    lines += [f"{FORCED}{w}" for w in inputs.runs.warnings]
    return lines


class Cautions(ReportPart):
    name = "cautions"
    title = "Cautions"
    order = 1
    warns = True

    def compute(self, inputs: ReportInput) -> Mapping[str, Any] | None:
        found = cautions(inputs)
        return {"lines": found} if found else None

    def report_sections(self, report: Mapping[str, Any]) -> list[Section]:
        lines = report[self.name]["lines"]
        return [Section(self.title, note=" ".join(f"⚠ {line}." for line in lines))]


CAUTIONS = Cautions()
