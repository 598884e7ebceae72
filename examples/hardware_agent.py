"""Demo: an agent with hardware tools, where a high-risk call waits for a person.

`create_react_agent` gets the thermostat's hardware tools (`examples/thermostat.toml`,
simulated) and a scripted model standing in for an LLM: it reads the room's TMP102,
and when the room is below the target it asks to switch the heater on. `set_heater` is
a `high`-risk tool, so the graph stops at an approval interrupt, checkpointed to LMDB;
the approval can come from another process, later. Every hardware call leaves an audit
record in the graph's store (an LmdbStore beside the checkpoints).

Run:
    python examples/hardware_agent.py                      # ask, then approve in-process
    python examples/hardware_agent.py --db D ask           # stops at the approval (exit 3)
    python examples/hardware_agent.py --db D approve [--deny] [--reason TEXT]
    python examples/hardware_agent.py --db D audit         # the audit records as JSON lines
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any

from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.edge import load_device
from lgembed.messages import AIMessage, HumanMessage, ToolMessage
from lgembed.prebuilt import create_react_agent
from lgembed.store.lmdb import LmdbStore
from lgembed.types import Command

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = 21.0


class ScriptedModel:
    """Stands in for a chat model: reads the sensor, heats if cold, then reports."""

    def bind_tools(self, tools: list) -> ScriptedModel:
        self.tools = [t.name for t in tools]
        return self

    def invoke(self, messages: list) -> AIMessage:
        last = messages[-1]
        if not isinstance(last, ToolMessage):
            return AIMessage("", tool_calls=[{"name": "read_room", "args": {}, "id": "call-read", "type": "tool_call"}])
        if last.name == "read_room" and last.status != "error":
            raw = bytes(json.loads(last.content)["data"])
            celsius = (int.from_bytes(raw, "big", signed=True) >> 4) * 0.0625
            if celsius < TARGET:
                call = {"name": "set_heater", "args": {"value": True}, "id": "call-heat", "type": "tool_call"}
                return AIMessage(f"The room is at {celsius:.2f} C, below {TARGET} C: switching the heater on.", tool_calls=[call])
            return AIMessage(f"The room is at {celsius:.2f} C: no heating needed.")
        return AIMessage(f"{last.name}: {last.content}")


def open_agent(device: Any, db: str) -> tuple[Any, Any, Any]:
    saver = LmdbSaver(db)
    store = LmdbStore(env=saver.env)
    agent = create_react_agent(ScriptedModel(), device.tools(), checkpointer=saver, store=store)
    return agent, saver, store


def show(result: dict) -> None:
    for m in result.get("messages", []):
        print(f"  {m.type:>5}: {m.content or m.tool_calls}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=("demo", "ask", "approve", "audit"), default="demo")
    parser.add_argument("--db", help="LMDB environment directory (default: a temporary one for demo)")
    parser.add_argument("--thread", default="agent-1")
    parser.add_argument("--deny", action="store_true", help="with approve: refuse the call")
    parser.add_argument("--reason", help="with approve: the operator's reason")
    args = parser.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore")  # create_react_agent's LangGraph deprecation notice
    db = args.db or tempfile.mkdtemp(prefix="lgembed-agent-")
    config = {"configurable": {"thread_id": args.thread}}
    with load_device(os.path.join(HERE, "thermostat.toml"), simulate=True) as device:
        agent, saver, store = open_agent(device, db)
        try:
            if args.command == "audit":
                for item in store.search(("lgembed", "audit"), limit=100):
                    print(json.dumps(item.value, sort_keys=True))
                return 0
            if args.command in ("demo", "ask"):
                result = agent.invoke({"messages": [HumanMessage("Keep the room comfortable.")]}, config)
                show(result)
                pending = result.get("__interrupt__", [])
                if not pending:
                    return 0
                request = pending[0].value
                print(f"approval needed: {json.dumps(request, sort_keys=True)}")
                if args.command == "ask":
                    return 3
            answer = {"approved": not args.deny}
            if args.reason:
                answer["reason"] = args.reason
            print(f"operator answers {json.dumps(answer)}")
            result = agent.invoke(Command(resume=answer), config)
            show(result)
            print(f"heater line now {'high' if device.simulation('heater').value else 'low'} (this process's simulated relay)")
            return 0
        finally:
            saver.close()


if __name__ == "__main__":
    sys.exit(main())
