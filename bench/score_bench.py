"""Time ``framebench score`` end to end on 500,000 synthetic records (issue 2 item 8).

The records mix the three suites with the papers' group sizes: FramingQA 60 binary rows per
context (18 correct-bias, 36 root/global incorrect-bias over 3 distractors, 6 propositional) and
31 MC rows (9 + 18 + 3 + the neutral question); OMIT 8 models x 2 frames x 5 conditions per
scenario plus a 5-persona panel at M0, a third of the scenarios conflict-labeled and the rest
the candidate pool; embodied 7 variants per episode. Goal: <= 15 s on a 2-core machine.

    python bench/score_bench.py [--records 500000] [--keep DIR] [--no-phases]
    python bench/score_bench.py --runs DIR/run --compare-with ../base-checkout [--repeats 3]

The last line gives the wall time and peak RSS (``ru_maxrss`` of the child) of the subprocess
``framebench score`` run. ``--compare-with`` times ``framebench score`` of another checkout
(imported through ``PYTHONPATH``) against this one on the ``--runs`` folder (e.g. one ``--keep``
left), interleaved, ``--repeats`` runs each: wall, CPU (children included: the machine may be
shared) and peak RSS of every run, the best of each, their ratios, and whether the two wrote the
same report.json, report.md and report.html (but for the time and commit they stamp).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from framebench.records import registered_schema, write_records

MODELS = ["hf:/models/llama-8b", "hf:/models/gemma-12b", "openai:gpt-4.1-mini", "baseline:always-yes"]
TASKS_BINARY = ["law_issue_spotting", "law_hearsay", "finance", "medicine"]
TASKS_MC = ["law_issue_spotting", "finance", "medicine"]
LEVELS = ["root", "propositional", "global"]
OMIT_MODELS = [*MODELS, "hf:/models/qwen-9b", "hf:/models/llama-70b", "openai:gpt-4o-mini",
               "openai:gemini-2.0-flash"]  # the paper evaluates 8 models
PERSONAS = ["utilitarianism", "deontology", "virtue", "care", "contractualism"]
LABELED_SHARE = 218 / 657  # conflict-labeled scenarios among the valid frames (OMIT paper)
CONFLICTS = ["utilitarianism-deontology", "utilitarianism-care", "deontology-care", "virtue-care"]


def text_template(fmt: str) -> pd.DataFrame:
    """The rows of one context (bias, level, form, variant, distractor, slot)."""
    forms = ["plain", "negated"] if fmt == "binary" else ["plain"]
    rows = [("correct", lv, f, v, "") for lv in LEVELS for f in forms for v in ("Q1", "Q2", "Q3")]
    rows += [("incorrect", lv, f, v, d) for lv in ("root", "global") for f in forms
             for v in ("Q1", "Q2", "Q3") for d in ("d1", "d2", "d3")]
    rows += [("incorrect", "propositional", f, "Q1", d) for f in forms for d in ("d1", "d2", "d3")]
    if fmt == "mc":
        rows.append(("neutral", "", "", "", ""))
    t = pd.DataFrame(rows, columns=["bias", "level", "form", "variant", "distractor"])
    t["slot"] = t.bias + "/" + t.level + "/" + t.form + "/" + t.variant + "/" + t.distractor
    return t


def text_records(rng: np.random.Generator, n_contexts: int, fmt: str, tasks: list[str]) -> pd.DataFrame:
    template = text_template(fmt)
    parts = []
    for model in MODELS:
        ctx = np.arange(n_contexts)
        frame = template.loc[np.tile(template.index, n_contexts)].reset_index(drop=True)
        ctx_of_row = np.repeat(ctx, len(template))
        frame["model"] = model
        frame["task"] = np.array(tasks)[ctx_of_row % len(tasks)]
        frame["context_id"] = pd.Series(ctx_of_row).map(lambda i: f"ctx{i:05d}").to_numpy()
        # per-context ease makes some contexts strict-correct and errors cluster
        ease = rng.beta(4, 1.5, n_contexts)[ctx_of_row]
        frame["correct"] = rng.random(len(frame)) < ease
        parse = np.where(rng.random(len(frame)) < 0.02, "unparsed", "ok")
        frame["parse"] = parse
        frame["correct"] &= parse == "ok"
        gold_choices = ["Yes", "No"] if fmt == "binary" else ["A", "B", "C", "D"]
        frame["gold"] = np.array(gold_choices)[rng.integers(0, len(gold_choices), len(frame))]
        frame["answer"] = np.where(frame["correct"], frame["gold"], "")
        frame["option"] = np.where(frame["bias"] == "neutral", "", "opt")
        frame["item_id"] = frame["context_id"] + "/" + fmt + "/" + frame["slot"]
        parts.append(frame)
    out = pd.concat(parts, ignore_index=True)
    out["suite"], out["format"], out["output"] = "framingqa", fmt, out["answer"]
    return out


def omit_records(rng: np.random.Generator, n_scenarios: int) -> pd.DataFrame:
    scen = np.array([f"S{i:04d}" for i in range(n_scenarios)])
    conflicts = np.array(["|".join(rng.choice(CONFLICTS, rng.integers(1, 3), replace=False))
                          if i < LABELED_SHARE * n_scenarios else ""  # the rest: candidate pool
                          for i in range(n_scenarios)])
    parts = []
    panels = [(m, [f"M{k}" for k in range(5)]) for m in OMIT_MODELS]
    panels += [(f"persona:{p}", ["M0"]) for p in PERSONAS]
    for model, conditions in panels:
        for condition in conditions:
            for frame in ("action", "omission"):
                no = rng.random(n_scenarios) < (0.6 if frame == "omission" else 0.5)
                parse = np.where(rng.random(n_scenarios) < 0.01, "unparsed", "ok")
                answer = np.where(parse == "ok", np.where(no, "No", "Yes"), "")
                parts.append(pd.DataFrame({
                    "model": model, "condition": condition, "frame": frame, "context_id": scen,
                    "conflicts": conflicts, "answer": answer, "parse": parse, "output": answer,
                    "item_id": [f"{s}/{frame}/{condition}" for s in scen],
                }))
    out = pd.concat(parts, ignore_index=True)
    out["suite"], out["task"], out["format"], out["bias"] = "omit", "omit", "binary", "neutral"
    return out


def embodied_records(rng: np.random.Generator, n_episodes: int) -> pd.DataFrame:
    variants = [("neutral", "")] + [(b, lv) for b in ("correct", "incorrect") for lv in LEVELS]
    constraint = rng.choice(["none", "spatial", "temporal"], n_episodes)
    parts = []
    for model in MODELS:
        for bias, level in variants:
            pc = np.clip(rng.beta(2, 1.2, n_episodes), 0, 1)
            pc = np.where(rng.random(n_episodes) < 0.35, 1.0, pc)
            parts.append(pd.DataFrame({
                "model": model, "bias": bias, "level": level,
                "context_id": [f"ep{i:05d}" for i in range(n_episodes)],
                "item_id": [f"ep{i:05d}/{bias}/{level}" for i in range(n_episodes)],
                "constraint": constraint, "percent_complete": pc, "success": pc == 1.0,
                "sim_steps": rng.integers(100, 1500, n_episodes), "replans": rng.integers(0, 20, n_episodes),
            }))
    out = pd.concat(parts, ignore_index=True)
    out["suite"], out["task"], out["format"] = "embodied", "robotics", "episode"
    return out


def synthetic_records(total: int, seed: int = 0) -> pd.DataFrame:
    """About ``total`` records: ~80 % text, ~10 % OMIT, ~10 % embodied."""
    rng = np.random.default_rng(seed)
    per_model_text = 0.8 * total / len(MODELS)
    n_ctx = int(per_model_text / (60 + 31))
    omit_rows_per_scenario = len(OMIT_MODELS) * 10 + len(PERSONAS) * 2
    embodied_rows_per_episode = len(MODELS) * 7
    frames = [
        text_records(rng, n_ctx, "binary", TASKS_BINARY),
        text_records(rng, n_ctx, "mc", TASKS_MC),
        omit_records(rng, int(0.1 * total / omit_rows_per_scenario)),
        embodied_records(rng, int(0.1 * total / embodied_rows_per_episode)),
    ]
    df = pd.concat(frames, ignore_index=True)
    df["run_id"] = "bench"
    for col, default in registered_schema().defaults.items():
        if col not in df.columns:
            df[col] = default
        elif default is not None:
            df[col] = df[col].fillna(default)
    return df[list(registered_schema().columns)]


class Timer:
    """Wall and CPU seconds of a block (CPU shows the cost when the machine is shared)."""

    def __init__(self, label: str) -> None:
        self.label = label

    @staticmethod
    def _cpu() -> float:
        t = os.times()  # this process and finished child processes
        return t.user + t.system + t.children_user + t.children_system

    def __enter__(self) -> Timer:
        self.wall, self.cpu = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = self._cpu() - self.cpu
        print(f"  {self.label:<28} wall {self.wall:6.2f} s   cpu {self.cpu:6.2f} s")


def phases(run_dir: Path) -> None:
    """Each stage of ``framebench score`` on its own: reading, each registered report part's
    entry (stage 0 before stage 1, as ``framebench.scoring.report``), then the two renderers."""
    from framebench.registry import report_parts
    from framebench.run_folder import load_runs
    from framebench.scoring.html import render_html
    from framebench.scoring.markdown import render_markdown
    from framebench.scoring.parts import ReportInput

    with Timer("read + validate records"):
        runs = load_runs([run_dir])
    inputs = ReportInput(runs)
    for part in sorted(report_parts(), key=lambda p: p.stage):
        with Timer(f"{part.name} entry"):
            entry = part.compute(inputs)
        if entry:
            inputs.report[part.name] = entry
    with Timer("report.md"):
        render_markdown(inputs.report)
    with Timer("report.html"):
        render_html(inputs.report, runs.records, runs.prompts)


def peak_child_rss_mib() -> float:
    """Peak resident memory of the largest finished child process (the subprocess score run is
    the only one), in MiB: ``ru_maxrss`` is KiB on Linux."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


ROOT = Path(__file__).resolve().parents[1]


def timed_score(checkout: Path, run_dir: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, its child processes included) and peak RSS
    (MiB; the largest process of the run) of ``framebench score`` imported from ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    # cwd: ``-m`` puts the working directory first on sys.path, ahead of PYTHONPATH
    proc = subprocess.Popen([sys.executable, "-m", "framebench", "score", str(run_dir.resolve()),
                             "--out", str(out.resolve())],
                            env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{checkout}: framebench score failed:\n{proc.stderr.read().decode()}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def compare(base: Path, run_dir: Path, out_dir: Path, repeats: int) -> None:
    """Interleaved runs of ``base``'s and this checkout's ``framebench score``."""
    checkouts = {"base": base.resolve(), "this": ROOT}
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in checkouts}
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for i in range(repeats):
        for name, checkout in checkouts.items():
            wall, cpu, rss = timed_score(checkout, run_dir, out_dir / name)
            results[name].append((wall, cpu, rss))
            print(f"  run {i + 1} {name:<4} ({checkout}): wall {wall:6.2f} s, cpu {cpu:6.2f} s, "
                  f"peak RSS {rss:,.0f} MiB")
    best = {name: np.min(runs, axis=0) for name, runs in results.items()}
    for name, runs in results.items():
        print(f"best {name}: wall {best[name][0]:.2f} s, cpu {best[name][1]:.2f} s, "
              f"peak RSS {max(r[2] for r in runs):,.0f} MiB (largest)")
    print(f"ratio this/base: best wall {best['this'][0] / best['base'][0]:.3f}, "
          f"best cpu {best['this'][1] / best['base'][1]:.3f}")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for file in ("report.json", "report.md", "report.html"):
        same = stamped(out_dir / "base" / file) == stamped(out_dir / "this" / file)
        print(f"{file}: {'identical' if same else 'DIFFERENT'} (but for the time and commit stamped)")


def stamped(path: Path) -> str:
    """A report file with the time it was generated and the checkout's commit blanked."""
    text = path.read_text()
    meta = json.loads(text)["meta"] if path.suffix == ".json" else {}
    for value in (meta.get("generated"), meta.get("git_commit")):
        if value:
            text = text.replace(value, "")
    if path.suffix != ".json":  # "Generated <time> by framebench <version> (git <commit>); ..."
        text = re.sub(r"Generated \S+ by framebench \S+( \(git \w+\))?", "Generated", text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--keep", type=Path, help="keep the run and report folders here")
    parser.add_argument("--no-phases", action="store_true", help="only the end-to-end timings")
    parser.add_argument("--runs", type=Path, help="with --compare-with: the run folder to score")
    parser.add_argument("--compare-with", type=Path, metavar="CHECKOUT",
                        help="time another checkout's framebench score against this one's")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each with --compare-with")
    args = parser.parse_args()

    if args.compare_with:
        if not args.runs:
            parser.error("--compare-with needs --runs (generate once with --keep)")
        if args.keep:  # the two reports stay there (base/, this/)
            compare(args.compare_with, args.runs, args.keep, args.repeats)
            return
        with tempfile.TemporaryDirectory(prefix="score-compare-") as out:
            compare(args.compare_with, args.runs, Path(out), args.repeats)
        return

    from framebench import api

    base = args.keep or Path(tempfile.mkdtemp(prefix="score-bench-"))
    run_dir, out_dir = base / "run", base / "report"
    t0 = time.perf_counter()
    df = synthetic_records(args.records)
    write_records(df, run_dir)
    n = len(df)
    print(f"generated and wrote {n:,} records in {time.perf_counter() - t0:.1f} s "
          f"({df['suite'].value_counts().to_dict()})")
    del df
    print(f"cpus: {os.cpu_count()}, load average before timing: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.no_phases:
        print("stages:")
        phases(run_dir)

    print("end to end:")
    with Timer("framebench score (in-process)") as inproc:
        api.write_report(api.score([run_dir]), out_dir / "inproc")
    with Timer("framebench score (subprocess)") as sub:
        subprocess.run([sys.executable, "-m", "framebench", "score", str(run_dir),
                        "--out", str(out_dir / "subproc")], check=True, capture_output=True)
    print(f"in-process: {inproc.wall:.2f} s = {n / inproc.wall:,.0f} records/s; "
          f"subprocess: {sub.wall:.2f} s = {n / sub.wall:,.0f} records/s (goal <= 15 s)")
    print(f"framebench score (subprocess): wall {sub.wall:.2f} s, peak RSS {peak_child_rss_mib():,.0f} MiB")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.keep:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
