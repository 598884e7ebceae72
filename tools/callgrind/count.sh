#!/bin/bash
# Instruction counts per unit of the benchmark's workloads (BENCHMARKS.md, "Where the
# remaining time per superstep goes"), compiled build, with callgrind:
#   bash tools/callgrind/count.sh [PYTHON]
# Each workload runs twice under valgrind: its setup plus N timed calls, and its setup
# alone; the difference is divided by the units (calls x supersteps). Needs valgrind.
# Set PYTHONPATH to count another checkout with the same interpreter.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${1:-$here/../../.venv/bin/python}"
ir() {
  LGEMBED_EXTENSIONS=required valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$python" "$here/shapes.py" "$1" "$2" 2>&1 | awk '/refs/ {gsub(",", "", $4); print $4}'
}
# per WORKLOAD RUNS UNITS_PER_RUN
per() { echo $(( ($(ir "$1" "$2") - $(ir "$1" 0)) / ($2 * $3) )); }
echo "invoke_1node, per invoke:                $(per invoke_1node 3000 1)"
echo "chain10, per invoke (10 supersteps):     $(per chain10 300 1)"
echo "stream_updates, per stream call:         $(per stream_updates 300 1)"
echo "loop1000, per superstep:                 $(per loop1000 3 1000)"
echo "chain10_memsaver, per superstep:         $(per chain10_memsaver 100 10)"
echo "chain10_lmdb_vs_sqlite (LMDB), per superstep: $(per chain10_lmdb_vs_sqlite 100 10)"
