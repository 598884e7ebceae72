"""The engine's state view (docs/DESIGN.md §3): whole-state reads of nodes and routers come
from a dict kept current by each step's writes; they must see exactly what a walk over
the channels would (values, key order, a router's own-writes view, after update_state
and checkpoint restores, with reducers and with keys that become available late)."""

import operator
from typing import Annotated, TypedDict

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.graph import END, START, StateGraph


class S(TypedDict, total=False):
    a: int
    b: int
    log: Annotated[list, operator.add]
    c: str


def _graph(seen: list, checkpointer=None, interrupt_before=None):
    def first(state):
        seen.append(("first", list(state.items())))
        return {"b": state.get("b", 0) + 1, "log": ["first"]}

    def second(state):
        seen.append(("second", list(state.items())))
        return {"c": "x" * state["b"], "log": ["second"]}

    def route(state):
        # a router reads the state after its own node's writes (N-4)
        seen.append(("route", list(state.items())))
        return "second" if state["b"] < 3 else END

    g = StateGraph(S)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_conditional_edges("first", route)
    g.add_edge("second", "first")
    return g.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


def test_keys_that_become_available_keep_schema_order():
    # expected values and key orders as LangGraph 1.2 produces them (a router without
    # an input schema gets the node's return merged in front, N-4)
    seen: list = []
    out = _graph(seen).invoke({"a": 0})
    assert seen == [
        ("first", [("a", 0), ("log", [])]),
        ("route", [("b", 1), ("log", ["first"]), ("a", 0)]),
        ("second", [("a", 0), ("b", 1), ("log", ["first"])]),
        ("first", [("a", 0), ("b", 1), ("log", ["first", "second"]), ("c", "x")]),
        ("route", [("b", 2), ("log", ["first", "second", "first"]), ("a", 0), ("c", "x")]),
        ("second", [("a", 0), ("b", 2), ("log", ["first", "second", "first"]), ("c", "x")]),
        ("first", [("a", 0), ("b", 2), ("log", ["first", "second", "first", "second"]), ("c", "xx")]),
        ("route", [("b", 3), ("log", ["first", "second", "first", "second", "first"]), ("a", 0), ("c", "xx")]),
    ]
    assert list(out.items()) == [("a", 0), ("b", 3), ("log", ["first", "second", "first", "second", "first"]), ("c", "xx")]


def test_reads_fresh_after_update_state_and_resume():
    seen: list = []
    app = _graph(seen, checkpointer=InMemorySaver(), interrupt_before=["second"])
    cfg = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"a": 0}, cfg) == {"a": 0, "b": 1, "log": ["first"]}
    app.update_state(cfg, {"c": "y", "log": ["edited"]})
    assert seen[-1] == ("route", [("c", "y"), ("log", ["first", "edited"]), ("a", 0), ("b", 1)])
    seen.clear()
    out = app.invoke(None, cfg)
    assert out == {"a": 0, "b": 2, "log": ["first", "edited", "second", "first"], "c": "x"}
    assert seen == [
        ("second", [("a", 0), ("b", 1), ("log", ["first", "edited"]), ("c", "y")]),
        ("first", [("a", 0), ("b", 1), ("log", ["first", "edited", "second"]), ("c", "x")]),
        ("route", [("b", 2), ("log", ["first", "edited", "second", "first"]), ("a", 0), ("c", "x")]),
    ]
    seen.clear()
    out = app.invoke(None, cfg)
    assert seen[0] == ("second", [("a", 0), ("b", 2), ("log", ["first", "edited", "second", "first"]), ("c", "x")])
    assert out == {"a": 0, "b": 3, "log": ["first", "edited", "second", "first", "second", "first"], "c": "xx"}
    assert app.get_state(cfg).values == out


def test_router_sees_two_writes_to_a_reducer_key():
    class R(TypedDict):
        n: int
        log: Annotated[list, operator.add]

    got = []

    def node(state):
        return {"log": ["a"], "n": state["n"] + 1}

    def route(state):
        got.append(dict(state))
        return END

    g = StateGraph(R)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_conditional_edges("node", route)
    assert g.compile().invoke({"n": 1, "log": []}) == {"n": 2, "log": ["a"]}
    assert got == [{"n": 2, "log": ["a"]}]


def test_many_keys_one_written_per_step():
    keys = [f"k{i}" for i in range(50)]
    W = TypedDict("W", {**{k: int for k in keys}, "n": int})

    def node(state):
        assert list(state) == [*keys, "n"]
        n = state["n"]
        return {f"k{n % 50}": n, "n": n + 1}

    def route(state):
        assert state[f"k{(state['n'] - 1) % 50}"] == state["n"] - 1
        return "node" if state["n"] < 120 else END

    g = StateGraph(W)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_conditional_edges("node", route)
    out = g.compile().invoke({**{k: -1 for k in keys}, "n": 0}, {"recursion_limit": 500})
    assert out["n"] == 120
    assert out["k0"] == 100 and out["k19"] == 119 and out["k20"] == 70
