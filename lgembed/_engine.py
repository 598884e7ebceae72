"""The one build switch: compiled or source build of lgembed's compiled modules, once per process.

Why this module exists: the hot paths (channels, superstep kernels, step loop, tasks,
node calls, branches, checkpointing, ids, serializer, savers: `ENGINE`) are written once
in plain Python and compiled by Cython in place, from that same source, typed by an
augmenting `.pxd` beside it (docs/DESIGN.md §3): `lgembed/pregel/_loop.py` becomes the
extension module `lgembed/pregel/_loop.<EXT_SUFFIX>` beside it. Python's import
system prefers an extension module to a source file of the same name, so
`lgembed/__init__.py` installs `FINDER`, which loads every module of `ENGINE` from
the build `compiled()` chose, all or nothing, following `LGEMBED_EXTENSIONS` (read
here and in setup.py only; unknown values raise ValueError):

- `off`: the sources.
- `auto` (default, also when empty): the extensions on CPython when every one is
  built and current, else the sources.
- `required`: the extensions, or ImportError naming what is missing or stale.

One staleness rule: an extension older than its source or its augmenting `.pxd` (by
more than `_STALE_AFTER` seconds) is stale: never used under auto, refused under
required. `IMPLEMENTATION` ("c" or "py") says which build is in use, for every
compiled module; it is the whole truth. The decision costs one `stat` of each
compiled module's files, on first use. `ENGINE` is read by setup.py and
tools/_build_stamp.py from this file's text.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

__all__ = ("ENGINE", "FINDER", "HOT", "IMPLEMENTATION", "MODE", "SOURCE_ONLY", "compiled", "load")

_VALUES = ("auto", "off", "required")
# accepted values of LGEMBED_EXTENSIONS

MODE = os.environ.get("LGEMBED_EXTENSIONS", "auto").strip().lower() or "auto"
"""The selection mode read from LGEMBED_EXTENSIONS: "auto", "off" or "required"."""
if MODE not in _VALUES:
    _msg = f"LGEMBED_EXTENSIONS must be one of {', '.join(_VALUES)} (got {MODE!r})"
    raise ValueError(_msg)

ENGINE = (
    "lgembed._channels",
    "lgembed._algo",
    "lgembed.pregel._loop",
    "lgembed.pregel._task",
    "lgembed.pregel._node",
    "lgembed.pregel._call",
    "lgembed.pregel._exec",
    "lgembed.pregel._driver",
    "lgembed.pregel._persist",
    "lgembed.pregel._setup",
    "lgembed.pregel._chunks",
    "lgembed.pregel.main",
    "lgembed.pregel._branch",
    "lgembed._ids",
    "lgembed.checkpoint._id",
    "lgembed.checkpoint.base",
    "lgembed.checkpoint.serde",
    "lgembed.checkpoint._memory_codec",
    "lgembed.checkpoint._memory_store",
    "lgembed.checkpoint.memory",
    "lgembed.checkpoint.lmdb",
    "lgembed.checkpoint._lmdb_env",
    "lgembed.checkpoint._lmdb_records",
    "lgembed.graph.message",
    "lgembed.messages._base",
)
# every module compiled in place; setup.py reads this tuple from this file's text
HOT = ("lgembed._channels", "lgembed._algo")
# the hot kernels whose two builds the parity tests load side by side (`load`)
SOURCE_ONLY = ("lgembed.pregel._runner",)
# modules that always load from source, even if an old build of them lies beside it:
# compiled, the runner's worker loop holds the GIL between tasks longer and a parallel
# step got slower (branches10x5: 185 us per invoke, 110 us from source)

_ROOT = os.path.dirname(os.path.abspath(__file__))
_STALE_AFTER = 2.0
# seconds a source may be newer than its extension before the extension counts as
# stale (an installed package's files are written within moments of each other)
_decision: list = []
_loaded: dict = {}
# kind -> namespace of `load`


def _source(name: str) -> str:
    return os.path.join(_ROOT, *name.split(".")[1:]) + ".py"


def _extension(name: str) -> str | None:
    """The built extension file of a compiled module, or None."""
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


def _problem(name: str) -> str | None:
    """Why the build of one module cannot be used (missing or stale), or None."""
    ext = _extension(name)
    if ext is None:
        return f"{name} (not built)"
    if _newest_source(name) - os.path.getmtime(ext) > _STALE_AFTER:
        return f"{name} (source newer than its build)"
    return None


def _problems() -> list[str]:
    """Compiled modules whose extension is missing or older than the source or .pxd."""
    return [p for p in map(_problem, ENGINE) if p is not None]


def compiled() -> bool:
    """Whether the compiled modules load from their compiled build (decided once).

    Raises:
        ImportError: LGEMBED_EXTENSIONS=required and a compiled module is missing or stale.
    """
    if _decision:
        return _decision[0]
    if MODE == "off" or (MODE == "auto" and sys.implementation.name != "cpython"):
        use = False
    else:
        problems = _problems()
        if MODE == "required" and problems:
            msg = (
                "LGEMBED_EXTENSIONS=required, but compiled modules are missing or stale: "
                f"{', '.join(problems)}. Build them (python setup.py build_ext --inplace, or "
                "pip install . with a C compiler) or unset LGEMBED_EXTENSIONS."
            )
            raise ImportError(msg, name=problems[0].split(" ")[0])
        use = not problems
    _decision.append(use)
    return use


def __getattr__(name: str) -> Any:
    if name == "IMPLEMENTATION":
        # "c" when the compiled modules are in use, else "py"; never changes
        return "c" if compiled() else "py"
    raise AttributeError(f"module 'lgembed._engine' has no attribute {name!r}")


def _spec(name: str, kind: str) -> Any:
    if kind == "c":
        location = _extension(name)
        loader: Any = importlib.machinery.ExtensionFileLoader(name, location)
    else:
        location = _source(name)
        loader = importlib.machinery.SourceFileLoader(name, location)
    return importlib.util.spec_from_file_location(name, location, loader=loader)


def load(kind: str) -> types.SimpleNamespace:
    """One build of the hot kernels (`HOT`), whichever build the process uses.

    Changes no global state (the build not in use is loaded outside `sys.modules`), so
    tests can use both builds side by side.

    Args:
        kind: "c" for the compiled build, "py" for the source.

    Returns:
        A namespace with the public names (`__all__`) of every hot module, and
        `IMPLEMENTATION` set to `kind`.

    Raises:
        ValueError: `kind` is not "c" or "py".
        ModuleNotFoundError: kind "c" and a hot module is not built.
        ImportError: kind "c" and a hot module's build is stale, or a module lacks a
            name of its `__all__`.
    """
    if kind not in ("c", "py"):
        msg = f"kind must be one of c, py (got {kind!r})"
        raise ValueError(msg)
    found = _loaded.get(kind)
    if found is not None:
        return found
    active = "c" if compiled() else "py"
    names: dict[str, object] = {}
    for name in HOT:
        if kind == active:
            module = importlib.import_module(name)
        else:
            problem = _problem(name) if kind == "c" else None
            if problem is not None:
                msg = f"Loading the compiled build of {name}: {problem}. Rebuild it (pip install -e .)."
                cls = ModuleNotFoundError if problem.endswith("(not built)") else ImportError
                raise cls(msg, name=name)
            spec = _spec(name, kind)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        for attr in module.__all__:
            try:
                names[attr] = getattr(module, attr)
            except AttributeError:
                # Why: a name the .pxd declares `cdef` is no module attribute of the build
                msg = f"{name} ({kind} build) does not define {attr!r} listed in its __all__ (declared cdef in its .pxd?)"
                raise ImportError(msg, name=name) from None
    found = _loaded[kind] = types.SimpleNamespace(IMPLEMENTATION=kind, **names)
    return found


class _Finder:
    """Loads each compiled module from the build `compiled()` chose (a meta path finder;
    not derived from importlib.abc.MetaPathFinder, whose import costs ~20 ms)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname in SOURCE_ONLY:
            return _spec(fullname, "py")
        if fullname not in ENGINE:
            return None
        return _spec(fullname, "c" if compiled() else "py")


FINDER = _Finder()
"""The finder `lgembed/__init__.py` puts first on `sys.meta_path`."""


def install() -> None:
    """Puts `FINDER` on `sys.meta_path` (once)."""
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
