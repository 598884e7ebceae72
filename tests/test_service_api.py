"""The local Agent Server API driven by LangGraph's own SDK (`langgraph-sdk`, sync and async).

Statements: issue 12 acceptance 1 ("langgraph-sdk's sync and async clients drive lgembed
serve: create a thread, runs.wait, runs.stream with updates and values, get state and
history, hit an interrupt and resume it with a Command; the results equal running the
same graph in-process. A hardware approval from the edge layer is granted through the
SDK"), and the API bullets of issue 12 (bad requests get the 4xx status and JSON body
the SDK reports, nothing committed is lost; a token for any non-loopback address; no
secrets in logs).

Real components: `ApiServer` on 127.0.0.1 port 0 in this process, the SDK's httpx
clients, LmdbSaver environments in temporary directories. Every comparison runs the
same graph in-process on its own LmdbSaver and compares the JSON forms.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import threading
import time
from dataclasses import dataclass
from typing import Annotated, TypedDict

import httpx
import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk import get_client, get_sync_client  # noqa: E402

from lgembed.checkpoint.lmdb import LmdbSaver  # noqa: E402
from lgembed.config import get_stream_writer  # noqa: E402
from lgembed.graph import END, START, MessagesState, StateGraph  # noqa: E402
from lgembed.graph.message import add_messages  # noqa: E402
from lgembed.messages import AIMessage  # noqa: E402
from lgembed.runtime import Runtime  # noqa: E402
from lgembed.service.http import ApiServer  # noqa: E402
from lgembed.service.records import jsonable  # noqa: E402
from lgembed.service.runs import RunManager, assistant_id_for  # noqa: E402
from lgembed.types import Command, interrupt  # noqa: E402

WAIT = 20.0
# bound for waits on things that normally take milliseconds (never a timing assertion)
TOKEN = "tok-7f3a9c-never-logged"


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    count: Annotated[int, operator.add]
    answer: str


def node_a(state: State) -> State:
    get_stream_writer()({"progress": state.get("count", 0)})
    return {"count": 1, "messages": [AIMessage(content="hello from a", id=f"ai-{state.get('count', 0)}")]}


def node_b(state: State) -> State:
    return {"count": 10}


def ask(state: State) -> State:
    answer = interrupt({"question": "open the valve?"})
    return {"answer": str(answer)}


def after(state: State) -> State:
    return {"count": 100}


def boom(state: State) -> State:
    raise ValueError("boom failed")


GATE = {"entered": threading.Event(), "release": threading.Event()}


def slow(state: State) -> State:
    GATE["entered"].set()
    assert GATE["release"].wait(WAIT)
    return {"count": 1}


@dataclass
class Site:
    site: str = "nowhere"


def greet(state: State, runtime: Runtime[Site]) -> State:
    return {"answer": f"hello {runtime.context.site}"}


def builders() -> dict:
    child = StateGraph(State).add_node("inner", node_b).add_edge(START, "inner").compile()
    parent = StateGraph(State).add_node("outer", node_a).add_node("child", child)
    parent.add_edge(START, "outer").add_edge("outer", "child")
    ctx = StateGraph(State, context_schema=Site).add_node("greet", greet).add_edge(START, "greet")
    simple = StateGraph(State).add_node("a", node_a).add_node("b", node_b)
    simple.add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
    hitl = StateGraph(State).add_node("ask", ask).add_node("after", after)
    hitl.add_edge(START, "ask").add_edge("ask", "after").add_edge("after", END)
    failing = StateGraph(State).add_node("boom", boom).add_edge(START, "boom")
    slowg = StateGraph(State).add_node("slow", slow).add_node("b", node_b)
    slowg.add_edge(START, "slow").add_edge("slow", "b")
    return {"simple": simple, "hitl": hitl, "failing": failing, "slow": slowg, "parent": parent, "ctx": ctx}


class Service:
    """An ApiServer over a RunManager over an LmdbSaver, started on 127.0.0.1:0."""

    def __init__(self, path: str, graphs: dict | None = None, **server_kw) -> None:
        self.saver = LmdbSaver(path)
        compiled = graphs or {k: b.compile(checkpointer=self.saver) for k, b in builders().items()}
        self.manager = RunManager(compiled, self.saver)
        self.server = ApiServer(self.manager, "127.0.0.1", 0, **server_kw)
        self.server.start()
        self.url = self.server.url

    def client(self, **kw):
        return get_sync_client(url=self.url, api_key=kw.pop("api_key", None), **kw)

    def close(self) -> None:
        self.server.stop()
        self.manager.close()
        self.saver.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = Service(str(tmp_path_factory.mktemp("api") / "db"))
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The same graphs in-process, on their own LmdbSaver."""
    saver = LmdbSaver(str(tmp_path_factory.mktemp("local") / "db"))
    yield {k: b.compile(checkpointer=saver) for k, b in builders().items()}
    saver.close()


def cfg(tid: str) -> dict:
    return {"configurable": {"thread_id": tid}}


INPUT = {"messages": [{"type": "human", "content": "hi", "id": "h1"}], "count": 0}


# --- acceptance 1: the SDK drives the service; results equal the in-process run -------------------


def test_assistants(service):
    client = service.client()
    found = client.assistants.search(limit=10)
    assert sorted(a["graph_id"] for a in found) == ["ctx", "failing", "hitl", "parent", "simple", "slow"]
    a = client.assistants.get(assistant_id_for("simple"))
    assert a["assistant_id"] == assistant_id_for("simple") and a["graph_id"] == "simple"
    assert a["assistant_id"] == "5e0f6b46-d00f-5af4-87dc-ea2105ff526d"  # the id LangGraph's server gives "simple"
    assert client.assistants.count() == 6
    graph = client.assistants.get_graph("simple")
    assert [n["id"] for n in graph["nodes"]] == ["__start__", "a", "b", "__end__"]
    assert {(e["source"], e["target"]) for e in graph["edges"]} == {("__start__", "a"), ("a", "b"), ("b", "__end__")}
    schemas = client.assistants.get_schemas(assistant_id_for("hitl"))
    assert schemas["graph_id"] == "hitl" and set(schemas["state_schema"]["properties"]) == {
        "messages",
        "count",
        "answer",
    }


def test_wait_state_and_history_equal_the_in_process_run(service, local):
    client = service.client()
    thread = client.threads.create(metadata={"owner": "test"})
    tid = thread["thread_id"]
    assert thread["status"] == "idle" and thread["metadata"] == {"owner": "test"} and thread["values"] is None
    out = client.runs.wait(tid, "simple", input=INPUT)
    expected = local["simple"].invoke(INPUT, cfg("w1"))
    assert out == jsonable(expected)
    assert out["count"] == 11 and out["messages"][1]["type"] == "ai"

    state = client.threads.get_state(tid)
    ref = local["simple"].get_state(cfg("w1"))
    assert state["values"] == jsonable(ref.values) and state["next"] == list(ref.next) == []
    assert state["checkpoint"]["thread_id"] == tid and state["parent_checkpoint"]["thread_id"] == tid
    assert state["metadata"]["step"] == ref.metadata["step"] and state["metadata"]["source"] == "loop"

    history = client.threads.get_history(tid, limit=100)
    ref_history = list(local["simple"].get_state_history(cfg("w1")))
    assert len(history) == len(ref_history) == 4
    assert [h["values"] for h in history] == [jsonable(s.values) for s in ref_history]
    assert [h["next"] for h in history] == [list(s.next) for s in ref_history]
    assert [h["metadata"]["step"] for h in history] == [s.metadata["step"] for s in ref_history]
    older = client.threads.get_history(tid, limit=1, before=history[0]["checkpoint"]["checkpoint_id"])
    assert older == [history[1]]
    assert client.threads.get_history(tid, limit=10, metadata={"step": 1}) == [history[1]]

    got = client.threads.get(tid)
    assert got["status"] == "idle" and got["values"] == out
    assert got["metadata"] == {"owner": "test", "graph_id": "simple", "assistant_id": assistant_id_for("simple")}
    [run] = client.runs.list(tid)
    assert run["status"] == "success" and client.runs.get(tid, run["run_id"]) == run


def test_stream_updates_values_and_custom_equal_the_in_process_stream(service, local):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "simple", input=INPUT, stream_mode=["updates", "values"]))
    assert parts[0].event == "metadata" and set(parts[0].data) == {"run_id", "attempt"}
    got = [(p.event, p.data) for p in parts[1:]]
    want = [
        (mode, jsonable(chunk))
        for mode, chunk in local["simple"].stream(INPUT, cfg("s1"), stream_mode=["updates", "values"])
    ]
    assert got == want
    assert [e for e, _ in got] == ["values", "updates", "values", "updates", "values"]

    parts = list(client.runs.stream(tid, "simple", input={"count": 1}, stream_mode="custom"))
    want = [("custom", jsonable(c)) for c in local["simple"].stream({"count": 1}, cfg("s1"), stream_mode="custom")]
    assert [(p.event, p.data) for p in parts[1:]] == want == [("custom", {"progress": 12})]

    # several modes at once, messages as (message, metadata) tuples
    parts = list(client.runs.stream(tid, "simple", input={"count": 1}, stream_mode=["messages-tuple", "custom"]))
    local_parts = list(local["simple"].stream({"count": 1}, cfg("s1"), stream_mode=["messages", "custom"]))
    assert [p.event for p in parts] == ["metadata", "custom", "messages"]
    assert [m for m, _ in local_parts] == ["custom", "messages"]
    message, meta = parts[2].data
    local_message, local_meta = local_parts[1][1]
    assert message == jsonable(local_message) and message["type"] == "ai" and message["id"] == "ai-24"
    assert (
        (meta["langgraph_node"], meta["langgraph_step"])
        == (local_meta["langgraph_node"], local_meta["langgraph_step"])
        == ("a", 9)
    )
    assert client.threads.get_state(tid)["values"] == jsonable(local["simple"].get_state(cfg("s1")).values)

    # "messages" (not -tuple): LangGraph's messages/metadata then messages/complete events
    parts = list(client.runs.stream(tid, "simple", input={"count": 1}, stream_mode="messages"))
    assert [p.event for p in parts] == ["metadata", "messages/metadata", "messages/complete"]
    assert list(parts[1].data) == ["ai-36"] and parts[1].data["ai-36"]["metadata"]["langgraph_node"] == "a"
    assert parts[2].data == [client.threads.get_state(tid)["values"]["messages"][-1]]


def test_subgraph_events_commands_and_context_equal_the_in_process_run(service, local):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "parent", input={"count": 0}, stream_mode=["updates"], stream_subgraphs=True))
    want = []
    for ns, mode, chunk in local["parent"].stream({"count": 0}, cfg("p1"), stream_mode=["updates"], subgraphs=True):
        want.append(("|".join((mode, *ns)), jsonable(chunk)))
    got = [(p.event, p.data) for p in parts[1:]]
    assert [e.split("|")[0] for e, _ in got] == ["updates", "updates", "updates"]
    assert got[1][0].startswith("updates|child:")
    assert [(e.split(":")[0], d) for e, d in got] == [(e.split(":")[0], d) for e, d in want]

    # a Command with update and goto, as the SDK sends it
    out = client.runs.wait(tid, "simple", command={"update": {"count": 5}, "goto": "b"})
    assert out == jsonable(local["simple"].invoke(Command(update={"count": 5}, goto="b"), cfg("p1")))

    # context, read by the node through its runtime
    tid2 = client.threads.create()["thread_id"]
    out = client.runs.wait(tid2, "ctx", input={"count": 0}, context={"site": "north-7"})
    assert out == jsonable(local["ctx"].invoke({"count": 0}, cfg("c1"), context={"site": "north-7"}))
    assert out["answer"] == "hello north-7"


def test_interrupt_then_resume_with_a_command(service, local):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "hitl", input={"count": 0})
    ref = local["hitl"].invoke({"count": 0}, cfg("h1"))
    [intr] = out.pop("__interrupt__")
    [ref_intr] = ref.pop("__interrupt__")
    assert out == jsonable(ref) == {"messages": [], "count": 0}
    assert intr["value"] == ref_intr.value == {"question": "open the valve?"}
    assert len(intr["id"]) == 32

    thread = client.threads.get(tid)
    assert thread["status"] == "interrupted"
    [(task_id, [stored])] = thread["interrupts"].items()
    assert stored == {"id": intr["id"], "value": {"question": "open the valve?"}}
    state = client.threads.get_state(tid)
    assert state["next"] == ["ask"] == list(local["hitl"].get_state(cfg("h1")).next)
    assert state["interrupts"] == [stored] and state["tasks"][0]["id"] == task_id
    assert state["tasks"][0]["interrupts"] == [stored]

    parts = list(client.runs.stream(tid, "hitl", command={"resume": "yes"}, stream_mode=["values", "updates"]))
    want = [
        (m, jsonable(c))
        for m, c in local["hitl"].stream(Command(resume="yes"), cfg("h1"), stream_mode=["values", "updates"])
    ]
    assert [(p.event, p.data) for p in parts[1:]] == want
    assert client.threads.get_state(tid)["values"] == jsonable(local["hitl"].get_state(cfg("h1")).values)
    assert client.threads.get(tid)["status"] == "idle"
    assert len(client.threads.get_history(tid, limit=100)) == len(list(local["hitl"].get_state_history(cfg("h1"))))


def test_update_state_and_interrupt_before(service, local):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "simple", input={"count": 1}, interrupt_before=["b"])
    ref = local["simple"].invoke({"count": 1}, cfg("u1"), interrupt_before=["b"])
    assert out == jsonable(ref)
    assert client.threads.get(tid)["status"] == "interrupted"
    assert client.threads.get_state(tid)["next"] == ["b"]
    res = client.threads.update_state(tid, {"count": 5}, as_node="a")
    local["simple"].update_state(cfg("u1"), {"count": 5}, as_node="a")
    assert res["checkpoint"]["thread_id"] == tid and res["checkpoint"]["checkpoint_id"]
    assert client.threads.get_state(tid)["values"] == jsonable(local["simple"].get_state(cfg("u1")).values)
    out = client.runs.wait(tid, "simple", input=None)
    assert out == jsonable(local["simple"].invoke(None, cfg("u1")))


def test_async_client_drives_the_same_flow(service, local):
    async def main():
        client = get_client(url=service.url, api_key=None)
        thread = await client.threads.create()
        tid = thread["thread_id"]
        out = await client.runs.wait(tid, "simple", input=INPUT)
        parts = [
            p async for p in client.runs.stream(tid, "hitl", input={"count": 0}, stream_mode=["updates", "values"])
        ]
        state = await client.threads.get_state(tid)
        resumed = await client.runs.wait(tid, "hitl", command={"resume": "ok"})
        history = await client.threads.get_history(tid, limit=100)
        await client.http.client.aclose()
        return out, parts, state, resumed, history

    out, parts, state, resumed, history = asyncio.run(main())
    g = local["simple"], local["hitl"]
    assert out == jsonable(g[0].invoke(INPUT, cfg("a1")))
    want = [(m, jsonable(c)) for m, c in g[1].stream({"count": 0}, cfg("a1"), stream_mode=["updates", "values"])]
    got = [(p.event, p.data) for p in parts[1:]]
    strip = lambda pairs: [(m, {k: v for k, v in c.items() if k != "__interrupt__"}) for m, c in pairs]  # noqa: E731
    assert strip(got) == strip(want)
    assert [p.data["__interrupt__"][0]["value"] for p in parts[1:] if "__interrupt__" in p.data] == [
        {"question": "open the valve?"}
    ] * 2
    assert state["next"] == ["ask"]
    assert resumed == jsonable(g[1].invoke(Command(resume="ok"), cfg("a1")))
    assert len(history) == len(list(g[1].get_state_history(cfg("a1"))))


def test_background_runs_join_join_stream_cancel_and_delete(service):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    GATE["entered"].clear()
    GATE["release"].clear()
    run = client.runs.create(tid, "slow", input={"count": 0}, stream_mode=["values", "updates"])
    assert run["status"] == "pending" and run["thread_id"] == tid
    assert GATE["entered"].wait(WAIT)
    assert client.threads.get(tid)["status"] == "busy"
    events: list = []
    reader = threading.Thread(target=lambda: events.extend(client.runs.join_stream(tid, run["run_id"])))
    reader.start()
    queued = client.runs.create(tid, "slow", input={"count": 0}, multitask_strategy="enqueue")
    client.runs.cancel(tid, queued["run_id"])
    # join_stream receives the events published after it subscribed: wait until it has
    deadline = time.monotonic() + WAIT
    while not service.manager._runs[run["run_id"]].subscribers:
        assert time.monotonic() < deadline, "join_stream never subscribed"
        time.sleep(0.005)
    GATE["release"].set()
    assert client.runs.join(tid, run["run_id"]) == {"messages": [], "count": 11}
    reader.join(WAIT)
    assert [e.event for e in events][-2:] == ["updates", "values"]
    assert client.runs.get(tid, run["run_id"])["status"] == "success"
    assert client.runs.get(tid, queued["run_id"])["status"] == "interrupted"
    assert [r["run_id"] for r in client.runs.list(tid)] == [queued["run_id"], run["run_id"]]
    assert client.runs.list(tid, status="interrupted")[0]["run_id"] == queued["run_id"]
    client.runs.delete(tid, queued["run_id"])
    assert [r["run_id"] for r in client.runs.list(tid)] == [run["run_id"]]
    assert list(client.runs.join_stream(tid, run["run_id"])) == []  # a finished run streams nothing
    assert client.threads.get(tid)["status"] == "idle"


def test_stateless_runs_and_threads_search_count_patch_delete(service):
    client = service.client()
    assert client.runs.wait(None, "simple", input={"count": 1})["count"] == 12
    parts = list(client.runs.stream(None, "simple", input={"count": 1}, stream_mode="updates"))
    assert [p.event for p in parts] == ["metadata", "updates", "updates"]
    tid = client.threads.create(metadata={"site": "north-7"})["thread_id"]
    named = client.threads.create(thread_id="boiler-room.1", metadata={"site": "north-7"})
    assert named["thread_id"] == "boiler-room.1"
    assert client.runs.wait("boiler-room.1", "simple", input={"count": 0})["count"] == 11
    found = client.threads.search(metadata={"site": "north-7"})
    assert {t["thread_id"] for t in found} == {tid, "boiler-room.1"}
    assert found[0]["thread_id"] == "boiler-room.1"  # most recently updated first
    assert client.threads.count(metadata={"site": "north-7"}) == 2
    assert [
        t["thread_id"] for t in client.threads.search(metadata={"site": "north-7"}, status="idle", limit=1, offset=1)
    ] == [tid]
    patched = client.threads.update(tid, metadata={"floor": 2})
    assert patched["metadata"] == {"site": "north-7", "floor": 2}
    client.threads.delete("boiler-room.1")
    with pytest.raises(httpx.HTTPStatusError) as err:
        client.threads.get("boiler-room.1")
    assert err.value.response.status_code == 404
    assert client.threads.count(metadata={"site": "north-7"}) == 1
    created = client.runs.wait("made-on-demand", "simple", input={"count": 0}, if_not_exists="create")
    assert created["count"] == 11


def test_failed_run_reports_the_error_and_the_next_run_works(service):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "failing", input={"count": 0}))
    assert [p.event for p in parts] == ["metadata", "values", "error"]
    assert parts[2].data == {"error": "ValueError", "message": "boom failed"}
    with pytest.raises(Exception, match="ValueError: boom failed"):
        client.runs.wait(tid, "failing", input={"count": 0})
    assert client.runs.wait(tid, "failing", input={"count": 0}, raise_error=False) == {
        "__error__": {"error": "ValueError", "message": "boom failed"}
    }
    thread = client.threads.get(tid)
    assert thread["status"] == "error" and thread["error"] == {"error": "ValueError", "message": "boom failed"}
    assert client.runs.wait(tid, "simple", input={"count": 1})["count"] == 12
    assert client.threads.get(tid)["status"] == "idle"


# --- the hardware approval, granted through the SDK ---------------------------------------------------------

DEVICE = {
    "adapters": {"heater": {"kind": "gpio", "line": 17, "direction": "out"}},
    "tools": {"heat": {"adapter": "heater", "action": "write", "policy": {"risk": "high", "reason": "mains heater"}}},
}


def test_a_hardware_approval_is_granted_through_the_sdk(tmp_path):
    edge = pytest.importorskip("lgembed.edge")
    from lgembed.prebuilt import ToolNode
    from lgembed.store.lmdb import LmdbStore

    with edge.load_device(DEVICE, simulate=True) as device:
        saver = LmdbSaver(str(tmp_path / "db"))
        store = LmdbStore(env=saver.env)
        g = StateGraph(MessagesState)
        g.add_node("tools", ToolNode(device.tools(["heat"])))
        g.add_edge(START, "tools")
        svc = Service.__new__(Service)
        svc.saver = saver
        svc.manager = RunManager({"plant": g.compile(checkpointer=saver, store=store)}, saver, store)
        svc.server = ApiServer(svc.manager, "127.0.0.1", 0)
        svc.server.start()
        svc.url = svc.server.url
        try:
            client = svc.client()
            tid = client.threads.create()["thread_id"]
            call = {"name": "heat", "args": {"value": True}, "id": "h1", "type": "tool_call"}
            out = client.runs.wait(
                tid, "plant", input={"messages": [{"type": "ai", "content": "", "tool_calls": [call]}]}
            )
            [request] = out["__interrupt__"]
            assert request["value"] == {
                "type": "approval",
                "tool": "heat",
                "args": {"value": True},
                "risk": "high",
                "reason": "mains heater",
                "adapter": "heater",
                "tool_call_id": "h1",
            }
            assert device.simulation("heater").value is False  # nothing reached the line yet
            assert client.threads.get(tid)["status"] == "interrupted"
            out = client.runs.wait(tid, "plant", command={"resume": {"approved": True}})
            result = out["messages"][-1]
            assert result["type"] == "tool" and result["status"] == "success" and result["tool_call_id"] == "h1"
            assert device.simulation("heater").value is True  # the simulated line went high
            assert client.threads.get(tid)["status"] == "idle"
            assert [i.value["outcome"] for i in store.search(("lgembed", "audit"))] == ["approved"]
        finally:
            svc.server.stop()
            svc.manager.close()
            store.close()
            saver.close()


# --- error paths: status codes, JSON bodies, nothing committed lost ------------------------------------------


def test_bad_requests_get_langgraphs_status_and_json_body(service):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    client.runs.wait(tid, "simple", input={"count": 0})
    before = client.threads.get_state(tid)
    raw = httpx.Client(base_url=service.url)
    for path in ("/threads", f"/threads/{tid}/runs/wait", "/threads/search"):
        r = raw.post(path, content=b"{not json", headers={"Content-Type": "application/json"})
        assert (r.status_code, r.json()) == (422, {"detail": "Invalid JSON in request body"})
    r = raw.post("/threads", content=b"[1, 2]", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and 'is not of type "object"' in r.json()["detail"]
    r = raw.post(f"/threads/{tid}/runs/wait", json={"input": {}})
    assert r.status_code == 422 and r.json() == {"detail": '"assistant_id" is a required property'}
    assert raw.get("/nope").json() == {"detail": "Not Found"}
    assert raw.delete("/assistants/search").status_code == 405
    raw.close()

    unknown = "00000000-0000-4000-8000-000000000000"
    cases = [
        (lambda: client.threads.get(unknown), 404, f"Thread with ID {unknown} not found"),
        (lambda: client.threads.get_state(unknown), 404, f"Thread with ID {unknown} not found"),
        (lambda: client.runs.wait(unknown, "simple", input={}), 404, "Thread or assistant not found."),
        (lambda: client.runs.wait(tid, unknown, input={}), 404, "Thread or assistant not found."),
        (lambda: client.assistants.get(unknown), 404, f"Assistant '{unknown}' not found"),
        (lambda: client.runs.get(tid, unknown), 404, f"Run {unknown} not found"),
        (lambda: client.runs.wait(tid, "nope", input={}), 422, "Invalid assistant: 'nope'"),
        (
            lambda: client.runs.wait(None, "hitl", command={"resume": 1}),
            400,
            "You must provide a thread_id when resuming.",
        ),
        (lambda: client.threads.create(thread_id=tid), 409, f"Thread with ID {tid} already exists"),
        (
            lambda: client.runs.stream(tid, "simple", stream_mode="events").__next__(),
            422,
            "stream_mode 'events' is not supported",
        ),
    ]
    for call, status, detail in cases:
        with pytest.raises(httpx.HTTPStatusError) as err:
            call()
        assert err.value.response.status_code == status
        assert detail in err.value.response.json()["detail"]
    assert client.threads.get_state(tid) == before  # nothing committed was lost


def test_too_large_body_is_refused_with_413(tmp_path):
    svc = Service(str(tmp_path / "db"), max_body=2048)
    try:
        client = svc.client()
        tid = client.threads.create(metadata={"kept": True})["thread_id"]
        client.runs.wait(tid, "simple", input={"count": 0})
        before = client.threads.get_state(tid)
        with pytest.raises(httpx.HTTPStatusError) as err:
            client.runs.wait(tid, "simple", input={"count": 1, "answer": "x" * 5000})
        assert err.value.response.status_code == 413
        assert err.value.response.json() == {"detail": "Request body too large: the limit is 2048 bytes"}
        assert client.threads.get_state(tid) == before
        assert client.threads.count() == 1
    finally:
        svc.close()


def test_a_token_is_required_and_checked(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    svc = Service(str(tmp_path / "db"), token=TOKEN)
    try:
        with pytest.raises(httpx.HTTPStatusError) as err:
            svc.client(api_key=None).assistants.search()
        assert err.value.response.status_code == 401 and "x-api-key" in err.value.response.json()["detail"]
        with pytest.raises(httpx.HTTPStatusError) as err:
            svc.client(api_key="wrong-token").threads.create()
        assert err.value.response.status_code == 403
        assert err.value.response.json() == {"detail": "Invalid authentication token"}
        client = svc.client(api_key=TOKEN)
        tid = client.threads.create()["thread_id"]
        assert (
            client.runs.wait(tid, "simple", input={"count": 0}, config={"configurable": {"api_key": TOKEN}})["count"]
            == 11
        )
        bearer = httpx.get(f"{svc.url}/threads/{tid}", headers={"Authorization": f"Bearer {TOKEN}"})
        assert bearer.status_code == 200 and bearer.json()["thread_id"] == tid
        assert httpx.get(f"{svc.url}/ok").json() == {"ok": True}  # health check without a token
        assert client.threads.count() == 1
    finally:
        svc.close()
    assert TOKEN not in "\n".join(r.getMessage() for r in caplog.records)
    with open(tmp_path / "db" / "data.mdb", "rb") as f:
        assert TOKEN.encode() not in f.read()


def test_binding_beyond_loopback_needs_a_token(service):
    with pytest.raises(
        ValueError, match=r"binding '0\.0\.0\.0' exposes the API beyond this machine, which needs a token"
    ):
        ApiServer(service.manager, "0.0.0.0", 0)
    with pytest.raises(ValueError, match="'token' must not be empty"):
        ApiServer(service.manager, "127.0.0.1", 0, token="")
    srv = ApiServer(service.manager, "0.0.0.0", 0, token=TOKEN)
    srv.stop()


def test_a_busy_thread_gives_409_and_loses_nothing(service):
    client = service.client()
    tid = client.threads.create()["thread_id"]
    client.runs.wait(tid, "simple", input={"count": 0})
    GATE["entered"].clear()
    GATE["release"].clear()
    try:
        run = client.runs.create(tid, "slow", input={"count": 0}, multitask_strategy="reject")
        assert GATE["entered"].wait(WAIT)
        for call in (
            lambda: client.runs.create(tid, "simple", input={"count": 1}, multitask_strategy="reject"),
            lambda: client.runs.wait(tid, "simple", input={"count": 1}, multitask_strategy="reject"),
            lambda: client.threads.update_state(tid, {"count": 1}),
        ):
            with pytest.raises(httpx.HTTPStatusError) as err:
                call()
            assert err.value.response.status_code == 409
        assert client.threads.get(tid)["status"] == "busy"
        queued = client.runs.create(tid, "simple", input={"count": 1}, multitask_strategy="enqueue")
        client.runs.cancel_many(status="pending")
    finally:
        GATE["release"].set()
    assert client.runs.join(tid, run["run_id"])["count"] == 22
    assert client.runs.get(tid, queued["run_id"])["status"] == "interrupted"
    assert [r["status"] for r in client.runs.list(tid)] == ["interrupted", "success", "success"]
    assert client.threads.get_state(tid)["values"]["count"] == 22


def test_a_draining_service_refuses_new_runs_with_503(tmp_path):
    svc = Service(str(tmp_path / "db"))
    try:
        client = svc.client()
        tid = client.threads.create()["thread_id"]
        client.runs.wait(tid, "simple", input={"count": 0})
        assert svc.manager.drain(WAIT) is True
        with pytest.raises(httpx.HTTPStatusError) as err:
            client.runs.wait(tid, "simple", input={"count": 1})
        assert err.value.response.status_code == 503 and "accepts no new runs" in err.value.response.json()["detail"]
        assert client.threads.get_state(tid)["values"]["count"] == 11
    finally:
        svc.close()
