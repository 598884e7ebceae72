"""Subgraphs (docs/BEHAVIOUR.md §10, G-1 … G-6, observed output O-9).

A compiled graph used as a node or invoked inside a node function: how its input and
output meet the parent state (shared reducer keys are reduced twice), the checkpoint
namespaces its checkpoints are saved under (`"{node}:{task_id}"`, nested with `|`,
`|1` for a second call from the same task), `stream(subgraphs=True)` namespaces,
interrupts raised inside a subgraph and resumed without re-running the subgraph's
finished nodes, `Command.PARENT`, `get_state(subgraphs=True)` and state methods
addressed at a subgraph namespace, and the `checkpointer=True` / `False` modes.

Ids are never pinned: a namespace is checked as `"sub:" + <the parent task's id>`,
and ids are compared only for equality.

Every expectation was checked against LangGraph 1.2.22 by running this file with
`lgembed` aliased to `langgraph`.
"""

from __future__ import annotations

import asyncio
import operator
import re
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.errors import ParentCommand
from lgembed.graph import START, StateGraph
from lgembed.types import Command, Interrupt, StateSnapshot, interrupt

# --- helpers -------------------------------------------------------------------


class Parent(TypedDict, total=False):
    log: Annotated[list, operator.add]
    foo: str


class Sub(TypedDict, total=False):
    log: Annotated[list, operator.add]
    bar: str
    n: Annotated[int, operator.add]


def cfg(thread="1", **configurable):
    return {"configurable": {"thread_id": thread, **configurable}}


def namespaces(saver):
    return sorted({t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)})


def build_sub(calls, ask=True, checkpointer=None):
    """O-9 subgraph: s1 -> {"log": ["s1"], "bar": "B"}; s2 asks "sub?" (or appends s2)."""

    def s1(state):
        calls.append(("s1", sorted(state)))
        return {"log": ["s1"], "bar": "B", "n": 1}

    def s2(state):
        calls.append("s2")
        if ask:
            return {"log": ["s2:" + interrupt("sub?")]}
        return {"log": [f"s2:n={state['n']}"]}

    builder = StateGraph(Sub)
    builder.add_node("s1", s1)
    builder.add_node("s2", s2)
    builder.add_edge(START, "s1")
    builder.add_edge("s1", "s2")
    return builder.compile(checkpointer=checkpointer)


def build_parent(calls, ask=True, sub_checkpointer=None):
    """O-9 parent: p1 -> {"log": ["p1"], "foo": "F"}, then the compiled subgraph as node."""

    def p1(state):
        calls.append("p1")
        return {"log": ["p1"], "foo": "F"}

    builder = StateGraph(Parent)
    builder.add_node("p1", p1)
    builder.add_node("sub", build_sub(calls, ask, sub_checkpointer))
    builder.add_edge(START, "p1")
    builder.add_edge("p1", "sub")
    return builder.compile(checkpointer=InMemorySaver())


def sub_ns(graph, config):
    """`"sub:<task id>"` of the parent's pending sub task."""
    [task] = graph.get_state(config).tasks
    assert task.name == "sub"
    return f"sub:{task.id}"


# --- G-1: compiled graph as a node --------------------------------------------------------


def test_compiled_graph_as_node_reduces_shared_key_twice():
    """G-1, O-9: the subgraph gets the parent state through its input schema (foo is
    dropped), returns its output channels, and the parent applies its reducer again to
    the shared log (p1 appears twice); keys unknown to the parent (bar) are dropped."""
    calls = []
    graph = build_parent(calls, ask=False)
    assert graph.invoke({"log": []}, cfg()) == {"log": ["p1", "p1", "s1", "s2:n=1"], "foo": "F"}
    assert calls == ["p1", ("s1", ["log", "n"]), "s2"]


def test_compiled_graph_as_node_without_checkpointer():
    """G-1: the same graph runs without any checkpointer."""
    calls = []
    builder = StateGraph(Parent)
    builder.add_node("p1", lambda s: {"log": ["p1"], "foo": "F"})
    builder.add_node("sub", build_sub(calls, ask=False))
    builder.add_edge(START, "p1")
    builder.add_edge("p1", "sub")
    assert builder.compile().invoke({"log": []}) == {"log": ["p1", "p1", "s1", "s2:n=1"], "foo": "F"}


def test_subgraph_update_chunk_is_its_full_output():
    """G-1, O-9: the parent's updates chunk for the subgraph node is the subgraph's whole
    output (its own log, parent's p1 included), not a delta."""
    graph = build_parent([], ask=False)
    assert list(graph.stream({"log": []}, cfg())) == [
        {"p1": {"log": ["p1"], "foo": "F"}},
        {"sub": {"log": ["p1", "s1", "s2:n=1"]}},
    ]


# --- G-2 / G-4: interrupts inside a subgraph -------------------------------------------


def test_stream_subgraphs_shows_namespaces_and_interrupt_at_both_levels():
    """G-2, G-4, O-9: stream(subgraphs=True) yields (namespace, chunk); the subgraph's
    namespace is "sub:<parent task id>"; the interrupt shows at both levels, same id."""
    graph = build_parent([])
    chunks = list(graph.stream({"log": []}, cfg(), subgraphs=True))
    ns = sub_ns(graph, cfg())
    intr = graph.get_state(cfg()).interrupts[0]
    assert chunks == [
        ((), {"p1": {"log": ["p1"], "foo": "F"}}),
        ((ns,), {"s1": {"log": ["s1"], "bar": "B", "n": 1}}),
        ((ns,), {"__interrupt__": (intr,)}),
        ((), {"__interrupt__": (intr,)}),
    ]
    assert intr.value == "sub?"


def test_parent_state_after_subgraph_interrupt():
    """G-4, P-21, O-9: the parent's next is the subgraph node; its task carries the
    subgraph's interrupt and, as state, the config of the child namespace."""
    graph = build_parent([])
    out = graph.invoke({"log": []}, cfg())
    [intr] = out["__interrupt__"]
    assert out["log"] == ["p1"] and out["foo"] == "F"
    state = graph.get_state(cfg())
    assert state.next == ("sub",)
    assert state.interrupts == (intr,)
    [task] = state.tasks
    assert (task.name, task.path, task.error, task.interrupts, task.result) == (
        "sub",
        ("__pregel_pull", "sub"),
        None,
        (intr,),
        None,
    )
    assert task.state == {"configurable": {"thread_id": "1", "checkpoint_ns": f"sub:{task.id}"}}


def test_get_state_with_subgraphs_fills_child_snapshot():
    """G-6, P-23, O-9: get_state(subgraphs=True) puts the child's snapshot in the task; its
    config carries checkpoint_map {"": parent id, ns: own id}; metadata.parents names the
    parent checkpoint."""
    graph = build_parent([])
    graph.invoke({"log": []}, cfg())
    parent = graph.get_state(cfg())
    ns = sub_ns(graph, cfg())
    full = graph.get_state(cfg(), subgraphs=True)
    child = full.tasks[0].state
    assert isinstance(child, StateSnapshot)
    parent_id = parent.config["configurable"]["checkpoint_id"]
    child_id = child.config["configurable"]["checkpoint_id"]
    assert child.values == {"log": ["p1", "s1"], "bar": "B", "n": 1}
    assert child.next == ("s2",)
    assert child.config == {
        "configurable": {
            "thread_id": "1",
            "checkpoint_ns": ns,
            "checkpoint_id": child_id,
            "checkpoint_map": {"": parent_id, ns: child_id},
        }
    }
    assert child.metadata == {"source": "loop", "step": 1, "parents": {"": parent_id}}
    assert child.interrupts == parent.interrupts
    assert [t.name for t in child.tasks] == ["s2"]
    assert child.tasks[0].interrupts == parent.interrupts


def test_namespaced_get_state_reads_the_child():
    """G-6: a config with the child's checkpoint_ns reads the child directly."""
    graph = build_parent([])
    graph.invoke({"log": []}, cfg())
    ns = sub_ns(graph, cfg())
    child = graph.get_state(cfg(checkpoint_ns=ns))
    assert child == graph.get_state(cfg(), subgraphs=True).tasks[0].state
    history = list(graph.get_state_history(cfg(checkpoint_ns=ns)))
    parent_id = graph.get_state(cfg()).config["configurable"]["checkpoint_id"]
    assert [(s.metadata, s.next) for s in history] == [
        ({"source": "loop", "step": 1, "parents": {"": parent_id}}, ("s2",)),
        ({"source": "loop", "step": 0, "parents": {"": parent_id}}, ("s1",)),
        ({"source": "input", "step": -1, "parents": {"": parent_id}}, ("__start__",)),
    ]


def test_resume_does_not_rerun_finished_subgraph_nodes():
    """G-4, O-9: resuming re-runs the parent's sub task; the subgraph reloads its own
    checkpoint, so only s2 runs; the shared key is reduced twice in the parent."""
    calls = []
    graph = build_parent(calls)
    graph.invoke({"log": []}, cfg())
    ns = sub_ns(graph, cfg())
    calls.clear()
    chunks = list(graph.stream(Command(resume="OK"), cfg(), stream_mode=["updates", "values"], subgraphs=True))
    assert chunks == [
        ((), "values", {"log": ["p1"], "foo": "F"}),
        ((ns,), "values", {"log": ["p1", "s1"], "bar": "B", "n": 1}),
        ((ns,), "updates", {"s2": {"log": ["s2:OK"]}}),
        ((ns,), "values", {"log": ["p1", "s1", "s2:OK"], "bar": "B", "n": 1}),
        ((), "updates", {"sub": {"log": ["p1", "s1", "s2:OK"]}}),
        ((), "values", {"log": ["p1", "p1", "s1", "s2:OK"], "foo": "F"}),
    ]
    assert calls == ["s2"]
    assert graph.get_state(cfg()).next == ()


def test_subgraph_checkpoints_are_saved_under_its_namespace():
    """G-2, O-9: the child's checkpoints live in the same thread under "sub:<task id>",
    numbered from -1, with parents {"": <parent checkpoint the task started from>}."""
    graph = build_parent([])
    graph.invoke({"log": []}, cfg())
    ns = sub_ns(graph, cfg())
    parent_id = graph.get_state(cfg()).config["configurable"]["checkpoint_id"]
    graph.invoke(Command(resume="OK"), cfg())
    saver = graph.checkpointer
    assert namespaces(saver) == ["", ns]
    child = list(saver.list(cfg(checkpoint_ns=ns)))
    assert [(t.metadata["source"], t.metadata["step"]) for t in child] == [
        ("loop", 2),
        ("loop", 1),
        ("loop", 0),
        ("input", -1),
    ]
    assert all(t.metadata["parents"] == {"": parent_id} for t in child)
    assert all(t.config["configurable"]["checkpoint_ns"] == ns for t in child)
    assert child[0].checkpoint["channel_values"] == {"log": ["p1", "s1", "s2:OK"], "bar": "B", "n": 1}
    # the root namespace has only the parent's own checkpoints; without a namespace in
    # the config, list() yields the thread's checkpoints of every namespace
    assert [t.metadata["step"] for t in saver.list(cfg(checkpoint_ns=""))] == [2, 1, 0, -1]
    assert len(list(saver.list(cfg()))) == 8


def test_namespaced_update_state_updates_the_child():
    """G-6: update_state with the child namespace writes a child checkpoint (source
    update, same parents); the resumed subgraph continues from it."""
    calls = []

    def s1(state):
        return {"log": ["s1"], "bar": "B"}

    def s2(state):
        calls.append("s2")
        return {"log": [f"s2:{interrupt('sub?')}:{state['bar']}"]}

    sub = StateGraph(Sub)
    sub.add_node("s1", s1)
    sub.add_node("s2", s2)
    sub.add_edge(START, "s1")
    sub.add_edge("s1", "s2")
    builder = StateGraph(Parent)
    builder.add_node("p1", lambda s: {"log": ["p1"], "foo": "F"})
    builder.add_node("sub", sub.compile())
    builder.add_edge(START, "p1")
    builder.add_edge("p1", "sub")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    ns = sub_ns(graph, cfg())
    parent_id = graph.get_state(cfg()).config["configurable"]["checkpoint_id"]
    result = graph.update_state(cfg(checkpoint_ns=ns), {"bar": "EDIT"}, as_node="s1")
    child = graph.get_state(cfg(checkpoint_ns=ns))
    assert result["configurable"]["checkpoint_ns"] == ns
    assert result["configurable"]["checkpoint_id"] == child.config["configurable"]["checkpoint_id"]
    assert (child.metadata, child.next, child.values) == (
        {"source": "update", "step": 2, "parents": {"": parent_id}},
        ("s2",),
        {"log": ["p1", "s1"], "bar": "EDIT", "n": 0},
    )
    assert graph.get_state(cfg()).next == ("sub",)
    assert graph.invoke(Command(resume="OK"), cfg()) == {"log": ["p1", "p1", "s1", "s2:OK:EDIT"], "foo": "F"}


def test_update_state_with_unknown_subgraph_namespace():
    """G-6: an update addressed at a namespace naming no subgraph raises; a read returns
    the empty snapshot."""
    graph = build_parent([])
    graph.invoke({"log": []}, cfg())
    with pytest.raises(ValueError, match=re.escape("Subgraph nope not found")) as info:
        graph.update_state(cfg(checkpoint_ns="nope:123"), {"log": ["x"]})
    assert str(info.value) == "Subgraph nope not found"
    empty = graph.get_state(cfg(checkpoint_ns="nope:123"))
    assert (empty.values, empty.next, empty.metadata) == ({}, (), None)


def test_async_subgraph_interrupt_and_resume():
    """G-4, P-0: the same through ainvoke / astream."""
    calls = []
    graph = build_parent(calls)

    async def main():
        first = await graph.ainvoke({"log": []}, cfg())
        chunks = [c async for c in graph.astream(Command(resume="OK"), cfg(), subgraphs=True)]
        return first, chunks

    first, chunks = asyncio.run(main())
    assert [i.value for i in first["__interrupt__"]] == ["sub?"]
    assert [ns for ns, _ in chunks] == [(chunks[0][0][0],), ()]
    assert chunks[0][0][0].startswith("sub:")
    assert chunks[-1] == ((), {"sub": {"log": ["p1", "s1", "s2:OK"]}})
    assert calls == ["p1", ("s1", ["log", "n"]), "s2", "s2"]


# --- nested subgraphs ---------------------------------------------------------------------


class G(TypedDict, total=False):
    log: Annotated[list, operator.add]


def nested(calls):
    """outer (subgraph) -> m0 -> inner (subgraph) -> g1 asks "deep?"."""

    def g1(state):
        calls.append("g1")
        return {"log": ["g1:" + interrupt("deep?")]}

    def m0(state):
        calls.append("m0")
        return {"log": ["m0"]}

    inner = StateGraph(G)
    inner.add_node("g1", g1)
    inner.add_edge(START, "g1")
    middle = StateGraph(G)
    middle.add_node("m0", m0)
    middle.add_node("inner", inner.compile())
    middle.add_edge(START, "m0")
    middle.add_edge("m0", "inner")
    outer = StateGraph(G)
    outer.add_node("outer", middle.compile())
    outer.add_edge(START, "outer")
    return outer.compile(checkpointer=InMemorySaver())


def test_nested_subgraph_namespaces_and_interrupt():
    """G-2, G-4: a grandchild's namespace is "outer:<tid>|inner:<tid2>" (a 2-tuple in the
    stream); its interrupt shows at all three levels; resume runs only g1."""
    calls = []
    graph = nested(calls)
    chunks = list(graph.stream({"log": []}, cfg(), subgraphs=True))
    outer_ns = f"outer:{graph.get_state(cfg()).tasks[0].id}"
    mid = graph.get_state(cfg(checkpoint_ns=outer_ns))
    inner_ns = f"{outer_ns}|inner:{mid.tasks[0].id}"
    [intr] = graph.get_state(cfg()).interrupts
    assert chunks == [
        ((outer_ns,), {"m0": {"log": ["m0"]}}),
        ((outer_ns, inner_ns.split("|")[1]), {"__interrupt__": (intr,)}),
        ((outer_ns,), {"__interrupt__": (intr,)}),
        ((), {"__interrupt__": (intr,)}),
    ]
    assert namespaces(graph.checkpointer) == ["", outer_ns, inner_ns]
    root_id = graph.get_state(cfg()).config["configurable"]["checkpoint_id"]
    mid_id = mid.config["configurable"]["checkpoint_id"]
    deep = graph.get_state(cfg(), subgraphs=True).tasks[0].state.tasks[0].state
    assert deep.metadata == {"source": "loop", "step": 0, "parents": {"": root_id, outer_ns: mid_id}}
    assert deep.config["configurable"]["checkpoint_map"] == {
        "": root_id,
        outer_ns: mid_id,
        inner_ns: deep.config["configurable"]["checkpoint_id"],
    }
    calls.clear()
    resumed = list(graph.stream(Command(resume="D"), cfg(), subgraphs=True))
    assert resumed == [
        ((outer_ns, inner_ns.split("|")[1]), {"g1": {"log": ["g1:D"]}}),
        ((outer_ns,), {"inner": {"log": ["m0", "g1:D"]}}),
        ((), {"outer": {"log": ["m0", "m0", "g1:D"]}}),
    ]
    assert calls == ["g1"]


# --- G-3 / G-5: graphs invoked inside a node --------------------------------------------


def call_sub_graph(calls, times=1):
    """call_sub invokes the compiled subgraph `times` times from its function."""
    sub = build_sub(calls, ask=False)

    def call_sub(state):
        log = []
        for i in range(times):
            log += sub.invoke({"log": [f"x{i}"]})["log"]
        return {"log": log}

    builder = StateGraph(Parent)
    builder.add_node("call_sub", call_sub)
    builder.add_edge(START, "call_sub")
    return builder.compile(checkpointer=InMemorySaver())


def test_graph_invoked_inside_a_node_streams_and_checkpoints():
    """G-5, O-9: a graph invoked in a node function streams under "call_sub:<tid>" and saves
    its checkpoints there; its result is whatever the node returns."""
    graph = call_sub_graph([])
    chunks = list(graph.stream({"log": []}, cfg(), subgraphs=True))
    [step1] = [s for s in graph.get_state_history(cfg()) if s.next == ("call_sub",)]
    ns = f"call_sub:{step1.tasks[0].id}"
    assert chunks == [
        ((ns,), {"s1": {"log": ["s1"], "bar": "B", "n": 1}}),
        ((ns,), {"s2": {"log": ["s2:n=1"]}}),
        ((), {"call_sub": {"log": ["x0", "s1", "s2:n=1"]}}),
    ]
    assert namespaces(graph.checkpointer) == ["", ns]
    assert graph.get_state(cfg()).values == {"log": ["x0", "s1", "s2:n=1"]}


def test_second_invocation_from_the_same_task_gets_a_suffix():
    """G-3: the second call from the same task is saved under "<ns>|1" (stream namespace
    ("<ns>", "1"))."""
    graph = call_sub_graph([], times=2)
    chunks = list(graph.stream({"log": []}, cfg(), subgraphs=True, stream_mode="updates"))
    [step1] = [s for s in graph.get_state_history(cfg()) if s.next == ("call_sub",)]
    ns = f"call_sub:{step1.tasks[0].id}"
    assert [c[0] for c in chunks] == [(ns,), (ns,), (ns, "1"), (ns, "1"), ()]
    assert chunks[-1] == ((), {"call_sub": {"log": ["x0", "s1", "s2:n=1", "x1", "s1", "s2:n=1"]}})
    assert namespaces(graph.checkpointer) == ["", ns, f"{ns}|1"]


# --- Command.PARENT --------------------------------------------------------------------


def test_command_parent_routes_in_the_parent():
    """O-9: Command(graph=Command.PARENT, goto, update) from inside a subgraph updates the
    parent as the subgraph node and routes the parent to goto."""

    def child(state):
        return Command(graph=Command.PARENT, goto="p2", update={"log": ["from child"]})

    sub = StateGraph(Sub)
    sub.add_node("child", child)
    sub.add_edge(START, "child")
    builder = StateGraph(Parent)
    builder.add_node("sub", sub.compile())
    builder.add_node("p2", lambda s: {"log": ["p2"]})
    builder.add_edge(START, "sub")
    graph = builder.compile(checkpointer=InMemorySaver())
    assert list(graph.stream({"log": []}, cfg())) == [
        {"sub": {"log": ["from child"]}},
        {"p2": {"log": ["p2"]}},
    ]
    assert graph.invoke({"log": []}, cfg("2")) == {"log": ["from child", "p2"]}


def test_command_parent_in_a_root_graph_raises():
    """O-9: Command.PARENT in a root graph raises ParentCommand carrying the command."""

    def a(state):
        return Command(graph=Command.PARENT, goto="b")

    builder = StateGraph(G)
    builder.add_node("a", a)
    builder.add_node("b", lambda s: {"log": ["b"]})
    builder.add_edge(START, "a")
    graph = builder.compile()
    with pytest.raises(ParentCommand, match=re.escape("Command(goto='b')")) as info:
        graph.invoke({"log": []})
    assert str(info.value) == "Command(goto='b')"
    [command] = info.value.args
    assert isinstance(command, Command)
    assert (command.goto, command.update, command.resume) == ("b", None, None)


# --- G-2: checkpointer=True / False --------------------------------------------------------


def test_checkpointer_true_keeps_one_history_per_thread():
    """G-2: checkpointer=True saves the subgraph under its node name (no task id) and its
    private state accumulates across parent runs (n: 1, then 2)."""
    calls = []
    graph = build_parent(calls, ask=False, sub_checkpointer=True)
    first = graph.invoke({"log": []}, cfg())
    assert first == {"log": ["p1", "p1", "s1", "s2:n=1"], "foo": "F"}
    chunks = list(graph.stream({"log": []}, cfg(), subgraphs=True))
    assert [ns for ns, _ in chunks] == [(), ("sub",), ("sub",), ()]
    assert chunks[2] == (("sub",), {"s2": {"log": ["s2:n=2"]}})
    assert namespaces(graph.checkpointer) == ["", "sub"]
    child = graph.get_state(cfg(checkpoint_ns="sub"))
    assert child.values["n"] == 2
    assert child.config["configurable"]["checkpoint_ns"] == "sub"


def test_checkpointer_true_subgraph_interrupt_and_resume():
    """G-2, G-4: with checkpointer=True the interrupt resumes in the "sub" namespace
    without re-running s1."""
    calls = []
    graph = build_parent(calls, sub_checkpointer=True)
    graph.invoke({"log": []}, cfg())
    calls.clear()
    chunks = list(graph.stream(Command(resume="OK"), cfg(), subgraphs=True))
    assert chunks == [(("sub",), {"s2": {"log": ["s2:OK"]}}), ((), {"sub": {"log": ["p1", "s1", "s2:OK"]}})]
    assert calls == ["s2"]


def test_checkpointer_false_saves_no_child_checkpoints():
    """G-2: checkpointer=False: no child checkpoints; the parent task has no child state.
    Observed on LangGraph 1.2.22: an interrupt inside still resumes (the answer reaches
    the re-run subgraph), but the subgraph starts over, so s1 runs again."""
    calls = []
    graph = build_parent(calls, sub_checkpointer=False)
    first = graph.invoke({"log": []}, cfg())
    assert [i.value for i in first["__interrupt__"]] == ["sub?"]
    assert namespaces(graph.checkpointer) == [""]
    full = graph.get_state(cfg(), subgraphs=True)
    assert full.next == ("sub",)
    assert [t.state for t in full.tasks] == [None]
    calls.clear()
    assert graph.invoke(Command(resume="OK"), cfg()) == {"log": ["p1", "p1", "s1", "s2:OK"], "foo": "F"}
    assert calls == [("s1", ["log", "n"]), "s2"]


def test_checkpointer_true_on_a_root_graph_raises():
    """G-2: checkpointer=True is only for subgraphs: running it as root raises."""
    graph = build_sub([], ask=False, checkpointer=True)
    text = "checkpointer=True cannot be used for root graphs."
    with pytest.raises(RuntimeError, match=re.escape(text)) as info:
        graph.invoke({"log": []}, cfg())
    assert str(info.value) == text


def test_interrupt_id_is_the_same_in_child_and_parent():
    """G-4: the parent records the subgraph's interrupt with the same id."""
    graph = build_parent([])
    [intr] = graph.invoke({"log": []}, cfg())["__interrupt__"]
    child = graph.get_state(cfg(checkpoint_ns=sub_ns(graph, cfg())))
    assert child.interrupts == (intr,)
    assert isinstance(intr, Interrupt) and re.fullmatch(r"[0-9a-f]{32}", intr.id)
