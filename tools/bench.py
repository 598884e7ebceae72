#!/usr/bin/env python3
"""Benchmark lgembed (compiled and pure builds) against LangGraph on the same workloads.

    python tools/bench.py [--quick] [--only NAME]... [--json FILE]
                          [--python PATH] [--langgraph-python PATH]

Each (implementation, workload) measurement runs in a fresh subprocess, so imports
and the extension selection are clean:

    python tools/bench.py --worker IMPL WORKLOAD [--min-time S] [--batches N]
                          [--scratch DIR]

prints one JSON object as its last stdout line. IMPL is one of
``langgraph``, ``lgembed-py`` (``LGEMBED_EXTENSIONS=off``) and ``lgembed-c``
(``LGEMBED_EXTENSIONS=required``); WORKLOAD ``probe`` only imports and reports
versions. The workloads are written once against ``langgraph`` names; in lgembed
workers a ``sys.meta_path`` finder maps ``langgraph[.x]`` to ``lgembed[.x]``.

A workload is a registry entry: ``setup()`` builds and compiles the graph, runs it
once and checks the result; ``run(ctx)`` is what is timed. The reported value is the
median over batches of the mean time per run, divided by ``per`` (supersteps or tasks
in one run). This is a measuring tool: nothing here asserts timings.

``setup`` may instead be a dict ``{"langgraph": f, "lgembed": g}`` when the
implementations must be set up differently (SqliteSaver for LangGraph, LmdbSaver for
lgembed). Files a setup creates live in one scratch directory per run, shared by every
worker (``--tmp-dir`` picks its parent), and are removed when the measurement ends.

Exit status: 0, or 1 when a worker crashed (its stderr tail is printed). An
implementation that cannot be imported is shown as ``n/a (...)``, not as a crash.
"""

import argparse
import contextlib
import gc
import importlib
import importlib.abc
import importlib.util
import itertools
import json
import math
import operator
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Annotated, Any, Callable, NamedTuple, Optional, TypedDict

IMPLS = ("langgraph", "lgembed-py", "lgembed-c")
LGEMBED_MODE = {"lgembed-py": "off", "lgembed-c": "required"}
PROBE = "probe"


class _NotAvailable(Exception):
    """The implementation is importable but is not the build that was asked for."""


class _ChildImportError(ImportError):
    """A fresh child interpreter failed to import; the message keeps its exception type."""


# --------------------------------------------------------------------------------------
# langgraph -> lgembed import alias (installed only in lgembed workers)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target_name: str) -> None:
        self.target_name = target_name
        self.real_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target_name)
        self.real_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module) -> None:
        # importlib replaced __spec__ with the alias spec; restore the real one.
        if self.real_spec is not None:
            module.__spec__ = self.real_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Maps ``langgraph`` / ``langgraph.*`` to the same module objects under ``lgembed``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "langgraph" and not fullname.startswith("langgraph."):
            return None
        target_name = "lgembed" + fullname[len("langgraph"):]
        module = sys.modules.get(target_name)
        if module is not None:
            is_pkg = hasattr(module, "__path__")
        else:
            real = importlib.util.find_spec(target_name)
            if real is None:
                raise ModuleNotFoundError(
                    f"No module named {target_name!r} (aliased from {fullname!r})",
                    name=target_name,
                )
            is_pkg = real.submodule_search_locations is not None
        return importlib.util.spec_from_loader(
            fullname, _AliasLoader(target_name), is_package=is_pkg
        )


# --------------------------------------------------------------------------------------
# Workloads. Node functions are trivial dict merges: the framework is what is measured.
# `langgraph` is imported inside setup functions, after the alias is installed.


class Counter(TypedDict):
    n: int


class Fan(TypedDict):
    items: list
    results: Annotated[list, operator.add]
    total: int


BRANCH_KEYS = tuple(f"c{j}" for j in range(5))
Branches = TypedDict(
    "Branches",
    {**{k: Annotated[list, operator.add] for k in BRANCH_KEYS}, "total": int},
)
SEND_ITEMS = list(range(100))


def _inc(state):
    return {"n": state["n"] + 1}


def _work(arg):
    return {"results": [arg["item"]]}


def _count_results(state):
    return {"total": len(state["results"])}


def _count_branches(state):
    return {"total": sum(len(state[k]) for k in BRANCH_KEYS)}


def _expect(got, want, what: str) -> None:
    if got != want:
        raise RuntimeError(f"{what}: workload returned {got!r}, expected {want!r}")


def _invoke(ctx):
    app, inp, config = ctx
    return app.invoke(inp, config)


def _stream_updates(ctx):
    app, inp, config = ctx
    return list(app.stream(inp, config, stream_mode="updates"))


def _chain10():
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(Counter)
    prev = START
    for i in range(10):
        g.add_node(f"n{i}", _inc)
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, END)
    return g.compile()


def setup_invoke_1node():
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(Counter)
    g.add_node("a", _inc)
    g.add_edge(START, "a")
    g.add_edge("a", END)
    ctx = (g.compile(), {"n": 0}, None)
    _expect(_invoke(ctx), {"n": 1}, "invoke_1node")
    return ctx


def setup_chain10():
    ctx = (_chain10(), {"n": 0}, None)
    _expect(_invoke(ctx), {"n": 10}, "chain10")
    return ctx


def setup_loop1000():
    from langgraph.graph import END, START, StateGraph

    def route(state):
        return "step" if state["n"] < 1000 else END

    g = StateGraph(Counter)
    g.add_node("step", _inc)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", route, ["step", END])
    ctx = (g.compile(), {"n": 0}, {"recursion_limit": 10_000})
    _expect(_invoke(ctx), {"n": 1000}, "loop1000")
    return ctx


def setup_send100():
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    def fan_out(state):
        return [Send("work", {"item": i}) for i in state["items"]]

    g = StateGraph(Fan)
    g.add_node("work", _work)
    g.add_node("join", _count_results)
    g.add_conditional_edges(START, fan_out, ["work"])
    g.add_edge("work", "join")
    g.add_edge("join", END)
    ctx = (g.compile(), {"items": SEND_ITEMS}, None)
    out = _invoke(ctx)
    _expect((out["total"], sorted(out["results"])), (100, SEND_ITEMS), "send100")
    return ctx


def setup_branches10x5():
    from langgraph.graph import END, START, StateGraph

    def branch(i):
        def node(state):
            return {k: [i] for k in BRANCH_KEYS}

        return node

    g = StateGraph(Branches)
    names = [f"b{i}" for i in range(10)]
    for i, name in enumerate(names):
        g.add_node(name, branch(i))
        g.add_edge(START, name)
    g.add_node("join", _count_branches)
    g.add_edge(names, "join")
    g.add_edge("join", END)
    ctx = (g.compile(), {"total": 0}, None)
    _expect(_invoke(ctx)["total"], 50, "branches10x5")
    return ctx


def setup_stream_updates():
    ctx = (_chain10(), {"n": 0}, None)
    chunks = _stream_updates(ctx)
    _expect((len(chunks), chunks[0]), (10, {"n0": {"n": 1}}), "stream_updates")
    return ctx


# --- wide state and message workloads -------------------------------------------------
# state200 and loop1key run the same node and router code, the same number of
# supersteps; only the state's width differs. Node and router take the whole state
# (as every LangGraph node and router does) and look at it with `len`, which costs the
# same whatever the width, so the ratio state200 / loop1key measures the framework.

WIDE_STEPS = 1000
WIDE_KEYS = tuple(f"k{i}" for i in range(200))
State200 = TypedDict("State200", {**{k: int for k in WIDE_KEYS}, "n": int})


def _wide_loop(schema, keys, what, rotate=True):
    """A node that writes `n` (and, with `rotate`, the key k{n % width}) looping
    WIDE_STEPS supersteps."""
    from langgraph.graph import END, START, StateGraph

    width = len(keys) + 1  # every key has a value from the input on
    nkeys = len(keys)

    if keys and rotate:
        def step(state):
            if len(state) != width:
                raise RuntimeError(f"{what}: node got {len(state)} keys, expected {width}")
            n = state["n"]
            return {keys[n % nkeys]: n, "n": n + 1}
    else:
        def step(state):
            if len(state) != width:
                raise RuntimeError(f"{what}: node got {len(state)} keys, expected {width}")
            return {"n": state["n"] + 1}

    def route(state):
        if len(state) != width:
            raise RuntimeError(f"{what}: router got {len(state)} keys, expected {width}")
        return "step" if state["n"] < WIDE_STEPS else END

    g = StateGraph(schema)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", route, ["step", END])
    inp = {**{k: 0 for k in keys}, "n": 0}
    ctx = (g.compile(), inp, {"recursion_limit": 10 * WIDE_STEPS})
    out = _invoke(ctx)
    _expect(out["n"], WIDE_STEPS, what)
    if keys:  # the last write to each key was the last step n with n % 200 == i
        want = ({k: WIDE_STEPS - nkeys + i for i, k in enumerate(keys)} if rotate
                else dict.fromkeys(keys, 0))
        _expect({k: out[k] for k in keys}, want, f"{what} (keys)")
    return ctx


def setup_state200():
    return _wide_loop(State200, WIDE_KEYS, "state200")


def setup_state200_n():
    return _wide_loop(State200, WIDE_KEYS, "state200_n", rotate=False)


def setup_loop1key():
    return _wide_loop(Counter, (), "loop1key")


AGENT_TURNS = 25


def _messages_agent(msgs):
    """agent -> tools -> agent ... AGENT_TURNS turns, messages built with `msgs`' classes.

    "agent" answers with an AIMessage holding one tool call (a fresh id every time),
    "tools" answers it with a ToolMessage; after "agent" a router like
    `tools_condition`, after "tools" a turn counter. 2 * AGENT_TURNS supersteps.
    """
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    AIMessage, HumanMessage, ToolMessage = msgs.AIMessage, msgs.HumanMessage, msgs.ToolMessage
    ids = itertools.count()
    schema = TypedDict(
        "AgentState", {"messages": Annotated[list, add_messages], "turns": int}
    )

    def agent(state):
        call = {"name": "lookup", "args": {"q": state["turns"]}, "id": f"call_{next(ids)}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])],
                "turns": state["turns"] + 1}

    def tools(state):
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(content=f"result {call['args']['q']}",
                                         tool_call_id=call["id"], name=call["name"])]}

    def tools_condition(state):
        last = state["messages"][-1]
        return "tools" if getattr(last, "tool_calls", None) else END

    def next_turn(state):
        return "agent" if state["turns"] < AGENT_TURNS else END

    g = StateGraph(schema)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, ["tools", END])
    g.add_conditional_edges("tools", next_turn, ["agent", END])
    ctx = (g.compile(), {"messages": [HumanMessage(content="go")], "turns": 0},
           {"recursion_limit": 10 * AGENT_TURNS})
    out = _invoke(ctx)
    kinds = [m.type for m in out["messages"]]
    _expect((out["turns"], len(kinds), kinds[:3], kinds[-1]),
            (AGENT_TURNS, 1 + 2 * AGENT_TURNS, ["human", "ai", "tool"], "tool"),
            "messages_agent")
    last_ai, last_tool = out["messages"][-2:]
    _expect(last_tool.tool_call_id, last_ai.tool_calls[0]["id"], "messages_agent (ids)")
    return ctx


def setup_messages_agent_langgraph():
    import langchain_core.messages as msgs

    return _messages_agent(msgs)


def setup_messages_agent_lgembed():
    import lgembed.messages as msgs

    return _messages_agent(msgs)


# --- checkpointed workloads ------------------------------------------------------------
# Every invoke runs on a fresh thread_id (`_invoke_new_thread`), so a thread's history
# never grows during timing; the saver as a whole does grow (one thread per run).
# Default durability on both sides (nothing passed). Savers that hold files are opened
# in `_scratch()` and closed through `_RESOURCES` when the measurement ends.

_RESOURCES = contextlib.ExitStack()  # closed by time_workload after the measurement
_SCRATCH_ROOT: Optional[str] = None  # set by worker(): the run's shared scratch directory


def _scratch(tag: str) -> str:
    """A fresh directory for this worker's files, removed when the measurement ends."""
    root = _SCRATCH_ROOT or tempfile.gettempdir()
    path = tempfile.mkdtemp(prefix=f"{tag}-", dir=root)
    _RESOURCES.callback(shutil.rmtree, path, True)
    return path


class Large(TypedDict):
    n: int
    blob: str
    ints: list


LARGE_BLOB = "x" * 10_240  # 10 kB string the nodes never touch
LARGE_INTS = list(range(1000))  # 1000 ints the nodes never touch


def _invoke_new_thread(ctx):
    app, inp, threads = ctx
    return app.invoke(inp, {"configurable": {"thread_id": f"t{next(threads)}"}})


def _chain10_ckpt(schema, inp, want, what, saver):
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(schema)
    prev = START
    for i in range(10):
        g.add_node(f"n{i}", _inc)
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, END)
    ctx = (g.compile(checkpointer=saver), inp, itertools.count())
    _expect(_invoke_new_thread(ctx), want, what)
    # the check run must have left a readable checkpoint of the final state
    last = ctx[0].get_state({"configurable": {"thread_id": "t0"}})
    _expect(last.values, want, f"{what} (checkpointed state)")
    return ctx


def _memsaver():
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


def _lmdb_saver(tag: str):
    """lgembed: LmdbSaver on a fresh LMDB environment in the scratch directory."""
    from langgraph.checkpoint.lmdb import LmdbSaver  # aliased to lgembed.checkpoint.lmdb

    path = os.path.join(_scratch(tag), "checkpoints.lmdb")
    if hasattr(LmdbSaver, "from_conn_string"):
        return _RESOURCES.enter_context(LmdbSaver.from_conn_string(path))
    saver = LmdbSaver(path)
    if hasattr(saver, "close"):
        _RESOURCES.callback(saver.close)
    return saver


def _sqlite_saver(tag: str):
    """LangGraph: SqliteSaver (langgraph-checkpoint-sqlite) on a file in the scratch dir."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = os.path.join(_scratch(tag), "checkpoints.sqlite")
    return _RESOURCES.enter_context(SqliteSaver.from_conn_string(path))


def _small():
    return Counter, {"n": 0}, {"n": 10}


def _large():
    inp = {"n": 0, "blob": LARGE_BLOB, "ints": LARGE_INTS}
    return Large, inp, {**inp, "n": 10}


def setup_chain10_memsaver():
    return _chain10_ckpt(*_small(), "chain10_memsaver", _memsaver())


def setup_chain10_lmdb():
    return _chain10_ckpt(*_small(), "chain10_lmdb", _lmdb_saver("chain10_lmdb"))


def setup_chain10_sqlite():
    return _chain10_ckpt(*_small(), "chain10_sqlite", _sqlite_saver("chain10_sqlite"))


def setup_chain10_large_memsaver():
    return _chain10_ckpt(*_large(), "chain10_large_state_memsaver", _memsaver())


def setup_chain10_large_lmdb():
    saver = _lmdb_saver("chain10_large_lmdb")
    return _chain10_ckpt(*_large(), "chain10_large_state_lmdb", saver)


def setup_chain10_large_sqlite():
    saver = _sqlite_saver("chain10_large_sqlite")
    return _chain10_ckpt(*_large(), "chain10_large_state_sqlite", saver)


_RSS_SNIPPET = """
def _vmrss_kb():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
"""

# Runs in a fresh interpreter; imports the package directly (no alias machinery).
_IMPORT_COMPILE_CHILD = _RSS_SNIPPET + """
import time
t0 = time.perf_counter()
from typing import TypedDict
from {pkg}.graph import END, START, StateGraph

class S(TypedDict):
    n: int

def inc(state):
    return {{"n": state["n"] + 1}}

g = StateGraph(S)
g.add_node("a", inc)
g.add_edge(START, "a")
g.add_edge("a", END)
app = g.compile()
elapsed = time.perf_counter() - t0
print(elapsed, _vmrss_kb())
"""

_BARE_CHILD = _RSS_SNIPPET + "\nprint(0.0, _vmrss_kb())\n"


def _run_child(code: str, what: str, timeout: float = 300):
    """Run `code` in a fresh interpreter; return the finished process.

    Same environment, except that PYTHONDONTWRITEBYTECODE is dropped: a warm-up child
    must be able to write the bytecode caches the timed children then import from (an
    installed wheel has them), or import_compile would time compiling the sources.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
        env=env,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        if "ImportError" in tail[0] or "ModuleNotFoundError" in tail[0]:
            raise _ChildImportError(tail[0])
        raise RuntimeError(f"{what} child failed:\n{proc.stderr[-2000:]}")
    return proc


def _child(code: str):
    t0 = time.perf_counter()
    proc = _run_child(code, "import_compile")
    wall = time.perf_counter() - t0
    elapsed, rss = proc.stdout.split()[-2:]
    return float(elapsed), (None if rss == "None" else int(rss)), wall


def measure_import_compile(impl: str, min_time: float, batches: int):
    """Fresh interpreters: import + build + compile a 1-node graph; RSS over a bare one."""
    pkg = "langgraph" if impl == "langgraph" else "lgembed"
    code = _IMPORT_COMPILE_CHILD.format(pkg=pkg)
    _child(code)  # warm-up: bytecode caches and page cache
    runs = [_child(code) for _ in range(batches)]
    bare = [_child(_BARE_CHILD)[1] for _ in range(3)]
    times = [r[0] for r in runs]
    rows = [
        {
            "name": "import_compile",
            "unit": "ms",
            "value": statistics.median(times) * 1e3,
            "best": min(times) * 1e3,
            "runs": len(times),
            "process_wall_ms": statistics.median(r[2] for r in runs) * 1e3,
        }
    ]
    rss = [r[1] for r in runs]
    if None not in rss and None not in bare:
        base = statistics.median(bare)
        rows.append(
            {
                "name": "import_compile_rss",
                "unit": "MB added",
                "value": (statistics.median(rss) - base) / 1024,
                "best": (min(rss) - base) / 1024,
                "runs": len(rss),
                "bare_rss_mb": base / 1024,
            }
        )
    return rows


MEMORY_THREADS = 1000

# Runs in a fresh interpreter: chain10 + InMemorySaver, one invoke on each of 1000 threads.
_MEMORY_CHILD = _RSS_SNIPPET + """
import gc
from typing import TypedDict
from {pkg}.checkpoint.memory import InMemorySaver
from {pkg}.graph import END, START, StateGraph

class S(TypedDict):
    n: int

def inc(state):
    return {{"n": state["n"] + 1}}

g = StateGraph(S)
prev = START
for i in range(10):
    g.add_node(f"n{{i}}", inc)
    g.add_edge(prev, f"n{{i}}")
    prev = f"n{{i}}"
g.add_edge(prev, END)
saver = InMemorySaver()
app = g.compile(checkpointer=saver)
# warm-up thread: one-time allocations (lazy imports, caches) land before the baseline
assert app.invoke({{"n": 0}}, {{"configurable": {{"thread_id": "warm-up"}}}}) == {{"n": 10}}
gc.collect()
before = _vmrss_kb()
for i in range({threads}):
    out = app.invoke({{"n": 0}}, {{"configurable": {{"thread_id": f"t{{i}}"}}}})
assert out == {{"n": 10}}, out
gc.collect()
after = _vmrss_kb()
assert app.get_state({{"configurable": {{"thread_id": "t0"}}}}).values == {{"n": 10}}
print(before, after)
"""


def measure_memory_per_thread(impl: str, min_time: float, batches: int):
    """Fresh interpreters: RSS retained per thread of an InMemorySaver (chain10, 1 run each)."""
    pkg = "langgraph" if impl == "langgraph" else "lgembed"
    code = _MEMORY_CHILD.format(pkg=pkg, threads=MEMORY_THREADS)
    runs = []
    for _ in range(3 if batches >= 5 else 1):  # 3 fresh processes (--quick: 1)
        proc = _run_child(code, "memory_per_thread")
        before, after = proc.stdout.split()[-2:]
        if before == "None" or after == "None":
            raise _NotAvailable("no VmRSS in /proc/self/status on this system")
        runs.append((int(before), int(after)))
    per_thread = [(a - b) / MEMORY_THREADS for b, a in runs]
    return [
        {
            "name": "memory_per_thread",
            "unit": "kB/thread",
            "value": statistics.median(per_thread),
            "best": min(per_thread),
            "runs": len(runs),
            "threads": MEMORY_THREADS,
            "rss_before_mb": statistics.median(b for b, _ in runs) / 1024,
            "rss_after_mb": statistics.median(a for _, a in runs) / 1024,
        }
    ]


# Runs in a fresh interpreter: import + build + compile chain10, then time the first invoke.
_FIRST_INVOKE_CHILD = _RSS_SNIPPET + """
import time
t0 = time.perf_counter()
from typing import TypedDict
from {pkg}.graph import END, START, StateGraph

class S(TypedDict):
    n: int

def inc(state):
    return {{"n": state["n"] + 1}}

g = StateGraph(S)
prev = START
for i in range(10):
    g.add_node(f"n{{i}}", inc)
    g.add_edge(prev, f"n{{i}}")
    prev = f"n{{i}}"
g.add_edge(prev, END)
app = g.compile()
t1 = time.perf_counter()
out = app.invoke({{"n": 0}})
t2 = time.perf_counter()
assert out == {{"n": 10}}, out
print(t1 - t0, t2 - t1)
"""


def measure_first_invoke(impl: str, min_time: float, batches: int):
    """Fresh interpreters: import + build + compile chain10, time only the first invoke."""
    pkg = "langgraph" if impl == "langgraph" else "lgembed"
    code = _FIRST_INVOKE_CHILD.format(pkg=pkg)
    _run_child(code, "first_invoke")  # warm-up: bytecode caches and page cache
    runs = []
    for _ in range(batches):
        proc = _run_child(code, "first_invoke")
        setup_s, first_s = proc.stdout.split()[-2:]
        runs.append((float(setup_s), float(first_s)))
    firsts = [f for _, f in runs]
    return [
        {
            "name": "first_invoke",
            "unit": "ms",
            "value": statistics.median(firsts) * 1e3,
            "best": min(firsts) * 1e3,
            "runs": len(runs),
            "import_build_compile_ms": statistics.median(s for s, _ in runs) * 1e3,
        }
    ]


# Runs in a fresh interpreter: the memory_per_thread graph and threads, measured with
# tracemalloc (started after the warm-up thread, so only what the threads allocate and
# keep is traced) instead of VmRSS.
_TRACEMALLOC_CHILD = _MEMORY_CHILD.replace(
    "gc.collect()\nbefore = _vmrss_kb()",
    "import tracemalloc\ngc.collect()\ntracemalloc.start()\n"
    "before = tracemalloc.get_traced_memory()[0]",
).replace(
    "gc.collect()\nafter = _vmrss_kb()",
    "gc.collect()\nafter = tracemalloc.get_traced_memory()[0]",
)
assert _TRACEMALLOC_CHILD.count("tracemalloc.get_traced_memory") == 2


def measure_memory_tracemalloc(impl: str, min_time: float, batches: int):
    """Fresh interpreters: bytes retained per thread of an InMemorySaver, by tracemalloc."""
    pkg = "langgraph" if impl == "langgraph" else "lgembed"
    code = _TRACEMALLOC_CHILD.format(pkg=pkg, threads=MEMORY_THREADS)
    per_thread = []
    for _ in range(3 if batches >= 5 else 1):  # 3 fresh processes (--quick: 1)
        proc = _run_child(code, "memory_per_thread_tracemalloc")
        before, after = (int(x) for x in proc.stdout.split()[-2:])
        per_thread.append((after - before) / MEMORY_THREADS)
    return [
        {
            "name": "memory_per_thread_tracemalloc",
            "unit": "kB/thread",
            "value": statistics.median(per_thread) / 1024,
            "best": min(per_thread) / 1024,
            "bytes_per_thread": statistics.median(per_thread),
            "runs": len(per_thread),
            "threads": MEMORY_THREADS,
        }
    ]


class Workload(NamedTuple):
    # build + compile + one checked run -> ctx; or {"langgraph": f, "lgembed": g}
    setup: Any
    run: Optional[Callable[[Any], Any]]  # the timed call
    unit: str  # unit of the normalised value
    per: int  # supersteps / tasks in one run
    run_unit: Optional[str] = None  # also report time per run in this unit
    measure: Optional[Callable[[str, float, int], list]] = None  # custom measurement
    note: Optional[str] = None  # printed under the table when the workload ran


_NEW_THREAD = "fresh thread_id per invoke, default durability"

WORKLOADS = {
    "invoke_1node": Workload(setup_invoke_1node, _invoke, "us/invoke", 1),
    "chain10": Workload(setup_chain10, _invoke, "us/superstep", 10, run_unit="us/invoke"),
    "loop1000": Workload(setup_loop1000, _invoke, "us/superstep", 1000),
    "send100": Workload(setup_send100, _invoke, "us/task", 100),
    "branches10x5": Workload(setup_branches10x5, _invoke, "us/invoke", 1),
    "stream_updates": Workload(setup_stream_updates, _stream_updates, "us/superstep", 10),
    "loop1key": Workload(
        setup_loop1key, _invoke, "us/superstep", WIDE_STEPS,
        note=f"one node looping {WIDE_STEPS} supersteps through a "
             "conditional edge; node and router take the whole state; state200 has "
             "k0..k199 + n and writes k{n % 200} and n per step (the update's key "
             "order changes every step), state200_n the same state and writes only n, "
             "loop1key only n (the ratio lines above divide them)",
    ),
    "state200": Workload(setup_state200, _invoke, "us/superstep", WIDE_STEPS),
    "state200_n": Workload(setup_state200_n, _invoke, "us/superstep", WIDE_STEPS),
    "messages_agent": Workload(
        {"langgraph": setup_messages_agent_langgraph, "lgembed": setup_messages_agent_lgembed},
        _invoke, "us/superstep", 2 * AGENT_TURNS,
        note=f"add_messages state, {AGENT_TURNS} turns of agent (AIMessage "
             "with one tool call) and tools (ToolMessage); langchain_core's message classes "
             "in the langgraph column, lgembed.messages' in the lgembed columns",
    ),
    "chain10_memsaver": Workload(
        setup_chain10_memsaver, _invoke_new_thread, "us/superstep", 10,
        note=f"InMemorySaver in every column; {_NEW_THREAD}",
    ),
    "chain10_lmdb_vs_sqlite": Workload(
        {"langgraph": setup_chain10_sqlite, "lgembed": setup_chain10_lmdb},
        _invoke_new_thread, "us/superstep", 10,
        note="langgraph column = SqliteSaver, lgembed columns = LmdbSaver (files in one "
             f"temporary directory), so LG/x = SqliteSaver / LmdbSaver; {_NEW_THREAD}",
    ),
    "chain10_large_state_memsaver": Workload(
        setup_chain10_large_memsaver, _invoke_new_thread, "us/superstep", 10,
        note="chain10_memsaver with a 10 kB str and 1000 ints in the state that the "
             "nodes do not touch",
    ),
    "chain10_large_state_lmdb_vs_sqlite": Workload(
        {"langgraph": setup_chain10_large_sqlite, "lgembed": setup_chain10_large_lmdb},
        _invoke_new_thread, "us/superstep", 10,
        note="chain10_lmdb_vs_sqlite with the same large state",
    ),
    "memory_per_thread": Workload(
        None, None, "kB/thread", 1, measure=measure_memory_per_thread,
        note=f"fresh process: chain10 + InMemorySaver run once on each of {MEMORY_THREADS} "
             "threads; (VmRSS after - before) / threads, gc.collect() before each reading",
    ),
    "memory_per_thread_tracemalloc": Workload(
        None, None, "kB/thread", 1, measure=measure_memory_tracemalloc,
        note="fresh process: the memory_per_thread graph and threads; tracemalloc started "
             "after the warm-up thread, (traced size after - before) / threads in KiB, "
             "gc.collect() before each reading",
    ),
    "import_compile": Workload(None, None, "ms", 1, measure=measure_import_compile),
    "first_invoke": Workload(
        None, None, "ms", 1, measure=measure_first_invoke,
        note="fresh process: import + build + compile chain10 (untimed), then the first "
             "invoke timed; median of fresh processes",
    ),
}

# Summary lines under the table: (label, numerator metric, denominator metric), the
# ratio of two rows of one implementation, printed when both rows were measured.
DERIVED = (
    ("state200 / loop1key (200-key state vs 1 key, same loop)", "state200", "loop1key"),
    ("state200_n / loop1key (200-key state, one key written, vs 1 key)", "state200_n",
     "loop1key"),
)

# --only NAME also accepts a group name
GROUPS = {
    "wide_state": ("loop1key", "state200", "state200_n"),
    "memory": ("memory_per_thread", "memory_per_thread_tracemalloc"),
    "chain10_large_state": ("chain10_large_state_memsaver",
                            "chain10_large_state_lmdb_vs_sqlite"),
}


# --------------------------------------------------------------------------------------
# Worker side


def time_workload(impl: str, name: str, wl: Workload, min_time: float, batches: int) -> list:
    """Set up, time, then close what the setup opened (savers, scratch files)."""
    setup = wl.setup
    if isinstance(setup, dict):  # per-implementation setup
        setup = setup["langgraph" if impl == "langgraph" else "lgembed"]
    with _RESOURCES:
        return _time_runs(name, wl, setup(), min_time, batches)


def _time_runs(name: str, wl: Workload, ctx, min_time: float, batches: int) -> list:
    """Warm up, then time `batches`+ batches of n runs each, for at least `min_time` s."""
    run = wl.run
    perf = time.perf_counter
    # Warm-up: at least one run and a fifth of the time budget; estimates one run's time.
    n_warm, t0 = 0, perf()
    while True:
        run(ctx)
        n_warm += 1
        spent = perf() - t0
        if spent >= min_time / 5:
            break
    per_batch = max(1, math.ceil(min_time / batches / (spent / n_warm)))
    means = []
    t_start = perf()
    while len(means) < batches or perf() - t_start < min_time:
        gc.collect()
        t0 = perf()
        for _ in range(per_batch):
            run(ctx)
        means.append((perf() - t0) / per_batch)
    median, best = statistics.median(means), min(means)
    common = {"batches": len(means), "runs": len(means) * per_batch}
    rows = [
        {
            "name": name,
            "unit": wl.unit,
            "value": median / wl.per * 1e6,
            "best": best / wl.per * 1e6,
            "per": wl.per,
            **common,
        }
    ]
    if wl.run_unit:
        rows.append(
            {
                "name": f"{name}/invoke",
                "unit": wl.run_unit,
                "value": median * 1e6,
                "best": best * 1e6,
                **common,
            }
        )
    return rows


def _dist_version(dist: str) -> Optional[str]:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return None


def probe(impl: str) -> dict:
    # the names every workload needs (aliased to lgembed.graph in lgembed workers)
    from langgraph.graph import END, START, StateGraph  # noqa: F401

    info = {
        "python": platform.python_version(),
        "python_impl": platform.python_implementation(),
        "executable": sys.executable,
    }
    graph_mod = sys.modules["langgraph.graph"]
    info["path"] = list(sys.modules["langgraph"].__path__)[0]
    if impl == "langgraph":
        info["version"] = _dist_version("langgraph") or "unknown"
        return info
    import lgembed

    if not graph_mod.__name__.startswith("lgembed"):
        raise RuntimeError(f"import alias failed: langgraph.graph is {graph_mod!r}")
    version = getattr(lgembed, "__version__", None) or _dist_version("lgembed")
    info["version"] = version or "unknown"
    try:
        from lgembed import _engine

        build = _engine.IMPLEMENTATION
    except ImportError:
        if LGEMBED_MODE[impl] == "required":
            raise
        build = None
    info["build"] = build or "unknown"
    want = "c" if impl == "lgembed-c" else "py"
    if build != want and (build is not None or want == "c"):
        raise _NotAvailable(
            f"LGEMBED_EXTENSIONS={os.environ.get('LGEMBED_EXTENSIONS')} gave "
            f"IMPLEMENTATION={build!r}, expected {want!r}"
        )
    return info


def worker(impl: str, workload: str, min_time: float, batches: int,
           scratch: Optional[str] = None) -> None:
    global _SCRATCH_ROOT
    _SCRATCH_ROOT = scratch
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if impl != "langgraph":
        sys.meta_path.insert(0, _AliasFinder())
    try:
        if workload == PROBE:
            out = {"ok": True, "info": probe(impl)}
        else:
            wl = WORKLOADS[workload]
            if wl.measure is not None:
                rows = wl.measure(impl, min_time, batches)
            else:
                rows = time_workload(impl, workload, wl, min_time, batches)
            out = {"ok": True, "metrics": rows}
    except (ImportError, _NotAvailable) as e:
        own_type = isinstance(e, (_NotAvailable, _ChildImportError))
        prefix = "" if own_type else f"{type(e).__name__}: "
        out = {"ok": False, "na": (prefix + str(e)).strip().splitlines()[0]}
    except BaseException:  # noqa: BLE001 - a crash: traceback to stderr, status 1
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.write("\n" + json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: stray executor threads must not hang us


# --------------------------------------------------------------------------------------
# Orchestrator side


class Outcome(NamedTuple):
    kind: str  # "ok" | "na" | "crash"
    data: Any  # JSON payload | reason | stderr tail


def spawn(python: str, impl: str, workload: str, args) -> Outcome:
    env = dict(os.environ)
    env.pop("LGEMBED_EXTENSIONS", None)
    if impl in LGEMBED_MODE:
        env["LGEMBED_EXTENSIONS"] = LGEMBED_MODE[impl]
    cmd = [python, os.path.abspath(__file__), "--worker", impl, workload,
           "--min-time", repr(args.min_time), "--batches", str(args.batches)]
    if args.scratch:
        cmd += ["--scratch", args.scratch]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except FileNotFoundError as e:
        return Outcome("na", f"cannot run {python}: {e.strerror}")
    except subprocess.TimeoutExpired as e:
        err = e.stderr or b""
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
        return Outcome("crash", f"timed out after {args.timeout:g} s\n{err[-3000:]}")
    lines = proc.stdout.strip().splitlines()
    payload = None
    if proc.returncode == 0 and lines:
        try:
            payload = json.loads(lines[-1])
        except ValueError:
            pass
    if payload is None:
        tail = "\n".join(proc.stderr.strip().splitlines()[-25:])
        return Outcome("crash", f"exit status {proc.returncode}\n{tail}")
    if not payload["ok"]:
        return Outcome("na", payload["na"])
    return Outcome("ok", payload)


def machine_info() -> dict:
    system = f"{platform.system()} {platform.machine()}"
    info = {"cpu": None, "cores": os.cpu_count(), "system": system}
    try:
        with open("/proc/cpuinfo") as f:
            fields = {}
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
        for key in ("model name", "Model", "Hardware", "cpu model", "Processor"):
            if fields.get(key):
                info["cpu"] = fields[key]
                break
    except OSError:
        pass
    info["cpu"] = info["cpu"] or platform.processor() or platform.machine()
    return info


def _shown_path(path: str) -> str:
    """`path` relative to the repository root when it lies inside it (tables get pasted
    into BENCHMARKS.md, which must not name one machine's directories)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith(os.pardir) else rel


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def derived_ratios(results) -> list:
    """[(label, {impl: ratio or None})] for each DERIVED pair with any measured value."""
    out = []
    for label, num, den in DERIVED:
        per_impl = {}
        for impl in IMPLS:
            a, b = results.get((impl, num)), results.get((impl, den))
            ok = isinstance(a, dict) and isinstance(b, dict) and b["value"] > 0
            per_impl[impl] = a["value"] / b["value"] if ok else None
        if any(r is not None for r in per_impl.values()):
            out.append((label, per_impl))
    return out


def render(args, machine, status, results, order, workload_notes=()) -> str:
    out = []
    m = machine
    out.append(f"machine: {m['cpu']}, {m['cores']} cores, {m['system']}")
    for impl in IMPLS:
        kind, data = status[impl]
        if kind == "ok":
            info = data
            build = f", build {info['build']}" if "build" in info else ""
            out.append(
                f"{impl:<10}: {info['version']}{build} on {info['python_impl']} "
                f"{info['python']} ({_shown_path(info['executable'])})"
            )
        else:
            out.append(f"{impl:<10}: {data}")
    out.append(
        f"values: median of >= {args.batches} batches over >= {args.min_time:g} s per "
        "workload (import_compile, first_invoke, memory_per_thread*: median of fresh "
        "processes); "
        "lower is better"
    )
    out.append("ratios: LangGraph / lgembed (> 1 means lgembed is faster / smaller)")
    out.append("")
    header = ("workload", "unit", "langgraph", "lgembed-py", "lgembed-c", "LG/py", "LG/c")
    rows = [header]
    notes = []
    for name, unit in order:
        cells = {}
        for impl in IMPLS:
            r = results.get((impl, name))
            if isinstance(r, dict):
                cells[impl] = r["value"]
            elif isinstance(r, str):
                cells[impl] = None
                note = f"{name} on {impl}: {r}"
                if note not in notes:
                    notes.append(note)
            else:
                cells[impl] = None

        def ratio(impl):
            lg, other = cells["langgraph"], cells[impl]
            if lg is None or other is None or other <= 0:
                return "-"
            return f"{lg / other:.2f}x"

        rows.append((
            name, unit,
            *(("n/a" if cells[i] is None else _fmt(cells[i])) for i in IMPLS),
            ratio("lgembed-py"), ratio("lgembed-c"),
        ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        left = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        right = [c.rjust(w) for c, w in zip(r[2:], widths[2:])]
        out.append("  ".join(left + right).rstrip())
    derived = derived_ratios(results)
    if derived:
        out.append("")
        for label, per_impl in derived:
            cells = ", ".join(
                f"{impl} {'-' if r is None else f'{r:.2f}x'}" for impl, r in per_impl.items()
            )
            out.append(f"ratio {label}: {cells}")
    if workload_notes:
        out.append("")
        out.extend(workload_notes)
    if notes:
        out.append("")
        out.extend(notes)
    return "\n".join(out)


def orchestrate(args) -> int:
    workloads = []
    for name in args.only or list(WORKLOADS):
        for w in GROUPS.get(name, (name,)):
            if w not in workloads:
                workloads.append(w)
    # one scratch directory per run, shared by every worker (savers' files go there)
    args.scratch = tempfile.mkdtemp(prefix="lgembed-bench-", dir=args.tmp_dir)
    try:
        return _orchestrate(args, workloads)
    finally:
        shutil.rmtree(args.scratch, ignore_errors=True)


def _orchestrate(args, workloads) -> int:
    lg_python = args.langgraph_python or args.python
    pythons = {"langgraph": lg_python, "lgembed-py": args.python, "lgembed-c": args.python}
    crashes = []

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    status = {}
    for impl in IMPLS:
        outcome = spawn(pythons[impl], impl, PROBE, args)
        if outcome.kind == "ok":
            status[impl] = ("ok", outcome.data["info"])
            continue
        if outcome.kind == "crash":
            crashes.append((impl, PROBE, outcome.data))
            status[impl] = ("na", "n/a (probe crashed, stderr tail at the end)")
        elif impl == "langgraph" and args.langgraph_python is None:
            reason = f"skipped: langgraph not importable in {lg_python} ({outcome.data})"
            status[impl] = ("na", reason)
        else:
            status[impl] = ("na", f"n/a ({outcome.data})")
        log(f"{impl}: {status[impl][1]}; column skipped")

    available = [i for i in IMPLS if status[i][0] == "ok"]
    results = {}  # (impl, metric name) -> row dict | n/a reason
    order = []  # (metric name, unit) in table order
    total = len(workloads) * len(available)
    step = 0
    for name in workloads:
        wl = WORKLOADS[name]
        expected = [(name, wl.unit)] + ([(f"{name}/invoke", wl.run_unit)] if wl.run_unit else [])
        seen = list(expected)
        for impl in available:
            step += 1
            log(f"[{step}/{total}] {name} on {impl} ...")
            outcome = spawn(pythons[impl], impl, name, args)
            if outcome.kind == "ok":
                for row in outcome.data["metrics"]:
                    results[(impl, row["name"])] = row
                    if (row["name"], row["unit"]) not in seen:
                        seen.append((row["name"], row["unit"]))
            else:
                if outcome.kind == "crash":
                    crashes.append((impl, name, outcome.data))
                    reason = "crashed (stderr tail at the end)"
                else:
                    reason = f"n/a ({outcome.data})"
                for metric, _ in expected:
                    results[(impl, metric)] = reason
        order.extend(seen)

    machine = machine_info()
    workload_notes = [f"{w}: {WORKLOADS[w].note}" for w in workloads if WORKLOADS[w].note]
    print(render(args, machine, status, results, order, workload_notes))
    for impl, name, tail in crashes:
        print(f"\nworker crashed: {impl} {name}: {tail}", file=sys.stderr)

    if args.json:
        raw = {
            "machine": machine,
            "settings": {
                "min_time": args.min_time,
                "batches": args.batches,
                "statistic": "median of batch means",
                "scratch_parent": os.path.dirname(args.scratch),
            },
            "implementations": {
                i: (status[i][1] if status[i][0] == "ok" else {"unavailable": status[i][1]})
                for i in IMPLS
            },
            "results": [
                {
                    "implementation": impl,
                    "metric": metric,
                    **({k: v for k, v in r.items() if k != "name"} if isinstance(r, dict)
                       else {"error": r}),
                }
                for (impl, metric), r in results.items()
            ],
            "crashes": [
                {"implementation": i, "workload": w, "stderr_tail": t} for i, w, t in crashes
            ],
            "derived": [
                {"ratio": label, **per_impl} for label, per_impl in derived_ratios(results)
            ],
        }
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=2, sort_keys=True)
            f.write("\n")
    return 1 if crashes else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Benchmark lgembed (compiled, pure) against LangGraph.",
        epilog="Workloads: " + ", ".join(WORKLOADS),
    )
    p.add_argument("--python", default=sys.executable,
                   help="interpreter with lgembed installed (default: this one)")
    p.add_argument("--langgraph-python", default=None,
                   help="interpreter with langgraph installed (default: --python, "
                        "column skipped if langgraph is not importable there)")
    p.add_argument("--only", action="append", choices=list(WORKLOADS) + list(GROUPS),
                   metavar="NAME",
                   help="run only this workload or group (repeatable); groups: "
                        + ", ".join(f"{g} = {' + '.join(ws)}" for g, ws in GROUPS.items()))
    p.add_argument("--quick", action="store_true",
                   help="short runs (0.05 s, 3 batches) for a smoke test")
    p.add_argument("--min-time", type=float, default=None,
                   help="minimum timed seconds per measurement (default 0.3, --quick 0.05)")
    p.add_argument("--batches", type=int, default=None,
                   help="minimum number of batches (default 5, --quick 3)")
    p.add_argument("--timeout", type=float, default=900.0,
                   help="seconds before a worker counts as crashed (default 900)")
    p.add_argument("--json", metavar="FILE", help="also write raw numbers to FILE")
    p.add_argument("--tmp-dir", default=None, metavar="DIR",
                   help="where the run's scratch directory (checkpoint files) is created "
                        "(default: the system temporary directory)")
    p.add_argument("--scratch", default=None, help=argparse.SUPPRESS)  # worker side
    p.add_argument("--worker", nargs=2, metavar=("IMPL", "WORKLOAD"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.min_time is None:
        args.min_time = 0.05 if args.quick else 0.3
    if args.batches is None:
        args.batches = 3 if args.quick else 5
    if args.worker:
        impl, workload = args.worker
        if impl not in IMPLS or (workload != PROBE and workload not in WORKLOADS):
            p.error(f"--worker: unknown implementation or workload {impl!r} {workload!r}")
        worker(impl, workload, args.min_time, args.batches, args.scratch)
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
