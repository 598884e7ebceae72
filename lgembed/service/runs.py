"""RunManager: executes the API's runs on a small worker pool, and drains and resumes them.

Why this module exists: a run of LangGraph's Agent Server is a graph execution on a
thread, started by a request and watched by others (wait, stream, join). On a device
the same runs must also survive the service's life: a SIGTERM lets the running step
finish and checkpoint, and a restart, also after SIGKILL or a power cut, starts again
the runs that were cut off. This module is that bookkeeping, without the HTTP part
(`lgembed.service.http` / `lgembed.service.api` sit on top of it).

The parts beside it: `run_request` checks a run's options and makes its record,
`execution` runs the graph on a worker thread and fans its events out to subscribers
(`LiveRun`, `RunHandle`), `shapes` builds the JSON LangGraph's server answers with, and
`errors` holds the refusals with their HTTP status.

Records: a run is "pending" until its first chunk (which comes after its input was
checkpointed), then "running"; it ends "success" (also when it stops at an interrupt),
"error" or "interrupted" (cancelled). A drained run goes back to "pending" with the
mark `_started`, so `resume_interrupted` continues it from its last checkpoint (input
None) instead of applying its input again. One run is active per thread; others wait in
a per-thread queue (multitask strategy "enqueue", LangGraph's default).

Memory: the manager keeps only the runs that are pending or running; a finished run's
record lives in the store, its events are gone. Callers that need a finished run's
output hold a `RunHandle` taken when they created it.

Why this file is longer than 600 lines: what is left here is the run state machine
(create, queue, execute, finish, cancel, drain, resume), one protocol over one lock;
split across modules its invariants (one active run per thread, a record for every
transition, subscribers released exactly once) could no longer be checked in one
reading. Everything that is not the state machine lives in the modules named above.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections import deque
from typing import Any

from lgembed.service.errors import BadRequest, Conflict, Invalid, NotFound, ServiceError, Unavailable
from lgembed.service.execution import LiveRun, RunHandle
from lgembed.service.records import Records, now_iso, thread_record, uuid7
from lgembed.service.run_request import MULTITASK_STRATEGIES, STREAM_MODES, parse_run_request
from lgembed.service.shapes import (
    assistant_id_for,
    checkpoint_of,
    command_from_json,
    error_payload,
    interrupt_json,
    output_from_state,
    thread_status,
)

__all__ = (
    "MULTITASK_STRATEGIES",
    "STREAM_MODES",
    "BadRequest",
    "Conflict",
    "Invalid",
    "NotFound",
    "RunHandle",
    "RunManager",
    "ServiceError",
    "Unavailable",
    "assistant_id_for",
    "checkpoint_of",
    "command_from_json",
    "error_payload",
    "interrupt_json",
)

log = logging.getLogger("lgembed.service")


# --- the manager ------------------------------------------------------------------------------


class RunManager:
    """Creates, executes, drains and resumes the runs of the served graphs.

    Args:
        graphs: graph id -> compiled graph, compiled with `checkpointer=saver` (and
            `store=store`) by the caller.
        saver: the checkpointer of the graphs; records go into its LMDB environment.
        store: the graphs' store (kept as `self.store`; records do not go there).
        workers: number of runs that execute at once (threads).
        max_runs_per_thread: finished run records kept per thread (older ones are
            deleted; checkpoints are not touched).

    Raises:
        ValueError: when `graphs` is empty or `workers` < 1.
        LmdbError: when the records store cannot be opened.
    """

    def __init__(
        self,
        graphs: dict[str, Any],
        saver: Any,
        store: Any = None,
        *,
        workers: int = 2,
        max_runs_per_thread: int = 100,
    ) -> None:
        if not graphs:
            raise ValueError("RunManager: 'graphs' must name at least one compiled graph (got none)")
        if workers < 1:
            msg = f"RunManager: 'workers' must be at least 1 (got {workers!r})"
            raise ValueError(msg)
        self.graphs = dict(graphs)
        self.saver = saver
        self.store = store
        self.records = Records(saver)
        self.assistants = {assistant_id_for(gid): gid for gid in self.graphs}
        """assistant id -> graph id."""
        self.created_at = now_iso()
        self.max_runs_per_thread = max_runs_per_thread
        self.accepting = True
        """False once `drain()` began: new runs are refused (HTTP 503)."""
        self.lock = threading.RLock()
        """Held while runs are scheduled, and by thread operations that must not overlap a run."""
        self._runs: dict[str, LiveRun] = {}
        self._thread_active: dict[str, str] = {}
        self._thread_queue: dict[str, deque] = {}
        self._ready: queue.Queue = queue.Queue()
        self._draining = False
        self._idle = threading.Condition(self.lock)
        self._warned: set = set()
        self._closed = False
        self._done = 0
        self._failed = 0
        self._last_error: str | None = None
        self._workers = [
            threading.Thread(target=self._work, name=f"lgembed-run-{i}", daemon=True) for i in range(workers)
        ]
        for t in self._workers:
            t.start()

    # --- lookups ---------------------------------------------------------------------------

    def graph_id_of(self, assistant_id: str) -> str:
        """The graph id an assistant id (or a graph id) names.

        Raises:
            NotFound: for a UUID that is no served assistant.
            Invalid: for anything else (LangGraph's 422 text).
        """
        if assistant_id in self.graphs:
            return assistant_id
        gid = self.assistants.get(str(assistant_id))
        if gid is not None:
            return gid
        try:
            uuid.UUID(str(assistant_id))
        except ValueError:
            keys = ", ".join(self.graphs)
            msg = (
                f"Invalid assistant: '{assistant_id}'. Must be either:\n- A valid assistant UUID, or\n"
                f"- One of the registered graphs: {keys}"
            )
            raise Invalid(msg) from None
        raise NotFound("Thread or assistant not found.")

    def is_busy(self, thread_id: str) -> bool:
        """Whether a run of the thread is pending or running in this process."""
        with self.lock:
            return thread_id in self._thread_active

    def pending_runs(self, thread_id: str) -> list[str]:
        """Ids of the thread's runs that are pending or running, oldest first."""
        with self.lock:
            active = self._thread_active.get(thread_id)
            if active is None:
                return []
            return [active, *self._thread_queue.get(thread_id, ())]

    def stats(self) -> dict[str, Any]:
        """Run counts since start, for status lines: `{"done", "failed", "active", "last_error"}`
        ("done": runs that ended without error, "active": pending or running now)."""
        with self.lock:
            return {
                "done": self._done,
                "failed": self._failed,
                "active": len(self._runs),
                "last_error": self._last_error,
            }

    def in_flight(self) -> list[tuple[str, str, str]]:
        """`(thread_id, run_id, "pending" | "running")` of every run pending or running here."""
        with self.lock:
            return [(r.thread_id, r.id, "running" if r.executing else "pending") for r in self._runs.values()]

    @staticmethod
    def public(record: dict) -> dict:
        """A record without its private (`_`-prefixed) fields."""
        return {k: v for k, v in record.items() if not k.startswith("_")}

    # --- creating runs --------------------------------------------------------------------

    def create_run(
        self, thread_id: str | None, assistant_id: str, *, on_completion: str = "keep", **options: Any
    ) -> dict:
        """Creates a run and queues it; returns its record (status "pending").

        Keyword options (`lgembed.service.run_request.parse_run_request`): `input`,
        `command`, `stream_mode` ("values"), `config`, `metadata`, `multitask_strategy`
        ("reject"), `on_completion` ("keep"), `context`, `interrupt_before`,
        `interrupt_after`, `stream_subgraphs`, `checkpoint` (a checkpoint dict),
        `checkpoint_id`; and `if_not_exists` ("reject", or "create" to make the thread).

        Raises:
            Unavailable: while draining.
            NotFound: unknown thread (with if_not_exists "reject") or assistant.
            Invalid: an unknown stream mode, multitask strategy or assistant name.
            BadRequest: a resume without thread, or both configurable and context.
            Conflict: the thread is busy and `multitask_strategy` is "reject".
            LmdbError: when the records cannot be written.
        """
        return self._submit(thread_id, assistant_id, handle=False, on_completion=on_completion, **options)

    def stream_run(self, thread_id: str | None, assistant_id: str, *, events: bool = True, **kwargs: Any) -> RunHandle:
        """Like `create_run`, but returns a `RunHandle` subscribed before the run can
        start, so no event is missed (`events=False`: only the output is wanted).
        Without `on_completion`, a run without a thread deletes the thread it makes.

        Raises:
            As `create_run`.
        """
        return self._submit(thread_id, assistant_id, handle=True, events=events, **kwargs)

    def _submit(
        self,
        thread_id: str | None,
        assistant_id: str,
        *,
        handle: bool,
        events: bool = False,
        if_not_exists: str = "reject",
        **options: Any,
    ) -> Any:
        if not self.accepting:
            raise Unavailable(
                "The service is stopping (draining its runs) and accepts no new runs; retry once it has restarted."
            )
        graph_id = self.graph_id_of(assistant_id)
        aid = assistant_id_for(graph_id)
        req = parse_run_request(thread_id, **options)
        if req.dropped:
            self._warn_dropped(req.dropped)
        tid = str(thread_id) if thread_id is not None else uuid7()
        rid = uuid7()
        now = now_iso()
        with self.lock, self.records.lock:
            if not self.accepting:
                raise Unavailable("The service is stopping (draining its runs) and accepts no new runs.")
            thread = self.records.get_thread(tid)
            if thread is None:
                if thread_id is not None and if_not_exists != "create":
                    raise NotFound("Thread or assistant not found.")
                thread = thread_record(tid, req.thread_metadata(graph_id, aid), "busy", now)
            inflight = self.pending_runs(tid)
            if inflight and req.multitask_strategy == "reject":
                raise Conflict(
                    "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."
                )
            record = req.record(rid, thread, graph_id, aid, now)
            thread["status"] = "busy"
            thread["updated_at"] = now
            thread["metadata"] = {**thread.get("metadata", {}), "graph_id": graph_id, "assistant_id": aid}
            thread["_runs"] = thread.get("_runs", 0) + 1
            self.records.write(thread=thread, runs=(record,), active=(record,))
            run = LiveRun(record, graph_id=graph_id, resume=False, attempt=1, temporary=req.temporary, context=req.context)
            public = self.public(record)
            result = RunHandle(run, public, events=events, fallback=self.fallback_output) if handle else public
            self._runs[rid] = run
            if inflight and req.multitask_strategy == "interrupt":
                for other in inflight:
                    self._cancel_locked(other, "interrupt")
            self._schedule_locked(run)
        # DEBUG: "ended" (INFO) is the one line per run; two would make a 5 s trigger write 35,000 journal lines a day
        log.debug("run %s created on thread %s (graph %s)", rid, tid, graph_id)
        return result

    def _warn_dropped(self, dropped: set) -> None:
        new = sorted(k for k in dropped if k not in self._warned)
        if new and len(self._warned) < 1000:
            self._warned.update(new)
            log.warning(
                "credential-like keys were left out of what is stored for a run (config, metadata, context); "
                "config and metadata keys are not passed to the graph either, since checkpoint metadata would "
                "keep them: %s. Give graphs their secrets through the service's environment or the run's context",
                ", ".join(new),
            )

    def _schedule_locked(self, run: LiveRun) -> None:
        tid = run.thread_id
        if tid in self._thread_active:
            self._thread_queue.setdefault(tid, deque()).append(run.id)
        else:
            self._thread_active[tid] = run.id
            self._ready.put(run.id)

    # --- executing runs ---------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            rid = self._ready.get()
            if rid is None:
                return
            with self.lock:
                run = self._runs.get(rid)
                if run is None or run.executing:
                    continue
                if run.cancel is not None:
                    pass
                elif self._draining:
                    # stays pending on disk: resume_interrupted starts it after the restart
                    self._forget_locked(run)
                    run.finish()
                    continue
                run.executing = True
                run.progress = time.monotonic()
            try:
                if run.cancel is not None:
                    self._finish(run, "interrupted", None, stopped=None)
                else:
                    self._execute(run)
            except BaseException:  # never let a worker die
                log.exception("run %s: the worker failed while finishing the run", rid)
                with self.lock:
                    self._forget_locked(run)
                run.finish()

    def _execute(self, run: LiveRun) -> None:
        stopped, error = run.execute(
            self.graphs[run.graph_id], on_start=self._mark_started, draining=lambda: self._draining
        )
        if stopped == "drain":
            self._finish(run, "pending", None, stopped="drain")
        elif stopped == "cancel" or (run.cancel is not None and error is None):
            self._finish(run, "interrupted", None, stopped="cancel")
        else:
            self._finish(run, "error" if error is not None else "success", error, stopped=None)

    def _mark_started(self, run: LiveRun) -> None:
        run.started = True
        rec = run.record
        rec["status"] = "running"
        rec["_started"] = True
        rec["updated_at"] = now_iso()
        try:
            self.records.write(runs=(rec,))
        except Exception:
            log.exception("run %s: could not record that it is running", run.id)

    def _finish(self, run: LiveRun, status: str, error: BaseException | None, *, stopped: str | None) -> None:
        """Records how a run ended, updates its thread, releases its waiters, starts the
        thread's next run."""
        tid = run.thread_id
        err = None
        if error is not None:
            err = error_payload(error)
            log.error("run %s on thread %s failed: %s: %s", run.id, tid, type(error).__name__, error, exc_info=error)
            run.absorb("error", err)
            run.publish("error", err)
        state = None
        if stopped != "drain":
            state = self._thread_state(run.graph_id, tid, f"run {run.id}: could not read the thread's state after the run")
        now = now_iso()
        rec = run.record
        rec["status"] = status
        rec["updated_at"] = now
        if status == "pending":
            rec["_started"] = run.started
        with self.lock:
            more = bool(self._thread_queue.get(tid)) or self._thread_active.get(tid) not in (None, run.id)
            protect = {r for r in self.pending_runs(tid) if r != run.id}
        after = None
        if stopped != "drain":
            after = thread_status(state, err, more)
        run.output = run.result() if stopped != "drain" else None
        if run.output is None and stopped != "drain":
            run.output = output_from_state(state, err, after)
        try:
            if run.temporary:
                self.records.delete_thread(tid)
                self.saver.delete_thread(tid)
            elif stopped == "drain":
                self.records.write(runs=(rec,))
            else:
                self.records.end_run(
                    rec, status=after, error=err, graph_id=run.graph_id, now=now,
                    keep=self.max_runs_per_thread, protect=protect,
                )  # fmt: skip
        except Exception as e:
            log.exception(
                "run %s: could not record its end (status %s); the thread keeps its last record", run.id, status
            )
            with self.lock:
                self._last_error = f"run {run.id}: recording its end failed: {type(e).__name__}: {e}"
        if stopped != "drain":
            log.info("run %s on thread %s ended: %s", run.id, tid, status)
            with self.lock:
                if error is not None:
                    self._failed += 1
                    self._last_error = f"run {run.id}: {type(error).__name__}: {error}"
                else:
                    self._done += 1
        with self.lock:
            self._forget_locked(run)
        run.finish()

    def _forget_locked(self, run: LiveRun) -> None:
        """Removes a run from memory and hands its thread to the next queued run."""
        self._runs.pop(run.id, None)
        tid = run.thread_id
        if self._thread_active.get(tid) == run.id:
            del self._thread_active[tid]
            q = self._thread_queue.get(tid)
            while q:
                nxt = q.popleft()
                if nxt in self._runs:
                    self._thread_active[tid] = nxt
                    self._ready.put(nxt)
                    break
            if q is not None and not q:
                self._thread_queue.pop(tid, None)
        else:
            q = self._thread_queue.get(tid)
            if q is not None and run.id in q:
                q.remove(run.id)
                if not q:
                    self._thread_queue.pop(tid, None)
        if run.executing:
            run.executing = False
        self._idle.notify_all()

    def _thread_state(self, graph_id: str | None, thread_id: str, failure: str) -> Any:
        """The thread's state (root namespace) in its graph, or None when the graph is not
        served or reading fails (logged with `failure`)."""
        graph = self.graphs.get(graph_id)
        if graph is None:
            return None
        try:
            return graph.get_state({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        except Exception:
            log.exception("%s", failure)
            return None

    def fallback_output(self, thread_id: str) -> Any:
        """`runs.join`'s body for a run that ended before the caller held it: from the
        thread (error, interrupts or values), as LangGraph's server answers."""
        thread = self.records.get_thread(thread_id)
        if thread is None:
            return {}
        graph_id = (thread.get("metadata") or {}).get("graph_id")
        state = self._thread_state(graph_id, thread_id, f"thread {thread_id}: could not read its state")
        return output_from_state(state, thread.get("error"), thread.get("status"))

    # --- waiting, joining, cancelling ---------------------------------------------------------

    def join(self, thread_id: str, run_id: str, *, events: bool = False) -> RunHandle:
        """A handle on an existing run (subscribed from now on when `events`).

        Raises:
            NotFound: when the thread has no such run.
        """
        with self.lock:
            run = self._runs.get(run_id)
            if run is not None and run.thread_id == thread_id:
                return RunHandle(run, self.public(run.record), events=events, fallback=self.fallback_output)
        rec = self.records.get_run(thread_id, run_id)
        if rec is None:
            raise NotFound(f"Run {run_id} not found")
        return RunHandle(None, self.public(rec), events=events, fallback=self.fallback_output)

    def wait(self, run_id: str, timeout: float | None = None) -> dict:
        """The run's record once it has ended (or its current record after `timeout`).

        Raises:
            NotFound: when no run has this id.
        """
        with self.lock:
            run = self._runs.get(run_id)
        if run is not None:
            run.done.wait(timeout)
            rec = self.records.get_run(run.thread_id, run_id)
            return self.public(rec if rec is not None else run.record)
        for marker in self.records.active():
            if marker["run_id"] == run_id:
                rec = self.records.get_run(marker["thread_id"], run_id)
                if rec is not None:
                    return self.public(rec)
        for thread in self.records.threads():
            rec = self.records.get_run(thread["thread_id"], run_id)
            if rec is not None:
                return self.public(rec)
        raise NotFound(f"Run {run_id} not found")

    def get_run(self, thread_id: str, run_id: str) -> dict:
        """The run record.

        Raises:
            NotFound: when the thread has no such run.
        """
        rec = self.records.get_run(thread_id, run_id)
        if rec is None:
            raise NotFound(f"Run {run_id} not found")
        return self.public(rec)

    def cancel(self, thread_id: str, run_id: str, *, action: str = "interrupt") -> None:
        """Cancels a pending or running run: a queued one never starts, a running one stops
        at its next superstep boundary (its steps so far stay checkpointed). Status
        "interrupted".

        Raises:
            Invalid: for action "rollback" (not supported) or another unknown action.
            NotFound: when the run is not pending or running.
        """
        if action != "interrupt":
            msg = f"cancel action must be 'interrupt' (got {action!r}); lgembed does not roll back checkpoints"
            raise Invalid(msg)
        with self.lock:
            run = self._runs.get(run_id)
            if run is None or run.thread_id != thread_id:
                raise NotFound(
                    "No matching runs to cancel. Please verify the thread ID and run IDs are correct, "
                    "and the runs haven't been deleted or completed."
                )
            self._cancel_locked(run_id, action)

    def _cancel_locked(self, run_id: str, action: str) -> None:
        run = self._runs.get(run_id)
        if run is None or run.cancel is not None:
            return
        run.cancel = action
        if not run.executing and self._thread_active.get(run.thread_id) != run_id:
            # queued behind another run: it ends now, without executing
            q = self._thread_queue.get(run.thread_id)
            if q is not None and run_id in q:
                q.remove(run_id)
            # a worker finishes it ("interrupted") as if it had been scheduled
            self._ready.put(run.id)

    def delete_run(self, thread_id: str, run_id: str) -> None:
        """Deletes a finished run's record.

        Raises:
            Conflict: when the run is pending or running.
            NotFound: when the thread has no such run.
        """
        with self.lock:
            if run_id in self._runs:
                raise Conflict(f"Run {run_id} is pending or running; cancel it before deleting it")
        if not self.records.delete_run(thread_id, run_id):
            raise NotFound(f"Run {run_id} not found")

    def list_runs(self, thread_id: str, *, limit: int = 10, offset: int = 0, status: str | None = None) -> list[dict]:
        """The thread's runs, newest first.

        Raises:
            NotFound: when there is no such thread.
        """
        if self.records.get_thread(thread_id) is None:
            raise NotFound(f"Thread with ID {thread_id} not found")
        runs = [r for r in reversed(self.records.runs(thread_id)) if status is None or r.get("status") == status]
        return [self.public(r) for r in runs[offset : offset + limit]]

    # --- service life ---------------------------------------------------------------------

    def resume_interrupted(self) -> list[str]:
        """Starts again the runs recorded as pending or running, which a stop, a SIGKILL or
        a power cut cut off: a run that had started continues from its last checkpoint,
        one that had not starts with its input. Returns their ids, oldest first.

        Threads recorded "busy" without such a run get their status from their state.

        Raises:
            LmdbError: when the records cannot be read.
        """
        resumed: list[str] = []
        for marker in self.records.active():
            rid, tid = marker["run_id"], marker["thread_id"]
            with self.lock:
                if rid in self._runs:
                    continue
            rec = self.records.get_run(tid, rid)
            if rec is None or rec.get("status") not in ("pending", "running"):
                self.records.write(inactive=(rid,))
                continue
            gid = ((rec.get("kwargs") or {}).get("config") or {}).get("configurable", {}).get("graph_id")
            if gid not in self.graphs or self.records.get_thread(tid) is None:
                reason = f"graph {gid!r} is not served" if gid not in self.graphs else "its thread is gone"
                log.warning("run %s on thread %s cannot be resumed: %s; it is marked as failed", rid, tid, reason)
                rec["status"] = "error"
                rec["updated_at"] = now_iso()
                self.records.write(runs=(rec,), inactive=(rid,))
                continue
            started = bool(rec.get("_started"))
            attempt = int(rec.get("_attempt", 1)) + 1
            rec["_attempt"] = attempt
            rec["status"] = "pending"
            run = LiveRun(
                rec,
                graph_id=gid,
                resume=started,
                attempt=attempt,
                temporary=bool(rec["kwargs"].get("temporary")),
                context=rec["kwargs"].get("context") or None,
            )
            with self.lock:
                self._runs[rid] = run
                self._schedule_locked(run)
            resumed.append(rid)
            log.info(
                "run %s on thread %s resumed (%s)",
                rid,
                tid,
                "from its last checkpoint" if started else "from its input, it had not started",
            )
        for thread in self.records.threads():
            tid = thread["thread_id"]
            if thread.get("status") == "busy" and not self.is_busy(tid):
                graph_id = (thread.get("metadata") or {}).get("graph_id")
                state = self._thread_state(graph_id, tid, f"thread {tid}: could not read its state")
                status = thread_status(state, thread.get("error"), False)
                self.records.update_thread(tid, lambda t, s=status: t.__setitem__("status", s))
        return resumed

    def drain(self, timeout: float) -> bool:
        """Stops accepting runs; running runs stop after their current superstep (its
        checkpoint written) and stay "pending" for `resume_interrupted`; queued runs stay
        pending. Returns True when every run stopped within `timeout` seconds."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self.lock:
            self.accepting = False
            self._draining = True
            while True:
                busy = [r for r in self._runs.values() if r.executing]
                if not busy:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning(
                        "drain: %d run(s) still in a superstep after %.1f s: %s",
                        len(busy),
                        timeout,
                        ", ".join(r.id for r in busy),
                    )
                    return False
                self._idle.wait(min(left, 0.5))
            # queued runs stay pending on disk; release whoever waits for them
            waiting = list(self._runs.values())
            for run in waiting:
                self._runs.pop(run.id, None)
            self._thread_active.clear()
            self._thread_queue.clear()
        for run in waiting:
            run.finish()
        return True

    def stalled(self, max_step_seconds: float) -> list[str]:
        """Ids of the executing runs whose current superstep (time since their last
        chunk) has run longer than `max_step_seconds`."""
        now = time.monotonic()
        with self.lock:
            return [r.id for r in self._runs.values() if r.executing and now - r.progress > max_step_seconds]

    def close(self) -> None:
        """Drains (without waiting), stops the workers and closes the records store.
        The saver and the store stay open (the caller owns them).

        Raises:
            LmdbError: when the records store's final flush fails.
        """
        if self._closed:
            return
        self._closed = True
        if not self._draining:
            self.drain(0)
        for _ in self._workers:
            self._ready.put(None)
        for t in self._workers:
            t.join(timeout=5)
        self.records.close()
