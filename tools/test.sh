#!/usr/bin/env bash
# The whole test suite, twice: compiled build (LGEMBED_EXTENSIONS=required) and pure
# build (LGEMBED_EXTENSIONS=off). Sets up .venv and builds the extensions first.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/_system_deps.sh
source tools/_venv.sh
echo "== compiled build (LGEMBED_EXTENSIONS=required) =="
LGEMBED_EXTENSIONS=required .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
echo "== pure build (LGEMBED_EXTENSIONS=off) =="
LGEMBED_EXTENSIONS=off .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
