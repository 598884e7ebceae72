#!/usr/bin/env bash
# The main job: set up .venv, build lgembed, run the demo graph (examples/thermostat.py).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/_venv.sh
exec .venv/bin/python examples/thermostat.py "$@"
