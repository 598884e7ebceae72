"""Functional API and node caching behave as LangGraph 1.2.22 does (issue 16, acceptance 3).

The scenarios (tests/func_cache_scenarios.py) ran against real LangGraph with
tools/record_func_cache.py; their records are tests/fixtures/func_cache.json. Each
runs here against lgembed, in whichever build this process loaded (the suite runs
once per build), and must give the same record.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import func_cache_scenarios as fcs  # noqa: E402

FIXTURE = json.loads((HERE / "fixtures" / "func_cache.json").read_text())


def test_fixture_is_langgraph_1_2_22_and_complete():
    assert FIXTURE["__langgraph_version__"] == "1.2.22"
    assert sorted(k for k in FIXTURE if not k.startswith("__")) == sorted(fcs.SCENARIOS)


@pytest.mark.parametrize("name", sorted(fcs.SCENARIOS))
def test_scenario_matches_langgraph(name):
    record = json.loads(json.dumps(fcs.SCENARIOS[name](fcs.api("lgembed")), default=repr))
    expected = FIXTURE[name]
    if isinstance(expected, dict):
        for key in expected:
            assert record.get(key) == expected[key], f"{name}: {key}"
    assert record == expected
