"""Memory an InMemorySaver retains per thread: lgembed (both builds) beside LangGraph.

Why this script exists: issue 15's acceptance 3 ("memory retained per thread, 1,000
threads of a checkpointed 10-node chain in an InMemorySaver, measured with tracemalloc
after gc.collect()") needs a figure that allocator effects do not hide, with the RSS
figure beside it. Each measurement runs in a fresh interpreter:

- the graph is tools/bench.py's chain10 (`_chain10`: a `TypedDict` with one int key
  `n`, nodes n0..n9 in a chain from START to END, each returning `{"n": n + 1}`),
  compiled with an `InMemorySaver`;
- one warm-up invoke on thread "warm-up", then `gc.collect()`, then the baseline;
- 1,000 invokes of `{"n": 0}`, each on a new thread `t0` .. `t999`;
- `gc.collect()`, then the figure: (after - before) / 1000.

Mode "tracemalloc": tracing starts before the graph is imported (`tracemalloc.start()`
first thing), and the figure is the difference of `tracemalloc.get_traced_memory()[0]`
(current size). Mode "rss": no tracing (its bookkeeping would inflate RSS); the figure
is the difference of VmRSS. Both modes assert the last thread's state is `{"n": 10}`.

Usage:
    .venv/bin/python tools/memory_per_thread.py [--langgraph-python /tmp/lgref/bin/python] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

THREADS = 1000

_CHILD = """
import sys
MODE = sys.argv[1]
if MODE == "tracemalloc":
    import tracemalloc
    tracemalloc.start()
import gc
from typing import TypedDict
from {pkg}.checkpoint.memory import InMemorySaver
from {pkg}.graph import END, START, StateGraph


def vmrss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def size():
    return tracemalloc.get_traced_memory()[0] if MODE == "tracemalloc" else vmrss_kb() * 1024


class Counter(TypedDict):
    n: int


def _inc(state):
    return {{"n": state["n"] + 1}}


g = StateGraph(Counter)
prev = START
for i in range(10):
    g.add_node(f"n{{i}}", _inc)
    g.add_edge(prev, f"n{{i}}")
    prev = f"n{{i}}"
g.add_edge(prev, END)
saver = InMemorySaver()
app = g.compile(checkpointer=saver)
assert app.invoke({{"n": 0}}, {{"configurable": {{"thread_id": "warm-up"}}}}) == {{"n": 10}}
gc.collect()
before = size()
for i in range({threads}):
    out = app.invoke({{"n": 0}}, {{"configurable": {{"thread_id": f"t{{i}}"}}}})
assert out == {{"n": 10}}, out
gc.collect()
after = size()
assert app.get_state({{"configurable": {{"thread_id": "t{last}"}}}}).values == {{"n": 10}}
print((after - before) / {threads})
"""


def measure(python: str, pkg: str, mode: str, env: dict) -> float:
    """Bytes retained per thread, from one fresh interpreter.

    Raises:
        RuntimeError: when the child fails (its stderr's tail is in the message).
    """
    code = _CHILD.format(pkg=pkg, threads=THREADS, last=THREADS - 1)
    proc = subprocess.run([python, "-c", code, mode], capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"measuring {pkg} ({mode}) with {python} failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--langgraph-python", default="/tmp/lgref/bin/python")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per figure (median reported)")
    parser.add_argument("--only", choices=("c", "py", "langgraph"), action="append")
    args = parser.parse_args()
    impls = [
        ("lgembed c", sys.executable, "lgembed", "required"),
        ("lgembed py", sys.executable, "lgembed", "off"),
        ("langgraph", args.langgraph_python, "langgraph", None),
    ]
    results: dict[str, dict[str, list[float]]] = {}
    for name, python, pkg, ext in impls:
        if args.only and name.split()[-1] not in args.only:
            continue
        env = dict(os.environ)
        if ext:
            env["LGEMBED_EXTENSIONS"] = ext
        results[name] = {mode: [measure(python, pkg, mode, env) for _ in range(args.runs)] for mode in ("tracemalloc", "rss")}
    lg = results.get("langgraph")
    print(f"memory retained per thread, {THREADS} threads of chain10 in an InMemorySaver (median of {args.runs}; range)")
    for name, modes in results.items():
        cells = []
        for mode in ("tracemalloc", "rss"):
            values = modes[mode]
            median = statistics.median(values)
            cell = f"{mode} {median / 1024:7.2f} kB [{min(values) / 1024:.2f}-{max(values) / 1024:.2f}]"
            if lg and name != "langgraph":
                ref = statistics.median(lg[mode])
                cell += f" = 1/{ref / median:.2f} of LangGraph" if median > 0 else ""
            cells.append(cell)
        print(f"{name:11} " + " | ".join(cells))


if __name__ == "__main__":
    main()
