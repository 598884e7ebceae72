"""Task path strings, the key savers sort a step's pending writes by (P-5).

Why a module of its own: the checkpointed run, node caching and the functional API's
task calls all write pending writes under these strings; none of them may import the
others.
"""

from __future__ import annotations

from typing import Any

__all__ = ("path_str", "task_path")


def task_path(task: Any) -> str:
    """The task's path string as savers sort writes by (P-5); PULL paths are per node."""
    path = task.path
    if len(path) == 2 and path[0] == "__pregel_pull" and task.node is not None:
        return task.node.pull_path
    return path_str(path)


def path_str(path: tuple) -> str:
    """LangGraph's task_path_str: ints zero-padded, nested tuples joined with "~"."""
    parts = []
    for p in path:
        if isinstance(p, bool):
            parts.append(f"{int(p):010}")
        elif isinstance(p, int):
            parts.append(f"{p:010}")
        elif isinstance(p, tuple):
            parts.append(path_str(p))
        else:
            parts.append(str(p))
    return "~" + ", ".join(parts)
