"""Streaming (docs/BEHAVIOUR.md §7, S-1 … S-11) and invoke (§8, V-1 … V-5), without a checkpointer.

Chunk shapes per mode, several modes at once, the v2 dict chunks, the custom
writer in its three spellings, output filtering, errors raised after earlier
chunks, and the sync/async/batch entry points.

Ids (task ids, interrupt ids) and timestamps are never pinned, only their type.

Why over 600 lines: one small graph per test (tests stay independent) for two
reference sections, §7 and §8, that share their fixtures.
"""

from __future__ import annotations

import asyncio
import operator
import re
import time
import warnings
from datetime import datetime
from typing import Annotated, TypedDict

import pytest

from lgembed.config import get_stream_writer
from lgembed.errors import GraphRecursionError
from lgembed.graph import END, START, StateGraph
from lgembed.runtime import Runtime
from lgembed.types import Command, GraphOutput, Interrupt, StreamWriter, interrupt

# --- helpers -------------------------------------------------------------------


class XLog(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def fan_join():
    """O-1: START -> a -> (b, c) -> join -> d; d returns None."""

    def b(state):
        time.sleep(0.02)  # b finishes after c: fixes the order of their updates chunks
        return {"log": ["b"]}

    builder = StateGraph(XLog)
    builder.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    builder.add_node("b", b)
    builder.add_node("c", lambda s: {"log": ["c"]})
    builder.add_node("d", lambda s: None)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    builder.add_edge("d", END)
    return builder.compile()


def two_step():
    """a writes log twice and x via a list Command update, and uses the injected writer;
    b writes through runtime.stream_writer and get_stream_writer()."""

    def a(state, writer: StreamWriter):
        writer({"w": 1})
        return Command(update=[("log", ["t1"]), ("log", ["t2"]), ("x", 5)])

    def b(state, runtime: Runtime):
        runtime.stream_writer("rt")
        get_stream_writer()(("gsw", 2))
        return {"log": ["b"]}

    builder = StateGraph(XLog)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile()


def asks():
    """a -> ask, where ask calls interrupt("q?") (no checkpointer)."""
    builder = StateGraph(XLog)
    builder.add_node("a", lambda s: {"x": 3})
    builder.add_node("ask", lambda s: {"log": [interrupt("q?")]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "ask")
    return builder.compile()


def failing_second_step():
    """a succeeds, then boom raises ValueError('late')."""

    def boom(state):
        raise ValueError("late")

    builder = StateGraph(XLog)
    builder.add_node("a", lambda s: {"log": ["a"]})
    builder.add_node("boom", boom)
    builder.add_edge(START, "a")
    builder.add_edge("a", "boom")
    return builder.compile()


def strip_ids(chunk):
    """Replaces the task id of a tasks-mode payload by its type name."""
    assert isinstance(chunk["id"], str) and chunk["id"]
    return {**chunk, "id": "str"}


# --- S-1 / S-2 modes and chunk shapes --------------------------------------------


def test_default_stream_mode_is_updates():
    """S-1: stream() without stream_mode yields updates chunks."""
    app = fan_join()
    expected = [
        {"a": {"x": 2, "log": ["a"]}},
        {"c": {"log": ["c"]}},
        {"b": {"log": ["b"]}},
        {"d": None},
    ]
    assert list(app.stream({"x": 1, "log": []})) == expected
    assert list(app.stream({"x": 1, "log": []}, stream_mode="updates")) == expected


def test_several_modes_yield_mode_chunk_tuples():
    """S-2, O-1: a list of modes yields (mode, payload) tuples in production order."""
    assert list(fan_join().stream({"x": 1}, stream_mode=["updates", "values"])) == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": {"x": 2, "log": ["a"]}}),
        ("values", {"x": 2, "log": ["a"]}),
        ("updates", {"c": {"log": ["c"]}}),
        ("updates", {"b": {"log": ["b"]}}),
        ("values", {"x": 2, "log": ["a", "b", "c"]}),
        ("updates", {"d": None}),
    ]


def test_single_mode_in_a_list_still_yields_tuples():
    """S-2: stream_mode=["custom"] yields ("custom", payload) tuples."""
    assert list(two_step().stream({"x": 1}, stream_mode=["custom"])) == [
        ("custom", {"w": 1}),
        ("custom", "rt"),
        ("custom", ("gsw", 2)),
    ]


# --- S-3 values ----------------------------------------------------------------------


def test_values_chunks_per_step_including_input_step():
    """S-3, O-1: one values chunk per step that changed an output channel, starting with
    the input step; reducer keys show their default; no chunk when a step changed nothing."""
    assert list(fan_join().stream({"x": 1}, stream_mode="values")) == [
        {"x": 1, "log": []},
        {"x": 2, "log": ["a"]},
        {"x": 2, "log": ["a", "b", "c"]},
    ]


def test_values_chunk_on_interrupt_without_checkpointer():
    """S-3, S-4, I-6: an interrupt gives an updates chunk {'__interrupt__': (Interrupt,)}
    and a values chunk with the interrupts tuple added."""
    chunks = list(asks().stream({"x": 1}, stream_mode=["updates", "values"]))
    assert [mode for mode, _ in chunks] == ["values", "updates", "values", "updates", "values"]
    assert chunks[:3] == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": {"x": 3}}),
        ("values", {"x": 3, "log": []}),
    ]
    update = chunks[3][1]
    assert list(update) == ["__interrupt__"]
    assert isinstance(update["__interrupt__"], tuple)
    (intr,) = update["__interrupt__"]
    assert isinstance(intr, Interrupt)
    assert intr.value == "q?"
    assert isinstance(intr.id, str)
    values = chunks[4][1]
    assert values == {"x": 3, "log": [], "__interrupt__": (intr,)}


# --- S-4 updates ------------------------------------------------------------------------


def test_updates_chunk_per_task_with_its_writes():
    """S-4: {node: update}; None for a node that returned None or {}; unknown keys dropped."""

    class S(TypedDict):
        x: int

    builder = StateGraph(S)
    builder.add_node("a", lambda s: {"x": 3, "not_a_channel": 5})
    builder.add_node("b", lambda s: {})
    builder.add_node("c", lambda s: None)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    assert list(builder.compile().stream({"x": 1})) == [{"a": {"x": 3}}, {"b": None}, {"c": None}]


def test_task_writing_a_key_twice_gives_list_of_single_key_dicts():
    """S-4, O-11: a task that writes the same key twice -> a list of one-key dicts,
    one per write (the other keys included), in write order."""
    assert list(two_step().stream({"x": 1}, stream_mode="updates")) == [
        {"a": [{"log": ["t1"]}, {"log": ["t2"]}, {"x": 5}]},
        {"b": {"log": ["b"]}},
    ]
    assert two_step().invoke({"x": 1}) == {"x": 5, "log": ["t1", "t2", "b"]}


def test_updates_arrive_in_completion_order():
    """S-4, O-2: updates chunks of parallel tasks follow completion order."""

    class S(TypedDict):
        log: Annotated[list, operator.add]

    def slow(name, delay):
        def node(state):
            time.sleep(delay)
            return {"log": [name]}

        return node

    builder = StateGraph(S)
    builder.add_node("a", slow("a", 0.04))
    builder.add_node("b", slow("b", 0.02))
    builder.add_node("c", slow("c", 0.0))
    for name in "abc":
        builder.add_edge(START, name)
    assert list(builder.compile().stream({"log": []})) == [
        {"c": {"log": ["c"]}},
        {"b": {"log": ["b"]}},
        {"a": {"log": ["a"]}},
    ]


def test_start_node_is_hidden_from_task_streams():
    """S-4, S-5, K-2: the hidden __start__ task appears in no updates/tasks/debug chunk."""
    chunks = list(fan_join().stream({"x": 1}, stream_mode=["updates", "tasks", "debug"]))
    names = set()
    for mode, chunk in chunks:
        if mode == "updates":
            names.update(chunk)
        elif mode == "tasks":
            names.add(chunk["name"])
        else:
            names.add(chunk["payload"]["name"])
    assert names == {"a", "b", "c", "d"}


# --- S-5 tasks ------------------------------------------------------------------------------


def test_tasks_mode_start_and_result_events():
    """S-5: start {'id','name','input','triggers'}; result {'id','name','error','result',
    'interrupts'}; a channel written twice becomes {'$writes': [...]}."""
    chunks = list(two_step().stream({"x": 1}, stream_mode="tasks"))
    assert [strip_ids(c) for c in chunks] == [
        {"id": "str", "name": "a", "input": {"x": 1, "log": []}, "triggers": ("branch:to:a",)},
        {
            "id": "str",
            "name": "a",
            "error": None,
            "result": {"log": {"$writes": [["t1"], ["t2"]]}, "x": 5},
            "interrupts": [],
        },
        {"id": "str", "name": "b", "input": {"x": 5, "log": ["t1", "t2"]}, "triggers": ("branch:to:b",)},
        {"id": "str", "name": "b", "error": None, "result": {"log": ["b"]}, "interrupts": []},
    ]
    assert chunks[0]["id"] == chunks[1]["id"]
    assert chunks[2]["id"] == chunks[3]["id"]
    assert chunks[0]["id"] != chunks[2]["id"]


def test_tasks_mode_start_event_carries_node_metadata():
    """S-5: a node with metadata adds 'metadata' to its start event only."""
    builder = StateGraph(XLog)
    builder.add_node("a", lambda s: {"x": 2}, metadata={"k": "v"})
    builder.add_edge(START, "a")
    chunks = list(builder.compile().stream({"x": 1}, stream_mode="tasks"))
    assert [strip_ids(c) for c in chunks] == [
        {
            "id": "str",
            "name": "a",
            "input": {"x": 1, "log": []},
            "triggers": ("branch:to:a",),
            "metadata": {"k": "v"},
        },
        {"id": "str", "name": "a", "error": None, "result": {"x": 2}, "interrupts": []},
    ]


def test_tasks_mode_result_of_interrupted_task():
    """S-5: an interrupted task's result event lists the interrupt as a dict."""
    chunks = [c for c in asks().stream({"x": 1}, stream_mode="tasks") if c["name"] == "ask"]
    start, result = chunks
    assert result["error"] is None
    assert result["result"] == {}
    (intr,) = result["interrupts"]
    assert isinstance(intr["id"], str)
    assert intr == {"value": "q?", "id": intr["id"], "response_schema": None}
    assert start["input"] == {"x": 3, "log": []}


# --- S-6 / S-7 checkpoints and debug --------------------------------------------------------


def test_checkpoints_mode_without_checkpointer_yields_nothing():
    """S-6: checkpoints are never streamed without a checkpointer."""
    assert list(two_step().stream({"x": 1}, stream_mode="checkpoints")) == []


def test_debug_mode_without_checkpointer_has_task_events_only():
    """S-7, O-14: debug wraps task events: step, ISO timestamp, type, payload."""
    tasks = [strip_ids(c) for c in two_step().stream({"x": 1}, stream_mode="tasks")]
    chunks = list(two_step().stream({"x": 1}, stream_mode="debug"))
    assert [(c["step"], c["type"]) for c in chunks] == [
        (1, "task"),
        (1, "task_result"),
        (2, "task"),
        (2, "task_result"),
    ]
    for chunk in chunks:
        assert set(chunk) == {"step", "timestamp", "type", "payload"}
        assert isinstance(datetime.fromisoformat(chunk["timestamp"]), datetime)
    assert [strip_ids(c["payload"]) for c in chunks] == tasks


# --- S-8 custom ----------------------------------------------------------------------------------


def test_custom_mode_from_writer_runtime_and_get_stream_writer():
    """S-8: injected writer, runtime.stream_writer and get_stream_writer() all stream the
    written value verbatim, in the order written, before the task's updates chunk."""
    assert list(two_step().stream({"x": 1}, stream_mode=["custom", "updates"])) == [
        ("custom", {"w": 1}),
        ("updates", {"a": [{"log": ["t1"]}, {"log": ["t2"]}, {"x": 5}]}),
        ("custom", "rt"),
        ("custom", ("gsw", 2)),
        ("updates", {"b": {"log": ["b"]}}),
    ]


def test_custom_writer_is_a_no_op_when_custom_mode_is_off():
    """S-8: writing without custom mode neither fails nor adds chunks."""
    app = two_step()
    assert app.invoke({"x": 1}) == {"x": 5, "log": ["t1", "t2", "b"]}
    assert list(app.stream({"x": 1}, stream_mode=["values"])) == [
        ("values", {"x": 1, "log": []}),
        ("values", {"x": 5, "log": ["t1", "t2"]}),
        ("values", {"x": 5, "log": ["t1", "t2", "b"]}),
    ]


def test_custom_mode_from_async_nodes():
    """S-8: the writers work in async nodes under astream."""

    async def a(state, writer: StreamWriter):
        writer("aw")
        get_stream_writer()("agw")
        await asyncio.sleep(0)
        return {"log": ["a"]}

    builder = StateGraph(XLog)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    app = builder.compile()

    async def main():
        return [c async for c in app.astream({"x": 1}, stream_mode=["custom", "updates"])]

    assert asyncio.run(main()) == [("custom", "aw"), ("custom", "agw"), ("updates", {"a": {"log": ["a"]}})]


# --- S-10 output filtering --------------------------------------------------------------------


class Full(TypedDict):
    q: str
    internal: str
    ans: str


class In(TypedDict):
    q: str


class Out(TypedDict):
    ans: str


def in_out():
    builder = StateGraph(Full, input_schema=In, output_schema=Out)
    builder.add_node("n1", lambda s: {"internal": s["q"] + "!"})
    builder.add_node("n2", lambda s: {"ans": s["internal"] * 2})
    builder.add_edge(START, "n1")
    builder.add_edge("n1", "n2")
    return builder.compile()


def test_stream_ignores_output_schema():
    """S-10, O-12: stream() filters by all state channels, not the output schema."""
    app = in_out()
    assert list(app.stream({"q": "hi"}, stream_mode="values")) == [
        {"q": "hi"},
        {"q": "hi", "internal": "hi!"},
        {"q": "hi", "internal": "hi!", "ans": "hi!hi!"},
    ]
    assert list(app.stream({"q": "hi"})) == [{"n1": {"internal": "hi!"}}, {"n2": {"ans": "hi!hi!"}}]


def test_invoke_uses_output_schema():
    """V-5, S-10: invoke() keeps only the output-schema keys, in values and updates."""
    app = in_out()
    assert app.invoke({"q": "hi"}) == {"ans": "hi!hi!"}
    assert app.invoke({"q": "hi"}, stream_mode="updates") == [{"n1": None}, {"n2": {"ans": "hi!hi!"}}]


def test_input_schema_drops_other_keys():
    """V-5, N-3: keys outside the input schema are not written by the input."""
    assert in_out().invoke({"q": "hi", "ans": "ignored"}) == {"ans": "hi!hi!"}


def test_output_keys_argument():
    """S-10: output_keys narrows values/updates; a single key gives bare values."""
    app = in_out()
    assert list(app.stream({"q": "hi"}, stream_mode="values", output_keys=["ans"])) == [{"ans": "hi!hi!"}]
    assert list(app.stream({"q": "hi"}, output_keys=["ans"])) == [{"n1": None}, {"n2": {"ans": "hi!hi!"}}]
    assert list(app.stream({"q": "hi"}, stream_mode="values", output_keys="ans")) == ["hi!hi!"]
    assert app.invoke({"q": "hi"}, output_keys=["q", "internal"]) == {"q": "hi", "internal": "hi!"}
    assert app.invoke({"q": "hi"}, output_keys="internal") == "hi!"


# --- S-11 errors after chunks ------------------------------------------------------------------


def test_error_raised_after_earlier_chunks():
    """S-11: chunks produced before a node failed are yielded, then the error is raised."""
    chunks = []
    with pytest.raises(ValueError, match=re.escape("late")):
        for chunk in failing_second_step().stream({"x": 1}, stream_mode=["values", "updates"]):
            chunks.append(chunk)
    assert chunks == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"x": 1, "log": ["a"]}),
    ]


def test_error_raised_after_earlier_chunks_async():
    """S-11: astream behaves the same."""
    chunks = []

    async def main():
        async for chunk in failing_second_step().astream({"x": 1}, stream_mode="updates"):
            chunks.append(chunk)

    with pytest.raises(ValueError, match=re.escape("late")):
        asyncio.run(main())
    assert chunks == [{"a": {"log": ["a"]}}]


def test_recursion_error_raised_after_update_chunks():
    """S-11, O-4: an endless loop streams its updates, then GraphRecursionError."""

    class S(TypedDict):
        x: int

    builder = StateGraph(S)
    builder.add_node("inc", lambda s: {"x": s["x"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", "inc")
    chunks = []
    with pytest.raises(GraphRecursionError):
        for chunk in builder.compile().stream({"x": 0}, {"recursion_limit": 3}):
            chunks.append(chunk)
    assert chunks == [{"inc": {"x": 1}}, {"inc": {"x": 2}}, {"inc": {"x": 3}}]


# --- S-2 version="v2" --------------------------------------------------------------------------


def test_v2_chunks_are_dicts_with_type_ns_data():
    """S-2, O-14: v2 chunks are {'type','ns','data'}; values chunks add 'interrupts'."""
    chunks = list(
        two_step().stream({"x": 1}, stream_mode=["custom", "updates", "values", "tasks"], version="v2")
    )
    shaped = []
    for chunk in chunks:
        assert chunk["ns"] == ()
        if chunk["type"] == "tasks":
            shaped.append(("tasks", chunk["data"]["name"], "input" in chunk["data"]))
            assert set(chunk) == {"type", "ns", "data"}
        elif chunk["type"] == "values":
            assert set(chunk) == {"type", "ns", "data", "interrupts"}
            assert chunk["interrupts"] == ()
            shaped.append(("values", chunk["data"]))
        else:
            assert set(chunk) == {"type", "ns", "data"}
            shaped.append((chunk["type"], chunk["data"]))
    assert shaped == [
        ("values", {"x": 1, "log": []}),
        ("tasks", "a", True),
        ("custom", {"w": 1}),
        ("updates", {"a": [{"log": ["t1"]}, {"log": ["t2"]}, {"x": 5}]}),
        ("tasks", "a", False),
        ("values", {"x": 5, "log": ["t1", "t2"]}),
        ("tasks", "b", True),
        ("custom", "rt"),
        ("custom", ("gsw", 2)),
        ("updates", {"b": {"log": ["b"]}}),
        ("tasks", "b", False),
        ("values", {"x": 5, "log": ["t1", "t2", "b"]}),
    ]


def test_v2_single_mode_chunks_are_dicts_too():
    """S-2: v2 with a single mode string still yields dict chunks."""
    assert list(two_step().stream({"x": 1}, stream_mode="updates", version="v2")) == [
        {"type": "updates", "ns": (), "data": {"a": [{"log": ["t1"]}, {"log": ["t2"]}, {"x": 5}]}},
        {"type": "updates", "ns": (), "data": {"b": {"log": ["b"]}}},
    ]


def test_v2_values_chunk_carries_interrupts_out_of_data():
    """S-2: in v2 the interrupts are popped from data into 'interrupts'."""
    chunks = list(asks().stream({"x": 1}, stream_mode="values", version="v2"))
    assert [c["data"] for c in chunks] == [{"x": 1, "log": []}, {"x": 3, "log": []}, {"x": 3, "log": []}]
    assert [c["interrupts"] for c in chunks[:2]] == [(), ()]
    (intr,) = chunks[2]["interrupts"]
    assert isinstance(intr, Interrupt) and intr.value == "q?"


# --- §8 invoke -------------------------------------------------------------------------------------


def test_invoke_returns_last_values_chunk():
    """V-2: invoke() returns the last values chunk."""
    assert fan_join().invoke({"x": 1, "log": []}) == {"x": 2, "log": ["a", "b", "c"]}


def test_invoke_returns_none_without_any_values_chunk():
    """V-2: no values chunk at all -> None (v1) / GraphOutput(value=None) (v2)."""

    class S(TypedDict):
        x: int

    builder = StateGraph(S)
    builder.add_node("a", lambda s: {})
    builder.add_edge(START, "a")
    app = builder.compile()
    assert app.invoke({}) is None
    out = app.invoke({}, version="v2")
    assert isinstance(out, GraphOutput)
    assert out.value is None
    assert out.interrupts == ()


def test_invoke_with_interrupt_returns_interrupt_list():
    """V-2, I-6: v1 invoke adds '__interrupt__' as a list (stream chunks use a tuple)."""
    out = asks().invoke({"x": 1})
    assert set(out) == {"x", "log", "__interrupt__"}
    assert (out["x"], out["log"]) == (3, [])
    assert isinstance(out["__interrupt__"], list)
    (intr,) = out["__interrupt__"]
    assert isinstance(intr, Interrupt) and intr.value == "q?"


@pytest.mark.parametrize("mode", ["updates", "custom"])
def test_invoke_with_other_stream_mode_returns_chunk_list(mode):
    """V-3: a non-values stream_mode returns the list of chunks."""
    app = two_step()
    assert app.invoke({"x": 1}, stream_mode=mode) == list(app.stream({"x": 1}, stream_mode=mode))


def test_invoke_with_mode_list_returns_tuples():
    """V-3, O-14: a list of modes returns the (mode, chunk) list; one mode in a list too."""
    app = two_step()
    assert app.invoke({"x": 1}, stream_mode=["custom", "values"]) == [
        ("values", {"x": 1, "log": []}),
        ("custom", {"w": 1}),
        ("values", {"x": 5, "log": ["t1", "t2"]}),
        ("custom", "rt"),
        ("custom", ("gsw", 2)),
        ("values", {"x": 5, "log": ["t1", "t2", "b"]}),
    ]
    assert app.invoke({"x": 1}, stream_mode=["updates"]) == [
        ("updates", {"a": [{"log": ["t1"]}, {"log": ["t2"]}, {"x": 5}]}),
        ("updates", {"b": {"log": ["b"]}}),
    ]


def test_invoke_updates_mode_includes_interrupt_chunks():
    """V-3: invoke(stream_mode='updates') returns the interrupt updates chunk as well."""
    out = asks().invoke({"x": 1}, stream_mode="updates")
    assert out[0] == {"a": {"x": 3}}
    assert list(out[1]) == ["__interrupt__"]
    assert isinstance(out[1]["__interrupt__"], tuple)
    assert len(out) == 2


def test_invoke_v2_returns_graph_output():
    """V-4: v2 invoke returns GraphOutput(value, interrupts)."""
    out = two_step().invoke({"x": 1}, version="v2")
    assert isinstance(out, GraphOutput)
    assert out.value == {"x": 5, "log": ["t1", "t2", "b"]}
    assert out.interrupts == ()


def test_invoke_v2_graph_output_with_interrupts():
    """V-4: v2 interrupts are a tuple; result['__interrupt__'] works with a DeprecationWarning."""
    out = asks().invoke({"x": 1}, version="v2")
    assert out.value == {"x": 3, "log": []}
    assert isinstance(out.interrupts, tuple)
    (intr,) = out.interrupts
    assert intr.value == "q?"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert out["__interrupt__"] == out.interrupts
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert any("Accessing GraphOutput via `result[key]` is deprecated." in str(w.message) for w in caught)


def test_invoke_v2_with_updates_returns_dict_chunks():
    """V-3, S-2: v2 + a non-values mode returns the list of v2 dict chunks."""
    assert two_step().invoke({"x": 1}, stream_mode="updates", version="v2") == [
        {"type": "updates", "ns": (), "data": {"a": [{"log": ["t1"]}, {"log": ["t2"]}, {"x": 5}]}},
        {"type": "updates", "ns": (), "data": {"b": {"log": ["b"]}}},
    ]


# --- async and batch entry points ------------------------------------------------------------------


def mixed_graph():
    """An async node followed by a sync node."""

    async def a(state):
        await asyncio.sleep(0.001)
        return {"x": state["x"] + 1, "log": ["a"]}

    def s(state):
        return {"log": [f"s{state['x']}"]}

    builder = StateGraph(XLog)
    builder.add_node("a", a)
    builder.add_node("s", s)
    builder.add_edge(START, "a")
    builder.add_edge("a", "s")
    return builder.compile()


def test_ainvoke_with_async_and_sync_nodes():
    """V-1, P-0: ainvoke runs async and sync nodes alike."""
    assert asyncio.run(mixed_graph().ainvoke({"x": 1})) == {"x": 2, "log": ["a", "s2"]}


def test_astream_chunks_match_stream_shapes():
    """S-2, P-0: astream yields the same chunk shapes as stream."""
    app = mixed_graph()

    async def main():
        return [c async for c in app.astream({"x": 1}, stream_mode=["values", "updates"])]

    assert asyncio.run(main()) == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": {"x": 2, "log": ["a"]}}),
        ("values", {"x": 2, "log": ["a"]}),
        ("updates", {"s": {"log": ["s2"]}}),
        ("values", {"x": 2, "log": ["a", "s2"]}),
    ]


def test_astream_default_mode_is_updates():
    """S-1: astream() defaults to updates too."""

    async def main():
        return [c async for c in mixed_graph().astream({"x": 1})]

    assert asyncio.run(main()) == [{"a": {"x": 2, "log": ["a"]}}, {"s": {"log": ["s2"]}}]


def test_abatch_returns_one_result_per_input():
    """V-1: abatch runs each input and returns results in input order."""
    out = asyncio.run(mixed_graph().abatch([{"x": 1}, {"x": 10}]))
    assert out == [{"x": 2, "log": ["a", "s2"]}, {"x": 11, "log": ["a", "s11"]}]


def test_batch_returns_one_result_per_input_with_own_config():
    """V-1: batch runs each input with its own config."""

    def a(state, config):
        return {"log": [config["configurable"]["k"]]}

    builder = StateGraph(XLog)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    app = builder.compile()
    out = app.batch([{"x": 1}, {"x": 2}], [{"configurable": {"k": "one"}}, {"configurable": {"k": "two"}}])
    assert out == [{"x": 1, "log": ["one"]}, {"x": 2, "log": ["two"]}]


def test_batch_passes_context():
    """V-1, B-8: batch forwards context= to every run."""

    def a(state, runtime: Runtime):
        return {"log": [runtime.context["who"]]}

    builder = StateGraph(XLog)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    assert builder.compile().batch([{"x": 1}, {"x": 2}], context={"who": "ctx"}) == [
        {"x": 1, "log": ["ctx"]},
        {"x": 2, "log": ["ctx"]},
    ]
