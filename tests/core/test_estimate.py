"""``framebench estimate``: requests, tokens, prefix sharing, time and cost before a run, checked by
hand on small cases and against a real run's counts on the demo set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from framebench.backends.prefix_trie import unique_tokens
from framebench.cli import main
from framebench.estimate import Estimate, estimate, select_jobs

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def test_trie_size_counts_each_shared_prefix_once():
    # "abcd", "abce", "abx", "z": a-b-c-d, e under c, x under b, z: 4 + 1 + 1 + 1 = 7 nodes
    assert unique_tokens([list(b"abcd"), list(b"abce"), list(b"abx"), list(b"z")]) == 7
    assert unique_tokens([list(b"same"), list(b"same")]) == 4
    assert unique_tokens([]) == 0


def test_cost_and_time_arithmetic():
    est = Estimate("m", items=10, requests=10, generating=10, input_tokens=2_000_000, uncached_input_tokens=500_000,
                   max_output_tokens=80, tokens_from="x", rate=4.0, prices=(0.5, 2.0))
    assert est.seconds == 2.5  # 10 requests at 4 per second
    assert est.cost(est.input_tokens, est.max_output_tokens) == pytest.approx(2.0 * 0.5 + 80 * 2.0 / 1e6)


def test_baseline_estimate_approximates_and_counts_requests():
    jobs, items = select_jobs(DEMO / "framingqa", None, None, None, [], "generate")
    est = estimate("baseline:always-yes", jobs, items)
    assert est.items == items == est.requests == len(jobs)
    chars = sum(len("\n".join(m["content"] for m in j.chat)) for j in jobs)
    assert est.input_tokens == sum(-(-len("\n".join(m["content"] for m in j.chat)) // 4) for j in jobs)
    assert est.input_tokens >= chars / 4
    assert 0 < est.uncached_input_tokens < est.input_tokens  # the contexts' shared text counts once
    assert est.max_output_tokens == sum(j.decoding.max_new_tokens for j in jobs)
    assert "approximation" in est.tokens_from and est.seconds is None and est.sample is None


def test_constrained_omit_counts_the_reasoning_requests():
    jobs, items = select_jobs(DEMO / "omit", None, None, None, ["M0", "M1"], "constrained")
    est = estimate("baseline:always-no", jobs, items)
    m1 = sum(1 for j in jobs if j.condition.name == "M1")
    assert m1 and est.requests == len(jobs) + m1  # M1 reasons first: a generation, then a score
    assert est.generating == m1


def test_cli_remote_api_sends_nothing_and_prices_need_both(tmp_path, capsys):
    code, out, _ = _run(["estimate", "--data", str(DEMO / "framingqa"), "--model", "openai:some-model",
                         "--price-in", "0.15", "--price-out", "0.60"], capsys)
    assert code == 0 and "unknown: pass --sample N" in out and "$" in out  # no sample by default
    code, _, err = _run(["estimate", "--data", str(DEMO / "framingqa"), "--price-in", "1"], capsys)
    assert code == 2 and "--price-out go together" in err
    code, _, err = _run(["estimate", "--data", str(DEMO / "framingqa"), "--model", "baseline:random",
                         "--conditions", "M1"], capsys)
    assert code == 2 and "no OMIT items" in err


@pytest.mark.slow  # SmolLM2: a timed sample, then the real run of the same items
def test_estimate_against_the_real_run(tmp_path, capsys, smollm2_dir):
    from transformers import AutoTokenizer

    from framebench.records import read_records
    from framebench.run_folder import read_chats, read_prompts

    args = ["--data", str(DEMO / "framingqa"), "--model", "smollm2", "--tasks", "law_issue_spotting"]
    jobs, items = select_jobs(DEMO / "framingqa", "law_issue_spotting", None, None, [], "generate")
    est = estimate("smollm2", jobs, items, sample=64)
    code, out, _ = _run(["text", *args, "--out", str(tmp_path / "run"), "--quiet"], capsys)
    assert code == 0
    seconds = float(re.search(r"in ([\d.]+)s ->", out).group(1))

    tok = AutoTokenizer.from_pretrained(smollm2_dir)  # an independent count: the template, tokenized
    turns = read_chats(tmp_path / "run")  # a prompt without turns was sent as that one user turn
    chats = [turns.get(i, [{"role": "user", "content": p}]) for i, p in read_prompts(tmp_path / "run").items()]
    assert len(chats) == items
    actual_in = sum(len(tok.apply_chat_template(chat, tokenize=True, add_generation_prompt=True,
                                                return_dict=True)["input_ids"]) for chat in chats)
    assert est.input_tokens == actual_in
    outputs = read_records(tmp_path / "run")["output"]
    actual_out = sum(len(tok(text, add_special_tokens=False)["input_ids"]) for text in outputs)
    assert actual_out <= est.max_output_tokens
    assert actual_out / 2 <= est.output_tokens <= actual_out * 2  # the sample's mean within a factor of 2
    assert seconds / 3 <= est.seconds <= seconds * 3  # docs: time within a factor of 3


def test_omit_dry_run_counts_the_calls_the_build_makes(tmp_path, capsys, shared_data):
    import json

    code, out, _ = _run(["build", "omit", "--source", str(shared_data), "--model", "baseline:always-yes",
                         "--out", str(tmp_path / "dry"), "--dry-run"], capsys)
    assert code == 0 and not (tmp_path / "dry").exists() and "nothing was called or written" in out
    planned = {m.group(1): (m.group(2), int(m.group(3).replace(",", "")))
               for m in re.finditer(r"^(\w+): (exactly|at most) ([\d,]+) calls", out, re.M)}
    assert set(planned) == {"inaction", "frames", "personas"}
    # the real build (always-yes frames no scenario, so it stops at 0 items: exit 2, calls recorded)
    assert _run(["build", "omit", "--source", str(shared_data), "--model", "baseline:always-yes",
                 "--out", str(tmp_path / "real")], capsys)[0] == 2
    calls = json.loads((tmp_path / "real" / "build_report.json").read_text())["calls"]
    assert planned["inaction"] == ("exactly", calls["inaction"]["calls"])
    assert calls["frames"]["calls"] <= planned["frames"][1] and calls.get("personas", {}).get("calls", 0) <= planned["personas"][1]


def test_omit_dry_run_on_authored_scenarios_writes_nothing(tmp_path, capsys):
    """The demo's authored scenarios make no model calls: --dry-run says so and builds nothing
    (without --dry-run the same command writes the items)."""
    code, out, _ = _run(["build", "omit", "--source", str(DEMO / "omit"), "--out", str(tmp_path / "dry"),
                         "--dry-run"], capsys)
    assert code == 0 and "no model calls" in out and not (tmp_path / "dry").exists()
    with pytest.raises(SystemExit) as exc:
        main(["build", "omit", "--source", str(DEMO / "omit"), "--out", str(tmp_path / "real")])
    assert exc.value.code == 0 and (tmp_path / "real" / "items.jsonl").is_file()


@pytest.mark.parametrize("args, says", [
    (["--price-in", "inf", "--price-out", "1"], "--price-in: 'inf' is not a number"),
    (["--rate", "nan"], "--rate: 'nan' is not a number"),
    (["--sample", "10001"], "--sample: 10001 is outside the allowed range"),
    (["--model", "openai:m", "-M", "concurrency=0"], "'concurrency'"),
])
def test_estimate_numbers_take_the_shared_rules(args, says, capsys):
    code, _, err = _run(["estimate", "--data", str(DEMO / "omit"), *args], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and says in err, err


def test_reference_times_scale_with_the_requests_and_say_their_basis():
    """docs/speed.md's full-build rows: seconds a request times the requests, projections marked."""
    from framebench.estimate import Estimate, lines

    rows = dict(lines(Estimate("smollm2", 50, 100, 100, 1000, 500, 800, "the model's own tokenizer")))
    assert rows["time for SmolLM2-135M (fp32) on a 2-core CPU"].startswith("0 min 18 s (0.18 s a request; measured")
    assert rows["time for 8B (bf16) on one H200"].startswith("0 min 02 s (0.024 s a request; projected")
    full = dict(lines(Estimate("smollm2", 52267, 52267, 52267, 0, 0, 0, "x")))
    assert full["time for 1.7B (bf16) on one H200"].startswith("19 min 15 s")  # 52,267 x 0.0221 s = 1,155 s
