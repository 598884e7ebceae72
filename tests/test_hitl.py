"""Human in the loop: `interrupt()`, resuming with `Command(resume=...)`, static
breakpoints (docs/BEHAVIOUR.md §6, I-1 … I-11, observed outputs O-6, O-7, O-8).

Every graph here runs with a real `InMemorySaver` (except the I-6 tests, which show
what happens without one). What is checked: the `__interrupt__` output of invoke and
of the stream modes, the re-execution of an interrupted node from its first line on
every resume, the answers stored per `interrupt()` call, resume maps keyed by
interrupt id, the errors of ambiguous and strict resumes, the writes an interrupted
task keeps, `NodeInterrupt`, and `interrupt_before` / `interrupt_after` given at
compile time and per call.

Ids (interrupt ids, task ids, checkpoint ids) are never pinned: a test only checks
their shape (32 hex digits) and how they relate (equal across two reads, distinct
between tasks).

Every expectation was checked against LangGraph 1.2.22 by running this file with
`lgembed` aliased to `langgraph`.

Why over 600 lines: each test builds its own small graph so it stays independent
and each failure points at one statement of §6.
"""

from __future__ import annotations

import asyncio
import operator
import re
import time
import warnings
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.errors import EmptyInputError, NodeInterrupt, UnknownInterruptError
from lgembed.graph import END, START, StateGraph
from lgembed.types import Command, GraphOutput, Interrupt, StateSnapshot, interrupt

# --- helpers -------------------------------------------------------------------

HEX32 = re.compile(r"[0-9a-f]{32}")

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"

MULTIPLE_PENDING_TEXT = (
    "When there are multiple pending interrupts, you must specify the interrupt id when "
    "resuming. Docs: "
    "https://docs.langchain.com/oss/python/langgraph/interrupts#handling-multiple-interrupts."
)

STRICT = "__pregel_strict_resume"


class Log(TypedDict):
    log: Annotated[list, operator.add]


class XLog(TypedDict, total=False):
    x: object
    log: Annotated[list, operator.add]


def cfg(thread="1", **configurable):
    return {"configurable": {"thread_id": thread, **configurable}}


def append(name, calls=None):
    """A node that records its run in `calls` and appends `name` to `log`."""

    def node(state):
        if calls is not None:
            calls.append(name)
        return {"log": [name]}

    return node


def ask_other(calls, checkpointer=None, other_delay=0.0):
    """O-6: START -> ask (two interrupt() calls) and START -> other, in parallel."""

    def ask(state):
        calls.append("ask")
        a = interrupt("q1")
        calls.append(("got1", a))
        b = interrupt({"q": 2})
        calls.append(("got2", b))
        return {"log": [a, b]}

    def other(state):
        calls.append("other")
        if other_delay:
            time.sleep(other_delay)
        return {"log": ["other"]}

    builder = StateGraph(XLog)
    builder.add_node("ask", ask)
    builder.add_node("other", other)
    builder.add_edge(START, "ask")
    builder.add_edge(START, "other")
    return builder.compile(checkpointer=checkpointer if checkpointer is not None else InMemorySaver())


def parallel_askers(calls=None):
    """O-7: START -> a and START -> b, each `{"log": [(name, interrupt("q" + name))]}`."""

    def make(name):
        def node(state):
            if calls is not None:
                calls.append(name)
            return {"log": [(name, interrupt("q" + name))]}

        return node

    builder = StateGraph(Log)
    builder.add_node("a", make("a"))
    builder.add_node("b", make("b"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    return builder.compile(checkpointer=InMemorySaver())


def a_then_b(checkpointer=None, **compile_kwargs):
    """O-8: START -> a -> b, each appending its name."""
    builder = StateGraph(Log)
    builder.add_node("a", append("a"))
    builder.add_node("b", append("b"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile(
        checkpointer=checkpointer if checkpointer is not None else InMemorySaver(),
        **compile_kwargs,
    )


def two_questions(calls=None):
    """One node asking twice: x = answer1 + answer2."""

    def ask(state):
        if calls is not None:
            calls.append("ask")
        a = interrupt("1")
        b = interrupt("2")
        return {"x": a + b}

    builder = StateGraph(XLog)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    return builder.compile(checkpointer=InMemorySaver())


# --- I-1 / I-5: first interrupt, live state, re-execution ------------------------------


def test_invoke_returns_values_and_interrupt_list():
    """I-5, O-6 (R1): invoke returns the state including the sibling's write and
    `'__interrupt__'` as a list of Interrupt(value, id)."""
    calls = []
    graph = ask_other(calls)
    out = graph.invoke({"x": 1}, cfg())
    assert set(out) == {"x", "log", "__interrupt__"}
    assert out["x"] == 1
    assert out["log"] == ["other"]
    assert isinstance(out["__interrupt__"], list)
    [intr] = out["__interrupt__"]
    assert isinstance(intr, Interrupt)
    assert intr.value == "q1"
    assert HEX32.fullmatch(intr.id)
    assert sorted(calls, key=str) == ["ask", "other"]


def test_interrupt_repr_has_value_id_and_response_schema():
    """I-3: repr is `Interrupt(value=..., id=..., response_schema=None)`."""
    graph = ask_other([])
    [intr] = graph.invoke({"x": 1}, cfg())["__interrupt__"]
    assert repr(intr) == f"Interrupt(value='q1', id='{intr.id}', response_schema=None)"
    assert intr == Interrupt(value="q1", id=intr.id)
    assert intr.response_schema is None


def test_get_state_after_interrupt_lists_pending_task_and_finished_sibling():
    """I-5, O-6 (STATE/TASKS): next = the interrupted task only, its interrupt is the one
    invoke returned, the finished sibling carries its result."""
    graph = ask_other([])
    [intr] = graph.invoke({"x": 1}, cfg())["__interrupt__"]
    state = graph.get_state(cfg())
    assert isinstance(state, StateSnapshot)
    assert state.next == ("ask",)
    assert state.interrupts == (intr,)
    assert state.values == {"x": 1, "log": ["other"]}
    assert [(t.name, t.path, t.error, t.interrupts, t.state, t.result) for t in state.tasks] == [
        ("ask", ("__pregel_pull", "ask"), None, (intr,), None, None),
        ("other", ("__pregel_pull", "other"), None, (), None, {"log": ["other"]}),
    ]
    assert state.tasks[0].id != state.tasks[1].id


def test_interrupted_run_keeps_checkpoint_at_step_start():
    """I-5: the sibling's write reaches the returned values but not a checkpoint; the
    saved checkpoint stays at the step start, holding the step's writes as pending."""
    graph = ask_other([])
    graph.invoke({"x": 1}, cfg())
    saved = graph.checkpointer.get_tuple(cfg())
    assert saved.metadata["step"] == 0
    assert saved.metadata["source"] == "loop"
    assert "log" not in saved.checkpoint["channel_values"]
    state = graph.get_state(cfg())
    ids = {t.name: t.id for t in state.tasks}
    assert [(tid, ch) for tid, ch, _ in saved.pending_writes if ch != "__interrupt__"] == [
        (ids["other"], "log")
    ]
    assert [(tid, v) for tid, ch, v in saved.pending_writes if ch == "__interrupt__"] == [
        (ids["ask"], list(state.interrupts))
    ]


def test_resume_reexecutes_node_from_the_top():
    """I-1, O-6 (R2): the resumed node runs again from its first line; the first
    interrupt() returns the answer, the second one interrupts; the sibling is not rerun."""
    calls = []
    graph = ask_other(calls)
    first = graph.invoke({"x": 1}, cfg())["__interrupt__"][0]
    calls.clear()
    out = graph.invoke(Command(resume="A1"), cfg())
    [second] = out["__interrupt__"]
    assert out["log"] == ["other"] and out["x"] == 1
    assert second.value == {"q": 2}
    assert HEX32.fullmatch(second.id) and second.id != first.id
    assert calls == ["ask", ("got1", "A1")]
    assert graph.get_state(cfg()).interrupts == (second,)


def test_resume_streams_cached_sibling_and_stored_answers():
    """I-1, L-13, O-6: on the last resume the finished sibling's saved writes come back as
    an updates chunk marked `'__metadata__': {'cached': True}`; earlier answers replay in
    order; writes are applied in task-path order (ask before other)."""
    calls = []
    graph = ask_other(calls)
    graph.invoke({"x": 1}, cfg())
    graph.invoke(Command(resume="A1"), cfg())
    calls.clear()
    chunks = list(graph.stream(Command(resume="A2"), cfg(), stream_mode="updates"))
    assert chunks == [
        {"other": {"log": ["other"]}, "__metadata__": {"cached": True}},
        {"ask": {"log": ["A1", "A2"]}},
    ]
    assert calls == ["ask", ("got1", "A1"), ("got2", "A2")]
    state = graph.get_state(cfg())
    assert state.values == {"x": 1, "log": ["A1", "A2", "other"]}
    assert state.next == ()
    assert state.interrupts == ()


def test_interrupt_chunks_in_updates_and_values_modes():
    """I-5, O-6 (fresh thread, ["updates", "values"]): the interrupt appears as an updates
    chunk with a tuple and in a values chunk; the sibling's write follows."""
    graph = ask_other([], other_delay=0.03)
    chunks = list(graph.stream({"x": 1}, cfg(), stream_mode=["updates", "values"]))
    intr = graph.get_state(cfg()).interrupts[0]
    assert chunks == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"__interrupt__": (intr,)}),
        ("values", {"x": 1, "log": [], "__interrupt__": (intr,)}),
        ("updates", {"other": {"log": ["other"]}}),
        ("values", {"x": 1, "log": ["other"]}),
    ]
    assert isinstance(chunks[1][1]["__interrupt__"], tuple)


def test_invoke_v2_returns_graph_output_with_interrupts():
    """I-5, O-6 (v2): GraphOutput(value=<state without __interrupt__>, interrupts=(...))."""
    graph = ask_other([])
    out = graph.invoke({"x": 1}, cfg(), version="v2")
    assert isinstance(out, GraphOutput)
    assert out.value == {"x": 1, "log": ["other"]}
    assert isinstance(out.interrupts, tuple)
    assert out.interrupts == graph.get_state(cfg()).interrupts
    assert [i.value for i in out.interrupts] == ["q1"]


def test_interrupted_task_keeps_no_output_writes():
    """I-4, I-5: a task interrupted after its function returned (here by its conditional
    router) commits only `__interrupt__`: its state write is not saved (get_state does
    not show it) and the node runs again on resume. The returned values of the
    interrupted run do include that in-memory write (LangGraph applies every write the
    tasks produced before stopping, not only the siblings')."""
    calls = []

    def a(state):
        calls.append("a")
        return {"log": ["a"]}

    def route(state):
        return interrupt("where?")

    builder = StateGraph(Log)
    builder.add_node("a", a)
    builder.add_node("b", append("b"))
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", route, ["b", END])
    graph = builder.compile(checkpointer=InMemorySaver())
    out = graph.invoke({"log": []}, cfg())
    assert out["log"] == ["a"]
    assert [i.value for i in out["__interrupt__"]] == ["where?"]
    saved = graph.checkpointer.get_tuple(cfg())
    assert [ch for _, ch, _ in saved.pending_writes] == ["__interrupt__"]
    state = graph.get_state(cfg())
    assert (state.values, state.next, state.tasks[0].result) == ({"log": []}, ("a",), None)
    assert graph.invoke(Command(resume="b"), cfg()) == {"log": ["a", "b"]}
    assert calls == ["a", "a"]


# --- I-2 / I-3: interrupt ids and response schemas ----------------------------------------


def test_interrupt_ids_relations():
    """I-2: ids are 32 hex digits; parallel tasks get distinct ids; a re-interrupt of the
    same question (invoke(None)) keeps its id; a new thread gives new ids."""
    graph = parallel_askers()
    ids = [i.id for i in graph.invoke({"log": []}, cfg("t1"))["__interrupt__"]]
    assert all(HEX32.fullmatch(i) for i in ids)
    assert len(set(ids)) == 2
    again = [i.id for i in graph.invoke(None, cfg("t1"))["__interrupt__"]]
    assert again == ids
    other_thread = [i.id for i in graph.invoke({"log": []}, cfg("t2"))["__interrupt__"]]
    assert not set(other_thread) & set(ids)


def test_second_interrupt_of_a_task_has_its_own_id():
    """I-2: the question asked after one answer has a different id, stable across reruns."""
    graph = two_questions()
    [first] = graph.invoke({"x": ""}, cfg())["__interrupt__"]
    [second] = graph.invoke(Command(resume="A"), cfg())["__interrupt__"]
    assert second.value == "2"
    assert HEX32.fullmatch(second.id) and second.id != first.id
    state = graph.get_state(cfg())
    assert state.interrupts == (second,)
    assert state.tasks[0].interrupts == (second,)


def test_interrupt_ids_in_parallel_interrupts_are_emitted_in_task_order():
    """I-5, O-7 (R1): both interrupts are returned, values in task order (a, b)."""
    graph = parallel_askers()
    out = graph.invoke({"log": []}, cfg())
    assert out["log"] == []
    assert [i.value for i in out["__interrupt__"]] == ["qa", "qb"]
    state = graph.get_state(cfg())
    assert state.next == ("a", "b")
    assert state.interrupts == tuple(out["__interrupt__"])
    assert [t.interrupts for t in state.tasks] == [(i,) for i in out["__interrupt__"]]


def test_response_schema_dict_is_exposed_and_not_validated():
    """I-3: a dict response_schema is passed through unvalidated."""
    schema = {"type": "object"}

    def ask(state):
        return {"log": [interrupt("q", response_schema=schema)]}

    builder = StateGraph(Log)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    [intr] = graph.invoke({"log": []}, cfg())["__interrupt__"]
    assert intr.response_schema == {"type": "object"}
    assert graph.invoke(Command(resume={"age": "notint"}), cfg()) == {"log": [{"age": "notint"}]}


def test_response_schema_pydantic_validates_resume_value():
    """I-3: a pydantic response_schema exposes its JSON schema; a bad resume value raises
    ValidationError and the interrupt stays pending; a good one is returned as the model.
    Observed on LangGraph 1.2.22 (docs/BEHAVIOUR.md says "nothing saved"): the bad value is
    kept as the step's null-task resume and the error is saved on the task, so
    invoke(None) fails again until a new resume replaces the value."""
    pydantic = pytest.importorskip("pydantic")

    class Answer(pydantic.BaseModel):
        age: int

    def ask(state):
        return {"log": [interrupt("q", response_schema=Answer)]}

    builder = StateGraph(Log)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    [intr] = graph.invoke({"log": []}, cfg())["__interrupt__"]
    assert intr.response_schema == {
        "properties": {"age": {"title": "Age", "type": "integer"}},
        "required": ["age"],
        "title": "Answer",
        "type": "object",
    }
    with pytest.raises(pydantic.ValidationError, match=re.escape("1 validation error for Answer")):
        graph.invoke(Command(resume={"age": "notint"}), cfg())
    state = graph.get_state(cfg())
    assert state.next == ("ask",)
    assert state.interrupts == (intr,)
    assert state.tasks[0].error.startswith("1 validation error for Answer\nage\n")
    saved = graph.checkpointer.get_tuple(cfg())
    assert [ch for _, ch, _ in saved.pending_writes] == ["__resume__", "__interrupt__", "__error__"]
    with pytest.raises(pydantic.ValidationError, match=re.escape("1 validation error for Answer")):
        graph.invoke(None, cfg())
    out = graph.invoke(Command(resume={"age": 3}), cfg())
    assert out == {"log": [Answer(age=3)]}


# --- I-6: no checkpointer --------------------------------------------------------------


def test_interrupt_without_checkpointer_returns_interrupt():
    """I-6, O-6: without a checkpointer invoke still returns `__interrupt__`."""

    def ask(state):
        return {"log": [interrupt("q1")]}

    builder = StateGraph(XLog)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile()
    out = graph.invoke({"x": 1})
    assert out["x"] == 1 and out["log"] == []
    [intr] = out["__interrupt__"]
    assert intr.value == "q1" and HEX32.fullmatch(intr.id)


def test_resume_without_checkpointer_raises():
    """I-6, L-5: Command(resume=...) needs a checkpointer."""
    builder = StateGraph(Log)
    builder.add_node("a", append("a"))
    builder.add_edge(START, "a")
    graph = builder.compile()
    text = "Cannot use Command(resume=...) without checkpointer"
    with pytest.raises(RuntimeError, match=re.escape(text)) as info:
        graph.invoke(Command(resume="x"))
    assert str(info.value) == text


# --- I-7: resume forms ------------------------------------------------------------------


def test_single_resume_with_multiple_pending_interrupts_raises():
    """I-7, O-7: a bare resume value is refused when two interrupts are pending, and
    nothing runs."""
    calls = []
    graph = parallel_askers(calls)
    graph.invoke({"log": []}, cfg())
    calls.clear()
    with pytest.raises(RuntimeError, match=re.escape(MULTIPLE_PENDING_TEXT)) as info:
        graph.invoke(Command(resume="x"), cfg())
    assert str(info.value) == MULTIPLE_PENDING_TEXT
    assert calls == []
    assert graph.get_state(cfg()).next == ("a", "b")


def test_resume_map_answers_interrupts_by_id():
    """I-7, O-7 (R2, R3): a map {interrupt_id: value} answers that task only; the other
    stays pending; a's write comes back from the saver as a list."""
    calls = []
    graph = parallel_askers(calls)
    id_a, id_b = [i.id for i in graph.invoke({"log": []}, cfg())["__interrupt__"]]
    calls.clear()
    out = graph.invoke(Command(resume={id_a: "RA"}), cfg())
    assert out["log"] == [("a", "RA")]
    assert out["__interrupt__"] == [Interrupt(value="qb", id=id_b)]
    assert sorted(calls) == ["a", "b"]
    assert graph.get_state(cfg()).next == ("b",)
    calls.clear()
    assert graph.invoke(Command(resume={id_b: "RB"}), cfg()) == {"log": [["a", "RA"], ("b", "RB")]}
    assert calls == ["b"]


def test_resume_map_answering_both_at_once():
    """I-7: one map may answer every pending interrupt."""
    graph = parallel_askers()
    id_a, id_b = [i.id for i in graph.invoke({"log": []}, cfg())["__interrupt__"]]
    out = graph.invoke(Command(resume={id_b: "RB", id_a: "RA"}), cfg())
    assert out == {"log": [("a", "RA"), ("b", "RB")]}
    assert graph.get_state(cfg()).next == ()


def test_history_after_resume_map():
    """I-7, P-22, O-7 (history): addressed snapshots show each task's latest interrupt and
    its final result."""
    graph = parallel_askers()
    id_a, id_b = [i.id for i in graph.invoke({"log": []}, cfg())["__interrupt__"]]
    graph.invoke(Command(resume={id_a: "RA"}), cfg())
    graph.invoke(Command(resume={id_b: "RB"}), cfg())
    rows = [
        (
            s.metadata,
            s.next,
            [(t.name, [i.value for i in t.interrupts], t.result) for t in s.tasks],
            [i.value for i in s.interrupts],
        )
        for s in graph.get_state_history(cfg())
    ]
    assert rows == [
        ({"source": "loop", "step": 1, "parents": {}}, (), [], []),
        (
            {"source": "loop", "step": 0, "parents": {}},
            ("a", "b"),
            [("a", ["qa"], {"log": [["a", "RA"]]}), ("b", ["qb"], {"log": [["b", "RB"]]})],
            ["qa", "qb"],
        ),
        (
            {"source": "input", "step": -1, "parents": {}},
            ("__start__",),
            [("__start__", [], {"log": []})],
            [],
        ),
    ]


def test_resume_map_with_unknown_id_reinterrupts():
    """I-7, O-7: unknown ids in a resume map are ignored; both tasks interrupt again."""
    graph = parallel_askers()
    first = graph.invoke({"log": []}, cfg())["__interrupt__"]
    out = graph.invoke(Command(resume={"0" * 32: "nobody"}), cfg())
    assert out == {"log": [], "__interrupt__": first}


def test_empty_resume_map_reinterrupts():
    """I-7: an empty map answers nothing (default mode: no error)."""
    graph = parallel_askers()
    first = graph.invoke({"log": []}, cfg())["__interrupt__"]
    assert graph.invoke(Command(resume={}), cfg()) == {"log": [], "__interrupt__": first}


def test_invoke_none_reruns_pending_task_which_interrupts_again():
    """I-7: invoke(None) answers nothing: the pending task runs again and re-interrupts
    with the same interrupt."""
    calls = []
    graph = ask_other(calls)
    [intr] = graph.invoke({"x": 1}, cfg())["__interrupt__"]
    calls.clear()
    out = graph.invoke(None, cfg())
    assert out == {"x": 1, "log": ["other"], "__interrupt__": [intr]}
    assert calls == ["ask"]


def test_resume_with_update_and_goto():
    """I-7: Command(resume, update, goto) also applies update/goto as null writes before the
    step: the resumed node sees the update and the goto target runs in the same step."""

    def ask(state):
        answer = interrupt("q")
        time.sleep(0.03)  # ask finishes after other: fixes the order of the updates chunks
        return {"log": [("ask", answer, state.get("x"))]}

    builder = StateGraph(XLog)
    builder.add_node("ask", ask)
    builder.add_node("other", append("other"))
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"x": 1}, cfg())
    chunks = list(graph.stream(Command(resume="R", update={"x": 5}, goto="other"), cfg(), stream_mode="updates"))
    assert chunks == [{"other": {"log": ["other"]}}, {"ask": {"log": [("ask", "R", 5)]}}]
    state = graph.get_state(cfg())
    assert state.values == {"x": 5, "log": [["ask", "R", 5], "other"]}
    assert state.metadata["step"] == 1


def test_two_interrupts_in_one_task_answered_in_turn():
    """I-1, O-7 (two interrupts in one task): answers are stored per call; the first
    single value is consumed once per run (the second call interrupts)."""
    calls = []
    graph = two_questions(calls)
    graph.invoke({"x": ""}, cfg())
    out = graph.invoke(Command(resume="A"), cfg())
    assert out["x"] == "" and [i.value for i in out["__interrupt__"]] == ["2"]
    id2 = out["__interrupt__"][0].id
    assert graph.invoke(Command(resume={id2: "B"}), cfg()) == {"x": "AB", "log": []}
    assert calls == ["ask", "ask", "ask"]


def test_two_interrupts_pending_writes_of_the_step():
    """I-1, I-4, P-5, O-7: after both answers the step's pending writes are the null-task
    resume, the task's answer list, its last interrupt and its output, in that order."""
    graph = two_questions()
    graph.invoke({"x": ""}, cfg())
    [intr2] = graph.invoke(Command(resume="A"), cfg())["__interrupt__"]
    step_start = graph.get_state(cfg()).config
    task_id = graph.get_state(cfg()).tasks[0].id
    graph.invoke(Command(resume={intr2.id: "B"}), cfg())
    writes = graph.checkpointer.get_tuple(step_start).pending_writes
    assert writes == [
        (NULL_TASK_ID, "__resume__", "A"),
        (task_id, "__resume__", ["A", "B"]),
        (task_id, "__interrupt__", [intr2]),
        (task_id, "x", "AB"),
    ]


def test_leftover_single_resume_value_answers_the_next_question():
    """I-1, I-7: a single-value resume is saved as a null-task write of the step and stays
    there; a later invoke(None) on the same step consumes it again, so it also answers
    the second question (observed on LangGraph 1.2.22: x == "AA")."""
    calls = []
    graph = two_questions(calls)
    graph.invoke({"x": ""}, cfg())
    graph.invoke(Command(resume="A"), cfg())
    saved = graph.checkpointer.get_tuple(cfg())
    assert (NULL_TASK_ID, "__resume__", "A") in saved.pending_writes
    assert graph.invoke(None, cfg()) == {"x": "AA", "log": []}
    assert calls == ["ask", "ask", "ask"]


# --- I-8: strict resume ------------------------------------------------------------------


def test_strict_resume_ambiguous_single_value():
    """I-8: strict mode raises UnknownInterruptError(reason="ambiguous") with the pending ids."""
    graph = parallel_askers()
    ids = sorted(i.id for i in graph.invoke({"log": []}, cfg(**{STRICT: True}))["__interrupt__"])
    with pytest.raises(UnknownInterruptError, match=re.escape(MULTIPLE_PENDING_TEXT)) as info:
        graph.invoke(Command(resume="x"), cfg(**{STRICT: True}))
    err = info.value
    assert str(err) == MULTIPLE_PENDING_TEXT
    assert (err.reason, err.interrupt_ids, err.pending_ids) == ("ambiguous", (), tuple(ids))


def test_strict_resume_empty_map():
    """I-8: strict mode refuses an empty resume map (reason="empty_map")."""
    graph = parallel_askers()
    ids = sorted(i.id for i in graph.invoke({"log": []}, cfg(**{STRICT: True}))["__interrupt__"])
    with pytest.raises(UnknownInterruptError, match=re.escape("The resume map names no interrupt")) as info:
        graph.invoke(Command(resume={}), cfg(**{STRICT: True}))
    err = info.value
    assert str(err) == "The resume map names no interrupt"
    assert (err.reason, err.interrupt_ids, err.pending_ids) == ("empty_map", (), tuple(ids))


def test_strict_resume_unknown_and_consumed_ids():
    """I-8: strict mode refuses ids that are not pending (unknown or already answered),
    before anything is written, so the pending ones can still be answered."""
    graph = parallel_askers()
    id_a, id_b = [i.id for i in graph.invoke({"log": []}, cfg(**{STRICT: True}))["__interrupt__"]]
    unknown = "0" * 32
    text = f"Unknown or already-consumed interrupt: {unknown}"
    with pytest.raises(UnknownInterruptError, match=re.escape(text)) as info:
        graph.invoke(Command(resume={unknown: 1, id_a: 2}), cfg(**{STRICT: True}))
    assert str(info.value) == text
    assert info.value.reason == "not_pending"
    assert info.value.interrupt_ids == (unknown,)
    assert info.value.pending_ids == tuple(sorted([id_a, id_b]))
    assert graph.get_state(cfg()).next == ("a", "b")
    graph.invoke(Command(resume={id_a: "A"}), cfg(**{STRICT: True}))
    text = f"Unknown or already-consumed interrupt: {id_a}"
    with pytest.raises(UnknownInterruptError, match=re.escape(text)) as info:
        graph.invoke(Command(resume={id_a: "A2"}), cfg(**{STRICT: True}))
    assert info.value.pending_ids == (id_b,)
    # a single value with exactly one pending interrupt is fine
    assert graph.invoke(Command(resume="B"), cfg(**{STRICT: True})) == {
        "log": [["a", "A"], ("b", "B")]
    }


# --- I-9: pending interrupts ---------------------------------------------------------------


def test_only_unfinished_tasks_have_pending_interrupts():
    """I-9, P-22: once a's interrupt is answered and a finished, live get_state lists only
    b's interrupt; a's task shows no interrupt and its result."""
    graph = parallel_askers()
    id_a, id_b = [i.id for i in graph.invoke({"log": []}, cfg())["__interrupt__"]]
    graph.invoke(Command(resume={id_a: "RA"}), cfg())
    state = graph.get_state(cfg())
    assert [i.id for i in state.interrupts] == [id_b]
    assert [(t.name, [i.id for i in t.interrupts], t.result) for t in state.tasks] == [
        ("a", [], {"log": [["a", "RA"]]}),
        ("b", [id_b], None),
    ]
    # a single value is no longer ambiguous: only b is pending
    assert graph.invoke(Command(resume="RB"), cfg())["log"] == [["a", "RA"], ("b", "RB")]


# --- I-10: NodeInterrupt -------------------------------------------------------------------


def test_node_interrupt_behaves_like_an_interrupt():
    """I-10: raising NodeInterrupt(value) interrupts with that value (and a deprecation
    warning); invoke(None) reruns the node."""
    ready = []

    def node(state):
        if not ready:
            raise NodeInterrupt("v")
        return {"log": ["ok"]}

    builder = StateGraph(XLog)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile(checkpointer=InMemorySaver())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = graph.invoke({"x": 1}, cfg())
    assert [str(w.message) for w in caught if "NodeInterrupt" in str(w.message)] == [
        (
            "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead. "
            "Deprecated in LangGraph V1.0 to be removed in V2.0."
        )
    ]
    assert out["x"] == 1 and out["log"] == []
    [intr] = out["__interrupt__"]
    assert intr.value == "v"
    # NodeInterrupt carries the default id of an Interrupt built without one
    assert intr.id == Interrupt(value="v").id
    state = graph.get_state(cfg())
    assert state.next == ("n",)
    assert state.interrupts == (intr,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert graph.invoke(None, cfg())["__interrupt__"] == [intr]
        ready.append(True)
        assert graph.invoke(None, cfg()) == {"x": 1, "log": ["ok"]}


def test_node_interrupt_is_a_graph_interrupt():
    """I-10, E-1: NodeInterrupt subclasses GraphInterrupt and carries one Interrupt."""
    from lgembed.errors import GraphInterrupt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exc = NodeInterrupt("v")
    assert isinstance(exc, GraphInterrupt)
    assert [i.value for i in exc.args[0]] == ["v"]


# --- I-11: static breakpoints -------------------------------------------------------------


def test_interrupt_before_stream_and_state():
    """I-11, O-8: interrupt_before=["b"] stops after a with an empty `__interrupt__` updates
    chunk; next is ('b',), no interrupts, metadata of step 1."""
    graph = a_then_b(interrupt_before=["b"])
    chunks = list(graph.stream({"log": []}, cfg(), stream_mode=["values", "updates"]))
    assert chunks == [
        ("values", {"log": []}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"log": ["a"]}),
        ("updates", {"__interrupt__": ()}),
    ]
    state = graph.get_state(cfg())
    assert state.next == ("b",)
    assert state.interrupts == ()
    assert state.metadata == {"source": "loop", "step": 1, "parents": {}}


def test_static_breakpoint_invoke_has_no_interrupt_key():
    """I-11, O-8: invoke returns the state without an `__interrupt__` key."""
    graph = a_then_b(interrupt_before=["b"])
    assert graph.invoke({"log": []}, cfg()) == {"log": ["a"]}


def test_resume_from_static_breakpoint_with_none():
    """I-11, O-8: stream(None, cfg) continues: values chunk of the current state, b runs."""
    graph = a_then_b(interrupt_before=["b"])
    graph.invoke({"log": []}, cfg())
    chunks = list(graph.stream(None, cfg(), stream_mode=["values", "updates"]))
    assert chunks == [
        ("values", {"log": ["a"]}),
        ("updates", {"b": {"log": ["b"]}}),
        ("values", {"log": ["a", "b"]}),
    ]
    assert graph.get_state(cfg()).next == ()


def test_interrupt_after_gives_the_same_chunks():
    """I-11, O-8: interrupt_after=["a"] stops at the same place."""
    graph = a_then_b(interrupt_after=["a"])
    chunks = list(graph.stream({"log": []}, cfg(), stream_mode=["values", "updates"]))
    assert chunks == [
        ("values", {"log": []}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"log": ["a"]}),
        ("updates", {"__interrupt__": ()}),
    ]
    state = graph.get_state(cfg())
    assert (state.next, state.metadata["step"]) == (("b",), 1)
    assert graph.invoke(None, cfg()) == {"log": ["a", "b"]}


def test_none_input_on_fresh_and_finished_threads():
    """I-11, L-9, O-8: None on a fresh thread has no input; on a finished thread it
    returns the state."""
    graph = a_then_b(interrupt_before=["b"])
    with pytest.raises(EmptyInputError, match=re.escape("Received no input for __start__")) as info:
        graph.invoke(None, cfg())
    assert str(info.value) == "Received no input for __start__"
    graph.invoke({"log": []}, cfg())
    graph.invoke(None, cfg())
    assert graph.invoke(None, cfg()) == {"log": ["a", "b"]}


def test_new_input_on_finished_thread_stops_at_breakpoint_again():
    """I-11, O-8: new input on a finished thread runs a again and stops before b."""
    graph = a_then_b(interrupt_before=["b"])
    graph.invoke({"log": []}, cfg())
    graph.invoke(None, cfg())
    chunks = list(graph.stream({"log": ["z"]}, cfg(), stream_mode=["values", "updates"]))
    assert chunks == [
        ("values", {"log": ["a", "b", "z"]}),
        ("updates", {"a": {"log": ["a"]}}),
        ("values", {"log": ["a", "b", "z", "a"]}),
        ("updates", {"__interrupt__": ()}),
    ]


def test_interrupt_before_star_stops_before_every_node():
    """I-11, O-8: "*" means every non-hidden node (not __start__)."""
    graph = a_then_b(interrupt_before="*")
    seen = [(graph.invoke({"log": []}, cfg()), graph.get_state(cfg()).next)]
    seen.append((graph.invoke(None, cfg()), graph.get_state(cfg()).next))
    seen.append((graph.invoke(None, cfg()), graph.get_state(cfg()).next))
    assert seen == [({"log": []}, ("a",)), ({"log": ["a"]}, ("b",)), ({"log": ["a", "b"]}, ())]


def test_interrupt_after_star_stops_after_every_node():
    """I-11: interrupt_after="*" stops after each node."""
    graph = a_then_b(interrupt_after="*")
    seen = [(graph.invoke({"log": []}, cfg()), graph.get_state(cfg()).next)]
    seen.append((graph.invoke(None, cfg()), graph.get_state(cfg()).next))
    assert seen == [({"log": ["a"]}, ("b",)), ({"log": ["a", "b"]}, ())]


def test_command_resume_at_static_breakpoint_continues():
    """I-11, O-8: a Command(resume=x) with no pending dynamic interrupt just continues."""
    graph = a_then_b(interrupt_before=["b"])
    graph.invoke({"log": []}, cfg())
    assert graph.invoke(Command(resume="hi"), cfg()) == {"log": ["a", "b"]}


def test_interrupt_before_given_per_call():
    """I-11: interrupt_before passed to invoke works without compile-time breakpoints and
    applies to that call only."""
    graph = a_then_b()
    assert graph.invoke({"log": []}, cfg(), interrupt_before=["b"]) == {"log": ["a"]}
    assert graph.get_state(cfg()).next == ("b",)
    assert graph.invoke(None, cfg()) == {"log": ["a", "b"]}


def test_interrupt_after_given_per_call():
    """I-11: interrupt_after passed to stream stops after that node."""
    graph = a_then_b()
    chunks = list(graph.stream({"log": []}, cfg(), interrupt_after=["a"]))
    assert chunks == [{"a": {"log": ["a"]}}, {"__interrupt__": ()}]
    assert graph.get_state(cfg()).next == ("b",)


def test_call_breakpoints_win_over_compile_breakpoints():
    """I-11: a truthy per-call list replaces the compiled one for that call; the next call
    without it uses the compiled one again."""
    builder = StateGraph(Log)
    for name in ("a", "b", "c"):
        builder.add_node(name, append(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["c"])
    assert graph.invoke({"log": []}, cfg(), interrupt_before=["b"]) == {"log": ["a"]}
    assert graph.get_state(cfg()).next == ("b",)
    assert graph.invoke(None, cfg()) == {"log": ["a", "b"]}
    assert graph.get_state(cfg()).next == ("c",)
    # an empty per-call list is falsy: the compiled breakpoint still applies
    graph.invoke({"log": []}, cfg("2"), interrupt_before=[])
    assert graph.get_state(cfg("2")).next == ("c",)


def test_static_breakpoint_before_one_of_parallel_nodes_stops_the_step():
    """I-11, L-14: interrupt_before on one of two parallel nodes stops before the whole
    step: neither runs, both are next."""
    calls = []
    builder = StateGraph(Log)
    builder.add_node("a", append("a", calls))
    builder.add_node("b", append("b", calls))
    builder.add_node("c", append("c", calls))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    assert graph.invoke({"log": []}, cfg()) == {"log": ["a"]}
    assert graph.get_state(cfg()).next == ("b", "c")
    assert calls == ["a"]
    assert graph.invoke(None, cfg()) == {"log": ["a", "b", "c"]}


# --- async twins -------------------------------------------------------------------------


def test_async_interrupt_and_resume():
    """I-1, I-5, P-0: ainvoke / astream / aget_state behave like their sync twins."""
    calls = []
    graph = ask_other(calls)

    async def main():
        out1 = await graph.ainvoke({"x": 1}, cfg())
        out2 = await graph.ainvoke(Command(resume="A1"), cfg())
        chunks = [c async for c in graph.astream(Command(resume="A2"), cfg(), stream_mode="updates")]
        state = await graph.aget_state(cfg())
        return out1, out2, chunks, state

    out1, out2, chunks, state = asyncio.run(main())
    assert out1["log"] == ["other"] and [i.value for i in out1["__interrupt__"]] == ["q1"]
    assert [i.value for i in out2["__interrupt__"]] == [{"q": 2}]
    assert chunks == [
        {"other": {"log": ["other"]}, "__metadata__": {"cached": True}},
        {"ask": {"log": ["A1", "A2"]}},
    ]
    assert state.values == {"x": 1, "log": ["A1", "A2", "other"]}
    assert calls.count("other") == 1


def test_async_node_interrupt_and_resume():
    """I-1: interrupt() inside an async node, resumed through ainvoke."""

    async def ask(state):
        answer = interrupt("async?")
        return {"log": [answer]}

    builder = StateGraph(Log)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())

    async def main():
        first = await graph.ainvoke({"log": []}, cfg())
        second = await graph.ainvoke(Command(resume="yes"), cfg())
        return first, second

    first, second = asyncio.run(main())
    assert first["log"] == [] and [i.value for i in first["__interrupt__"]] == ["async?"]
    assert second == {"log": ["yes"]}
