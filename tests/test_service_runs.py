"""RunManager without HTTP: drain and resume, stalls, queueing, cancelling, records on disk.

Statements: issue 12 ("SIGTERM / SIGINT drain: let running steps finish and checkpoint
[...] After a restart (also after SIGKILL or power loss) runs that were cut off resume
from their last checkpoint"; "no secrets (tokens, API keys) in logs or checkpoint
metadata"), docs/DESIGN.md §5b, and the shared contract of `lgembed/service/runs.py`
(`drain` stops after the current superstep and leaves the run "pending";
`resume_interrupted` restarts it; `stalled` names runs stuck in a superstep).

Real components: LMDB environments in tmp_path (closed and reopened to show what
survives), a child process killed with SIGKILL in the middle of a superstep.
"""

from __future__ import annotations

import logging
import operator
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.graph import END, START, StateGraph
from lgembed.service.records import is_secret_key, scrub_secrets, uuid7
from lgembed.service.runs import Conflict, Invalid, NotFound, RunManager, Unavailable, assistant_id_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAIT = 20.0
# upper bound for waits on events that normally take milliseconds (never a timing assertion)


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


class Gate:
    """Blocks one node until released; tells when the node has entered."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self) -> None:
        self.entered.set()
        assert self.release.wait(WAIT), "the test never released the gate"


def chain(n: int = 4, gates: dict | None = None, calls: list | None = None, fail_at: int | None = None):
    """A builder of a chain n0 -> n1 -> ... appending each node's name to `log`."""
    gates = gates or {}

    def make(name: str, index: int):
        def node(state: S) -> S:
            if calls is not None:
                calls.append(name)
            gate = gates.get(index)
            if gate is not None:
                gate()
            if index == fail_at:
                raise ValueError(f"node {name} failed on purpose")
            return {"log": [name]}

        return node

    b = StateGraph(S)
    prev = START
    for i in range(n):
        b.add_node(f"n{i}", make(f"n{i}", i))
        b.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    b.add_edge(prev, END)
    return b


def until(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.005)


@pytest.fixture
def env(tmp_path):
    saver = LmdbSaver(str(tmp_path / "db"))
    yield saver
    saver.close()


def state(graph, tid):
    return graph.get_state({"configurable": {"thread_id": tid}})


# --- drain and resume -----------------------------------------------------------------------


def test_drain_stops_after_the_superstep_and_resume_finishes_like_an_uninterrupted_run(tmp_path):
    path = str(tmp_path / "db")
    gate, calls = Gate(), []
    saver = LmdbSaver(path)
    graph = chain(5, {1: gate}, calls).compile(checkpointer=saver)
    manager = RunManager({"chain": graph}, saver)
    rec = manager.create_run("plant", "chain", input={"log": ["start"]}, if_not_exists="create")
    assert rec["status"] == "pending"
    assert gate.entered.wait(WAIT)
    result = {}
    drainer = threading.Thread(target=lambda: result.setdefault("stopped", manager.drain(WAIT)))
    drainer.start()
    until(lambda: not manager.accepting, "drain to begin")
    with pytest.raises(Unavailable, match="accepts no new runs"):
        manager.create_run("other", "chain", input={"log": []}, if_not_exists="create")
    gate.release.set()  # n1 finishes its superstep; the run stops before n2
    drainer.join(WAIT)
    assert result == {"stopped": True}
    assert calls == ["n0", "n1"]
    snap = state(graph, "plant")
    assert snap.next == ("n2",) and snap.values == {"log": ["start", "n0", "n1"]}
    stored = manager.records.get_run("plant", rec["run_id"])
    assert stored["status"] == "pending" and stored["_started"] is True
    assert manager.records.get_thread("plant")["status"] == "busy"
    manager.close()
    saver.close()

    # a new service on the reopened environment
    saver = LmdbSaver(path)
    graph = chain(5, {}, calls).compile(checkpointer=saver)
    manager = RunManager({"chain": graph}, saver)
    assert manager.resume_interrupted() == [rec["run_id"]]
    done = manager.wait(rec["run_id"], WAIT)
    assert done["status"] == "success"
    assert calls == ["n0", "n1", "n2", "n3", "n4"]  # nothing ran twice
    resumed = state(graph, "plant")
    assert manager.records.get_thread("plant")["status"] == "idle"

    # the same graph, same input, never interrupted
    plain = chain(5).compile(checkpointer=saver)
    plain.invoke({"log": ["start"]}, {"configurable": {"thread_id": "reference"}}, durability="sync")
    reference = state(plain, "reference")
    assert resumed.values == reference.values and resumed.next == reference.next == ()
    assert len(list(graph.get_state_history({"configurable": {"thread_id": "plant"}}))) == len(
        list(plain.get_state_history({"configurable": {"thread_id": "reference"}}))
    )
    manager.close()
    saver.close()


def test_runs_queued_during_a_drain_start_from_their_input_after_the_restart(tmp_path):
    path = str(tmp_path / "db")
    gate = Gate()
    saver = LmdbSaver(path)
    graph = chain(2, {0: gate}).compile(checkpointer=saver)
    manager = RunManager({"chain": graph}, saver, workers=1)
    first = manager.create_run("a", "chain", input={"log": ["x"]}, if_not_exists="create")
    assert gate.entered.wait(WAIT)
    queued = manager.create_run("b", "chain", input={"log": ["y"]}, if_not_exists="create")
    threading.Timer(0.05, gate.release.set).start()
    assert manager.drain(WAIT) is True
    assert manager.records.get_run("b", queued["run_id"])["status"] == "pending"
    assert "_started" not in manager.records.get_run("b", queued["run_id"])
    manager.close()
    saver.close()

    saver = LmdbSaver(path)
    graph = chain(2).compile(checkpointer=saver)
    manager = RunManager({"chain": graph}, saver)
    assert manager.resume_interrupted() == [first["run_id"], queued["run_id"]]
    for rid in (first["run_id"], queued["run_id"]):
        assert manager.wait(rid, WAIT)["status"] == "success"
    assert state(graph, "a").values == {"log": ["x", "n0", "n1"]}
    assert state(graph, "b").values == {"log": ["y", "n0", "n1"]}
    manager.close()
    saver.close()


CHILD = textwrap.dedent(
    """
    import operator, os, sys, time
    from typing import Annotated, TypedDict
    from lgembed.checkpoint.lmdb import LmdbSaver
    from lgembed.graph import END, START, StateGraph
    from lgembed.service.runs import RunManager

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]

    path, marks = sys.argv[1], sys.argv[2]

    def make(name):
        def node(state):
            with open(marks, "a") as f:
                f.write(name + "\\n")
            if name == "n2":
                print("in-n2", flush=True)
                time.sleep(600)  # killed here, in the middle of a superstep
            return {"log": [name]}
        return node

    b = StateGraph(S)
    prev = START
    for i in range(4):
        b.add_node(f"n{i}", make(f"n{i}"))
        b.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    b.add_edge(prev, END)
    saver = LmdbSaver(path)
    manager = RunManager({"chain": b.compile(checkpointer=saver)}, saver)
    run = manager.create_run("boiler", "chain", input={"log": []}, if_not_exists="create")
    print(run["run_id"], flush=True)
    time.sleep(600)
    """
)


def test_a_run_cut_by_sigkill_resumes_from_its_last_checkpoint(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    path, marks = str(tmp_path / "db"), str(tmp_path / "marks")
    child = subprocess.Popen([sys.executable, str(script), path, marks], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        run_id = child.stdout.readline().strip()
        assert child.stdout.readline().strip() == "in-n2"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(WAIT)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    calls: list = []
    saver = LmdbSaver(path)
    graph = chain(4, {}, calls).compile(checkpointer=saver)
    manager = RunManager({"chain": graph}, saver)
    assert manager.records.get_run("boiler", run_id)["status"] == "running"
    assert manager.resume_interrupted() == [run_id]
    assert manager.wait(run_id, WAIT)["status"] == "success"
    assert calls == ["n2", "n3"]  # n0 and n1 were checkpointed before the kill
    assert state(graph, "boiler").values == {"log": ["n0", "n1", "n2", "n3"]}
    assert manager.resume_interrupted() == []
    manager.close()
    saver.close()


# --- stalls, queueing, cancelling ------------------------------------------------------------


def test_stalled_names_a_run_stuck_in_a_superstep(env):
    gate = Gate()
    graph = chain(2, {1: gate}).compile(checkpointer=env)
    manager = RunManager({"chain": graph}, env)
    try:
        rec = manager.create_run("t", "chain", input={"log": []}, if_not_exists="create")
        assert gate.entered.wait(WAIT)
        until(lambda: manager.stalled(0.01) == [rec["run_id"]], "the run to count as stalled")
        assert manager.stalled(3600) == []
        gate.release.set()
        assert manager.wait(rec["run_id"], WAIT)["status"] == "success"
        assert manager.stalled(0) == []
    finally:
        gate.release.set()
        manager.close()


def test_one_run_per_thread_reject_enqueue_and_interrupt(env):
    gate = Gate()
    graph = chain(3, {0: gate}).compile(checkpointer=env)
    manager = RunManager({"chain": graph}, env, workers=3)
    try:
        first = manager.create_run("t", "chain", input={"log": ["1"]}, if_not_exists="create")
        assert gate.entered.wait(WAIT)
        with pytest.raises(Conflict, match="Thread is already running a task") as err:
            manager.create_run("t", "chain", input={"log": ["2"]}, multitask_strategy="reject")
        assert err.value.status == 409
        second = manager.create_run("t", "chain", input={"log": ["2"]}, multitask_strategy="enqueue")
        assert manager.pending_runs("t") == [first["run_id"], second["run_id"]]
        third = manager.create_run("t", "chain", input={"log": ["3"]}, multitask_strategy="interrupt")
        gate.release.set()
        assert manager.wait(first["run_id"], WAIT)["status"] == "interrupted"
        assert manager.wait(second["run_id"], WAIT)["status"] == "interrupted"
        assert manager.wait(third["run_id"], WAIT)["status"] == "success"
        # the first run stopped after its superstep n0; the third started the graph again
        assert state(graph, "t").values == {"log": ["1", "n0", "3", "n0", "n1", "n2"]}
        assert [r["run_id"] for r in manager.list_runs("t")] == [third["run_id"], second["run_id"], first["run_id"]]
    finally:
        gate.release.set()
        manager.close()


def test_cancel_and_errors(env):
    graph = chain(2, fail_at=1).compile(checkpointer=env)
    ok = chain(2).compile(checkpointer=env)
    manager = RunManager({"failing": graph, "ok": ok}, env)
    try:
        rec = manager.create_run("t", "failing", input={"log": []}, if_not_exists="create")
        assert manager.wait(rec["run_id"], WAIT)["status"] == "error"
        thread = manager.records.get_thread("t")
        assert thread["status"] == "error"
        assert thread["error"] == {"error": "ValueError", "message": "node n1 failed on purpose"}
        assert manager.stats() == {
            "done": 0,
            "failed": 1,
            "active": 0,
            "last_error": f"run {rec['run_id']}: ValueError: node n1 failed on purpose",
        }
        # committed steps are still there, and the next run on the thread works
        assert state(graph, "t").values == {"log": ["n0"]}
        again = manager.create_run("t", "ok", input={"log": ["again"]})
        assert manager.wait(again["run_id"], WAIT)["status"] == "success"
        assert manager.records.get_thread("t")["status"] == "idle"
        with pytest.raises(NotFound, match="No matching runs to cancel"):
            manager.cancel("t", again["run_id"])
        with pytest.raises(Invalid, match="lgembed does not roll back"):
            manager.cancel("t", again["run_id"], action="rollback")
        with pytest.raises(NotFound, match="Thread or assistant not found"):
            manager.create_run("missing", "ok", input={})
        with pytest.raises(NotFound):
            manager.create_run("t", "00000000-0000-0000-0000-000000000000", input={})
        with pytest.raises(Invalid, match="Invalid assistant: 'nope'"):
            manager.create_run("t", "nope", input={})
        with pytest.raises(Invalid, match="stream_mode 'events' is not supported"):
            manager.create_run("t", "ok", input={}, stream_mode=["events"])
        assert manager.create_run("t", assistant_id_for("ok"), input={"log": []})["assistant_id"] == assistant_id_for(
            "ok"
        )
    finally:
        manager.close()


def test_stateless_runs_leave_no_thread(env):
    graph = chain(2).compile(checkpointer=env)
    manager = RunManager({"chain": graph}, env)
    try:
        with manager.stream_run(None, "chain", events=False, input={"log": []}) as handle:
            assert handle.output(WAIT) == {"log": ["n0", "n1"]}
            tid = handle.record["thread_id"]
        assert manager.records.get_thread(tid) is None
        assert list(env.list({"configurable": {"thread_id": tid}})) == []
    finally:
        manager.close()


# --- records ---------------------------------------------------------------------------------


def test_records_survive_reopening_the_environment(tmp_path):
    path = str(tmp_path / "db")
    saver = LmdbSaver(path)
    graph = chain(2).compile(checkpointer=saver)
    manager = RunManager({"chain": graph}, saver, max_runs_per_thread=3)
    ids = []
    for i in range(16):
        rec = manager.create_run("kept", "chain", input={"log": [str(i)]}, if_not_exists="create", metadata={"i": i})
        manager.wait(rec["run_id"], WAIT)
        ids.append(rec["run_id"])
    listed = manager.list_runs("kept", limit=100)
    thread = manager.records.get_thread("kept")
    manager.close()
    saver.close()

    saver = LmdbSaver(path)
    manager = RunManager({"chain": chain(2).compile(checkpointer=saver)}, saver)
    assert manager.records.get_thread("kept") == thread
    assert manager.list_runs("kept", limit=100) == listed
    # only the newest runs are kept (3 plus the slack of 10 before pruning)
    assert 3 <= len(listed) <= 13 and listed[0]["run_id"] == ids[-1]
    assert [r["metadata"]["i"] for r in listed] == sorted((r["metadata"]["i"] for r in listed), reverse=True)
    assert all(r["status"] == "success" for r in listed)
    assert manager.resume_interrupted() == []
    manager.close()
    saver.close()


def test_credentials_are_never_stored_or_logged(tmp_path, caplog):
    path = str(tmp_path / "db")
    saver = LmdbSaver(path)
    seen = {}

    def node(state: S, config) -> S:
        seen.update(config["configurable"])
        return {"log": ["ran"]}

    graph = StateGraph(S).add_node("n", node).add_edge(START, "n").compile(checkpointer=saver)
    manager = RunManager({"g": graph}, saver)
    caplog.set_level(logging.DEBUG)
    rec = manager.create_run(
        "t",
        "g",
        input={"log": []},
        if_not_exists="create",
        config={
            "configurable": {"openai_api_key": "sk-SECRET-1", "max_tokens": 7, "nested": {"password": "pw-SECRET-2"}}
        },
        metadata={"access_token": "tok-SECRET-3", "site": "north"},
        context=None,
    )
    assert manager.wait(rec["run_id"], WAIT)["status"] == "success"
    stored = manager.records.get_run("t", rec["run_id"])
    assert stored["metadata"]["site"] == "north" and "access_token" not in stored["metadata"]
    assert stored["kwargs"]["config"]["configurable"]["max_tokens"] == 7
    assert seen["max_tokens"] == 7 and "openai_api_key" not in seen
    meta = state(graph, "t").metadata
    assert meta["site"] == "north" and "access_token" not in meta
    manager.close()
    saver.close()
    with open(os.path.join(path, "data.mdb"), "rb") as f:
        data = f.read()
    for secret in (b"sk-SECRET-1", b"pw-SECRET-2", b"tok-SECRET-3"):
        assert secret not in data
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "openai_api_key" in text  # the name is reported, once
    assert "SECRET" not in text


def test_secret_key_rule_and_ids():
    assert [
        k
        for k in (
            "openai_api_key",
            "apiKey",
            "x-api-key",
            "access_token",
            "Authorization",
            "db_password",
            "clientSecret",
        )
        if is_secret_key(k)
    ] == ["openai_api_key", "apiKey", "x-api-key", "access_token", "Authorization", "db_password", "clientSecret"]
    assert not any(is_secret_key(k) for k in ("max_tokens", "tokenizer", "keyword", "api", "thread_id"))
    dropped: set = set()
    assert scrub_secrets({"a": [{"token": 1, "b": 2}], "c": 3}, dropped) == {"a": [{"b": 2}], "c": 3}
    assert dropped == {"token"}
    ids = [uuid7() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(i[14] == "7" for i in ids)


def test_constructor_checks(env):
    with pytest.raises(ValueError, match="'graphs' must name at least one compiled graph"):
        RunManager({}, env)
    with pytest.raises(ValueError, match=r"'workers' must be at least 1 \(got 0\)"):
        RunManager({"g": chain(1).compile(checkpointer=env)}, env, workers=0)
