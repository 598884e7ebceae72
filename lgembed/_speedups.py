"""Chooses the compiled or the pure build of the hot paths, once per process.

Why one module: the hot paths (`lgembed/_<name>_py.py`) are compiled a second time
by Cython as `lgembed._<name>_c` (DESIGN.md §3). Everything that needs a hot-path
object imports it from here, so the choice is made in one place, is all or nothing,
and is visible as `IMPLEMENTATION` in tests and bug reports (STYLE.md §B).

`LGEMBED_EXTENSIONS` (read here and in setup.py only):
- `auto` (default, also when empty): the compiled twins on CPython when every one of
  them imports, else the pure modules for all.
- `off`: the pure modules.
- `required`: the compiled twins, or ImportError.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from importlib.machinery import EXTENSION_SUFFIXES

__all__ = ("IMPLEMENTATION", "MODE", "load")

_VALUES = ("auto", "off", "required")
# accepted values of LGEMBED_EXTENSIONS

MODE = os.environ.get("LGEMBED_EXTENSIONS", "auto").strip().lower() or "auto"
"""The selection mode read from LGEMBED_EXTENSIONS: "auto", "off" or "required"."""
if MODE not in _VALUES:
    _msg = f"LGEMBED_EXTENSIONS must be one of {', '.join(_VALUES)} (got {MODE!r})"
    raise ValueError(_msg)

_HOT = (
    "channels",
    "algo",
)
# hot modules: lgembed/_<name>_py.py, compiled as lgembed._<name>_c; setup.py reads
# this tuple from this file's text, so adding a module is one line here


def load(kind: str) -> types.SimpleNamespace:
    """Imports one build of every hot module.

    Does not look at LGEMBED_EXTENSIONS and changes no global state, so tests can
    load both builds side by side.

    Args:
        kind: "c" for the compiled twins, "py" for the pure modules.

    Returns:
        A namespace with the public names (`__all__`) of every hot module.

    Raises:
        ValueError: `kind` is not "c" or "py".
        ImportError: a module is missing, a "c" module is not a compiled extension, or a
            module lacks a name of its `__all__`.
    """
    if kind not in ("c", "py"):
        msg = f"kind must be one of c, py (got {kind!r})"
        raise ValueError(msg)
    names: dict[str, object] = {}
    for name in _HOT:
        module_name = f"lgembed._{name}_{kind}"
        module = importlib.import_module(module_name)
        if kind == "c" and not str(getattr(module, "__file__", "")).endswith(tuple(EXTENSION_SUFFIXES)):
            # Why: a stray `_x_c.py` must not pass for the compiled build.
            msg = f"{module_name} is not a compiled extension module (loaded from {module.__file__!r})"
            raise ImportError(msg, name=module_name)
        for attr in module.__all__:
            try:
                names[attr] = getattr(module, attr)
            except AttributeError:
                # Why: a name the .pxd declares `cdef` is no module attribute of the twin
                msg = (
                    f"{module_name} does not define {attr!r} listed in its __all__ "
                    f"(declared cdef in its .pxd, or a stale build?)"
                )
                raise ImportError(msg, name=module_name) from None
    return types.SimpleNamespace(**names)


def _select() -> tuple[str, types.SimpleNamespace]:
    if MODE == "required":
        try:
            return "c", load("c")
        except ImportError as e:
            msg = (
                f"LGEMBED_EXTENSIONS=required, but the compiled modules cannot be "
                f"imported ({e}). Build them (pip install . with a C compiler) or "
                f"unset LGEMBED_EXTENSIONS."
            )
            raise ImportError(msg, name=e.name) from e
    if MODE == "auto" and sys.implementation.name == "cpython":
        try:
            return "c", load("c")
        except ImportError:
            pass
    return "py", load("py")


IMPLEMENTATION, _impl = _select()
"""`IMPLEMENTATION`: "c" when the compiled twins are in use, else "py"; never changes."""

# --- channels (lgembed/_channels_py.py) -------------------------------------------
BaseChannel = _impl.BaseChannel
AnyValue = _impl.AnyValue
BinaryOperatorAggregate = _impl.BinaryOperatorAggregate
EphemeralValue = _impl.EphemeralValue
LastValue = _impl.LastValue
LastValueAfterFinish = _impl.LastValueAfterFinish
NamedBarrierValue = _impl.NamedBarrierValue
NamedBarrierValueAfterFinish = _impl.NamedBarrierValueAfterFinish
Topic = _impl.Topic
UntrackedValue = _impl.UntrackedValue

# --- superstep kernels (lgembed/_algo_py.py) ---------------------------------------
apply_writes = _impl.apply_writes
triggered_nodes = _impl.triggered_nodes
node_triggered = _impl.node_triggered
