"""Exceptions of the graph runtime: LangGraph's classes, bases and message texts.

Every message template lives here once so that the pure and the compiled build
format identical texts (docs/STYLE.md §F).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from enum import Enum
from typing import Any, Sequence

__all__ = (
    "EmptyChannelError",
    "ErrorCode",
    "GraphDrained",
    "GraphRecursionError",
    "InvalidUpdateError",
    "GraphBubbleUp",
    "GraphInterrupt",
    "NodeCancelledError",
    "NodeError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "EmptyInputError",
    "TaskNotFound",
    "UnknownInterruptError",
    "create_error_message",
    "is_invalid_resume",
)


class EmptyChannelError(Exception):
    """Raised by a channel's `get()` when it holds no value (C-11)."""


class ErrorCode(Enum):
    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"


def create_error_message(*, message: str, error_code: ErrorCode) -> str:
    """Appends LangGraph's troubleshooting link for `error_code` to `message` (E-2)."""
    return (
        f"{message}\n"
        "For troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/"
        f"errors/{error_code.value}"
    )


# --- message templates shared by both builds ------------------------------------

CONCURRENT_UPDATE = create_error_message(
    message="At key '{key}': Can receive only one value per step. Use an Annotated key to handle multiple values.",
    error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
)
# C-1: a LastValue channel written twice in one step
GUARD_UPDATE = (
    "At key '{key}': {kind}(guard=True) can receive only one value per step. "
    "Use guard=False if you want to store any one of multiple values."
)
# C-4/C-5: guarded EphemeralValue / UntrackedValue written twice in one step
DOUBLE_OVERWRITE = create_error_message(
    message="Can receive only one Overwrite value per super-step.",
    error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
)
# C-7: two Overwrite writes to one reducer channel in one step
BARRIER_VALUE = "At key '{key}': Value {value} not in {names}"
# C-8: a join channel received a name it does not wait for
NODE_RETURN = create_error_message(
    message="Expected dict, got {value!s}",
    error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
)
# N-1: a node returned something that is not a state update
RECURSION_LIMIT = create_error_message(
    message=(
        "Recursion limit of {limit} reached without hitting a stop condition. "
        "You can increase the limit by setting the `recursion_limit` config key."
    ),
    error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
)
# L-10: the run exceeded config["recursion_limit"] supersteps


class GraphBubbleUp(Exception):
    """Base of the exceptions that travel up through the graph instead of failing it."""


class GraphDrained(GraphBubbleUp):
    """Raised when a run stops early at a superstep boundary on request."""

    def __init__(self, reason: str = "shutdown") -> None:
        self.reason = reason
        super().__init__(f"Graph drained: {reason}")


class GraphRecursionError(RecursionError):
    """Raised when a run has used `recursion_limit` supersteps (L-10)."""


class InvalidUpdateError(Exception):
    """Raised when a channel receives an invalid set of writes, or a node an invalid return."""


class GraphInterrupt(GraphBubbleUp):
    """Raised inside a run when a node is interrupted; never reaches the caller of a root graph."""

    def __init__(self, interrupts: Sequence[Any] = ()) -> None:
        super().__init__(interrupts)


class NodeInterrupt(GraphInterrupt):
    """Deprecated: raise `interrupt()` instead. Interrupts the node with `value` (I-10)."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        from lgembed.types import Interrupt

        from lgembed.warnings import LangGraphDeprecatedSinceV10

        warnings.warn(
            LangGraphDeprecatedSinceV10(
                "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead."
            ),
            stacklevel=2,
        )
        if id is None:
            super().__init__([Interrupt(value=value)])
        else:
            super().__init__([Interrupt(value=value, id=id)])


class ParentCommand(GraphBubbleUp):
    """Carries a `Command(graph=Command.PARENT)` from a subgraph to its parent (N-8)."""

    def __init__(self, command: Any) -> None:
        super().__init__(command)


class EmptyInputError(Exception):
    """Raised when a run receives no input (L-9)."""


class TaskNotFound(Exception):
    """Raised when an executor cannot find a task (distributed mode)."""


class UnknownInterruptError(Exception):
    """Raised in strict resume mode when a resume does not match the pending interrupts (I-8)."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        interrupt_ids: Sequence[str] = (),
        pending_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.interrupt_ids = tuple(interrupt_ids)
        self.pending_ids = tuple(pending_ids)


@dataclass(frozen=True, slots=True)
class NodeError:
    """Failure context passed to a node-level error handler (E-9)."""

    node: str
    error: BaseException


class NodeCancelledError(Exception):
    """Raised when a node body raises `asyncio.CancelledError` itself."""

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


class NodeTimeoutError(Exception):
    """Raised when a node run exceeds its timeout (E-3); not an OSError, so it is retried."""

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: str,
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        if kind == "idle":
            if idle_timeout is None:
                raise ValueError("idle_timeout is required when kind='idle'")
            message = (
                f"Node '{node}' exceeded its idle timeout of {idle_timeout:.3f}s "
                f"without making progress (elapsed: {elapsed:.3f}s)."
            )
            self.timeout = idle_timeout
        elif kind == "run":
            if run_timeout is None:
                raise ValueError("run_timeout is required when kind='run'")
            message = (
                f"Node '{node}' exceeded its run timeout of {run_timeout:.3f}s "
                f"(elapsed: {elapsed:.3f}s)."
            )
            self.timeout = run_timeout
        else:
            raise ValueError("kind must be 'idle' or 'run'")
        super().__init__(message)
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout


def is_invalid_resume(error: BaseException) -> bool:
    """Whether `error` was raised because a resume value did not match the interrupt's
    `response_schema` (I-3)."""
    return getattr(error, "_langgraph_invalid_resume", False) is True


def add_note(exc: BaseException, note: str) -> None:
    """`exc.add_note(note)`, also on Python 3.10 (which has no add_note: the note is kept
    in `__notes__` as 3.11 would, without being printed in tracebacks)."""
    method = getattr(exc, "add_note", None)
    if method is not None:
        method(note)
        return
    notes = getattr(exc, "__notes__", None)
    if not isinstance(notes, list):
        notes = []
        try:
            exc.__notes__ = notes
        except AttributeError:
            return
    notes.append(note)
