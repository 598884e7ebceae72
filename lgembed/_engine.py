"""Chooses the compiled or the source build of the engine modules, once per process.

Why this module exists: besides the hot kernels (`lgembed._speedups`), the engine's
step loop, tasks, node calls, branches and checkpointing, and the ids, serializer
and checkpoint savers (`ENGINE`) are compiled by Cython too (DESIGN.md §3), each in
place: `lgembed/pregel/_loop.py` becomes the
extension module `lgembed/pregel/_loop.<EXT_SUFFIX>` beside it, from the same source.
Python's import system prefers an extension module to a source file of the same name,
so `lgembed/__init__.py` installs `FINDER`, which decides for every engine module,
all or nothing, following `LGEMBED_EXTENSIONS`:

- `off`: the sources.
- `auto`: the extensions when every one is built and not older than its source
  (an edited source wins until it is rebuilt) and the hot kernels are compiled too;
  else the sources.
- `required`: the extensions, or ImportError naming what is missing or stale.

The check costs one `stat` of each engine file, on the first engine import.
`ENGINE` is read by setup.py from this file's text.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from typing import Any

__all__ = ("ENGINE", "FINDER", "SOURCE_ONLY", "compiled")

ENGINE = (
    "lgembed.pregel._loop",
    "lgembed.pregel._task",
    "lgembed.pregel._node",
    "lgembed.pregel._call",
    "lgembed.pregel._exec",
    "lgembed.pregel._persist",
    "lgembed.pregel.main",
    "lgembed.graph._branch",
    "lgembed._ids",
    "lgembed.checkpoint._id",
    "lgembed.checkpoint.base",
    "lgembed.checkpoint.serde",
    "lgembed.checkpoint._memory_codec",
    "lgembed.checkpoint._memory_store",
    "lgembed.checkpoint.memory",
    "lgembed.checkpoint.lmdb",
    "lgembed.checkpoint._lmdb_env",
)
# engine modules compiled in place; setup.py reads this tuple from this file's text
SOURCE_ONLY = ("lgembed.pregel._runner",)
# engine modules that always load from source, even if an old build of them lies
# beside it: compiled, the runner's worker loop holds the GIL between tasks longer and
# a parallel step got slower (branches10x5: 185 us per invoke, 110 us from source)

_ROOT = os.path.dirname(os.path.abspath(__file__))
_STALE_AFTER = 2.0
# seconds a source may be newer than its extension before the extension counts as
# stale (an installed package's files are written within moments of each other)
_decision: list = []


def _source(name: str) -> str:
    return os.path.join(_ROOT, *name.split(".")[1:]) + ".py"


def _extension(name: str) -> str | None:
    """The built extension file of an engine module, or None."""
    base = os.path.join(_ROOT, *name.split(".")[1:])
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(base + suffix):
            return base + suffix
    return None


def _newest_source(name: str) -> float:
    """Modification time of a module's source, or of its augmenting .pxd if newer."""
    source = _source(name)
    newest = os.path.getmtime(source)
    pxd = source[:-3] + ".pxd"
    if os.path.exists(pxd):
        newest = max(newest, os.path.getmtime(pxd))
    return newest


def _problems() -> list[str]:
    """Engine modules whose extension is missing or older than the source."""
    problems = []
    for name in ENGINE:
        ext = _extension(name)
        if ext is None:
            problems.append(f"{name} (not built)")
        elif _newest_source(name) - os.path.getmtime(ext) > _STALE_AFTER:
            problems.append(f"{name} (source newer than its build)")
    return problems


def compiled() -> bool:
    """Whether the engine modules load from their compiled build (decided once).

    Raises:
        ImportError: LGEMBED_EXTENSIONS=required and a compiled engine module is
            missing or stale.
    """
    if _decision:
        return _decision[0]
    from lgembed._speedups import IMPLEMENTATION, MODE

    if MODE == "off":
        use = False
    else:
        problems = _problems()
        if MODE == "required" and problems:
            msg = (
                "LGEMBED_EXTENSIONS=required, but compiled engine modules are missing or stale: "
                f"{', '.join(problems)}. Build them (python setup.py build_ext --inplace, or "
                "pip install . with a C compiler) or unset LGEMBED_EXTENSIONS."
            )
            raise ImportError(msg, name=problems[0].split(" ")[0])
        use = not problems and IMPLEMENTATION == "c"
    _decision.append(use)
    return use


class _Finder:
    """Loads each engine module from the build `compiled()` chose (a meta path finder;
    not derived from importlib.abc.MetaPathFinder, whose import costs ~20 ms)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname in SOURCE_ONLY:
            source = _source(fullname)
            return importlib.util.spec_from_file_location(
                fullname, source, loader=importlib.machinery.SourceFileLoader(fullname, source)
            )
        if fullname not in ENGINE:
            return None
        if compiled():
            location = _extension(fullname)
            loader: Any = importlib.machinery.ExtensionFileLoader(fullname, location)
        else:
            location = _source(fullname)
            loader = importlib.machinery.SourceFileLoader(fullname, location)
        return importlib.util.spec_from_file_location(fullname, location, loader=loader)


FINDER = _Finder()
"""The finder `lgembed/__init__.py` puts first on `sys.meta_path`."""


def install() -> None:
    """Puts `FINDER` on `sys.meta_path` (once)."""
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
