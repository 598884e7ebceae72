"""Running a step's tasks: inline, on a thread pool, or as asyncio tasks, with retries (L-30…L-33, E-4, E-5).

Why this split: `Run` (in `_loop`) decides what runs and what a result means;
this module only decides how tasks execute and in which order their completions
reach `Run.commit` (completion order, as LangGraph streams them).
"""

from __future__ import annotations

import itertools
import logging
import random
import time
from contextvars import copy_context
from typing import Any, Iterator

from lgembed.config import _TASK
from lgembed.errors import add_note
from lgembed.errors import GraphBubbleUp, ParentCommand
from lgembed.types import Command

logger = logging.getLogger("lgembed.pregel")


def _should_retry_on(policy: Any, exc: BaseException) -> bool:
    retry_on = policy.retry_on
    if isinstance(retry_on, (list, tuple)):
        return isinstance(exc, tuple(retry_on))
    if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
        return isinstance(exc, retry_on)
    if callable(retry_on):
        return bool(retry_on(exc))
    raise TypeError("retry_on must be an Exception class, a list or tuple of Exception classes, or a callable")


def _retry_delay(task: Any, exc: BaseException, attempts: int) -> float | None:
    """Seconds to wait before the next attempt, or None to give up (E-5)."""
    policies = task.node.retry_policy if task.node is not None else ()
    if not policies:
        policies = task.run.graph.retry_policy
    if not policies:
        return None
    policy = None
    for p in policies:
        if _should_retry_on(p, exc):
            policy = p
            break
    if policy is None or attempts >= policy.max_attempts:
        return None
    interval = min(policy.max_interval, policy.initial_interval * (policy.backoff_factor ** (attempts - 1)))
    return interval + random.uniform(0, 1) if policy.jitter else interval


def _retarget_parent_command(task: Any, exc: ParentCommand) -> None:
    """Addresses a Command(graph=PARENT) to the parent graph's namespace (N-8)."""
    from dataclasses import replace

    cmd = exc.args[0]
    if cmd.graph == Command.PARENT:
        # the graph that ran this task: its namespace is the task's own minus the last part
        exc.args = (replace(cmd, graph=task.run.parent_ns),)


def _command_for_task(task: Any, exc: ParentCommand) -> bool:
    """A Command a nested graph sent up to this task's graph is applied as this task's return (N-8)."""
    cmd = exc.args[0]
    ns = task.checkpoint_ns
    recast = "|".join(part.split(":")[0] for part in ns.split("|"))
    if cmd.graph in (ns, recast, task.name):
        from dataclasses import replace

        returned = replace(cmd, graph=None)
        writes = task.node.writes_for(returned)
        task.writes = writes
        return True
    return False


def _node_body(task: Any) -> None:
    """One attempt of a task: call the node, turn its return into writes, route branches."""
    node = task.node
    proc = node.proc
    if proc is None:
        returned = task.input
    else:
        returned = proc.call(task.input, task)
        if hasattr(returned, "invoke") and not isinstance(returned, type) and not isinstance(returned, dict):
            returned = returned.invoke(task.input, task.config)
    task.returned = returned
    writes = node.writes_for(returned)
    task.writes = writes
    for branch in node.branches:
        branch.route(task, returned, writes)


async def _anode_body(task: Any) -> None:
    node = task.node
    proc = node.proc
    if proc is None:
        returned = task.input
    else:
        returned = await proc.acall(task.input, task)
        if hasattr(returned, "ainvoke") and not isinstance(returned, type) and not isinstance(returned, dict):
            returned = await returned.ainvoke(task.input, task.config)
    task.returned = returned
    writes = node.writes_for(returned)
    task.writes = writes
    for branch in node.branches:
        await branch.aroute(task, returned, writes)


def _begin_attempt(task: Any) -> None:
    """Clears what a previous attempt of the task left (E-5)."""
    task.writes = []
    task.interrupt_idx = 0
    task.subgraph_counter = 0
    attempt = task.attempt + 1
    task.attempt = attempt
    if attempt == 1:
        task.first_attempt_time = time.time()
    else:
        # the runtime's execution_info (and the config holding it) names the attempt
        task._runtime = None
        task._config = None


def _after_failure(task: Any, exc: Exception, attempts: int) -> float | None:
    """Decides what a failed attempt means: returns the delay before the next attempt,
    or None when the task is done (a Command for this graph applied, an interrupt or a
    command bubbling up, or a failure that is not retried, which is stored in task.error)."""
    if isinstance(exc, ParentCommand):
        if _command_for_task(task, exc):
            return None
        _retarget_parent_command(task, exc)
        task.error = exc
        return None
    if isinstance(exc, GraphBubbleUp):
        task.error = exc  # interrupts are never retried (E-5)
        return None
    add_note(exc, f"During task with name '{task.name}' and id '{task.id}'")
    delay = _retry_delay(task, exc, attempts)
    if delay is None:
        task.error = exc
    return delay


def sync_timeout_unsupported(name: str) -> ValueError:
    """B-17: the error for a node with a timeout that would run synchronously."""
    return ValueError(
        "Node timeouts are only supported for async nodes because sync Python "
        f"execution cannot be safely cancelled in-process. Node {name!r} is sync."
    )


def execute(task: Any) -> None:
    """Runs `task` with retries in the current thread; stores an exception in `task.error`."""
    node = task.node
    if node is not None and node.timeout is not None:
        # B-17: the sync API never runs a node that has a timeout (not even an async one)
        task.error = sync_timeout_unsupported(task.name)
        return
    token = _TASK.set(task)
    attempts = 0
    try:
        while True:
            _begin_attempt(task)
            try:
                _node_body(task)
                return
            except Exception as exc:
                attempts += 1
                delay = _after_failure(task, exc, attempts)
                if delay is None:
                    return
                time.sleep(delay)
                logger.info(
                    f"Retrying task {task.name} after {delay:.2f} seconds (attempt {attempts}) "
                    f"after {exc.__class__.__name__} {exc}",
                    exc_info=exc,
                )
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: stop the run
        task.error = exc
        raise
    finally:
        _TASK.reset(token)


async def aexecute(task: Any) -> None:
    """Async twin of `execute`."""
    import asyncio

    token = _TASK.set(task)
    attempts = 0
    try:
        while True:
            _begin_attempt(task)
            try:
                timeout = task.node.timeout
                if timeout is not None and timeout.run_timeout is not None:
                    await _with_timeout(task, timeout.run_timeout)
                else:
                    await _anode_body(task)
                return
            except Exception as exc:
                attempts += 1
                delay = _after_failure(task, exc, attempts)
                if delay is None:
                    return
                await asyncio.sleep(delay)
    finally:
        _TASK.reset(token)


async def _with_timeout(task: Any, seconds: float) -> None:
    """Runs one attempt under `run_timeout`; raises NodeTimeoutError when it expires (E-3)."""
    import asyncio

    from lgembed.errors import NodeTimeoutError

    started = time.monotonic()
    try:
        await asyncio.wait_for(_anode_body(task), seconds)
    except asyncio.TimeoutError:
        elapsed = time.monotonic() - started
        raise NodeTimeoutError(task.name, elapsed, kind="run", run_timeout=seconds) from None


def run_tasks(run: Any, tasks: list, executor_holder: list, *, participate: bool = False) -> Iterator[None]:
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
    from lgembed.pregel.main import POOL_SIZE

    n_workers = min(n_workers, POOL_SIZE)

    # Workers start one after another: while more than one task is queued, a worker
    # submits the next worker before taking a task, so short tasks that the caller
    # finishes itself wake no thread, blocking tasks still all start (L-30), and (as the
    # new thread usually takes the first task) short tasks still finish in queue order.
    started = itertools.count(1)
    executor = run.graph._executor() if n_workers > 0 else None

    def spawn() -> None:
        if next(started) <= n_workers:
            executor.submit(work)

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

    if executor is not None:
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

    pending = {asyncio.ensure_future(one(t)): t for t in tasks}
    failed = False
    try:
        while pending:
            waiter = asyncio.ensure_future(wake.wait())
            done, _ = await asyncio.wait(set(pending) | {waiter}, return_when=asyncio.FIRST_COMPLETED)
            if waiter not in done:
                waiter.cancel()
            wake.clear()
            for fut in done:
                if fut is waiter:
                    continue
                task = pending.pop(fut)
                if fut.cancelled():
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
