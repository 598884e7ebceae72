"""Checkpointing and persistence with `InMemorySaver` (docs/BEHAVIOUR.md §9, P-0 … P-42, observed
outputs O-2, O-3, O-10, O-13, O-14), and the persistence side of resuming (§6, L-10, L-13).

What is checked, always through the public API and the saver's own `list` /
`get_tuple`: the checkpoints a run saves (channel values and versions, versions seen,
updated channels, metadata with sources, steps, parents and user keys) and the pending
writes stored against each; live versus addressed `get_state`; the tasks of a snapshot
(results, interrupts, the error as a repr string after the round trip);
`update_state` / `bulk_update_state` (as_node inference and errors, `END`,
`__input__`, `__copy__`); time travel and forks; new input on a thread with a pending
interrupt; durability modes; the `checkpoints` / `debug` / `tasks` stream modes with a
checkpointer; the recursion limit of resumed runs; a failed parallel step resumed with
the finished sibling's writes served from the saver.

Ids (checkpoint, task, interrupt ids) and timestamps are never pinned: tests compare
them only for equality (a pending write's task id equals the snapshot task's id) and
order (checkpoint ids sort chronologically). Channel versions are compared only by
order (L-49: any increasing comparable values).

Every expectation was checked against LangGraph 1.2.22 by running this file with
`lgembed` aliased to `langgraph`.

Why over 600 lines: each test builds its own small graph so it stays independent and
each failure points at one statement of §9.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import re
import time
import warnings
from datetime import datetime
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.constants import END, START
from lgembed.errors import EmptyInputError, GraphRecursionError, InvalidUpdateError
from lgembed.graph import StateGraph
from lgembed.types import (
    Command,
    Send,
    StateSnapshot,
    StateUpdate,
    interrupt,
)

# --- helpers -------------------------------------------------------------------

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"

RECURSION_TEXT = (
    "Recursion limit of {n} reached without hitting a stop condition. You can "
    "increase the limit by setting the `recursion_limit` config key.\n"
    "For troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langgraph/errors/GRAPH_RECURSION_LIMIT"
)

CONFIGURABLE_TEXT = (
    "Checkpointer requires one or more of the following 'configurable' keys: "
    "thread_id, checkpoint_ns, checkpoint_id"
)


class S(TypedDict, total=False):
    x: int
    v: int
    log: Annotated[list, operator.add]


def cfg(thread="1", **configurable):
    return {"configurable": {"thread_id": thread, **configurable}}


def at(config, checkpoint_id):
    """The thread of `config` addressed at `checkpoint_id`."""
    return {"configurable": {**config["configurable"], "checkpoint_id": checkpoint_id}}


def ckpt_id(config):
    return config["configurable"]["checkpoint_id"]


def append(name, calls=None):
    """A node that records its run in `calls` and appends `name` to `log`."""

    def node(state):
        if calls is not None:
            calls.append(name)
        return {"log": [name]}

    return node


def seq(*names, calls=None, checkpointer=None, **compile_kwargs):
    """START -> names[0] -> names[1] -> ... -> END, each node appending its name."""
    builder = StateGraph(S)
    for name in names:
        builder.add_node(name, append(name, calls))
    builder.add_edge(START, names[0])
    for src, dst in itertools.pairwise(names):
        builder.add_edge(src, dst)
    return builder.compile(
        checkpointer=checkpointer if checkpointer is not None else InMemorySaver(),
        **compile_kwargs,
    )


def inc_then_b(checkpointer=None):
    """O-3: a -> b; a: x+1 and log a; b: log b."""
    builder = StateGraph(S)
    builder.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    builder.add_node("b", lambda s: {"log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile(checkpointer=checkpointer if checkpointer is not None else InMemorySaver())


def hist(graph, config, *fields):
    """History rows (source, step, next[, values]) newest first."""
    rows = []
    for snap in graph.get_state_history(config):
        row = (snap.metadata["source"], snap.metadata["step"], snap.next)
        if "values" in fields:
            row += (snap.values,)
        rows.append(row)
    return rows


def ask_other(calls=None):
    """START -> ask (one interrupt) and START -> other, in parallel."""

    def ask(state):
        if calls is not None:
            calls.append("ask")
        return {"log": [interrupt("q")]}

    builder = StateGraph(S)
    builder.add_node("ask", ask)
    builder.add_node("other", append("other", calls))
    builder.add_edge(START, "ask")
    builder.add_edge(START, "other")
    return builder.compile(checkpointer=InMemorySaver())


def good_bad(calls, fail_times=1):
    """O-10: good and bad in parallel from START; bad sleeps 50 ms and raises
    ValueError("boom") the first `fail_times` runs."""

    def good(state):
        calls.append("good")
        return {"log": ["good"]}

    def bad(state):
        calls.append("bad")
        time.sleep(0.05)
        if calls.count("bad") <= fail_times:
            raise ValueError("boom")
        return {"log": ["bad ok"]}

    builder = StateGraph(S)
    builder.add_node("good", good)
    builder.add_node("bad", bad)
    builder.add_edge(START, "good")
    builder.add_edge(START, "bad")
    return builder.compile(checkpointer=InMemorySaver())


# --- P-1 … P-5: what a run saves --------------------------------------------------------


def test_saved_checkpoints_of_a_two_node_run():
    """P-1, P-3, P-4, P-5, O-3: one checkpoint per step (-1 input, 0, 1, 2 loop) with the
    channel values, updated channels, versions seen and pending writes LangGraph saves."""
    graph = inc_then_b()
    assert graph.invoke({"x": 1}, cfg("t")) == {"x": 2, "log": ["a", "b"]}
    tuples = list(graph.checkpointer.list(cfg("t")))
    assert [t.metadata for t in tuples] == [
        {"source": "loop", "step": 2, "parents": {}},
        {"source": "loop", "step": 1, "parents": {}},
        {"source": "loop", "step": 0, "parents": {}},
        {"source": "input", "step": -1, "parents": {}},
    ]
    c2, c1, c0, cm1 = [t.checkpoint for t in tuples]
    for t in tuples:
        assert t.config == {
            "configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": t.checkpoint["id"]}
        }
        assert t.checkpoint["v"] == 4
        datetime.fromisoformat(t.checkpoint["ts"])
    assert [t.parent_config for t in tuples] == [tuples[1].config, tuples[2].config, tuples[3].config, None]
    assert [c["channel_values"] for c in (cm1, c0, c1, c2)] == [
        {"__start__": {"x": 1}},
        {"branch:to:a": None, "x": 1},
        {"branch:to:b": None, "log": ["a"], "x": 2},
        {"log": ["a", "b"], "x": 2},
    ]
    assert [c["updated_channels"] for c in (cm1, c0, c1, c2)] == [
        ["__start__"],
        ["branch:to:a", "x"],
        ["branch:to:b", "log", "x"],
        ["log"],
    ]
    assert [sorted(c["channel_versions"]) for c in (cm1, c0, c1, c2)] == [
        ["__start__"],
        ["__start__", "branch:to:a", "x"],
        ["__start__", "branch:to:a", "branch:to:b", "log", "x"],
        ["__start__", "branch:to:a", "branch:to:b", "log", "x"],
    ]
    # the cleared trigger of a is bumped in step 1; log is bumped again in step 2
    assert c1["channel_versions"]["branch:to:a"] > c0["channel_versions"]["branch:to:a"]
    assert c2["channel_versions"]["log"] > c1["channel_versions"]["log"]
    assert c2["channel_versions"]["x"] == c1["channel_versions"]["x"]
    assert cm1["versions_seen"] == {"__input__": {}}
    assert c0["versions_seen"] == {
        "__input__": {},
        "__start__": {"__start__": cm1["channel_versions"]["__start__"]},
    }
    assert c1["versions_seen"] == {**c0["versions_seen"], "a": {"branch:to:a": c0["channel_versions"]["branch:to:a"]}}
    assert c2["versions_seen"] == {**c1["versions_seen"], "b": {"branch:to:b": c1["channel_versions"]["branch:to:b"]}}
    # writes of the tasks that ran from checkpoint X are stored against X (and kept)
    assert [[(ch, v) for _, ch, v in t.pending_writes] for t in tuples] == [
        [],
        [("log", ["b"])],
        [("x", 2), ("log", ["a"]), ("branch:to:b", None)],
        [("x", 1), ("branch:to:a", None)],
    ]
    snapshots = list(graph.get_state_history(cfg("t")))
    for t, snap in zip(tuples, snapshots):
        assert {tid for tid, _, _ in t.pending_writes} <= {task.id for task in snap.tasks}
        assert snap.created_at == t.checkpoint["ts"]


def test_checkpoint_ids_sort_chronologically():
    """P-1: ids are time ordered: newest first in list(), each child after its parent."""
    graph = seq("a", "b", "c")
    graph.invoke({"log": []}, cfg())
    graph.invoke({"log": []}, cfg())
    tuples = list(graph.checkpointer.list(cfg()))
    ids = [t.checkpoint["id"] for t in tuples]
    assert len(ids) == 10 and len(set(ids)) == 10
    assert ids == sorted(ids, reverse=True)
    for t in tuples[:-1]:
        assert ckpt_id(t.parent_config) < t.checkpoint["id"]


def test_second_run_continues_step_numbering():
    """P-3, O-3: new input on a finished thread starts an input checkpoint at last step + 1."""
    graph = inc_then_b()
    graph.invoke({"x": 1}, cfg("t"))
    assert graph.invoke({"x": 10}, cfg("t")) == {"x": 11, "log": ["a", "b", "a", "b"]}
    assert [(s, n) for s, n, _ in hist(graph, cfg("t"))] == [
        ("loop", 6), ("loop", 5), ("loop", 4), ("input", 3),
        ("loop", 2), ("loop", 1), ("loop", 0), ("input", -1),
    ]  # fmt: skip


def test_get_tuple_latest_and_addressed():
    """P-10: get_tuple without checkpoint_id is the latest, with one that checkpoint; get()
    returns the checkpoint only; an unknown thread gives None."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    saver = graph.checkpointer
    latest = saver.get_tuple(cfg())
    assert latest.metadata["step"] == 2
    assert latest.config == graph.get_state(cfg()).config
    oldest = list(saver.list(cfg()))[-1]
    addressed = saver.get_tuple(oldest.config)
    assert addressed.metadata == {"source": "input", "step": -1, "parents": {}}
    assert addressed.checkpoint == oldest.checkpoint
    assert saver.get(cfg()) == latest.checkpoint
    assert saver.get_tuple(cfg("nobody")) is None


def test_list_filter_before_limit():
    """P-11, O-14: filter on metadata, limit, before (strictly older), all threads."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    graph.invoke({"log": []}, cfg("other"))
    saver = graph.checkpointer
    steps = lambda it: [t.metadata["step"] for t in it]
    assert steps(saver.list(cfg(), filter={"source": "loop"})) == [2, 1, 0]
    assert steps(saver.list(cfg(), limit=2)) == [2, 1]
    step1 = next(t for t in saver.list(cfg()) if t.metadata["step"] == 1)
    assert steps(saver.list(cfg(), before=step1.config)) == [0, -1]
    assert steps(saver.list(cfg(), filter={"step": 0})) == [0]
    every = list(saver.list(None))
    assert sorted({t.config["configurable"]["thread_id"] for t in every}) == ["1", "other"]
    assert len(every) == 8


def test_history_filter_before_limit():
    """P-24: get_state_history takes the same filter/before/limit as the saver."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    steps = lambda it: [s.metadata["step"] for s in it]
    assert steps(graph.get_state_history(cfg(), filter={"source": "loop"})) == [2, 1, 0]
    assert steps(graph.get_state_history(cfg(), limit=2)) == [2, 1]
    step1 = next(s for s in graph.get_state_history(cfg()) if s.metadata["step"] == 1)
    assert steps(graph.get_state_history(cfg(), before=step1.config)) == [0, -1]


def test_metadata_carries_user_keys():
    """P-2, O-14: str/int/float/bool entries of config metadata and configurable are added
    to every checkpoint's metadata (NUL chars stripped); `__` keys, the excluded keys,
    other value types and keys already set are not. Note: only the listed langgraph_*
    keys are excluded (langgraph_step), not every langgraph_ prefix."""
    graph = seq("a", "b")
    config = {
        "configurable": {
            "thread_id": "m",
            "user_key": "u1",
            "__private": 1,
            "num": 3,
            "ratio": 1.5,
            "flag": True,
            "nul": "a\x00b",
            "langgraph_step": 99,
            "langgraph_custom": "kept",
            "source": "mine",
            "tag": "from-configurable",
        },
        "metadata": {"tag": "T", "obj": [1], "none": None},
    }
    graph.invoke({"log": []}, config)
    metas = [s.metadata for s in graph.get_state_history(cfg("m"))]
    extra = {
        "tag": "T",
        "user_key": "u1",
        "num": 3,
        "ratio": 1.5,
        "flag": True,
        "nul": "ab",
        "langgraph_custom": "kept",
    }
    assert metas == [
        {"source": "loop", "step": 2, "parents": {}, **extra},
        {"source": "loop", "step": 1, "parents": {}, **extra},
        {"source": "loop", "step": 0, "parents": {}, **extra},
        {"source": "input", "step": -1, "parents": {}, **extra},
    ]
    assert [t.metadata["step"] for t in graph.checkpointer.list(cfg("m"), filter={"user_key": "u1"})] == [2, 1, 0, -1]


def test_thread_id_is_stringified():
    """L-1, P-4: a non-str thread_id is stored as a string."""
    graph = seq("a")
    graph.invoke({"log": []}, {"configurable": {"thread_id": 7}})
    state = graph.get_state({"configurable": {"thread_id": "7"}})
    assert state.values == {"log": ["a"]}
    assert state.config["configurable"]["thread_id"] == "7"


def test_checkpointer_requires_configurable_keys():
    """L-1: a checkpointed run without thread_id/checkpoint_ns/checkpoint_id raises."""
    graph = seq("a")
    for config in ({}, {"configurable": {}}, None):
        with pytest.raises(ValueError, match=re.escape(CONFIGURABLE_TEXT)) as info:
            graph.invoke({"log": []}, config)
        assert str(info.value) == CONFIGURABLE_TEXT


def test_delete_thread_forgets_its_checkpoints():
    """P-12: delete_thread removes that thread only."""
    graph = seq("a")
    graph.invoke({"log": []}, cfg("1"))
    graph.invoke({"log": []}, cfg("2"))
    graph.checkpointer.delete_thread("1")
    assert list(graph.checkpointer.list(cfg("1"))) == []
    assert graph.get_state(cfg("1")).values == {}
    assert graph.get_state(cfg("2")).values == {"log": ["a"]}


# --- P-20 … P-24: get_state ---------------------------------------------------------------


def test_get_state_of_an_empty_thread():
    """P-20: no saved checkpoint -> an empty snapshot echoing the input config."""
    graph = seq("a")
    assert graph.get_state(cfg("nope")) == StateSnapshot(
        values={},
        next=(),
        config={"configurable": {"thread_id": "nope"}},
        metadata=None,
        created_at=None,
        parent_config=None,
        tasks=(),
        interrupts=(),
    )
    assert list(graph.get_state_history(cfg("nope"))) == []


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.get_state(cfg()),
        lambda g: list(g.get_state_history(cfg())),
        lambda g: g.update_state(cfg(), {"log": ["x"]}),
        lambda g: g.bulk_update_state(cfg(), [[StateUpdate({"log": ["x"]}, "a")]]),
    ],
    ids=["get_state", "get_state_history", "update_state", "bulk_update_state"],
)
def test_state_methods_need_a_checkpointer(call):
    """P-20, P-42: without a checkpointer the state methods raise ValueError."""
    builder = StateGraph(S)
    builder.add_node("a", append("a"))
    builder.add_edge(START, "a")
    graph = builder.compile()
    with pytest.raises(ValueError, match=re.escape("No checkpointer set")) as info:
        call(graph)
    assert str(info.value) == "No checkpointer set"


def test_get_state_of_a_finished_thread():
    """P-20, P-21, O-2: the final snapshot: no next, no tasks, config/parent_config of the
    saved tuple, created_at = the checkpoint ts."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    state = graph.get_state(cfg())
    saved = graph.checkpointer.get_tuple(cfg())
    assert state.values == {"log": ["a", "b"]}
    assert (state.next, state.tasks, state.interrupts) == ((), (), ())
    assert state.config == saved.config
    assert state.parent_config == saved.parent_config
    assert state.metadata == {"source": "loop", "step": 2, "parents": {}}
    assert state.created_at == saved.checkpoint["ts"]


def test_live_and_addressed_get_state_after_interrupt():
    """P-22, O-6: live get_state applies the finished sibling's writes and lists only the
    unfinished task; the same checkpoint addressed by id shows the step start."""
    graph = ask_other()
    [intr] = graph.invoke({"log": []}, cfg())["__interrupt__"]
    live = graph.get_state(cfg())
    assert live.values == {"log": ["other"]}
    assert live.next == ("ask",)
    assert [(t.name, t.result, t.interrupts) for t in live.tasks] == [
        ("ask", None, (intr,)),
        ("other", {"log": ["other"]}, ()),
    ]
    assert live.interrupts == (intr,)
    addressed = graph.get_state(live.config)
    assert addressed.values == {"log": []}
    assert addressed.next == ("ask", "other")
    assert [(t.name, t.result) for t in addressed.tasks] == [("ask", None), ("other", {"log": ["other"]})]
    assert addressed.interrupts == live.interrupts
    assert addressed.config == live.config
    assert [t.id for t in addressed.tasks] == [t.id for t in live.tasks]


def test_history_snapshots_are_addressed_snapshots():
    """P-24: each history item equals get_state of its own config; forks of every branch
    are listed by id order."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    for snap in graph.get_state_history(cfg()):
        assert graph.get_state(snap.config) == snap


def test_send_tasks_in_history():
    """P-21, O-2: Send map-reduce: PUSH tasks of step 0 with paths and results, in index
    order, whatever order they finished in."""

    class J(TypedDict, total=False):
        subjects: list
        jokes: Annotated[list, operator.add]

    def gen(arg):
        time.sleep({"a": 0.04, "b": 0.02, "c": 0.0}[arg["subject"]])
        return {"jokes": [f"joke {arg['subject']}"]}

    builder = StateGraph(J)
    builder.add_node("gen", gen)
    builder.add_conditional_edges(START, lambda s: [Send("gen", {"subject": x}) for x in s["subjects"]])
    builder.add_edge("gen", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    chunks = list(graph.stream({"subjects": ["a", "b", "c"]}, cfg()))
    assert chunks == [{"gen": {"jokes": ["joke c"]}}, {"gen": {"jokes": ["joke b"]}}, {"gen": {"jokes": ["joke a"]}}]
    state = graph.get_state(cfg())
    assert state.values == {"subjects": ["a", "b", "c"], "jokes": ["joke a", "joke b", "joke c"]}
    rows = [
        (s.metadata, s.next, [(t.name, t.path, t.result) for t in s.tasks])
        for s in graph.get_state_history(cfg())
    ]
    assert rows == [
        ({"source": "loop", "step": 1, "parents": {}}, (), []),
        (
            {"source": "loop", "step": 0, "parents": {}},
            ("gen", "gen", "gen"),
            [
                ("gen", ("__pregel_push", 0, False), {"jokes": ["joke a"]}),
                ("gen", ("__pregel_push", 1, False), {"jokes": ["joke b"]}),
                ("gen", ("__pregel_push", 2, False), {"jokes": ["joke c"]}),
            ],
        ),
        (
            {"source": "input", "step": -1, "parents": {}},
            ("__start__",),
            [("__start__", ("__pregel_pull", "__start__"), {"subjects": ["a", "b", "c"]})],
        ),
    ]


# --- failure in a parallel step (L-32, L-13, O-10) ------------------------------------------


def test_failed_parallel_step_stream_and_error():
    """L-32, O-10: the sibling's update and task result stream before the error; the
    exception carries a note naming the failed task."""
    calls = []
    graph = good_bad(calls)
    chunks = []
    with pytest.raises(ValueError, match=re.escape("boom")) as info:
        for chunk in graph.stream({"log": []}, cfg(), stream_mode=["updates", "tasks"]):
            chunks.append(chunk)  # noqa: PERF402 - keeps the chunks yielded before the error
    state = graph.get_state(cfg())
    ids = {t.name: t.id for t in state.tasks}
    assert info.value.__notes__ == [f"During task with name 'bad' and id '{ids['bad']}'"]
    assert chunks[:2] == [
        ("tasks", {"id": ids["bad"], "name": "bad", "input": {"log": []}, "triggers": ("branch:to:bad",)}),
        ("tasks", {"id": ids["good"], "name": "good", "input": {"log": []}, "triggers": ("branch:to:good",)}),
    ]
    assert chunks[2:4] == [
        ("updates", {"good": {"log": ["good"]}}),
        ("tasks", {"id": ids["good"], "name": "good", "error": None, "result": {"log": ["good"]}, "interrupts": []}),
    ]
    mode, last = chunks[4]
    assert len(chunks) == 5 and mode == "tasks"
    assert {k: v for k, v in last.items() if k != "error"} == {
        "id": ids["bad"],
        "name": "bad",
        "result": {},
        "interrupts": [],
    }
    assert type(last["error"]) is ValueError and str(last["error"]) == "boom"


def test_failed_task_in_snapshot_and_pending_writes():
    """L-32, P-5, P-21, O-10: no new checkpoint; next = the failed task; its error is the
    repr string saved with the `__error__` write; the sibling's result is kept."""
    calls = []
    graph = good_bad(calls)
    with pytest.raises(ValueError):
        graph.invoke({"log": []}, cfg())
    state = graph.get_state(cfg())
    assert state.metadata == {"source": "loop", "step": 0, "parents": {}}
    assert state.next == ("bad",)
    ids = {t.name: t.id for t in state.tasks}
    assert [(t.name, t.error, t.interrupts, t.state, t.result) for t in state.tasks] == [
        ("good", None, (), None, {"log": ["good"]}),
        ("bad", "ValueError('boom')", (), None, None),
    ]
    assert graph.checkpointer.get_tuple(cfg()).pending_writes == [
        (ids["bad"], "__error__", "ValueError('boom')"),
        (ids["good"], "log", ["good"]),
    ]
    assert state.values == {"log": ["good"]}


def test_resume_after_failure_serves_cached_sibling_writes():
    """L-13, O-10: invoke(None) reruns only the failed task; the finished sibling's saved
    writes come back as an updates chunk marked cached."""
    calls = []
    graph = good_bad(calls)
    with pytest.raises(ValueError):
        graph.invoke({"log": []}, cfg())
    chunks = list(graph.stream(None, cfg(), stream_mode="updates"))
    assert chunks == [
        {"good": {"log": ["good"]}, "__metadata__": {"cached": True}},
        {"bad": {"log": ["bad ok"]}},
    ]
    assert graph.get_state(cfg()).values == {"log": ["bad ok", "good"]}
    assert sorted(calls) == ["bad", "bad", "good"]


def test_error_repr_survives_history():
    """P-21, O-10: after the retry succeeds, the history snapshot of the failed step still
    shows the error string on its task."""
    calls = []
    graph = good_bad(calls)
    with pytest.raises(ValueError):
        graph.invoke({"log": []}, cfg())
    graph.invoke(None, cfg())
    step0 = [s for s in graph.get_state_history(cfg()) if s.metadata["step"] == 0]
    assert len(step0) == 1
    assert [(t.name, t.error, t.result) for t in step0[0].tasks] == [
        ("good", None, {"log": ["good"]}),
        ("bad", "ValueError('boom')", {"log": ["bad ok"]}),
    ]


# --- P-30 … P-34: update_state ---------------------------------------------------------


def before(graph, config, node):
    """The history snapshot whose next is (node,)."""
    return next(s for s in graph.get_state_history(config) if s.next == (node,))


def test_update_state_on_a_past_checkpoint():
    """P-30, O-13: the update makes a new checkpoint (source update, step+1, parent = the
    addressed one) with the values written as the previous node; b then runs from it."""
    calls = []
    graph = seq("a", "b", "c", calls=calls)
    graph.invoke({"log": []}, cfg())
    snap_b = before(graph, cfg(), "b")
    new_config = graph.update_state(snap_b.config, {"log": ["EDIT"]})
    assert new_config == {
        "configurable": {"thread_id": "1", "checkpoint_ns": "", "checkpoint_id": ckpt_id(new_config)}
    }
    state = graph.get_state(cfg())
    assert state.config == new_config
    assert state.metadata == {"source": "update", "step": 2, "parents": {}}
    assert state.next == ("b",)
    assert state.values == {"log": ["a", "EDIT"]}
    assert state.parent_config == snap_b.config
    calls.clear()
    assert list(graph.stream(None, new_config)) == [{"b": {"log": ["b"]}}, {"c": {"log": ["c"]}}]
    assert calls == ["b", "c"]
    assert graph.get_state(cfg()).values == {"log": ["a", "EDIT", "b", "c"]}


def test_update_state_as_node_on_finished_thread():
    """P-30, O-13: updating as "a" runs a's writers, so b is next; invoke(None) runs b, c."""
    graph = seq("a", "b", "c")
    graph.invoke({"log": []}, cfg())
    graph.update_state(cfg(), {"log": ["X"]}, as_node="a")
    state = graph.get_state(cfg())
    assert (state.metadata, state.next, state.values) == (
        {"source": "update", "step": 4, "parents": {}},
        ("b",),
        {"log": ["a", "b", "c", "X"]},
    )
    assert graph.invoke(None, cfg()) == {"log": ["a", "b", "c", "X", "b", "c"]}


def test_update_state_infers_the_last_node():
    """P-31, O-13: without as_node the node that ran last is used (c: nothing next)."""
    graph = seq("a", "b", "c")
    graph.invoke({"log": []}, cfg())
    graph.update_state(cfg(), {"v": 5})
    state = graph.get_state(cfg())
    assert (state.metadata["step"], state.next, state.values) == (4, (), {"log": ["a", "b", "c"], "v": 5})


def test_update_state_unknown_node():
    """P-31, O-13: an unknown as_node raises InvalidUpdateError."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    with pytest.raises(InvalidUpdateError, match=re.escape("Node zz does not exist")) as info:
        graph.update_state(cfg(), {"v": 1}, as_node="zz")
    assert str(info.value) == "Node zz does not exist"


def test_update_state_ambiguous_when_two_nodes_ran_last():
    """P-31: two parallel nodes that both ran last make the inference ambiguous."""
    builder = StateGraph(S)
    for name in ("a", "b", "c"):
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    text = "Ambiguous update, specify as_node"
    with pytest.raises(InvalidUpdateError, match=re.escape(text)) as info:
        graph.update_state(cfg(), {"v": 1})
    assert str(info.value) == text
    graph.update_state(cfg(), {"v": 1}, as_node="b")
    assert graph.get_state(cfg()).values["v"] == 1


def test_update_state_on_a_fresh_thread():
    """P-31, O-13: on an empty thread the update is inferred as __start__ (step 0, next a);
    a second one as "a" gives step 1 with next b."""
    graph = seq("a", "b")
    graph.update_state(cfg(), {"v": 1})
    assert hist(graph, cfg(), "values") == [("update", 0, ("a",), {"v": 1, "log": []})]
    graph.update_state(cfg(), {"v": 2}, as_node="a")
    state = graph.get_state(cfg())
    assert (state.metadata, state.next, state.values) == (
        {"source": "update", "step": 1, "parents": {}},
        ("b",),
        {"v": 2, "log": []},
    )
    assert graph.invoke(None, cfg()) == {"v": 2, "log": ["b"]}


def test_update_state_as_interrupted_node_completes_it_and_drops_siblings():
    """P-30, O-13: a -> {ask, c} with interrupt_before ask: updating as ask completes the
    step (next is empty); c never runs."""
    calls = []
    builder = StateGraph(S)
    for name in ("a", "ask", "c"):
        builder.add_node(name, append(name, calls))
    builder.add_edge(START, "a")
    builder.add_edge("a", "ask")
    builder.add_edge("a", "c")
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["ask"])
    graph.invoke({"log": []}, cfg())
    assert graph.get_state(cfg()).next == ("ask", "c")
    graph.update_state(cfg(), {"log": ["manual"]}, as_node="ask")
    state = graph.get_state(cfg())
    assert (state.next, state.values) == ((), {"log": ["a", "manual"]})
    assert graph.invoke(None, cfg()) == {"log": ["a", "manual"]}
    assert calls == ["a"]


def test_update_state_uses_the_pending_task_id():
    """P-33: updating as a pending node stores the writes under that task's id, so the
    step's history snapshot shows them as the task's result."""
    graph = seq("a", "ask", "c", interrupt_before=["ask"])
    graph.invoke({"log": []}, cfg())
    step_start = graph.get_state(cfg())
    graph.update_state(cfg(), {"log": ["manual"]}, as_node="ask")
    [task] = step_start.tasks
    assert graph.checkpointer.get_tuple(step_start.config).pending_writes == [
        (task.id, "log", ["manual"]),
        (task.id, "branch:to:c", None),
    ]
    assert [(t.name, t.id, t.result) for t in graph.get_state(step_start.config).tasks] == [
        ("ask", task.id, {"log": ["manual"]})
    ]
    assert graph.get_state(cfg()).next == ("c",)


def test_update_state_as_end_clears_pending_tasks():
    """P-32, O-13: values=None with as_node=END marks pending tasks done: next becomes ()
    and the values stay unchanged."""
    calls = []
    graph = seq("a", "b", calls=calls, interrupt_before=["b"])
    graph.invoke({"log": []}, cfg())
    graph.update_state(cfg(), None, as_node=END)
    assert hist(graph, cfg(), "values")[:2] == [
        ("update", 2, (), {"log": ["a"]}),
        ("loop", 1, ("b",), {"log": ["a"]}),
    ]
    assert graph.invoke(None, cfg()) == {"log": ["a"]}
    assert calls == ["a"]


def test_update_state_as_input():
    """P-32, O-13: as_node="__input__" behaves like graph input (source input, step -1 on
    a fresh thread); invoke(None) then runs the graph from it."""
    graph = seq("a", "b")
    graph.update_state(cfg(), {"log": ["in"]}, as_node="__input__")
    assert hist(graph, cfg(), "values") == [("input", -1, ("__start__",), {"log": []})]
    assert graph.invoke(None, cfg()) == {"log": ["in", "a", "b"]}
    assert [(s, n) for s, n, _ in hist(graph, cfg())] == [("loop", 2), ("loop", 1), ("loop", 0), ("input", -1)]


def test_update_state_as_copy_forks_a_sibling():
    """P-32, O-13: as_node="__copy__" copies the checkpoint as a sibling (source fork,
    step+1, parent = the original's parent)."""
    graph = seq("a", "b", "c")
    graph.invoke({"log": []}, cfg())
    snap_b = before(graph, cfg(), "b")
    copied = graph.update_state(snap_b.config, None, as_node="__copy__")
    state = graph.get_state(copied)
    assert (state.metadata, state.next, state.values) == (
        {"source": "fork", "step": 2, "parents": {}},
        ("b",),
        {"log": ["a"]},
    )
    assert state.parent_config == snap_b.parent_config
    assert graph.get_state(cfg()).config == copied


def test_bulk_update_state_one_checkpoint_per_superstep():
    """P-34: each inner list is one superstep; several updates in one superstep need
    as_node and are applied together."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    result = graph.bulk_update_state(
        cfg(),
        [
            [StateUpdate({"log": ["x"]}, "a")],
            [StateUpdate({"log": ["y"]}, "a"), StateUpdate({"log": ["z"]}, "b")],
        ],
    )
    assert result == graph.get_state(cfg()).config
    assert hist(graph, cfg(), "values")[:3] == [
        ("update", 4, ("b",), {"log": ["a", "b", "x", "y", "z"]}),
        ("update", 3, ("b",), {"log": ["a", "b", "x"]}),
        ("loop", 2, (), {"log": ["a", "b"]}),
    ]


@pytest.mark.parametrize(
    ("supersteps", "exc", "text"),
    [
        ([], ValueError, "No supersteps provided"),
        ([[]], ValueError, "No updates provided"),
        ([[StateUpdate({"v": 1}, "a")], []], ValueError, "No updates provided"),
        (
            [[StateUpdate({"v": 1}), StateUpdate({"v": 2})]],
            InvalidUpdateError,
            "as_node is required when applying multiple updates",
        ),
        ([[StateUpdate({"v": 1}, "zz")]], InvalidUpdateError, "Node zz does not exist"),
    ],
    ids=["no-supersteps", "empty-superstep", "empty-later-superstep", "multi-without-as-node", "unknown-node"],
)
def test_bulk_update_state_errors(supersteps, exc, text):
    """P-34: bulk_update_state's errors; nothing is written."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    before_ids = [t.checkpoint["id"] for t in graph.checkpointer.list(cfg())]
    with pytest.raises(exc, match=re.escape(text)) as info:
        graph.bulk_update_state(cfg(), supersteps)
    assert str(info.value) == text
    assert [t.checkpoint["id"] for t in graph.checkpointer.list(cfg())] == before_ids


def test_async_update_state_and_history():
    """P-0: aupdate_state / aget_state / aget_state_history match their sync twins."""
    graph = seq("a", "b")

    async def main():
        await graph.ainvoke({"log": []}, cfg())
        new_config = await graph.aupdate_state(cfg(), {"log": ["X"]}, as_node="a")
        state = await graph.aget_state(cfg())
        history = [s.metadata["step"] async for s in graph.aget_state_history(cfg())]
        return new_config, state, history

    new_config, state, history = asyncio.run(main())
    assert state.config == new_config
    assert (state.next, state.values) == (("b",), {"log": ["a", "b", "X"]})
    assert history == [3, 2, 1, 0, -1]


# --- P-40 / P-41: time travel -------------------------------------------------------------


def test_replay_from_a_past_checkpoint_forks():
    """P-40, O-13: invoke(None) at the checkpoint before b writes a fork checkpoint (copy,
    step+1, parent = the replayed one) and re-executes b and c."""
    calls = []
    graph = seq("a", "b", "c", calls=calls)
    graph.invoke({"log": []}, cfg())
    snap_b = before(graph, cfg(), "b")
    calls.clear()
    assert list(graph.stream(None, snap_b.config)) == [{"b": {"log": ["b"]}}, {"c": {"log": ["c"]}}]
    assert calls == ["b", "c"]
    snaps = list(graph.get_state_history(cfg()))
    rows = [(s.metadata["source"], s.metadata["step"], s.next, s.values) for s in snaps]
    assert rows == [
        ("loop", 4, (), {"log": ["a", "b", "c"]}),
        ("loop", 3, ("c",), {"log": ["a", "b"]}),
        ("fork", 2, ("b",), {"log": ["a"]}),
        ("loop", 3, (), {"log": ["a", "b", "c"]}),
        ("loop", 2, ("c",), {"log": ["a", "b"]}),
        ("loop", 1, ("b",), {"log": ["a"]}),
        ("loop", 0, ("a",), {"log": []}),
        ("input", -1, ("__start__",), {"log": []}),
    ]
    assert snaps[0].parent_config == snaps[1].config
    assert snaps[1].parent_config == snaps[2].config
    assert snaps[2].parent_config == snap_b.config
    assert graph.get_state(cfg()).config == snaps[0].config


def test_replay_from_an_update_checkpoint_continues_without_fork():
    """P-40: a checkpoint made by update_state is continued from directly."""
    graph = seq("a", "b", "c")
    graph.invoke({"log": []}, cfg())
    new_config = graph.update_state(before(graph, cfg(), "b").config, {"log": ["EDIT"]})
    graph.invoke(None, new_config)
    snaps = list(graph.get_state_history(cfg()))
    assert [(s.metadata["source"], s.metadata["step"]) for s in snaps[:3]] == [
        ("loop", 4),
        ("loop", 3),
        ("update", 2),
    ]
    assert snaps[1].parent_config == new_config
    assert snaps[0].values == {"log": ["a", "EDIT", "b", "c"]}


def test_replay_asks_an_answered_interrupt_again():
    """P-40: replaying the step of an answered interrupt drops the saved resume: the node
    re-executes and interrupts again."""
    calls = []

    def ask(state):
        calls.append("ask")
        return {"log": [interrupt("q")]}

    builder = StateGraph(S)
    builder.add_node("a", append("a"))
    builder.add_node("ask", ask)
    builder.add_edge(START, "a")
    builder.add_edge("a", "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    assert graph.invoke(Command(resume="R1"), cfg()) == {"log": ["a", "R1"]}
    calls.clear()
    out = graph.invoke(None, before(graph, cfg(), "ask").config)
    assert out["log"] == ["a"] and [i.value for i in out["__interrupt__"]] == ["q"]
    assert calls == ["ask"]
    assert graph.invoke(Command(resume="R2"), cfg()) == {"log": ["a", "R2"]}


def test_new_input_at_a_past_checkpoint_branches():
    """P-41: new input addressed at checkpoint X starts an input step whose parent is X."""
    graph = seq("a", "b")
    graph.invoke({"log": []}, cfg())
    snap_b = before(graph, cfg(), "b")
    assert graph.invoke({"log": ["new"]}, snap_b.config) == {"log": ["a", "new", "a", "b"]}
    snaps = list(graph.get_state_history(cfg()))
    input_snap = next(s for s in snaps if s.metadata["source"] == "input" and s.metadata["step"] == 2)
    assert input_snap.parent_config == snap_b.config
    assert [(s.metadata["source"], s.metadata["step"]) for s in snaps[:4]] == [
        ("loop", 5),
        ("loop", 4),
        ("loop", 3),
        ("input", 2),
    ]


def test_new_input_abandons_a_pending_interrupt():
    """L-8, O-13: new input on a thread with a pending interrupt drops the interrupted task
    and runs the graph again from the new input."""

    def ask(state):
        return {"log": [interrupt("q")]}

    builder = StateGraph(S)
    builder.add_node("a", append("a"))
    builder.add_node("ask", ask)
    builder.add_edge(START, "a")
    builder.add_edge("a", "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    first = graph.invoke({"log": ["first"]}, cfg())
    second = graph.invoke({"log": ["second"]}, cfg())
    assert first["log"] == ["first", "a"] and second["log"] == ["first", "a", "second", "a"]
    assert [i.value for i in first["__interrupt__"]] == [i.value for i in second["__interrupt__"]] == ["q"]
    assert first["__interrupt__"][0].id != second["__interrupt__"][0].id
    assert hist(graph, cfg()) == [
        ("loop", 4, ("ask",)),
        ("loop", 3, ("a",)),
        ("input", 2, ("__start__",)),
        ("loop", 1, ("ask",)),
        ("loop", 0, ("a",)),
        ("input", -1, ("__start__",)),
    ]
    assert graph.invoke(Command(resume="R"), cfg())["log"] == ["first", "a", "second", "a", "R"]


# --- P-14: durability ----------------------------------------------------------------


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_durability_sync_and_async_save_every_step(durability):
    """P-14, O-14: sync and async save the same full history."""
    graph = seq("a", "b")
    assert graph.invoke({"log": []}, cfg(), durability=durability) == {"log": ["a", "b"]}
    assert hist(graph, cfg()) == [
        ("loop", 2, ()),
        ("loop", 1, ("b",)),
        ("loop", 0, ("a",)),
        ("input", -1, ("__start__",)),
    ]


def test_durability_exit_saves_only_the_final_checkpoint():
    """P-14, O-14: exit writes a single checkpoint at the end of the run (no parent on a
    fresh thread); a second exit run adds one more, whose parent is the first."""
    graph = seq("a", "b")
    assert graph.invoke({"log": []}, cfg(), durability="exit") == {"log": ["a", "b"]}
    assert hist(graph, cfg(), "values") == [("loop", 2, (), {"log": ["a", "b"]})]
    first = graph.get_state(cfg())
    assert first.parent_config is None
    assert graph.checkpointer.get_tuple(cfg()).pending_writes == []
    graph.invoke({"log": []}, cfg(), durability="exit")
    assert hist(graph, cfg(), "values") == [
        ("loop", 6, (), {"log": ["a", "b", "a", "b"]}),
        ("loop", 2, (), {"log": ["a", "b"]}),
    ]
    assert graph.get_state(cfg()).parent_config == first.config


def test_durability_exit_with_error_saves_the_failed_step():
    """P-14, O-14: exit + error saves the checkpoint of the step that failed, with its
    error as a pending write."""

    def boom(state):
        raise ValueError("x")

    builder = StateGraph(S)
    builder.add_node("a", append("a"))
    builder.add_node("boom", boom)
    builder.add_edge(START, "a")
    builder.add_edge("a", "boom")
    graph = builder.compile(checkpointer=InMemorySaver())
    with pytest.raises(ValueError, match="x"):
        graph.invoke({"log": []}, cfg(), durability="exit")
    rows = [
        (s.metadata["source"], s.metadata["step"], s.next, s.values, [t.error for t in s.tasks])
        for s in graph.get_state_history(cfg())
    ]
    assert rows == [("loop", 1, ("boom",), {"log": ["a"]}, ["ValueError('x')"])]
    [(_, channel, value)] = graph.checkpointer.get_tuple(cfg()).pending_writes
    assert (channel, value) == ("__error__", "ValueError('x')")


def test_durability_exit_with_interrupt_then_resume():
    """P-14, O-14: exit + interrupt saves the interrupted step; resuming with exit adds
    only the final checkpoint."""

    def ask(state):
        return {"log": [interrupt("q")]}

    builder = StateGraph(S)
    builder.add_node("a", append("a"))
    builder.add_node("ask", ask)
    builder.add_edge(START, "a")
    builder.add_edge("a", "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    out = graph.invoke({"log": []}, cfg(), durability="exit")
    assert [i.value for i in out["__interrupt__"]] == ["q"]
    assert hist(graph, cfg(), "values") == [("loop", 1, ("ask",), {"log": ["a"]})]
    assert graph.get_state(cfg()).interrupts == tuple(out["__interrupt__"])
    assert graph.invoke(Command(resume="R"), cfg(), durability="exit") == {"log": ["a", "R"]}
    assert hist(graph, cfg(), "values") == [
        ("loop", 2, (), {"log": ["a", "R"]}),
        ("loop", 1, ("ask",), {"log": ["a"]}),
    ]


@pytest.mark.parametrize("durability", ["async", "exit"])
def test_durability_without_checkpointer_warns(durability):
    """P-14: durability has no effect without a checkpointer, and says so."""
    builder = StateGraph(S)
    builder.add_node("a", append("a"))
    builder.add_edge(START, "a")
    graph = builder.compile()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert graph.invoke({"log": []}, durability=durability) == {"log": ["a"]}
    assert [(w.category, str(w.message)) for w in caught] == [
        (UserWarning, "`durability` has no effect when no checkpointer is present.")
    ]


# --- checkpoints / debug / tasks stream modes with a checkpointer (O-2) -------------------


def gen_graph():
    """O-2: Send each subject to gen."""

    class J(TypedDict, total=False):
        subjects: list
        jokes: Annotated[list, operator.add]

    builder = StateGraph(J)
    builder.add_node("gen", lambda arg: {"jokes": [f"joke {arg['subject']}"]})
    builder.add_conditional_edges(START, lambda s: [Send("gen", {"subject": x}) for x in s["subjects"]])
    builder.add_edge("gen", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_debug_mode_with_checkpointer():
    """S-*, O-2: debug yields checkpoint events for every saved checkpoint and task /
    task_result events; their configs and task ids match the saved history."""
    graph = gen_graph()
    events = list(graph.stream({"subjects": ["a"]}, cfg("2"), stream_mode="debug"))
    assert [(e["step"], e["type"]) for e in events] == [
        (-1, "checkpoint"),
        (0, "checkpoint"),
        (1, "task"),
        (1, "task_result"),
        (1, "checkpoint"),
    ]
    for e in events:
        assert set(e) == {"step", "timestamp", "type", "payload"}
        datetime.fromisoformat(e["timestamp"])
    snaps = list(reversed(list(graph.get_state_history(cfg("2")))))
    cps = [e["payload"] for e in events if e["type"] == "checkpoint"]
    assert [p["config"] for p in cps] == [s.config for s in snaps]
    assert [p["parent_config"] for p in cps] == [None, snaps[0].config, snaps[1].config]
    assert [p["values"] for p in cps] == [{"jokes": []}, {"subjects": ["a"], "jokes": []}, {"subjects": ["a"], "jokes": ["joke a"]}]
    assert [p["metadata"] for p in cps] == [s.metadata for s in snaps]
    assert [p["next"] for p in cps] == [["__start__"], ["gen"], []]
    assert [p["tasks"] for p in cps] == [
        [{"id": snaps[0].tasks[0].id, "name": "__start__", "interrupts": (), "state": None}],
        [{"id": snaps[1].tasks[0].id, "name": "gen", "interrupts": (), "state": None}],
        [],
    ]
    gen_id = snaps[1].tasks[0].id
    assert events[2]["payload"] == {
        "id": gen_id,
        "name": "gen",
        "input": {"subject": "a"},
        "triggers": ("__pregel_push",),
    }
    assert events[3]["payload"] == {
        "id": gen_id,
        "name": "gen",
        "error": None,
        "result": {"jokes": ["joke a"]},
        "interrupts": [],
    }


def test_checkpoints_mode_yields_the_debug_checkpoint_payloads():
    """O-2: stream_mode="checkpoints" yields exactly the payloads of debug's checkpoint
    events."""
    graph = gen_graph()
    payloads = list(graph.stream({"subjects": ["a"]}, cfg("c"), stream_mode="checkpoints"))
    snaps = list(reversed(list(graph.get_state_history(cfg("c")))))
    assert [p["config"] for p in payloads] == [s.config for s in snaps]
    assert [set(p) for p in payloads] == [{"config", "parent_config", "values", "metadata", "next", "tasks"}] * 3
    assert [p["next"] for p in payloads] == [["__start__"], ["gen"], []]
    debug = list(gen_graph().stream({"subjects": ["a"]}, cfg("d"), stream_mode="debug"))
    strip = lambda p: {k: v for k, v in p.items() if k not in ("config", "parent_config", "tasks")}
    assert [strip(p) for p in payloads] == [strip(e["payload"]) for e in debug if e["type"] == "checkpoint"]


def test_tasks_mode_with_checkpointer():
    """O-2: tasks mode: a start event and a result event per task, same id."""
    graph = gen_graph()
    events = list(graph.stream({"subjects": ["a"]}, cfg(), stream_mode="tasks"))
    gen_id = next(s for s in graph.get_state_history(cfg()) if s.metadata["step"] == 0).tasks[0].id
    assert events == [
        {"id": gen_id, "name": "gen", "input": {"subject": "a"}, "triggers": ("__pregel_push",)},
        {"id": gen_id, "name": "gen", "error": None, "result": {"jokes": ["joke a"]}, "interrupts": []},
    ]


def test_checkpoints_mode_after_static_breakpoint_includes_next_step():
    """L-47: an interrupt_after stop emits the checkpoint of the stopped step, whose next
    lists the node that would run."""
    graph = seq("a", "b", interrupt_after=["a"])
    payloads = list(graph.stream({"log": []}, cfg(), stream_mode="checkpoints"))
    assert [(p["metadata"]["step"], p["next"]) for p in payloads][:3] == [(-1, ["__start__"]), (0, ["a"]), (1, ["b"])]
    assert payloads[-1]["config"] == graph.get_state(cfg()).config


# --- L-10: recursion limit of resumed runs ------------------------------------------------


@pytest.mark.parametrize(("limit", "ok"), [(1, False), (2, True), (3, True)])
def test_recursion_limit_on_a_resumed_run(limit, ok):
    """L-10, O-4: a resumed run has no input step: k remaining supersteps succeed iff
    k <= N + 1 (3 remaining nodes: N=1 fails, N=2 passes)."""
    graph = seq("a", "b", "c", "d", interrupt_before=["b"])
    graph.invoke({"log": []}, cfg())
    config = {**cfg(), "recursion_limit": limit}
    if ok:
        assert graph.invoke(None, config) == {"log": ["a", "b", "c", "d"]}
    else:
        text = RECURSION_TEXT.format(n=limit)
        with pytest.raises(GraphRecursionError, match=re.escape(text)) as info:
            graph.invoke(None, config)
        assert str(info.value) == text


@pytest.mark.parametrize(("limit", "ok"), [(1, False), (2, True)])
def test_recursion_limit_on_a_command_resume(limit, ok):
    """L-10: the same counting applies to a Command(resume=...) run: the interrupted node
    plus two more nodes are 3 remaining supersteps."""

    def ask(state):
        return {"log": [interrupt("q")]}

    builder = StateGraph(S)
    builder.add_node("ask", ask)
    builder.add_node("c", append("c"))
    builder.add_node("d", append("d"))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "c")
    builder.add_edge("c", "d")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    config = {**cfg(), "recursion_limit": limit}
    if ok:
        assert graph.invoke(Command(resume="R"), config) == {"log": ["R", "c", "d"]}
    else:
        with pytest.raises(GraphRecursionError, match=re.escape(RECURSION_TEXT.format(n=limit))):
            graph.invoke(Command(resume="R"), config)


def test_recursion_limit_on_a_fresh_run_with_checkpointer():
    """L-10: a fresh run of k nodes needs N >= k + 1; the failed run keeps its checkpoints."""
    graph = seq("a", "b", "c")
    with pytest.raises(GraphRecursionError):
        graph.invoke({"log": []}, {**cfg(), "recursion_limit": 3})
    assert graph.get_state(cfg()).values == {"log": ["a", "b", "c"]}
    assert graph.invoke({"log": []}, {**cfg("2"), "recursion_limit": 4}) == {"log": ["a", "b", "c"]}


def test_empty_input_on_fresh_thread_with_checkpointer():
    """L-9: invoke(None) on a thread without checkpoints has no input."""
    graph = seq("a")
    with pytest.raises(EmptyInputError, match=re.escape("Received no input for __start__")):
        graph.invoke(None, cfg())
