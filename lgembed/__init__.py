"""lgembed: a LangGraph-compatible graph runtime for constrained Linux devices.

Replace `langgraph` with `lgembed` in a LangGraph program's imports and it runs
here. `lgembed.IMPLEMENTATION` says which build of the compiled modules is in use
("c" compiled, "py" pure; `lgembed._engine`, the one build switch); it is computed on
first access so that `import lgembed` stays free of work.
"""

from typing import Any

from lgembed import _engine

_engine.install()
# the compiled modules load from the build LGEMBED_EXTENSIONS selects (lgembed/_engine.py)

__version__ = "0.1.0"
__all__ = ("IMPLEMENTATION", "__version__")


def __getattr__(name: str) -> Any:
    if name == "IMPLEMENTATION":
        return _engine.IMPLEMENTATION
    raise AttributeError(f"module 'lgembed' has no attribute {name!r}")
