"""The public LangGraph conformance scenarios that lgembed supports today must pass.

Runs ../shared/conformance/run.py (recorded LangGraph 1.2.22 results) with this
interpreter. Scenarios of features listed as not supported in the README are not
required; when a feature lands, its scenarios move into REQUIRED.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT.parent / "shared" / "conformance" / "run.py"

REQUIRED = (
    "command_goto_update",
    "command_parent",
    "errors_parallel_branch",
    "hitl_interrupt_before_after",
    "hitl_interrupt_resume",
    "hitl_multiple_interrupts",
    "persist_durability",
    "persist_history",
    "persist_threads",
    "persist_time_travel",
    "persist_update_state",
    "store_runtime",
    "stream_subgraphs",
    "errors_retry_policy",
    "graph_compile_errors",
    "graph_conditional_dict",
    "graph_conditional_list",
    "graph_conditional_literal",
    "graph_linear",
    "graph_recursion_limit",
    "graph_waiting_edge",
    "msgs_add_messages",
    "msgs_tool_node",
    "send_defer",
    "send_fanout_join",
    "state_channels_basic",
    "state_custom_reducer",
    "state_dataclass",
    "state_input_output_schema",
    "state_invalid_concurrent",
    "state_overwrite",
    "state_pydantic",
    "state_reducer_add",
    "store_context",
    "stream_custom",
    "stream_multi_modes",
    "stream_updates",
    "stream_values",
    "subgraph_invoke_in_node",
    "subgraph_shared_keys",
)
# every public scenario


@pytest.mark.skipif(not RUNNER.exists(), reason="../shared/conformance is not beside this checkout")
def test_public_conformance_scenarios_pass():
    """Reference §1-8, §11 as exercised by the differential suite."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if "pydantic" not in sys.modules:
        try:
            import pydantic  # noqa: F401
        except ImportError:
            pytest.skip("pydantic is not installed (needed by state_pydantic)")
    args = [sys.executable, str(RUNNER), "--impl", "lgembed", "--python", sys.executable, "-j", "2"]
    for name in REQUIRED:
        args += ["--only", name]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    bad = [line for line in lines if line.startswith(("FAIL", "ERROR"))]
    assert bad == [], "\n".join(bad)
    assert lines[-1] == f"{len(REQUIRED)} passed, 0 failed"
