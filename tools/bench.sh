#!/usr/bin/env bash
# The benchmark in one command, on any machine:
#
#     bash tools/bench.sh [tools/bench.py arguments]     e.g. --quick --only loop1000
#
# 1. The LangGraph reference environment: .bench/langgraph-venv, a venv with the
#    versions pinned in tools/bench-requirements.txt (LangGraph 1.2.22, its SQLite
#    saver, langchain-core and their dependencies). Made once; reused while the pin
#    file is unchanged (a copy of it is kept in the venv), rebuilt when it changed.
# 2. lgembed's own .venv (tools/_venv.sh: built once, reused while current).
# 3. tools/bench.py with --langgraph-python pointing at the reference environment.
#
# Needs what tools/_venv.sh needs: python3 (3.10+) with venv, a C compiler, and
# access to the package index. PYTHON picks the interpreter for both environments.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
REF=.bench/langgraph-venv
PINS=tools/bench-requirements.txt
if [ -x "$REF/bin/python" ] && cmp -s "$PINS" "$REF/.pins"; then
  echo "bench: $REF is current (pins unchanged), reused" >&2
else
  echo "bench: creating $REF from $PINS" >&2
  rm -rf "$REF"
  mkdir -p .bench
  "$PY" -m venv "$REF"
  "$REF/bin/python" -m pip install -q --upgrade pip
  "$REF/bin/python" -m pip install -q -r "$PINS"
  cp "$PINS" "$REF/.pins"  # written last: an interrupted install is redone next time
fi
source tools/_venv.sh >&2
exec .venv/bin/python tools/bench.py --langgraph-python "$REF/bin/python" "$@"
