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
from lgembed.types import StreamWriter, interrupt


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
