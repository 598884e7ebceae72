"""Run-scoped context handed to nodes: `runtime: Runtime` (B-8, B-16)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Generic, TypeVar

__all__ = ("Runtime", "ExecutionInfo", "get_runtime")

ContextT = TypeVar("ContextT")


def _no_op_stream_writer(_chunk: Any) -> None:
    """Stream writer used when the `custom` stream mode is off."""


def _no_op_heartbeat() -> None:
    """Heartbeat used outside idle-timed node attempts."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Read-only facts about the running task."""

    checkpoint_id: str | None = None
    checkpoint_ns: str = ""
    task_id: str = ""
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    """Which attempt of the task this is (1 first, 2 the first retry, ...)."""
    node_first_attempt_time: float | None = None
    """`time.time()` when the first attempt started."""

    def patch(self, **overrides: Any) -> ExecutionInfo:
        return replace(self, **overrides)


@dataclass(frozen=True)
class Runtime(Generic[ContextT]):
    """Bundles the run's context, store and stream writer (LangGraph's `Runtime`)."""

    context: Any = field(default=None)
    """Static context of the run (`invoke(..., context=...)`)."""
    store: Any = field(default=None)
    """The store passed to `compile(store=...)`, or None."""
    stream_writer: Callable[[Any], None] = field(default=_no_op_stream_writer)
    """Writes a chunk to the `custom` stream mode (no-op when that mode is off)."""
    heartbeat: Callable[[], None] = field(default=_no_op_heartbeat)
    """Records progress for idle timeouts; a no-op otherwise."""
    previous: Any = field(default=None)
    """The previous return value of the thread (functional API)."""
    execution_info: ExecutionInfo | None = field(default=None)
    """Facts about the running task; None outside a task."""
    server_info: Any = field(default=None)
    control: Any = field(default=None)

    def merge(self, other: Runtime) -> Runtime:
        """Values of `other` where it has them, else this runtime's."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=other.stream_writer
            if other.stream_writer is not _no_op_stream_writer
            else self.stream_writer,
            heartbeat=other.heartbeat if other.heartbeat is not _no_op_heartbeat else self.heartbeat,
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Any) -> Runtime:
        """A copy with the given fields replaced."""
        return replace(self, **overrides)

    @property
    def drain_requested(self) -> bool:
        return bool(self.control is not None and getattr(self.control, "drain_requested", False))


DEFAULT_RUNTIME = Runtime()


def get_runtime(context_schema: Any = None) -> Runtime:
    """The Runtime of the running task.

    Raises:
        RuntimeError: when called outside a running graph.
    """
    from lgembed.config import get_config
    from lgembed._constants import CONF, CONFIG_KEY_RUNTIME

    return get_config()[CONF].get(CONFIG_KEY_RUNTIME)
