"""Triggers of `lgembed serve`: interval timers and hardware events that start runs.

Why: on a device, most runs are not asked for by a person: a timer samples a sensor
every few seconds, a button press or a CAN frame starts a reaction. Each trigger maps
its occasion to a graph input on a named thread and hands it to the RunManager, the
same way an API call does, so such runs are checkpointed, drained on SIGTERM and
resumed after a power cut like any other.

- "interval": every `every` seconds (the first after one period), a run with `input`.
  With the default multitask strategy "reject", a tick that finds the thread's previous
  run still going is skipped (logged at debug), so a slow graph is not queued up.
- "event": each event of the adapter named `source` (a GPIO edge, a CAN frame, a UART
  line; `device.events(...)`) starts a run with `{input_key: event.as_dict()}` merged
  over `input`. Default strategy "enqueue": events wait for the thread, none is lost
  while the EventStream's buffer holds, up to MAX_QUEUED runs waiting per thread;
  beyond that events are dropped and counted (a chatty bus must not fill memory and
  flash with queued runs the graph can never catch up with).

Triggers run in daemon threads; a failure to start a run is logged and counted, never
raised into the service loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ("Triggers",)

log = logging.getLogger("lgembed.service.triggers")

_EVENT_POLL = 0.2
# seconds the event thread waits for an event before checking whether it should stop

MAX_QUEUED = 16
"""Runs an "enqueue" trigger lets wait on one thread; later occasions are dropped."""


class Triggers:
    """Starts runs from interval timers and device events.

    Args:
        specs: the TriggerSpecs (`lgembed.service.config`).
        manager: the RunManager runs are created with.
        device: the open Device, needed by event triggers.

    Raises:
        ValueError: an event trigger without a device.

    Attributes:
        fired: runs created so far.
        failed: occasions that did not become a run (errors and busy skips).
        dropped: occasions dropped because MAX_QUEUED runs already waited on the thread.
        last_error: the last error's text, or None.
    """

    def __init__(self, specs: Iterable[Any], manager: Any, device: Any = None) -> None:
        self.specs = list(specs)
        self.manager = manager
        self.device = device
        self.fired = 0
        self.failed = 0
        self.dropped = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._events: Any = None
        self._lock = threading.Lock()
        if self.device is None and any(s.kind == "event" for s in self.specs):
            msg = "Starting triggers: an event trigger needs a device. Fix: set 'device' in [service] or pass --device FILE"
            raise ValueError(msg)

    def start(self) -> None:
        """Opens the device's event stream (when an event trigger needs it) and starts the threads.

        Raises:
            EdgeError: an event trigger's source is not an adapter that produces events.
        """
        by_source: dict[str, list[Any]] = {}
        for spec in self.specs:
            if spec.kind == "interval":
                self._spawn(self._interval, spec, f"lgembed-trigger-{spec.index}")
            else:
                by_source.setdefault(spec.source, []).append(spec)
        if by_source:
            self._events = self.device.events(sorted(by_source))
            self._spawn(self._dispatch, by_source, "lgembed-trigger-events")
        if self.specs:
            log.info("triggers started: %s", ", ".join(_describe(s) for s in self.specs))

    def _spawn(self, target: Any, arg: Any, name: str) -> None:
        t = threading.Thread(target=target, args=(arg,), name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stops every trigger: no run is started after this returns (threads get `timeout` s to end)."""
        self._stop.set()
        with self._lock:  # a fire in progress completes before stop returns
            pass
        if self._events is not None:
            self._events.close()
        for t in self._threads:
            t.join(timeout)

    # --- sources ------------------------------------------------------------------------

    def _interval(self, spec: Any) -> None:
        while not self._stop.wait(spec.every):
            self._fire(spec, dict(spec.input), "interval")

    def _dispatch(self, by_source: dict[str, list[Any]]) -> None:
        from lgembed.edge.errors import DriverTimeoutError

        while not self._stop.is_set():
            try:
                ev = self._events.get(timeout=_EVENT_POLL)
            except DriverTimeoutError:
                continue
            except StopIteration:
                return
            if ev.kind == "error":
                self._count_error(f"event source {ev.source}: {ev.data.get('error')}: {ev.data.get('message')}")
                continue
            for spec in by_source.get(ev.source, ()):
                self._fire(spec, {**spec.input, spec.input_key: ev.as_dict()}, ev.kind)

    # --- runs ---------------------------------------------------------------------------

    def _fire(self, spec: Any, payload: dict[str, Any], why: str) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            if spec.multitask_strategy == "enqueue" and self._queue_full(spec):
                return
            try:
                run = self.manager.create_run(
                    spec.thread,
                    spec.graph,
                    input=payload,
                    if_not_exists="create",
                    multitask_strategy=spec.multitask_strategy,
                    metadata={"trigger": spec.kind, "trigger_index": spec.index, "occasion": why},
                )
            except Exception as e:  # noqa: BLE001 - a trigger logs and counts; it never kills the service
                if _is_busy(e):
                    self.failed += 1
                    log.debug("trigger %s skipped: thread %r is busy", _describe(spec), spec.thread)
                else:
                    self._count_error(f"trigger {_describe(spec)}: starting a run failed: {type(e).__name__}: {e}")
                return
            self.fired += 1
            log.debug("trigger %s started run %s", _describe(spec), run.get("run_id") if isinstance(run, dict) else run)

    def _queue_full(self, spec: Any) -> bool:
        pending = getattr(self.manager, "pending_runs", None)  # not in every RunManager: then no bound
        if pending is None or len(pending(spec.thread)) <= MAX_QUEUED:
            return False
        self.dropped += 1
        if self.dropped == 1 or self.dropped % 100 == 0:
            log.warning(
                "trigger %s: %d runs already wait on thread %r; occasion dropped (%d so far)",
                _describe(spec), MAX_QUEUED, spec.thread, self.dropped,
            )  # fmt: skip
        return True

    def _count_error(self, text: str) -> None:
        self.failed += 1
        self.last_error = text
        log.warning("%s", text)


def _is_busy(e: Exception) -> bool:
    """Whether `e` is the RunManager refusing a run because the thread has one (HTTP 409)."""
    return getattr(e, "status_code", getattr(e, "status", None)) == 409


def _describe(spec: Any) -> str:
    what = f"every {spec.every:g} s" if spec.kind == "interval" else f"on {spec.source} events"
    return f"#{spec.index} ({spec.graph} on thread {spec.thread!r} {what})"
