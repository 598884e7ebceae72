"""The MCU's events as lgembed.edge `Event`s: `BridgeEvents`, the iterator `BridgeClient.events()` returns.

Why: graphs and the service's triggers consume hardware events in one shape
(`lgembed.edge.Event`: source, kind, data, timestamp), whatever produced them. An MCU's
EVENT becomes `Event(source=<bridge name>, kind="bridge_event", data={"event",
"index", "value", "timestamp_ms", "device_id"})`; `BridgeEvents` has the interface of
`lgembed.edge.EventStream` (get with a timeout, sync and async iteration, close).
"""

from __future__ import annotations

import time
from typing import Any

from lgembed.edge.events import Event, EventQueue

__all__ = ("EVENT_KIND", "BridgeEvents", "to_event")

EVENT_KIND = "bridge_event"
"""The `Event.kind` of an MCU's events; `data` is {"event", "index", "value",
"timestamp_ms", "device_id"}."""


class BridgeEvents(EventQueue):
    """An iterator over the MCU's events as lgembed.edge `Event`s (kind "bridge_event").

    Made by `BridgeClient.events()`; an `lgembed.edge.events.EventQueue` like
    `EventStream` (get with a timeout, sync and async iteration, close, context manager).
    Events beyond `maxsize` unread ones drop the oldest (counted in `dropped`).
    """

    def __init__(self, client: Any, maxsize: int = 1000) -> None:
        super().__init__(maxsize)
        self._client = client
        self._waiting_for = f"an event from bridge '{client.name}'"

    def _put(self, ev: Event) -> None:
        self._enqueue(ev)

    def close(self) -> None:
        """Stops delivery; iteration ends once buffered events are read."""
        if not self._closed:
            self._client._unsubscribe(self._put)
            self._end()


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
