"""Records LangGraph's behaviour for the functional-API and node-cache scenarios.

Run with the reference interpreter (never a dependency of lgembed):

    /tmp/lgref/bin/python tools/record_func_cache.py [--only NAME ...] [--print]

Writes tests/fixtures/func_cache.json, which tests/test_func_parity.py compares
lgembed's records with (tests/func_cache_scenarios.py holds the scenarios).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "func_cache.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--print", action="store_true", help="print records instead of writing the fixture")
    parser.add_argument("--pkg", default="langgraph", help="package to run the scenarios against")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    import func_cache_scenarios as fcs

    a = fcs.api(args.pkg)
    import langgraph

    version = getattr(langgraph, "__version__", None)
    if version is None and args.pkg == "langgraph":
        from importlib.metadata import version as _v

        version = _v("langgraph")
    records = json.loads(FIXTURE.read_text()) if FIXTURE.exists() and args.only else {}
    for name, fn in fcs.SCENARIOS.items():
        if args.only and name not in args.only:
            continue
        try:
            record = fn(a)
        except Exception as exc:  # a scenario that breaks is recorded as such
            record = {"scenario_error": fcs.norm(exc)}
        records[name] = json.loads(json.dumps(record, default=repr))
        if args.print:
            print(name, json.dumps(records[name], indent=1))
    if not args.print:
        records["__langgraph_version__"] = version
        FIXTURE.write_text(json.dumps(dict(sorted(records.items())), indent=1, sort_keys=False) + "\n")
        print(f"wrote {FIXTURE} ({len(records) - 1} scenarios)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
