# Sourced by tools/demo.sh and tools/test.sh: creates .venv (once) and installs lgembed
# into it in editable mode, which builds the compiled modules. When nothing the build
# depends on changed (tools/_build_stamp.py) and the compiled build still loads, the
# existing .venv is reused and nothing is rebuilt.
# Needs: python3 (3.10+) with venv, a C compiler, and access to the package index.
set -euo pipefail
PY=${PYTHON:-python3}
EXTRAS=${LGEMBED_EXTRAS:-test,pydantic,hardware}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
_stamp=$(.venv/bin/python tools/_build_stamp.py "$EXTRAS")
if [ -f .venv/.lgembed-build ] && [ "$(cat .venv/.lgembed-build)" = "$_stamp" ] \
   && LGEMBED_EXTENSIONS=required .venv/bin/python -c "import lgembed.pregel.main, lgembed._channels" 2>/dev/null; then
  echo "lgembed: .venv is current (build and dependencies unchanged), reused"
else
  rm -f .venv/.lgembed-build
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]"
  echo "$_stamp" > .venv/.lgembed-build
fi
