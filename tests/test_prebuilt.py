"""`lgembed.prebuilt`: ToolNode, tools_condition, create_react_agent (docs/BEHAVIOUR.md §13 M-3…M-6, §16 O-15).

Every expected value below was first observed with LangGraph 1.2.22 +
langgraph-prebuilt 1.1.3 + langchain-core 1.8.3 (the reference install), running the
same programs with langchain-core `@tool`s and `FakeMessagesListChatModel`; here the
tools are plain functions and the model is `ScriptedModel` (below). Tests named
`test_lgembed_*` pin lgembed-only behaviour.
"""

import asyncio
import re
import subprocess
import sys
import threading
import uuid
import warnings
from typing import Annotated, Any, TypedDict, Union

import pytest

from lgembed.errors import GraphRecursionError
from lgembed.graph import START, MessagesState, StateGraph
from lgembed.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from lgembed.prebuilt import (
    InjectedState,
    InjectedStore,
    ToolNode,
    ToolRuntime,
    create_react_agent,
    tools_condition,
)
from lgembed.prebuilt.chat_agent_executor import AgentState
from lgembed.prebuilt.tool_node import ToolCallWithContext, ToolInvocationError
from lgembed.store.memory import InMemoryStore
from lgembed.tools import InjectedToolCallId, tool
from lgembed.types import Command, Send
from lgembed.warnings import LangGraphDeprecatedSinceV10, LangGraphDeprecationWarning


class PlainModel:
    """A chat model stand-in with only `invoke`: returns `responses` in order (cycling, the
    same objects, like langchain-core's FakeMessagesListChatModel) and records its inputs."""

    def __init__(self, responses):
        self.responses = list(responses)
        self.i = 0
        self.seen = []
        self.bound = None

    def invoke(self, messages):
        self.seen.append([(m.type, m.content) for m in messages])
        r = self.responses[self.i]
        self.i = (self.i + 1) % len(self.responses)
        return r


class ScriptedModel(PlainModel):
    """`PlainModel` plus `bind_tools` (records the tools it was given)."""

    def bind_tools(self, tools):
        self.bound = list(tools)
        return self


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boom() -> str:
    """Explode."""
    raise RuntimeError("kaput")


def vboom() -> str:
    """Raise ValueError."""
    raise ValueError("bad")


def calls(*specs, id=None):
    """AIMessage whose tool_calls are (name, args, id) triples."""
    return AIMessage("", id=id, tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in specs])


def run_node(node, inp, schema=MessagesState, **kw):
    g = StateGraph(schema)
    g.add_node("tools", node)
    g.add_edge(START, "tools")
    return g.compile(**kw).invoke(inp)


def tool_msgs(out):
    return [(m.content, m.tool_call_id, m.name, m.status) for m in out["messages"] if m.type == "tool"]


class S(MessagesState):
    foo: str


# --- O-15 / M-3 / M-4: ToolNode ---------------------------------------------------------


def test_o15_tool_node_success_unknown_tool_and_invalid_args():
    """O-15: ToolNode([add, boom]) on add(1,2), nope(), add(a="x")."""
    out = run_node(
        ToolNode([add, boom]),
        {"messages": [calls(("add", {"a": 1, "b": 2}, "c1"), ("nope", {}, "c2"), ("add", {"a": "x"}, "c3"))]},
    )
    assert tool_msgs(out) == [
        ("3", "c1", "add", "success"),
        ("Error: nope is not a valid tool, try one of [add, boom].", "c2", "nope", "error"),
        (
            (
                "Error invoking tool 'add' with kwargs {'a': 'x'} with error:\n"
                " a: Input should be a valid integer, unable to parse string as an integer\n"
                "b: Field required\n"
                " Please fix the error and try again."
            ),
            "c3",
            "add",
            "error",
        ),
    ]
    assert all(isinstance(m, ToolMessage) for m in out["messages"][1:])


def test_o15_tool_exception_reraised_by_default():
    """O-15 / M-4: boom with the default handler → RuntimeError('kaput') is raised."""
    with pytest.raises(RuntimeError, match=re.escape("kaput")):
        run_node(ToolNode([add, boom]), {"messages": [calls(("boom", {}, "b1"))]})


def test_o15_handle_tool_errors_true():
    """O-15 / M-4: handle_tool_errors=True → "Error: RuntimeError('kaput')\\n Please fix your mistakes."."""
    out = run_node(
        ToolNode([add, boom], handle_tool_errors=True),
        {"messages": [calls(("boom", {}, "b1"), ("add", {"a": "x", "b": 1}, "b2"), ("nope", {}, "b3"))]},
    )
    assert [(c, s) for c, _, _, s in tool_msgs(out)] == [
        ("Error: RuntimeError('kaput')\n Please fix your mistakes.", "error"),
        (
            (
                "Error: ToolInvocationError(\"Error invoking tool 'add' with kwargs {'a': 'x', 'b': 1} with error:\\n"
                " a: Input should be a valid integer, unable to parse string as an integer\\n"
                ' Please fix the error and try again.")\n Please fix your mistakes.'
            ),
            "error",
        ),
        ("Error: nope is not a valid tool, try one of [add, boom].", "error"),
    ]


def test_handle_tool_errors_str_and_callable():
    """M-4: a str → that text; a callable → its return value (for every exception)."""
    inp = {"messages": [calls(("boom", {}, "b1"), ("nope", {}, "b3"))]}
    out = run_node(ToolNode([boom], handle_tool_errors="custom"), inp)
    assert [c for c, *_ in tool_msgs(out)] == ["custom", "Error: nope is not a valid tool, try one of [boom]."]
    out = run_node(ToolNode([boom], handle_tool_errors=lambda e: f"handled {e!r}"), inp)
    assert tool_msgs(out)[0][0] == "handled RuntimeError('kaput')"


def test_handle_tool_errors_exception_types():
    """M-4: an exception type / tuple handles only those; others (and invalid args) re-raise."""
    inp = {"messages": [calls(("vboom", {}, "1"))]}
    out = run_node(ToolNode([boom, vboom], handle_tool_errors=(RuntimeError, ValueError)), inp)
    assert tool_msgs(out)[0][0] == "Error: ValueError('bad')\n Please fix your mistakes."
    with pytest.raises(RuntimeError, match="kaput"):
        run_node(ToolNode([boom], handle_tool_errors=ValueError), {"messages": [calls(("boom", {}, "1"))]})
    with pytest.raises(RuntimeError, match="kaput"):
        run_node(ToolNode([boom], handle_tool_errors=(ValueError,)), {"messages": [calls(("boom", {}, "1"))]})
    with pytest.raises(RuntimeError, match="kaput"):
        run_node(ToolNode([boom], handle_tool_errors=False), {"messages": [calls(("boom", {}, "1"))]})
    # a type that does not cover ToolInvocationError lets the invalid-args error through
    with pytest.raises(
        ToolInvocationError,
        match=re.escape(
            "Error invoking tool 'add' with kwargs {'a': 'x', 'b': 1} with error:\n"
            " a: Input should be a valid integer, unable to parse string as an integer\n"
            " Please fix the error and try again."
        ),
    ):
        run_node(
            ToolNode([add], handle_tool_errors=RuntimeError), {"messages": [calls(("add", {"a": "x", "b": 1}, "1"))]}
        )


def test_handle_tool_errors_handler_annotations():
    """M-4: a handler handles the exception types of its first parameter's annotation."""

    def h_value(e: ValueError) -> str:
        return "VE"

    def h_union(e: ValueError | TypeError) -> str:
        return f"U {e}"

    def h_typing_union(e: Union[ValueError, TypeError]) -> str:  # noqa: UP007 - both union spellings
        return f"T {e}"

    class HM:
        def handle(self, e: ValueError) -> str:
            return "method"

    inp = {"messages": [calls(("vboom", {}, "1"))]}
    assert tool_msgs(run_node(ToolNode([vboom], handle_tool_errors=h_union), inp))[0][0] == "U bad"
    assert tool_msgs(run_node(ToolNode([vboom], handle_tool_errors=h_typing_union), inp))[0][0] == "T bad"
    assert tool_msgs(run_node(ToolNode([vboom], handle_tool_errors=HM().handle), inp))[0][0] == "method"
    with pytest.raises(RuntimeError, match="kaput"):
        run_node(ToolNode([boom], handle_tool_errors=h_value), {"messages": [calls(("boom", {}, "1"))]})


def test_handle_tool_errors_bad_handlers():
    """M-4: LangGraph's texts for unusable handlers (raised when an error is handled)."""

    def h_int(e: int) -> str:
        return "x"

    def h_union_bad(e: Union[ValueError, int]) -> str:  # noqa: UP007 - LangGraph's text shows typing.Union
        return "x"

    inp = {"messages": [calls(("vboom", {}, "1"))]}
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Arbitrary types are not supported in the error handler signature. Please annotate the error with "
            "either a specific Exception type or a union of Exception types. For example, `def custom_handler(e: "
            "ValueError)` or `def custom_handler(e: Union[ValueError, TypeError])`. Got '<class 'int'>' instead."
        ),
    ):
        run_node(ToolNode([vboom], handle_tool_errors=h_int), inp)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "All types in the error handler error annotation must be Exception types. For example, `def "
            "custom_handler(e: Union[ValueError, TypeError])`. Got 'typing.Union[ValueError, int]' instead."
        ),
    ):
        run_node(ToolNode([vboom], handle_tool_errors=h_union_bad), inp)
    with pytest.raises(
        ValueError,
        match=re.escape("Got unexpected type of `handle_tool_error`. Expected bool, str or callable. Received: 123"),
    ):
        run_node(ToolNode([vboom], handle_tool_errors=123), inp)


def rets(kind: str):
    """Return various."""
    return {
        "int": 3,
        "float": 2.5,
        "true": True,
        "none": None,
        "dict": {"a": 1, "b": [1, 2]},
        "list": [1, 2],
        "strs": ["a", "b"],
        "empty": [],
        "tuple": (1, 2),
        "uni": "é",
        "unid": {"k": "é"},
        "blocks": [{"type": "text", "text": "hi"}],
        "set": {1},
    }[kind]


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("int", "3"),
        ("float", "2.5"),
        ("true", "true"),
        ("none", "null"),
        ("dict", '{"a": 1, "b": [1, 2]}'),
        ("list", "[1, 2]"),
        ("strs", '["a", "b"]'),
        ("empty", []),
        ("tuple", "[1, 2]"),
        ("uni", "é"),
        ("unid", '{"k": "é"}'),
        ("blocks", [{"type": "text", "text": "hi"}]),
        ("set", "{1}"),
    ],
)
def test_content_formatting(kind, content):
    """M-3: str as is, numbers and dict/list as JSON text, content blocks as a list, else str()."""
    out = run_node(ToolNode([rets]), {"messages": [calls(("rets", {"kind": kind}, "r"))]})
    assert out["messages"][-1].content == content


def test_object_result_uses_str():
    class X:
        def __str__(self):
            return "XOBJ"

    def obj() -> Any:
        """Obj."""
        return X()

    assert run_node(ToolNode([obj]), {"messages": [calls(("obj", {}, "o"))]})["messages"][-1].content == "XOBJ"


def test_plain_function_without_docstring_is_rejected():
    """M-3: plain callables are made tools, which needs a docstring (langchain-core's text)."""

    def nodoc(x: int):
        return x

    with pytest.raises(ValueError, match=re.escape("Function must have a docstring if description not provided.")):
        ToolNode([nodoc])


def test_tools_by_name_and_node_name():
    node = ToolNode([add, tool(boom)], name="my_tools")
    assert list(node.tools_by_name) == ["add", "boom"]
    g = StateGraph(MessagesState)
    g.add_node(node)
    assert "my_tools" in g.nodes


# --- M-3: input shapes -------------------------------------------------------------------


def test_input_shapes_inside_a_node():
    """M-3: list of messages → list; tool-call list and Send payload → dict; no calls → empty."""
    tn = ToolNode([add])
    seen = {}

    def node(state):
        seen["list"] = tn.invoke([calls(("add", {"a": 1, "b": 2}, "l1"))])
        seen["calls"] = tn.invoke([{"name": "add", "args": {"a": 5, "b": 5}, "id": "d1", "type": "tool_call"}])
        seen["send"] = tn.invoke(
            ToolCallWithContext(
                __type="tool_call_with_context",
                tool_call={"name": "add", "args": {"a": 2, "b": 2}, "id": "s1", "type": "tool_call"},
                state=state,
            )
        )
        seen["none"] = tn.invoke({"messages": [calls()]})
        for key, bad in (("empty", {"messages": []}), ("noai", {"messages": [HumanMessage("x")]}), ("nomsg", {"o": 1})):
            try:
                tn.invoke(bad)
            except ValueError as e:
                seen[key] = str(e)
        return {}

    run_node(node, {"messages": [HumanMessage("x")]})
    assert seen["list"] == [ToolMessage("3", name="add", tool_call_id="l1")]
    assert seen["calls"] == {"messages": [ToolMessage("10", name="add", tool_call_id="d1")]}
    assert seen["send"] == {"messages": [ToolMessage("4", name="add", tool_call_id="s1")]}
    assert seen["none"] == {"messages": []}
    assert seen["empty"] == "No message found in input"
    assert seen["noai"] == "No AIMessage found in input"
    assert seen["nomsg"] == "No message found in input"


def test_send_payload_routes_to_tool_node():
    """M-3: a ToolCallWithContext Send payload (create_react_agent v2's shape)."""

    def route(state):
        return [
            Send("tools", ToolCallWithContext(__type="tool_call_with_context", tool_call=c, state=state))
            for c in state["messages"][-1].tool_calls
        ]

    g = StateGraph(MessagesState)
    g.add_node("agent", lambda s: {"messages": [calls(("add", {"a": 1, "b": 1}, "x"), ("add", {"a": 2, "b": 2}, "y"))]})
    g.add_node("tools", ToolNode([add]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools"])
    out = g.compile().invoke({"messages": [HumanMessage("go")]})
    assert [(m.content, m.tool_call_id) for m in out["messages"][2:]] == [("2", "x"), ("4", "y")]


def test_outside_a_graph_raises():
    """M-4: ToolNode needs the Runtime, so it only runs inside a graph (LangGraph's text)."""
    with pytest.raises(ValueError, match=re.escape("Missing required config key 'N/A' for 'tools'.")):
        ToolNode([add]).invoke({"messages": [calls(("add", {"a": 1, "b": 2}, "c1"))]})


# --- M-3: concurrency and order ---------------------------------------------------------------


def test_tool_calls_run_concurrently_in_threads():
    """M-3: all calls run at once: four calls meet at a 4-party barrier (would time out if serial)."""
    barrier = threading.Barrier(4, timeout=10)

    def meet(x: int) -> int:
        """Meet."""
        barrier.wait()
        return threading.get_ident()

    out = run_node(ToolNode([meet]), {"messages": [calls(*[("meet", {"x": i}, f"s{i}") for i in range(4)])]})
    msgs = out["messages"][1:]
    assert [m.tool_call_id for m in msgs] == ["s0", "s1", "s2", "s3"]  # call order
    assert len({m.content for m in msgs}) == 4  # four threads


def test_async_path_gathers_tool_calls():
    """M-3: under ainvoke, async tools run concurrently on the loop, sync tools too; call order kept."""
    state = {"arrived": 0}

    async def aadd(a: int, b: int) -> int:
        """Async add."""
        state["arrived"] += 1
        while state["arrived"] < 3:  # only returns once all three coroutines started
            await asyncio.sleep(0)
        return a + b

    async def main():
        g = StateGraph(MessagesState)
        g.add_node("tools", ToolNode([aadd, add]))
        g.add_edge(START, "tools")
        return await g.compile().ainvoke(
            {
                "messages": [
                    calls(*[("aadd", {"a": i, "b": 1}, f"a{i}") for i in range(3)], ("add", {"a": 1, "b": 1}, "x"))
                ]
            }
        )

    out = asyncio.run(asyncio.wait_for(main(), 10))
    assert [m.content for m in out["messages"][1:]] == ["1", "2", "3", "2"]


def test_async_tool_under_sync_invoke():
    """An async-only tool under invoke: langchain-core's NotImplementedError (not handled by default)."""

    async def aadd(a: int, b: int) -> int:
        """Async add."""
        return a + b

    with pytest.raises(NotImplementedError, match=re.escape("StructuredTool does not support sync invocation.")):
        run_node(ToolNode([aadd]), {"messages": [calls(("aadd", {"a": 1, "b": 1}, "a"))]})


# --- M-3: Command ---------------------------------------------------------------------------


@tool
def setfoo(v: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Set foo."""
    return Command(update={"foo": v, "messages": [ToolMessage("set", tool_call_id=tool_call_id)]})


@tool
def badcmd(v: str) -> Command:
    """Bad command."""
    return Command(update={"foo": v})


@tool
def parent(v: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Parent."""
    return Command(graph=Command.PARENT, goto=[Send("x", v)])


@tool
def retmsg(tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Return a ToolMessage."""
    return ToolMessage({"x": 1}, tool_call_id=tool_call_id)


def test_command_outputs_are_collected():
    """M-3: a tool returning Command → a list mixing message updates and the Command."""
    g = StateGraph(S)
    g.add_node("tools", ToolNode([add, setfoo]))
    g.add_edge(START, "tools")
    chunks = list(
        g.compile().stream(
            {"messages": [calls(("add", {"a": 1, "b": 2}, "c1"), ("setfoo", {"v": "F"}, "c2"))]}, stream_mode="updates"
        )
    )
    [update] = chunks
    assert list(update) == ["tools"]
    first, second, third = update["tools"]
    assert [(m.content, m.name, m.tool_call_id) for m in first["messages"]] == [("3", "add", "c1")]
    assert second == {"foo": "F"}
    assert [(m.content, m.name, m.tool_call_id) for m in third["messages"]] == [("set", "setfoo", "c2")]


def test_returned_tool_message_is_kept():
    """A ToolMessage returned by a tool is used as is (its name stays None)."""
    out = run_node(ToolNode([retmsg]), {"messages": [calls(("retmsg", {}, "c1"))]})
    m = out["messages"][-1]
    assert (m.content, m.name, m.tool_call_id) == ("{'x': 1}", None, "c1")


def test_command_without_matching_tool_message_raises():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Expected to have a matching ToolMessage in Command.update for tool 'badcmd', got: []. Every tool call "
            "(LLM requesting to call a tool) in the message history MUST have a corresponding ToolMessage. You can "
            'fix it by modifying the tool to return `Command(update={"messages": [ToolMessage("Success", '
            "tool_call_id=tool_call_id), ...]}, ...)`."
        ),
    ):
        run_node(ToolNode([badcmd]), {"messages": [calls(("badcmd", {"v": "F"}, "c1"))]}, schema=S)


def test_command_dict_update_with_list_input_raises():
    seen = {}

    def node(state):
        try:
            ToolNode([setfoo]).invoke([calls(("setfoo", {"v": "F"}, "z1"))])
        except ValueError as e:
            seen["e"] = str(e)
        return {}

    run_node(node, {"messages": []})
    assert seen["e"] == (
        "Tools can provide a dict in Command.update only when using dict with 'messages' key as ToolNode input, "
        "got: {'foo': 'F', 'messages': [ToolMessage(content='set', tool_call_id='z1')]} for tool 'setfoo'"
    )


def test_parent_commands_are_merged():
    """M-3: Commands to the parent with Send lists become one Command (parent Sends merged)."""
    seen = {}

    def node(state):
        seen["r"] = ToolNode([parent, add]).invoke(
            {
                "messages": [
                    calls(("parent", {"v": "a"}, "p1"), ("parent", {"v": "b"}, "p2"), ("add", {"a": 1, "b": 1}, "p3"))
                ]
            }
        )
        return {}

    run_node(node, {"messages": []})
    assert seen["r"] == [
        {"messages": [ToolMessage("2", name="add", tool_call_id="p3")]},
        Command(graph=Command.PARENT, goto=[Send("x", "a"), Send("x", "b")]),
    ]


# --- injection ----------------------------------------------------------------------------------


def st(x: int, state: Annotated[dict, InjectedState]) -> str:
    """State tool."""
    return f"{x} {sorted(state)} {len(state['messages'])}"


def fo(x: int, foo: Annotated[str, InjectedState("foo")]) -> str:
    """Foo tool."""
    return foo + str(x)


def sto(x: int, store: Annotated[Any, InjectedStore()]) -> str:
    """Store tool."""
    return type(store).__name__


def rt(x: int, runtime: ToolRuntime) -> str:
    """Runtime tool."""
    return (
        f"{runtime.tool_call_id} {sorted(runtime.state)} {runtime.context} {type(runtime.store).__name__} "
        f"{[t.name for t in runtime.tools]} {sorted(runtime.config)}"
    )


def test_injected_arguments_are_hidden_and_filled():
    """InjectedState (whole / field), InjectedStore and ToolRuntime; forged values are dropped."""
    node = ToolNode([st, fo, sto, rt])
    assert {n: t.args for n, t in node.tools_by_name.items()} == {
        n: {"x": {"title": "X", "type": "integer"}} for n in ("st", "fo", "sto", "rt")
    }
    g = StateGraph(S)
    g.add_node("tools", node)
    g.add_edge(START, "tools")
    out = g.compile(store=InMemoryStore()).invoke(
        {
            "foo": "F",
            "messages": [
                calls(
                    ("st", {"x": 1, "state": "forged"}, "1"),
                    ("fo", {"x": 2}, "2"),
                    ("sto", {"x": 3}, "3"),
                    ("rt", {"x": 4}, "4"),
                )
            ],
        },
        context={"u": 1},
    )
    assert [m.content for m in out["messages"][1:]] == [
        "1 ['foo', 'messages'] 1",
        "F2",
        "InMemoryStore",
        (
            "4 ['foo', 'messages'] {'u': 1} InMemoryStore ['st', 'fo', 'sto', 'rt'] "
            "['callbacks', 'configurable', 'metadata', 'recursion_limit', 'tags']"
        ),
    ]


def test_injection_errors():
    """No store compiled in → LangGraph's text; a missing state field → KeyError (not handled)."""
    g = StateGraph(S)
    g.add_node("tools", ToolNode([sto, fo]))
    g.add_edge(START, "tools")
    app = g.compile()
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Cannot inject store into tools with InjectedStore annotations - please compile your graph with a store."
        ),
    ):
        app.invoke({"messages": [calls(("sto", {"x": 3}, "3"))]})
    with pytest.raises(KeyError, match="'foo'"):
        app.invoke({"messages": [calls(("fo", {"x": 3}, "3"))]})
    out = app.invoke({"messages": [calls(("fo", {}, "3"))], "foo": "x"})
    assert out["messages"][-1].content == (
        "Error invoking tool 'fo' with kwargs {} with error:\n x: Field required\n Please fix the error and try again."
    )


def test_wrap_tool_call_interceptor():
    """An interceptor sees the request, may change it and call execute (LangGraph's ToolCallRequest)."""
    seen = []

    def wrap(request, execute):
        seen.append((request.tool_call["name"], request.tool is not None))
        doubled = {**request.tool_call, "args": {k: v * 2 for k, v in request.tool_call["args"].items()}}
        return execute(request.override(tool_call=doubled))

    out = run_node(ToolNode([add], wrap_tool_call=wrap), {"messages": [calls(("add", {"a": 1, "b": 2}, "w"))]})
    assert out["messages"][-1].content == "6"
    assert seen == [("add", True)]


# --- M-5: tools_condition -----------------------------------------------------------------------


def test_tools_condition():
    """M-5 / O-15: "tools" when the last message has tool calls, else "__end__"."""
    assert tools_condition([calls(("add", {}, "1"))]) == "tools"
    assert tools_condition([HumanMessage("x")]) == "__end__"
    assert tools_condition({"messages": [AIMessage("x")]}) == "__end__"
    assert tools_condition({"messages": [calls(("add", {}, "1"))]}) == "tools"
    assert tools_condition({"other": [calls(("add", {}, "1"))]}, messages_key="other") == "tools"

    class Obj:
        messages = (calls(("add", {}, "1")),)

    assert tools_condition(Obj()) == "tools"


def test_tools_condition_without_messages():
    """M-5 / O-15: the empty-messages error text."""
    with pytest.raises(ValueError, match=re.escape("No messages found in input state to tool_edge: {'messages': []}")):
        tools_condition({"messages": []})
    with pytest.raises(ValueError, match=re.escape("No messages found in input state to tool_edge: {}")):
        tools_condition({})
    with pytest.raises(IndexError):
        tools_condition([])


def test_o15_tool_node_loop_with_tools_condition():
    """The conformance scenario's loop: agent → tools_condition → tools → agent."""

    def agent(s):
        if not any(m.type == "tool" for m in s["messages"]):
            return {"messages": [calls(("add", {"a": 2, "b": 3}, "call_1"))]}
        return {"messages": [AIMessage("results: " + ", ".join(m.content for m in s["messages"] if m.type == "tool"))]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([add]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    app = g.compile()
    assert [next(iter(c)) for c in app.stream({"messages": [("user", "go")]}, stream_mode="updates")] == [
        "agent",
        "tools",
        "agent",
    ]
    assert app.invoke({"messages": [("user", "go")]})["messages"][-1].content == "results: 5"


# --- M-6: create_react_agent ------------------------------------------------------------------


def make_agent(responses, tools, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecationWarning)
        model = (ScriptedModel if kw.pop("bind", True) else PlainModel)(responses)
        return model, create_react_agent(model, tools, **kw)


def summary(chunks):
    out = []
    for c in chunks:
        for node, v in c.items():
            if isinstance(v, dict) and "messages" in v:
                out.append(
                    (
                        node,
                        [
                            (type(m).__name__, m.content, m.name, m.tool_calls if m.type == "ai" else None)
                            for m in v["messages"]
                        ],
                    )
                )
            else:
                out.append((node, v))
    return out


def test_o15_create_react_agent_warning():
    """O-15: the deprecation warning (class and text)."""
    with pytest.warns(LangGraphDeprecatedSinceV10) as rec:
        create_react_agent(ScriptedModel([AIMessage("x")]), [add])
    # LangGraph's category and first words; lgembed does not send the user to langchain.agents
    # (tests/test_prebuilt_agent_models.py has the whole text)
    assert str(rec[0].message).startswith("create_react_agent has been moved to `langchain.agents`")


def test_o15_create_react_agent_graph_and_run():
    """O-15: nodes, channels, edges, and the three updates of one tool round (v2)."""
    tc = calls(("add", {"a": 2, "b": 3}, "t1"), id="ai1")
    model, agent = make_agent([tc, AIMessage("the answer is 5", id="ai2")], [add])
    assert sorted(agent.nodes) == ["__start__", "agent", "tools"]
    assert sorted(agent.channels) == [
        "__pregel_tasks",
        "__start__",
        "branch:to:agent",
        "branch:to:tools",
        "messages",
        "remaining_steps",
    ]
    assert sorted((e.source, e.target, e.conditional) for e in agent.get_graph().edges) == [
        ("__start__", "agent", False),
        ("agent", "__end__", True),
        ("agent", "tools", True),
        ("tools", "agent", False),
    ]
    assert [t.name for t in model.bound] == ["add"]
    assert summary(agent.stream({"messages": [("user", "hi")]}, stream_mode="updates")) == [
        (
            "agent",
            [("AIMessage", "", None, [{"name": "add", "args": {"a": 2, "b": 3}, "id": "t1", "type": "tool_call"}])],
        ),
        ("tools", [("ToolMessage", "5", "add", None)]),
        ("agent", [("AIMessage", "the answer is 5", None, [])]),
    ]


def test_v2_sends_each_call_v1_runs_them_together():
    """M-6: v2 → one tools task per call (two updates); v1 → one tools task."""
    tc = calls(("add", {"a": 2, "b": 3}, "t1"), ("add", {"a": 1, "b": 1}, "t2"))
    _, v2 = make_agent([tc, AIMessage("done")], [add])
    assert summary(v2.stream({"messages": [("user", "hi")]}, stream_mode="updates"))[1:3] == [
        ("tools", [("ToolMessage", "5", "add", None)]),
        ("tools", [("ToolMessage", "2", "add", None)]),
    ]
    model, v1 = make_agent([tc, AIMessage("done")], [add], version="v1", name="bob", prompt="SYS")
    assert summary(v1.stream({"messages": [("user", "hi")]}, stream_mode="updates")) == [
        (
            "agent",
            [
                (
                    "AIMessage",
                    "",
                    "bob",
                    [
                        {"name": "add", "args": {"a": 2, "b": 3}, "id": "t1", "type": "tool_call"},
                        {"name": "add", "args": {"a": 1, "b": 1}, "id": "t2", "type": "tool_call"},
                    ],
                )
            ],
        ),
        ("tools", [("ToolMessage", "5", "add", None), ("ToolMessage", "2", "add", None)]),
        ("agent", [("AIMessage", "done", "bob", [])]),
    ]
    assert model.seen == [
        [("system", "SYS"), ("human", "hi")],
        [("system", "SYS"), ("human", "hi"), ("ai", ""), ("tool", "5"), ("tool", "2")],
    ]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (2, [("HumanMessage", "hi"), ("AIMessage", "Sorry, need more steps to process this request.")]),
        (3, GraphRecursionError),
        (
            4,
            [
                ("HumanMessage", "hi"),
                ("AIMessage", "Sorry, need more steps to process this request."),
                ("ToolMessage", "5"),
            ],
        ),
        (5, [("HumanMessage", "hi"), ("AIMessage", ""), ("ToolMessage", "5")]),
    ],
)
def test_remaining_steps_guard(limit, expected):
    """M-6: fewer than 2 remaining steps with tool calls → "Sorry, need more steps…" with the
    response's id (here the model repeats one message, so the reply replaces it by id)."""
    _, agent = make_agent([calls(("add", {"a": 2, "b": 3}, "t1"), id="ai1")], [add])
    if expected is GraphRecursionError:
        with pytest.raises(GraphRecursionError):
            agent.invoke({"messages": [("user", "hi")]}, {"recursion_limit": limit})
        return
    out = agent.invoke({"messages": [("user", "hi")]}, {"recursion_limit": limit})
    assert [(type(m).__name__, m.content) for m in out["messages"]] == expected
    assert out["messages"][1].id == "ai1"


def test_return_direct_routes_tools_to_end():
    """M-6: a return_direct tool ends the run after the tools node (v2 and v1)."""

    @tool(return_direct=True)
    def final(x: str) -> str:
        """Final answer."""
        return "FINAL " + x

    _, agent = make_agent([calls(("final", {"x": "y"}, "f1")), AIMessage("never")], [add, final])
    assert sorted((e.source, e.target, e.conditional) for e in agent.get_graph().edges) == [
        ("__start__", "agent", False),
        ("agent", "__end__", True),
        ("agent", "tools", True),
        ("tools", "__end__", True),
        ("tools", "agent", True),
    ]
    assert [n for n, _ in summary(agent.stream({"messages": [("user", "hi")]}, stream_mode="updates"))] == [
        "agent",
        "tools",
    ]
    _, v1 = make_agent(
        [calls(("final", {"x": "y"}, "f1"), ("add", {"a": 1, "b": 2}, "f2")), AIMessage("never")],
        [add, final],
        version="v1",
    )
    assert summary(v1.stream({"messages": [("user", "hi")]}, stream_mode="updates"))[1:] == [
        ("tools", [("ToolMessage", "FINAL y", "final", None), ("ToolMessage", "3", "add", None)])
    ]


def test_without_tools_the_agent_is_one_node():
    model, agent = make_agent([AIMessage("hello")], [])
    assert sorted(agent.nodes) == ["__start__", "agent"]
    assert sorted((e.source, e.target, e.conditional) for e in agent.get_graph().edges) == [
        ("__start__", "agent", False),
        ("agent", "__end__", False),
    ]
    assert agent.invoke({"messages": [("user", "hi")]})["messages"][-1].content == "hello"
    assert model.bound is None


def test_prompt_forms():
    """M-6: a str / SystemMessage is put first; a callable builds the model input from the state."""
    for prompt, first in ((lambda s: [SystemMessage("S2")] + s["messages"], "S2"), (SystemMessage("S3"), "S3")):
        model, agent = make_agent([AIMessage("x")], [add], prompt=prompt)
        agent.invoke({"messages": [("user", "hi")]})
        assert model.seen[-1] == [("system", first), ("human", "hi")]


def test_invalid_chat_history():
    _, agent = make_agent([AIMessage("x")], [add])
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few "
            "of those tool calls: [{'name': 'add', 'args': {'a': 1, 'b': 2}, 'id': 'zz', 'type': 'tool_call'}].\n\n"
            "Every tool call (LLM requesting to call a tool) in the message history MUST have a corresponding "
            "ToolMessage (result of a tool invocation to return to the LLM) - this is required by most LLM "
            "providers.\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/"
            "INVALID_CHAT_HISTORY"
        ),
    ):
        agent.invoke({"messages": [("user", "hi"), calls(("add", {"a": 1, "b": 2}, "zz"))]})


def test_argument_errors():
    class Bad(TypedDict):
        messages: list

    with pytest.raises(ValueError, match=re.escape("Invalid version v3. Supported versions are 'v1' and 'v2'.")):
        make_agent([], [add], version="v3")
    with pytest.raises(ValueError, match=re.escape("Missing required key(s) {'remaining_steps'} in state_schema")):
        make_agent([], [add], state_schema=Bad)
    with pytest.raises(TypeError, match=re.escape("create_react_agent() got unexpected keyword arguments: {'foo': 1}")):
        make_agent([], [add], foo=1)


def test_pre_and_post_model_hooks():
    """M-6: hook nodes and routing; `llm_input_messages` is what the model sees."""

    def pre(s):
        return {"llm_input_messages": [HumanMessage("trimmed")]}

    def post(s):
        return {}

    model, agent = make_agent(
        [calls(("add", {"a": 2, "b": 3}, "t1")), AIMessage("done")], [add], pre_model_hook=pre, post_model_hook=post
    )
    assert sorted(agent.nodes) == ["__start__", "agent", "post_model_hook", "pre_model_hook", "tools"]
    assert sorted((e.source, e.target, e.conditional) for e in agent.get_graph().edges) == [
        ("__start__", "pre_model_hook", False),
        ("agent", "post_model_hook", False),
        ("post_model_hook", "__end__", True),
        ("post_model_hook", "pre_model_hook", True),
        ("post_model_hook", "tools", True),
        ("pre_model_hook", "agent", False),
        ("tools", "pre_model_hook", False),
    ]
    assert [n for n, _ in summary(agent.stream({"messages": [("user", "hi")]}, stream_mode="updates"))] == [
        "pre_model_hook",
        "agent",
        "post_model_hook",
        "tools",
        "pre_model_hook",
        "agent",
        "post_model_hook",
    ]
    assert model.seen[-1] == [("human", "trimmed")]


def test_tool_node_given_as_tools():
    _, agent = make_agent([AIMessage("x")], ToolNode([add], name="mytools"))
    assert sorted(agent.nodes) == ["__start__", "agent", "tools"]


class Out(TypedDict):
    answer: str


class StructuredModel(ScriptedModel):
    def with_structured_output(self, schema):
        outer = self

        class Structured:
            def invoke(self, messages):
                outer.seen.append([(m.type, m.content) for m in messages])
                return {"schema": schema.__name__, "n": len(messages), "first": messages[0].type}

        return Structured()


@pytest.mark.parametrize(("response_format", "n", "first"), [(Out, 4, "human"), (("SYSP", Out), 5, "system")])
def test_response_format(response_format, n, first):
    """M-6: a final `generate_structured_response` node fills `structured_response`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecationWarning)
        model = StructuredModel([calls(("add", {"a": 1, "b": 2}, "1")), AIMessage("done")])
        agent = create_react_agent(model, [add], response_format=response_format)
    assert sorted((e.source, e.target, e.conditional) for e in agent.get_graph().edges) == [
        ("__start__", "agent", False),
        ("agent", "generate_structured_response", True),
        ("agent", "tools", True),
        ("generate_structured_response", "__end__", False),
        ("tools", "agent", False),
    ]
    out = agent.invoke({"messages": [("user", "hi")]})
    assert out["structured_response"] == {"schema": "Out", "n": n, "first": first}


def test_lgembed_response_format_needs_with_structured_output():
    with pytest.raises(
        TypeError,
        match=re.escape(
            "Expected `model` to be a ChatModel or RunnableBinding (e.g. model.bind_tools(...)), got "
            f"{ScriptedModel}. lgembed: response_format needs a model with with_structured_output(schema)"
        ),
    ):
        make_agent([AIMessage("x")], [add], response_format=Out)


def test_lgembed_model_without_bind_tools_and_async_run():
    """A model with only `invoke` works; under ainvoke it runs in a worker thread."""
    _, agent = make_agent([calls(("add", {"a": 2, "b": 3}, "t1")), AIMessage("5!")], [add], bind=False)
    out = asyncio.run(agent.ainvoke({"messages": [("user", "hi")]}))
    assert [m.content for m in out["messages"]] == ["hi", "", "5", "5!"]


def test_lgembed_dynamic_model():
    """A callable without `invoke` is called with (state, runtime) to pick the model each step."""
    inner = ScriptedModel([AIMessage("picked")])
    picks = []

    def pick(state, runtime):
        picks.append(len(state["messages"]))
        return inner

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecationWarning)
        agent = create_react_agent(pick, [add])
    assert agent.invoke({"messages": [("user", "hi")]})["messages"][-1].content == "picked"
    assert picks == [1]


def test_agent_state_schema():
    """M-6: AgentState = messages (add_messages) + remaining_steps (RemainingSteps)."""
    import typing

    hints = typing.get_type_hints(AgentState, include_extras=True)
    assert set(hints) == {"messages", "remaining_steps"}


def test_lgembed_graph_import_does_not_load_prebuilt():
    """`import lgembed.graph` loads neither lgembed.tools nor lgembed.prebuilt; `import
    lgembed.prebuilt` loads no asyncio, thread pool, pydantic or langchain-core."""
    code = (
        "import sys; import lgembed.graph; "
        "a = sorted(m for m in sys.modules if m.startswith('lgembed.prebuilt') or m == 'lgembed.tools'); "
        "import lgembed.prebuilt; "
        "b = sorted(m for m in ('asyncio', 'concurrent.futures', 'pydantic', 'langchain_core') if m in sys.modules); "
        "print(a, b)"
    )
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] []"


def test_tool_messages_get_uuid_ids_in_state():
    out = run_node(ToolNode([add]), {"messages": [calls(("add", {"a": 1, "b": 2}, "c1"))]})
    assert uuid.UUID(out["messages"][-1].id).version == 4


def test_interrupt_inside_a_tool_is_never_handled():
    """M-4: GraphInterrupt (a GraphBubbleUp) always propagates, even with handle_tool_errors=True."""
    from lgembed.checkpoint.memory import InMemorySaver
    from lgembed.types import interrupt

    def ask(q: str) -> str:
        """Ask a human."""
        return "human said " + str(interrupt(q))

    cfg = {"configurable": {"thread_id": "t"}}
    g = StateGraph(MessagesState)
    g.add_node("tools", ToolNode([ask], handle_tool_errors=True))
    g.add_edge(START, "tools")
    app = g.compile(checkpointer=InMemorySaver())
    out = app.invoke({"messages": [calls(("ask", {"q": "ok?"}, "1"))]}, cfg)
    assert [i.value for i in out["__interrupt__"]] == ["ok?"]
    out = app.invoke(Command(resume="yes"), cfg)
    assert out["messages"][-1].content == "human said yes"


def test_agent_with_checkpointer_and_interrupt_before_tools():
    """M-6: checkpointer and interrupt_before are passed to compile (observed with LangGraph)."""
    from lgembed.checkpoint.memory import InMemorySaver

    cfg = {"configurable": {"thread_id": "t"}}
    _, agent = make_agent(
        [calls(("add", {"a": 1, "b": 2}, "1"), id="a1"), AIMessage("done", id="a2")],
        [add],
        checkpointer=InMemorySaver(),
        interrupt_before=["tools"],
    )
    assert [list(c) for c in agent.stream({"messages": [("user", "hi")]}, cfg, stream_mode="updates")] == [
        ["agent"],
        ["__interrupt__"],
    ]
    state = agent.get_state(cfg)
    assert state.next == ("tools",)
    assert [list(c) for c in agent.stream(None, cfg, stream_mode="updates")] == [["tools"], ["agent"]]
    assert [m.content for m in agent.get_state(cfg).values["messages"]] == ["hi", "", "3", "done"]


class ForeignTool:
    """Duck-typed stand-in for a langchain-core tool: `name`, `description`, `invoke(call, config)`."""

    name = "shout"
    description = "Upper-case some text."
    return_direct = False

    def __init__(self):
        self.configs = []

    def invoke(self, call, config=None):
        self.configs.append(config)
        return ToolMessage(call["args"]["text"].upper(), name=self.name, tool_call_id=call["id"])


def test_duck_typed_tools_get_the_full_tool_call():
    """M-3: an object with name/description/invoke is used as is, called with the tool call and config."""
    ft = ForeignTool()
    node = ToolNode([ft, add])
    assert node.tools_by_name["shout"] is ft
    out = run_node(node, {"messages": [calls(("shout", {"text": "hey"}, "s1"), ("add", {"a": 1, "b": 1}, "a1"))]})
    assert tool_msgs(out) == [("HEY", "s1", "shout", "success"), ("2", "a1", "add", "success")]
    [config] = ft.configs
    assert config["metadata"]["langgraph_node"] == "tools" and "run_name" not in config
