"""Import hygiene: `import lgembed.graph` stays light, every public module imports cleanly.

docs/DESIGN.md §1 and docs/STYLE.md §C/§H: on a device, importing the graph API must not pull in
serialization, storage, hardware or async frameworks, and must do no I/O.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HEAVY = (
    "msgpack",
    "lmdb",
    "asyncio",
    "pydantic",
    "langchain_core",
    "langgraph",
    "serial",
    "can",
    "periphery",
    "importlib.metadata",
    "concurrent.futures",
    "hashlib",
    "logging",
)
# modules `import lgembed.graph` must not load (acceptance of the core runtime issue;
# logging: about 4 ms of the import + compile target of the performance issue)

PUBLIC = (
    "lgembed",
    "lgembed.graph",
    "lgembed.graph.message",
    "lgembed.graph.state",
    "lgembed.types",
    "lgembed.errors",
    "lgembed.channels",
    "lgembed.channels.base",
    "lgembed.channels.last_value",
    "lgembed.channels.any_value",
    "lgembed.channels.ephemeral_value",
    "lgembed.channels.untracked_value",
    "lgembed.channels.topic",
    "lgembed.channels.binop",
    "lgembed.channels.named_barrier_value",
    "lgembed.config",
    "lgembed.runtime",
    "lgembed.constants",
    "lgembed.managed",
    "lgembed.messages",
    "lgembed.pregel",
    "lgembed.checkpoint.base",
    "lgembed.checkpoint.memory",
    "lgembed.checkpoint.lmdb",
    "lgembed.checkpoint.serde",
    "lgembed.store.base",
    "lgembed.store.memory",
    "lgembed.store.lmdb",
    "lgembed.prebuilt",
    "lgembed.tools",
)


def _run(code: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("target", ["lgembed", "lgembed.graph"])
def test_graph_import_is_light(target):
    """DESIGN §1: `import lgembed.graph` loads none of the heavy modules."""
    out = _run(
        f"import sys; before = set(sys.modules); import {target}; "
        f"import json; print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    loaded = set(json.loads(out))
    heavy = sorted(m for m in HEAVY if m in loaded or any(x.startswith(m + ".") for x in loaded))
    assert heavy == [], f"import {target} loaded {heavy}"


def test_graph_import_starts_no_thread_and_reads_no_file():
    """DESIGN §1: no threads started at import."""
    out = _run("import threading; import lgembed.graph; print(threading.active_count())")
    assert out.strip() == "1"


@pytest.mark.parametrize("module", PUBLIC)
def test_public_module_imports_cleanly(module):
    """STYLE §C: every public module imports under -W error in a fresh interpreter."""
    _run(f"import {module}")


def test_public_modules_have_tuple_all():
    """STYLE §D: every public module has a tuple `__all__`."""
    out = _run(
        "import importlib, json; mods = " + repr(list(PUBLIC)) + "; "
        "print(json.dumps({m: type(getattr(importlib.import_module(m), '__all__', None)).__name__ for m in mods}))"
    )
    kinds = json.loads(out)
    assert {m: k for m, k in kinds.items() if k != "tuple"} == {}
