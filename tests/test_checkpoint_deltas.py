"""Per-step checkpoint records that carry only what changed (issue 15), in both savers.

A saver stores a checkpoint as a delta against its parent (the channel versions that
changed, the versions_seen entries of the nodes that ran) and rebuilds the full
checkpoint on read. These tests check that nothing observable changes: every read
path (get_tuple, list with filter/before/limit, get_state history, forks, copy_thread,
prune, keep_last retention, a checkpoint put again under its id) gives what a saver
without deltas gives, LangGraph's InMemorySaver being the reference.
"""

from __future__ import annotations

import operator
import os
import sys
from typing import Annotated, TypedDict

import pytest

from lgembed.checkpoint import _memory_store
from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.checkpoint.memory import InMemorySaver
from lgembed.graph import END, START, StateGraph


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def _node(i: int):
    def run(state: State) -> dict:
        return {"n": state["n"] + 1, "log": [f"n{i}"]}

    return run


def _graph(saver, length: int = 30):
    g = StateGraph(State)
    prev = START
    for i in range(length):
        g.add_node(f"n{i}", _node(i))
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, END)
    return g.compile(checkpointer=saver)


def _snapshot(saver, thread: str = "t") -> list:
    cfg = {"configurable": {"thread_id": thread}}
    return [
        (t.config, t.checkpoint, t.metadata, t.parent_config, t.pending_writes)
        for t in saver.list(cfg)
    ]


@pytest.fixture(params=["memory", "lmdb"])
def saver(request, tmp_path):
    if request.param == "memory":
        yield InMemorySaver()
    else:
        s = LmdbSaver(str(tmp_path / "db"))
        yield s
        s.close()


def _full_copy(saver) -> dict:
    """Every checkpoint of thread "t" read one by one by id."""
    out = {}
    for t in saver.list({"configurable": {"thread_id": "t"}}):
        got = saver.get_tuple(t.config)
        out[t.config["configurable"]["checkpoint_id"]] = (got.checkpoint, got.metadata, got.parent_config, got.pending_writes)
    return out


def test_long_run_reads_back_whole(saver):
    """Longer than the delta depth limit: every checkpoint of the history loads whole."""
    app = _graph(saver, 40)
    cfg = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"n": 0, "log": []}, cfg)["n"] == 40
    history = list(app.get_state_history(cfg))
    assert len(history) == 42
    for i, snap in enumerate(reversed(history[:-1])):
        assert snap.values["n"] == i, snap
        assert snap.values["log"] == [f"n{j}" for j in range(i)]
    last = history[0].config["configurable"]["checkpoint_id"]
    tup = saver.get_tuple(cfg)
    assert tup.config["configurable"]["checkpoint_id"] == last
    assert set(tup.checkpoint["versions_seen"]) == {"__input__", "__start__", *(f"n{i}" for i in range(40))}
    assert len(tup.checkpoint["channel_versions"]) == 2 + 1 + 40  # __start__, n, log, branch:to:*
    # list with filter / before / limit
    steps = [t.metadata["step"] for t in saver.list(cfg, filter={"source": "loop"}, limit=5)]
    assert steps == [40, 39, 38, 37, 36]
    before = list(saver.list(cfg, before=history[10].config, limit=2))
    assert [t.config["configurable"]["checkpoint_id"] for t in before] == [
        history[11].config["configurable"]["checkpoint_id"],
        history[12].config["configurable"]["checkpoint_id"],
    ]


def test_fork_and_update_state(saver):
    """Time travel: a run resumed from an older checkpoint, and update_state on it."""
    app = _graph(saver, 20)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"n": 0, "log": []}, cfg)
    history = list(app.get_state_history(cfg))
    old = history[12]  # n == 8, next n8
    assert old.values["n"] == 8
    forked = app.update_state(old.config, {"n": 100})
    out = app.invoke(None, forked)
    assert out["n"] == 112
    assert out["log"] == [f"n{j}" for j in range(20)]
    # the old branch still reads back whole
    for snap in history:
        again = app.get_state(snap.config)
        assert again.values == snap.values
        assert again.next == snap.next


def test_prune_and_copy_keep_the_rest_whole(saver):
    app = _graph(saver, 25)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"n": 0, "log": []}, cfg)
    before = _full_copy(saver)
    saver.copy_thread("t", "u")
    copied = {
        t.config["configurable"]["checkpoint_id"]: (t.checkpoint, t.metadata)
        for t in saver.list({"configurable": {"thread_id": "u"}})
    }
    assert {k: (v[0], v[1]) for k, v in before.items()} == copied
    latest = saver.get_tuple(cfg)
    saver.prune(["t"])
    kept = list(saver.list(cfg))
    assert len(kept) == 1
    assert kept[0].checkpoint == latest.checkpoint
    assert app.get_state(cfg).values["n"] == 25
    # the copy is unaffected, and a run goes on from the pruned thread
    assert app.get_state({"configurable": {"thread_id": "u"}}).values["n"] == 25
    app.invoke({"n": 0, "log": []}, cfg)
    assert app.get_state(cfg).values["n"] == 25


def test_copy_over_a_thread_that_shares_ids(saver):
    """A copy whose ids the target already holds (copied before): the target's own later
    checkpoints, deltas against a replaced one, still load."""
    app = _graph(saver, 5)
    cfg_t = {"configurable": {"thread_id": "t"}}
    cfg_u = {"configurable": {"thread_id": "u"}}
    app.invoke({"n": 0, "log": []}, cfg_t)
    saver.copy_thread("t", "u")
    app.invoke({"n": 0, "log": []}, cfg_u)  # u's own checkpoints after the copied ones
    own = _snapshot(saver, "u")
    saver.copy_thread("t", "u")
    assert _snapshot(saver, "u") == own


def test_put_again_under_an_id_keeps_its_children_whole(saver):
    """A checkpoint put again under its id (LangGraph overwrites it): checkpoints whose
    records were deltas against it still load as they were stored."""
    app = _graph(saver, 6)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"n": 0, "log": []}, cfg)
    history = list(saver.list(cfg))
    target = history[4]
    children = {
        t.config["configurable"]["checkpoint_id"]: (t.checkpoint, t.metadata)
        for t in history[:4]
    }
    checkpoint = dict(target.checkpoint)
    checkpoint["channel_versions"] = {"n": checkpoint["channel_versions"]["n"]}
    checkpoint["versions_seen"] = {}
    saver.put(target.parent_config, checkpoint, target.metadata, {})
    again = {
        t.config["configurable"]["checkpoint_id"]: (t.checkpoint, t.metadata)
        for t in list(saver.list(cfg))[:4]
    }
    assert again == children
    assert saver.get_tuple(target.config).checkpoint["channel_versions"] == checkpoint["channel_versions"]


def test_memory_records_are_deltas():
    """The records after the first carry only what changed: about the same size at
    every step of a long chain, not growing with the number of channels."""
    saver = InMemorySaver()
    app = _graph(saver, 40)
    app.invoke({"n": 0, "log": []}, {"configurable": {"thread_id": "t"}})
    lane = saver._threads["t"][""]
    sizes = [len(lane.checkpoints[k]) for k in sorted(lane.checkpoints)]
    deltas = sizes[2:]
    full = [s for s in deltas if s > 2 * min(deltas)]
    assert len(full) <= len(deltas) // _memory_store._DELTA_DEPTH_MAX + 1, sizes


@pytest.mark.skipif(
    sys.maxsize < 2**32,
    reason="LMDB's data file depends on the word size: the fixture was written by a 64-bit "
    "build, which a 32-bit LMDB reports as MDB_INVALID (armv7l)",
)
def test_format_2_environment_is_read_and_extended(tmp_path):
    """An environment written by the previous format (lgembed at 367766f: full records
    only, format marker 2; tests/fixtures/lmdb_format2, made by that code) reads as it
    was; it is then recorded as format 3 and takes delta records."""
    import json
    import shutil

    import lmdb

    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "lmdb_format2")
    path = tmp_path / "env"
    shutil.copytree(fixture, path)
    expected = json.loads((path / "expected.json").read_text())

    class Old(TypedDict):
        n: int
        log: Annotated[list, operator.add]

    g = StateGraph(Old)
    prev = START
    for i in range(3):
        g.add_node(f"n{i}", _node(i))
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, END)
    cfg = {"configurable": {"thread_id": "old"}}
    with LmdbSaver(str(path)) as saver:
        app = g.compile(checkpointer=saver)
        got = [
            {"id": s.config["configurable"]["checkpoint_id"], "values": s.values, "next": list(s.next), "step": s.metadata["step"]}
            for s in app.get_state_history(cfg)
        ]
        assert got == expected
        out = app.invoke({"n": 0, "log": []}, cfg)
        assert out == {"n": 3, "log": ["n0", "n1", "n2", "n0", "n1", "n2"]}
    env = lmdb.open(str(path), max_dbs=8, readonly=True)
    with env.begin() as txn:
        assert txn.get(b"checkpoint", db=env.open_db(b"lgembed.format", txn=txn, create=False)) == b"3"
    env.close()
    with LmdbSaver(str(path)) as saver:
        history = list(g.compile(checkpointer=saver).get_state_history(cfg))
        assert len(history) == 2 * len(expected)
        assert [s.values for s in history[len(expected) :]] == [e["values"] for e in expected]


def test_lmdb_records_are_deltas(tmp_path):
    """Format 3: after a full record, a checkpoint record carries only what changed."""
    import msgpack

    with LmdbSaver(str(tmp_path / "env")) as saver:
        _graph(saver, 40).invoke({"n": 0, "log": []}, {"configurable": {"thread_id": "t"}})
        with saver._shared.read() as txn:
            records = [msgpack.unpackb(raw, raw=False) for _, raw in txn.cursor(db=saver._records)]
    checkpoints = [r for r in records if type(r) is list and len(r) in (5, 7) and type(r[3]) is str]
    deltas = [r for r in checkpoints if len(r) == 7]
    assert len(checkpoints) == 42
    assert len(deltas) >= 42 - 2 - 42 // 16 - 1


def test_compacted_timestamps_and_ids_come_back_exactly():
    """InMemorySaver stores now_iso timestamps and canonical UUID ids compactly; every
    string comes back exactly, and anything else is stored as itself."""
    import datetime
    import random
    import uuid

    from lgembed.checkpoint._id import now_iso
    from lgembed.checkpoint._memory_codec import _id_code, _id_text, _ts_code, _ts_text

    rng = random.Random(15)
    for _ in range(2000):
        d = datetime.datetime(
            2000 + rng.randrange(100), rng.randrange(1, 13), rng.randrange(1, 29), rng.randrange(24),
            rng.randrange(60), rng.randrange(60), rng.randrange(1_000_000), tzinfo=datetime.timezone.utc,
        )
        ts = d.isoformat()
        assert _ts_text(_ts_code(ts)) == ts
        if d.microsecond:
            assert type(_ts_code(ts)) is int
    odd = ["2026-12-03T12:45:26+00:00", "1999-12-03T12:45:26.123456+00:00", "2026-12-03T12:45:26.12345a+00:00",
           "2026-12-03 12:45:26.123456+00:00", "2026-12-03T12:45:26.123456+01:00", now_iso()]
    for ts in odd:
        assert _ts_text(_ts_code(ts)) == ts
    for value in [str(uuid.uuid4()), str(uuid.uuid4()).upper(), "x" * 36, "1f1ef176-a0c2-6181-8001-a1b4cc5e302g", "", None, 7, b"\x00" * 16]:
        assert _id_text(_id_code(value)) == value
    assert type(_id_code(str(uuid.uuid4()))) is bytes


@pytest.mark.parametrize("keep", [1, 2, 5])
def test_lmdb_keep_last_never_drops_a_record_a_kept_delta_needs(tmp_path, keep):
    """Retention removes the parents of the oldest kept checkpoints: those become full
    records in the same transaction, so every kept checkpoint still loads whole."""
    with LmdbSaver(str(tmp_path / "env"), keep_last=keep) as saver:
        app = _graph(saver, 30)
        cfg = {"configurable": {"thread_id": "t"}}
        app.invoke({"n": 0, "log": []}, cfg)
        kept = list(saver.list(cfg))
        assert len(kept) == keep
        for i, t in enumerate(kept):
            assert t.checkpoint["channel_values"]["n"] == 30 - i
            assert len(t.checkpoint["versions_seen"]) == 2 + 30 - i
        assert app.get_state(cfg).values["log"] == [f"n{j}" for j in range(30)]
    from lgembed.cli.verify import check_env

    report = check_env(str(tmp_path / "env"))
    assert report["ok"] and not report["problems"] and report["checkpoints"] == keep, report
