"""`lgembed threads --db DIR ...`: list, show, history, delete, prune, export/import, verify.

Environments are written by real graphs with `LmdbSaver` in a temporary directory; the
command runs as a subprocess (`python -m lgembed threads ...`). `verify` is checked on a
healthy environment and on damaged copies: a channel value deleted through lmdb (a
dangling reference), a record's bytes overwritten in data.mdb, a whole page overwritten,
and a store count out of step.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.cli.threads import derive_next
from lgembed.graph import END, START, StateGraph
from lgembed.types import Command, Send, interrupt


class S(TypedDict):
    x: int
    note: str
    ok: bool


class Fan(TypedDict):
    items: list
    done: Annotated[list, operator.add]


def _inc(s: S) -> dict:
    return {"x": s["x"] + 1}


def _ask(s: S) -> dict:
    return {"ok": interrupt({"question": "heat?", "x": s["x"]})}


def _boom(s: S) -> dict:
    raise ValueError("sensor offline")


def chain_builder() -> StateGraph:
    b = StateGraph(S)
    b.add_node("a", _inc)
    b.add_node("b", _inc)
    b.add_node("c", _inc)
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    return b


def approval_builder() -> StateGraph:
    b = StateGraph(S)
    b.add_node("inc", _inc)
    b.add_node("ask", _ask)
    b.add_edge(START, "inc")
    b.add_edge("inc", "ask")
    b.add_edge("ask", END)
    return b


def failing_builder() -> StateGraph:
    b = StateGraph(S)
    b.add_node("inc", _inc)
    b.add_node("boom", _boom)
    b.add_edge(START, "inc")
    b.add_edge("inc", "boom")
    return b


def branch_builder() -> StateGraph:
    b = StateGraph(S)
    b.add_node("inc", _inc)
    b.add_node("high", lambda s: {"note": "high"})
    b.add_node("low", lambda s: {"note": "low"})
    b.add_edge(START, "inc")
    b.add_conditional_edges("inc", lambda s: "high" if s["x"] > 5 else "low", ["high", "low"])
    return b


def fan_builder() -> StateGraph:
    b = StateGraph(Fan)
    b.add_node("split", lambda s: {})
    b.add_node("work", lambda item: {"done": [item]})
    b.add_node("left", lambda s: {"done": ["left"]})
    b.add_node("right", lambda s: {"done": ["right"]})
    b.add_node("join", lambda s: {"done": ["joined"]})
    b.add_node("gate", lambda s: {"done": [interrupt("approve the batch?")]})
    b.add_edge(START, "split")
    b.add_conditional_edges("split", lambda s: [Send("work", i) for i in s["items"]])
    b.add_edge("split", "left")
    b.add_edge("split", "right")
    b.add_edge(["left", "right"], "join")
    b.add_edge("join", "gate")
    return b


def lg(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lgembed", *args],
        cwd=str(cwd) if cwd else None,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def lines(proc: subprocess.CompletedProcess) -> list:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


@pytest.fixture
def env(tmp_path: Path) -> Path:
    """An environment with a finished, an interrupted, a failed and a fan-out thread, and store items."""
    db = tmp_path / "db"
    with LmdbSaver(str(db)) as saver:
        chain = chain_builder().compile(checkpointer=saver)
        chain.invoke({"x": 0, "note": "MARKER-chain-note"}, {"configurable": {"thread_id": "done"}})
        approval = approval_builder().compile(checkpointer=saver)
        approval.invoke({"x": 1}, {"configurable": {"thread_id": "waiting"}})
        failing = failing_builder().compile(checkpointer=saver)
        with pytest.raises(ValueError):
            failing.invoke({"x": 1}, {"configurable": {"thread_id": "failed"}})
        fan = fan_builder().compile(checkpointer=saver)
        fan.invoke({"items": ["p", "q"]}, {"configurable": {"thread_id": "fan"}})
        from lgembed.store.lmdb import LmdbStore

        store = LmdbStore(env=saver.env)
        store.put(("devices", "room"), "calibration", {"offset": 0.25})
        store.put(("devices", "room"), "name", {"label": "kitchen"})
        store.close()
    return db


# --- next without the graph ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("builder", "inputs"),
    [
        (chain_builder, [{"x": 0}]),
        (approval_builder, [{"x": 1}, Command(resume=True)]),
        (failing_builder, [{"x": 1}]),
        (branch_builder, [{"x": 1}, {"x": 7}]),
        (fan_builder, [{"items": ["p", "q", "r"]}, Command(resume="yes")]),
    ],
    ids=["chain", "interrupt", "error", "branch", "send-join-interrupt"],
)
def test_derive_next_matches_get_state(tmp_path: Path, builder: Any, inputs: list) -> None:
    with LmdbSaver(str(tmp_path / "db")) as saver:
        graph = builder().compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t"}}
        for value in inputs:
            try:
                graph.invoke(value, cfg)
            except ValueError:
                pass
        history = list(graph.get_state_history(cfg))
        assert len(history) >= 3
        for snapshot in history:
            item = saver.get_tuple(snapshot.config)
            assert sorted(derive_next(item.checkpoint)) == sorted(snapshot.next), snapshot.metadata


# --- list / show / history ---------------------------------------------------------------------


def test_list(env: Path) -> None:
    proc = lg("threads", "--db", str(env), "list")
    assert proc.returncode == 0, proc.stderr
    rows = {row["thread_id"]: row for row in lines(proc)}
    assert sorted(rows) == ["done", "failed", "fan", "waiting"]
    assert rows["done"]["next"] == [] and rows["done"]["step"] == 3 and rows["done"]["checkpoints"] == 5
    assert rows["waiting"]["next"] == ["ask"] and rows["waiting"]["interrupts"] == 1
    assert rows["failed"]["next"] == ["boom"]
    assert rows["fan"]["next"] == ["gate"]
    for row in rows.values():
        assert row["updated_at"].endswith("+00:00") and row["namespaces"] == 1


def test_show(env: Path) -> None:
    proc = lg("threads", "--db", str(env), "show", "waiting", "--pretty")
    assert proc.returncode == 0, proc.stderr
    state = json.loads(proc.stdout)
    assert state["values"] == {"x": 2}
    assert state["next"] == ["ask"]
    assert [i["value"] for i in state["interrupts"]] == [{"question": "heat?", "x": 2}]
    assert state["metadata"]["step"] == 1 and state["source"] == "loop"
    with LmdbSaver(str(env)) as saver:
        snapshot = approval_builder().compile(checkpointer=saver).get_state({"configurable": {"thread_id": "waiting"}})
    assert state["checkpoint_id"] == snapshot.config["configurable"]["checkpoint_id"]
    assert [i["id"] for i in state["interrupts"]] == [i.id for i in snapshot.interrupts]
    failed = json.loads(lg("threads", "--db", str(env), "show", "failed").stdout)
    assert failed["next"] == ["boom"]
    assert failed["errors"] and "sensor offline" in json.dumps(failed["errors"])


@dataclasses.dataclass
class Reading:
    celsius: float


class WithReading(TypedDict):
    reading: Reading


def test_show_user_types_without_the_graph(tmp_path: Path) -> None:
    b = StateGraph(WithReading)
    b.add_node("m", lambda s: {"reading": Reading(21.5)})
    b.add_edge(START, "m")
    db = tmp_path / "db"
    with LmdbSaver(str(db)) as saver:
        b.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": "r"}})
    proc = lg("threads", "--db", str(db), "show", "r")
    assert proc.returncode == 0, proc.stderr
    value = json.loads(proc.stdout)["values"]["reading"]
    assert value == {"__type__": f"{Reading.__module__}:{Reading.__qualname__}", "data": {"celsius": 21.5}}


def test_history(env: Path) -> None:
    proc = lg("threads", "--db", str(env), "history", "done")
    assert proc.returncode == 0, proc.stderr
    rows = lines(proc)
    with LmdbSaver(str(env)) as saver:
        graph = chain_builder().compile(checkpointer=saver)
        expected = list(graph.get_state_history({"configurable": {"thread_id": "done"}}))
    assert [r["checkpoint_id"] for r in rows] == [s.config["configurable"]["checkpoint_id"] for s in expected]
    assert [r["values"] for r in rows] == [s.values for s in expected]
    assert [r["step"] for r in rows] == [3, 2, 1, 0, -1]
    assert [r["next"] for r in rows] == [list(s.next) for s in expected]
    limited = lines(lg("threads", "--db", str(env), "history", "done", "--limit", "2"))
    assert [r["checkpoint_id"] for r in limited] == [r["checkpoint_id"] for r in rows[:2]]


# --- delete / prune -------------------------------------------------------------------------------


def test_delete(env: Path) -> None:
    proc = lg("threads", "--db", str(env), "delete", "done")
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"deleted": "done", "checkpoints": 5}]
    assert lg("threads", "--db", str(env), "show", "done").returncode == 2
    assert "done" not in [r["thread_id"] for r in lines(lg("threads", "--db", str(env), "list"))]
    again = lg("threads", "--db", str(env), "delete", "done")
    assert again.returncode == 2 and "unknown thread 'done'" in again.stderr


def test_prune(env: Path) -> None:
    before = {r["thread_id"]: r for r in lines(lg("threads", "--db", str(env), "list"))}
    proc = lg("threads", "--db", str(env), "prune", "--keep", "2")
    assert proc.returncode == 0, proc.stderr
    [summary] = lines(proc)
    total = sum(r["checkpoints"] for r in before.values())
    assert summary["checkpoints_before"] == total
    after = {r["thread_id"]: r for r in lines(lg("threads", "--db", str(env), "list"))}
    assert summary["checkpoints_after"] == sum(r["checkpoints"] for r in after.values()) == 2 * len(before)
    for tid, row in after.items():
        assert row["checkpoint_id"] == before[tid]["checkpoint_id"]
        assert row["next"] == before[tid]["next"]
    # the interrupted thread can still be resumed after pruning
    with LmdbSaver(str(env)) as saver:
        graph = approval_builder().compile(checkpointer=saver)
        assert graph.invoke(Command(resume=True), {"configurable": {"thread_id": "waiting"}}) == {"x": 2, "ok": True}
    one = lg("threads", "--db", str(env), "prune", "--keep", "1", "done")
    assert one.returncode == 0, one.stderr
    assert lines(one)[0]["checkpoints_after"] == 1
    verify = lg("threads", "--db", str(env), "verify")
    assert verify.returncode == 0, verify.stdout
    assert lg("threads", "--db", str(env), "prune", "--keep", "0").returncode == 1
    unknown = lg("threads", "--db", str(env), "prune", "--keep", "1", "nope")
    assert unknown.returncode == 2 and "unknown thread(s) 'nope'" in unknown.stderr


# --- export / import -----------------------------------------------------------------------------


def test_export_import_round_trip(env: Path, tmp_path: Path) -> None:
    proc = lg("threads", "--db", str(env), "export", "waiting")
    assert proc.returncode == 0, proc.stderr
    rows = lines(proc)
    assert rows[0]["lgembed_export"] == 1 and rows[0]["thread_id"] == "waiting"
    assert [r["type"] for r in rows[1:4]] == ["checkpoint"] * 3
    assert rows[-1] == {"type": "end", "checkpoints": 3, "records": sum(r.get("type") == "record" for r in rows)}
    export = tmp_path / "waiting.jsonl"
    export.write_text(proc.stdout)

    other = tmp_path / "other"
    imported = lg("threads", "--db", str(other), "import", str(export))
    assert imported.returncode == 0, imported.stderr
    assert lines(imported) == [{"imported": "waiting", "checkpoints": 3, "records": rows[-1]["records"]}]
    assert lines(lg("threads", "--db", str(other), "history", "waiting")) == lines(
        lg("threads", "--db", str(env), "history", "waiting")
    )
    # the imported thread resumes on the other environment as it would have on the first
    with LmdbSaver(str(other)) as saver:
        graph = approval_builder().compile(checkpointer=saver)
        assert graph.invoke(Command(resume=False), {"configurable": {"thread_id": "waiting"}}) == {"x": 2, "ok": False}

    exists = lg("threads", "--db", str(other), "import", str(export))
    assert exists.returncode == 2 and "thread 'waiting' exists" in exists.stderr
    renamed = lg("threads", "--db", str(other), "import", "-", "--thread", "copy", stdin=proc.stdout)
    assert renamed.returncode == 0, renamed.stderr
    replaced = lg("threads", "--db", str(other), "import", str(export), "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert lines(lg("threads", "--db", str(other), "show", "waiting"))[0]["next"] == ["ask"]
    assert lg("threads", "--db", str(other), "verify").returncode == 0


def test_import_refuses_a_truncated_export(env: Path, tmp_path: Path) -> None:
    proc = lg("threads", "--db", str(env), "export", "done")
    truncated = "\n".join(proc.stdout.splitlines()[:-3]) + "\n"
    other = tmp_path / "other"
    result = lg("threads", "--db", str(other), "import", "-", stdin=truncated)
    assert result.returncode == 2
    assert "is incomplete" in result.stderr and "Nothing was imported" in result.stderr
    assert not (other / "data.mdb").exists()
    bad = lg("threads", "--db", str(other), "import", "-", stdin='{"hello": 1}\n')
    assert bad.returncode == 2 and "not an lgembed thread export" in bad.stderr


# --- errors ------------------------------------------------------------------------------------------


def test_environment_errors(env: Path, tmp_path: Path) -> None:
    missing = lg("threads", "--db", str(tmp_path / "nope"), "list")
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    assert not (tmp_path / "nope").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = lg("threads", "--db", str(empty), "list")
    assert proc.returncode == 2 and "no LMDB environment there (no data.mdb)" in proc.stderr
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "data.mdb").write_bytes(os.urandom(8192))
    proc = lg("threads", "--db", str(junk), "list")
    assert proc.returncode == 2 and "not a readable LMDB environment" in proc.stderr
    assert "Traceback" not in proc.stderr

    import lmdb

    foreign = tmp_path / "foreign"
    e = lmdb.open(str(foreign), max_dbs=4)
    with e.begin(write=True) as txn:
        txn.put(b"k", b"v")
    e.close()
    before = (foreign / "data.mdb").read_bytes()
    proc = lg("threads", "--db", str(foreign), "list")
    assert proc.returncode == 2 and "not one lgembed wrote" in proc.stderr
    assert (foreign / "data.mdb").read_bytes() == before  # nothing written to someone else's environment

    assert lg("threads", "list").returncode == 1  # no --db
    assert lg("threads", "--db", str(env)).returncode == 1  # no action
    assert lg("threads", "list", "--db", str(env)).returncode == 0  # --db after the action
    unknown = lg("threads", "--db", str(env), "show", "nope")
    assert unknown.returncode == 2 and "unknown thread 'nope'" in unknown.stderr
    assert lg("threads", "--db", str(env), "history", "done", "--limit", "0").returncode == 1


# --- verify ---------------------------------------------------------------------------------------------


def test_verify_healthy(env: Path) -> None:
    proc = lg("threads", "--db", str(env), "verify")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["problems"] == []
    assert report["threads"] == 4
    assert report["checkpoints"] == sum(r["checkpoints"] for r in lines(lg("threads", "--db", str(env), "list")))
    assert report["store_items"] == 2 and report["store_namespaces"] == 1
    assert set(report["databases"]) == {
        "lgembed.format",
        "lgembed.records",
        "lgembed.store.items",
        "lgembed.store.namespaces",
    }
    assert proc.stderr == ""


def _copy(env: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(env, target)
    return target


def test_verify_dangling_value(env: Path, tmp_path: Path) -> None:
    import lmdb

    from lgembed.checkpoint._lmdb_env import enc

    damaged = _copy(env, tmp_path, "dangling")
    e = lmdb.open(str(damaged), max_dbs=16)
    records = e.open_db(b"lgembed.records")
    prefix = enc("done") + enc("") + b"b" + enc("x")
    with e.begin(write=True, db=records) as txn:
        keys = [k for k, _ in txn.cursor() if k.startswith(prefix)]
        assert keys
        txn.delete(keys[-1])  # the newest version of channel x of thread "done"
    e.close()
    proc = lg("threads", "--db", str(damaged), "verify")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert any(
        "thread 'done' checkpoint" in p and "the value of channel 'x' it references is missing" in p
        for p in report["problems"]
    )
    assert proc.stderr.startswith("lgembed threads verify: damage: thread 'done' checkpoint ")
    assert json.loads(lg("threads", "--db", str(env), "verify").stdout)["ok"] is True  # the original is intact


def test_verify_overwritten_record_bytes(env: Path, tmp_path: Path) -> None:
    damaged = _copy(env, tmp_path, "bytes")
    data = bytearray((damaged / "data.mdb").read_bytes())
    marker = b"MARKER-chain-note"
    at = data.find(marker)
    assert at > 2
    while at > 0:  # every copy: LMDB's copy-on-write leaves old ones in free pages
        assert data[at - 1] == 0xA0 | len(marker)  # msgpack fixstr header
        data[at - 1] = 0xC1  # "never used" in msgpack: the value's encoding is broken
        at = data.find(marker, at + 1)
    (damaged / "data.mdb").write_bytes(bytes(data))
    proc = lg("threads", "--db", str(damaged), "verify")
    assert proc.returncode == 1, proc.stdout
    problems = json.loads(proc.stdout)["problems"]
    assert any(p.startswith("thread 'done'") and ("does not load" in p or "does not decode" in p) for p in problems), (
        problems
    )
    show = lg("threads", "--db", str(damaged), "history", "done")
    assert show.returncode == 2 and "verify" in show.stderr


def test_verify_overwritten_page(env: Path, tmp_path: Path) -> None:
    damaged = _copy(env, tmp_path, "page")
    data = bytearray((damaged / "data.mdb").read_bytes())
    page = 4096
    at = data.find(b"MARKER-chain-note")
    assert at > 0
    while at > 0:  # every page holding a copy (old copies stay in free pages): one of them is live
        start = at // page * page
        data[start : start + page] = b"\xa5" * page
        at = data.find(b"MARKER-chain-note", start + page)
    (damaged / "data.mdb").write_bytes(bytes(data))
    proc = lg("threads", "--db", str(damaged), "verify")
    assert proc.returncode == 1, proc.stdout
    report = json.loads(proc.stdout)
    assert report["ok"] is False and report["problems"]
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("lgembed threads verify: damage: ")


def test_verify_store_count(env: Path, tmp_path: Path) -> None:
    import lmdb

    damaged = _copy(env, tmp_path, "store")
    e = lmdb.open(str(damaged), max_dbs=16)
    items = e.open_db(b"lgembed.store.items")
    with e.begin(write=True, db=items) as txn:
        key = next(k for k, _ in txn.cursor())
        txn.delete(key)  # the item goes, its namespace's count stays
    e.close()
    proc = lg("threads", "--db", str(damaged), "verify")
    assert proc.returncode == 1
    [problem] = json.loads(proc.stdout)["problems"]
    assert problem == "store namespace ('devices', 'room'): 1 item(s) stored, but its count says 2"


def test_verify_unreadable_files(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "data.mdb").write_bytes(b"\x00" * 8192)
    proc = lg("threads", "--db", str(junk), "verify")
    assert proc.returncode == 1
    assert "cannot be opened as an LMDB environment" in json.loads(proc.stdout)["problems"][0]
    assert lg("threads", "--db", str(tmp_path / "missing"), "verify").returncode == 2


def test_formats_pinned() -> None:
    """The reader and checker are written for the savers' current record formats: a new
    format must come with an update of `lgembed.cli.threads` (this test says so)."""
    from lgembed.checkpoint import lmdb as saver_module
    from lgembed.cli import export, verify
    from lgembed.store import lmdb as store_module

    assert export._STORAGE_FORMAT == saver_module.FORMAT_VERSION
    assert verify._CHECKPOINT_FORMAT == str(saver_module.FORMAT_VERSION)
    assert verify._STORE_FORMAT == str(store_module.FORMAT_VERSION)
