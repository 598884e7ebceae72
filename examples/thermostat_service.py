"""The thermostat of `examples/thermostat.py`, shaped for `lgembed serve`: one control
cycle per run.

Why a second shape: as a script, the thermostat loops inside one run (sense, decide,
actuate, sleep, again). As a service, the timing belongs to the service: an interval
trigger starts one run per period on the thread "room-1", each run is one cycle
(sense -> decide -> actuate -> END), and the thread's checkpoints carry the state
(heater on or off, the cycle count, the last log lines) from one cycle to the next,
across restarts and power cuts. An operator reads the thread's state and history, or
changes the target temperature, through the API with langgraph-sdk.

`graph(device)` is the factory the service calls with the open Device (examples/
service.toml opens examples/thermostat.toml on simulators); it returns the builder,
which the service compiles with its LMDB saver. Serve it with

    lgembed serve --config examples/service.toml

or without a config file (no trigger then: start runs through the API):

    lgembed serve examples/thermostat_service.py:graph --db /tmp/thermo --http 127.0.0.1:8123 \\
        --device examples/thermostat.toml --simulate
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from lgembed.config import get_stream_writer
from lgembed.graph import END, START, StateGraph

KEEP_LOG = 20
"""Log lines kept in the thread's state (a service runs for months: the state must not grow)."""


def tmp102_celsius(raw: bytes) -> float:
    """The TMP102's temperature register (SBOS397 §7.5.4.1): 12-bit two's complement,
    left-justified in two big-endian bytes, 0.0625 °C per LSB."""
    return (int.from_bytes(raw, "big", signed=True) >> 4) * 0.0625


def recent(old: list | None, new: list | None) -> list:
    """Reducer: the last KEEP_LOG lines."""
    return ((old or []) + (new or []))[-KEEP_LOG:]


class State(TypedDict, total=False):
    target: float
    cycles: int
    temp: float
    heater: bool
    fan: float
    log: Annotated[list, recent]


def graph(device: Any) -> StateGraph:
    """The one-cycle thermostat on `device` (needs adapters room (i2c), heater (gpio), fan (pwm))."""
    room, heater, fan = device.adapter("room", "i2c"), device.adapter("heater", "gpio"), device.adapter("fan", "pwm")

    def sense(state: State) -> dict:
        return {"temp": round(tmp102_celsius(room.read_register(0x00, 2)), 2), "cycles": state.get("cycles", 0) + 1}

    def decide(state: State) -> dict:
        target = state.get("target", 21.0)
        heater_on = state.get("heater", False)
        if state["temp"] < target - 0.5:
            heater_on = True
        elif state["temp"] > target + 0.5:
            heater_on = False
        too_warm = state["temp"] - (target + 0.5)
        return {"heater": heater_on, "fan": round(min(0.8, max(0.0, too_warm * 0.4)), 2)}

    def actuate(state: State) -> dict:
        heater.write(state["heater"])
        fan.duty_cycle = state["fan"]
        get_stream_writer()({"relay": "on" if state["heater"] else "off", "fan": state["fan"], "temp": state["temp"]})
        line = f"{state['cycles']:04d} {state['temp']:5.2f}C heater={'on ' if state['heater'] else 'off'} fan={state['fan']:.2f}"
        return {"log": [line]}

    g = StateGraph(State)
    g.add_sequence([sense, decide, actuate])
    g.add_edge(START, "sense")
    g.add_edge("actuate", END)
    return g
