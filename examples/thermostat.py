"""Demo: a thermostat control loop as a LangGraph-style StateGraph on a device file's
hardware (simulated by default), checkpointed to LMDB.

The hardware is `examples/thermostat.toml`: a TMP102 on I2C measures the room, a relay
on a GPIO line switches the heater, a PWM channel drives a fan. By default every
adapter is simulated (the real drivers run against simulators, linked into a room the
heater warms and the fan cools); `--device FILE` opens the real hardware a device file
names instead. `sense` reads and decodes the TMP102's temperature register, `decide`
applies hysteresis, `actuate` drives the relay and the fan, and a conditional edge
loops until the cycle budget is used. Every superstep is checkpointed to an LMDB
environment (`--db`, default `.demo-state/`), so the thread's history survives
restarts: each run of the demo appends to the same thread.

Run: `python examples/thermostat.py [--cycles N] [--target C] [--period S] [--db DIR]
[--thread ID] [--device FILE]`.

The graph code is plain LangGraph code with `lgembed` in the imports.
"""

from __future__ import annotations

import argparse
import operator
import os
import time
from typing import Annotated, Any, TypedDict

from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.config import get_stream_writer
from lgembed.edge import load_device
from lgembed.graph import END, START, StateGraph

HERE = os.path.dirname(os.path.abspath(__file__))


def tmp102_celsius(raw: bytes) -> float:
    """The TMP102's temperature register (SBOS397 §7.5.4.1): 12-bit two's complement,
    left-justified in two big-endian bytes, 0.0625 °C per LSB."""
    return (int.from_bytes(raw, "big", signed=True) >> 4) * 0.0625


class State(TypedDict):
    target: float
    cycles: int
    max_cycles: int
    temp: float
    heater: bool
    fan: float
    log: Annotated[list, operator.add]


def build(device: Any, saver: LmdbSaver, period: float):
    room, heater, fan = device.adapter("room", "i2c"), device.adapter("heater", "gpio"), device.adapter("fan", "pwm")

    def sense(state: State) -> dict:
        if state.get("cycles", 0):
            time.sleep(period)  # one control period between readings
        return {"temp": round(tmp102_celsius(room.read_register(0x00, 2)), 2), "cycles": state.get("cycles", 0) + 1}

    def decide(state: State) -> dict:
        heater_on = state.get("heater", False)
        if state["temp"] < state["target"] - 0.5:
            heater_on = True
        elif state["temp"] > state["target"] + 0.5:
            heater_on = False
        too_warm = state["temp"] - (state["target"] + 0.5)
        return {"heater": heater_on, "fan": round(min(0.8, max(0.0, too_warm * 0.4)), 2)}

    def actuate(state: State) -> dict:
        heater.write(state["heater"])
        fan.duty_cycle = state["fan"]
        get_stream_writer()({"relay": "on" if state["heater"] else "off", "fan": state["fan"], "temp": state["temp"]})
        line = f"{state['cycles']:02d} {state['temp']:5.2f}C heater={'on ' if state['heater'] else 'off'} fan={state['fan']:.2f}"
        return {"log": [line]}

    g = StateGraph(State)
    g.add_sequence([sense, decide, actuate])
    g.add_edge(START, "sense")
    g.add_conditional_edges("actuate", lambda s: "sense" if s["cycles"] < s["max_cycles"] else END)
    return g.compile(checkpointer=saver)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=12)
    parser.add_argument("--target", type=float, default=21.0)
    parser.add_argument("--period", type=float, default=0.1, help="seconds between readings")
    parser.add_argument("--db", default=".demo-state", help="LMDB environment directory")
    parser.add_argument("--thread", default="room-1", help="checkpoint thread id")
    parser.add_argument("--device", help="a device file for real hardware (default: the example's, simulated)")
    args = parser.parse_args()
    import lgembed

    device_file = args.device or os.path.join(HERE, "thermostat.toml")
    config = {"configurable": {"thread_id": args.thread}, "recursion_limit": 4 * args.cycles + 5}
    with load_device(device_file, simulate=args.device is None) as device, LmdbSaver.from_conn_string(args.db) as saver:
        app = build(device, saver, args.period)
        before = sum(1 for _ in app.get_state_history(config))
        where = "simulated hardware" if device.simulated else f"the hardware in {device_file}"
        print(
            f"lgembed {lgembed.__version__} ({lgembed.IMPLEMENTATION} build): thermostat on {where}, "
            f"{args.cycles} cycles, checkpoints in {args.db} (thread {args.thread!r})"
        )
        relay_events = 0
        for mode, chunk in app.stream(
            {"target": args.target, "cycles": 0, "max_cycles": args.cycles, "heater": False, "fan": 0.0, "log": []},
            config,
            stream_mode=["updates", "custom"],
        ):
            if mode == "custom":
                relay_events += 1
            elif "actuate" in chunk:
                print(" ", chunk["actuate"]["log"][-1])
        state = app.get_state(config)
        history = list(app.get_state_history(config))
        device.adapter("heater").write(False)
        device.adapter("fan").duty_cycle = 0.0
        print(f"done: {relay_events} actuator commands, final temperature {state.values['temp']:.2f}C; heater and fan off")
        print(
            f"saved: {len(history) - before} new checkpoints this run, {len(history)} in the thread; "
            f"latest step {state.metadata['step']}, heater was {'on' if state.values['heater'] else 'off'}"
        )


if __name__ == "__main__":
    main()
