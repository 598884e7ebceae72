"""A run executing: the graph's stream turned into the API's events and fanned out to
the run's subscribers.

Why this module exists: LangGraph's Agent Server streams a run to any number of clients
(the one that created it, others that join later) as SSE events of a fixed shape, and
folds the same events into the body `runs.wait` returns. That is one job, apart from the
run manager's bookkeeping (`lgembed.service.runs`: queues, records, drain, resume):

- `LiveRun`: a pending or running run in memory: executes the graph (`execute`), turns
  each chunk into events (`forward`), hands them to its subscribers (`publish`) and folds
  them into its result (`absorb`, `result`).
- `RunHandle`: a caller's hold on one run: a bounded queue of its events (nothing is
  buffered when nobody listens) and its output.

How a run executes: a worker thread of the run manager iterates the graph's
`stream(...)` with durability "sync" (every superstep is checkpointed before the next
starts) and turns the chunks into the API's events, which it hands to the run's
subscribers (one bounded queue per open SSE stream). Between chunks it records progress
(`RunManager.stalled()`), and at a superstep boundary (a root `values` chunk: the step's
checkpoint is written by then) it checks for a cancel or a drain. "values" is always
streamed internally for that purpose; the client gets it only when it asked.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from lgembed.service.records import dumps, jsonable
from lgembed.service.shapes import command_from_json, debug_checkpoint

__all__ = ("SUBSCRIBER_QUEUE", "SUBSCRIBER_WAIT", "LiveRun", "RunHandle")

log = logging.getLogger("lgembed.service")

SUBSCRIBER_QUEUE = 10_000
"""Events a slow stream reader may lag behind before the run waits for it."""
SUBSCRIBER_WAIT = 30.0
"""Seconds a run waits for a full subscriber queue before dropping that subscriber."""
_END = object()
# the last item a subscriber receives


class LiveRun:
    """A run that is pending or running in this process, with its subscribers and output."""

    def __init__(
        self, record: dict, *, graph_id: str, resume: bool, attempt: int, temporary: bool, context: Any
    ) -> None:
        self.record = record
        self.id: str = record["run_id"]
        self.thread_id: str = record["thread_id"]
        self.graph_id = graph_id
        self.resume = resume
        self.attempt = attempt
        self.temporary = temporary
        self.context = context
        # the run's context as the client gave it (the record holds it without credentials)
        self.subscribers: list[RunHandle] = []
        self.done = threading.Event()
        self.cancel: str | None = None
        self.executing = False
        self.progress = time.monotonic()
        self.started = bool(record.get("_started"))
        modes = record["kwargs"]["stream_mode"]
        self.modes = set(modes)
        self.subgraphs = bool(record["kwargs"].get("subgraphs"))
        self.seen_messages: set = set()
        # run-result state, as LangGraph's server folds a run's events into `runs.wait`'s body
        self.latest: Any = None
        self.interrupt_chunks: list = []
        self.errored = False
        self.output: Any = None
        self.lock = threading.Lock()

    # events -------------------------------------------------------------------------

    def publish(self, event: str, data: Any) -> None:
        """Hands one event to every subscriber (serialized once)."""
        if not self.subscribers:
            return
        payload = dumps(data)
        with self.lock:
            subs = list(self.subscribers)
        for sub in subs:
            sub._deliver((event, payload))

    def absorb(self, mode: str, data: Any) -> None:
        """Folds a published values/updates/error event into the `wait` result (LangGraph's
        `_RunResult`): the last values, or the chunks that carry interrupts, or the error."""
        if mode == "error":
            self.latest = {"__error__": data}
            self.errored = True
        elif mode in ("values", "updates") and isinstance(data, dict):
            interrupts = data.get("__interrupt__")
            if isinstance(interrupts, list) and interrupts:
                self.interrupt_chunks.append(data)
                self.latest = data
            elif mode == "values":
                self.latest = data

    def result(self) -> Any:
        """The folded result, or None when no event decided it (then the thread's state does)."""
        if not self.errored and self.interrupt_chunks:
            if len(self.interrupt_chunks) > 1:
                return {"__interrupt__": [i for c in self.interrupt_chunks for i in c["__interrupt__"]]}
            return self.interrupt_chunks[-1]
        return self.latest

    def finish(self) -> None:
        """Releases every subscriber and every waiter (called once)."""
        with self.lock:
            subs, self.subscribers = self.subscribers, []
        for sub in subs:
            sub._deliver(_END, block=False)
        self.done.set()

    # execution ----------------------------------------------------------------------

    def graph_config(self) -> dict:
        """The config the graph runs with: the record's, with the attempt in its metadata
        (and, when resuming, without a pinned checkpoint: the run goes on from the latest)."""
        kwargs = self.record["kwargs"]
        config = {k: v for k, v in kwargs["config"].items() if k not in ("configurable", "metadata")}
        configurable = dict(kwargs["config"].get("configurable") or {})
        if self.resume:
            for key in ("checkpoint_id", "checkpoint_map"):
                configurable.pop(key, None)
        configurable.setdefault("checkpoint_ns", "")
        config["configurable"] = configurable
        config["metadata"] = {**(kwargs["config"].get("metadata") or {}), "run_attempt": self.attempt}
        return config

    def graph_input(self) -> Any:
        """The graph's input: None when resuming, else the request's command or input."""
        kwargs = self.record["kwargs"]
        if self.resume:
            return None
        cmd = kwargs.get("command")
        if cmd:
            return command_from_json(cmd)
        return kwargs.get("input")

    def execute(
        self, graph: Any, *, on_start: Callable[[LiveRun], None], draining: Callable[[], bool]
    ) -> tuple[str | None, BaseException | None]:
        """Streams the graph for this run (durability "sync") and publishes its events;
        stops at the first superstep boundary after a cancel or while `draining()`.

        Args:
            graph: the compiled graph.
            on_start: called with the run before its first chunk is forwarded, when it
                had not started (its input is checkpointed by then).
            draining: whether the service is draining.

        Returns:
            (how it stopped early: "cancel", "drain" or None, the graph's exception or None).
        """
        kwargs = self.record["kwargs"]
        engine_modes = {"messages" if m in ("messages", "messages-tuple") else m for m in self.modes}
        engine_modes.add("values")
        self.publish("metadata", {"run_id": self.id, "attempt": self.attempt})
        error: BaseException | None = None
        stopped: str | None = None
        try:
            stream = graph.stream(
                self.graph_input(),
                self.graph_config(),
                stream_mode=sorted(engine_modes),
                subgraphs=self.subgraphs,
                interrupt_before=kwargs.get("interrupt_before"),
                interrupt_after=kwargs.get("interrupt_after"),
                durability="sync",
                context=self.context,
            )
            try:
                for item in stream:
                    self.progress = time.monotonic()
                    if self.subgraphs:
                        ns, mode, chunk = item
                    else:
                        (mode, chunk), ns = item, ()
                    if not self.started:
                        on_start(self)
                    self.forward(ns, mode, chunk)
                    if mode == "values" and not ns:
                        # a superstep boundary: its checkpoint is written
                        if self.cancel is not None:
                            stopped = "cancel"
                            break
                        if draining():
                            stopped = "drain"
                            break
            finally:
                stream.close()
        except Exception as e:  # the graph failed: the run fails, the service does not
            error = e
        return stopped, error

    def forward(self, ns: tuple, mode: str, chunk: Any) -> None:
        """Turns one engine chunk into the API's events, as LangGraph's server does."""
        suffix = "|" + "|".join(ns) if ns else ""
        if mode == "messages":
            if "messages-tuple" in self.modes:
                self.publish("messages" + suffix, jsonable(chunk))
            elif "messages" in self.modes:
                message, meta = chunk
                data = jsonable(message)
                mid = data.get("id") if isinstance(data, dict) else None
                if mid not in self.seen_messages:
                    self.seen_messages.add(mid)
                    self.publish("messages/metadata", {mid: {"metadata": jsonable(meta)}})
                self.publish("messages/complete", [data])
            return
        if mode not in self.modes:
            return
        if mode == "debug" and isinstance(chunk, dict) and chunk.get("type") == "checkpoint":
            chunk = {**chunk, "payload": debug_checkpoint(chunk.get("payload"))}
        data = jsonable(chunk)
        if not ns:
            self.absorb(mode, data)
        self.publish(mode + suffix, data)


class RunHandle:
    """A caller's hold on one run: its events (when subscribed) and its output.

    Made by `RunManager.stream_run` and `RunManager.join`. Iterating with `next_event`
    yields `(event, json_bytes)` pairs until the run ends; `output()` waits for the end
    and returns what `runs.wait` returns. Close it when done (a `with` block does).

    Args:
        run: the run while it is pending or running here, or None (it ended before).
        record: the run record (without private fields).
        events: subscribe to the run's events.
        fallback: thread id -> the output of a run that ended before the handle was made,
            from its thread (`RunManager.fallback_output`).
    """

    def __init__(
        self, run: LiveRun | None, record: dict, *, events: bool, fallback: Callable[[str], Any]
    ) -> None:
        self._fallback = fallback
        self._run = run
        self.record = record
        """The run record as it was when the handle was made."""
        self._queue: queue.Queue | None = queue.Queue(SUBSCRIBER_QUEUE) if events and run is not None else None
        self._ended = run is None or self._queue is None
        if self._queue is not None:
            with run.lock:
                if run.done.is_set():
                    self._ended = True
                else:
                    run.subscribers.append(self)

    def __enter__(self) -> RunHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _deliver(self, item: Any, block: bool = True) -> None:
        q = self._queue
        if q is None:
            return
        try:
            q.put(item, block=block, timeout=SUBSCRIBER_WAIT if block else None)
        except queue.Full:
            if item is _END:
                return
            log.warning(
                "run %s: a stream reader fell %d events behind; it is dropped", self.record["run_id"], SUBSCRIBER_QUEUE
            )
            self._detach()
            try:
                q.put_nowait(_END)
            except queue.Full:
                pass

    def _detach(self) -> None:
        run = self._run
        if run is not None:
            with run.lock:
                if self in run.subscribers:
                    run.subscribers.remove(self)

    def next_event(self, timeout: float | None = None) -> tuple[str, bytes] | None:
        """The next `(event, json_bytes)`; None when `timeout` passed without one.

        Raises:
            StopIteration: when the run has ended (or the handle was not subscribed).
        """
        if self._ended:
            raise StopIteration
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            run = self._run
            if run.done.is_set() and self not in run.subscribers:
                # the run ended (or dropped this reader) while the queue was full
                self._ended = True
                raise StopIteration from None
            return None
        if item is _END:
            self._ended = True
            raise StopIteration
        return item

    def wait(self, timeout: float | None = None) -> bool:
        """Waits for the run to end; True when it has."""
        return self._run is None or self._run.done.wait(timeout)

    def output(self, timeout: float | None = None) -> Any:
        """What `runs.wait` / `runs.join` return: the last values, `{"__interrupt__": [...]}`
        or `{"__error__": {...}}`, as LangGraph's server folds them.

        Raises:
            TimeoutError: when the run did not end within `timeout`.
        """
        if not self.wait(timeout):
            msg = f"run {self.record['run_id']} did not end within {timeout} s"
            raise TimeoutError(msg)
        if self._run is not None and self._run.output is not None:
            return self._run.output
        return self._fallback(self.record["thread_id"])

    def close(self) -> None:
        """Stops receiving events (the run goes on)."""
        self._detach()
        self._ended = True
