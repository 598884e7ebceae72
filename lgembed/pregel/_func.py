"""Functional-API tasks at run time: calling a `@task` inside a running node (F-1).

Why apart from the step loop: a task call is not prepared by `Run.prepare`; it is
made while another task (an `@entrypoint`, or a StateGraph node) runs, as
LangGraph's `call` does (a PUSH task carrying the function, path
`("__pregel_push", parent_path, index, parent_id, True)`). Everything about it
lives here; the engine needs no hook for it. A call:

1. gets a deterministic id from the step's checkpoint, the parent task's path and
   the call's index within the parent (so a resumed parent finds its calls again);
2. streams its `tasks`/`debug` start event;
3. reuses a result saved by an earlier attempt of the same step (a resume), or a
   cached result (`CachePolicy` with a cache on the graph; streamed with
   `'__metadata__': {'cached': True}`), or else runs the function with its retry
   policy, on the graph's worker pool (sync) or the event loop (async);
4. on success streams `{name: value}` in `updates`, its `tasks` result, saves the
   `__return__` write with a checkpointer and caches it; an interrupt or an error is
   raised into the caller through the future (LangGraph streams nothing for them).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import threading
import time
from typing import Any, Generator

from lgembed._constants import PUSH, RESUME, RETURN
from lgembed.config import _TASK
from lgembed.errors import GraphBubbleUp, add_note
from lgembed.pregel._driver import pool as _pool
from lgembed.pregel._exec import _log_retry, _retry_delay


_CALLS_ATTR = "_lg_func_calls"
# run attribute: {parent task id: number of task calls it made}
_LOOP_ATTR = "_lg_func_loop"
# run attribute: the event loop of an async run (ainvoke / astream)
_LOCK = threading.Lock()


class SyncAsyncFuture(concurrent.futures.Future):
    """The future a task call returns outside the event loop: `.result()` or `await`."""

    def __await__(self) -> Generator[Any, None, Any]:
        return asyncio.wrap_future(self).__await__()


class CallNode:
    """What the engine reads from the node of a task call (`Task.node`)."""

    __slots__ = ("name", "retry_policy", "cache_policy", "metadata", "tags", "hidden", "error_handler", "timeout")

    def __init__(self, name: str, retry_policy: tuple, cache_policy: Any) -> None:
        self.name = name
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        self.metadata = None
        self.tags = None
        self.hidden = False
        self.error_handler = None
        self.timeout = None


def _is_async(func: Any) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None))


def task_name(func: Any) -> str:
    """LangGraph's name of a task: the function's `__name__` (or its class name)."""
    if hasattr(func, "__name__"):
        return func.__name__
    if hasattr(func, "func"):
        return func.func.__name__
    return func.__class__.__name__


def _path_str(path: tuple) -> str:
    from lgembed.pregel._paths import path_str

    return path_str(path)


def set_event_loop(run: Any, loop: Any) -> None:
    """Records the event loop of an async run (so sync code in a worker thread can
    call async tasks, as LangGraph allows under ainvoke)."""
    run.__dict__[_LOOP_ATTR] = loop


def _next_index(run: Any, parent: Any) -> int:
    with _LOCK:
        calls = run.__dict__.get(_CALLS_ATTR)
        if calls is None:
            calls = run.__dict__[_CALLS_ATTR] = {}
        # by task id (unique in the step, equal on resume); retries of the parent keep
        # counting, as LangGraph's call counter is not reset between attempts
        key = parent.id
        idx = calls.get(key, 0)
        calls[key] = idx + 1
        return idx


class _Call:
    """One task call: its Task, the function and arguments, and its cache entry."""

    __slots__ = ("task", "func", "args", "kwargs", "cache_entry")

    def __init__(self, task: Any, func: Any, args: tuple, kwargs: dict) -> None:
        self.task = task
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.cache_entry: Any = None


def call(func: Any, args: tuple, kwargs: dict, *, retry_policy: tuple = (), cache_policy: Any = None) -> Any:
    """Calls `func` as a task of the running node; returns a future of its result.

    Raises:
        RuntimeError: outside a running graph (LangGraph's get_config text), or when
            an async function is called from sync code of a sync run.
    """
    parent = _TASK.get()
    if parent is None:
        from lgembed.config import get_config

        get_config()  # raises LangGraph's RuntimeError, unless a caller set a config
        raise RuntimeError("Called get_config outside of a runnable context")
    run = parent.run
    is_async = _is_async(func)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    loop = running or run.__dict__.get(_LOOP_ATTR)
    if is_async and loop is None:
        raise RuntimeError("In an sync context async tasks cannot be called")
    c = _Call(_make_task(run, parent, func, args, kwargs, retry_policy, cache_policy), func, args, kwargs)
    done = _reuse(run, c)
    if done is not None:
        return _resolved(done, running)
    if running is not None:
        if is_async:
            return asyncio.ensure_future(_arun(c))
        return asyncio.wrap_future(_pool(run.graph).submit(_in_context(_run), c))
    out = SyncAsyncFuture()
    if is_async:
        _chain(asyncio.run_coroutine_threadsafe(_arun(c), loop), out)
    else:
        _chain(_pool(run.graph).submit(_in_context(_run), c), out)
    return out


def _in_context(fn: Any) -> Any:
    import contextvars

    return functools.partial(contextvars.copy_context().run, fn)


def _chain(source: concurrent.futures.Future, dest: concurrent.futures.Future) -> None:
    def copy(f: concurrent.futures.Future) -> None:
        if f.cancelled():
            dest.cancel()
            return
        exc = f.exception()
        if exc is not None:
            dest.set_exception(exc)
        else:
            dest.set_result(f.result())

    source.add_done_callback(copy)


def _resolved(outcome: tuple, running: Any) -> Any:
    ok, value = outcome
    fut: Any = running.create_future() if running is not None else SyncAsyncFuture()
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)
    return fut


def _make_task(run: Any, parent: Any, func: Any, args: tuple, kwargs: dict, retry_policy: tuple, cache_policy: Any) -> Any:
    from lgembed._constants import NS_SEP
    from lgembed._ids import task_id
    from lgembed.pregel._loop import task_start_payload
    from lgembed.pregel._task import Task

    idx = _next_index(run, parent)
    name = task_name(func)
    node = CallNode(name, tuple(retry_policy or ()), cache_policy)
    path = (PUSH, parent.path, idx, parent.id, True)
    task = Task(run, name, node, (args, kwargs), path, (PUSH,), (3, parent.order, idx))
    ns = f"{run.parent_ns}{NS_SEP}{name}" if run.parent_ns else name
    task._id = task_id(run.checkpoint_id, ns, str(run.step), name, PUSH, _path_str(parent.path), str(idx))
    if "tasks" in run.modes or "debug" in run.modes:
        run._emit_task_event(task_start_payload(task), "task")
    return task


def _reuse(run: Any, c: _Call) -> tuple | None:
    """`(ok, value)` from the writes an earlier attempt of this step saved (a resume)
    or from the cache; None when the call must run."""
    task = c.task
    pending = getattr(run, "pending_writes", None)
    if pending:
        tid = task.id
        mine = [w for w in pending if w[0] == tid]
        for _, chan, value in mine:
            if chan == RETURN:
                task.writes = [(RETURN, value)]
                return True, value
        resume = [v for _, chan, v in mine if chan == RESUME]
        if resume:
            v = resume[-1]
            task.resume_values = list(v) if isinstance(v, list) else [v]
    return _cached(run, c)


def _cached(run: Any, c: _Call) -> tuple | None:
    task = c.task
    cache = run.graph.cache
    policy = task.node.cache_policy or getattr(run.graph, "cache_policy", None)
    if cache is None or policy is None:
        return None
    from lgembed.pregel._cache import CACHE_NS_WRITES, digest, identifier

    full = ((CACHE_NS_WRITES, identifier(c.func) or "__dynamic__"), digest(policy.key_func(*c.args, **c.kwargs)))
    c.cache_entry = (full, policy.ttl)
    found = cache.get((full,))
    if not found:
        return None
    writes = [tuple(w) for w in next(iter(found.values()))]
    task.writes = writes
    task.cached = True
    _save(run, task)
    value = next((v for chan, v in writes if chan == RETURN), None)
    if "updates" in run.modes:
        run.emit("updates", {task.name: value, "__metadata__": {"cached": True}})
    return True, value


def _save(run: Any, task: Any) -> None:
    put_writes = getattr(run, "put_writes", None)
    if put_writes is not None:
        put_writes(task.id, list(task.writes), _path_str(task.path))


def _begin_attempt(task: Any) -> None:
    task.writes = []
    task.interrupt_idx = 0
    task.attempt += 1
    if task.attempt == 1:
        task.first_attempt_time = time.time()
    else:
        task._runtime = None
        task._config = None


def _failed(c: _Call, exc: Exception, attempts: int) -> float | None:
    task = c.task
    if isinstance(exc, GraphBubbleUp):
        task.error = exc  # interrupts and commands are never retried
        return None
    add_note(exc, f"During task with name '{task.name}' and id '{task.id}'")
    delay = _retry_delay(task, exc, attempts)
    if delay is None:
        task.error = exc
    else:
        _log_retry(task, delay, attempts, exc)
    return delay


def _run(c: _Call) -> Any:
    """Runs a sync task call with retries in this thread; returns its value or raises."""
    task = c.task
    token = _TASK.set(task)
    attempts = 0
    try:
        while True:
            _begin_attempt(task)
            try:
                value = c.func(*c.args, **c.kwargs)
                task.writes = [(RETURN, value)]
                break
            except Exception as exc:
                attempts += 1
                delay = _failed(c, exc, attempts)
                if delay is None:
                    break
                time.sleep(delay)
    finally:
        _TASK.reset(token)
    return _finish(c)


async def _arun(c: _Call) -> Any:
    """Async twin of `_run` (a sync function runs in the graph's worker pool)."""
    task = c.task
    token = _TASK.set(task)
    attempts = 0
    func = c.func
    is_async = _is_async(func)
    try:
        while True:
            _begin_attempt(task)
            try:
                if is_async:
                    value = await func(*c.args, **c.kwargs)
                else:
                    loop = asyncio.get_running_loop()
                    value = await loop.run_in_executor(
                        _pool(task.run.graph).executor(), _in_context(functools.partial(func, *c.args, **c.kwargs))
                    )
                task.writes = [(RETURN, value)]
                break
            except Exception as exc:
                attempts += 1
                delay = _failed(c, exc, attempts)
                if delay is None:
                    break
                await asyncio.sleep(delay)
    finally:
        _TASK.reset(token)
    return _finish(c)


def _finish(c: _Call) -> Any:
    """Streams, saves and caches a finished call; returns its value or raises its error."""
    task = c.task
    run = task.run
    error = task.error
    if error is not None:
        if not isinstance(error, GraphBubbleUp) and ("tasks" in run.modes or "debug" in run.modes):
            run._task_result(task, error, [])
        raise error
    task.done = True
    if "updates" in run.modes:
        run.emit("updates", run._updates_chunk(task))
    if "tasks" in run.modes or "debug" in run.modes:
        run._task_result(task, None, [])
    _save(run, task)
    if c.cache_entry is not None:
        full, ttl = c.cache_entry
        run.graph.cache.set({full: (list(task.writes), ttl)})
    return task.writes[0][1]
