"""Access to the running task's config, store and stream writer from inside a node."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from lgembed._constants import CONF, CONFIG_KEY_RUNTIME

__all__ = ("get_config", "get_store", "get_stream_writer")

_TASK: ContextVar[Any] = ContextVar("lgembed_task", default=None)
# the running task (lgembed.pregel._task.Task); its config is built on first access
_CONFIG: ContextVar[Any] = ContextVar("lgembed_config", default=None)
# a config set explicitly by a caller outside any task (e.g. a subgraph's parent)


def _current_task() -> Any:
    return _TASK.get()


def get_config() -> dict:
    """The config of the running task (LangGraph's RunnableConfig shape).

    Raises:
        RuntimeError: when called outside a running graph.
    """
    task = _TASK.get()
    if task is not None:
        return task.config
    config = _CONFIG.get()
    if config:
        return config
    raise RuntimeError("Called get_config outside of a runnable context")


def get_store() -> Any:
    """The store of the running graph (`compile(store=...)`), or None."""
    return get_config()[CONF][CONFIG_KEY_RUNTIME].store


def get_stream_writer() -> Any:
    """The `custom` stream writer of the running task (a no-op when that mode is off)."""
    task = _TASK.get()
    if task is not None:
        return task.stream_writer
    return get_config()[CONF][CONFIG_KEY_RUNTIME].stream_writer
