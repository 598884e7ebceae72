"""Record what LangGraph + langchain-openai produce for a ReAct agent against the fake llama server.

Why this exists: issue 16's acceptance 1 asks that `create_react_agent(ChatOpenAI(...), tools)`
on lgembed give the message sequence LangGraph + langchain-openai give against the same
server. This script runs one program on either library and normalizes the result (messages,
`stream_mode=["messages", "updates"]` chunks with their metadata, and the request bodies the
server received; generated ids and uuids numbered by first appearance). The LangGraph run is
recorded once into tests/fixtures/openai_agent.json; tests/test_models_agent.py runs the same
program on lgembed and compares.

Redo the recording (needs a venv with langgraph==1.2.22 and langchain-openai):
    python3 -m venv /tmp/lgoai && /tmp/lgoai/bin/pip install langgraph==1.2.22 langchain-openai
    /tmp/lgoai/bin/python tools/record_openai_agent.py --write
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "openai_agent.json"
sys.path.insert(0, str(ROOT / "tests"))

from _fake_llama_server import FakeLlamaServer  # noqa: E402

TURN = [
    {
        "tool_calls": [
            {"id": "call_w1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"id": "call_a1", "name": "add", "arguments": '{"a": 2, "b": 40}'},
        ],
        "usage": {"prompt_tokens": 61, "completion_tokens": 18},
    },
    {"content": "Paris: sunny, 21 °C. 2 + 40 = 42.", "usage": {"prompt_tokens": 95, "completion_tokens": 12}},
]
# the scripted model: one turn with two tool calls, then the answer

QUESTION = "What's the weather in Paris, and what is 2 + 40?"

SCENARIOS = ("invoke", "stream", "astream", "stream_usage")
# invoke: agent.invoke; stream / astream: stream_mode=["messages", "updates"];
# stream_usage: stream with ChatOpenAI(stream_usage=True) (usage in the last SSE chunk)

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _Ids:
    """Numbers uuids by first appearance, so two runs compare equal."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def sub(self, text: str) -> str:
        def repl(m: re.Match) -> str:
            return self.seen.setdefault(m.group(0), f"<uuid{len(self.seen)}>")

        return _UUID.sub(repl, text)

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.sub(value)
        if isinstance(value, dict):
            return {self.sub(k) if isinstance(k, str) else k: self.walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.walk(v) for v in value]
        return value


_FIELDS = (
    "content", "additional_kwargs", "response_metadata", "name", "id", "tool_calls", "invalid_tool_calls",
    "usage_metadata", "tool_call_chunks", "chunk_position", "tool_call_id", "status",
)  # fmt: skip


def message_dict(m: Any) -> dict:
    """A message's class name and fields, as plain data."""
    out: dict = {"class": type(m).__name__, "type": m.type}
    for f in _FIELDS:
        if hasattr(m, f):
            out[f] = getattr(m, f)
    return out


def _plain(value: Any) -> Any:
    if hasattr(value, "content") and hasattr(value, "type"):
        return message_dict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _stream_item(item: Any) -> dict:
    mode, payload = item
    if mode == "messages":
        message, metadata = payload
        return {"mode": mode, "message": message_dict(message), "metadata": dict(sorted(metadata.items()))}
    return {"mode": mode, "payload": _plain(payload)}


def run(lib: str) -> dict:
    """Runs every scenario on `lib` ("langgraph" or "lgembed"); returns the normalized results."""
    if lib == "langgraph":
        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import create_react_agent
    else:
        from lgembed.models import ChatOpenAI
        from lgembed.prebuilt import create_react_agent
        from lgembed.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return f"{city}: sunny, 21 °C"

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    results: dict = {}
    for scenario in SCENARIOS:
        ids = _Ids()
        with FakeLlamaServer(TURN * 1) as server:
            kwargs: dict = {"stream_usage": True} if scenario == "stream_usage" else {}
            model = ChatOpenAI(model="qwen2.5-1.5b-instruct", base_url=server.url, api_key="sk-test", **kwargs)
            agent = create_react_agent(model, [get_weather, add])
            inputs = {"messages": [("user", QUESTION)]}
            if scenario == "invoke":
                out: Any = [message_dict(m) for m in agent.invoke(inputs)["messages"]]
            elif scenario == "astream":

                async def collect() -> list:
                    return [_stream_item(i) async for i in agent.astream(inputs, stream_mode=["messages", "updates"])]

                out = asyncio.run(collect())
            else:
                out = [_stream_item(i) for i in agent.stream(inputs, stream_mode=["messages", "updates"])]
            bodies = [r["body"] for r in server.requests]
        results[scenario] = ids.walk(json.loads(json.dumps({"output": out, "requests": bodies}, default=repr)))
    return results


def main(argv: list[str]) -> None:
    import langgraph  # noqa: F401 - the recording must come from real LangGraph

    results = run("langgraph")
    text = json.dumps(results, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if "--write" in argv:
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(text, encoding="utf-8")
        print(f"wrote {FIXTURE}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
