"""Evaluation-semantics validation at episode load: one line naming file, episode, proposition and
field, exit code 2, before any model or output is touched."""

import json

import pytest

from framebench.cli import main
from tests.partnr_quirk_helpers import SPOONS, clustered, episode, on_top

VALID_PROPS = [on_top(SPOONS[:3], ["table_1"], number=2), clustered([["spoon_1"], ["spoon_4"]], [1, 1])]
TERMINAL = {"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": [0, 1], "n_propositions": 2}}


def base(eid="ep_7"):
    return episode(VALID_PROPS, [TERMINAL], eid=eid)


def set_number(n):
    ep = base()
    ep["evaluation_propositions"][0]["args"]["number"] = n
    return ep


def cases():
    def edit(fn):
        ep = base()
        fn(ep)
        return ep

    return {
        "dependency_mode": (edit(lambda ep: ep["evaluation_proposition_dependencies"].append(
            {"proposition_indices": [1], "depends_on": [0], "relation_type": "after_satisfied",
             "dependency_mode": "either"})),
            "evaluation_proposition_dependencies[0].dependency_mode: expected all or any, got 'either'"),
        "unknown handle": (edit(lambda ep: ep["evaluation_propositions"][0]["args"]["receptacle_handles"]
                                .append("table_9")),
                           "evaluation_propositions[0].args.receptacle_handles: unknown furniture 'table_9'"),
        "missing handle arg": (edit(lambda ep: ep["evaluation_propositions"][0]["args"].pop("receptacle_handles")),
                               "evaluation_propositions[0].args.receptacle_handles: expected a non-empty list"),
        "clustered without number": (edit(lambda ep: ep["evaluation_propositions"][1]["args"].pop("number")),
                                     "evaluation_propositions[1].args.number: is_clustered needs a list of 2"),
        "number 0 over several handles": (set_number(0), "evaluation_propositions[0].args.number: expected at least 1"),
        "number too large": (set_number(4), "evaluation_propositions[0].args.number: 4 is more than the 3 handle(s)"),
        "number 1e30 (int)": (set_number(10**30), f"args.number: {10**30} is more than the 3 handle(s)"),
        "number 1e30 (float)": (set_number(1e30), "args.number: expected a whole number, got 1e+30"),
        "cluster count too large": (edit(lambda ep: ep["evaluation_propositions"][1]["args"].update(number=[1, 2])),
                                    "evaluation_propositions[1].args.number[1]: 2 is more than the 1 handle(s)"),
        "constraint index beyond n_propositions": (
            edit(lambda ep: ep["evaluation_constraints"][0]["args"].update(proposition_indices=[0, 2])),
            "evaluation_constraints[0].args.proposition_indices: proposition index 2 is out of range"),
        "constraint index beyond its own n_propositions": (
            edit(lambda ep: ep["evaluation_constraints"][0]["args"].update(n_propositions=1)),
            "evaluation_constraints[0].args.proposition_indices: proposition index 1 is out of range "
            "(n_propositions = 1)"),
        "arg name not an argument": (
            edit(lambda ep: ep["evaluation_constraints"].append(
                {"type": "SameArgConstraint", "args": {"proposition_indices": [0, 1],
                                                       "arg_names": ["receptacle_handles", "*args_2"]}})),
            "evaluation_constraints[1].args.arg_names: '*args_2' is not an argument of proposition 1"),
    }


CASES = cases()


@pytest.mark.parametrize("name", list(CASES))
def test_bad_episode_exits_2_with_one_line(name, tmp_path, capsys):
    ep, expected = CASES[name]
    path = tmp_path / "episodes.json"
    path.write_text(json.dumps({"episodes": [base("ep_6"), ep]}))
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(["embodied", "--planner", "oracle", "--episodes", str(path), "--out", str(out)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert str(path) in err and "episode 1 (ep_7)" in err and expected in err, err
    assert not out.exists()


@pytest.mark.parametrize("compat", [False, True])
def test_run_json_and_report_name_the_evaluation_mode(compat, tmp_path):
    path = tmp_path / "episodes.json"
    path.write_text(json.dumps({"episodes": [base()]}))
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(["embodied", "--planner", "oracle", "--episodes", str(path), "--out", str(run),
              *(["--partnr-compat"] if compat else [])])
    assert exit_info.value.code in (0, None)
    mode = "partnr-compat" if compat else "intended"
    info = json.loads((run / "run.json").read_text())
    assert info["evaluation"] == mode and info["evaluation_errors"] == 0
    with pytest.raises(SystemExit) as exit_info:
        main(["score", str(run), "--out", str(tmp_path / "report")])
    assert exit_info.value.code in (0, None)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["meta"]["embodied_evaluation"] == {"oracle": [mode]}
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Embodied: evaluation semantics" in markdown and f"| oracle | {mode} |" in markdown
