"""Running a step's tasks: inline, on a thread pool, or as asyncio tasks (L-30…L-33, E-4).

Why this split: `Run` (in `_loop`) decides what runs and what a result means, and
the step driver (`_driver`) loops over the steps; this module only decides where a
step's tasks execute and in which order their completions reach `Run.commit`
(completion order, as LangGraph streams them). One task's execution, with its
retries, is `lgembed.pregel._exec`.
"""

from __future__ import annotations

import itertools
import os
import threading
from contextvars import copy_context
from typing import Any, Iterator

from lgembed.errors import GraphBubbleUp
from lgembed.pregel._exec import aexecute, execute, sync_timeout_unsupported

__all__ = ("POOL_SIZE", "WorkerPool", "aexecute", "arun_tasks", "execute", "run_tasks", "sync_timeout_unsupported")

POOL_SIZE = min(32, (os.cpu_count() or 1) + 4)
# worker threads of a graph's pool: the size of the per-run pool LangGraph uses
# (Python's default, min(32, CPUs + 4)), so a step runs at most that many tasks at once


_START_LOCK = threading.Lock()


class WorkerPool:
    """Worker threads for parallel steps, started only when needed, up to `POOL_SIZE`
    (one per compiled graph, kept by `lgembed.pregel._driver.pool`)."""

    __slots__ = ("_executor",)

    def __init__(self) -> None:
        self._executor: Any = None

    def executor(self) -> Any:
        """The pool's `ThreadPoolExecutor` (its threads start on first use)."""
        executor = self._executor
        if executor is None:
            from concurrent.futures import ThreadPoolExecutor

            with _START_LOCK:  # runs of the graph in other threads may start it too
                executor = self._executor
                if executor is None:
                    executor = ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="lgembed")
                    self._executor = executor
        return executor

    def submit(self, fn: Any, *args: Any) -> Any:
        """Runs `fn(*args)` on a worker thread; returns its future."""
        executor = self._executor
        if executor is None:
            executor = self.executor()
        return executor.submit(fn, *args)


def run_tasks(run: Any, tasks: list, pool: WorkerPool, participate: bool = False) -> Iterator[None]:
    """Runs a step's tasks; commits each as it finishes. Yields whenever chunks may be ready.

    A lone task runs inline. Several are taken from a shared queue by worker threads
    of the graph's pool (L-30), and by the calling thread too when `participate` is
    set (invoke: nobody waits for chunks, and short tasks then need no thread
    hand-off). Completions are committed in completion order; after a real failure,
    tasks not yet started are dropped (L-32).
    """
    if len(tasks) == 1:
        task = tasks[0]
        execute(task)
        run.commit(task)
        yield None
        yield from _run_handlers(run)
        return
    import queue
    from collections import deque

    todo = deque(tasks)
    done: queue.SimpleQueue = queue.SimpleQueue()
    run.waker = done
    base = copy_context()
    limit = run.config.get("max_concurrency") or 0
    n_workers = len(tasks) - 1 if participate else len(tasks)
    if limit:
        n_workers = min(n_workers, limit - 1 if participate else limit)
    n_workers = min(n_workers, POOL_SIZE)

    # Workers start one after another: while more than one task is queued, a worker
    # submits the next worker before taking a task, so short tasks that the caller
    # finishes itself wake no thread, blocking tasks still all start (L-30), and (as the
    # new thread usually takes the first task) short tasks still finish in queue order.
    started = itertools.count(1)

    def spawn() -> None:
        if next(started) <= n_workers:
            pool.submit(work)

    def work() -> None:
        while True:
            if len(todo) > 1:
                spawn()
            try:
                task = todo.popleft()
            except IndexError:
                return
            try:
                base.copy().run(execute, task)
            finally:
                done.put(task)

    if n_workers > 0:
        spawn()
    pending = len(tasks)
    failed = False
    try:
        while pending:
            item = None
            if participate:
                try:
                    mine = todo.popleft()
                except IndexError:
                    mine = None
                if mine is not None:
                    base.copy().run(execute, mine)
                    done.put(mine)
                    continue
            item = done.get()
            if item is None:
                yield None
                continue
            pending -= 1
            run.commit(item)
            if _is_failure(item) and not failed:
                failed = True
                dropped = len(todo)
                todo.clear()
                pending -= dropped
            yield None
            yield from _run_handlers(run)
    finally:
        run.waker = None


def _is_failure(task: Any) -> bool:
    error = task.error
    return error is not None and not task.handled and not isinstance(error, GraphBubbleUp)


def _run_handlers(run: Any) -> Iterator[None]:
    """Runs the error handlers scheduled by failed tasks, in the same step (E-9)."""
    while run.pending_handlers:
        handler = run.pending_handlers.pop(0)
        run.tasks.append(handler)
        execute(handler)
        run.commit(handler)
        yield None


async def _arun_handlers(run: Any) -> Any:
    while run.pending_handlers:
        handler = run.pending_handlers.pop(0)
        run.tasks.append(handler)
        await aexecute(handler)
        run.commit(handler)


async def arun_tasks(run: Any, tasks: list) -> Any:
    """Async twin of `run_tasks`: an async generator of wake-ups."""
    import asyncio

    if len(tasks) == 1:
        task = tasks[0]
        await aexecute(task)
        run.commit(task)
        await _arun_handlers(run)
        yield None
        return
    limit = run.config.get("max_concurrency") or None
    sem = asyncio.Semaphore(limit) if limit else None
    wake = asyncio.Event()
    loop = asyncio.get_running_loop()

    class _Waker:
        def put(self, _item: Any) -> None:
            loop.call_soon_threadsafe(wake.set)

    run.waker = _Waker()

    async def one(task: Any) -> Any:
        if sem is None:
            await aexecute(task)
        else:
            async with sem:
                await aexecute(task)
        return task

    # Why `finished`: futures that end in the same loop iteration are committed in the
    # order they ended (their done callbacks run in that order), as LangGraph commits
    # them; the set asyncio.wait returns has no order
    finished: list = []
    pending = {}
    for t in tasks:
        fut = asyncio.ensure_future(one(t))
        fut.add_done_callback(finished.append)
        pending[fut] = t
    failed = False
    try:
        while pending:
            if not finished:
                waiter = asyncio.ensure_future(wake.wait())
                await asyncio.wait(set(pending) | {waiter}, return_when=asyncio.FIRST_COMPLETED)
                if not waiter.done():
                    waiter.cancel()
            wake.clear()
            while finished:
                fut = finished.pop(0)
                task = pending.pop(fut, None)
                if task is None or fut.cancelled():
                    continue
                run.commit(task)
                if _is_failure(task) and not failed:
                    failed = True
                    for other in pending:
                        other.cancel()
            await _arun_handlers(run)
            yield None
    finally:
        run.waker = None
        for fut in pending:
            fut.cancel()
