"""Demo: the thermostat agent with a real chat model client, `ChatOpenAI`, on a local server.

`create_react_agent` gets the thermostat's hardware tools (`examples/thermostat.toml`,
simulated) and `lgembed.models.ChatOpenAI` pointed at an OpenAI-compatible server: a
llama.cpp / Ollama / vLLM / LM Studio server on the device, or, by default, the scripted
test server of tests/_fake_llama_server.py (it answers like llama.cpp: read the room, switch
the heater on, report). Tokens are printed as they stream (`stream_mode="messages"`);
`set_heater` is a high-risk tool, so the run stops for approval, which this demo grants.

Run:
    python examples/thermostat_agent.py                               # scripted server
    python examples/thermostat_agent.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-1.5b-instruct
    LGEMBED_MODEL_URL=http://127.0.0.1:11434/v1 python examples/thermostat_agent.py --grammar gbnf
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.edge import load_device
from lgembed.models import ChatOpenAI
from lgembed.prebuilt import create_react_agent
from lgembed.types import Command

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = [
    {"tool_calls": [{"id": "call_read", "name": "read_room", "arguments": "{}"}]},
    {
        "content": "The room is below the target, so I am switching the heater on.",
        "tool_calls": [{"id": "call_heat", "name": "set_heater", "arguments": '{"value": true}'}],
    },
    {"content": "The heater is on; the room will be at 21 C shortly."},
]
# what the scripted server answers, in order (llama.cpp's reply shapes)


def run(agent: object, inputs: object, config: dict) -> None:
    """Streams one agent run: tokens as they come, tool results, interrupts."""
    for mode, payload in agent.stream(inputs, config, stream_mode=["messages", "updates"]):
        if mode == "messages":
            message, meta = payload
            if message.type == "AIMessageChunk":
                print(message.content, end="", flush=True)
                for chunk in message.tool_call_chunks:
                    if chunk.get("name"):
                        print(f"\n  -> calling {chunk['name']}", end="", flush=True)
            elif message.type == "tool":
                print(f"\n  <- {message.name}: {message.content}")
        elif "__interrupt__" in payload:
            print(f"\n  approval needed: {payload['__interrupt__'][0].value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=os.environ.get("LGEMBED_MODEL_URL"), help="OpenAI-compatible server (default: the scripted test server)")
    parser.add_argument("--model", default=os.environ.get("LGEMBED_MODEL", "qwen2.5-1.5b-instruct"))
    parser.add_argument("--grammar", choices=("gbnf", "json_schema"), help="constrain tool calls with a grammar")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # create_react_agent's LangGraph deprecation notice

    server = None
    base_url = args.base_url
    if not base_url:
        sys.path.insert(0, os.path.join(HERE, "..", "tests"))
        from _fake_llama_server import FakeLlamaServer

        server = FakeLlamaServer(SCRIPT).start()
        base_url = server.url
    try:
        model = ChatOpenAI(model=args.model, base_url=base_url, temperature=0.2, tool_grammar=args.grammar)
        with load_device(os.path.join(HERE, "thermostat.toml"), simulate=True) as device:
            agent = create_react_agent(model, device.tools(), checkpointer=InMemorySaver())
            config = {"configurable": {"thread_id": "thermostat-agent"}}
            run(agent, {"messages": [("user", "Keep the room at 21 C.")]}, config)
            if agent.get_state(config).next:
                print("  operator approves")
                run(agent, Command(resume={"approved": True}), config)
            final = agent.get_state(config).values["messages"][-1]
            print(f"\nFINAL: {final.content}")
            print(f"heater line: {'high' if device.simulation('heater').value else 'low'}")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
