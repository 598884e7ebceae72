"""`python -m lgembed --version`: the package version and the build of its hot paths."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lgembed", description=__doc__)
    parser.add_argument("--version", action="store_true", help="print version and build, then exit")
    args = parser.parse_args(argv)
    import lgembed
    from lgembed import _engine, _speedups

    if args.version:
        engine = "c" if _engine.compiled() else "py"
        print(
            f"lgembed {lgembed.__version__} ({_speedups.IMPLEMENTATION} build, engine {engine}, "
            f"LGEMBED_EXTENSIONS={_speedups.MODE})"
        )
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
