"""lgembed.models.ChatOpenAI against a real HTTP server on 127.0.0.1 (tests/_fake_llama_server.py).

Covers the client (non-streaming and SSE replies, tool-call deltas, usage, errors, retries
with Retry-After, timeouts, dropped connections, keep-alive), the binding surface
(bind_tools, tool_choice, with_structured_output, batch, async), token streaming into
`stream_mode="messages"` (tags, nostream, subgraphs, no duplicates) and import hygiene.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _fake_llama_server import FakeLlamaServer  # noqa: E402

from lgembed.graph import START, MessagesState, StateGraph  # noqa: E402
from lgembed.messages import AIMessage, AIMessageChunk, HumanMessage  # noqa: E402
from lgembed.models import (  # noqa: E402
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    ChatOpenAI,
    RateLimitError,
)
from lgembed.tools import tool  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CALL = {"tool_calls": [{"id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 40}'}]}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _model(srv: FakeLlamaServer, **kw: object) -> ChatOpenAI:
    m = ChatOpenAI(model="tiny", base_url=srv.url, api_key="sk-secret-key", **kw)
    m._client.sleep = lambda s: None  # no real waiting between retries
    return m


@pytest.fixture
def srv():
    with FakeLlamaServer() as server:
        yield server


# --- replies ---------------------------------------------------------------------------------


def test_invoke_plain_and_tool_call(srv: FakeLlamaServer) -> None:
    srv.add({"content": "hello", "usage": {"prompt_tokens": 3, "completion_tokens": 1}}, CALL)
    m = _model(srv, temperature=0.1, max_tokens=20, stop=["\n\n"])
    reply = m.invoke("hi")
    assert type(reply) is AIMessage and reply.content == "hello"
    assert reply.usage_metadata == {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4, "input_token_details": {}, "output_token_details": {}}
    assert reply.response_metadata["finish_reason"] == "stop" and reply.response_metadata["model_name"] == "tiny"
    assert reply.id.startswith("lc_run--") and reply.id.endswith("-0")
    body = srv.requests[0]["body"]
    assert body == {"model": "tiny", "stream": False, "stop": ["\n\n"], "max_tokens": 20, "temperature": 0.1, "messages": [{"content": "hi", "role": "user"}]}
    assert srv.requests[0]["headers"]["Authorization"] == "Bearer sk-secret-key"
    call = m.bind_tools([add]).invoke([HumanMessage("2+40?")])
    assert call.tool_calls == [{"name": "add", "args": {"a": 2, "b": 40}, "id": "call_1", "type": "tool_call"}]
    assert srv.requests[1]["body"]["tools"][0]["function"]["name"] == "add"


def test_stream_chunks_sum_to_the_message(srv: FakeLlamaServer) -> None:
    srv.add({"content": "abcdefghij", **CALL, "usage": {"prompt_tokens": 5, "completion_tokens": 7}})
    chunks = list(_model(srv, stream_usage=True).bind_tools([add]).stream("x"))
    assert all(type(c) is AIMessageChunk for c in chunks)
    assert chunks[-1].chunk_position == "last"
    assert chunks[1].content == "abcd"
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    assert total.content == "abcdefghij"
    assert total.tool_calls == [{"name": "add", "args": {"a": 2, "b": 40}, "id": "call_1", "type": "tool_call"}]
    assert total.usage_metadata["total_tokens"] == 12
    assert total.response_metadata["finish_reason"] == "tool_calls"
    assert srv.requests[0]["body"]["stream_options"] == {"include_usage": True}
    # a partial sum already has the partial tool call
    assert (chunks[0] + chunks[1] + chunks[2] + chunks[3] + chunks[4]).tool_calls[0]["name"] == "add"


def test_streaming_true_invoke_sums_chunks(srv: FakeLlamaServer) -> None:
    srv.add({"content": "streamed answer"})
    reply = _model(srv, streaming=True).invoke("x")
    assert type(reply) is AIMessage and reply.content == "streamed answer"
    assert srv.requests[0]["body"]["stream"] is True


def test_async_and_batch(srv: FakeLlamaServer) -> None:
    srv.add({"content": "one"}, {"content": "two"}, {"content": "three"}, {"content": "four"})
    m = _model(srv)

    async def go() -> tuple:
        a = await m.ainvoke("x")
        chunks = [c async for c in m.astream("y")]
        return a, chunks

    a, chunks = asyncio.run(go())
    assert a.content == "one" and "".join(c.content for c in chunks) == "two"
    out = sorted(r.content for r in m.batch(["a", "b"]))
    assert out == ["four", "three"]


# --- errors, retries, timeouts, keep-alive ---------------------------------------------------


def test_error_body_names_url_status_and_message_not_the_key(srv: FakeLlamaServer) -> None:
    srv.add({"status": 400, "error": {"code": 400, "message": "the request exceeds the available context size (sk-secret-key)", "type": "exceed_context_size_error"}})
    with pytest.raises(APIStatusError) as info:
        _model(srv).invoke("x")
    text = str(info.value)
    assert f"POST {srv.url}/chat/completions: HTTP 400" in text
    assert "exceeds the available context size" in text
    assert "sk-secret-key" not in text and info.value.status_code == 400
    assert len(srv.requests) == 1  # 400 is not retried


def test_429_honours_retry_after_then_succeeds(srv: FakeLlamaServer) -> None:
    srv.add({"status": 429, "headers": {"Retry-After": "3"}, "error": {"code": 429, "message": "busy", "type": "unavailable_error"}}, {"content": "ok"})
    m = _model(srv)
    waits: list = []
    m._client.sleep = waits.append
    assert m.invoke("x").content == "ok"
    assert waits == [3.0]


def test_500_then_success_and_exhausted_retries(srv: FakeLlamaServer) -> None:
    srv.add({"status": 500, "error": {"code": 500, "message": "boom", "type": "server_error"}}, {"content": "ok"})
    m = _model(srv)
    waits: list = []
    m._client.sleep = waits.append
    assert m.invoke("x").content == "ok"
    assert len(waits) == 1 and 0.375 <= waits[0] <= 0.5
    srv.add(*[{"status": 503, "error": {"code": 503, "message": "loading model", "type": "unavailable_error"}}] * 3)
    with pytest.raises(APIStatusError, match="HTTP 503 Service Unavailable: loading model"):
        m.invoke("x")
    srv.add(*[{"status": 429, "headers": {"Retry-After": "0"}}] * 3)
    with pytest.raises(RateLimitError):
        m.invoke("x")


def test_timeout(srv: FakeLlamaServer) -> None:
    srv.add({"delay": 1.0, "content": "late"})
    m = _model(srv, timeout=0.2, max_retries=0)
    with pytest.raises(APITimeoutError, match=r"timed out after 0.2 s") as info:
        m.invoke("x")
    assert isinstance(info.value, TimeoutError) and srv.url in str(info.value)


def test_dropped_connections(srv: FakeLlamaServer) -> None:
    srv.add({"drop": True}, {"content": "after reconnect"})
    assert _model(srv).invoke("x").content == "after reconnect"
    srv.add({"content": "abcdefghijklmnop", "drop_after_chunks": 3})
    got: list = []
    with pytest.raises(APIConnectionError, match="before \\[DONE\\]|lost mid-stream"):
        for c in _model(srv, max_retries=0).stream("x"):
            got.append(c.content)
    assert "".join(got) == "abcdefgh"


def test_keep_alive_reuses_one_connection(srv: FakeLlamaServer) -> None:
    srv.add({"content": "1"}, {"content": "2"}, {"content": "3"}, {"content": "4"})
    m = _model(srv)
    m.invoke("a")
    list(m.stream("b"))
    m.invoke("c")
    list(m.stream("d"))
    assert m._client.connections_made == 1
    assert {r["connection"] for r in srv.requests} == {srv.requests[0]["connection"]}


def test_connection_refused_names_the_url() -> None:
    m = ChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", max_retries=1)
    m._client.sleep = lambda s: None
    with pytest.raises(APIConnectionError, match=r"POST http://127.0.0.1:9/v1/chat/completions: connection failed"):
        m.invoke("x")


def test_constructor() -> None:
    with pytest.raises(ValueError, match="tool_grammar must be one of"):
        ChatOpenAI(model="m", base_url="http://x/v1", tool_grammar="regex")
    with pytest.raises(ValueError, match="unknown arguments \\['foo'\\]"):
        ChatOpenAI(model="m", base_url="http://x/v1", foo=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    code = "from lgembed.models import ChatOpenAI\ntry:\n    ChatOpenAI(model='m')\nexcept ValueError as e:\n    print(e)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=str(ROOT)).stdout
    assert "no API key" in out
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1"
    code = "from lgembed.models import ChatOpenAI\nprint(ChatOpenAI(model_name='m', request_timeout=3).base_url)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=str(ROOT)).stdout
    assert out.strip() == "http://127.0.0.1:1/v1"


# --- tools and structured output ----------------------------------------------------------------


def test_bind_tools_kinds_and_tool_choice(srv: FakeLlamaServer) -> None:
    def multiply(x: float, y: float) -> float:
        """Multiply."""
        return x * y

    class Lookup(TypedDict):
        """Look something up."""

        key: str

    schema = {"title": "ping", "description": "Ping.", "type": "object", "properties": {}}
    srv.add({"content": "a"}, {"content": "b"}, {"content": "c"})
    m = _model(srv)
    m.bind_tools([add, multiply, Lookup, schema], tool_choice="add").invoke("x")
    m.bind_tools([add], tool_choice="any").invoke("x")
    m.bind_tools([add], tool_choice=True, parallel_tool_calls=False).invoke("x")
    b0, b1, b2 = (r["body"] for r in srv.requests)
    assert [t["function"]["name"] for t in b0["tools"]] == ["add", "multiply", "Lookup", "ping"]
    assert b0["tools"][2]["function"]["parameters"] == {"properties": {"key": {"type": "string"}}, "required": ["key"], "type": "object"}
    assert b0["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert b1["tool_choice"] == "required" and b2["tool_choice"] == "required" and b2["parallel_tool_calls"] is False
    with pytest.raises(ValueError, match="Unrecognized tool_choice type"):
        m.bind_tools([add], tool_choice=3)


def test_with_structured_output(srv: FakeLlamaServer) -> None:
    @dataclasses.dataclass
    class Reading:
        room: str
        celsius: float

    srv.add(
        {"content": '{"room": "hall", "celsius": 20.5}'},
        {"tool_calls": [{"id": "c", "name": "Reading", "arguments": '{"room": "attic", "celsius": 9}'}]},
        {"content": "not json"},
    )
    m = _model(srv)
    assert m.with_structured_output(Reading).invoke("x") == Reading("hall", 20.5)
    assert m.with_structured_output(Reading, method="function_calling").invoke("x") == Reading("attic", 9)
    out = m.with_structured_output({"title": "R", "type": "object", "properties": {}}, include_raw=True).invoke("x")
    assert out["parsed"] is None and out["raw"].content == "not json" and "Invalid json output" in str(out["parsing_error"])
    rf = srv.requests[0]["body"]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Reading"
    assert srv.requests[1]["body"]["tool_choice"] == {"type": "function", "function": {"name": "Reading"}}


# --- token streaming in stream_mode="messages" ----------------------------------------------


def _graph(model: ChatOpenAI):
    tagged = model.with_config(tags=["mytag"])
    quiet = model.with_config(tags=["nostream"])

    def inner(state: dict) -> dict:
        reply = tagged.invoke(state["messages"])
        quiet.invoke(state["messages"])
        return {"messages": [reply]}

    sub = StateGraph(MessagesState).add_node("inner", inner).add_edge(START, "inner").compile()

    def outer(state: dict) -> dict:
        list(model.stream(state["messages"]))
        return {"messages": [model.invoke(state["messages"])]}

    return StateGraph(MessagesState).add_node("outer", outer).add_node("sub", sub).add_edge(START, "outer").add_edge("outer", "sub").compile()


def test_tokens_stream_with_langgraph_metadata(srv: FakeLlamaServer) -> None:
    srv.add(*[{"content": "ab"}] * 4)
    g = _graph(_model(srv, temperature=0.2, max_tokens=7))
    items = list(g.stream({"messages": [("user", "hi")]}, stream_mode="messages", subgraphs=True))
    kinds = [(ns[0].split(":")[0] if ns else "", type(m).__name__, m.content) for ns, (m, md) in items]
    # outer: stream() then invoke(), 4 chunks each; sub: the tagged model only (nostream filtered);
    # the messages the nodes return are not streamed again
    assert kinds == [("", "AIMessageChunk", c) for c in ("", "ab", "", "")] * 2 + [("sub", "AIMessageChunk", c) for c in ("", "ab", "", "")]
    _, (chunk, md) = items[0]
    assert md["langgraph_node"] == "outer" and md["langgraph_step"] == 1
    assert md["checkpoint_ns"] == md["langgraph_checkpoint_ns"] and md["checkpoint_ns"].startswith("outer:")
    assert {k: md[k] for k in ("ls_provider", "ls_model_name", "ls_model_type", "ls_temperature", "ls_max_tokens", "ls_integration")} == {
        "ls_provider": "openai", "ls_model_name": "tiny", "ls_model_type": "chat", "ls_temperature": 0.2, "ls_max_tokens": 7,
        "ls_integration": "langchain_chat_model",
    }  # fmt: skip
    assert "tags" not in md
    _, (chunk, md) = items[-1]
    assert md["tags"] == ["mytag"] and md["langgraph_node"] == "inner"
    assert md["checkpoint_ns"] == md["langgraph_checkpoint_ns"].split("|")[0]
    assert all(r["body"]["stream"] is True for r in srv.requests)


def test_subgraph_tokens_need_subgraphs_true(srv: FakeLlamaServer) -> None:
    srv.add(*[{"content": "ab"}] * 4)
    g = _graph(_model(srv))
    items = list(g.stream({"messages": [("user", "hi")]}, stream_mode="messages"))
    # as in LangGraph: the subgraph's tokens are not streamed, so the message the `sub`
    # node returns is new to the parent and streamed whole
    assert [(md["langgraph_node"], type(m).__name__) for m, md in items] == [("outer", "AIMessageChunk")] * 8 + [("sub", "AIMessage")]


def test_async_graph_streams_tokens(srv: FakeLlamaServer) -> None:
    srv.add({"content": "hello there"}, {"content": " and more"})
    model = _model(srv)

    async def node(state: dict) -> dict:
        streamed = [c async for c in model.astream(state["messages"])]
        assert streamed[-1].chunk_position == "last"
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = StateGraph(MessagesState).add_node("n", node).add_edge(START, "n").compile()

    async def go() -> list:
        return [m async for m, _ in g.astream({"messages": [("user", "hi")]}, stream_mode="messages")]

    out = asyncio.run(go())
    assert "".join(m.content for m in out) == "hello there and more"
    assert all(type(m) is AIMessageChunk for m in out)


def test_no_stream_outside_messages_mode(srv: FakeLlamaServer) -> None:
    srv.add({"content": "x"})
    model = _model(srv)
    g = StateGraph(MessagesState).add_node("n", lambda s: {"messages": [model.invoke(s["messages"])]}).add_edge(START, "n").compile()
    out = g.invoke({"messages": [("user", "hi")]})
    assert out["messages"][-1].content == "x" and srv.requests[0]["body"]["stream"] is False


# --- imports ---------------------------------------------------------------------------------


def _modules_after(code: str) -> list:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
        env=env, capture_output=True, text=True, cwd=str(ROOT), timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_import_lgembed_models_loads_no_third_party_module() -> None:
    mods = _modules_after("import lgembed.models")
    stdlib = set(sys.stdlib_module_names)
    site = {"lgembed", "__main__", "_distutils_hack", "sitecustomize", "usercustomize"}
    # pip's editable install adds a finder module to every interpreter, and lgembed's own
    # compiled modules register Cython's runtime ("cython_runtime", "_cython_3_3_1"):
    # neither is an import of a package
    third = sorted(
        m for m in {m.split(".")[0] for m in mods} - stdlib - site
        if not m.startswith(("__editable__", "_cython_")) and m != "cython_runtime"
    )
    assert third == [], third


def test_import_lgembed_graph_does_not_load_models() -> None:
    mods = _modules_after("import lgembed.graph\nimport lgembed.prebuilt")
    assert not [m for m in mods if m.startswith("lgembed.models")]
