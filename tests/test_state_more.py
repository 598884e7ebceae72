"""State methods on nested graphs and after `__input__` updates (docs/BEHAVIOUR.md §9.3-§9.5, §10).

What is checked: `get_state(subgraphs=True)` reads the child snapshot of a subgraph
compiled with `checkpointer=True` (its history lives under the namespace without task
ids) and of a subgraph a node function invokes (found through the names the function
refers to, as LangGraph's `find_subgraph_pregel` does); the configs a state method
accepts (namespaced, unknown namespace, root `checkpointer=True`, `with_config`);
checkpoints written by `update_state` record no updated channels, so the next run
considers every node (`__input__` on an interrupted thread runs `__start__` and the
pending node in one step); `__copy__` with a list of updates.

Every expected value was first printed by LangGraph 1.2.22 running the same program
(`lgembed` replaced by `langgraph` in the imports). Ids and timestamps are compared
only for equality.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.errors import InvalidUpdateError
from lgembed.graph import START, StateGraph
from lgembed.types import Command, interrupt


class S(TypedDict):
    x: int


class L(TypedDict):
    log: Annotated[list, operator.add]


def _asking_subgraph(checkpointer=None):
    sg = StateGraph(S)
    sg.add_node("ask", lambda s: {"x": interrupt("q")})
    sg.add_edge(START, "ask")
    return sg.compile(checkpointer=checkpointer)


def _asking_log_subgraph(checkpointer=None):
    sg = StateGraph(L)
    sg.add_node("ask", lambda s: {"log": ["ask:" + interrupt("q")]})
    sg.add_node("post", lambda s: {"log": ["post"]})
    sg.add_edge(START, "ask")
    sg.add_edge("ask", "post")
    return sg.compile(checkpointer=checkpointer)


# --- get_state(subgraphs=True) --------------------------------------------------------


def test_checkpointer_true_subgraph_snapshot_reads_namespace_without_task_id():
    g = StateGraph(S)
    g.add_node("sub", _asking_subgraph(checkpointer=True))
    g.add_edge(START, "sub")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"x": 1}, cfg)
    parent = app.get_state(cfg, subgraphs=True)
    child = parent.tasks[0].state
    assert child.values == {"x": 1}
    assert child.next == ("ask",)
    assert sorted(child.config["configurable"]) == ["checkpoint_id", "checkpoint_map", "checkpoint_ns", "thread_id"]
    assert child.config["configurable"]["checkpoint_ns"] == "sub"
    assert child.config["configurable"]["checkpoint_map"] == {
        "": parent.config["configurable"]["checkpoint_id"],
        "sub": child.config["configurable"]["checkpoint_id"],
    }
    assert child.metadata == {"source": "loop", "step": 0, "parents": {"": parent.config["configurable"]["checkpoint_id"]}}
    assert [i.value for i in child.interrupts] == ["q"]


def test_checkpointer_true_subgraph_addressed_with_task_namespace():
    g = StateGraph(L)
    g.add_node("sub", _asking_log_subgraph(checkpointer=True))
    g.add_node("fin", lambda s: {"log": ["fin"]})
    g.add_edge(START, "sub")
    g.add_edge("sub", "fin")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": 7}}
    app.invoke({"log": []}, cfg)
    task = app.get_state(cfg).tasks[0]
    sub_cfg = task.state
    assert sub_cfg == {"configurable": {"thread_id": "7", "checkpoint_ns": f"sub:{task.id}"}}
    assert app.get_state(sub_cfg).next == ("ask",)
    assert [(h.metadata["source"], h.metadata["step"], h.next) for h in app.get_state_history(sub_cfg)] == [
        ("loop", 0, ("ask",)),
        ("input", -1, ("__start__",)),
    ]
    new = app.update_state(sub_cfg, {"log": ["upd"]}, as_node="ask")
    assert new["configurable"]["checkpoint_ns"] == "sub"
    assert app.get_state(sub_cfg).values == {"log": ["upd"]}
    assert app.get_state(sub_cfg).next == ("post",)
    # the namespace alone (no task id) addresses no subgraph: the parent reads it
    # with its own channels
    assert app.get_state({"configurable": {"thread_id": "7", "checkpoint_ns": "sub"}}).values == {"log": ["upd"]}
    assert app.invoke(None, cfg) == {"log": ["upd", "post", "fin"]}


def test_subgraph_invoked_inside_node_function_is_found():
    sub = _asking_subgraph()
    g = StateGraph(S)
    g.add_node("call", lambda s: sub.invoke(s))
    g.add_edge(START, "call")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"x": 1}, cfg)
    parent = app.get_state(cfg, subgraphs=True)
    (task,) = parent.tasks
    child = task.state
    assert (child.next, child.values) == (("ask",), {"x": 1})
    assert child.config["configurable"]["checkpoint_ns"] == f"call:{task.id}"
    assert child.interrupts == task.interrupts
    assert app.get_state(cfg).tasks[0].state == {"configurable": {"thread_id": "1", "checkpoint_ns": f"call:{task.id}"}}


_inner_sub = _asking_log_subgraph()
_inner_sub_off = _asking_log_subgraph(checkpointer=False)


def _call_def(s):
    out = _inner_sub.invoke(s)
    return {"log": out["log"][len(s["log"]):]}


def _call_alias(s):
    g2 = _inner_sub
    return {"log": g2.invoke(s)["log"][len(s["log"]):]}


def _call_off(s):
    return {"log": _inner_sub_off.invoke(s)["log"][len(s["log"]):]}


def _call_closure():
    inner = _asking_log_subgraph()

    def call(s):
        return {"log": inner.invoke(s)["log"][len(s["log"]):]}

    return call


@pytest.mark.parametrize(
    "fn, found",
    [(_call_def, True), (_call_alias, True), (_call_closure(), True), (_call_off, False)],
    ids=["global", "alias", "closure", "checkpointer-false"],
)
def test_subgraph_inside_named_function(fn, found):
    g = StateGraph(L)
    g.add_node("call", fn)
    g.add_node("fin", lambda s: {"log": ["fin"]})
    g.add_edge(START, "call")
    g.add_edge("call", "fin")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"log": []}, cfg)
    (task,) = app.get_state(cfg).tasks
    if not found:
        assert task.state is None
        assert app.get_state(cfg, subgraphs=True).tasks[0].state is None
        return
    sub_cfg = task.state
    assert sub_cfg == {"configurable": {"thread_id": "1", "checkpoint_ns": f"call:{task.id}"}}
    assert app.get_state(cfg, subgraphs=True).tasks[0].state.next == ("ask",)
    assert [(h.metadata["source"], h.metadata["step"]) for h in app.get_state_history(sub_cfg)] == [("loop", 0), ("input", -1)]
    app.update_state(sub_cfg, {"log": ["upd"]}, as_node="ask")
    assert app.get_state(sub_cfg).values == {"log": ["upd"]}


def test_checkpointer_false_subgraph_has_no_child_state():
    g = StateGraph(L)
    g.add_node("sub", _asking_log_subgraph(checkpointer=False))
    g.add_edge(START, "sub")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"log": []}, cfg)
    assert [t.state for t in app.get_state(cfg, subgraphs=True).tasks] == [None]
    with pytest.raises(ValueError, match="^Subgraph zzz not found$"):
        app.update_state({"configurable": {"thread_id": "1", "checkpoint_ns": "zzz:1"}}, {"log": ["x"]})


# --- configs the state methods accept --------------------------------------------------


def test_unknown_nested_namespace_names_whole_path():
    g = StateGraph(L)
    g.add_node("sub", _asking_log_subgraph())
    g.add_edge(START, "sub")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"log": []}, cfg)
    ns = app.get_state(cfg).tasks[0].state["configurable"]["checkpoint_ns"]
    bad = {"configurable": {"thread_id": "1", "checkpoint_ns": ns + "|nope:123"}}
    with pytest.raises(ValueError, match=r"^Subgraph sub\|nope not found$"):
        app.update_state(bad, {"log": ["x"]})
    assert app.get_state(bad).values == {}


def test_root_checkpointer_true_and_false():
    with pytest.raises(RuntimeError, match="^checkpointer=True cannot be used for root graphs.$"):
        _asking_log_subgraph(checkpointer=True).get_state({"configurable": {"thread_id": "1"}})
    with pytest.raises(ValueError, match="^No checkpointer set$"):
        _asking_log_subgraph(checkpointer=False).get_state({"configurable": {"thread_id": "1"}})


def test_empty_thread_snapshot_keeps_caller_config():
    app = _asking_log_subgraph(checkpointer=InMemorySaver())
    st = app.get_state({"configurable": {"thread_id": 1}})
    assert st.config == {"configurable": {"thread_id": "1"}}
    assert (st.values, st.next, st.metadata, st.tasks) == ({}, (), None, ())


def test_with_config_thread_id():
    app = _asking_log_subgraph(checkpointer=InMemorySaver()).with_config(configurable={"thread_id": "1"})
    with pytest.raises(KeyError, match="configurable"):
        app.get_state({})
    assert app.get_state({"configurable": {}}).values == {}
    app.invoke({"log": []}, {"configurable": {"thread_id": "1"}})
    assert app.get_state({"configurable": {}}).next == ("ask",)
    with pytest.raises(KeyError, match="thread_id"):
        list(app.get_state_history({"configurable": {}}))
    with pytest.raises(KeyError, match="thread_id"):
        app.update_state({"configurable": {}}, {"log": ["w"]}, as_node="post")


def test_with_config_empty_thread_snapshot_config():
    """P-20: with_config keeps only what was given; an empty thread's snapshot config is it."""
    app = _asking_log_subgraph(checkpointer=InMemorySaver()).with_config(configurable={"thread_id": "1"})
    assert app.get_state({"configurable": {}}).config == {"configurable": {"thread_id": "1"}}


# --- update_state checkpoints ---------------------------------------------------------


def _interrupted_chain():
    g = StateGraph(L)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b:" + interrupt("q")]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    saver = InMemorySaver()
    app = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "1"}}
    app.invoke({"log": []}, cfg)
    return app, saver, cfg


def test_input_update_on_interrupted_thread_resumes_start_and_pending_node_together():
    app, saver, cfg = _interrupted_chain()
    app.update_state(cfg, {"log": ["in"]}, as_node="__input__")
    assert saver.get_tuple(cfg).checkpoint["updated_channels"] is None
    st = app.get_state(cfg)
    assert (st.next, st.values, st.metadata) == (("__start__", "b"), {"log": ["a"]}, {"source": "input", "step": 2, "parents": {}})
    chunks = list(app.stream(None, cfg, stream_mode="updates"))
    assert [list(c) for c in chunks] == [["__interrupt__"]]
    assert chunks[0]["__interrupt__"][0].value == "q"
    assert [(h.metadata["source"], h.metadata["step"], h.next, h.values) for h in app.get_state_history(cfg)] == [
        ("input", 2, ("__start__", "b"), {"log": ["a"]}),
        ("loop", 1, ("b",), {"log": ["a"]}),
        ("loop", 0, ("a",), {"log": []}),
        ("input", -1, ("__start__",), {"log": []}),
    ]
    st = app.get_state(cfg)
    assert (st.next, st.values) == (("b",), {"log": ["a", "in"]})
    assert [(t.name, t.result) for t in st.tasks] == [("__start__", {"log": ["in"]}), ("b", None)]
    # __start__ wrote `branch:to:a` in that step: `a` runs once more after `b`
    out = app.invoke(Command(resume="r"), cfg)
    assert out["log"] == ["a", "in", "b:r", "a"]
    assert [i.value for i in out["__interrupt__"]] == ["q"]
    assert [(h.metadata["source"], h.metadata["step"], h.next) for h in app.get_state_history(cfg)][:3] == [
        ("loop", 4, ("b",)),
        ("loop", 3, ("a",)),
        ("input", 2, ("__start__", "b")),
    ]


def test_update_checkpoints_record_no_updated_channels():
    app, saver, cfg = _interrupted_chain()
    assert saver.get_tuple(cfg).checkpoint["updated_channels"] == ["branch:to:b", "log"]
    app.update_state(cfg, {"log": ["u"]}, as_node="a")
    assert saver.get_tuple(cfg).checkpoint["updated_channels"] is None
    app.update_state(cfg, None, as_node="__end__")
    assert saver.get_tuple(cfg).checkpoint["updated_channels"] is None
    forked = app.update_state(cfg, None, as_node="__copy__")
    assert saver.get_tuple(forked).checkpoint["updated_channels"] is None
    assert saver.get_tuple(forked).metadata == {"source": "fork", "step": 4, "parents": {}}


def test_copy_with_list_of_updates_forks_then_updates():
    app, saver, cfg = _interrupted_chain()
    before = app.get_state(cfg)
    new = app.update_state(cfg, [({"log": ["c"]}, "b")], as_node="__copy__")
    history = list(app.get_state_history(cfg, limit=3))
    assert [(h.metadata, h.next, h.values) for h in history] == [
        ({"source": "update", "step": 3, "parents": {}}, (), {"log": ["a", "c"]}),
        ({"source": "fork", "step": 2, "parents": {}}, ("b",), {"log": ["a"]}),
        ({"source": "loop", "step": 1, "parents": {}}, ("b",), {"log": ["a"]}),
    ]
    assert new == history[0].config
    # the update's writes are saved on the fork under the id of the task it would run
    fork_task = history[1].tasks[0]
    assert (fork_task.name, fork_task.result, fork_task.interrupts) == ("b", {"log": ["c"]}, ())
    assert fork_task.id != before.tasks[0].id
    assert history[0].tasks == ()
    with pytest.raises(InvalidUpdateError, match="^Invalid update item: 3 when copying checkpoint$"):
        app.update_state(cfg, [3], as_node="__copy__")
