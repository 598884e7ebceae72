"""The emulated smoke test of an installed lgembed (tools/test-arm.sh --smoke; also runs natively).

Why: CI cannot afford the whole suite under qemu, so this checks in seconds what a board
needs from the wheels: the build that was asked for is the one loaded (LGEMBED_EXTENSIONS
=required must load every compiled module of the wheel, =off none), a graph checkpointed
to LMDB survives a reopen (interrupt, resume from a new saver on the same directory),
and a serial round trip through lgembed.edge's UART adapter on a real pseudo-terminal
(the echo simulator on the master side). Prints one line per check and the timings.

Usage: LGEMBED_EXTENSIONS=required|off python smoke.py [WORKDIR]
"""

from __future__ import annotations

import operator
import os
import platform
import sys
import tempfile
import time
from typing import Annotated, TypedDict

T0 = time.perf_counter()


def check_build() -> str:
    """The selected build, and every engine module loaded from the matching file kind."""
    import lgembed
    from lgembed import _engine

    mode = _engine.MODE
    want = {"required": "c", "off": "py"}.get(mode)
    impl = _engine.IMPLEMENTATION
    if want and impl != want:
        raise SystemExit(f"FAIL: LGEMBED_EXTENSIONS={mode} but IMPLEMENTATION={impl!r}")
    import importlib

    kinds = set()
    for name in _engine.ENGINE:
        mod = importlib.import_module(name)
        kinds.add("c" if mod.__file__.endswith(".so") else "py")
    if want and kinds != {want}:
        raise SystemExit(f"FAIL: LGEMBED_EXTENSIONS={mode} but engine modules loaded as {sorted(kinds)}")
    return f"lgembed {lgembed.__version__} build={impl} modules={','.join(sorted(kinds))}"


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int


def check_graph_with_lmdb(workdir: str) -> str:
    """A 3-node graph interrupted before its last node, resumed from a fresh saver."""
    from lgembed.checkpoint.lmdb import LmdbSaver
    from lgembed.graph import END, START, StateGraph

    def build():
        g = StateGraph(State)
        g.add_node("a", lambda s: {"log": ["a"], "n": s.get("n", 0) + 1})
        g.add_node("b", lambda s: {"log": ["b"], "n": s["n"] * 10})
        g.add_node("c", lambda s: {"log": ["c"], "n": s["n"] + 5})
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        g.add_edge("c", END)
        return g

    path = os.path.join(workdir, "ckpt")
    cfg = {"configurable": {"thread_id": "smoke"}}
    # 64 MiB map at most: a 32-bit board cannot map GiBs (armhf fails at 3 GiB)
    with LmdbSaver(path, map_size=1 << 20, max_map_size=64 << 20) as saver:
        app = build().compile(checkpointer=saver, interrupt_before=["c"])
        app.invoke({"n": 1}, cfg)
        snap = app.get_state(cfg)
        if snap.next != ("c",) or snap.values["n"] != 20:
            raise SystemExit(f"FAIL: interrupted state {snap.values} next={snap.next}")
    with LmdbSaver(path, map_size=1 << 20, max_map_size=64 << 20) as saver:
        app = build().compile(checkpointer=saver, interrupt_before=["c"])
        out = app.invoke(None, cfg)
        history = list(app.get_state_history(cfg))
    if out != {"log": ["a", "b", "c"], "n": 25}:
        raise SystemExit(f"FAIL: resumed result {out}")
    return f"graph + LmdbSaver: resumed after reopen -> n={out['n']}, {len(history)} checkpoints"


def check_uart_pty() -> str:
    """A UART adapter (pyserial) on a pty, the echo simulator on the master side."""
    from lgembed.edge import load_device

    cfg = {"adapters": {"port": {"kind": "uart", "port": "/dev/ttyS1", "baudrate": 115200, "simulator": "echo"}}}
    t = time.perf_counter()
    with load_device(cfg, simulate=True) as dev:
        uart = dev.adapter("port")
        for i in range(20):
            line = f"PING {i}\n".encode()
            uart.write(line)
            got = uart.readline(timeout=5.0)
            if got != line:
                raise SystemExit(f"FAIL: UART echo sent {line!r}, got {got!r}")
    return f"UART over pty, echo simulator: 20 round trips in {(time.perf_counter() - t) * 1000:.0f} ms"


def main() -> None:
    workdir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="lgembed-smoke-")
    print(f"smoke: {platform.machine()} CPython {platform.python_version()} ({sys.executable})")
    for check in (check_build, lambda: check_graph_with_lmdb(workdir), check_uart_pty):
        t = time.perf_counter()
        print(f"  ok  {check()}  [{time.perf_counter() - t:.2f} s]")
    print(f"smoke passed in {time.perf_counter() - T0:.2f} s")


if __name__ == "__main__":
    main()
