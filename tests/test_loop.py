"""Behaviour of the Pregel superstep loop (docs/BEHAVIOUR.md §5, L-1 … L-49).

Only what is observable without a checkpointer: recursion-limit counting and its
errors, input handling, the order in which a step's writes are applied (seen
through reducer list order) versus the order of `updates` chunks, joins,
`defer=True`, ephemeral clearing, managed values, concurrency of a step's tasks,
and what a task sees of its own config and runtime.

Every expectation was checked against LangGraph 1.2.22 (see docs/BEHAVIOUR.md §16).

Why over 600 lines: each test builds its own small graph so tests stay independent
and each failure points at one statement of §5; splitting §5 across files would
scatter the statement ids.
"""

from __future__ import annotations

import asyncio
import operator
import re
import threading
import time
from dataclasses import dataclass
from typing import Annotated, TypedDict

import pytest

from lgembed.channels import EphemeralValue
from lgembed.config import get_config
from lgembed.errors import EmptyInputError, GraphRecursionError
from lgembed.graph import END, START, StateGraph
from lgembed.managed import IsLastStep, RemainingSteps
from lgembed.runtime import Runtime
from lgembed.types import Command, Send, interrupt

# --- helpers -------------------------------------------------------------------

RECURSION_TEXT = (
    "Recursion limit of {n} reached without hitting a stop condition. You can "
    "increase the limit by setting the `recursion_limit` config key.\n"
    "For troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langgraph/errors/GRAPH_RECURSION_LIMIT"
)


class Log(TypedDict):
    log: Annotated[list, operator.add]


class XLog(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def append(name, delay=0.0):
    """A node that sleeps `delay` seconds, then appends `name` to `log`."""

    def node(state):
        if delay:
            time.sleep(delay)
        return {"log": [name]}

    node.__name__ = name
    return node


def counter_loop():
    """`inc` loops on itself forever; returns (compiled graph, list of x values seen)."""
    seen = []

    def inc(state):
        seen.append(state["x"])
        return {"x": state["x"] + 1}

    builder = StateGraph(XLog)
    builder.add_node("inc", inc)
    builder.add_edge(START, "inc")
    builder.add_edge("inc", "inc")
    return builder.compile(), seen


def chain(k):
    """START -> n1 -> ... -> nk -> END, each node increments x."""
    builder = StateGraph(XLog)
    prev = START
    for i in range(1, k + 1):
        builder.add_node(f"n{i}", lambda s: {"x": s["x"] + 1})
        builder.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    builder.add_edge(prev, END)
    return builder.compile()


def fan_out(names, delays=None):
    """START -> every name in parallel; each appends its name after its delay."""
    delays = delays or {}
    builder = StateGraph(Log)
    for name in names:
        builder.add_node(name, append(name, delays.get(name, 0.0)))
        builder.add_edge(START, name)
    return builder.compile()


# --- L-1 config defaults ----------------------------------------------------------


def test_default_recursion_limit_is_10007():
    """L-1: without `recursion_limit` the limit is 10007 (not langchain-core's 25)."""
    app, seen = counter_loop()
    with pytest.raises(GraphRecursionError, match=re.escape(RECURSION_TEXT.format(n=10007))):
        app.invoke({"x": 0})
    assert len(seen) == 10007


def test_default_recursion_limit_seen_by_remaining_steps():
    """L-1, L-25: step 1 sees RemainingSteps = stop - step = (-1 + 10007 + 1) - 1 = 10006."""

    class S(TypedDict):
        rem: RemainingSteps
        log: Annotated[list, operator.add]

    builder = StateGraph(S)
    builder.add_node("a", lambda s: {"log": [s["rem"]]})
    builder.add_edge(START, "a")
    assert builder.compile().invoke({"log": []}) == {"log": [10006]}


@pytest.mark.parametrize("limit", [0, -1])
def test_recursion_limit_below_one_is_rejected(limit):
    """L-1: recursion_limit < 1 -> ValueError before any node runs."""
    app, seen = counter_loop()
    with pytest.raises(ValueError, match=re.escape("recursion_limit must be at least 1")) as info:
        app.invoke({"x": 0}, {"recursion_limit": limit})
    assert type(info.value) is ValueError
    with pytest.raises(ValueError, match=re.escape("recursion_limit must be at least 1")):
        list(app.stream({"x": 0}, {"recursion_limit": limit}))
    assert seen == []


def test_recursion_limit_below_one_is_rejected_async():
    """L-1: the async API applies the same check."""
    app, seen = counter_loop()
    with pytest.raises(ValueError, match=re.escape("recursion_limit must be at least 1")):
        asyncio.run(app.ainvoke({"x": 0}, {"recursion_limit": 0}))
    assert seen == []


# --- L-9 input ----------------------------------------------------------------------


def test_none_input_raises_empty_input_error():
    """L-9: invoke(None) without a checkpointer -> EmptyInputError, no node runs."""
    app, seen = counter_loop()
    text = "Received no input for __start__"
    with pytest.raises(EmptyInputError, match=re.escape(text)) as info:
        app.invoke(None)
    assert str(info.value) == text
    with pytest.raises(EmptyInputError, match=re.escape(text)):
        list(app.stream(None))
    with pytest.raises(EmptyInputError, match=re.escape(text)):
        asyncio.run(app.ainvoke(None))
    assert seen == []


def test_empty_dict_is_valid_input():
    """L-9: invoke({}) is input: the START node writes nothing, user nodes still run."""
    got = []

    class S(TypedDict):
        x: int

    def a(state):
        got.append(dict(state))
        return {"x": state.get("x", 0) + 1}

    builder = StateGraph(S)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    app = builder.compile()
    assert app.invoke({}) == {"x": 1}
    assert got == [{}]
    assert list(app.stream({}, stream_mode="values")) == [{"x": 1}]


def test_empty_dict_input_with_silent_node_returns_none():
    """L-9, V-2: invoke({}) whose node writes nothing produces no values chunk -> None."""
    builder = StateGraph(Log)
    builder.add_node("a", lambda s: {})
    builder.add_edge(START, "a")
    app = builder.compile()
    assert app.invoke({}) is None
    assert list(app.stream({}, stream_mode=["values", "updates"])) == [("updates", {"a": None})]


def test_input_is_applied_in_step_zero_and_first_node_runs_in_step_one():
    """L-8, L-24: the hidden __start__ step is step 0; the first user node runs at step 1."""
    steps = []

    def a(state):
        steps.append(get_config()["metadata"]["langgraph_step"])
        return {"x": state["x"] + 1}

    builder = StateGraph(XLog)
    builder.add_node("a", a)
    builder.add_node("b", a)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    app = builder.compile()
    assert list(app.stream({"x": 0}, stream_mode="values")) == [
        {"x": 0, "log": []},
        {"x": 1, "log": []},
        {"x": 2, "log": []},
    ]
    assert steps == [1, 2]


# --- L-5 Command as input without a checkpointer -------------------------------------


def test_command_input_without_checkpointer_is_also_start_input():
    """L-5: without a checkpointer a Command input is applied twice and START edges fire
    alongside the goto target, all in step 1."""

    class S(TypedDict):
        v: int
        log: Annotated[list, operator.add]

    builder = StateGraph(S)
    builder.add_node("first", append("first"))
    builder.add_node("other", append("other"))
    builder.add_edge(START, "first")
    app = builder.compile()
    chunks = list(
        app.stream(Command(goto="other", update={"v": 1, "log": ["U"]}), stream_mode=["values", "debug"])
    )
    values = [c for mode, c in chunks if mode == "values"]
    assert values == [
        {"v": 1, "log": ["U", "U"]},
        {"v": 1, "log": ["U", "U", "first", "other"]},
    ]
    started = sorted(
        (c["step"], c["payload"]["name"]) for mode, c in chunks if mode == "debug" and c["type"] == "task"
    )
    assert started == [(1, "first"), (1, "other")]


def test_command_update_input_without_checkpointer_applies_reducer_twice():
    """L-5: Command(update=...) as input with no checkpointer -> reducer sees it twice."""
    builder = StateGraph(Log)
    builder.add_node("first", append("first"))
    builder.add_edge(START, "first")
    assert builder.compile().invoke(Command(update={"log": ["only"]})) == {"log": ["only", "only", "first"]}


def test_command_resume_without_checkpointer_raises():
    """L-5: Command(resume=...) needs a checkpointer."""
    app, seen = counter_loop()
    text = "Cannot use Command(resume=...) without checkpointer"
    with pytest.raises(RuntimeError, match=re.escape(text)) as info:
        app.invoke(Command(resume="x"))
    assert type(info.value) is RuntimeError
    assert seen == []


# --- L-10 recursion limit -------------------------------------------------------------


def test_recursion_error_class_and_text():
    """L-10: GraphRecursionError (a RecursionError) with LangGraph's exact text."""
    app, _ = counter_loop()
    with pytest.raises(GraphRecursionError) as info:
        app.invoke({"x": 0}, {"recursion_limit": 3})
    assert isinstance(info.value, RecursionError)
    assert str(info.value) == RECURSION_TEXT.format(n=3)


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_endless_loop_runs_its_node_limit_times(limit):
    """L-10: an endless loop executes its node exactly N times before the error."""
    app, seen = counter_loop()
    with pytest.raises(GraphRecursionError, match=re.escape(RECURSION_TEXT.format(n=limit))):
        app.invoke({"x": 0}, {"recursion_limit": limit})
    assert seen == list(range(limit))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_chain_of_k_nodes_needs_limit_k_plus_one(k):
    """L-10: a chain of k nodes succeeds iff k+1 <= recursion_limit (O-4 table)."""
    assert chain(k).invoke({"x": 0}, {"recursion_limit": k + 1}) == {"x": k, "log": []}
    assert chain(k).invoke({"x": 0}, {"recursion_limit": k + 5}) == {"x": k, "log": []}


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_chain_finishing_exactly_at_limit_still_errors(k):
    """L-10: with limit k all k nodes run, but the tick that would see completion raises."""
    chunks = []
    with pytest.raises(GraphRecursionError, match=re.escape(RECURSION_TEXT.format(n=k))):
        for chunk in chain(k).stream({"x": 0}, {"recursion_limit": k}):
            chunks.append(chunk)
    assert chunks == [{f"n{i}": {"x": i}} for i in range(1, k + 1)]


def test_chain_shorter_limit_stops_early():
    """L-10: limit 1 on a chain of 3 runs only n1 (ticks 0 and 1) and then raises."""
    chunks = []
    with pytest.raises(GraphRecursionError, match=re.escape(RECURSION_TEXT.format(n=1))):
        for chunk in chain(3).stream({"x": 0}, {"recursion_limit": 1}, stream_mode="values"):
            chunks.append(chunk)
    assert chunks == [{"x": 0, "log": []}, {"x": 1, "log": []}]


def test_recursion_error_raised_after_flushing_chunks():
    """L-10, S-11: chunks produced before the limit are all yielded, then the error."""
    app, _ = counter_loop()
    chunks = []
    with pytest.raises(GraphRecursionError):
        for chunk in app.stream({"x": 0}, {"recursion_limit": 3}):
            chunks.append(chunk)
    assert chunks == [{"inc": {"x": 1}}, {"inc": {"x": 2}}, {"inc": {"x": 3}}]


# --- L-25 managed values ----------------------------------------------------------------


def test_managed_values_per_step():
    """L-25: RemainingSteps = stop - step, IsLastStep = (step == stop - 1), per task."""

    class S(TypedDict):
        rem: RemainingSteps
        last: IsLastStep
        log: Annotated[list, operator.add]

    builder = StateGraph(S)
    builder.add_node("m", lambda s: {"log": [(s["rem"], s["last"])]})
    builder.add_edge(START, "m")
    builder.add_edge("m", "m")
    values = []
    with pytest.raises(GraphRecursionError):
        for chunk in builder.compile().stream({"log": []}, {"recursion_limit": 4}, stream_mode="values"):
            values.append(chunk)
    assert values[-1] == {"log": [(3, False), (2, False), (1, True), (0, False)]}
    assert "rem" not in values[0] and "last" not in values[0]


# --- L-20 … L-22 task preparation and order ---------------------------------------------


def test_pull_tasks_start_in_node_name_order():
    """L-21, L-22: PULL tasks of a step are prepared in node-name order, not insertion order."""
    builder = StateGraph(Log)
    for name in ["b", "c", "a"]:
        builder.add_node(name, append(name))
    for name in ["c", "b", "a"]:
        builder.add_edge(START, name)
    app = builder.compile()
    started = [c["name"] for c in app.stream({"log": []}, stream_mode="tasks") if "input" in c]
    assert started == ["a", "b", "c"]


def test_push_tasks_start_before_pull_tasks():
    """L-20, L-22: PUSH (Send) tasks by index come before PULL tasks in the tasks stream."""
    builder = StateGraph(Log)
    builder.add_node("a", append("a"))
    builder.add_node("w", lambda arg: {"log": [arg["tag"]]})
    builder.add_conditional_edges(START, lambda s: ["a", Send("w", {"tag": "w0"}), Send("w", {"tag": "w1"})])
    app = builder.compile()
    started = [
        (c["name"], c["input"], c["triggers"])
        for c in app.stream({"log": []}, stream_mode="tasks")
        if "input" in c
    ]
    assert started == [
        ("w", {"tag": "w0"}, ("__pregel_push",)),
        ("w", {"tag": "w1"}, ("__pregel_push",)),
        ("a", {"log": []}, ("branch:to:a",)),
    ]


def test_join_node_triggers_list_all_its_trigger_channels():
    """L-21, K-3: a join target's task triggers are its sorted trigger channels."""
    builder = StateGraph(Log)
    for name in "abcd":
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    app = builder.compile()
    started = [
        (c["name"], c["triggers"]) for c in app.stream({"log": []}, stream_mode="tasks") if "input" in c
    ]
    assert started == [
        ("a", ("branch:to:a",)),
        ("b", ("branch:to:b",)),
        ("c", ("branch:to:c",)),
        ("d", ("branch:to:d", "join:b+c:d")),
    ]


# --- L-30 running a step ------------------------------------------------------------------


def test_parallel_tasks_see_values_of_step_start():
    """L-30: writes of a task are invisible to siblings of the same step (BSP)."""

    class S(TypedDict):
        v: int
        log: Annotated[list, operator.add]

    def w(state):
        return {"v": 7}

    def r(state):
        time.sleep(0.01)
        return {"log": [f"r saw {state['v']}"]}

    builder = StateGraph(S)
    builder.add_node("w", w)
    builder.add_node("r", r)
    builder.add_node("r2", lambda s: {"log": [f"r2 saw {s['v']}"]})
    builder.add_edge(START, "w")
    builder.add_edge(START, "r")
    builder.add_edge("w", "r2")
    assert builder.compile().invoke({"v": 0, "log": []}) == {"v": 7, "log": ["r saw 0", "r2 saw 7"]}


def _barrier_graph(names: list):
    """Parallel nodes from START that each wait until all of them reached a barrier."""
    barrier = threading.Barrier(len(names), timeout=5)

    def meet(name):
        def node(state):
            barrier.wait()
            return {"log": [name]}

        return node

    builder = StateGraph(Log)
    for name in names:
        builder.add_node(name, meet(name))
        builder.add_edge(START, name)
    return builder.compile()


def test_parallel_sync_tasks_run_concurrently():
    """L-30: the sync API runs a step's tasks at the same time (both reach the barrier)."""
    assert _barrier_graph(["p1", "p2"]).invoke({"log": []}) == {"log": ["p1", "p2"]}


@pytest.mark.parametrize("api", ["invoke", "stream"])
def test_many_parallel_sync_tasks_all_start(api):
    """L-30: every task of a wide step runs at the same time (all reach the barrier),
    though worker threads start one after another. The width stays within the default
    pool size, min(32, CPUs + 4), as in LangGraph."""
    names = [f"p{i:02d}" for i in range(5)]
    app = _barrier_graph(names)
    if api == "invoke":
        out = app.invoke({"log": []})
    else:
        out = list(app.stream({"log": []}, stream_mode="values"))[-1]
    assert out == {"log": names}


def test_parallel_async_tasks_run_concurrently():
    """L-30: the async API runs a step's async tasks concurrently (each awaits the other)."""

    async def main():
        ev1, ev2 = asyncio.Event(), asyncio.Event()

        async def e1(state):
            ev1.set()
            await asyncio.wait_for(ev2.wait(), 5)
            return {"log": ["e1"]}

        async def e2(state):
            ev2.set()
            await asyncio.wait_for(ev1.wait(), 5)
            return {"log": ["e2"]}

        builder = StateGraph(Log)
        builder.add_node("e1", e1)
        builder.add_node("e2", e2)
        builder.add_edge(START, "e1")
        builder.add_edge(START, "e2")
        return await builder.compile().ainvoke({"log": []})

    assert asyncio.run(main()) == {"log": ["e1", "e2"]}


def test_async_api_runs_sync_and_async_tasks_concurrently():
    """L-30: under ainvoke a sync node runs beside an async node of the same step."""
    barrier = threading.Barrier(2, timeout=5)

    async def a(state):
        await asyncio.to_thread(barrier.wait)
        return {"log": ["a"]}

    def s(state):
        barrier.wait()
        return {"log": ["s"]}

    builder = StateGraph(Log)
    builder.add_node("a", a)
    builder.add_node("s", s)
    builder.add_edge(START, "a")
    builder.add_edge(START, "s")
    assert asyncio.run(builder.compile().ainvoke({"log": []})) == {"log": ["a", "s"]}


def _concurrency_probe(make_async):
    """Six parallel nodes; returns (graph, dict with the max simultaneous running count)."""
    lock = threading.Lock()
    stats = {"running": 0, "max": 0}

    def enter():
        with lock:
            stats["running"] += 1
            stats["max"] = max(stats["max"], stats["running"])

    def leave():
        with lock:
            stats["running"] -= 1

    if make_async:

        async def node(state):
            enter()
            await asyncio.sleep(0.02)
            leave()
            return {"log": [1]}

    else:

        def node(state):
            enter()
            time.sleep(0.02)
            leave()
            return {"log": [1]}

    builder = StateGraph(Log)
    for i in range(6):
        builder.add_node(f"n{i}", node)
        builder.add_edge(START, f"n{i}")
    return builder.compile(), stats


@pytest.mark.parametrize("limit", [1, 2])
def test_max_concurrency_limits_parallel_sync_tasks(limit):
    """L-30: config max_concurrency caps the tasks running at once (sync API)."""
    app, stats = _concurrency_probe(make_async=False)
    assert app.invoke({"log": []}, {"max_concurrency": limit}) == {"log": [1] * 6}
    assert stats["max"] == limit


@pytest.mark.parametrize("limit", [1, 2])
def test_max_concurrency_limits_parallel_async_tasks(limit):
    """L-30: config max_concurrency caps the tasks running at once (async API)."""
    app, stats = _concurrency_probe(make_async=True)
    assert asyncio.run(app.ainvoke({"log": []}, {"max_concurrency": limit})) == {"log": [1] * 6}
    assert stats["max"] == limit


def test_without_max_concurrency_all_tasks_of_a_step_overlap():
    """L-30: with no max_concurrency, all six tasks of the step run at the same time."""
    app, stats = _concurrency_probe(make_async=True)
    asyncio.run(app.ainvoke({"log": []}))
    assert stats["max"] == 6


# --- L-33 exceptions and interrupts in one step ---------------------------------------------


def test_exception_takes_precedence_over_interrupt():
    """L-33: an interrupt in one task and a real exception in another -> the exception."""

    def ask(state):
        interrupt("q")
        return {}

    def bad(state):
        time.sleep(0.02)
        raise KeyError("k")

    builder = StateGraph(Log)
    builder.add_node("ask", ask)
    builder.add_node("bad", bad)
    builder.add_edge(START, "ask")
    builder.add_edge(START, "bad")
    with pytest.raises(KeyError):
        builder.compile().invoke({"log": []})


# --- L-40 write order ------------------------------------------------------------------------


def test_pull_writes_applied_by_node_name_not_completion():
    """L-40, O-1: updates arrive in completion order, writes apply in node-name order."""
    app = fan_out(["b", "a"], delays={"a": 0.03})
    chunks = list(app.stream({"log": []}, stream_mode=["updates", "values"]))
    assert chunks == [
        ("values", {"log": []}),
        ("updates", {"b": {"log": ["b"]}}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"log": ["a", "b"]}),
    ]


def test_pull_writes_precede_push_writes_then_send_index():
    """L-40, O-11: PULL writes (by name) before PUSH writes (by Send index),
    whatever the completion order."""
    builder = StateGraph(Log)
    builder.add_node("z", append("z", 0.04))

    def w(arg):
        time.sleep(arg["delay"])
        return {"log": [arg["tag"]]}

    builder.add_node("w", w)
    builder.add_conditional_edges(
        START,
        lambda s: ["z", Send("w", {"tag": "w0", "delay": 0.02}), Send("w", {"tag": "w1", "delay": 0.0})],
    )
    chunks = list(builder.compile().stream({"log": []}, stream_mode=["updates", "values"]))
    assert chunks == [
        ("values", {"log": []}),
        ("updates", {"w": {"log": ["w1"]}}),
        ("updates", {"w": {"log": ["w0"]}}),
        ("updates", {"z": {"log": ["z"]}}),
        ("values", {"log": ["z", "w0", "w1"]}),
    ]


def test_send_index_order_is_numeric_not_lexicographic():
    """L-40: Send indexes are zero-padded, so task 10 sorts after task 9."""
    builder = StateGraph(Log)
    builder.add_node("w", lambda arg: {"log": [arg]})
    builder.add_conditional_edges(START, lambda s: [Send("w", i) for i in range(12)])
    assert builder.compile().invoke({"log": []}) == {"log": list(range(12))}


def test_write_order_async_matches_sync():
    """L-40: the async API applies writes in the same task-path order."""

    def slow(name, delay):
        async def node(state):
            await asyncio.sleep(delay)
            return {"log": [name]}

        return node

    builder = StateGraph(Log)
    builder.add_node("a", slow("a", 0.03))
    builder.add_node("b", slow("b", 0.0))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    app = builder.compile()

    async def main():
        return [c async for c in app.astream({"log": []}, stream_mode=["updates", "values"])]

    assert asyncio.run(main()) == [
        ("values", {"log": []}),
        ("updates", {"b": {"log": ["b"]}}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"log": ["a", "b"]}),
    ]


# --- joins (B-21, K-1) --------------------------------------------------------------------


def test_join_waits_for_all_sources():
    """B-21, L-44: a waiting edge runs its end once, after every start has finished."""
    builder = StateGraph(Log)
    for name in ["a", "b1", "b2", "c"]:
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b1")
    builder.add_edge("b1", "b2")
    builder.add_edge(["a", "b2"], "c")
    builder.add_edge("c", END)
    values = list(builder.compile().stream({"log": []}, stream_mode="values"))
    assert values == [
        {"log": []},
        {"log": ["a", "b1"]},
        {"log": ["a", "b1", "b2"]},
        {"log": ["a", "b1", "b2", "c"]},
    ]


def test_join_rearms_after_its_end_ran():
    """B-21, L-43: after the end of a join runs, it waits for all starts again."""
    builder = StateGraph(Log)
    for name in "abcd":
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    builder.add_conditional_edges("d", lambda s: END if s["log"].count("d") >= 2 else "a")
    assert builder.compile().invoke({"log": []}) == {"log": ["a", "b", "c", "d", "a", "b", "c", "d"]}


def test_join_and_plain_edge_to_same_node_run_it_twice():
    """B-21, K-3: a plain edge and a join into one node trigger it separately."""
    builder = StateGraph(Log)
    for name in "abcd":
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    builder.add_edge("a", "d")
    values = list(builder.compile().stream({"log": []}, stream_mode="values"))
    assert values == [
        {"log": []},
        {"log": ["a"]},
        {"log": ["a", "b", "c", "d"]},
        {"log": ["a", "b", "c", "d", "d"]},
    ]


# --- L-45 ephemeral clearing ---------------------------------------------------------------


def test_ephemeral_state_value_visible_only_in_next_step():
    """L-45, C-4: an EphemeralValue written in step s is readable in s+1 only."""

    class S(TypedDict):
        log: Annotated[list, operator.add]
        e: Annotated[str, EphemeralValue]

    builder = StateGraph(S)
    builder.add_node("a", lambda s: {"e": "E", "log": ["a"]})
    builder.add_node("b", lambda s: {"log": [f"b:{s.get('e')}"]})
    builder.add_node("c", lambda s: {"log": [f"c:{s.get('e')}"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    app = builder.compile()
    assert list(app.stream({"log": []}, stream_mode="values")) == [
        {"log": []},
        {"log": ["a"], "e": "E"},
        {"log": ["a", "b:E"]},
        {"log": ["a", "b:E", "c:None"]},
    ]
    assert app.invoke({"log": []}) == {"log": ["a", "b:E", "c:None"]}


def test_edge_trigger_is_cleared_after_one_step():
    """L-45: a node triggered once runs once, even while a longer sibling branch runs on."""
    builder = StateGraph(Log)
    for name in ["a", "b1", "b2", "b3"]:
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b1")
    builder.add_edge("b1", "b2")
    builder.add_edge("b2", "b3")
    updates = list(builder.compile().stream({"log": []}))
    assert sorted(next(iter(u)) for u in updates) == ["a", "b1", "b2", "b3"]


# --- L-46 / L-48 finish() and defer ----------------------------------------------------------


def _uneven_branches(defer):
    """START -> x -> z and START -> y1 -> y2 -> z (z optionally deferred)."""
    builder = StateGraph(Log)
    for name in ["x", "y1", "y2"]:
        builder.add_node(name, append(name))
    builder.add_node("z", append("z"), defer=defer)
    builder.add_edge(START, "x")
    builder.add_edge(START, "y1")
    builder.add_edge("y1", "y2")
    builder.add_edge("x", "z")
    builder.add_edge("y2", "z")
    return builder.compile()


def test_node_without_defer_runs_once_per_arrival():
    """L-48, O-11: without defer, z runs once per incoming branch (twice here)."""
    values = list(_uneven_branches(defer=False).stream({"log": []}, stream_mode="values"))
    assert values == [
        {"log": []},
        {"log": ["x", "y1"]},
        {"log": ["x", "y1", "y2", "z"]},
        {"log": ["x", "y1", "y2", "z", "z"]},
    ]


def test_deferred_node_runs_once_when_nothing_else_is_left():
    """L-48, L-46, O-11: defer=True runs z once, after all other work is done."""
    values = list(_uneven_branches(defer=True).stream({"log": []}, stream_mode="values"))
    assert values == [
        {"log": []},
        {"log": ["x", "y1"]},
        {"log": ["x", "y1", "y2"]},
        {"log": ["x", "y1", "y2", "z"]},
    ]


def test_deferred_node_waits_for_a_loop_to_end():
    """L-46: finish() fires only when no updated channel triggers any node."""
    builder = StateGraph(Log)
    builder.add_node("x", append("x"))
    builder.add_node("z", append("z"), defer=True)
    builder.add_node("loop", append("loop"))
    builder.add_edge(START, "x")
    builder.add_edge("x", "z")
    builder.add_edge(START, "loop")
    builder.add_conditional_edges("loop", lambda s: "loop" if s["log"].count("loop") < 3 else END)
    assert builder.compile().invoke({"log": []}) == {"log": ["loop", "x", "loop", "loop", "z"]}


def test_deferred_node_can_continue_the_graph():
    """L-46, L-48: a deferred node's outgoing edges run after it."""
    builder = StateGraph(Log)
    builder.add_node("x", append("x"))
    builder.add_node("z", append("z"), defer=True)
    builder.add_node("after", append("after"))
    builder.add_edge(START, "x")
    builder.add_edge("x", "z")
    builder.add_edge("z", "after")
    values = list(builder.compile().stream({"log": []}, stream_mode="values"))
    assert values == [{"log": []}, {"log": ["x"]}, {"log": ["x", "z"]}, {"log": ["x", "z", "after"]}]


def test_join_into_deferred_node_waits_for_finish():
    """K-1, C-9, L-46: a join whose end is deferred runs after the rest of the graph."""
    builder = StateGraph(Log)
    for name in ["a", "b1", "b2", "q"]:
        builder.add_node(name, append(name))
    builder.add_node("c", append("c"), defer=True)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b1")
    builder.add_edge("b1", "b2")
    builder.add_edge("b2", "q")
    builder.add_edge(["a", "b1"], "c")
    values = list(builder.compile().stream({"log": []}, stream_mode="values"))
    assert values == [
        {"log": []},
        {"log": ["a", "b1"]},
        {"log": ["a", "b1", "b2"]},
        {"log": ["a", "b1", "b2", "q"]},
        {"log": ["a", "b1", "b2", "q", "c"]},
    ]


# --- L-24 task config, B-16 injection, B-8 context ---------------------------------------------


def test_get_config_inside_node_has_task_metadata_and_user_keys():
    """L-24: get_config() in a node returns the task config: user configurable keys,
    user metadata, node metadata and langgraph_step/node/triggers/path/checkpoint_ns."""
    seen = {}

    def a(state):
        cfg = get_config()
        seen["configurable"] = cfg["configurable"]
        seen["metadata"] = cfg["metadata"]
        seen["tags"] = cfg.get("tags")
        return {"log": ["a"]}

    builder = StateGraph(Log)
    builder.add_node("a", a, metadata={"mk": "mv"})
    builder.add_edge(START, "a")
    config = {"configurable": {"user": "u1", "n": 3}, "metadata": {"tag": "T"}, "tags": ["t1"]}
    assert builder.compile().invoke({"log": []}, config) == {"log": ["a"]}
    assert seen["configurable"]["user"] == "u1"
    assert seen["configurable"]["n"] == 3
    md = seen["metadata"]
    assert md["langgraph_step"] == 1
    assert md["langgraph_node"] == "a"
    assert md["langgraph_triggers"] == ("branch:to:a",)
    assert md["langgraph_path"] == ("__pregel_pull", "a")
    assert md["langgraph_checkpoint_ns"].startswith("a:")
    assert md["tag"] == "T"
    assert md["mk"] == "mv"
    assert seen["tags"] == ["t1"]


def test_task_metadata_of_push_tasks_and_later_steps():
    """L-24, L-20: Send tasks carry path ('__pregel_push', i, False) and their step."""
    rows = []
    lock = threading.Lock()

    def record(arg):
        md = get_config()["metadata"]
        with lock:
            rows.append(
                (md["langgraph_step"], md["langgraph_node"], md["langgraph_triggers"], md["langgraph_path"])
            )
        return None

    builder = StateGraph(Log)
    builder.add_node("a", record)
    builder.add_node("w", record)
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", lambda s: [Send("w", 0), Send("w", 1)])
    builder.compile().invoke({"log": []})
    assert sorted(rows, key=repr) == sorted(
        [
            (1, "a", ("branch:to:a",), ("__pregel_pull", "a")),
            (2, "w", ("__pregel_push",), ("__pregel_push", 0, False)),
            (2, "w", ("__pregel_push",), ("__pregel_push", 1, False)),
        ],
        key=repr,
    )


def test_config_parameter_is_injected():
    """B-16: a `config` parameter receives the same task config as get_config()."""
    seen = {}

    def a(state, config):
        seen["same"] = config is get_config()
        seen["k"] = config["configurable"].get("k")
        seen["node"] = config["metadata"]["langgraph_node"]
        return {"log": ["a"]}

    builder = StateGraph(Log)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    builder.compile().invoke({"log": []}, {"configurable": {"k": "K"}})
    assert seen == {"same": True, "k": "K", "node": "a"}


def test_config_parameter_is_injected_into_async_nodes():
    """B-16: async nodes get `config` too, and get_config() works inside them."""
    seen = {}

    async def a(state, config):
        await asyncio.sleep(0)
        seen["k"] = config["configurable"].get("k")
        seen["node"] = get_config()["metadata"]["langgraph_node"]
        return {"log": ["a"]}

    builder = StateGraph(Log)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    asyncio.run(builder.compile().ainvoke({"log": []}, {"configurable": {"k": 5}}))
    assert seen == {"k": 5, "node": "a"}


@dataclass
class Ctx:
    user: str
    n: int = 1


def _context_graph():
    def a(state, runtime: Runtime[Ctx]):
        ctx = runtime.context
        return {"log": [f"a:{type(ctx).__name__}:{ctx.user}:{ctx.n}"]}

    async def b(state, runtime: Runtime[Ctx]):
        await asyncio.sleep(0)
        return {"log": [f"b:{runtime.context.user}"]}

    builder = StateGraph(Log, context_schema=Ctx)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile()


def test_runtime_context_is_visible_in_nodes():
    """B-8, B-16: invoke(..., context=Ctx(...)) is runtime.context in sync and async nodes."""
    app = _context_graph()
    assert asyncio.run(app.ainvoke({"log": []}, context=Ctx(user="u"))) == {"log": ["a:Ctx:u:1", "b:u"]}


def test_dict_context_is_coerced_to_dataclass_schema():
    """B-8: a dict context is turned into the dataclass context_schema."""
    app = _context_graph()
    assert asyncio.run(app.ainvoke({"log": []}, context={"user": "d", "n": 5})) == {
        "log": ["a:Ctx:d:5", "b:d"]
    }


def test_runtime_context_without_schema_is_passed_as_is():
    """B-8: without context_schema the context is passed through; absent -> None."""

    def c(state, runtime: Runtime):
        return {"log": [runtime.context]}

    builder = StateGraph(Log)
    builder.add_node("c", c)
    builder.add_edge(START, "c")
    app = builder.compile()
    assert app.invoke({"log": []}) == {"log": [None]}
    assert app.invoke({"log": []}, context={"raw": 1}) == {"log": [{"raw": 1}]}
