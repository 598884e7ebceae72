"""Hardware events for graphs: GPIO edges, CAN frames, UART lines and timers, as one stream.

Why: on a device, runs start from the world: a button press, a frame from a motor
controller, a line from a GPS, a timer. `EventStream` watches the adapters it is given,
each from its own daemon thread, and yields typed `Event`s in arrival order, from a
plain iterator or an async iterator, so a loop or a service can turn them into graph
input:

    with device.events(["button", "bus"], timers={"tick": 5.0}) as events:
        for ev in events:
            graph.invoke({"event": ev.as_dict()}, config)

Event kinds and their `data`:
- "gpio_edge": {"edge": "rising" | "falling", "value": bool}  (the line needs an `edge`)
- "can_frame": {"arbitration_id", "data" (list of ints), "is_extended_id", "is_fd"}
- "uart_line": {"line": str}  (decoded UTF-8, line ending stripped)
- "timer":     {"name", "count"}
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from lgembed.edge.errors import ArgumentError, DriverTimeoutError, EdgeError

__all__ = ("Event", "EventQueue", "EventStream")

_POLL = 0.1
# seconds each watcher waits on its adapter before checking whether the stream closed


class Event(NamedTuple):
    """One hardware event.

    Attributes:
        source: the adapter's (or timer's) name.
        kind: "gpio_edge", "can_frame", "uart_line", "timer" or "error".
        data: the event's fields (see the module docstring).
        timestamp: time.time() when it was seen.
    """

    source: str
    kind: str
    data: dict
    timestamp: float

    def as_dict(self) -> dict[str, Any]:
        """The event as plain data (for graph input and JSON)."""
        return {"source": self.source, "kind": self.kind, "data": dict(self.data), "timestamp": self.timestamp}


_STOP = object()


def _frame_matches(frame: Any, filters: list[Mapping[str, Any]] | None) -> bool:
    if not filters:
        return True
    for f in filters:
        mask = f.get("can_mask", 0x1FFFFFFF if frame.is_extended_id else 0x7FF)
        if (frame.arbitration_id & mask) == (f["can_id"] & mask):
            if "extended" not in f or bool(f["extended"]) == frame.is_extended_id:
                return True
    return False


class EventQueue:
    """A bounded queue of `Event`s read with `get` or as a sync or async iterator.

    The base of `EventStream` and of `lgembed.bridge`'s `BridgeEvents`: producers call
    `_enqueue` (the oldest unread event is dropped when full, counted in `dropped`),
    `_end` marks the end after the buffered events.
    """

    _waiting_for = "a hardware event"
    # what `get` says it waited for when it times out

    def __init__(self, maxsize: int = 1000) -> None:
        self._q: queue.Queue = queue.Queue(maxsize)
        self._closed = False
        self.dropped = 0

    @property
    def closed(self) -> bool:
        """Whether close() was called."""
        return self._closed

    def _enqueue(self, ev: Event) -> None:
        while True:
            try:
                self._q.put_nowait(ev)
                return
            except queue.Full:
                try:
                    self._q.get_nowait()
                    self.dropped += 1
                except queue.Empty:
                    pass

    def _end(self) -> None:
        self._closed = True
        try:
            self._q.put_nowait(_STOP)
        except queue.Full:
            pass

    def get(self, timeout: float | None = None) -> Event:
        """The next event.

        Raises:
            DriverTimeoutError: none arrived within `timeout` seconds.
            StopIteration: the stream is closed and empty.
        """
        if self._closed and self._q.empty():
            raise StopIteration
        try:
            ev = self._q.get(timeout=timeout)
        except queue.Empty:
            msg = f"Waiting for {self._waiting_for}: none arrived within {timeout} s"
            raise DriverTimeoutError(msg) from None
        if ev is _STOP:
            raise StopIteration
        return ev

    def __iter__(self) -> EventQueue:
        return self

    def __next__(self) -> Event:
        return self.get()

    def __aiter__(self) -> EventQueue:
        return self

    async def __anext__(self) -> Event:
        import asyncio

        loop = asyncio.get_running_loop()
        while True:
            ev = await loop.run_in_executor(None, self._next_or_none, _POLL * 2)
            if ev is _STOP:
                raise StopAsyncIteration
            if ev is not None:
                return ev

    def _next_or_none(self, timeout: float) -> Any:
        # for the async iterator: StopIteration cannot cross a Future, so the end is _STOP
        try:
            return self.get(timeout)
        except DriverTimeoutError:
            return None
        except StopIteration:
            return _STOP

    def close(self) -> None:
        """Ends iteration once the buffered events are read."""
        if not self._closed:
            self._end()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventStream(EventQueue):
    """Watches adapters and timers; iterate it (sync or async) to receive `Event`s.

    Args:
        registry: the EdgeAdapterRegistry (or a Device's `registry`).
        sources: adapter names to watch (GPIO inputs with an edge, CAN buses, UARTs);
            None watches every adapter of those kinds that can produce events.
        timers: timer name -> period in seconds.
        can_filters: adapter name -> list of {"can_id", "can_mask", "extended"} filters
            (python-can's shape) applied to that bus's frames.
        maxsize: events buffered before the oldest are dropped (counted in `dropped`).

    Raises:
        AdapterNotFoundError: a source that is not in the registry.
        ArgumentError: a source of a kind that produces no events, or a bad timer period.
    """

    def __init__(
        self,
        registry: Any,
        sources: Iterable[str] | None = None,
        *,
        timers: Mapping[str, float] | None = None,
        can_filters: Mapping[str, list] | None = None,
        maxsize: int = 1000,
    ) -> None:
        super().__init__(maxsize)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        adapters = []
        if sources is None:
            for name, a in registry.items():
                if a.kind in ("can", "uart") or (a.kind == "gpio" and a.settings.get("edge", "none") != "none"):
                    adapters.append(a)
        else:
            for name in sources:
                a = registry.require(name)
                if a.kind not in ("gpio", "can", "uart"):
                    msg = f"EventStream: adapter '{name}' is a {a.kind} adapter, which produces no events (gpio, can and uart do)"
                    raise ArgumentError(msg)
                if a.kind == "gpio" and a.settings.get("edge", "none") == "none":
                    msg = f"EventStream: GPIO adapter '{name}' has no edge detection. Fix: set edge = \"both\" (or rising/falling) in its table"
                    raise ArgumentError(msg)
                adapters.append(a)
        filters = dict(can_filters or {})
        for a in adapters:
            target = {"gpio": self._watch_gpio, "can": self._watch_can, "uart": self._watch_uart}[a.kind]
            args = (a, filters.get(a.name)) if a.kind == "can" else (a,)
            self._start(target, args, f"lgembed-events-{a.name}")
        for name, period in (timers or {}).items():
            if not isinstance(period, (int, float)) or isinstance(period, bool) or period <= 0:
                msg = f"EventStream: timer {name!r} needs a period in seconds above 0 (got {period!r})"
                raise ArgumentError(msg)
            self._start(self._watch_timer, (name, float(period)), f"lgembed-timer-{name}")

    def _start(self, target: Any, args: tuple, name: str) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def put(self, source: str, kind: str, data: dict) -> None:
        """Adds an event from a source the stream does not watch itself (an MCU behind
        lgembed.bridge); the oldest buffered event is dropped when the buffer is full."""
        self._put(source, kind, data)

    def _put(self, source: str, kind: str, data: dict) -> None:
        self._enqueue(Event(source, kind, data, time.time()))

    def _guard(self, a: Any, fn: Any) -> None:
        while not self._stop.is_set():
            try:
                fn()
            except DriverTimeoutError:
                continue
            except EdgeError as e:
                if self._stop.is_set() or a.closed:
                    return
                self._put(a.name, "error", {"error": type(e).__name__, "message": str(e)})
                self._stop.wait(1.0)

    def _watch_gpio(self, a: Any) -> None:
        def once() -> None:
            e = a.read_event(timeout=_POLL)
            self._put(a.name, "gpio_edge", {"edge": e.edge, "value": bool(e.value)})

        self._guard(a, once)

    def _watch_can(self, a: Any, filters: list | None) -> None:
        def once() -> None:
            m = a.recv(timeout=_POLL)
            if _frame_matches(m, filters):
                data = {"arbitration_id": m.arbitration_id, "data": list(m.data), "is_extended_id": bool(m.is_extended_id), "is_fd": bool(getattr(m, "is_fd", False))}
                self._put(a.name, "can_frame", data)

        self._guard(a, once)

    def _watch_uart(self, a: Any) -> None:
        def once() -> None:
            line = a.readline(timeout=_POLL)
            self._put(a.name, "uart_line", {"line": line.decode(errors="replace").rstrip("\r\n")})

        self._guard(a, once)

    def _watch_timer(self, name: str, period: float) -> None:
        count = 0
        deadline = time.monotonic() + period
        while not self._stop.wait(max(0.0, deadline - time.monotonic())):
            count += 1
            self._put(name, "timer", {"name": name, "count": count})
            deadline += period

    def close(self) -> None:
        """Stops every watcher; iteration ends once buffered events are consumed."""
        if self._closed:
            return
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2.0)
        self._end()
