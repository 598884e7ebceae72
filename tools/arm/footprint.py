"""Import + compile time and RSS of one installed package, in fresh processes (tools/test-arm.sh --footprint).

Why: BENCHMARKS.md's import_compile row measured on the board's architecture (under
qemu for aarch64/armv7l) for lgembed and LangGraph installed the same way. The child
is tools/bench.py's import_compile child: import `PKG.graph`, build and compile a
one-node StateGraph; elapsed time from before the import, VmRSS after.

Usage: python footprint.py PKG [RUNS]    prints one JSON object
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

RSS = """
def _vmrss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
"""
CHILD = RSS + """
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
assert app.invoke({{"n": 1}}) == {{"n": 2}}
print(time.perf_counter() - t0, _vmrss_kb())
"""
BARE = RSS + "\nprint(0.0, _vmrss_kb())\n"


def child(code: str) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    t, rss = out.stdout.split()
    return float(t), int(rss)


def main() -> None:
    pkg = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    code = CHILD.format(pkg=pkg)
    child(code)  # warm-up: bytecode caches, page cache
    timed = [child(code) for _ in range(runs)]
    bare = [child(BARE)[1] for _ in range(3)]
    base = statistics.median(bare)
    print(json.dumps({
        "pkg": pkg,
        "import_compile_ms": round(statistics.median(t for t, _ in timed) * 1e3, 1),
        "rss_mb": round(statistics.median(r for _, r in timed) / 1024, 1),
        "rss_added_mb": round((statistics.median(r for _, r in timed) - base) / 1024, 1),
        "bare_rss_mb": round(base / 1024, 1),
        "runs": runs,
    }))


if __name__ == "__main__":
    main()
