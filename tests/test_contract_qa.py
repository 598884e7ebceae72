"""Behaviours found by differential runs against LangGraph 1.2.22 (scenarios outside
the public conformance set), one test per behaviour, each naming its reference
statement. Every expected value below is what LangGraph 1.2.22 printed for the same
program (run with `langgraph` imports in a separate virtualenv).
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.config import get_store, get_stream_writer
from lgembed.graph import START, StateGraph
from lgembed.runtime import Runtime
from lgembed.store.memory import InMemoryStore
from lgembed.types import Command, StreamWriter, TimeoutPolicy, interrupt


class Out(TypedDict):
    out: list


class X(TypedDict):
    x: int


# --- T-5: nested graphs use the store of the graph that runs them ----------------------


def _store_probe(state: Out, runtime: Runtime) -> dict:
    return {"out": [runtime.store is not None, get_store() is not None]}


def test_subgraph_node_sees_parent_store():
    """T-5: a compiled subgraph used as a node reaches the parent's store."""
    sub = StateGraph(Out)
    sub.add_node("inner", _store_probe)
    sub.add_edge(START, "inner")
    parent = StateGraph(Out)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    assert parent.compile(store=InMemoryStore()).invoke({"out": []}) == {"out": [True, True]}


def test_graph_invoked_in_node_sees_parent_store():
    """T-5: a graph invoked inside a node function reaches the calling graph's store."""
    sub = StateGraph(Out)
    sub.add_node("inner", _store_probe)
    sub.add_edge(START, "inner")
    inner = sub.compile()
    parent = StateGraph(Out)
    parent.add_node("call", lambda s: inner.invoke(s))
    parent.add_edge(START, "call")
    assert parent.compile(store=InMemoryStore()).invoke({"out": []}) == {"out": [True, True]}


def test_subgraph_own_store_is_replaced_by_parents():
    """T-5: LangGraph takes the running graph's store, even None, over a subgraph's own."""
    sub = StateGraph(Out)
    sub.add_node("inner", _store_probe)
    sub.add_edge(START, "inner")
    parent = StateGraph(Out)
    parent.add_node("sub", sub.compile(store=InMemoryStore()))
    parent.add_edge(START, "sub")
    assert parent.compile().invoke({"out": []}) == {"out": [False, False]}


# --- S-8: custom chunks of nested graphs only with subgraphs=True ------------------------


def _leaf(state: X, writer: StreamWriter) -> dict:
    writer({"leaf": 1})
    get_stream_writer()({"leaf2": 2})
    return {"x": 1}


def _custom_parent(as_node: bool):
    sub = StateGraph(X)
    sub.add_node("leaf", _leaf)
    sub.add_edge(START, "leaf")
    compiled = sub.compile()
    parent = StateGraph(X)
    if as_node:
        parent.add_node("sub", compiled)
    else:
        parent.add_node("sub", lambda s: compiled.invoke(s))
    parent.add_edge(START, "sub")
    return parent.compile()


@pytest.mark.parametrize("as_node", [True, False])
def test_nested_custom_chunks_hidden_without_subgraphs(as_node):
    """S-8: without subgraphs=True a nested graph's custom writes reach no stream."""
    app = _custom_parent(as_node)
    assert list(app.stream({"x": 0}, stream_mode="custom")) == []
    assert list(app.stream({"x": 0}, stream_mode=["custom", "updates"])) == [("updates", {"sub": {"x": 1}})]


def test_nested_custom_chunks_shown_with_subgraphs():
    """S-8: with subgraphs=True they are streamed under the subgraph's namespace."""
    chunks = list(_custom_parent(True).stream({"x": 0}, stream_mode="custom", subgraphs=True))
    assert [(ns[0].split(":")[0], c) for ns, c in chunks] == [("sub", {"leaf": 1}), ("sub", {"leaf2": 2})]


# --- B-16: `writer: StreamWriter` is injected by annotation equality ---------------------


def test_writer_annotated_stream_writer_is_injected():
    """B-16: StreamWriter is Callable[[Any], None]; an annotation equal to it is injected."""
    builder = StateGraph(X)
    builder.add_node("n", _leaf)
    builder.add_edge(START, "n")
    assert list(builder.compile().stream({"x": 0}, stream_mode=["custom", "updates"])) == [
        ("custom", {"leaf": 1}),
        ("custom", {"leaf2": 2}),
        ("updates", {"n": {"x": 1}}),
    ]


# --- L-23: task and interrupt ids are new in every run, also without a checkpointer ------


def test_ids_differ_between_runs_without_checkpointer():
    """L-23 / I-2: LangGraph makes a fresh checkpoint id per run even without a saver, so
    task ids and interrupt ids of two identical runs differ."""
    builder = StateGraph(X)
    builder.add_node("a", lambda s: {"x": interrupt("q")})
    builder.add_edge(START, "a")
    app = builder.compile()
    first = [c["id"] for c in app.stream({"x": 0}, stream_mode="tasks")]
    second = [c["id"] for c in app.stream({"x": 0}, stream_mode="tasks")]
    assert first[0] != second[0]
    assert app.invoke({"x": 0})["__interrupt__"][0].id != app.invoke({"x": 0})["__interrupt__"][0].id


def test_task_ids_differ_between_steps_and_stay_stable_within_a_step():
    """L-23: the start and result events of one task carry one id; each step's ids are new."""

    class L(TypedDict):
        log: Annotated[list, operator.add]

    builder = StateGraph(L)
    builder.add_node("a", lambda s: {"log": ["a"]})
    builder.add_node("b", lambda s: {"log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    events = list(builder.compile().stream({"log": []}, stream_mode="tasks"))
    ids = [e["id"] for e in events]
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]


# --- G-5: get_subgraphs ------------------------------------------------------------------


def test_get_subgraphs_lists_nested_graphs_by_namespace():
    """G-5: get_subgraphs yields (name, graph) of subgraph nodes; recurse joins names with '|'."""
    leaf = StateGraph(X)
    leaf.add_node("l", lambda s: s)
    leaf.add_edge(START, "l")
    leaf_graph = leaf.compile()
    mid = StateGraph(X)
    mid.add_node("leaf", leaf_graph)
    mid.add_edge(START, "leaf")
    mid_graph = mid.compile()
    top = StateGraph(X)
    top.add_node("mid", mid_graph)
    top.add_node("plain", lambda s: s)
    top.add_edge(START, "mid")
    top.add_edge("mid", "plain")
    app = top.compile()
    assert list(app.get_subgraphs()) == [("mid", mid_graph)]
    assert list(app.get_subgraphs(recurse=True)) == [("mid", mid_graph), ("mid|leaf", leaf_graph)]
    assert list(app.get_subgraphs(namespace="mid|leaf", recurse=True)) == [("mid|leaf", leaf_graph)]
    assert list(app.get_subgraphs(namespace="mid")) == [("mid", mid_graph)]
    assert list(app.get_subgraphs(namespace="plain")) == []


# --- I-1: a resume value sent to a thread that never ran is not used ---------------------


def test_resume_on_a_fresh_thread_is_ignored():
    """I-1: Command(resume=...) on a new thread runs the graph from its input; the resume
    value belongs to no pending interrupt, so interrupt() pauses; the update is applied."""
    builder = StateGraph(X)
    builder.add_node("ask", lambda s: {"x": interrupt("q")})
    builder.add_edge(START, "ask")
    app = builder.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "fresh"}}
    out = app.invoke(Command(resume="r", update={"x": 5}), cfg)
    assert out["x"] == 5 and [i.value for i in out["__interrupt__"]] == ["q"]
    assert app.get_state(cfg).next == ("ask",)
    assert app.invoke(Command(resume=9), cfg) == {"x": 9}
    assert [(s.metadata["source"], s.metadata["step"]) for s in app.get_state_history(cfg)] == [
        ("loop", 1),
        ("loop", 0),
        ("input", -1),
    ]


# --- L-1: a checkpointer needs a thread_id ------------------------------------------------


def test_config_without_thread_id_fails_in_the_saver():
    """L-1: with only checkpoint_ns, the saver's lookup raises KeyError('thread_id')."""
    builder = StateGraph(X)
    builder.add_node("a", lambda s: {"x": 1})
    builder.add_edge(START, "a")
    app = builder.compile(checkpointer=InMemorySaver())
    with pytest.raises(KeyError, match="thread_id"):
        app.invoke({"x": 0}, {"configurable": {"checkpoint_ns": ""}})
    with pytest.raises(KeyError, match="configurable"):
        app.get_state({})


# --- B-17 / B-14: error texts of sync calls to async-only callables ----------------------


def test_sync_invoke_of_node_with_timeout_names_the_node():
    """B-17: the sync API refuses a node that has a timeout, even an async one."""

    async def fast(state):
        return {"x": 1}

    builder = StateGraph(X)
    builder.add_node("fast", fast, timeout=5)
    builder.add_edge(START, "fast")
    with pytest.raises(ValueError) as info:
        builder.compile().invoke({"x": 0})
    assert str(info.value) == (
        "Node timeouts are only supported for async nodes because sync Python execution "
        "cannot be safely cancelled in-process. Node 'fast' is sync."
    )


def test_timeout_policy_repr():
    """B-17: TimeoutPolicy has LangGraph's fields, refresh_on defaulting to 'auto'."""
    assert repr(TimeoutPolicy(run_timeout=1.5)) == "TimeoutPolicy(run_timeout=1.5, idle_timeout=None, refresh_on='auto')"


def test_async_router_under_sync_invoke_names_the_router():
    """B-14: the TypeError names the router function."""

    async def aroute(state):
        return "p"

    builder = StateGraph(X)
    builder.add_node("p", lambda s: {})
    builder.add_conditional_edges(START, aroute)
    with pytest.raises(TypeError) as info:
        builder.compile().invoke({"x": 0})
    assert str(info.value) == (
        'No synchronous function provided to "aroute".\nEither initialize with a synchronous '
        "function or invoke via the async API (ainvoke, astream, etc.)"
    )


# --- I-11 / G-4: a static breakpoint inside a subgraph pauses the parent ----------------


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _breakpoint_parent(kind: str):
    sub = StateGraph(Log)
    sub.add_node("x", lambda s: {"log": ["x"]})
    sub.add_node("y", lambda s: {"log": ["y"]})
    sub.add_edge(START, "x")
    sub.add_edge("x", "y")
    compiled = sub.compile(interrupt_before=["y"]) if kind == "before" else sub.compile(interrupt_after=["x"])
    parent = StateGraph(Log)
    parent.add_node("sub", compiled)
    parent.add_node("after", lambda s: {"log": ["after"]})
    parent.add_node("side", lambda s: {"log": ["side"]})
    parent.add_edge(START, "sub")
    parent.add_edge(START, "side")
    parent.add_edge("sub", "after")
    return parent.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("kind", ["before", "after"])
def test_subgraph_static_breakpoint_pauses_the_parent_task(kind):
    """I-11: the subgraph stops at its breakpoint; its parent task counts as interrupted
    (no interrupt values), so the parent stops with that task pending and resumes it."""
    app = _breakpoint_parent(kind)
    cfg = {"configurable": {"thread_id": "1"}}
    assert app.invoke({"log": []}, cfg) == {"log": ["side"]}
    state = app.get_state(cfg)
    assert state.next == ("sub",) and state.values == {"log": ["side"]}
    assert [(t.name, t.interrupts) for t in state.tasks] == [("sub", ()), ("side", ())]
    assert app.invoke(None, cfg) == {"log": ["side", "x", "y", "after"]}


def test_subgraph_static_breakpoint_chunk_only_at_the_root():
    """I-11 / S-4: the breakpoint's `__interrupt__` update is streamed once, at the root."""
    app = _breakpoint_parent("before")
    cfg = {"configurable": {"thread_id": "2"}}
    chunks = list(app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=True))
    interrupts = [ns for ns, chunk in chunks if "__interrupt__" in chunk]
    assert interrupts == [()]
    assert chunks[-1] == ((), {"__interrupt__": ()})
    resumed = list(app.stream(None, cfg, stream_mode="updates"))
    assert resumed == [
        {"side": {"log": ["side"]}, "__metadata__": {"cached": True}},
        {"sub": {"log": ["x", "y"]}},
        {"after": {"log": ["after"]}},
    ]


# --- S-5 / L-23: task events and execution info ------------------------------------------


def test_resumed_step_streams_start_events_of_cached_siblings():
    """S-5: on resume, a sibling whose saved writes are reused gets a `tasks` start event
    (but no result event); the re-run task gets both."""
    builder = StateGraph(Log)
    builder.add_node("ask", lambda s: {"log": [interrupt("q")]})
    builder.add_node("other", lambda s: {"log": ["other"]})
    builder.add_edge(START, "ask")
    builder.add_edge(START, "other")
    app = builder.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"log": []}, cfg)
    events = list(app.stream(Command(resume="A"), cfg, stream_mode="tasks"))
    starts = sorted(e["name"] for e in events if "input" in e)
    results = sorted(e["name"] for e in events if "result" in e)
    assert starts == ["ask", "other"]
    assert results == ["ask"]


def test_execution_info_counts_attempts():
    """L-24: runtime.execution_info.node_attempt is 1, then 2 on the first retry;
    node_first_attempt_time is the float time of the first attempt."""
    from lgembed.types import RetryPolicy

    seen = []

    def flaky(state, runtime: Runtime):
        info = runtime.execution_info
        seen.append((info.node_attempt, type(info.node_first_attempt_time).__name__))
        if len(seen) == 1:
            raise ValueError("once")
        return {"x": 1}

    builder = StateGraph(X)
    builder.add_node("flaky", flaky, retry_policy=RetryPolicy(initial_interval=0.0, jitter=False, retry_on=ValueError))
    builder.add_edge(START, "flaky")
    assert builder.compile().invoke({"x": 0}) == {"x": 1}
    assert seen == [(1, "float"), (2, "float")]


def test_engine_keys_in_node_configurable_are_pregel_prefixed():
    """L-24: a node's configurable holds thread/checkpoint keys and `__pregel_*` engine keys only."""
    from lgembed.config import get_config

    keys = []
    builder = StateGraph(X)
    builder.add_node("a", lambda s: keys.append(sorted(get_config()["configurable"])) or {"x": 1})
    builder.add_edge(START, "a")
    builder.compile(checkpointer=InMemorySaver()).invoke({"x": 0}, {"configurable": {"thread_id": "t"}})
    assert [k for k in keys[0] if not k.startswith("__pregel_")] == [
        "checkpoint_id",
        "checkpoint_map",
        "checkpoint_ns",
        "thread_id",
    ]


def test_get_subgraphs_skips_checkpointer_false_graphs():
    """G-5: a graph compiled with checkpointer=False is not listed as a subgraph."""
    leaf = StateGraph(X)
    leaf.add_node("l", lambda s: s)
    leaf.add_edge(START, "l")
    top = StateGraph(X)
    top.add_node("off", leaf.compile(checkpointer=False))
    top.add_edge(START, "off")
    assert list(top.compile().get_subgraphs()) == []


def test_get_subgraphs_finds_graphs_called_in_node_functions():
    """G-5: a graph a node function calls counts as that node's subgraph; a namespace
    matches a whole first segment only."""
    leaf = StateGraph(X)
    leaf.add_node("l", lambda s: s)
    leaf.add_edge(START, "l")
    inner = leaf.compile()

    def call(state):
        return inner.invoke(state)

    top = StateGraph(X)
    top.add_node("call", call)
    top.add_node("callx", lambda s: s)
    top.add_edge(START, "call")
    top.add_edge("call", "callx")
    app = top.compile()
    assert list(app.get_subgraphs()) == [("call", inner)]
    assert list(app.get_subgraphs(namespace="callx")) == []


# --- L-32: a failed task keeps the writes it made before failing ---------------------


def _router_failure_app():
    fail = [True]

    def router(state):
        if fail[0]:
            raise KeyError("router broke")
        return "b"

    builder = StateGraph(Log)
    builder.add_node("a", lambda s: {"log": ["a"]})
    builder.add_node("b", lambda s: {"log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", router)
    return builder.compile(checkpointer=InMemorySaver()), fail


def test_router_failure_keeps_the_node_writes():
    """L-32: the node's writes, made before its router raised, are streamed, saved with
    the error, shown as the task's result, and reused on resume (the task is not re-run)."""
    app, fail = _router_failure_app()
    cfg = {"configurable": {"thread_id": "1"}}
    chunks = []
    with pytest.raises(KeyError, match="router broke"):
        for chunk in app.stream({"log": []}, cfg):
            chunks.append(chunk)
    assert chunks == [{"a": {"log": ["a"]}}]
    state = app.get_state(cfg)
    assert state.next == () and state.values == {"log": ["a"]}
    assert [(t.name, t.error, t.result) for t in state.tasks] == [
        ("a", "KeyError('router broke')", {"log": ["a"]})
    ]
    fail[0] = False
    assert list(app.stream(None, cfg)) == [{"a": {"log": ["a"]}, "__metadata__": {"cached": True}}]


def test_router_failure_task_result_event():
    """L-32 / S-5: the failed task's result event carries its writes and the error."""
    app, _ = _router_failure_app()
    events = []
    with pytest.raises(KeyError):
        for chunk in app.stream({"log": []}, {"configurable": {"thread_id": "2"}}, stream_mode="tasks"):
            events.append(chunk)
    result = [e for e in events if "result" in e]
    assert [(e["name"], repr(e["error"]), e["result"]) for e in result] == [
        ("a", "KeyError('router broke')", {"log": ["a"]})
    ]


# --- L-24: what a node sees of its config -------------------------------------------------


def _config_probe_app(checkpointer=None):
    from lgembed.config import get_config

    seen = []

    def node(state):
        config = get_config()
        seen.append(
            (
                sorted(k for k in config if k != "callbacks"),
                config.get("recursion_limit"),
                config.get("tags"),
                {k: v for k, v in config["metadata"].items() if not k.startswith("langgraph_")},
            )
        )
        return {"x": 1}

    builder = StateGraph(X)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    return builder.compile(checkpointer=checkpointer), seen


def test_node_config_holds_only_given_keys():
    """L-24: without them given, a node's config has no recursion_limit, tags or run_name."""
    app, seen = _config_probe_app()
    app.invoke({"x": 0})
    assert seen[-1] == (["configurable", "metadata"], None, None, {})


def test_node_config_keeps_given_keys_and_thread_id_metadata():
    """L-24: given recursion_limit/tags are kept, run_name is not; thread_id (not other
    configurable values) is copied into metadata; the task event shows user metadata and tags."""
    app, seen = _config_probe_app(InMemorySaver())
    cfg = {
        "recursion_limit": 50,
        "tags": ["t1"],
        "metadata": {"m": 1},
        "run_name": "rn",
        "configurable": {"thread_id": "t2", "extra": 5},
    }
    events = [e for e in app.stream({"x": 0}, cfg, stream_mode="tasks") if "input" in e]
    assert seen[-1] == (
        ["configurable", "metadata", "recursion_limit", "tags"],
        50,
        ["t1"],
        {"m": 1, "thread_id": "t2"},
    )
    assert events[0]["metadata"] == {"m": 1, "tags": ["t1"]}


# --- S-9: stream_mode="messages" for messages nodes return ------------------------------


def _messages_app():
    from lgembed.graph import MessagesState
    from lgembed.graph.message import add_messages

    def bot(state):
        return {"messages": add_messages([], [{"role": "assistant", "content": "hello", "id": "m1"}])}

    def echo(state):
        # the whole list comes back: only the new message is streamed
        new = add_messages([], [{"role": "assistant", "content": "fin", "id": "m2"}])
        return Command(update={"messages": state["messages"] + new})

    def plain(state):
        return {"messages": [{"role": "assistant", "content": "a dict is not streamed", "id": "m3"}]}

    builder = StateGraph(MessagesState)
    builder.add_node("bot", bot)
    builder.add_node("echo", echo)
    builder.add_node("plain", plain)
    builder.add_edge(START, "bot")
    builder.add_edge("bot", "echo")
    builder.add_edge("echo", "plain")
    return builder.compile()


def _msg(chunk):
    message, metadata = chunk
    return (message.type, message.content, message.id, metadata["langgraph_node"], metadata["langgraph_step"])


def test_messages_mode_streams_new_message_objects_nodes_return():
    """S-9: message objects a node returns that were not in its input, with the task's
    metadata; dict messages and messages already in the input are not streamed."""
    app = _messages_app()
    chunks = list(app.stream({"messages": [("user", "hi")]}, stream_mode="messages"))
    assert [_msg(c) for c in chunks] == [("ai", "hello", "m1", "bot", 1), ("ai", "fin", "m2", "echo", 2)]
    metadata = chunks[0][1]
    assert metadata["ls_integration"] == "langgraph"
    assert metadata["langgraph_triggers"] == ("branch:to:bot",)
    modes = [mode for mode, _ in app.stream({"messages": [("user", "hi")]}, stream_mode=["messages", "updates"])]
    assert modes == ["messages", "updates", "messages", "updates", "updates"]


def test_messages_mode_with_subgraphs():
    """S-9: a subgraph's messages stream under its namespace with subgraphs=True, and
    without it as the output of the parent's subgraph node, once each; the subgraph's
    output holds the dict message its state coerced, which the parent node streams."""
    from lgembed.graph import MessagesState

    parent = StateGraph(MessagesState)
    parent.add_node("sub", _messages_app())
    parent.add_edge(START, "sub")
    app = parent.compile()
    nested = list(app.stream({"messages": [("user", "hi")]}, stream_mode="messages", subgraphs=True))
    assert [(ns[0].split(":")[0] if ns else "", _msg(c)[:4]) for ns, c in nested] == [
        ("sub", ("ai", "hello", "m1", "bot")),
        ("sub", ("ai", "fin", "m2", "echo")),
        ("", ("ai", "a dict is not streamed", "m3", "sub")),
    ]
    flat = list(app.stream({"messages": [("user", "hi")]}, stream_mode="messages"))
    assert [_msg(c)[:4] for c in flat] == [
        ("ai", "hello", "m1", "sub"),
        ("ai", "fin", "m2", "sub"),
        ("ai", "a dict is not streamed", "m3", "sub"),
    ]


# --- S-2 / V-2: v2 values chunks and invoke(subgraphs=True) -------------------------------


def test_v2_values_chunks_use_the_output_schema():
    """S-2: v2 `values` parts are built with a pydantic/dataclass output schema (not the
    state schema); a TypedDict output schema leaves them dicts."""
    from pydantic import BaseModel

    class S(TypedDict):
        n: int
        note: str

    class PO(BaseModel):
        note: str = ""

    for output, want in ((PO, [PO(note=""), PO(note="x")]), (None, [{"n": 1, "note": ""}, {"n": 2, "note": "x"}])):
        builder = StateGraph(S, output_schema=output) if output else StateGraph(S)
        builder.add_node("a", lambda s: {"n": s["n"] + 1, "note": "x"})
        builder.add_edge(START, "a")
        app = builder.compile()
        assert [c["data"] for c in app.stream({"n": 1, "note": ""}, stream_mode="values", version="v2")] == want


def _interrupting_parent():
    class Sub(TypedDict):
        log: Annotated[list, operator.add]
        inner: str

    sub = StateGraph(Sub)
    sub.add_node("s0", lambda s: {"inner": "I", "log": ["s0"]})
    sub.add_node("s1", lambda s: {"log": [interrupt("sub-q")]})
    sub.add_edge(START, "s0")
    sub.add_edge("s0", "s1")
    parent = StateGraph(Log)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    return parent.compile(checkpointer=InMemorySaver())


def test_invoke_passes_subgraphs_to_stream():
    """V-2: invoke(subgraphs=True) streams every namespace: interrupts are collected from
    the subgraph's updates and the parent's (twice here), other modes return namespaced chunks."""
    app = _interrupting_parent()
    out = app.invoke({"log": []}, {"configurable": {"thread_id": "1"}}, subgraphs=True)
    assert out["log"] == [] and [i.value for i in out["__interrupt__"]] == ["sub-q", "sub-q"]
    chunks = app.invoke({"log": []}, {"configurable": {"thread_id": "2"}}, stream_mode="updates", subgraphs=True)
    assert [(ns[0].split(":")[0] if ns else "", list(c)) for ns, c in chunks] == [
        ("sub", ["s0"]),
        ("sub", ["__interrupt__"]),
        ("", ["__interrupt__"]),
    ]
    plain = app.invoke({"log": []}, {"configurable": {"thread_id": "3"}})
    assert [i.value for i in plain["__interrupt__"]] == ["sub-q"]


def test_default_error_handler_joins_the_builder():
    """B-18: compile() adds `__default_error_handler__` to the builder's nodes, so compiling
    the same builder again raises."""
    builder = StateGraph(X).set_node_defaults(error_handler=lambda state: {"x": -1})
    builder.add_node("a", lambda s: {"x": 1})
    builder.add_edge(START, "a")
    builder.compile()
    assert "__default_error_handler__" in builder.nodes
    with pytest.raises(ValueError) as info:
        builder.compile()
    assert str(info.value) == "Auto-generated default error handler node `__default_error_handler__` already exists."


def test_batch_as_completed_yields_index_and_output():
    """V-5: batch_as_completed / abatch_as_completed yield (index, output) per input,
    exceptions included with return_exceptions=True."""
    import asyncio

    def node(state):
        if state["x"] < 0:
            raise ValueError("negative")
        return {"x": state["x"] * 10}

    builder = StateGraph(X)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    app = builder.compile()
    got = sorted(app.batch_as_completed([{"x": 1}, {"x": 2}, {"x": -1}], return_exceptions=True), key=lambda r: r[0])
    assert [(i, out if isinstance(out, dict) else repr(out)) for i, out in got] == [
        (0, {"x": 10}),
        (1, {"x": 20}),
        (2, "ValueError('negative')"),
    ]
    with pytest.raises(ValueError, match="negative"):
        list(app.batch_as_completed([{"x": -1}, {"x": 1}]))

    async def collect():
        return [r async for r in app.abatch_as_completed([{"x": 3}, {"x": 4}])]

    assert sorted(asyncio.run(collect())) == [(0, {"x": 30}), (1, {"x": 40})]


def test_checkpoint_events_name_the_state_of_subgraph_tasks():
    """S-6 / G-5: a checkpoint event's task has a `state` config when the task runs a
    subgraph node or a node whose function calls a graph; not for checkpointer=False
    subgraphs or plain nodes."""

    class Parts(TypedDict):
        x: Annotated[list, operator.add]

    sub = StateGraph(Parts)
    sub.add_node("i", lambda s: {"x": [1]})
    sub.add_edge(START, "i")
    inner = sub.compile()
    off = sub.compile(checkpointer=False)

    def call(state):
        inner.invoke({"x": []})
        return {"x": [2]}

    builder = StateGraph(Parts)
    builder.add_node("call", call)
    builder.add_node("sub", inner)
    builder.add_node("off", off)
    builder.add_node("plain", lambda s: {"x": [3]})
    for name in ("call", "sub", "off", "plain"):
        builder.add_edge(START, name)
    app = builder.compile(checkpointer=InMemorySaver())
    events = list(app.stream({"x": []}, {"configurable": {"thread_id": "1"}}, stream_mode="checkpoints"))
    assert sorted((t["name"], t["state"] is not None) for t in events[1]["tasks"]) == [
        ("call", True),
        ("off", False),
        ("plain", False),
        ("sub", True),
    ]


def test_async_tasks_ending_together_are_committed_in_the_order_they_ended():
    """L-31: async tasks of one step that end in the same event-loop turn are committed,
    and streamed, in the order they ended: for tasks that never wait, the task order;
    a resumed task that returns comes before its sibling that interrupts again."""
    import asyncio

    class Log(TypedDict):
        log: Annotated[list, operator.add]

    def node(name: str):
        async def run(state: Log) -> dict:
            return {"log": [name]}

        return run

    names = [f"n{i}" for i in range(8)]
    g = StateGraph(Log)
    for name in names:
        g.add_node(name, node(name))
        g.add_edge(START, name)
    app = g.compile()

    async def updates() -> list:
        return [next(iter(c)) async for c in app.astream({"log": []}, stream_mode="updates")]

    for _ in range(20):
        assert asyncio.run(updates()) == names

    async def ask1(state: Log) -> dict:
        return {"log": ["1:" + str(interrupt("one"))]}

    async def ask2(state: Log) -> dict:
        return {"log": ["2:" + str(interrupt("two"))]}

    h = StateGraph(Log)
    h.add_node("ask1", ask1)
    h.add_node("ask2", ask2)
    h.add_edge(START, "ask1")
    h.add_edge(START, "ask2")
    hitl = h.compile(checkpointer=InMemorySaver())

    async def partial_resume(thread: str) -> list:
        cfg = {"configurable": {"thread_id": thread}}
        await hitl.ainvoke({"log": []}, cfg)
        ids = {i.value: i.id for i in (await hitl.aget_state(cfg)).interrupts}
        resume = Command(resume={ids["one"]: "A"})
        return [next(iter(c)) async for c in hitl.astream(resume, cfg, stream_mode="updates")]

    for i in range(10):
        assert asyncio.run(partial_resume(str(i))) == ["ask1", "__interrupt__"]


def test_updates_chunk_of_a_key_written_twice():
    """S-4: a task that writes a key twice streams its update as a list of one-key dicts
    (in write order); with a single output key, as the list of its values."""
    from lgembed.types import Command as Cmd

    class S(TypedDict):
        a: Annotated[list, operator.add]
        b: int

    def twice(state: S) -> list:
        return [Cmd(update={"a": [1]}), Cmd(update={"a": [2], "b": 3})]

    def once(state: S) -> dict:
        return {"a": [9], "b": 1}

    g = StateGraph(S)
    g.add_node("n", twice)
    g.add_node("m", once)
    g.add_edge(START, "n")
    g.add_edge("n", "m")
    app = g.compile()
    assert list(app.stream({"a": [], "b": 0}, stream_mode="updates")) == [
        {"n": [{"a": [1]}, {"a": [2]}, {"b": 3}]},
        {"m": {"a": [9], "b": 1}},
    ]
    assert list(app.stream({"a": [], "b": 0}, stream_mode="updates", output_keys="a")) == [
        {"n": [[1], [2]]},
        {"m": [9]},
    ]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_retries_are_logged_in_sync_and_async_runs(mode, caplog):
    """E-5: before each retry the engine logs "Retrying task <name> after <s> seconds
    (attempt <n>) after <error class> <error>" at INFO, with the error attached, in
    sync and async runs alike (LangGraph's run_with_retry and arun_with_retry)."""
    import asyncio
    import logging

    from lgembed.types import RetryPolicy

    class S(TypedDict):
        n: int

    calls = []

    def flaky(state: S) -> dict:
        calls.append(1)
        if len(calls) < 3:
            raise ValueError(f"boom {len(calls)}")
        return {"n": 1}

    async def aflaky(state: S) -> dict:
        return flaky(state)

    g = StateGraph(S)
    g.add_node("flaky", flaky if mode == "sync" else aflaky, retry_policy=RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ValueError))
    g.add_edge(START, "flaky")
    app = g.compile()
    with caplog.at_level(logging.INFO):
        out = app.invoke({"n": 0}) if mode == "sync" else asyncio.run(app.ainvoke({"n": 0}))
    assert out == {"n": 1}
    lines = [r for r in caplog.records if r.getMessage().startswith("Retrying task")]
    assert [r.getMessage() for r in lines] == [
        "Retrying task flaky after 0.00 seconds (attempt 1) after ValueError boom 1",
        "Retrying task flaky after 0.00 seconds (attempt 2) after ValueError boom 2",
    ]
    assert all(r.levelno == logging.INFO and r.exc_info and r.exc_info[0] is ValueError for r in lines)
