"""Calling user callables (nodes, routers) with LangGraph's keyword injection (B-16).

Why: the kwargs a callable accepts are found once, when the graph is compiled; a
call then only looks up the values it needs.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any


_EMPTY = inspect.Parameter.empty
_VALID_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_CONFIG_ANN = ("RunnableConfig", "Optional[RunnableConfig]", "RunnableConfig | None", _EMPTY)
_WRITER_ANN = ("StreamWriter", _EMPTY)
_STORE_REQ_ANN = ("BaseStore", _EMPTY)
_STORE_OPT_ANN = ("Optional[BaseStore]", "BaseStore | None")


def _ann_name(ann: Any) -> Any:
    """A comparable form of an annotation: the empty marker, a string, or a type name."""
    if ann is _EMPTY or isinstance(ann, str):
        return ann
    name = getattr(ann, "__name__", None)
    if name and getattr(ann, "__module__", "").split(".")[0] in ("lgembed", "langgraph", "langchain_core"):
        return name
    text = repr(ann).replace("typing.", "")
    for prefix in ("langchain_core.runnables.config.", "lgembed.store.base.", "langgraph.store.base."):
        text = text.replace(prefix, "")
    if text.startswith("Optional[") or text.endswith("| None") or text.startswith("Union["):
        return text.replace("Union[", "Optional[").replace(", NoneType]", "]")
    return name or text


def _is_stream_writer(ann: Any) -> bool:
    """`StreamWriter` is `Callable[[Any], None]`: LangGraph matches it by equality (B-16)."""
    from lgembed.types import StreamWriter

    try:
        return bool(ann == StreamWriter)
    except Exception:
        return False


def _is_async_callable(func: Any) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None))


def callable_name(thing: Any) -> str:
    """Node name inferred from a callable (B-11)."""
    get_name = getattr(thing, "get_name", None)
    if get_name is not None and hasattr(thing, "invoke"):
        return get_name()
    return getattr(thing, "__name__", thing.__class__.__name__)


class NodeCallable:
    """A node or router function with its injected keyword arguments resolved.

    Args:
        func: a function, async function, callable object, or an object with
            `invoke`/`ainvoke` (a compiled graph or a langchain Runnable).
        name: the node name used in error texts.
    """

    __slots__ = ("func", "name", "is_async", "is_runnable", "accepts", "plain")

    def __init__(self, func: Any, name: str | None) -> None:
        self.func = func
        self.name = name
        self.is_runnable = hasattr(func, "invoke") and not inspect.isfunction(func) and not inspect.ismethod(func)
        self.is_async = (not self.is_runnable) and _is_async_callable(func)
        self.accepts: tuple[tuple[str, str, Any], ...] = ()
        if not self.is_runnable:
            self.accepts = self._find_accepts(func)
        self.plain = not self.accepts

    @staticmethod
    def _find_accepts(func: Any) -> tuple[tuple[str, str, Any], ...]:
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            return ()
        accepts = []
        for kw in ("config", "writer", "store", "previous", "runtime", "error"):
            p = params.get(kw)
            if p is None or p.kind not in _VALID_KINDS:
                continue
            ann = _ann_name(p.annotation)
            if kw == "config":
                if ann not in _CONFIG_ANN:
                    warnings.warn(
                        "The 'config' parameter should be typed as 'RunnableConfig' or "
                        f"'RunnableConfig | None', not '{p.annotation}'. ",
                        UserWarning,
                        stacklevel=4,
                    )
                    continue
                accepts.append((kw, "config", _EMPTY))
            elif kw == "writer":
                if ann in _WRITER_ANN or _is_stream_writer(p.annotation):
                    accepts.append((kw, "stream_writer", None))
            elif kw == "store":
                if ann in _STORE_REQ_ANN:
                    accepts.append((kw, "store", _EMPTY))
                elif ann in _STORE_OPT_ANN:
                    accepts.append((kw, "store", None))
            elif kw == "previous":
                accepts.append((kw, "previous", _EMPTY))
            elif kw == "runtime":
                accepts.append((kw, "runtime", _EMPTY))
            elif kw == "error":
                if ann in ("NodeError",):
                    accepts.append((kw, "error", None))
        return tuple(accepts)

    def _kwargs(self, task: Any) -> dict[str, Any]:
        kwargs = {}
        for kw, key, default in self.accepts:
            if key == "config":
                value = task.config
            elif key == "error":
                value = task.node_error
            else:
                runtime = task.runtime
                if runtime is None:
                    value = _EMPTY
                elif key == "runtime":
                    value = runtime
                else:
                    value = getattr(runtime, key, _EMPTY)
            if value is _EMPTY:
                if default is _EMPTY:
                    raise ValueError(f"Missing required config key '{key}' for '{self.name}'.")
                value = default
            kwargs[kw] = value
        return kwargs

    def call(self, value: Any, task: Any) -> Any:
        """Runs the callable synchronously for `task`.

        Raises:
            TypeError: when the callable is async only.
        """
        if self.is_runnable:
            return self.func.invoke(value, task.config)
        if self.is_async:
            raise TypeError(
                f'No synchronous function provided to "{self.name if self.name is not None else callable_name(self.func)}".'
                "\nEither initialize with a synchronous function or invoke"
                " via the async API (ainvoke, astream, etc.)"
            )
        if self.plain:
            return self.func(value)
        return self.func(value, **self._kwargs(task))

    async def acall(self, value: Any, task: Any) -> Any:
        """Runs the callable on the event loop (async) or in a worker thread (sync)."""
        if self.is_runnable:
            ainvoke = getattr(self.func, "ainvoke", None)
            if ainvoke is not None:
                return await ainvoke(value, task.config)
            return await _in_thread(task, self.func.invoke, value, task.config)
        kwargs = self._kwargs(task) if self.accepts else {}
        if self.is_async:
            return await self.func(value, **kwargs)
        return await _in_thread(task, self.func, value, **kwargs)


async def _in_thread(task: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
    """Runs a sync callable in the default executor with the task's context."""
    import asyncio
    import contextvars

    ctx = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(ctx.run, func, *args, **kwargs))
