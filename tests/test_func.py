"""lgembed.func beyond the recorded LangGraph scenarios (issue 16).

tests/test_func_parity.py compares lgembed with LangGraph on recorded scenarios;
these tests pin what those cannot show: import weight, future types, resume across
a process restart with LmdbSaver, retries from the entrypoint's policy, lgembed-only
error texts, and tasks inside StateGraph nodes with a checkpointer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

import pytest

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.func import entrypoint, task
from lgembed.graph import START, StateGraph
from lgembed.types import Command, RetryPolicy, interrupt

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> set:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", f"import sys; b = set(sys.modules); {code}; import json; print(json.dumps(sorted(set(sys.modules) - b)))"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return set(json.loads(out))


def test_import_graph_loads_neither_func_nor_cache():
    loaded = _modules_after("import lgembed.graph")
    assert not {m for m in loaded if m.startswith(("lgembed.func", "lgembed.cache", "lgembed.pregel._func", "lgembed.pregel._cache"))}


@pytest.mark.parametrize("module", ["lgembed.func", "lgembed.cache", "lgembed.cache.memory", "lgembed.cache.base"])
def test_func_and_cache_imports_are_light(module):
    loaded = _modules_after(f"import {module}")
    heavy = {"msgpack", "lmdb", "asyncio", "concurrent.futures"} & loaded
    assert heavy == set()


@pytest.mark.parametrize("module", ["lgembed.func", "lgembed.cache", "lgembed.cache.base", "lgembed.cache.memory", "lgembed.cache.lmdb"])
def test_public_modules_have_tuple_all(module):
    import importlib

    mod = importlib.import_module(module)
    assert isinstance(mod.__all__, tuple)
    assert all(hasattr(mod, name) for name in mod.__all__)


@task
def double(x: int) -> int:
    return x * 2


def test_sync_call_returns_an_awaitable_concurrent_future():
    seen = []

    @entrypoint()
    def wf(x: int) -> int:
        fut = double(x)
        seen.append(fut)
        return fut.result()

    assert wf.invoke(4) == 8
    assert isinstance(seen[0], concurrent.futures.Future) and hasattr(seen[0], "__await__")


def test_async_entrypoint_gets_asyncio_futures_and_runs_tasks_concurrently():
    started = []

    @task
    async def wait_for_all(i: int) -> int:
        started.append(i)
        for _ in range(100):
            if len(started) == 3:
                return i
            await asyncio.sleep(0.01)
        raise AssertionError("tasks did not run concurrently")

    @entrypoint()
    async def wf(n: int) -> list:
        futs = [wait_for_all(i) for i in range(n)]
        assert all(isinstance(f, asyncio.Future) for f in futs)
        return list(await asyncio.gather(*futs))

    assert asyncio.run(wf.ainvoke(3)) == [0, 1, 2]


def test_resume_after_restart_with_lmdb_does_not_rerun_finished_tasks(tmp_path):
    """A device restarts between the interrupt and the answer: saved task results are reused."""
    from lgembed.checkpoint.lmdb import LmdbSaver

    calls = []

    def build(saver):
        @task
        def measure(x: int) -> int:
            calls.append(x)
            return x + 100

        @entrypoint(checkpointer=saver)
        def wf(x: int) -> dict:
            reading = measure(x).result()
            approved = interrupt({"reading": reading})
            return {"reading": reading, "approved": approved}

        return wf

    cfg = {"configurable": {"thread_id": "dev"}}
    with LmdbSaver.from_conn_string(str(tmp_path / "db")) as saver:
        first = build(saver).invoke(1, cfg)
    assert first["__interrupt__"][0].value == {"reading": 101}
    with LmdbSaver.from_conn_string(str(tmp_path / "db")) as saver:
        wf = build(saver)
        assert wf.invoke(Command(resume=True), cfg) == {"reading": 101, "approved": True}
        assert wf.get_state(cfg).values == {"reading": 101, "approved": True}
    assert calls == [1]


def test_entrypoint_retry_policy_applies_to_its_tasks():
    attempts = []

    @task
    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) == 1:
            raise ValueError("once")
        return x

    @entrypoint(retry_policy=RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ValueError))
    def wf(x: int) -> int:
        return flaky(x).result()

    assert wf.invoke(5) == 5
    assert attempts == [5, 5]


def test_task_in_stategraph_node_is_not_rerun_on_resume():
    calls = []

    class S(TypedDict):
        x: int

    @task
    def heavy(x: int) -> int:
        calls.append(x)
        return x * 3

    def node(state: S) -> dict:
        y = heavy(state["x"]).result()
        z = interrupt("go?")
        return {"x": y + z}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "s"}}
    app.invoke({"x": 2}, cfg)
    assert app.invoke(Command(resume=1), cfg) == {"x": 7}
    assert calls == [2]


def test_task_timeout_errors():
    def sync_fn(x):
        return x

    async def async_fn(x):
        return x

    with pytest.raises(ValueError, match=r"safely cancelled in-process. Task 'sync_fn' is sync.$"):
        task(timeout=1)(sync_fn)
    with pytest.raises(NotImplementedError, match="Task timeouts are not supported by lgembed yet"):
        task(timeout=1)(async_fn)


def test_task_name_on_a_bound_method_renames_a_copy():
    class Sensor:
        def read(self, x: int) -> int:
            return x + 1

    s = Sensor()
    t = task(name="sensor_read")(s.read)
    assert t.__name__ == "sensor_read" and Sensor.read.__name__ == "read"

    @entrypoint()
    def wf(x: int) -> int:
        return t(x).result()

    assert list(wf.stream(1, stream_mode="updates")) == [{"sensor_read": 2}, {"wf": 2}]


def test_final_is_a_frozen_dataclass():
    f = entrypoint.final(value=1, save=2)
    assert (f.value, f.save) == (1, 2)
    with pytest.raises(Exception):
        f.value = 3  # type: ignore[misc]
