"""A stand-in for PARTNR's ``habitat_llm.examples.planner_demo`` (tests of the container bridge)."""

from __future__ import annotations

from pathlib import Path

PLANNER_DEMO = (
    "import json, os, sys, gzip\n"
    "kv = dict(a.split('=', 1) for a in sys.argv[1:] if '=' in a and not a.startswith('--'))\n"
    "eps = json.loads(gzip.decompress(open(kv['habitat.dataset.data_path'], 'rb').read()))['episodes']\n"
    "d = os.path.join(kv['paths.results_dir'], os.path.basename(kv['habitat.dataset.data_path']), 'stats')\n"
    "os.makedirs(d, exist_ok=True)\n"
    "for i in json.loads(kv['+episode_indices']):\n"
    "    e = eps[i]['episode_id']\n"
    "    pc = 1.0 if e.endswith('neutral') else 0.5\n"
    "    s = {'task_percent_complete': pc, 'task_state_success': float(pc == 1.0), 'sim_step_count': 7,"
    " 'replanning_count_0': 2}\n"
    "    json.dump({'success': True, 'stats': json.dumps(s)}, open(os.path.join(d, e + '.json'), 'w'))\n"
)


def fake_habitat_llm(root: Path) -> Path:
    """``root/fake/habitat_llm/examples/planner_demo.py`` (every episode: neutral 1.0, framed 0.5).
    Returns the examples folder; ``.parent.parent`` goes on PYTHONPATH."""
    fake = root / "fake" / "habitat_llm" / "examples"
    fake.mkdir(parents=True)
    (fake.parent / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "planner_demo.py").write_text(PLANNER_DEMO)
    return fake
