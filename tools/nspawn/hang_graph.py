"""The graph `tools/systemd-nspawn-watchdog.sh` serves: its node hangs on the third run of a process.

Why: to show under a real systemd that a hung service is killed by the watchdog and
restarted. The service pets the watchdog only while no superstep has run longer than
its `step_timeout`; this node sleeps for an hour on the third run the process makes,
so the pets stop, systemd kills the process (SIGABRT) and starts it again. The run
that hung is resumed by the new process from its last checkpoint, and is that
process's first run, so it finishes.
"""

from __future__ import annotations

import itertools
import time
from typing import TypedDict

from lgembed.graph import START, StateGraph

__all__ = ("HANG_AT", "graph")

HANG_AT = 3
"""The run of a process whose node hangs."""
_runs = itertools.count(1)
# runs made by this process


class State(TypedDict, total=False):
    runs: int


def work(state: State) -> State:
    """Counts the thread's runs; hangs on the process's HANG_AT-th run."""
    if next(_runs) == HANG_AT:
        time.sleep(3600)  # a node that never returns
    return {"runs": state.get("runs", 0) + 1}


graph = StateGraph(State)
graph.add_node("work", work)
graph.add_edge(START, "work")
