"""Declared capabilities: each built-in engine's ``Engine.capabilities`` match the protocols its
backend implements, and a request an engine cannot serve fails in one line naming the engine and
what it lacks, before any model loads."""

from __future__ import annotations

import pytest

from framebench import registry
from framebench.backends.base import (
    PROTOCOLS,
    Generates,
    ScoresAnswers,
    ScoresContinuations,
    require,
)
from framebench.errors import UserError
from framebench.registry import Engine, require_capability


def _backend_classes():
    from framebench.backends.baseline import BaselineBackend
    from framebench.backends.hf import HFBackend
    from framebench.backends.openai_api import OpenAIBackend
    from framebench.backends.vllm_engine import VLLMBackend

    return {"hf": HFBackend, "smollm2": HFBackend, "vllm": VLLMBackend, "openai": OpenAIBackend,
            "baseline": BaselineBackend}


def _implements(cls, protocol) -> bool:
    methods = [m for m in protocol.__dict__ if not m.startswith("_") and callable(protocol.__dict__[m])]
    return all(callable(getattr(cls, m, None)) for m in methods)


def test_declared_capabilities_equal_the_implemented_protocols():
    engines = registry.engines_of("model")
    for name, cls in _backend_classes().items():
        implemented = {cap for cap, proto in PROTOCOLS.items() if _implements(cls, proto)}
        assert set(engines[name].capabilities) == implemented, name


def test_protocols_are_checked_on_built_backends():
    from framebench.backends import load_backend

    baseline = load_backend("baseline:always-yes")
    assert isinstance(baseline, Generates) and isinstance(baseline, ScoresAnswers)
    assert not isinstance(baseline, ScoresContinuations)
    with pytest.raises(UserError) as err:
        require(baseline, "score_continuations", "--planner choice:baseline:always-yes")
    assert str(err.value) == ("--planner choice:baseline:always-yes: backend 'baseline:always-yes' "
                              "cannot score continuations")


def _refusing_engine(monkeypatch, loads: list) -> None:
    """A plugin-style engine that only generates; loading it is recorded (it must not happen)."""
    def load(arg, **options):
        loads.append(arg)
        raise AssertionError("the model was loaded")

    table = dict(registry.engines())
    table["genonly"] = Engine("genonly", "model", load, arg="optional", capabilities=frozenset({"generate"}))
    monkeypatch.setattr(registry, "engines", lambda: table)


def test_constrained_on_an_engine_that_cannot_score_fails_before_loading(monkeypatch, tmp_path, capsys):
    from text_helpers import framingqa_items, write_items

    from framebench.cli import main

    loads: list = []
    _refusing_engine(monkeypatch, loads)
    data = write_items(tmp_path / "data", framingqa_items(n_contexts=1, per_context=2))
    with pytest.raises(SystemExit) as exc:
        main(["text", "--model", "genonly:x", "--data", str(data), "--out", str(tmp_path / "o"),
              "--answer", "constrained", "--quiet"])
    assert exc.value.code == 2 and loads == []
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--answer constrained: engine 'genonly' cannot score allowed answers" in err
    assert "hf:" in err and not (tmp_path / "o").exists()


def test_choice_planner_on_an_engine_that_cannot_score_fails_before_loading(monkeypatch):
    loads: list = []
    _refusing_engine(monkeypatch, loads)
    with pytest.raises(UserError, match="engine 'genonly' cannot score continuations") as err:
        registry.build_engine("choice:genonly:x", "planner")
    assert loads == [] and "hf:" in str(err.value) and "openai" not in str(err.value)
    with pytest.raises(UserError, match="engine 'baseline' cannot score continuations"):
        require_capability("baseline:random", "score_continuations", "--planner choice:baseline:random")
