"""The step driver: one step loop for invoke, stream and their async forms, and the worker pool (L-30…L-33).

Why this module exists: a run (`lgembed.pregel._loop.Run`) knows what a step is
(`tick` prepares the next step's tasks, `commit` takes a finished task,
`after_tasks` applies the step); something must loop over the steps and decide
where tasks run. That loop is `steps`, written once; `drive` (sync: invoke and
stream) and `adrive` (async: ainvoke and astream) only run each step's tasks, and
say when chunks may be waiting in `run.out`. Where one task executes is
`lgembed.pregel._exec`; fanning a step's tasks out to threads or asyncio tasks is
`lgembed.pregel._runner`, with the graph's `WorkerPool`, which this module creates
and keeps on the compiled graph (`pool`).

Strategy: a step with one task and no error handler runs inline (`run_alone`), no
thread hand-off. `drive` yields only when `run.out` holds chunks, so invoke (no
chunks: values are read at the end, V-2) never suspends.
"""

from __future__ import annotations

import threading
from typing import Any, AsyncIterator, Iterator

from lgembed.pregel._exec import run_alone
from lgembed.pregel._runner import WorkerPool, arun_tasks, run_tasks

__all__ = ("adrive", "drive", "pool", "steps")

_POOL_LOCK = threading.Lock()
# guards the lazy creation of each graph's worker pool


def pool(graph: Any) -> WorkerPool:
    """The graph's worker pool for parallel steps, created on first use.

    Why one pool per compiled graph: starting threads costs far more than a small
    step; idle workers are reused across runs. Graphs made by `Pregel.copy()` (e.g.
    `with_config`) share their original's pool once it exists.
    """
    found = graph.__dict__.get("_pool")
    if found is None:
        with _POOL_LOCK:
            found = graph.__dict__.get("_pool")
            if found is None:
                found = graph._pool = WorkerPool()
    return found


def steps(run: Any) -> Iterator[Any]:
    """The step loop of every driver.

    Yields each step's tasks (a list) for the caller to run and commit before it
    resumes the loop, then None once the step is applied (chunks of the step may be
    waiting). Ends when the run is over; `run.end_of_tasks()` is called when no step
    is left.
    """
    while True:
        tasks = run.tick()
        if tasks is None:
            run.end_of_tasks()
            return
        yield tasks
        if run.after_tasks():
            return
        yield None


def drive(run: Any, participate: bool) -> Iterator[None]:
    """Runs `run` to its end in this thread (invoke, stream), yielding whenever chunks
    are waiting in `run.out`.

    Args:
        run: the prepared run.
        participate: whether the calling thread takes tasks of a parallel step too
            (invoke: nobody waits for chunks, so short tasks need no hand-off).
    """
    out = run.out
    for tasks in steps(run):
        if out:
            yield None
        if tasks is None:
            continue
        if run_alone(run, tasks):
            if out:
                yield None
        else:
            yield from run_tasks(run, tasks, pool(run.graph), participate)


async def adrive(run: Any) -> AsyncIterator[None]:
    """Async twin of `drive` (ainvoke, astream): tasks run as asyncio tasks."""
    out = run.out
    for tasks in steps(run):
        if out:
            yield None
        if tasks is None:
            continue
        async for _ in arun_tasks(run, tasks):
            if out:
                yield None
