"""Every run starts from empty channels (L-8, C-7), also when lgembed reuses the channel
objects of an earlier run of the same graph (`Pregel._recycle_channels`).

Each test runs the same graph several times, in the ways runs can end (normally,
interrupted by an error, streamed to the end or abandoned), and checks that nothing one
run wrote, or changed in place, reaches the next. Every expected value was checked
against LangGraph 1.2.22 through the `langgraph` -> `lgembed` import alias.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest

from lgembed.channels import BinaryOperatorAggregate, Topic
from lgembed.graph import END, START, StateGraph
from lgembed.types import Send


class S(TypedDict, total=False):
    a: int
    b: int
    log: Annotated[list, operator.add]


def _graph(checkpointer: Any = None) -> Any:
    """a -> (b only when the input says so); both write their own key."""

    def a(s: S) -> dict:
        return {"a": s.get("a", 0) + 1, "log": ["a"]}

    def b(s: S) -> dict:
        return {"b": 1, "log": ["b"]}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b" if s["a"] > 1 else END, ["b", END])
    return g.compile(checkpointer=checkpointer)


def test_a_key_written_by_one_run_is_empty_in_the_next():
    app = _graph()
    assert app.invoke({"a": 1}) == {"a": 2, "b": 1, "log": ["a", "b"]}
    # the second run never writes b: its channel must be empty again
    assert app.invoke({"a": 0}) == {"a": 1, "log": ["a"]}
    assert app.invoke({"a": 0}) == {"a": 1, "log": ["a"]}


def test_streamed_runs_and_invoked_runs_do_not_share_values():
    app = _graph()
    assert list(app.stream({"a": 1}, stream_mode="values"))[-1] == {"a": 2, "b": 1, "log": ["a", "b"]}
    assert app.invoke({"a": 0}) == {"a": 1, "log": ["a"]}
    assert [c for c in app.stream({"a": 0}, stream_mode="updates")] == [{"a": {"a": 1, "log": ["a"]}}]
    assert app.invoke({"a": 0}) == {"a": 1, "log": ["a"]}


def test_an_abandoned_stream_leaves_nothing_to_the_next_run():
    app = _graph()
    chunks = app.stream({"a": 1}, stream_mode="values")
    next(chunks)
    next(chunks)
    chunks.close()
    assert app.invoke({"a": 0}) == {"a": 1, "log": ["a"]}


def test_a_failed_run_leaves_nothing_to_the_next_run():
    calls = []

    def a(s: S) -> dict:
        return {"a": 5, "log": ["a"]}

    def boom(s: S) -> dict:
        calls.append(dict(s))
        if len(calls) == 1:
            raise ValueError("first run fails")
        return {"b": 2}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("boom", boom)
    g.add_edge(START, "a")
    g.add_edge("a", "boom")
    app = g.compile()
    with pytest.raises(ValueError, match="first run fails"):
        app.invoke({"b": 7})
    assert app.invoke({"log": []}) == {"a": 5, "b": 2, "log": ["a"]}
    assert calls == [{"a": 5, "b": 7, "log": ["a"]}, {"a": 5, "log": ["a"]}]


def test_a_reducer_value_changed_in_place_does_not_reach_the_next_run():
    # C-7: a reducer channel starts from typ() in every run; a node that mutates the
    # list it read (without writing) must not leave its change for the next run
    class L(TypedDict, total=False):
        items: Annotated[list, operator.add]
        n: int

    def sneaky(s: L) -> dict:
        s["items"].append("leaked")
        return {"n": len(s["items"])}

    g = StateGraph(L)
    g.add_node("sneaky", sneaky)
    g.add_edge(START, "sneaky")
    app = g.compile()
    assert app.invoke({"n": 0}) == {"items": ["leaked"], "n": 1}
    assert app.invoke({"n": 0}) == {"items": ["leaked"], "n": 1}


def test_sends_of_one_run_are_not_replayed_in_the_next():
    class F(TypedDict, total=False):
        fan: int
        out: Annotated[list, operator.add]

    def start(s: F) -> dict:
        return {}

    def work(x: int) -> dict:
        return {"out": [x]}

    g = StateGraph(F)
    g.add_node("start", start)
    g.add_node("work", work)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", lambda s: [Send("work", i) for i in range(s["fan"])], ["work"])
    app = g.compile()
    assert app.invoke({"fan": 3}) == {"fan": 3, "out": [0, 1, 2]}
    assert app.invoke({"fan": 0}) == {"fan": 0, "out": []}
    assert app.invoke({"fan": 2}) == {"fan": 2, "out": [0, 1]}


_made: list = []


class _Counting(BinaryOperatorAggregate):
    def from_checkpoint(self, checkpoint: Any) -> Any:
        _made.append(1)
        return super().from_checkpoint(checkpoint)


class _C(TypedDict, total=False):
    total: Annotated[int, _Counting(int, operator.add)]


def test_a_custom_channel_is_made_anew_for_every_run():
    made = _made
    g = StateGraph(_C)
    g.add_node("add", lambda s: {"total": 1})
    g.add_edge(START, "add")
    app = g.compile()
    before = len(made)
    for _ in range(3):
        assert app.invoke({"total": 10}) == {"total": 11}
    assert len(made) - before >= 3


def test_runs_in_threads_at_the_same_time_keep_their_own_values():
    app = _graph()
    errors: list = []
    barrier = threading.Barrier(4)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(200):
                if i % 2:
                    assert app.invoke({"a": 1}) == {"a": 2, "b": 1, "log": ["a", "b"]}
                else:
                    assert app.invoke({"a": 0}) == {"a": 1, "log": ["a"]}
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


class _T(TypedDict, total=False):
    seen: Annotated[list, Topic(int, accumulate=True)]
    go: bool


def test_a_topic_written_by_one_run_is_empty_in_the_next():
    g = StateGraph(_T)
    g.add_node("put", lambda s: {"seen": [1, 2]} if s["go"] else {})
    g.add_edge(START, "put")
    app = g.compile()
    assert app.invoke({"go": True}) == {"seen": [1, 2], "go": True}
    assert app.invoke({"go": False}) == {"go": False}
    assert list(app.stream({"go": True}, stream_mode="values"))[-1] == {"seen": [1, 2], "go": True}
    assert app.invoke({"go": False}) == {"go": False}


def test_async_runs_one_after_another_and_at_the_same_time_keep_their_own_values():
    import asyncio

    app = _graph()

    async def main() -> list:
        first = await app.ainvoke({"a": 1})
        second = await app.ainvoke({"a": 0})
        together = await asyncio.gather(*(app.ainvoke({"a": i % 2}) for i in range(6)))
        streamed = [c async for c in app.astream({"a": 0}, stream_mode="values")]
        last = await app.ainvoke({"a": 0})
        return [first, second, together, streamed[-1], last]

    first, second, together, streamed, last = asyncio.run(main())
    assert first == {"a": 2, "b": 1, "log": ["a", "b"]}
    assert second == {"a": 1, "log": ["a"]}
    assert together == [{"a": 1, "log": ["a"]}, {"a": 2, "b": 1, "log": ["a", "b"]}] * 3
    assert streamed == {"a": 1, "log": ["a"]}
    assert last == {"a": 1, "log": ["a"]}


def test_checkpointed_runs_on_new_and_existing_threads_keep_their_own_values():
    from lgembed.checkpoint.memory import InMemorySaver

    app = _graph(InMemorySaver())

    def cfg(t: str) -> dict:
        return {"configurable": {"thread_id": t}}

    assert app.invoke({"a": 1}, cfg("t1")) == {"a": 2, "b": 1, "log": ["a", "b"]}
    assert app.invoke({"a": 0}, cfg("t2")) == {"a": 1, "log": ["a"]}
    assert [c for c in app.stream({"a": 0}, cfg("t3"), stream_mode="updates")] == [{"a": {"a": 1, "log": ["a"]}}]
    assert app.invoke({"a": 0}, cfg("t4")) == {"a": 1, "log": ["a"]}
    # an existing thread continues from its own checkpoint
    assert app.invoke({"a": 0}, cfg("t1")) == {"a": 1, "b": 1, "log": ["a", "b", "a"]}
    assert app.get_state(cfg("t1")).values == {"a": 1, "b": 1, "log": ["a", "b", "a"]}
    assert app.get_state(cfg("t2")).values == {"a": 1, "log": ["a"]}
    assert app.get_state(cfg("t4")).values == {"a": 1, "log": ["a"]}
    assert app.invoke({"a": 1}, cfg("t5")) == {"a": 2, "b": 1, "log": ["a", "b"]}
