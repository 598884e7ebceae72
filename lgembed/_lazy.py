"""Lazy package attributes: a package's public names load their submodule on first use.

Why: `lgembed.edge` and `lgembed.bridge` list many public names whose submodules pull
in threads, sockets or hardware libraries; `import lgembed.edge` must stay light, so each
name is imported (and cached in the package) only when a program touches it.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

__all__ = ("lazy_attributes",)


def lazy_attributes(
    namespace: dict[str, Any], where: dict[str, str], default: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of a package with lazily loaded names.

    Args:
        namespace: the package's `globals()` (with `__name__` and `__all__`).
        where: public name -> submodule holding it.
        default: the submodule of every public name not in `where`.
    """
    package, names = namespace["__name__"], namespace["__all__"]

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where.get(name, default)}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
