"""Public value types of the graph API: Send, Command, Interrupt, policies, snapshots.

Shapes, reprs and equality follow LangGraph 1.2 (docs/BEHAVIOUR.md §4, §6, §9, §11).
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, Generic, Literal, NamedTuple, Sequence, TypeVar


__all__ = (
    "All",
    "CachePolicy",
    "Command",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "Overwrite",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
    "TimeoutPolicy",
    "default_retry_on",
    "interrupt",
)

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are written: every step before the next (`sync`), every step in the
background (`async`, the default), or once when the run ends (`exit`)."""
All = Literal["*"]
"""`interrupt_before="*"` / `interrupt_after="*"`: every node but the hidden `__start__`."""
StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"]
"""The stream modes `stream()` accepts."""
StreamWriter = Callable[[Any], None]
"""Callable that emits a chunk in the `custom` stream mode."""

N = TypeVar("N")
ResponseT = TypeVar("ResponseT")
_INTERRUPT_KEY = "__interrupt__"


def default_retry_on(exc: Exception) -> bool:
    """LangGraph's default retry predicate (E-4).

    Retries everything except programming errors and OS errors; `ConnectionError` and
    HTTP 5xx errors of httpx/requests (when those libraries are already imported by the
    application) are retried.
    """
    if isinstance(exc, ConnectionError):
        return True
    status = _http_status(exc)
    if status is not None:
        return 500 <= status < 600
    if isinstance(
        exc,
        (
            ValueError,
            TypeError,
            ArithmeticError,
            ImportError,
            LookupError,
            NameError,
            SyntaxError,
            RuntimeError,
            ReferenceError,
            StopIteration,
            StopAsyncIteration,
            OSError,
        ),
    ):
        return False
    return True


def _http_status(exc: BaseException) -> int | None:
    """Status code of an httpx/requests HTTP error, without importing either library."""
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code
    requests = sys.modules.get("requests")
    if requests is not None and isinstance(exc, requests.HTTPError):
        # LangGraph tests the response's truth value, which is False for any 4xx/5xx
        # status, so every requests HTTPError but a successful-status one is retried.
        response = exc.response
        return response.status_code if response else 500
    return None


class RetryPolicy(NamedTuple):
    """How a failing node is retried (E-4, E-5)."""

    initial_interval: float = 0.5
    """Seconds before the first retry."""
    backoff_factor: float = 2.0
    """Multiplier of the interval after each retry."""
    max_interval: float = 128.0
    """Upper bound of the interval between retries, in seconds."""
    max_attempts: int = 3
    """Attempts before giving up, the first run included."""
    jitter: bool = True
    """Whether to add up to one second of random jitter to each interval."""
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = (
        default_retry_on
    )
    """Exception class(es) to retry on, or a predicate that returns True to retry."""


def default_cache_key(*args: Any, **kwargs: Any) -> bytes:
    """Default `CachePolicy.key_func`: a stable digest (bytes, as LangGraph's) of the node input.

    Why not pickle (LangGraph's default): lgembed never pickles; a canonical repr of
    plain data is hashed instead.
    """
    import hashlib

    return hashlib.blake2b(repr((args, kwargs)).encode(), digest_size=16).digest()


@dataclass(kw_only=True, slots=True, frozen=True)
class CachePolicy(Generic[N]):
    """Caching of a node's writes, keyed by its input (E-8)."""

    key_func: Callable[..., str | bytes] = default_cache_key
    """Returns the cache key (str or bytes) of a node's input or a task's arguments."""
    ttl: int | None = None
    """Seconds a cached entry lives; None for no expiry."""


@dataclass(kw_only=True, slots=True, frozen=True)
class TimeoutPolicy:
    """Timeouts of an async node run."""

    run_timeout: float | None = None
    idle_timeout: float | None = None
    refresh_on: str = "auto"
    """Which signals refresh `idle_timeout` ("auto" or "heartbeat"); lgembed has no
    idle timeouts yet (refused at compile), so this is only kept and shown."""

    @classmethod
    def coerce(cls, value: Any) -> TimeoutPolicy | None:
        if value is None or isinstance(value, TimeoutPolicy):
            return value
        seconds = value.total_seconds() if hasattr(value, "total_seconds") else float(value)
        if seconds <= 0:
            raise ValueError("run_timeout must be greater than 0")
        return cls(run_timeout=seconds)


_DEFAULT_INTERRUPT_ID = "placeholder-id"


@dataclass(init=False, slots=True)
class Interrupt(Generic[ResponseT]):
    """A value surfaced to the caller when a node is interrupted (I-3)."""

    value: Any
    id: str
    response_schema: Any = None

    def __init__(self, value: Any, id: str = _DEFAULT_INTERRUPT_ID, *, response_schema: Any = None) -> None:
        self.value = value
        self.id = id
        self.response_schema = response_schema

    @classmethod
    def from_ns(cls, value: Any, ns: str, *, response_schema: Any = None) -> Interrupt:
        from lgembed._ids import interrupt_id

        return cls(value=value, id=interrupt_id(ns, 0), response_schema=response_schema)


class StateUpdate(NamedTuple):
    """One update of `bulk_update_state` (P-34)."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


class PregelTask(NamedTuple):
    """A task of a step as shown in `StateSnapshot.tasks` (P-21)."""

    id: str
    name: str
    path: tuple
    error: Exception | None = None
    interrupts: tuple = ()
    state: Any = None
    result: Any | None = None


class StateSnapshot(NamedTuple):
    """The state of a thread at the start of a step (P-20)."""

    values: dict[str, Any] | Any
    next: tuple[str, ...]
    config: dict
    metadata: dict | None
    created_at: str | None
    parent_config: dict | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...]


class Send:
    """A packet for `node`: runs it in the next step with `arg` as its input (N-7)."""

    __slots__ = ("node", "arg", "timeout")

    node: str
    arg: Any
    timeout: TimeoutPolicy | None

    def __init__(self, /, node: str, arg: Any, *, timeout: Any = None) -> None:
        self.node = node
        self.arg = arg
        self.timeout = TimeoutPolicy.coerce(timeout)

    def __hash__(self) -> int:
        return hash((self.node, self.arg, self.timeout))

    def __repr__(self) -> str:
        if self.timeout is None:
            return f"Send(node={self.node!r}, arg={self.arg!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"

    def __eq__(self, value: object) -> bool:
        return (
            isinstance(value, Send)
            and self.node == value.node
            and self.arg == value.arg
            and self.timeout == value.timeout
        )


@dataclass(kw_only=True, slots=True, frozen=True)
class Command(Generic[N]):
    """Update state, jump to nodes and/or resume interrupts (N-1, N-6, N-8, L-5)."""

    graph: str | None = None
    update: Any | None = None
    resume: Any | None = None
    goto: Any = ()

    PARENT: ClassVar[Literal["__parent__"]] = "__parent__"

    def __repr__(self) -> str:
        contents = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if getattr(self, f.name)
        )
        return f"Command({contents})"

    def _update_as_tuples(self) -> Sequence[tuple[str, Any]]:
        from lgembed._schema import annotated_update_tuples

        update = self.update
        if isinstance(update, dict):
            return list(update.items())
        if isinstance(update, (list, tuple)) and all(
            isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update
        ):
            return update
        tuples = annotated_update_tuples(update)
        if tuples is not None:
            return tuples
        if update is not None:
            return [("__root__", update)]
        return []


@dataclass(slots=True)
class Overwrite:
    """A write that replaces a reducer channel's value instead of reducing into it (C-7)."""

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"


@dataclass(frozen=True)
class GraphOutput(Generic[N]):
    """Result of `invoke(..., version="v2")` (V-4)."""

    value: Any
    interrupts: tuple[Interrupt, ...] = ()

    def __getitem__(self, key: str) -> Any:
        warnings.warn(
            "Accessing GraphOutput via `result[key]` is deprecated. Use `result.value` to "
            "access the output value directly, or `result.interrupts` for interrupts.",
            DeprecationWarning,
            stacklevel=2,
        )
        if key == _INTERRUPT_KEY:
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        if key == _INTERRUPT_KEY:
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the running node and surface `value` to the caller (I-1).

    On resume (`Command(resume=...)`) the node runs again from its start and this call
    returns the resume value instead of raising.

    Raises:
        GraphInterrupt: when no resume value is available for this call.
        RuntimeError: when called outside a running graph.
    """
    from lgembed.config import _current_task

    task = _current_task()
    if task is None:
        raise RuntimeError("Called get_config outside of a runnable context")
    return task.interrupt(value, response_schema)


