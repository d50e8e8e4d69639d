"""The runner and planners: records, logs, resume, script and LLM planners, bad input."""

import gzip
import json
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.embodied import runner
from framebench.embodied.episodes import read_episodes
from framebench.embodied.oracle import oracle_plan
from framebench.embodied.planners import LLMPlanner
from framebench.embodied.runner import run_framing
from framebench.records import read_records

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "robotics" / "episodes.json.gz"


def cli(args):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return exit_info.value.code or 0


class FakeBackend:
    """A scripted stand-in for a model backend: answers from a list, then repeats the last answer."""

    spec = "fake:planner"

    def __init__(self, answers):
        self.answers, self.chats, self.batches = list(answers), [], []

    def fingerprint(self):
        return "fake-1"

    def generate(self, chats, decoding):
        self.batches.append(len(chats))
        out = []
        for chat in chats:  # one generation per decision
            self.chats.append(chat)
            out.append(self.answers.pop(0) if len(self.answers) > 1 else self.answers[0])
        return out


@pytest.fixture(scope="module")
def episodes():
    return read_episodes(DEMO)


def test_oracle_run_writes_records_logs_and_prompts(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(DEMO), "--out", str(out)]) == 0
    df = read_records(out)
    n = len(read_episodes(DEMO))
    assert len(df) == 7 * n
    assert set(df.suite) == {"embodied"} and set(df.task) == {"robotics"} and set(df.format) == {"episode"}
    assert df.success.all() and (df.percent_complete == 1.0).all() and df.correct.all()
    assert (df.sim_steps > 0).all()
    assert df.replans.isna().all()  # the oracle makes no LLM calls: no replans, not its action count
    row = df[df.item_id.str.endswith("__incorrect_global")].iloc[0]
    assert row.bias == "incorrect" and row.level == "global" and row.slot == "incorrect/global"
    assert row.item_id == f"{row.context_id}__incorrect_global" and row.output == "Action: Done[]"
    neutral = df[df.bias == "neutral"].iloc[0]
    assert neutral.item_id == f"{neutral.context_id}__neutral" and neutral.level == ""
    prompts = [json.loads(line) for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert {p["item_id"] for p in prompts} == set(df.item_id)
    assert any(p["prompt"].startswith("For ") for p in prompts)
    log = json.loads((out / "episodes" / f"{row.item_id}.json").read_text())
    assert log["instruction"].startswith("To ") and log["steps"][-1]["action"] == "Done[]"
    assert all("state_change" in s for s in log["steps"][:-1])
    run_info = json.loads((out / "run.json").read_text())
    assert run_info["model"] == "oracle" and run_info["decoding"]["replan_cap"] == 25


def test_resume_skips_finished_variants(tmp_path, monkeypatch):
    out = tmp_path / "run"
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(DEMO), "--out", str(out)]) == 0
    first = read_records(out)

    def boom(*args, **kwargs):
        raise AssertionError("a finished variant was run again")

    monkeypatch.setattr(runner, "run_framings", boom)
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(DEMO), "--out", str(out)]) == 0
    again = read_records(out)
    cols = ["item_id", "percent_complete", "success", "sim_steps", "replans", "output"]
    assert first[cols].equals(again[cols])


def test_script_planner(tmp_path, episodes):
    ep = episodes[0]
    script = tmp_path / "plan.json"
    script.write_text(json.dumps({ep["episode_id"]: oracle_plan(ep)[:-1]}))
    out = tmp_path / "run"
    assert cli(["embodied", "--planner", f"script:{script}", "--episodes", str(DEMO), "--out", str(out)]) == 0
    df = read_records(out)
    assert df[df.context_id == ep["episode_id"]].success.all()
    assert not df[df.context_id != ep["episode_id"]].success.any()  # no script: Done at once


def test_llm_planner_loop_parses_strictly_and_counts_replans(episodes):
    ep = episodes[0]
    plan = oracle_plan(ep)
    answers = ["I am not sure what to do.", "Thought: go\nAction: Fly[home]"]
    answers += [f"Thought: next step\nAction: {a}" for a in plan]
    backend = FakeBackend(answers)
    fields, log = run_framing(ep, "correct", "root", LLMPlanner(backend))
    assert fields["success"] and fields["replans"] == len(plan) + 2  # two bad answers, every action, Done
    assert fields["output"].endswith("Done[]")
    second_prompt = backend.chats[1]
    assert second_prompt[1]["content"].startswith("Task: For ")
    assert second_prompt[-1]["content"].startswith("Result: No action found")
    assert backend.chats[2][-1]["content"].startswith('Result: Tool "Fly" not found')
    assert log["steps"][0]["prompt"][0]["role"] == "system"


def test_variants_run_in_lockstep_batches(episodes):
    from framebench.embodied.framing import FRAMINGS
    from framebench.embodied.runner import run_framings

    class PerVariant(FakeBackend):
        """Answers by the framed task: neutral says Done at once, the others wait twice first."""

        def generate(self, chats, decoding):
            self.batches.append(len(chats))
            return ["Action: Done[]" if chat[1]["content"].startswith("Task: Move") or len(chat) > 5
                    else "Action: Wait[]" for chat in chats]

    backend = PerVariant([])
    results = run_framings(episodes[0], FRAMINGS, LLMPlanner(backend))
    assert backend.batches == [7, 6, 6]  # neutral finishes after the first round
    assert [f["replans"] for f, _ in results] == [1, 3, 3, 3, 3, 3, 3]
    assert [f["sim_steps"] for f, _ in results] == [0] + [1200] * 6


def test_replan_cap_ends_the_episode(episodes):
    backend = FakeBackend(["Thought: wait\nAction: Wait[]"])
    fields, log = run_framing(episodes[0], "neutral", "", LLMPlanner(backend), replan_cap=5)
    # calls 1..5 act; call 6 (= cap + 1) ends the episode without acting, as PARTNR's threshold does
    assert fields["replans"] == 6 and fields["sim_steps"] == 5 * 600 and log["end"] == "replan_cap"
    assert not fields["success"]


def test_sim_step_limit_ends_the_episode(episodes):
    backend = FakeBackend(["Action: Wait[]"])
    fields, log = run_framing(episodes[0], "neutral", "", LLMPlanner(backend), replan_cap=100)
    assert log["end"] == "sim_step_limit" and fields["sim_steps"] == 34 * 600 and fields["replans"] == 34


def test_bad_inputs_exit_2_with_one_line(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(missing), "--out", str(tmp_path / "r")]) == 2
    assert "nope.json: no such episode file" in capsys.readouterr().err
    data = json.loads(gzip.decompress(DEMO.read_bytes()))
    del data["episodes"][1]["info"]["purposes"]["incorrect"]["goal"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(bad), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert "episode 1" in err and "info.purposes.incorrect.goal" in err and len(err.splitlines()) == 1
    data["episodes"][1]["info"]["purposes"]["incorrect"]["goal"] = "g"
    data["episodes"][0]["evaluation_propositions"][0]["args"]["object_handles"] = ["ghost_9"]
    bad.write_text(json.dumps(data))
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(bad), "--out", str(tmp_path / "r")]) == 2
    assert "unknown object 'ghost_9'" in capsys.readouterr().err
    script = tmp_path / "s.json"
    script.write_text("{not json")
    assert cli(["embodied", "--planner", f"script:{script}", "--episodes", str(DEMO),
                "--out", str(tmp_path / "r2")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "r" / "records.parquet").exists()


def test_habitat_simulator_is_called_lazily(tmp_path, monkeypatch):
    import framebench.partnr_adapters.habitat_simulator as hb

    seen = {}
    monkeypatch.setattr(hb, "run_habitat", lambda **kw: seen.update(kw))
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(DEMO), "--out", str(tmp_path / "h"),
                "--simulator", "habitat", "--replan-cap", "7"]) == 0
    assert seen["planner"] == "oracle" and seen["episodes"] == DEMO and seen["replanning_threshold"] == 7
    assert cli(["embodied", "--planner", "oracle", "--episodes", str(DEMO), "--out", str(tmp_path / "h"),
                "--simulator", "mujoco"]) == 2


def test_episode_keys_equal_result_key_of_the_full_prompt():
    """episode_keys serialises the episode once for all 7 variants; the keys must stay those of
    result_key over {"instruction", "episode"}, or resumed runs would miss their stored results."""
    from framebench.store import result_key

    episodes = read_episodes(DEMO)
    odd = json.loads(json.dumps(episodes[0]))
    odd["instruction"] = "Bring the café mug \u2014 \"quoted\" \\ and \u2028 too"
    for episode in [*episodes, odd]:
        keys, framed = runner.episode_keys(episode, "fp-1", {"replan_cap": 25, "z": [1, None]})
        assert len(keys) == 7
        for iid, instruction in framed.items():
            prompt = {"instruction": instruction, "episode": episode}
            assert keys[iid] == result_key("fp-1", iid, prompt, {"replan_cap": 25, "z": [1, None]})


def test_a_run_records_its_identity_max_new_tokens_included(tmp_path):
    """The front end's identity (the driver stores it and checks it on the next run): the planner
    as asked, the episode file's sha256 and every setting, max_new_tokens included, so a rerun
    through the simulator engine with another max_new_tokens is another run."""
    from framebench.api import run_embodied
    from framebench.errors import UserError
    from framebench.files import file_sha256

    runner.run("oracle", DEMO, tmp_path / "r", replan_cap=7, limit=1, max_new_tokens=32)
    stored = json.loads((tmp_path / "r" / "run.json").read_text())["identity"]
    assert stored == {"model": "oracle", "dataset_hash": file_sha256(DEMO), "selection": {
        "replan_cap": 7, "partnr_compat": False, "limit": 1, "max_new_tokens": 32}}
    run_embodied("oracle", DEMO, tmp_path / "r", replan_cap=7, limit=1, max_new_tokens=32)  # the same run
    with pytest.raises(UserError, match="selection.max_new_tokens 32 -> 64"):
        run_embodied("oracle", DEMO, tmp_path / "r", replan_cap=7, limit=1, max_new_tokens=64)
