"""The `lgembed` command (also `python -m lgembed`): one dispatcher for every subcommand.

Why this module exists: a device runs graphs from a shell, a script or systemd, not
from a notebook. The subcommands live in `lgembed.cli` (run, threads, graph, doctor,
unit) and `lgembed.service.app` (serve), imported only when chosen, so `lgembed
--version` and `lgembed run` stay quick to start on a small board.

Exit codes (`lgembed.cli._common`): 0 done, 1 usage, 2 error, 3 `run` stopped at an
interrupt, 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import os
import sys

__all__ = ("main",)

_COMMANDS = {
    "run": ("lgembed.cli.run", "run a graph, print its stream as JSON lines"),
    "threads": ("lgembed.cli.threads", "list, show, export, prune and verify the threads of an LMDB environment"),
    "graph": ("lgembed.cli.graph", "print a graph as Mermaid text"),
    "doctor": ("lgembed.cli.doctor", "check the build, versions, LMDB environment, device access and systemd"),
    "unit": ("lgembed.cli.unit", "print a hardened systemd unit for the service"),
}
# subcommand -> (module with add_arguments(parser) and main(args), one-line help)
_SERVE_HELP = "run graphs as a service: triggers, the local API, systemd notify"


def _version() -> str:
    import lgembed
    from lgembed import _engine

    return f"lgembed {lgembed.__version__} ({_engine.IMPLEMENTATION} build, LGEMBED_EXTENSIONS={_engine.MODE})"


def _top_parser() -> object:
    from lgembed.cli._common import Parser

    parser = Parser(
        prog="lgembed",
        description="lgembed: LangGraph-compatible graphs on small Linux devices.",
        epilog="Exit codes: 0 done, 1 usage, 2 error, 3 stopped at an interrupt (run). "
        "`lgembed COMMAND --help` describes a command.",
    )
    parser.add_argument("--version", action="store_true", help="print version and build, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (_module, help_text) in _COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    sub.add_parser("serve", help=_SERVE_HELP, add_help=False)
    return parser


def _serve(argv: list[str]) -> int:
    from lgembed.cli._common import EXIT_ERROR, Parser

    try:
        from lgembed.service import app
    except ImportError as e:
        if getattr(e, "name", None) not in ("lgembed.service", "lgembed.service.app"):
            raise
        print(
            "lgembed serve: not available: lgembed.service.app is missing from this installation "
            f"({e}). Fix: install a complete lgembed",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if any(a in ("-h", "--help") for a in argv):
        parser = Parser(prog="lgembed serve", description=_SERVE_HELP)
        app.add_arguments(parser)
        parser.print_help()
        return 0
    return int(app.main(list(argv)) or 0)


def main(argv: list[str] | None = None) -> int:
    """Runs the `lgembed` command with `argv` (default: `sys.argv[1:]`); returns the exit code.

    Only the chosen subcommand's module is imported.
    """
    import importlib

    from lgembed.cli._common import CliError, Parser

    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv else None
    if command == "serve":
        return _serve(argv[1:])
    try:
        if command not in _COMMANDS:
            parser = _top_parser()
            args = parser.parse_args(argv)  # type: ignore[attr-defined]
            if args.version:
                print(_version())
                return 0
            parser.print_help()  # type: ignore[attr-defined]
            return 0
        module_name, help_text = _COMMANDS[command]
        module = importlib.import_module(module_name)
        parser = Parser(prog=f"lgembed {command}", description=help_text)
        module.add_arguments(parser)
        args = parser.parse_args(argv[1:])
        args.command = command
        return int(module.main(args) or 0)
    except CliError as e:
        prefix = f"lgembed {command}" if command in _COMMANDS else "lgembed"
        print(f"{prefix}: error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("lgembed: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (`| head`): stop quietly, as cat does
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's exit flush quiet
        except OSError:
            pass
        return 0


if __name__ == "__main__":
    sys.exit(main())
