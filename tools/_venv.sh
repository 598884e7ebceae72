# Sourced by tools/demo.sh and tools/test.sh: creates .venv (once) and installs
# lgembed into it in editable mode, which builds the Cython twins of the hot paths.
# Needs: python3 (3.10+) with venv, a C compiler, and access to the package index.
set -euo pipefail
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
.venv/bin/python -m pip install -q -e ".[${LGEMBED_EXTRAS:-test}]"
