"""The functional API: `@entrypoint` workflows and `@task` functions (LangGraph's `langgraph.func`).

Why it is built on the graph engine: an entrypoint is a one-node `Pregel` graph
(channels `__start__`, `__end__`, `__previous__` and `__pregel_tasks`, streaming
`updates` by default), exactly as LangGraph builds it, so checkpointing, interrupts,
resume, `get_state` / `update_state` / history and every stream mode come from the
engine unchanged. Task calls inside it are run by `lgembed.pregel._func`.

Importing this module does not import the engine's run-time modules (the step loop
loads when a workflow first runs); `import lgembed.graph` does not import it.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Generic, Sequence, TypeVar, get_args, get_origin

from lgembed._constants import END, START, TASKS
from lgembed.types import CachePolicy, RetryPolicy

__all__ = ("entrypoint", "task")

R = TypeVar("R")
S = TypeVar("S")

PREVIOUS = "__previous__"
# channel of the value an entrypoint saves for its next run on the thread


class _TaskFunction:
    """A `@task`-decorated function: calling it inside a running graph returns a future.

    Attributes:
        func: the decorated function.
        retry_policy: retry policies of its calls (a tuple, maybe empty).
        cache_policy: its CachePolicy, or None.
    """

    def __init__(self, func: Callable, *, retry_policy: Sequence[RetryPolicy], cache_policy: CachePolicy | None = None, name: str | None = None) -> None:
        if name is not None:
            if hasattr(func, "__func__"):
                # a bound method: rename a partial of it, not the method shared by the class
                method = functools.partial(func.__func__, func.__self__)
                method.__name__ = name  # type: ignore[attr-defined]
                func = method
            else:
                func.__name__ = name
        self.func = func
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Schedules a call of the task; returns a future (`.result()`, or `await` it).

        Raises:
            RuntimeError: outside a running entrypoint or graph node.
        """
        from lgembed.pregel._func import call

        return call(self.func, args, kwargs, retry_policy=self.retry_policy, cache_policy=self.cache_policy)

    def _namespaces(self) -> list:
        from lgembed.pregel._cache import CACHE_NS_WRITES, identifier

        return [(CACHE_NS_WRITES, identifier(self.func) or "__dynamic__")]

    def clear_cache(self, cache: Any) -> None:
        """Drops this task's cached results from `cache`."""
        if self.cache_policy is not None:
            cache.clear(self._namespaces())

    async def aclear_cache(self, cache: Any) -> None:
        """Async `clear_cache`."""
        if self.cache_policy is not None:
            await cache.aclear(self._namespaces())


def task(
    __func_or_none__: Callable | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    **kwargs: Any,
) -> Any:
    """Defines a task: a function that, called inside an `@entrypoint` (or a graph node),
    runs as a task of the step and returns a future of its result.

    Tasks run in parallel (threads for sync functions, the event loop for async ones);
    with a checkpointer their results are saved, so a resumed entrypoint gets them
    back without running them again; with a `cache_policy` and a cache on the graph,
    results are cached by their arguments.

    Args:
        name: the task's name (default: the function's name).
        retry_policy: a RetryPolicy or a sequence of them.
        cache_policy: a CachePolicy (used when the entrypoint has a cache).

    Raises:
        ValueError: for `timeout=` on a sync function (LangGraph's text).
        NotImplementedError: for `timeout=` on an async function (lgembed has no task
            timeouts yet).
    """
    if "retry" in kwargs:
        import warnings

        from lgembed.warnings import LangGraphDeprecatedSinceV05

        warnings.warn(
            "`retry` is deprecated and will be removed. Please use `retry_policy` instead.",
            category=LangGraphDeprecatedSinceV05,
            stacklevel=2,
        )
        if retry_policy is None:
            retry_policy = kwargs.pop("retry")
    timeout = kwargs.get("timeout")
    policies: tuple = () if retry_policy is None else (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)

    def decorator(func: Callable) -> _TaskFunction:
        if timeout is not None:
            from lgembed.pregel._func import _is_async

            if not _is_async(func):  # LangGraph's error for a sync task with a timeout
                raise ValueError(
                    "Node timeouts are only supported for async nodes because sync Python "
                    f"execution cannot be safely cancelled in-process. Task {name or func.__name__!r} is sync."
                )
            msg = f"Task timeouts are not supported by lgembed yet (task {name or func.__name__!r} has timeout={timeout!r}). Remove the timeout."
            raise NotImplementedError(msg)
        return _TaskFunction(func, retry_policy=policies, cache_policy=cache_policy, name=name)

    if __func_or_none__ is not None:
        return decorator(__func_or_none__)
    return decorator


def _entry_classes() -> tuple:
    """The engine classes an entrypoint graph is made of (imported on first use)."""
    from lgembed.pregel._call import NodeCallable
    from lgembed.pregel._node import PregelNode

    class EntrypointNode(PregelNode):
        """The entrypoint's node: its return goes to `__end__`, its saved value to `__previous__`."""

        def state_writes(self, value: Any) -> list:
            if isinstance(value, entrypoint.final):
                return [(END, value.value), (PREVIOUS, value.save)]
            return [(END, value), (PREVIOUS, value)]

        def writes_for(self, value: Any) -> list:
            return self.state_writes(value)

    class EntrypointCallable(NodeCallable):
        """Calls the entrypoint function with its injected keywords; `previous` is the
        value the thread's last run saved."""

        def _inject(self, task: Any) -> dict:
            kwargs = self._kwargs(task) if self.accepts else {}
            if "previous" in kwargs or "runtime" in kwargs:
                ch = task.run.channels.get(PREVIOUS)
                previous = ch.get() if ch is not None and ch.is_available() else None
                if "previous" in kwargs:
                    kwargs["previous"] = previous
                if "runtime" in kwargs:
                    kwargs["runtime"] = kwargs["runtime"].override(previous=previous)
            return kwargs

        def call(self, value: Any, task: Any) -> Any:
            if self.is_async:
                return NodeCallable.call(self, value, task)  # LangGraph's error for an async function
            return self.func(value, **self._inject(task))

        async def acall(self, value: Any, task: Any) -> Any:
            import asyncio

            from lgembed.pregel._call import _in_thread
            from lgembed.pregel._func import set_event_loop

            set_event_loop(task.run, asyncio.get_running_loop())
            kwargs = self._inject(task)
            if self.is_async:
                return await self.func(value, **kwargs)
            return await _in_thread(task, self.func, value, **kwargs)

    return EntrypointNode, EntrypointCallable


class entrypoint(Generic[R]):
    """Turns a function into a workflow: a compiled graph with `invoke`, `stream`,
    `get_state`, `update_state` and the rest (LangGraph's `entrypoint`).

    The function takes the input as its first parameter and may take `previous` (the
    value the thread's last run saved), `config`, `writer`, `store` and `runtime`.

    Args:
        checkpointer: saver for threads, interrupts and `previous`.
        store: long-term store handed to the function (`store` / `runtime.store`).
        cache: cache of task results (`lgembed.cache`), used by tasks with a cache policy.
        context_schema: type of the run context (`invoke(..., context=...)`).
        cache_policy: default CachePolicy of the tasks it calls.
        retry_policy: default retry policies of the entrypoint and its tasks.
    """

    def __init__(
        self,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        context_schema: Any = None,
        cache_policy: CachePolicy | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        **kwargs: Any,
    ) -> None:
        import warnings

        if "config_schema" in kwargs:
            from lgembed.warnings import LangGraphDeprecatedSinceV10

            warnings.warn(
                "`config_schema` is deprecated and will be removed. Please use `context_schema` instead.",
                category=LangGraphDeprecatedSinceV10,
                stacklevel=2,
            )
            if context_schema is None:
                context_schema = kwargs["config_schema"]
        if "retry" in kwargs:
            from lgembed.warnings import LangGraphDeprecatedSinceV05

            warnings.warn(
                "`retry` is deprecated and will be removed. Please use `retry_policy` instead.",
                category=LangGraphDeprecatedSinceV05,
                stacklevel=2,
            )
            if retry_policy is None:
                retry_policy = kwargs["retry"]
        if kwargs.get("timeout") is not None:
            msg = "Entrypoint timeouts are not supported by lgembed yet (got timeout=...). Remove the timeout."
            raise NotImplementedError(msg)
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.cache_policy = cache_policy
        self.retry_policy = retry_policy
        self.context_schema = context_schema

    @dataclass(frozen=True)
    class final(Generic[R, S]):
        """Returned by an entrypoint: `value` goes to the caller, `save` to the
        checkpoint (the next run's `previous`)."""

        value: R
        """Value to return. A value will always be returned even if it is `None`."""
        save: S
        """The value for the state for the next checkpoint."""

    def __call__(self, func: Callable) -> Any:
        """Builds the workflow graph of `func`.

        Raises:
            NotImplementedError: for a generator function.
            ValueError: for a function without parameters.
            TypeError: for a return annotation `entrypoint.final[...]` without two types.
        """
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("Generators are not supported in the Functional API.")
        sig = inspect.signature(func)
        first = next(iter(sig.parameters.keys()), None)
        if not first:
            raise ValueError("Entrypoint function must have at least one parameter")
        ann = sig.return_annotation
        if ann is not inspect.Signature.empty and ann is not entrypoint.final and get_origin(ann) is entrypoint.final:
            if len(get_args(ann)) != 2:
                raise TypeError(
                    "Please an annotation for both the return_ and "
                    "the save values."
                    "For example, `-> entrypoint.final[int, str]` would assign a "
                    "return_ a type of `int` and save the type `str`."
                )
        from lgembed.channels import EphemeralValue, LastValue, Topic
        from lgembed.pregel.main import Pregel, ensure_valid_checkpointer

        node_cls, callable_cls = _entry_classes()
        name = func.__name__
        node = node_cls(name, triggers=[START], reads=START, proc=callable_cls(func, name), output_keys=[END, PREVIOUS])
        policies = self.retry_policy
        policies = () if policies is None else (policies,) if isinstance(policies, RetryPolicy) else tuple(policies)
        graph = Pregel(
            nodes={name: node},
            channels={
                START: EphemeralValue(Any),
                END: LastValue(Any, END),
                PREVIOUS: LastValue(Any, PREVIOUS),
                TASKS: Topic(Any),
            },
            input_channels=START,
            output_channels=END,
            stream_channels=END,
            stream_mode="updates",
            checkpointer=ensure_valid_checkpointer(self.checkpointer),
            store=self.store,
            cache=self.cache,
            context_schema=self.context_schema,
            retry_policy=policies,
        )
        graph.cache_policy = self.cache_policy
        return graph
