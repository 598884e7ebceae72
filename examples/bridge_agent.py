"""Demo: an agent uses a microcontroller's functions as tools; switching its LED waits for a person.

The sensor node (firmware-bridge/examples/sensor_node) announces `read_temp` and `set_led`
in its HELLO; `examples/bridge_device.toml` makes them hardware tools through its
`[bridges.mcu]` table: read_temp at low risk, set_led at high risk. A scripted model
(standing in for an LLM) reads the temperature and, when it is above the threshold, asks
to switch the warning LED on. The graph stops at the approval interrupt; the operator's
answer resumes it with `Command(resume={"approved": ...})`. Every call leaves an audit
record in the graph's store.

The MCU is simulated: by default the firmware's own C code built for this machine
(`make -C firmware-bridge host-example`) runs on a pseudo-terminal, and the device
file's UART port is pointed at the other end; with --soft the Python sensor node
(`lgembed.bridge.softmcu`) stands in for it, needing no C compiler.

Run:
    python examples/bridge_agent.py                 # C firmware, approve
    python examples/bridge_agent.py --deny          # the operator refuses
    python examples/bridge_agent.py --soft          # the Python sensor node
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack
from typing import Any

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.edge import load_device
from lgembed.messages import AIMessage, HumanMessage, ToolMessage
from lgembed.prebuilt import create_react_agent
from lgembed.store.memory import InMemoryStore
from lgembed.types import Command

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE_FILE = os.path.join(HERE, "bridge_device.toml")


class ScriptedModel:
    """Stands in for a chat model: reads the temperature, asks for the LED if it is warm."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def bind_tools(self, tools: list) -> ScriptedModel:
        self.tools = [t.name for t in tools]
        return self

    def invoke(self, messages: list) -> AIMessage:
        last = messages[-1]
        if not isinstance(last, ToolMessage):
            return AIMessage("", tool_calls=[{"name": "read_temp", "args": {}, "id": "call-temp", "type": "tool_call"}])
        if last.name == "read_temp" and last.status != "error":
            celsius = float(json.loads(last.content))
            if celsius > self.threshold:
                call = {"name": "set_led", "args": {"on": True}, "id": "call-led", "type": "tool_call"}
                return AIMessage(f"The node reads {celsius:.2f} C, above {self.threshold} C: switching the warning LED on.", tool_calls=[call])
            return AIMessage(f"The node reads {celsius:.2f} C: no warning needed.")
        return AIMessage(f"{last.name}: {last.content}")


def open_device(stack: ExitStack, soft: bool) -> Any:
    """The device: the Python sensor node (simulate=True), or the C firmware on a pty."""
    if soft:
        return stack.enter_context(load_device(DEVICE_FILE, simulate=True))
    import tomllib

    from lgembed.bridge.firmware import FirmwareProcess, build_host_example
    from lgembed.bridge.wire import PtyWire

    build_host_example()
    wire = stack.enter_context(PtyWire())
    stack.enter_context(FirmwareProcess(wire.port_a, ["--temp", "23.5"]))
    with open(DEVICE_FILE, "rb") as f:
        config = tomllib.load(f)
    config["adapters"]["mcu_uart"]["port"] = wire.port_b  # the firmware's end of the cable
    return stack.enter_context(load_device(config))


def show(result: dict) -> None:
    for m in result.get("messages", []):
        print(f"  {m.type:>5}: {m.content or m.tool_calls}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soft", action="store_true", help="use the Python sensor node instead of the C firmware")
    parser.add_argument("--deny", action="store_true", help="the operator refuses the LED")
    parser.add_argument("--threshold", type=float, default=20.0, help="degrees C above which the LED goes on")
    args = parser.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore")  # create_react_agent's LangGraph deprecation notice
    with ExitStack() as stack:
        device = open_device(stack, args.soft)
        mcu = device.bridge("mcu")
        hello = mcu.hello()
        print(f"connected: {hello.device_id} {hello.fw_version}, functions {list(mcu.functions)}, events {list(mcu.event_names)}")
        store = InMemoryStore()
        agent = create_react_agent(ScriptedModel(args.threshold), mcu.tools(), checkpointer=InMemorySaver(), store=store)
        config = {"configurable": {"thread_id": "bridge-1"}}
        result = agent.invoke({"messages": [HumanMessage("Check the lab's temperature.")]}, config)
        show(result)
        pending = result.get("__interrupt__", [])
        if pending:
            print(f"approval needed: {json.dumps(pending[0].value, sort_keys=True)}")
            answer = {"approved": not args.deny}
            if args.deny:
                answer["reason"] = "people are asleep"
            print(f"operator answers {json.dumps(answer)}")
            result = agent.invoke(Command(resume=answer), config)
            show(result)
        for item in store.search(("lgembed", "audit"), limit=10):
            v = item.value
            print(f"audit: {v['tool']} {v['outcome']} args={json.dumps(v['args'])} result={json.dumps(v.get('result'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
