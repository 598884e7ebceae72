"""Executing one task in the calling thread or on the event loop, with retries (L-31…L-33, E-3…E-5).

Why apart from `_runner`: this is the per-task hot path, compiled with the engine
(`lgembed/_engine.py`); `_runner`, which hands tasks to worker threads, stays source
(see `SOURCE_ONLY` there). The step loop that calls both is `_driver`.
"""

from __future__ import annotations

import time
from time import time as _wall_time
from typing import Any

from lgembed.config import _TASK
from lgembed.errors import GraphBubbleUp, ParentCommand, add_note
from lgembed.types import Command

# bound once: a task's start and end set and reset the current task (no attribute
# lookups per task)
_set_task = _TASK.set
_reset_task = _TASK.reset


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
    if not policy.jitter:
        return interval
    import random  # only a jittered retry needs it (not imported by `import lgembed.graph`)

    return interval + random.uniform(0, 1)


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
        if (
            type(returned) is not dict
            and hasattr(returned, "invoke")
            and not isinstance(returned, type)
            and not isinstance(returned, dict)
        ):
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
        if (
            type(returned) is not dict
            and hasattr(returned, "ainvoke")
            and not isinstance(returned, type)
            and not isinstance(returned, dict)
        ):
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
        task.first_attempt_time = _wall_time()
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


def _log_retry(task: Any, delay: float, attempts: int, exc: BaseException) -> None:
    """LangGraph's log line after the wait before a retry (E-5), sync and async alike."""
    # logging imported here, on the first retry: at module level it was most of the
    # first invoke's cost (logging pulls traceback, textwrap, string and compiles regexes)
    import logging

    logging.getLogger("lgembed.pregel").info(
        f"Retrying task {task.name} after {delay:.2f} seconds (attempt {attempts}) "
        f"after {exc.__class__.__name__} {exc}",
        exc_info=exc,
    )


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
    token = _set_task(task)
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
                _log_retry(task, delay, attempts, exc)
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: stop the run
        task.error = exc
        raise
    finally:
        _reset_task(token)


async def aexecute(task: Any) -> None:
    """Async twin of `execute`."""
    import asyncio

    token = _set_task(task)
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
                _log_retry(task, delay, attempts, exc)
    finally:
        _reset_task(token)


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


def run_alone(run: Any, tasks: list) -> bool:
    """Runs and commits a step's only task in the calling thread, when it has no error
    handler (that could add a task to the step, E-9). Returns False, running nothing,
    for any other step."""
    if len(tasks) != 1:
        return False
    task = tasks[0]
    node = task.node
    if node is not None and node.error_handler:
        return False
    execute(task)
    run.commit(task)
    return True
