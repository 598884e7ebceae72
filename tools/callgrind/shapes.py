"""The benchmark's workloads run a fixed number of times, for instruction counts
(tools/callgrind/count.sh): the graphs, setups and timed calls are tools/bench.py's own,
imported with its `langgraph` -> `lgembed` alias.

    python tools/callgrind/shapes.py WORKLOAD RUNS

WORKLOAD is a name of `bench.WORKLOADS` (a timed one); RUNS how many timed calls follow
the setup (0: the setup only, the baseline whose count is subtracted).
"""

from __future__ import annotations

import os
import sys


def main(name: str, runs: int) -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import bench

    sys.path.pop(0)
    sys.meta_path.insert(0, bench._AliasFinder())
    workload = bench.WORKLOADS[name]
    setup = workload.setup
    if isinstance(setup, dict):
        setup = setup["lgembed"]
    with bench._RESOURCES:
        ctx = setup()
        for _ in range(runs):
            workload.run(ctx)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
