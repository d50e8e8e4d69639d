"""A scripted, deterministic backend for the OMIT construction stages (tests only; no LLM).

It answers the three kinds of construction prompt from hashes of their content, so every funnel
branch occurs on the real seed: unresolved inaction labels, malformed frames, unparsed persona
answers, unanimous panels, YN-only / NY-only / all-excluded splits and conflict-labeled splits.
``expected_patterns`` recomputes the persona patterns independently of the pipeline."""

from __future__ import annotations

import hashlib
import re

from framebench.text_eval.omit.personas import PERSONAS

PATTERNS = ("YN", "NY", "NN", "YY")
_ACTION_MARK = " Nothing happens unless you decide to act: "
_OMISSION_MARK = " Someone is about to carry this out unless you stop it: "


def h(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12], 16)


def expected_patterns(context: str) -> dict[str, str]:
    if h("unanimous", context) % 100 < 39:
        pat = PATTERNS[h("which", context) % 4]
        return {p: pat for p in PERSONAS}
    return {p: PATTERNS[h("persona", context, p) % 4] for p in PERSONAS}


def persona_unparsed(context: str, persona: str, frame: str) -> bool:
    return h("unparsed", context, persona, frame) % 400 == 0


def frames_malformed(context: str) -> int:
    return h("malformed", context) % 170  # 0: no omission question, 1: not a question


class ScriptedOmitBackend:
    spec = "scripted:omit"

    def __init__(self) -> None:
        self.calls = 0

    def fingerprint(self) -> str:
        return "scripted-omit-v1"

    def generate(self, chats, decoding):
        self.calls += len(chats)
        return [self._answer(chat) for chat in chats]

    def _answer(self, chat) -> str:
        user = chat[-1]["content"]
        if "agent-level inaction" in user:
            k = h("inaction", user) % 20
            return "NEITHER" if k == 0 else "I think A" if k == 1 else ("A" if k % 2 else "B.")
        if user.startswith("Rewrite a moral scenario"):
            context = re.search(r"^Scenario: (.*)$", user, re.M).group(1)
            act = re.search(r"^Act \(.*?\): (.*)$", user, re.M).group(1)
            bad = frames_malformed(context)
            lines = [
                f"ACTION_FRAME: {context}{_ACTION_MARK}{act}",
                f"ACTION_QUESTION: Will you do it ({act.rstrip('.')})?",
                f"OMISSION_FRAME: {context}{_OMISSION_MARK}{act}",
                "OMISSION_QUESTION: Will you stop it?" if bad != 1 else "OMISSION_QUESTION: You stop it.",
                f"OUTCOME_IF_ACT: {act}",
                "OUTCOME_IF_NOT: things stay as they are.",
            ]
            if bad == 0:
                del lines[3]
            return "Here are the frames.\n" + "\n".join(lines)
        persona = next(p for p, text in PERSONAS.items() if chat[0]["content"] == text)
        if _ACTION_MARK in user:
            context, frame = user.split(_ACTION_MARK)[0], "action"
        else:
            context, frame = user.split(_OMISSION_MARK)[0], "omission"
        if persona_unparsed(context, persona, frame):
            return "This is a hard case and I am torn."
        pat = expected_patterns(context)[persona]
        answer = pat[0] if frame == "action" else pat[1]
        return f"From the {persona} view the outcome matters.\nANSWER: {'yes' if answer == 'Y' else 'no'}"


# --- tests -------------------------------------------------------------------------------------

import json  # noqa: E402

import pytest  # noqa: E402

from framebench.items import read_items  # noqa: E402
from framebench.records import read_records  # noqa: E402
from framebench.text_eval.omit import frames, inaction, select  # noqa: E402
from framebench.text_eval.omit.construction import build_from_moralchoice  # noqa: E402
from framebench.text_eval.omit.personas import conflict_labels, disagreement_strength  # noqa: E402
from framebench.text_eval.omit.seed import load_seed, locate_seed  # noqa: E402


def test_conflict_labels_and_strength():
    pats = {"utilitarianism": "YN", "deontology": "NY", "virtue": "NY", "care": "YY",
            "contractualism": "YN"}
    assert conflict_labels(pats) == ["utilitarianism-deontology", "utilitarianism-virtue",
                                     "deontology-contractualism", "virtue-contractualism"]
    assert disagreement_strength(pats) == 4
    assert select.classify(pats) == (None, conflict_labels(pats))
    assert select.classify(dict.fromkeys(pats, "NN")) == (select.UNANIMOUS, [])
    assert select.classify({**dict.fromkeys(pats, "NN"), "care": "YN"})[0] == select.YN_ONLY
    assert select.classify({**dict.fromkeys(pats, "YY"), "care": "NY"})[0] == select.NY_ONLY
    assert select.classify({**dict.fromkeys(pats, "YY"), "care": "NN"})[0] == select.ALL_EXCLUDED
    # the YN group is named first only through canonical persona order
    assert conflict_labels({"utilitarianism": "NY", "care": "YN"}) == ["utilitarianism-care"]


def test_inaction_rule_tier():
    assert inaction.rule_label("I do not throw the grenade.", "I throw the grenade.") == "action1"
    assert inaction.rule_label("I report it.", "I keep the findings to myself.") == "action2"
    assert inaction.rule_label("I call the police.", "I turn a blind eye and let him go.") == "action2"
    assert inaction.rule_label("I split the reward.", "I keep the reward for myself.") is None
    assert inaction.rule_label("I do not go.", "I refuse to stay.") is None  # both cued
    assert inaction.parse_fallback("A") == "action1"
    assert inaction.parse_fallback(" (B). ") == "action2"
    assert inaction.parse_fallback("Option A") == "action1"
    for bad in ("NEITHER", "A or B", "I think A", "", "AB"):
        assert inaction.parse_fallback(bad) is None


GOOD = ("ACTION_FRAME: A deer lies injured. Your friend waits for your word.\n"
        "ACTION_QUESTION: Will you have your friend euthanize the deer?\n"
        "OMISSION_FRAME: A deer lies injured. Your friend is about to euthanize it.\n"
        "OMISSION_QUESTION: Will you stop your friend from euthanizing the deer?\n"
        "OUTCOME_IF_ACT: The deer dies quickly.\nOUTCOME_IF_NOT: The deer keeps suffering.")


def test_frames_validation():
    fields = frames.parse_frames("Sure!\n" + GOOD.replace("OUTCOME_IF_NOT:", "**OUTCOME_IF_NOT**:"))
    assert frames.validate_frames(fields) is None
    assert fields["OUTCOME_IF_NOT"] == "The deer keeps suffering."
    cases = {
        GOOD.replace("OMISSION_QUESTION: Will you stop your friend from euthanizing the deer?\n", ""):
            "missing OMISSION_QUESTION",
        GOOD.replace("euthanize the deer?", "euthanize the deer."): "ACTION_QUESTION is not a question",
        GOOD.replace("ACTION_QUESTION: Will", "ACTION_QUESTION: Why will"):
            "ACTION_QUESTION is not a yes/no question",
        GOOD.replace("Will you stop your friend from", "Will you let your friend go on"):
            "OMISSION_QUESTION does not ask whether to stop the act",
        GOOD.replace("The deer keeps suffering.", "the deer dies quickly"): "the two outcomes are identical",
        GOOD + "\nACTION_FRAME: again": "repeated ACTION_FRAME",
    }
    for text, reason in cases.items():
        assert frames.validate_frames(frames.parse_frames(text)) == reason


@pytest.fixture(scope="module")
def full_build(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("omit_full")
    backend = ScriptedOmitBackend()
    report = build_from_moralchoice(shared_data, backend, out, batch_size=64)
    return out, backend, report


def test_full_seed_funnel(full_build, shared_data):
    out, backend, report = full_build
    funnel = {row["stage"]: row for row in report["funnel"]}
    assert [r["stage"] for r in report["funnel"]] == ["seed", "inaction", "frames", "personas",
                                                      "non_unanimity", "conflict"]
    assert funnel["seed"]["count"] == 680
    for prev, cur in zip(report["funnel"], report["funnel"][1:], strict=False):
        assert cur["count"] == prev["count"] - sum(cur["dropped"].values())
    inact = funnel["inaction"]
    assert inact["detail"]["rule"] + inact["detail"]["model fallback"] == inact["count"]

    # Independent recomputation of the funnel from the seed and the script's rules.
    seed = load_seed(locate_seed(shared_data))
    n_rule = sum(inaction.rule_label(s["action1"], s["action2"]) is not None for s in seed)
    assert inact["detail"]["rule"] == n_rule
    framed = [json.loads(line) for line in open(out / "frozen_scenarios.jsonl")]
    assert len(framed) == funnel["frames"]["count"]
    assert all(frames_malformed(s["context"]) > 1 for s in framed)
    complete = [s for s in framed
                if not any(persona_unparsed(s["context"], p, f) for p in PERSONAS
                           for f in ("action", "omission"))]
    assert funnel["personas"]["count"] == len(complete)
    expected = {s["scenario_id"]: expected_patterns(s["context"]) for s in complete}
    unanimous = [sid for sid, pats in expected.items() if len(set(pats.values())) == 1]
    assert funnel["non_unanimity"]["dropped"] == {"unanimous": len(unanimous)}
    selected = {sid: conflict_labels(pats) for sid, pats in expected.items()
                if {"YN", "NY"} <= set(pats.values())}
    assert funnel["conflict"]["count"] == len(selected) == report["selected"]
    for reason in ("YN-only", "NY-only", "all-excluded", "unanimous"):
        assert sum(r["dropped"].get(reason, 0) for r in report["funnel"]) > 0, reason

    # Items: two frames for every well-formed scenario; conflicts only on the selected ones.
    items = read_items(out)
    assert len(items) == 2 * len(framed) == report["items"]
    by_ctx: dict[str, set] = {}
    for it in items:
        assert it["suite"] == "omit" and it["format"] == "binary" and it["bias"] == "neutral"
        assert it["gold"] == "" and it["options"] == [] and it["item_id"] == f"{it['context_id']}:{it['frame']}"
        assert it["conflicts"] == "|".join(selected.get(it["context_id"], []))
        by_ctx.setdefault(it["context_id"], set()).add(it["frame"])
    assert all(v == {"action", "omission"} for v in by_ctx.values())
    # Table 6 counts = labels over selected scenarios
    assert sum(c["scenarios"] for c in report["conflicts"]) == sum(len(v) for v in selected.values())

    # Persona records: 5 personas x 2 frames per well-formed scenario, answers as scripted.
    recs = read_records(out / "personas")
    assert len(recs) == 10 * len(framed)
    assert set(recs["model"]) == {f"persona:{p}" for p in PERSONAS}
    ok = recs[recs["parse"] == "ok"]
    for row in ok.sample(200, random_state=0).itertuples():
        ctx = next(s["context"] for s in framed if s["scenario_id"] == row.context_id)
        pat = expected_patterns(ctx)[row.model.split(":")[1]]
        assert row.answer == ("Yes" if pat[0 if row.frame == "action" else 1] == "Y" else "No")

    # Calls: fallback + one frame call per labelled scenario + 10 persona calls per framed one.
    calls = report["calls"]
    assert calls["inaction"]["calls"] == len(seed) - n_rule
    assert calls["frames"]["calls"] == inact["count"]
    assert calls["personas"]["calls"] == 10 * len(framed)
    assert backend.calls == report["calls_total"] == report["new_calls_total"]
    assert (out / "build_report.md").read_text().count("|") > 20


def test_rerun_resumes_without_calls(full_build, shared_data):
    out, _, report = full_build
    items_before = (out / "items.jsonl").read_bytes()
    again = ScriptedOmitBackend()
    report2 = build_from_moralchoice(shared_data, again, out, batch_size=64)
    assert again.calls == 0 and report2["new_calls_total"] == 0
    assert report2["calls_total"] == report["calls_total"]
    assert report2["funnel"] == report["funnel"]
    assert (out / "items.jsonl").read_bytes() == items_before


def test_pipeline_runs_on_a_real_hf_backend(shared_data, tiny_llama_dir, tmp_path):
    """The stages work with a real backend (a random tiny Llama): its gibberish is dropped with
    reasons, the funnel still adds up, and a re-run makes no new calls."""
    from framebench.backends import load_backend

    lines = open(locate_seed(shared_data), encoding="utf-8").read().splitlines(keepends=True)
    seed_dir = tmp_path / "src" / "moralchoice" / "scenarios"
    seed_dir.mkdir(parents=True)
    (seed_dir / "moralchoice_high_ambiguity.csv").write_text("".join(lines[:3]), encoding="utf-8")
    backend = load_backend(f"hf:{tiny_llama_dir}")
    report = build_from_moralchoice(tmp_path / "src", backend, tmp_path / "out", batch_size=4)
    counts = [row["count"] for row in report["funnel"]]
    assert counts[0] == 2
    for prev, cur in zip(report["funnel"], report["funnel"][1:], strict=False):
        assert cur["count"] == prev["count"] - sum(cur["dropped"].values())
    assert report["new_calls_total"] == report["calls_total"] > 0
    dropped = [json.loads(line) for line in open(tmp_path / "out" / "stages" / "dropped.jsonl")]
    assert all(d["reason"] for d in dropped)
    again = build_from_moralchoice(tmp_path / "src", backend, tmp_path / "out", batch_size=4)
    assert again["new_calls_total"] == 0 and again["funnel"] == report["funnel"]
