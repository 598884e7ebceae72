"""Build script: the lgembed package plus the Cython build of its compiled modules.

Metadata lives in pyproject.toml; this file only adds the extension modules.

Every module of `ENGINE` in `lgembed/_engine.py` (read here from the file's text, so
the two lists cannot drift) is compiled in place from its own source, typed by the
augmenting declarations beside it (`lgembed/_channels.py` + `lgembed/_channels.pxd`
-> `lgembed/_channels.c` -> the extension `lgembed/_channels.<EXT_SUFFIX>`, docs/DESIGN.md
§3). At run time `lgembed._engine` chooses the extensions or the sources, all or none.

Without Cython, the generated `.c` files shipped in the sdist are compiled instead
(msgpack's approach). They are generated files (see .gitignore).

Environment variables (build time; `lgembed._engine` reads the run-time one):

LGEMBED_EXTENSIONS    auto (default, also when empty) or required: build every module;
                      a failed compile fails the build (no silent pure fallback).
                      off: build a pure-Python package on purpose (prints a banner).
LGEMBED_DEBUG_BUILD   1: compile with -O0 -g3 for gdb.       0 or empty: optimized.
LGEMBED_CYTHON_TRACE  1: Cython line tracing (coverage, profilers; slow).  0 or empty: off.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

_MODES = ("auto", "off", "required")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")

CYTHON_DIRECTIVES = {
    "language_level": 3,
    "embedsignature": True,  # compiled functions keep the source's signatures in __doc__
    "binding": True,  # methods are cyfunctions: introspectable, descriptors like def
    "annotation_typing": False,  # annotations are documentation, as in the pure build
}
# Cython ignores `# cython:` headers in an augmenting .pxd, so directives live here


def read_tuple(path: Path, name: str) -> tuple[str, ...]:
    """Returns the literal tuple assigned to `name` in `path`, without importing it.

    Raises:
        RuntimeError: the file has no literal `name = (...)` assignment.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    msg = f"Reading the modules to compile: no literal `{name} = (...)` in {path}"
    raise RuntimeError(msg)


ENGINE = read_tuple(ROOT / "lgembed" / "_engine.py", "ENGINE")
"""Modules compiled in place; equals lgembed._engine.ENGINE (tested)."""


def _mode() -> str:
    mode = os.environ.get("LGEMBED_EXTENSIONS", "auto").strip().lower() or "auto"
    if mode not in _MODES:
        msg = f"LGEMBED_EXTENSIONS must be one of {', '.join(_MODES)} (got {mode!r})"
        raise ValueError(msg)
    return mode


def _flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    msg = f"{name} must be 1 or 0 (got {raw!r})"
    raise ValueError(msg)


def _banner(*lines: str) -> None:
    width = max(len(line) for line in lines)
    border = "*" * (width + 4)
    print(border, *(f"* {line.ljust(width)} *" for line in lines), border, sep="\n", file=sys.stderr)


def _was_traced(c_file: Path) -> bool:
    """True if the generated C file was made with line tracing (from Cython's metadata header)."""
    with c_file.open(encoding="utf-8", errors="replace") as f:
        head = f.read(4096)
    return "CYTHON_TRACE" in head.split("END: Cython Metadata", 1)[0]


def _extensions(debug: bool, trace: bool) -> list:
    """The Extension objects of `ENGINE`, cythonized when Cython is importable.

    Raises:
        RuntimeError: neither Cython nor the generated C sources are available.
    """
    from setuptools import Extension

    compile_args = ["-O0", "-g3"] if debug else []
    macros = [("CYTHON_TRACE", "1"), ("CYTHON_TRACE_NOGIL", "1")] if trace else []
    try:
        from Cython.Build import cythonize
    except ImportError:
        cythonize = None

    extensions = []
    for name in ENGINE:
        source = name.replace(".", "/") + (".py" if cythonize is not None else ".c")
        if cythonize is None and not (ROOT / source).exists():
            msg = (
                f"Building {name}: Cython is not installed and {source} is missing (a git "
                f"checkout ships no generated C). Install Cython>=3, or set "
                f"LGEMBED_EXTENSIONS=off for a pure-Python build."
            )
            raise RuntimeError(msg)
        pxd = name.replace(".", "/") + ".pxd"
        # an augmenting .pxd beside the source (e.g. lgembed/pregel/_loop.pxd) types it
        depends = [pxd] if (ROOT / pxd).exists() else []
        extensions.append(
            Extension(name, [source], depends=depends, define_macros=macros, extra_compile_args=compile_args)
        )
    if cythonize is None:
        return extensions
    directives = dict(CYTHON_DIRECTIVES)
    if trace:
        directives.update(linetrace=True, profile=True)
    generated = [ROOT / (name.replace(".", "/") + ".c") for name in ENGINE]
    force = any(c.exists() and _was_traced(c) != trace for c in generated)
    return cythonize(
        extensions,
        compiler_directives=directives,
        force=force,
    )


def _failed_banner() -> None:
    _banner(
        "Building lgembed's compiled modules FAILED (see the error above).",
        "lgembed does not fall back to pure Python silently. To build a",
        "pure-Python package on purpose, set LGEMBED_EXTENSIONS=off.",
    )


def _build_ext_class():
    from setuptools.command.build_ext import build_ext

    class BuildExt(build_ext):
        """build_ext that says loudly that a compile failed and how to build without it."""

        def run(self) -> None:
            try:
                super().run()
            except Exception:
                _failed_banner()
                raise

    return BuildExt


def main() -> None:
    from setuptools import setup

    os.chdir(ROOT)
    mode = _mode()
    debug = _flag("LGEMBED_DEBUG_BUILD")
    trace = _flag("LGEMBED_CYTHON_TRACE")
    if mode == "off":
        _banner(
            "LGEMBED_EXTENSIONS=off: building a pure-Python lgembed.",
            "The compiled modules are not built.",
        )
        ext_modules = []
    elif mode == "auto" and sys.implementation.name != "cpython":
        _banner(
            f"{sys.implementation.name}: building a pure-Python lgembed.",
            "Set LGEMBED_EXTENSIONS=required to build the compiled modules anyway.",
        )
        ext_modules = []
    else:
        try:
            ext_modules = _extensions(debug, trace)
        except Exception:  # Cython errors, or neither Cython nor generated C
            _failed_banner()
            raise
    setup(ext_modules=ext_modules, cmdclass={"build_ext": _build_ext_class()})


if __name__ == "__main__":
    main()
