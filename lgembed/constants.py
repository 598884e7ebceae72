"""Public constants of the graph API (names and values are LangGraph's)."""

import sys

__all__ = ("START", "END", "TAG_HIDDEN", "TAG_NOSTREAM", "TASKS", "CONF")

START = sys.intern("__start__")
"""The first (virtual) node of a StateGraph; edges from it mark the entry points."""
END = sys.intern("__end__")
"""The last (virtual) node of a StateGraph; edges to it end a path."""
TAG_HIDDEN = sys.intern("langsmith:hidden")
"""Tag of nodes hidden from stream output (the `__start__` node)."""
TAG_NOSTREAM = sys.intern("nostream")
"""Tag that disables token streaming for a chat model."""
TASKS = sys.intern("__pregel_tasks")
"""Channel that carries `Send` packets to the next step."""
CONF = sys.intern("configurable")
"""Config key that holds per-run configurable values."""
