"""Demo: a thermostat control loop as a LangGraph-style StateGraph, on simulated hardware,
checkpointed to LMDB.

A simulated room (temperature drifts towards the outside air, a heater relay warms
it) is read by a `sense` node; `decide` turns the heater on or off with hysteresis;
`actuate` drives the relay; a conditional edge loops until the cycle budget is used.
Every superstep is checkpointed to an LMDB environment (`--db`, default
`.demo-state/`), so the thread's history survives restarts: each run of the demo
appends to the same thread, and the last part shows the saved history.
Run: `python examples/thermostat.py [--cycles N] [--target C] [--db DIR] [--thread ID]`.

The graph code is plain LangGraph code with `lgembed` in the imports.
"""

from __future__ import annotations

import argparse
import operator
from typing import Annotated, TypedDict

from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.config import get_stream_writer
from lgembed.graph import END, START, StateGraph


class SimulatedRoom:
    """A room with a heater relay: first-order thermal model, one step per cycle."""

    def __init__(self, temp: float = 17.0, outside: float = 8.0) -> None:
        self.temp = temp
        self.outside = outside
        self.relay = False

    def read_celsius(self) -> float:
        return round(self.temp, 2)

    def set_relay(self, on: bool) -> None:
        self.relay = on

    def advance(self) -> None:
        self.temp += 0.08 * (self.outside - self.temp) + (1.6 if self.relay else 0.0)


class State(TypedDict):
    target: float
    cycles: int
    max_cycles: int
    temp: float
    heater: bool
    log: Annotated[list, operator.add]


def build(room: SimulatedRoom, saver: LmdbSaver):
    def sense(state: State) -> dict:
        room.advance()
        return {"temp": room.read_celsius(), "cycles": state.get("cycles", 0) + 1}

    def decide(state: State) -> dict:
        heater = state.get("heater", False)
        if state["temp"] < state["target"] - 0.5:
            heater = True
        elif state["temp"] > state["target"] + 0.5:
            heater = False
        return {"heater": heater}

    def actuate(state: State) -> dict:
        room.set_relay(state["heater"])
        get_stream_writer()({"relay": "on" if state["heater"] else "off", "temp": state["temp"]})
        return {"log": [f"{state['cycles']:02d} {state['temp']:5.2f}C heater={'on' if state['heater'] else 'off'}"]}


    g = StateGraph(State)
    g.add_sequence([sense, decide, actuate])
    g.add_edge(START, "sense")
    g.add_conditional_edges("actuate", lambda s: "sense" if s["cycles"] < s["max_cycles"] else END)
    return g.compile(checkpointer=saver)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=12)
    parser.add_argument("--target", type=float, default=21.0)
    parser.add_argument("--db", default=".demo-state", help="LMDB environment directory")
    parser.add_argument("--thread", default="room-1", help="checkpoint thread id")
    args = parser.parse_args()
    import lgembed

    room = SimulatedRoom()
    config = {"configurable": {"thread_id": args.thread}, "recursion_limit": 4 * args.cycles + 5}
    with LmdbSaver.from_conn_string(args.db) as saver:
        app = build(room, saver)
        before = sum(1 for _ in app.get_state_history(config))
        print(
            f"lgembed {lgembed.__version__} ({lgembed.IMPLEMENTATION} build): thermostat demo, "
            f"{args.cycles} cycles, checkpoints in {args.db} (thread {args.thread!r})"
        )
        relay_events = 0
        for mode, chunk in app.stream(
            {"target": args.target, "cycles": 0, "max_cycles": args.cycles, "heater": False, "log": []},
            config,
            stream_mode=["updates", "custom"],
        ):
            if mode == "custom":
                relay_events += 1
            elif "actuate" in chunk:
                print(" ", chunk["actuate"]["log"][-1])
        state = app.get_state(config)
        history = list(app.get_state_history(config))
        print(f"done: {relay_events} relay commands, final temperature {room.read_celsius():.2f}C")
        print(
            f"saved: {len(history) - before} new checkpoints this run, {len(history)} in the thread; "
            f"latest step {state.metadata['step']}, heater {'on' if state.values['heater'] else 'off'}"
        )


if __name__ == "__main__":
    main()
