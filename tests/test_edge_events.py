"""Hardware events for graphs: GPIO edges, CAN frames, UART lines and timers (issue: edge layer)."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from lgembed.edge import ArgumentError, DriverTimeoutError, Event, load_device

DEVICE = {
    "adapters": {
        "button": {"kind": "gpio", "line": 27, "direction": "in", "edge": "both"},
        "heater": {"kind": "gpio", "line": 17, "direction": "out"},
        "bus": {"kind": "can", "channel": "can0"},
        "gps": {"kind": "uart", "port": "/dev/ttyS0", "simulator": "command", "simulation": {"responses": {"PING": "PONG"}}},
        "fan": {"kind": "pwm", "channel": 0},
    }
}


@pytest.fixture
def device():
    with load_device(DEVICE, simulate=True) as d:
        yield d


def next_of(events, kind, timeout=3.0):
    deadline = time.monotonic() + timeout
    while True:
        ev = events.get(timeout=max(0.01, deadline - time.monotonic()))
        if ev.kind == kind:
            return ev


def test_gpio_can_uart_and_timer_events(device):
    with device.events(["button", "bus", "gps"], timers={"tick": 0.05}) as events:
        time.sleep(0.2)  # the watchers are waiting
        device.simulation("button").value = True
        ev = next_of(events, "gpio_edge")
        assert isinstance(ev, Event) and ev.source == "button" and ev.data == {"edge": "rising", "value": True}
        device.simulation("button").value = False
        assert next_of(events, "gpio_edge").data["edge"] == "falling"
        device.simulation("bus").send(0x18FF50E5, b"\x01\x02", is_extended_id=True)
        ev = next_of(events, "can_frame")
        assert ev.data == {"arbitration_id": 0x18FF50E5, "data": [1, 2], "is_extended_id": True, "is_fd": False}
        device.simulation("gps").send(b"$GPTXT,hello*00\r\n")
        assert next_of(events, "uart_line").data == {"line": "$GPTXT,hello*00"}
        ev = next_of(events, "timer")
        assert ev.source == "tick" and ev.data["count"] >= 1
        assert ev.as_dict()["kind"] == "timer"
    with pytest.raises(StopIteration):
        while True:
            next(events)


def test_can_filters(device):
    with device.events(["bus"], can_filters={"bus": [{"can_id": 0x100, "can_mask": 0x7F0}]}) as events:
        time.sleep(0.1)
        peer = device.simulation("bus")
        peer.send(0x200, b"\x00")
        peer.send(0x105, b"\x05")
        ev = next_of(events, "can_frame")
        assert ev.data["arbitration_id"] == 0x105


def test_async_iteration(device):
    async def main():
        got = []
        with device.events(["button"], timers={"t": 0.05}) as events:
            async for ev in events:
                got.append(ev.kind)
                if ev.kind == "timer" and len(got) == 1:
                    device.simulation("button").value = True
                if "gpio_edge" in got:
                    break
        return got

    got = asyncio.run(asyncio.wait_for(main(), 10))
    assert got[0] == "timer" and "gpio_edge" in got


def test_bad_sources(device):
    with pytest.raises(ArgumentError, match=re.escape("adapter 'fan' is a pwm adapter, which produces no events")):
        device.events(["fan"])
    with pytest.raises(ArgumentError, match=re.escape("GPIO adapter 'heater' has no edge detection")):
        device.events(["heater"])
    with pytest.raises(ArgumentError, match="timer 'x' needs a period in seconds above 0"):
        device.events([], timers={"x": 0})


def test_get_timeout(device):
    with device.events([]) as events:
        with pytest.raises(DriverTimeoutError, match="none arrived within 0.05 s"):
            events.get(timeout=0.05)


def test_default_sources(device):
    with device.events() as events:
        kinds = sorted(t.name for t in events._threads)
    assert kinds == ["lgembed-events-bus", "lgembed-events-button", "lgembed-events-gps"]
