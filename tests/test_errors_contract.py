"""Error contract (docs/BEHAVIOUR.md §11, E-1 … E-7, plus the error texts of §4/§5).

Pins LangGraph's exception classes, their bases and their exact texts
(`match=re.escape(...)`), the retry policy defaults and classification, the retry
loop, the task note added to node exceptions, and how a failed task shows up in
the stream. Task ids differ per run: only the note's fixed prefix is pinned.

Why over 600 lines: docs/STYLE.md §C names this one file as the home of the error
contract; most of its length is parametrized classification tables.
"""

from __future__ import annotations

import asyncio
import operator
import re
import time
from typing import Annotated, TypedDict

import pytest

from lgembed import errors
from lgembed.channels import LastValue
from lgembed.config import get_config
from lgembed.errors import (
    EmptyChannelError,
    EmptyInputError,
    ErrorCode,
    GraphBubbleUp,
    GraphDrained,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    NodeCancelledError,
    NodeError,
    NodeInterrupt,
    NodeTimeoutError,
    ParentCommand,
    TaskNotFound,
    UnknownInterruptError,
    create_error_message,
)
from lgembed.graph import START, StateGraph
from lgembed.types import Command, RetryPolicy, default_retry_on, interrupt

# --- helpers -------------------------------------------------------------------

URL = "\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/"
NOTE_PREFIX = "During task with name '{name}' and id '"
FAST = {"initial_interval": 0.001, "jitter": False}


class Log(TypedDict):
    log: Annotated[list, operator.add]


class MyErr(Exception):
    """A user exception, retried by default_retry_on."""


def with_good_sibling(bad, retry_policy=None, name="bad"):
    """START -> bad (with `retry_policy`) and START -> good in parallel."""
    builder = StateGraph(Log)
    builder.add_node(name, bad, retry_policy=retry_policy)
    builder.add_node("good", lambda s: {"log": ["good"]})
    builder.add_edge(START, name)
    builder.add_edge(START, "good")
    return builder.compile()


def failing(exc_factory, calls, succeed_on=None):
    """A node that records each call and raises exc_factory(n) (n = call number),
    or returns {"log": [f"ok{n}"]} once n == succeed_on."""

    def bad(state):
        calls.append(1)
        n = len(calls)
        if succeed_on is not None and n >= succeed_on:
            return {"log": [f"ok{n}"]}
        raise exc_factory(n)

    return bad


def single_note(exc, name):
    """Asserts exactly one task note with LangGraph's prefix for node `name`."""
    notes = getattr(exc, "__notes__", [])
    assert len(notes) == 1, notes
    assert notes[0].startswith(NOTE_PREFIX.format(name=name)), notes
    assert notes[0].endswith("'")


# --- E-1 class tree ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "base"),
    [
        (GraphRecursionError, RecursionError),
        (InvalidUpdateError, Exception),
        (GraphBubbleUp, Exception),
        (GraphInterrupt, GraphBubbleUp),
        (NodeInterrupt, GraphInterrupt),
        (ParentCommand, GraphBubbleUp),
        (GraphDrained, GraphBubbleUp),
        (EmptyInputError, Exception),
        (TaskNotFound, Exception),
        (UnknownInterruptError, Exception),
        (NodeTimeoutError, Exception),
        (NodeCancelledError, Exception),
        (EmptyChannelError, Exception),
    ],
)
def test_exception_direct_base(cls, base):
    """E-1: each exception's direct base class."""
    assert cls.__bases__ == (base,)


def test_timeout_error_is_not_a_builtin_timeout():
    """E-1, E-4: NodeTimeoutError is no OSError/TimeoutError, so the default policy retries it."""
    exc = NodeTimeoutError("n", 1.5, kind="run", run_timeout=1.0)
    assert not isinstance(exc, TimeoutError)
    assert default_retry_on(exc) is True


def test_graph_bubble_up_family_is_not_an_error_of_the_user():
    """E-1: interrupts, parent commands and drains share GraphBubbleUp; recursion errors
    are RecursionErrors (so RuntimeErrors)."""
    assert issubclass(NodeInterrupt, GraphBubbleUp)
    assert issubclass(GraphRecursionError, RuntimeError)
    assert not issubclass(InvalidUpdateError, GraphBubbleUp)


def test_error_code_members():
    """E-1: ErrorCode enum names equal their values."""
    assert {m.name: m.value for m in ErrorCode} == {
        "GRAPH_RECURSION_LIMIT": "GRAPH_RECURSION_LIMIT",
        "INVALID_CONCURRENT_GRAPH_UPDATE": "INVALID_CONCURRENT_GRAPH_UPDATE",
        "INVALID_GRAPH_NODE_RETURN_VALUE": "INVALID_GRAPH_NODE_RETURN_VALUE",
        "MULTIPLE_SUBGRAPHS": "MULTIPLE_SUBGRAPHS",
        "INVALID_CHAT_HISTORY": "INVALID_CHAT_HISTORY",
    }


def test_node_error_is_a_frozen_record():
    """E-1: NodeError(node, error) is a frozen dataclass."""
    exc = ValueError("x")
    record = NodeError("n", exc)
    assert (record.node, record.error) == ("n", exc)
    assert repr(record) == "NodeError(node='n', error=ValueError('x'))"
    with pytest.raises(AttributeError):
        record.node = "m"


def test_empty_channel_error_is_what_channels_raise():
    """C-11: the errors module's EmptyChannelError is the class an empty channel raises."""
    with pytest.raises(EmptyChannelError) as info:
        LastValue(int).get()
    assert type(info.value) is errors.EmptyChannelError


# --- E-2 message format ----------------------------------------------------------------


def test_create_error_message_format():
    """E-2: message + newline + troubleshooting URL ending in the code."""
    assert create_error_message(message="Boom.", error_code=ErrorCode.MULTIPLE_SUBGRAPHS) == (
        "Boom.\nFor troubleshooting, visit: "
        "https://docs.langchain.com/oss/python/langgraph/errors/MULTIPLE_SUBGRAPHS"
    )


def test_concurrent_update_text():
    """C-1, E-2: two writes to a LastValue key in one step."""

    class S(TypedDict):
        v: int

    builder = StateGraph(S)
    builder.add_node("a", lambda s: {"v": 1})
    builder.add_node("b", lambda s: {"v": 2})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    text = (
        "At key 'v': Can receive only one value per step. Use an Annotated key to handle "
        "multiple values." + URL + "INVALID_CONCURRENT_GRAPH_UPDATE"
    )
    with pytest.raises(InvalidUpdateError, match=re.escape(text)) as info:
        builder.compile().invoke({"v": 0})
    assert str(info.value) == text


@pytest.mark.parametrize(("value", "shown"), [(5, "5"), (["x"], "['x']"), ("s", "s")])
def test_node_return_value_text(value, shown):
    """N-1, E-2: a node returning a non-dict -> InvalidUpdateError, with the task note."""
    builder = StateGraph(Log)
    builder.add_node("bad", lambda s: value)
    builder.add_edge(START, "bad")
    text = f"Expected dict, got {shown}" + URL + "INVALID_GRAPH_NODE_RETURN_VALUE"
    with pytest.raises(InvalidUpdateError, match=re.escape(text)) as info:
        builder.compile().invoke({"log": []})
    assert str(info.value) == text
    single_note(info.value, "bad")


def test_non_dict_input_text():
    """N-3: a non-dict input fails in the hidden __start__ task, note included."""
    builder = StateGraph(Log)
    builder.add_node("a", lambda s: None)
    builder.add_edge(START, "a")
    text = "Expected dict, got 5" + URL + "INVALID_GRAPH_NODE_RETURN_VALUE"
    with pytest.raises(InvalidUpdateError, match=re.escape(text)) as info:
        builder.compile().invoke(5)
    single_note(info.value, "__start__")


def test_recursion_error_text():
    """L-10, E-2: GraphRecursionError's full text."""

    class S(TypedDict):
        x: int

    builder = StateGraph(S)
    builder.add_node("inc", lambda s: {"x": s["x"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", "inc")
    text = (
        "Recursion limit of 2 reached without hitting a stop condition. You can increase "
        "the limit by setting the `recursion_limit` config key." + URL + "GRAPH_RECURSION_LIMIT"
    )
    with pytest.raises(GraphRecursionError, match=re.escape(text)) as info:
        builder.compile().invoke({"x": 0}, {"recursion_limit": 2})
    assert str(info.value) == text
    assert not getattr(info.value, "__notes__", None)


def test_get_config_outside_a_run():
    """L-24: get_config() outside a node -> RuntimeError."""
    with pytest.raises(RuntimeError, match=re.escape("Called get_config outside of a runnable context")):
        get_config()


# --- E-3 other texts -------------------------------------------------------------------


def test_node_timeout_error_texts():
    """E-3: NodeTimeoutError messages for the run and idle kinds."""
    run = NodeTimeoutError("n", 1.2345, kind="run", run_timeout=1.0)
    assert str(run) == "Node 'n' exceeded its run timeout of 1.000s (elapsed: 1.234s)."
    assert (run.node, run.kind, run.timeout, run.elapsed) == ("n", "run", 1.0, 1.2345)
    idle = NodeTimeoutError("n", 1.2345, kind="idle", idle_timeout=0.5)
    assert (
        str(idle) == "Node 'n' exceeded its idle timeout of 0.500s without making progress (elapsed: 1.234s)."
    )
    assert (idle.kind, idle.timeout) == ("idle", 0.5)


def test_node_cancelled_error_text():
    """E-1: NodeCancelledError default message names the node."""
    exc = NodeCancelledError("n")
    assert str(exc) == "Node 'n' raised asyncio.CancelledError"
    assert exc.node == "n"


def test_graph_interrupt_args_and_parent_command_text():
    """E-3, N-8: GraphInterrupt args[0] is the interrupts; ParentCommand str is the Command."""
    assert GraphInterrupt().args == ((),)
    assert str(ParentCommand(Command(goto="b"))) == "Command(goto='b')"


def test_graph_drained_text():
    """E-1: GraphDrained carries a reason, default 'shutdown'."""
    exc = GraphDrained()
    assert (str(exc), exc.reason) == ("Graph drained: shutdown", "shutdown")


def test_unknown_interrupt_error_fields():
    """I-8: UnknownInterruptError keeps message, reason and the id tuples."""
    exc = UnknownInterruptError("m", reason="ambiguous", pending_ids=["b", "a"])
    assert (str(exc), exc.reason, exc.interrupt_ids, exc.pending_ids) == ("m", "ambiguous", (), ("b", "a"))


# --- E-4 RetryPolicy and default_retry_on ----------------------------------------------------


def test_retry_policy_defaults():
    """E-4: RetryPolicy() defaults."""
    policy = RetryPolicy()
    assert policy.initial_interval == 0.5
    assert policy.backoff_factor == 2.0
    assert policy.max_interval == 128.0
    assert policy.max_attempts == 3
    assert policy.jitter is True
    assert policy.retry_on is default_retry_on
    assert RetryPolicy._fields == (
        "initial_interval",
        "backoff_factor",
        "max_interval",
        "max_attempts",
        "jitter",
        "retry_on",
    )


def test_retry_policy_repr():
    """E-4, O-10: NamedTuple repr; retry_on shows the function default_retry_on."""
    text = repr(RetryPolicy())
    prefix = (
        "RetryPolicy(initial_interval=0.5, backoff_factor=2.0, max_interval=128.0, "
        "max_attempts=3, jitter=True, retry_on=<function default_retry_on at 0x"
    )
    assert text.startswith(prefix)
    assert text.endswith(">)")
    assert repr(RetryPolicy(max_attempts=2, retry_on=KeyError)) == (
        "RetryPolicy(initial_interval=0.5, backoff_factor=2.0, max_interval=128.0, "
        "max_attempts=2, jitter=True, retry_on=<class 'KeyError'>)"
    )


@pytest.mark.parametrize(
    ("exc", "retried"),
    [
        (ValueError("x"), False),
        (TypeError("x"), False),
        (ZeroDivisionError("x"), False),
        (ImportError("x"), False),
        (ModuleNotFoundError("x"), False),
        (KeyError("x"), False),
        (IndexError("x"), False),
        (NameError("x"), False),
        (UnboundLocalError("x"), False),
        (SyntaxError("x"), False),
        (RuntimeError("x"), False),
        (NotImplementedError("x"), False),
        (RecursionError("x"), False),
        (ReferenceError("x"), False),
        (StopIteration(), False),
        (StopAsyncIteration(), False),
        (OSError("x"), False),
        (FileNotFoundError("x"), False),
        (TimeoutError("x"), False),
        (ConnectionError("x"), True),
        (ConnectionResetError("x"), True),
        (Exception("x"), True),
        (MyErr("x"), True),
        (AttributeError("x"), True),
        (AssertionError("x"), True),
        (InvalidUpdateError("x"), True),
        (EmptyInputError("x"), True),
        (GraphRecursionError("x"), False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_default_retry_on_classification(exc, retried):
    """E-4: default_retry_on retries all but programming/OS errors; ConnectionError is retried."""
    assert default_retry_on(exc) is retried


@pytest.mark.parametrize(
    ("status", "retried"), [(302, False), (404, False), (429, False), (500, True), (503, True)]
)
def test_default_retry_on_httpx_status(status, retried):
    """E-4: httpx.HTTPStatusError is retried only for 5xx."""
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("GET", "http://127.0.0.1/")
    exc = httpx.HTTPStatusError("x", request=request, response=httpx.Response(status, request=request))
    assert default_retry_on(exc) is retried


@pytest.mark.parametrize(
    ("status", "retried"), [(200, False), (302, False), (404, True), (429, True), (503, True)]
)
def test_default_retry_on_requests_status(status, retried):
    """E-4: requests.HTTPError: LangGraph tests `if exc.response`, and a Response is falsy
    for status >= 400, so every 4xx/5xx response is retried; only an 'ok' response is
    checked for 5xx (reference says "only 5xx"; this is what 1.2.22 does)."""
    requests = pytest.importorskip("requests")
    response = requests.Response()
    response.status_code = status
    assert default_retry_on(requests.HTTPError("x", response=response)) is retried


def test_default_retry_on_requests_without_response():
    """E-4: requests.HTTPError without a response is retried; requests.ConnectionError
    (an OSError, not the builtin ConnectionError) is not."""
    requests = pytest.importorskip("requests")
    assert default_retry_on(requests.HTTPError("x")) is True
    assert default_retry_on(requests.ConnectionError("x")) is False


# --- E-5 retry loop ---------------------------------------------------------------------------


@pytest.mark.parametrize("max_attempts", [1, 2, 3, 4])
def test_retry_gives_up_after_max_attempts(max_attempts):
    """E-5: max_attempts counts runs, the first included; the last error propagates."""
    calls = []
    app = with_good_sibling(
        failing(lambda n: MyErr(f"x{n}"), calls), RetryPolicy(max_attempts=max_attempts, **FAST)
    )
    with pytest.raises(MyErr, match=re.escape(f"x{max_attempts}")) as info:
        app.invoke({"log": []})
    assert len(calls) == max_attempts
    single_note(info.value, "bad")


def test_retry_succeeds_and_only_the_final_attempt_streams():
    """E-5, O-10: a node that fails twice then succeeds -> one updates chunk, state ok."""
    calls = []
    app = with_good_sibling(failing(lambda n: ConnectionError("c"), calls, succeed_on=3), RetryPolicy(**FAST))
    chunks = list(app.stream({"log": []}, stream_mode=["updates", "values"]))
    assert sorted(c for mode, c in chunks if mode == "updates" for c in c) == ["bad", "good"]
    assert ("updates", {"bad": {"log": ["ok3"]}}) in chunks
    assert chunks[-1] == ("values", {"log": ["ok3", "good"]})
    assert len(calls) == 3


def test_default_policy_does_not_retry_value_error():
    """E-4, E-5: RetryPolicy() does not retry a ValueError (O-10: attempts 1)."""
    calls = []
    app = with_good_sibling(failing(lambda n: ValueError("v"), calls), RetryPolicy(**FAST))
    with pytest.raises(ValueError, match=re.escape("v")) as info:
        app.invoke({"log": []})
    assert str(info.value) == "v"
    assert len(calls) == 1


def test_no_policy_means_no_retry():
    """E-5: without a retry policy a retryable error is raised on the first failure."""
    calls = []
    app = with_good_sibling(failing(lambda n: ConnectionError("c"), calls))
    with pytest.raises(ConnectionError):
        app.invoke({"log": []})
    assert len(calls) == 1


def test_retry_on_exception_class():
    """E-4: retry_on=<class> retries instances (and subclasses) only."""

    class Sub(MyErr):
        pass

    calls = []
    app = with_good_sibling(
        failing(lambda n: Sub("s"), calls), RetryPolicy(retry_on=MyErr, max_attempts=3, **FAST)
    )
    with pytest.raises(Sub):
        app.invoke({"log": []})
    assert len(calls) == 3

    calls.clear()
    app = with_good_sibling(
        failing(lambda n: KeyError("k"), calls), RetryPolicy(retry_on=MyErr, max_attempts=3, **FAST)
    )
    with pytest.raises(KeyError):
        app.invoke({"log": []})
    assert len(calls) == 1


def test_retry_on_sequence_of_classes():
    """E-4: retry_on=(A, B) retries instances of any listed class, even ones default skips."""
    calls = []
    app = with_good_sibling(
        failing(lambda n: KeyError("k") if n % 2 else MyErr("m"), calls),
        RetryPolicy(retry_on=(KeyError, MyErr), max_attempts=4, **FAST),
    )
    with pytest.raises(MyErr):
        app.invoke({"log": []})
    assert len(calls) == 4

    calls.clear()
    app = with_good_sibling(
        failing(lambda n: MyErr("m") if n < 2 else ValueError("v"), calls),
        RetryPolicy(retry_on=[KeyError, MyErr], max_attempts=4, **FAST),
    )
    with pytest.raises(ValueError):
        app.invoke({"log": []})
    assert len(calls) == 2


def test_retry_on_predicate():
    """E-4: retry_on=<callable> decides per exception."""
    calls = []
    app = with_good_sibling(
        failing(lambda n: MyErr(f"x{n}"), calls),
        RetryPolicy(retry_on=lambda e: str(e) != "x2", max_attempts=5, **FAST),
    )
    with pytest.raises(MyErr) as info:
        app.invoke({"log": []})
    assert str(info.value) == "x2"
    assert len(calls) == 2


def test_list_of_policies_first_match_wins():
    """E-4: with several policies the first whose retry_on matches sets max_attempts."""
    calls = []
    policies = [
        RetryPolicy(retry_on=MyErr, max_attempts=2, **FAST),
        RetryPolicy(retry_on=Exception, max_attempts=4, **FAST),
    ]
    with pytest.raises(MyErr):
        with_good_sibling(failing(lambda n: MyErr("m"), calls), policies).invoke({"log": []})
    assert len(calls) == 2

    calls.clear()
    with pytest.raises(MyErr):
        with_good_sibling(failing(lambda n: MyErr("m"), calls), policies[::-1]).invoke({"log": []})
    assert len(calls) == 4


def test_list_of_policies_skips_non_matching():
    """E-4: a policy whose retry_on does not match is skipped, not applied."""
    calls = []
    policies = [
        RetryPolicy(retry_on=KeyError, max_attempts=5, **FAST),
        RetryPolicy(retry_on=MyErr, max_attempts=2, **FAST),
    ]
    with pytest.raises(MyErr):
        with_good_sibling(failing(lambda n: MyErr("m"), calls), policies).invoke({"log": []})
    assert len(calls) == 2


def test_interrupt_is_never_retried():
    """E-5: interrupt() inside a node with an everything-retrying policy runs once."""
    calls = []

    def ask(state):
        calls.append(1)
        interrupt("q")
        return {}

    app = with_good_sibling(ask, RetryPolicy(retry_on=lambda e: True, **FAST))
    out = app.invoke({"log": []})
    assert out["log"] == ["good"]
    assert [i.value for i in out["__interrupt__"]] == ["q"]
    assert len(calls) == 1


def test_graph_bubble_up_is_never_retried():
    """E-5: a GraphBubbleUp raised by a node is not retried and reaches the caller."""
    calls = []
    app = with_good_sibling(
        failing(lambda n: GraphBubbleUp(), calls), RetryPolicy(retry_on=lambda e: True, **FAST)
    )
    with pytest.raises(GraphBubbleUp):
        app.invoke({"log": []})
    assert len(calls) == 1


def test_retry_in_async_nodes():
    """E-5: the async API retries async nodes the same way."""
    calls = []

    async def flaky(state):
        calls.append(1)
        await asyncio.sleep(0)
        if len(calls) < 3:
            raise MyErr("m")
        return {"log": [len(calls)]}

    builder = StateGraph(Log)
    builder.add_node("f", flaky, retry_policy=RetryPolicy(retry_on=MyErr, **FAST))
    builder.add_edge(START, "f")
    assert asyncio.run(builder.compile().ainvoke({"log": []})) == {"log": [3]}

    calls.clear()
    builder = StateGraph(Log)
    builder.add_node("f", flaky, retry_policy=RetryPolicy(retry_on=MyErr, max_attempts=2, **FAST))
    builder.add_edge(START, "f")
    with pytest.raises(MyErr) as info:
        asyncio.run(builder.compile().ainvoke({"log": []}))
    assert len(calls) == 2
    single_note(info.value, "f")


# --- L-32 / E-7 failed tasks in the stream ---------------------------------------------------------


def slow_failure(state):
    time.sleep(0.03)
    raise ValueError("boom")


def test_failed_task_note_and_no_updates_chunk():
    """L-32, E-7, O-10: the failing task gets the note, emits no updates chunk; the finished
    sibling's chunk is yielded; the failed step's writes are not applied (no values chunk)."""
    chunks = []
    with pytest.raises(ValueError, match=re.escape("boom")) as info:
        for chunk in with_good_sibling(slow_failure).stream({"log": []}, stream_mode=["updates", "values"]):
            chunks.append(chunk)
    assert chunks == [("values", {"log": []}), ("updates", {"good": {"log": ["good"]}})]
    assert str(info.value) == "boom"
    single_note(info.value, "bad")


def test_failed_task_in_tasks_mode():
    """E-7, S-5, O-10: the failed task's result event carries the exception object,
    result {} and no interrupts; its id is the one named in the note."""
    chunks = []
    with pytest.raises(ValueError) as info:
        for chunk in with_good_sibling(slow_failure).stream({"log": []}, stream_mode="tasks"):
            chunks.append(chunk)
    results = {c["name"]: c for c in chunks if "result" in c}
    assert set(results) == {"bad", "good"}
    bad = results["bad"]
    assert bad["error"] is info.value
    assert (bad["result"], bad["interrupts"]) == ({}, [])
    assert info.value.__notes__ == [f"During task with name 'bad' and id '{bad['id']}'"]
    assert results["good"]["error"] is None
    assert results["good"]["result"] == {"log": ["good"]}
    assert [c["name"] for c in chunks][-1] == "bad"


def test_failed_task_in_debug_mode():
    """E-7, S-7: debug task_result for the failed task carries the error too."""
    chunks = []
    with pytest.raises(ValueError) as info:
        for chunk in with_good_sibling(slow_failure).stream({"log": []}, stream_mode="debug"):
            chunks.append(chunk)
    (bad,) = [c for c in chunks if c["type"] == "task_result" and c["payload"]["name"] == "bad"]
    assert bad["step"] == 1
    assert bad["payload"]["error"] is info.value


def test_failed_async_task_note_and_stream():
    """L-32, E-7: astream: siblings' chunks, then the error with its note."""

    async def bad(state):
        await asyncio.sleep(0.03)
        raise ValueError("aboom")

    async def good(state):
        return {"log": ["good"]}

    builder = StateGraph(Log)
    builder.add_node("bad", bad)
    builder.add_node("good", good)
    builder.add_edge(START, "bad")
    builder.add_edge(START, "good")
    app = builder.compile()
    chunks = []

    async def main():
        async for chunk in app.astream({"log": []}, stream_mode="updates"):
            chunks.append(chunk)

    with pytest.raises(ValueError, match=re.escape("aboom")) as info:
        asyncio.run(main())
    assert str(info.value) == "aboom"
    assert chunks == [{"good": {"log": ["good"]}}]
    single_note(info.value, "bad")
