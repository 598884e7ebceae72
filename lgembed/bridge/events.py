"""The MCU's events as lgembed.edge `Event`s: `BridgeEvents`, the iterator `BridgeClient.events()` returns.

Why: graphs and the service's triggers consume hardware events in one shape
(`lgembed.edge.Event`: source, kind, data, timestamp), whatever produced them. An MCU's
EVENT becomes `Event(source=<bridge name>, kind="bridge_event", data={"event",
"index", "value", "timestamp_ms", "device_id"})`; `BridgeEvents` has the interface of
`lgembed.edge.EventStream` (get with a timeout, sync and async iteration, close).
"""

from __future__ import annotations

import queue
import time
from typing import Any

from lgembed.edge.errors import DriverTimeoutError
from lgembed.edge.events import Event

__all__ = ("EVENT_KIND", "BridgeEvents", "to_event")

EVENT_KIND = "bridge_event"
"""The `Event.kind` of an MCU's events; `data` is {"event", "index", "value",
"timestamp_ms", "device_id"}."""


class BridgeEvents:
    """An iterator over the MCU's events as lgembed.edge `Event`s (kind "bridge_event").

    Made by `BridgeClient.events()`; also an async iterator and a context manager, like
    `lgembed.edge.EventStream`. Events beyond `maxsize` unread ones drop the oldest
    (counted in `dropped`).
    """

    def __init__(self, client: Any, maxsize: int = 1000) -> None:
        self._client = client
        self._q: queue.Queue = queue.Queue(maxsize)
        self._closed = False
        self.dropped = 0

    def _put(self, ev: Event) -> None:
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
            msg = f"Waiting for an event from bridge '{self._client.name}': none arrived within {timeout} s"
            raise DriverTimeoutError(msg) from None
        if ev is None:
            raise StopIteration
        return ev

    def __iter__(self) -> BridgeEvents:
        return self

    def __next__(self) -> Event:
        return self.get()

    def __aiter__(self) -> BridgeEvents:
        return self

    async def __anext__(self) -> Event:
        import asyncio

        loop = asyncio.get_running_loop()
        while True:
            try:
                return await loop.run_in_executor(None, self.get, 0.2)
            except DriverTimeoutError:
                continue
            except StopIteration:
                raise StopAsyncIteration from None

    def close(self) -> None:
        """Stops delivery; iteration ends once buffered events are read."""
        if not self._closed:
            self._closed = True
            self._client._unsubscribe(self._put)
            try:
                self._q.put_nowait(None)
            except queue.Full:
                pass

    def __enter__(self) -> BridgeEvents:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def to_event(source: str, hello: Any, msg: Any) -> Event:
    """The `Event` of an EVENT message from the MCU whose HELLO is `hello`."""
    names = hello.events if hello is not None else ()
    name = names[msg.event_index] if msg.event_index < len(names) else f"event{msg.event_index}"
    data = {
        "event": name,
        "index": msg.event_index,
        "value": msg.value,
        "timestamp_ms": msg.timestamp_ms,
        "device_id": hello.device_id if hello is not None else "",
    }
    return Event(source, EVENT_KIND, data, time.time())
