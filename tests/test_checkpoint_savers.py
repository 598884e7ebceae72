"""One behaviour suite for every checkpoint saver, plus the saver-independent helpers.

Statements: docs/BEHAVIOUR.md §9 (P-0 .. P-13, P-5 write ordering, L-49 versions) and O-3/O-14.
Every test that takes the `saver` fixture runs once per backend in `SAVERS`; a new
backend (LmdbSaver) is one more branch of `_make_saver`. Tests that check a detail of
one backend take that backend's own fixture.

Why this file is longer than 600 lines: it is the single contract suite every saver
must pass; splitting it per method would mean one fixture setup per file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

from lgembed.checkpoint import base as base_mod
from lgembed.checkpoint._id import uuid6
from lgembed.checkpoint.base import (
    EXCLUDED_METADATA_KEYS,
    LATEST_VERSION,
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    CheckpointTuple,
    EmptyChannelError,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
    get_checkpoint_id,
    get_checkpoint_metadata,
    get_serializable_checkpoint_metadata,
    writes_sort_key,
)
from lgembed.checkpoint.memory import InMemorySaver, MemorySaver
from lgembed.checkpoint.serde import MsgpackSerializer
from lgembed.errors import EmptyChannelError as ErrorsEmptyChannelError
from lgembed.types import Interrupt, Send

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NULL_TASK = "00000000-0000-0000-0000-000000000000"
SAVERS = ["memory", "lmdb"]
# backends the suite runs against (docs/DESIGN.md §4: LmdbSaver passes InMemorySaver's suite)


def _make_saver(kind: str, tmp_path: Any, serde: Any = None) -> BaseCheckpointSaver:
    if kind == "memory":
        return InMemorySaver(serde=serde)
    if kind == "lmdb":
        from lgembed.checkpoint.lmdb import LmdbSaver

        path = tmp_path / "env"
        n = 0
        while path.exists():
            n += 1
            path = tmp_path / f"env{n}"
        return LmdbSaver(path, serde=serde)
    raise AssertionError(kind)  # pragma: no cover


@pytest.fixture(params=SAVERS)
def saver(request, tmp_path) -> BaseCheckpointSaver:
    return _make_saver(request.param, tmp_path)


@pytest.fixture(params=SAVERS)
def saver_factory(request, tmp_path):
    """Makes a saver of the current backend with a given serde."""
    return lambda serde=None: _make_saver(request.param, tmp_path, serde)


# --- helpers ------------------------------------------------------------------------


def cfg(thread: str = "t", ns: str | None = "", checkpoint_id: str | None = None, **extra: Any) -> dict:
    configurable: dict[str, Any] = {"thread_id": thread}
    if ns is not None:
        configurable["checkpoint_ns"] = ns
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    configurable.update(extra)
    return {"configurable": configurable}


def ckpt(step: int = 0, values: dict | None = None, versions: dict | None = None, **extra: Any) -> dict:
    """A checkpoint as the engine makes it (v4, uuid6 id whose clock sequence is `step`)."""
    values = values or {}
    return {
        "v": 4,
        "id": str(uuid6(clock_seq=step)),
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions if versions is not None else {k: 1 for k in values},
        "versions_seen": {"__input__": {}},
        "updated_channels": sorted(values) or None,
        **extra,
    }


def md(source: str = "loop", step: int = 0, **extra: Any) -> dict:
    return {"source": source, "step": step, "parents": {}, **extra}


def put_chain(saver, n: int, thread: str = "t", ns: str = "", sources=None) -> list[dict]:
    """n checkpoints on (thread, ns), each the child of the previous; returns their configs."""
    configs = []
    parent = cfg(thread, ns)
    for i in range(n):
        source = sources[i] if sources else "loop"
        stored = saver.put(parent, ckpt(i - 1, {"x": i}, {"x": i + 1}), md(source, i - 1), {"x": i + 1})
        configs.append(stored)
        parent = stored
    return configs


def ids(tuples) -> list[str]:
    return [t.checkpoint["id"] for t in tuples]


def run(coro):
    return asyncio.run(coro)


async def collect(agen) -> list:
    return [item async for item in agen]


# --- P-4 / P-12: put, tuple shapes --------------------------------------------------


def test_put_returns_config_of_stored_checkpoint(saver):
    """P-12: put -> {'configurable': {thread_id, checkpoint_ns, checkpoint_id}} naming the new id."""
    c = ckpt(-1, {"__start__": {"x": 1}})
    stored = saver.put(cfg(), c, md("input", -1), {"__start__": 1})
    assert stored == {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": c["id"]}}


def test_checkpoint_tuple_shape(saver):
    """P-4: CheckpointTuple(config, checkpoint, metadata, parent_config=None, pending_writes=None)."""
    assert CheckpointTuple._fields == ("config", "checkpoint", "metadata", "parent_config", "pending_writes")
    assert CheckpointTuple({}, {}, {}) == ({}, {}, {}, None, None)
    c = ckpt(-1, {"__start__": {"x": 1}})
    stored = saver.put(cfg(), c, md("input", -1), {"__start__": 1})
    tup = saver.get_tuple(cfg())
    assert isinstance(tup, CheckpointTuple)
    assert tup.config == stored
    assert tup.parent_config is None
    assert tup.pending_writes == []
    assert tup.metadata == {"source": "input", "step": -1, "parents": {}}
    assert tup.checkpoint == {**{k: v for k, v in c.items() if k != "channel_values"}, "channel_values": {"__start__": {"x": 1}}}


def test_checkpoint_key_order_matches_langgraph(saver):
    """P-1/O-3: a loaded checkpoint lists channel_values last (LangGraph rebuilds it after the rest)."""
    saver.put(cfg(), ckpt(0, {"a": 1}), md(), {"a": 1})
    assert list(saver.get_tuple(cfg()).checkpoint) == [
        "v", "id", "ts", "channel_versions", "versions_seen", "updated_channels", "channel_values",
    ]  # fmt: skip


def test_parent_is_the_config_checkpoint_id(saver):
    """P-12: the parent of a put is `config.configurable.checkpoint_id`; parent_config names it."""
    first, second = put_chain(saver, 2)
    tup = saver.get_tuple(second)
    assert tup.parent_config == {
        "configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": first["configurable"]["checkpoint_id"]}
    }
    assert saver.get_tuple(first).parent_config is None


def test_put_does_not_mutate_its_arguments(saver):
    """P-12: the caller's checkpoint and metadata dicts are left as they were."""
    c = ckpt(0, {"a": 1})
    snapshot = {**c, "channel_values": dict(c["channel_values"])}
    meta = md()
    saver.put(cfg(metadata_key="v"), c, meta, {"a": 1})
    assert c == snapshot and meta == md()


# --- P-10: get_tuple / get ----------------------------------------------------------


def test_get_tuple_latest_and_by_id(saver):
    """P-10: without checkpoint_id -> the latest (max id) of (thread, ns); with it -> that checkpoint."""
    configs = put_chain(saver, 3)
    latest = saver.get_tuple(cfg())
    assert latest.config == configs[-1]
    middle = saver.get_tuple(configs[1])
    assert middle.checkpoint["id"] == configs[1]["configurable"]["checkpoint_id"]
    assert middle.config == configs[1]
    assert middle.checkpoint["channel_values"] == {"x": 1}


def test_get_tuple_missing(saver):
    """P-10: unknown thread, namespace or checkpoint id -> None."""
    put_chain(saver, 1)
    assert saver.get_tuple(cfg("nope")) is None
    assert saver.get_tuple(cfg(ns="child:1")) is None
    assert saver.get_tuple(cfg(checkpoint_id=str(uuid6(clock_seq=0)))) is None
    assert saver.get(cfg("nope")) is None


def test_get_tuple_default_namespace_is_root(saver):
    """P-0/P-10: a config without checkpoint_ns addresses the root namespace ""."""
    stored = put_chain(saver, 1)[0]
    assert saver.get_tuple(cfg(ns=None)).config == stored


def test_get_returns_the_checkpoint_only(saver):
    """P-10: get(config) -> the checkpoint of get_tuple(config)."""
    put_chain(saver, 2)
    assert saver.get(cfg()) == saver.get_tuple(cfg()).checkpoint


def test_namespaces_are_separate(saver):
    """P-0/P-10: checkpoints of different namespaces of one thread do not mix."""
    root = put_chain(saver, 2, ns="")
    child = put_chain(saver, 1, ns="sub:abc")
    assert saver.get_tuple(cfg(ns="")).config == root[-1]
    assert saver.get_tuple(cfg(ns="sub:abc")).config == child[-1]


def test_threads_are_separate(saver):
    """P-0: one thread's checkpoints never show up for another."""
    put_chain(saver, 2, thread="a")
    b = put_chain(saver, 1, thread="b")
    assert saver.get_tuple(cfg("b")).config == b[0]
    assert len(list(saver.list(cfg("a")))) == 2


# --- P-11: list -------------------------------------------------------------------


def test_list_newest_first(saver):
    """P-11/O-3: list(config) yields the thread's checkpoints newest first."""
    configs = put_chain(saver, 4)
    assert ids(saver.list(cfg())) == [c["configurable"]["checkpoint_id"] for c in reversed(configs)]


def test_list_tuples_match_get_tuple(saver):
    """P-11: each listed tuple equals get_tuple of its config (values, metadata, parent, writes)."""
    configs = put_chain(saver, 2)
    saver.put_writes(configs[0], [("x", 5)], "task")
    for tup in saver.list(cfg()):
        assert tup == saver.get_tuple(tup.config)


def test_list_none_lists_every_thread(saver):
    """P-11: config None lists all threads."""
    put_chain(saver, 2, thread="a")
    put_chain(saver, 1, thread="b")
    put_chain(saver, 1, thread="b", ns="sub:1")
    found = sorted((t.config["configurable"]["thread_id"], t.config["configurable"]["checkpoint_ns"]) for t in saver.list(None))
    assert found == [("a", ""), ("a", ""), ("b", ""), ("b", "sub:1")]


def test_list_namespace_restriction(saver):
    """P-11: the config's checkpoint_ns restricts the listing; without the key every namespace is listed."""
    put_chain(saver, 2, ns="")
    put_chain(saver, 1, ns="child:1")
    assert len(list(saver.list(cfg(ns="")))) == 2
    assert len(list(saver.list(cfg(ns="child:1")))) == 1
    assert len(list(saver.list(cfg(ns=None)))) == 3


def test_list_with_checkpoint_id_in_config(saver):
    """P-11: a checkpoint_id in the listing config selects that checkpoint only."""
    configs = put_chain(saver, 3)
    target = configs[1]["configurable"]["checkpoint_id"]
    assert ids(saver.list(cfg(checkpoint_id=target))) == [target]


def test_list_metadata_filter(saver):
    """P-11/O-14: filter = equality on metadata keys; all keys must match."""
    put_chain(saver, 4, sources=["input", "loop", "loop", "update"])
    assert [t.metadata["step"] for t in saver.list(cfg(), filter={"source": "loop"})] == [1, 0]
    assert [t.metadata["step"] for t in saver.list(cfg(), filter={"source": "loop", "step": 1})] == [1]
    assert list(saver.list(cfg(), filter={"source": "fork"})) == []
    assert list(saver.list(cfg(), filter={"source": "loop", "step": 99})) == []


def test_list_filter_on_user_metadata(saver):
    """P-2/P-11: user values merged into metadata are filterable."""
    saver.put(cfg(user_key="u1"), ckpt(0), md(), {})
    saver.put(cfg(user_key="u2"), ckpt(1), md(step=1), {})
    assert [t.metadata["user_key"] for t in saver.list(cfg(), filter={"user_key": "u1"})] == ["u1"]


def test_list_filter_missing_key_equals_none(saver):
    """P-11: LangGraph compares with metadata.get(key), so {key: None} matches checkpoints without the key."""
    put_chain(saver, 2)
    assert len(list(saver.list(cfg(), filter={"absent": None}))) == 2


def test_list_before(saver):
    """P-11/O-14: before = only ids strictly smaller than the given checkpoint's."""
    configs = put_chain(saver, 4)
    got = ids(saver.list(cfg(), before=configs[2]))
    assert got == [configs[1]["configurable"]["checkpoint_id"], configs[0]["configurable"]["checkpoint_id"]]
    assert list(saver.list(cfg(), before=configs[0])) == []


def test_list_limit(saver):
    """P-11/O-14: limit counts yielded items; 0 yields nothing."""
    configs = put_chain(saver, 4)
    assert ids(saver.list(cfg(), limit=2)) == [configs[3]["configurable"]["checkpoint_id"], configs[2]["configurable"]["checkpoint_id"]]
    assert len(list(saver.list(cfg(), limit=10))) == 4
    assert list(saver.list(cfg(), limit=0)) == []


def test_list_limit_counts_after_filter_and_before(saver):
    """P-11: limit applies to the items that pass filter and before."""
    configs = put_chain(saver, 5, sources=["input", "loop", "input", "loop", "input"])
    assert ids(saver.list(cfg(), before=configs[4], limit=1)) == [configs[3]["configurable"]["checkpoint_id"]]
    got = list(saver.list(cfg(), filter={"source": "input"}, limit=2))
    assert [t.metadata["step"] for t in got] == [3, 1]


def test_list_limit_across_threads(saver):
    """P-11: with config None the limit is global, not per thread."""
    put_chain(saver, 2, thread="a")
    put_chain(saver, 2, thread="b")
    assert len(list(saver.list(None, limit=3))) == 3


def test_list_unknown_thread_is_empty(saver):
    """P-11: listing a thread with no checkpoints yields nothing."""
    assert list(saver.list(cfg("ghost"))) == []


# --- P-13: channel values ----------------------------------------------------------


def test_only_new_versions_are_stored(saver):
    """P-13: only channels in new_versions get a stored value; a value not in new_versions is not stored."""
    c = ckpt(0, {"a": 1, "b": 2}, {"a": 1, "b": 1})
    saver.put(cfg(), c, md(), {"a": 1})
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"a": 1}


def test_unchanged_channels_are_read_from_older_versions(saver):
    """P-13: a channel whose version did not change keeps the value stored with that version."""
    first = saver.put(cfg(), ckpt(0, {"a": "A1", "b": "B1"}, {"a": 1, "b": 1}), md(), {"a": 1, "b": 1})
    # step 1 writes only b; the checkpoint still carries a (version 1)
    saver.put(first, ckpt(1, {"a": "ignored", "b": "B2"}, {"a": 1, "b": 2}), md(step=1), {"b": 2})
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"a": "A1", "b": "B2"}
    assert saver.get_tuple(first).checkpoint["channel_values"] == {"a": "A1", "b": "B1"}


def test_new_version_without_value_is_absent(saver):
    """P-1/P-13: a channel in new_versions with no value (cleared ephemeral) is left out of channel_values."""
    first = saver.put(cfg(), ckpt(0, {"branch:to:a": None}, {"branch:to:a": 1}), md(), {"branch:to:a": 1})
    saver.put(first, ckpt(1, {}, {"branch:to:a": 2}), md(step=1), {"branch:to:a": 2})
    tup = saver.get_tuple(cfg())
    assert tup.checkpoint["channel_values"] == {}
    assert tup.checkpoint["channel_versions"] == {"branch:to:a": 2}
    assert saver.get_tuple(first).checkpoint["channel_values"] == {"branch:to:a": None}


def test_none_is_a_stored_value(saver):
    """P-1: None is a value (trigger channels hold None), not an absence."""
    saver.put(cfg(), ckpt(0, {"branch:to:a": None}), md(), {"branch:to:a": 1})
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"branch:to:a": None}


def test_own_versions_from_get_next_version(saver):
    """P-13/L-49: the saver's own versions (strings for InMemorySaver, ints for LmdbSaver) work as blob keys."""
    v1 = saver.get_next_version(None, None)
    v2 = saver.get_next_version(v1, None)
    first = saver.put(cfg(), ckpt(0, {"x": 1}, {"x": v1}), md(), {"x": v1})
    saver.put(first, ckpt(1, {"x": 2}, {"x": v2}), md(step=1), {"x": v2})
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"x": 2}
    assert saver.get_tuple(first).checkpoint["channel_values"] == {"x": 1}


def test_values_go_through_the_serializer(saver):
    """Z-2/O-15: stored values, metadata and writes are serialized: tuples come back as lists."""
    stored = saver.put(cfg(), ckpt(0, {"pair": (1, 2)}), md(extra_tuple=(3,)), {"pair": 1})
    saver.put_writes(stored, [("pair", (4, 5))], "task")
    tup = saver.get_tuple(cfg())
    assert tup.checkpoint["channel_values"] == {"pair": [1, 2]}
    assert tup.metadata["extra_tuple"] == [3]
    assert tup.pending_writes == [("task", "pair", [4, 5])]


def test_rich_values_roundtrip(saver):
    """Z-3: Send packets, Interrupts, sets and exceptions survive a put/get."""
    values = {"__pregel_tasks": [Send("n", {"x": 1})], "join": {"a", "b"}, "ids": uuid.UUID(int=3)}
    stored = saver.put(cfg(), ckpt(0, values), md(), {k: 1 for k in values})
    saver.put_writes(stored, [("__interrupt__", [Interrupt("q", id="i")]), ("__error__", ValueError("x"))], "task")
    tup = saver.get_tuple(cfg())
    assert tup.checkpoint["channel_values"] == values
    assert tup.pending_writes == [("task", "__interrupt__", [Interrupt("q", id="i")]), ("task", "__error__", "ValueError('x')")]


def test_unserializable_value_fails_at_put_and_stores_nothing(saver):
    """DESIGN §4: an unsupported value fails when written (TypeError naming it) and leaves no partial checkpoint."""

    class Opaque:
        pass

    with pytest.raises(TypeError, match=re.escape("Cannot serialize object of type")):
        saver.put(cfg(), ckpt(0, {"ok": 1, "bad": Opaque()}), md(), {"ok": 1, "bad": 1})
    assert saver.get_tuple(cfg()) is None
    stored = saver.put(cfg(), ckpt(0, {"ok": 1}), md(), {"ok": 1})
    with pytest.raises(TypeError, match=re.escape("Cannot serialize object of type")):
        saver.put_writes(stored, [("ok", 2), ("bad", Opaque())], "task")
    assert saver.get_tuple(cfg()).pending_writes == []


def test_custom_serde(saver_factory):
    """P-12: the saver serializes with its `serde`; a registered user type round-trips."""

    @dataclasses.dataclass
    class Reading:
        value: float

    s = saver_factory(MsgpackSerializer(allowed_types=[Reading]))
    s.put(cfg(), ckpt(0, {"r": Reading(1.5)}), md(), {"r": 1})
    assert s.get_tuple(cfg()).checkpoint["channel_values"] == {"r": Reading(1.5)}


# --- P-2: metadata -------------------------------------------------------------------


def test_put_merges_config_into_metadata(saver):
    """P-2/O-14: config metadata then configurable str/int/float/bool values join the metadata."""
    config = {
        "configurable": {"thread_id": "m", "checkpoint_ns": "", "user_key": "u1", "__private": 1, "num": 3, "obj": [1]},
        "metadata": {"tag": "T", "obj": [1]},
    }
    saver.put(config, ckpt(2), md(step=2), {})
    meta = saver.get_tuple(cfg("m")).metadata
    assert meta == {"source": "loop", "step": 2, "parents": {}, "tag": "T", "user_key": "u1", "num": 3}
    assert list(meta) == ["source", "step", "parents", "tag", "user_key", "num"]


# --- P-5: pending writes -------------------------------------------------------------


def test_writes_stored_against_checkpoint(saver):
    """P-5: writes are stored under the checkpoint the step started from and kept after the next checkpoint."""
    first = put_chain(saver, 1)[0]
    saver.put_writes(first, [("x", 2), ("log", ["a"])], "task-a", "~__pregel_pull, a")
    second = saver.put(first, ckpt(1, {"x": 2}), md(step=1), {"x": 2})
    assert saver.get_tuple(first).pending_writes == [("task-a", "x", 2), ("task-a", "log", ["a"])]
    assert saver.get_tuple(second).pending_writes == []


def test_write_order_is_task_path_task_id_idx(saver):
    """P-5: writes are ordered by (task_path, task_id, idx); null-task writes (path "") sort first."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [("b1", 1), ("b2", 2)], "task-b", "~__pregel_pull, b")
    saver.put_writes(stored, [("a1", 1)], "task-z", "~__pregel_pull, a")
    saver.put_writes(stored, [("p", 1)], "task-a", "~__pregel_push, 0")
    saver.put_writes(stored, [("input", 0)], NULL_TASK)
    got = [(w[0], w[1]) for w in saver.get_tuple(stored).pending_writes]
    assert got == [
        (NULL_TASK, "input"),
        ("task-z", "a1"),
        ("task-b", "b1"),
        ("task-b", "b2"),
        ("task-a", "p"),
    ]


def test_same_path_orders_by_task_id(saver):
    """P-5: with equal task paths, task ids decide."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [("c", 2)], "task-2", "")
    saver.put_writes(stored, [("c", 1)], "task-1", "")
    assert [w[0] for w in saver.get_tuple(stored).pending_writes] == ["task-1", "task-2"]


def test_regular_writes_are_idempotent(saver):
    """P-5: re-putting the same (task_id, idx) keeps the first stored value."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [("x", 1), ("y", 2)], "task")
    saver.put_writes(stored, [("x", 10), ("y", 20), ("z", 30)], "task")
    assert saver.get_tuple(stored).pending_writes == [("task", "x", 1), ("task", "y", 2), ("task", "z", 30)]


@pytest.mark.parametrize("channel", ["__error__", "__scheduled__", "__interrupt__", "__resume__"])
def test_special_channels_overwrite(saver, channel):
    """P-5: special channels have a fixed idx and are overwritten per task."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [(channel, "first")], "task")
    saver.put_writes(stored, [("x", 1), (channel, "second")], "task")
    assert saver.get_tuple(stored).pending_writes == [("task", channel, "second"), ("task", "x", 1)]


def test_special_channels_sort_by_fixed_idx(saver):
    """P-5: within a task, __resume__ (-4) < __interrupt__ (-3) < __scheduled__ (-2) < __error__ (-1) < regular."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [("x", 1), ("__error__", "e"), ("__scheduled__", 1), ("__interrupt__", [1]), ("__resume__", "r")], "t")
    assert [w[1] for w in saver.get_tuple(stored).pending_writes] == [
        "__resume__", "__interrupt__", "__scheduled__", "__error__", "x",
    ]  # fmt: skip


def test_writes_of_other_tasks_are_kept(saver):
    """P-5: special-channel overwrite is per task: another task's error stays."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [("__error__", "e1")], "task-1")
    saver.put_writes(stored, [("__error__", "e2")], "task-2")
    assert saver.get_tuple(stored).pending_writes == [("task-1", "__error__", "e1"), ("task-2", "__error__", "e2")]


def test_writes_are_per_namespace_and_checkpoint(saver):
    """P-5: writes belong to one (thread, ns, checkpoint)."""
    root = put_chain(saver, 1, ns="")[0]
    child = put_chain(saver, 1, ns="child:1")[0]
    saver.put_writes(root, [("ch", "root")], "t1")
    saver.put_writes(child, [("ch", "child")], "t2")
    assert saver.get_tuple(root).pending_writes == [("t1", "ch", "root")]
    assert saver.get_tuple(child).pending_writes == [("t2", "ch", "child")]


def test_put_writes_needs_a_checkpoint_id(saver):
    """P-12: put_writes addresses a checkpoint; a config without checkpoint_id is a KeyError (as in LangGraph)."""
    with pytest.raises(KeyError):
        saver.put_writes(cfg(), [("x", 1)], "task")


def test_empty_write_list(saver):
    """P-5: put_writes with no writes stores nothing."""
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [], "task")
    assert saver.get_tuple(stored).pending_writes == []


# --- P-12: delete_thread, copy_thread, prune ----------------------------------------


def test_delete_thread(saver):
    """P-12: delete_thread removes every namespace, checkpoint and write of the thread only."""
    a = put_chain(saver, 2, thread="a")
    put_chain(saver, 1, thread="a", ns="sub:1")
    saver.put_writes(a[0], [("x", 1)], "task")
    b = put_chain(saver, 1, thread="b")
    saver.delete_thread("a")
    assert saver.get_tuple(cfg("a")) is None
    assert list(saver.list(cfg("a", ns=None))) == []
    assert saver.get_tuple(a[0]) is None
    assert saver.get_tuple(cfg("b")).config == b[0]
    saver.delete_thread("never-existed")


def test_delete_then_reuse_thread(saver):
    """P-12: a deleted thread starts empty when written again."""
    put_chain(saver, 2, thread="a")
    saver.delete_thread("a")
    fresh = put_chain(saver, 1, thread="a")
    assert ids(saver.list(cfg("a"))) == [fresh[0]["configurable"]["checkpoint_id"]]
    assert saver.get_tuple(cfg("a")).checkpoint["channel_values"] == {"x": 0}


def test_copy_thread(saver):
    """P-12 (copy_thread): every checkpoint (same ids, order, namespaces), metadata, value and write is copied."""
    src = put_chain(saver, 3, thread="src")
    put_chain(saver, 1, thread="src", ns="child:1")
    saver.put_writes(src[-1], [("ch", "val")], "task")
    saver.copy_thread("src", "dst")
    for ns in ("", "child:1"):
        source = list(saver.list(cfg("src", ns)))
        target = list(saver.list(cfg("dst", ns)))
        assert ids(source) == ids(target)
        for s, t in zip(source, target):
            assert (s.checkpoint, s.metadata, s.pending_writes) == (t.checkpoint, t.metadata, t.pending_writes)
            assert t.config["configurable"]["thread_id"] == "dst"
            if t.parent_config:
                assert t.parent_config["configurable"]["thread_id"] == "dst"
    assert saver.get_tuple(cfg("dst")).pending_writes == [("task", "ch", "val")]


def test_copy_thread_leaves_the_source_and_is_independent(saver):
    """P-12 (copy_thread): the source is unchanged; later writes to one thread do not reach the other."""
    src = put_chain(saver, 2, thread="src")
    before = list(saver.list(cfg("src")))
    saver.copy_thread("src", "dst")
    assert list(saver.list(cfg("src"))) == before
    saver.put_writes(cfg("dst", checkpoint_id=src[-1]["configurable"]["checkpoint_id"]), [("x", 1)], "task")
    saver.delete_thread("src")
    assert saver.get_tuple(cfg("dst")).pending_writes == [("task", "x", 1)]
    assert len(list(saver.list(cfg("dst")))) == 2


def test_copy_thread_missing_source(saver):
    """P-12 (copy_thread): a missing source thread copies nothing and does not raise."""
    saver.copy_thread("ghost", "dst")
    assert list(saver.list(cfg("dst"))) == []


def test_prune_keep_latest(saver):
    """P-12 (prune): keep_latest keeps the newest checkpoint of each namespace, with its writes and values."""
    configs = put_chain(saver, 4)
    child = put_chain(saver, 2, ns="child:1")
    saver.put_writes(configs[-1], [("ch", "val")], "task")
    saver.put_writes(configs[0], [("old", 1)], "task")
    saver.prune(["t"], strategy="keep_latest")
    assert ids(saver.list(cfg())) == [configs[-1]["configurable"]["checkpoint_id"]]
    assert ids(saver.list(cfg(ns="child:1"))) == [child[-1]["configurable"]["checkpoint_id"]]
    tup = saver.get_tuple(cfg())
    assert tup.pending_writes == [("task", "ch", "val")]
    assert tup.checkpoint["channel_values"] == {"x": 3}
    assert saver.get_tuple(configs[0]) is None


def test_prune_keeps_values_of_unchanged_channels(saver):
    """P-12/P-13 (prune): the kept checkpoint still finds values stored with older versions."""
    first = saver.put(cfg(), ckpt(0, {"a": "A", "b": 1}, {"a": 1, "b": 1}), md(), {"a": 1, "b": 1})
    saver.put(first, ckpt(1, {"b": 2}, {"a": 1, "b": 2}), md(step=1), {"b": 2})
    saver.prune(["t"])
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"a": "A", "b": 2}


def test_prune_delete_and_other_threads(saver):
    """P-12 (prune): delete removes the listed threads; unlisted threads are untouched; unknown ids are ignored."""
    put_chain(saver, 3, thread="a")
    b = put_chain(saver, 2, thread="b")
    saver.prune(["a", "ghost"], strategy="delete")
    assert list(saver.list(cfg("a"))) == []
    assert ids(saver.list(cfg("b"))) == [c["configurable"]["checkpoint_id"] for c in reversed(b)]
    saver.prune([])


def test_prune_unknown_strategy(saver):
    """P-12 (prune): an unknown strategy is a ValueError naming the accepted ones."""
    with pytest.raises(ValueError, match=re.escape("'strategy' must be one of ('keep_latest', 'delete') (got 'all')")):
        saver.prune(["t"], strategy="all")


# --- L-49: versions ---------------------------------------------------------------


def test_get_next_version_format():
    """L-49/O-3: InMemorySaver's versions are f"{n:032}.{random.random():016}" and their int part counts up.

    (LmdbSaver's compact int versions: test_lmdb_saver.py::test_get_next_version_is_a_compact_int.)
    """
    saver = InMemorySaver()
    v1 = saver.get_next_version(None, None)
    assert re.fullmatch(r"0{31}1\.[0-9.e-]{16,}", v1), v1
    v2 = saver.get_next_version(v1, None)
    assert v2.startswith("00000000000000000000000000000002.") and v2 > v1
    assert saver.get_next_version(5, None).startswith("00000000000000000000000000000006.")
    assert saver.get_next_version("00000000000000000000000000000041.0.123", None).startswith(
        "00000000000000000000000000000042."
    )


def test_versions_sort_as_strings(saver):
    """L-49: a saver's successive versions sort in order (strings: zero padding makes string order numeric)."""
    versions = [saver.get_next_version(None, None)]
    for _ in range(11):
        versions.append(saver.get_next_version(versions[-1], None))
    assert sorted(versions) == versions


@pytest.mark.parametrize(
    "current", [None, 1, 5, 2.0, 7.5, (1 << 40) + 3, "00000000000000000000000000000041.0.123", "00000000000000000000000000000009.0.5"]
)
def test_get_next_version_increases_and_forks_differ(saver, current):
    """L-49: "any monotonically increasing comparable values": each version is greater than the
    one it follows (whatever that one's type and origin), and two successors of one version
    differ, so a fork never reuses a version of the branch it left."""
    successors = {saver.get_next_version(current, None) for _ in range(20)}
    assert len(successors) == 20
    chain = [saver.get_next_version(current, None)]
    for _ in range(5):
        chain.append(saver.get_next_version(chain[-1], None))
    assert chain == sorted(chain) and len(set(chain)) == len(chain)
    for version in (*successors, chain[0]):
        if current is not None and isinstance(version, str) == isinstance(current, str):
            assert version > current, (current, version)  # type: ignore[operator]


def test_a_fork_leaves_the_abandoned_branch_readable(saver):
    """P-13/P-40/L-49: after time travel to an old checkpoint and new steps from there, the
    new branch's versions differ from those the abandoned branch got at the same count, so
    no stored value of the abandoned branch is overwritten: each of its checkpoints reads
    back exactly as before the fork."""
    from typing import TypedDict

    from lgembed.graph import END, START, StateGraph

    class State(TypedDict):
        n: int
        trail: str

    def node(name: str):
        return lambda s: {"n": s["n"] + 1, "trail": s["trail"] + name}

    builder = StateGraph(State)
    previous = START
    for name in "abcd":
        builder.add_node(name, node(name))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "fork"}}
    assert graph.invoke({"n": 0, "trail": ""}, config) == {"n": 4, "trail": "abcd"}
    abandoned = list(saver.list(config))
    assert [t.metadata["step"] for t in abandoned] == [4, 3, 2, 1, 0, -1]
    after_a = abandoned[3]
    assert after_a.checkpoint["channel_values"]["trail"] == "a"
    forked = graph.update_state(after_a.config, {"n": 100, "trail": "X"})
    assert graph.invoke(None, forked) == {"n": 103, "trail": "Xbcd"}
    for old in abandoned:
        again = saver.get_tuple(old.config)
        assert again.checkpoint == old.checkpoint, old.metadata["step"]
        assert (again.metadata, again.parent_config, again.pending_writes) == (
            old.metadata,
            old.parent_config,
            old.pending_writes,
        )
    assert saver.get_tuple(abandoned[0].config).checkpoint["channel_values"] == {"n": 4, "trail": "abcd"}
    assert graph.get_state(config).values == {"n": 103, "trail": "Xbcd"}


# --- async twins -------------------------------------------------------------------


def test_async_twins(saver):
    """P-0/P-12: aput, aput_writes, aget_tuple, aget, alist, adelete_thread behave like the sync methods."""

    async def scenario():
        c = ckpt(0, {"a": 1})
        stored = await saver.aput(cfg(), c, md(), {"a": 1})
        await saver.aput_writes(stored, [("a", 2)], "task", "path")
        tup = await saver.aget_tuple(cfg())
        listed = await collect(saver.alist(cfg(), limit=5))
        got = await saver.aget(cfg())
        await saver.acopy_thread("t", "u")
        copied = await collect(saver.alist(cfg("u")))
        await saver.aprune(["u"], strategy="delete")
        pruned = await collect(saver.alist(cfg("u")))
        await saver.adelete_thread("t")
        return stored, tup, listed, got, copied, pruned, await saver.aget_tuple(cfg())

    stored, tup, listed, got, copied, pruned, after = run(scenario())
    assert tup.config == stored and tup.pending_writes == [("task", "a", 2)]
    assert listed == [tup] and got == tup.checkpoint
    assert len(copied) == 1 and pruned == [] and after is None


# --- thread safety -----------------------------------------------------------------


def test_concurrent_writers(saver):
    """InMemorySaver/LmdbSaver: puts and put_writes from many threads lose nothing."""
    stored = put_chain(saver, 1)[0]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(20):
                saver.put_writes(stored, [(f"ch{j}", i)], f"task-{i:02d}-{j:02d}")
                saver.put(cfg(f"thread-{i}"), ckpt(j), md(step=j), {})
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(saver.get_tuple(stored).pending_writes) == 8 * 20
    assert all(len(list(saver.list(cfg(f"thread-{i}")))) == 20 for i in range(8))


def test_list_does_not_block_writers(saver):
    """A paused list() iterator holds no lock: the same and other threads can write meanwhile."""
    put_chain(saver, 3)
    it = saver.list(cfg())
    first = next(it)
    saver.put(cfg("other"), ckpt(0), md(), {})  # same thread
    done = threading.Event()
    threading.Thread(target=lambda: (saver.put(cfg("third"), ckpt(0), md(), {}), done.set())).start()
    assert done.wait(5)
    assert len([first, *it]) == 3


def test_list_skips_checkpoints_deleted_meanwhile(saver):
    """P-11: a checkpoint deleted while a listing is paused is skipped, not an error."""
    put_chain(saver, 3)
    it = saver.list(cfg())
    next(it)
    saver.delete_thread("t")
    assert list(it) == []


# --- base class defaults ---------------------------------------------------------


class _Minimal(BaseCheckpointSaver):
    """A saver with only the four required methods, over a dict, for base-class tests."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[str, CheckpointTuple] = {}

    def get_tuple(self, config):
        cid = get_checkpoint_id(config) or max(self.saved, default=None)
        return self.saved.get(cid) if cid else None

    def list(self, config, *, filter=None, before=None, limit=None):
        yield from sorted(self.saved.values(), key=lambda t: t.checkpoint["id"], reverse=True)

    def put(self, config, checkpoint, metadata, new_versions):
        parent = config["configurable"].get("checkpoint_id")
        own = cfg(config["configurable"]["thread_id"], checkpoint_id=checkpoint["id"])
        parent_cfg = cfg(config["configurable"]["thread_id"], checkpoint_id=parent) if parent else None
        self.saved[checkpoint["id"]] = CheckpointTuple(own, checkpoint, metadata, parent_cfg, [])
        return own

    def put_writes(self, config, writes, task_id, task_path=""):
        tup = self.saved[config["configurable"]["checkpoint_id"]]
        tup.pending_writes.extend((task_id, c, v) for c, v in writes)


def test_base_required_methods_raise():
    """P-12: the base class leaves get_tuple/list/put/put_writes/delete/copy/prune to subclasses."""
    s = BaseCheckpointSaver()
    for call in (
        lambda: s.get_tuple(cfg()),
        lambda: list(s.list(cfg())),
        lambda: s.put(cfg(), ckpt(), md(), {}),
        lambda: s.put_writes(cfg(), [], "t"),
        lambda: s.delete_thread("t"),
        lambda: s.delete_for_runs(["r"]),
        lambda: s.copy_thread("a", "b"),
        lambda: s.prune(["t"]),
        lambda: run(s.aget_tuple(cfg())),
    ):
        with pytest.raises(NotImplementedError):
            call()
    assert s.config_specs == []
    assert isinstance(s.serde, MsgpackSerializer)


def test_base_get_next_version():
    """P-12: the base saver's versions are ints: None -> 1, n -> n + 1; str versions are not its business."""
    s = BaseCheckpointSaver()
    assert s.get_next_version(None, None) == 1
    assert s.get_next_version(1, None) == 2
    assert s.get_next_version(2.0, None) == 3.0
    with pytest.raises(NotImplementedError):
        s.get_next_version("1", None)


def test_base_async_twins_run_the_sync_methods():
    """lgembed: the base a* methods call the sync ones (no asyncio needed by a saver)."""
    s = _Minimal()

    async def scenario():
        stored = await s.aput(cfg(), ckpt(0, {"a": 1}), md(), {"a": 1})
        await s.aput_writes(stored, [("a", 2)], "task")
        return stored, await s.aget(cfg()), await s.aget_tuple(stored), await collect(s.alist(None))

    stored, got, tup, listed = run(scenario())
    assert got["channel_values"] == {"a": 1}
    assert tup.pending_writes == [("task", "a", 2)]
    assert listed == [tup]


def test_get_delta_channel_history_default():
    """P-12 (get_delta_channel_history): writes along the parent chain, oldest first, until a stored value (seed)."""
    s = _Minimal()
    c0 = s.put(cfg(), ckpt(0, {"log": ["seed"]}), md(), {})
    s.put_writes(c0, [("log", ["w0"]), ("other", 1)], "t0")
    c1 = s.put(c0, ckpt(1, {}), md(step=1), {})
    s.put_writes(c1, [("log", ["w1"])], "t1")
    c2 = s.put(c1, ckpt(2, {}), md(step=2), {})
    s.put_writes(c2, [("log", ["pending"])], "t2")
    history = s.get_delta_channel_history(config=c2, channels=["log", "missing"])
    assert history == {
        "log": {"writes": [("t0", "log", ["w0"]), ("t1", "log", ["w1"])], "seed": ["seed"]},
        "missing": {"writes": []},
    }
    assert s.get_delta_channel_history(config=c2, channels=[]) == {}
    assert run(s.aget_delta_channel_history(config=c2, channels=["log"]))["log"]["seed"] == ["seed"]


def test_serde_argument_and_untyped_serde():
    """P-12: `serde=` replaces the serializer; a dumps/loads-only serializer is wrapped."""

    class Untyped:
        def dumps(self, obj):
            return repr(obj).encode()

        def loads(self, data):
            return data

    s = InMemorySaver(serde=Untyped())
    assert s.serde.dumps_typed(1) == ("int", b"1")
    custom = MsgpackSerializer()
    assert InMemorySaver(serde=custom).serde is custom


def test_with_allowlist_shares_storage():
    """P-12 (with_allowlist): a clone whose serializer allows more types, over the same storage."""

    @dataclasses.dataclass
    class Reading:
        value: int

    s = InMemorySaver()
    clone = s.with_allowlist([Reading])
    assert clone is not s and clone.serde.allowed_types == (Reading,)
    clone.put(cfg(), ckpt(0, {"r": Reading(1)}), md(), {"r": 1})
    assert clone.get_tuple(cfg()).checkpoint["channel_values"] == {"r": Reading(1)}
    assert clone.storage is s.storage  # same storage; `s` itself cannot load a Reading
    assert clone.with_allowlist([Reading]) is clone


# --- InMemorySaver specifics ------------------------------------------------------


def test_memory_blob_layout():
    """P-13: InMemorySaver keeps one blob per (thread, ns, channel, version); "empty" marks a version without value."""
    s = InMemorySaver()
    s.put(cfg(), ckpt(0, {"a": (1, 2)}, {"a": 1, "b": 1, "c": 1}), md(), {"a": 1, "c": 1})
    assert s.blobs == {("t", "", "a", 1): ("msgpack", b"\x92\x01\x02"), ("t", "", "c", 1): ("empty", b"")}


def test_memory_get_tuple_returns_the_given_config():
    """P-10: with a checkpoint_id, InMemorySaver returns the caller's config object (LangGraph does)."""
    s = InMemorySaver()
    stored = put_chain(s, 1)[0]
    assert s.get_tuple(stored).config is stored


def test_memory_saver_alias_and_context_manager():
    """P-12: MemorySaver is InMemorySaver; both context-manager forms return the saver."""
    assert MemorySaver is InMemorySaver
    with InMemorySaver() as s:
        assert isinstance(s, InMemorySaver)

    async def enter():
        async with InMemorySaver() as s2:
            return s2

    assert isinstance(run(enter()), InMemorySaver)


# --- helpers of lgembed.checkpoint.base ------------------------------------------


def test_writes_idx_map_and_sort_key():
    """P-5: special channels' fixed indices; the sort key is (task_path, task_id, idx)."""
    assert WRITES_IDX_MAP == {"__error__": -1, "__scheduled__": -2, "__interrupt__": -3, "__resume__": -4}
    assert writes_sort_key("p", "t", 3) == ("p", "t", 3)
    assert writes_sort_key("p") == ("p", "", 0)


def test_excluded_metadata_keys():
    """P-2: thread_id, checkpoint_id, checkpoint_ns, checkpoint_map and the langgraph_* keys are excluded."""
    assert EXCLUDED_METADATA_KEYS == {
        "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
        "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns",
    }  # fmt: skip


def test_get_checkpoint_metadata_rules():
    """P-2: scalar config values join; `__` keys, excluded keys, non-scalars and existing keys do not; NUL is stripped."""
    config = {
        "metadata": {"tag": "a\x00b", "obj": {"x": 1}, "source": "override?"},
        "configurable": {
            "thread_id": "t",
            "checkpoint_ns": "",
            "langgraph_node": "n",
            "__pregel_x": 1,
            "flag": True,
            "ratio": 0.5,
            "n": 2,
            "none": None,
            "lst": [1],
            "tag": "config-loses",
        },
    }
    meta = get_checkpoint_metadata(config, {"source": "loop", "step": 1, "parents": {}, "note": "x\x00y"})
    assert meta == {"source": "loop", "step": 1, "parents": {}, "note": "xy", "tag": "ab", "flag": True, "ratio": 0.5, "n": 2}
    assert get_checkpoint_metadata({}, {"step": 0}) == {"step": 0}
    assert get_serializable_checkpoint_metadata({}, {"step": 0, "writes": {"a": 1}}) == {"step": 0}


def test_get_checkpoint_id():
    """P-0: the checkpoint_id of a config, or None."""
    assert get_checkpoint_id(cfg(checkpoint_id="x")) == "x"
    assert get_checkpoint_id(cfg()) is None


def test_empty_checkpoint():
    """P-1: langgraph.checkpoint.base's helper: v2 with empty pending_sends and no
    updated_channels, no channels, id with clock sequence -2 (`bffe`), UTC timestamp
    (the engine's own checkpoints are v4)."""
    c = empty_checkpoint()
    assert c["v"] == LATEST_VERSION == 2
    assert sorted(c) == [
        "channel_values", "channel_versions", "id", "pending_sends", "ts", "updated_channels", "v", "versions_seen"
    ]
    assert (c["channel_values"], c["channel_versions"], c["versions_seen"], c["pending_sends"]) == ({}, {}, {}, [])
    assert c["updated_channels"] is None
    assert c["id"][19:23] == "bffe" and uuid.UUID(c["id"]).version == 6
    assert c["ts"].endswith("+00:00")


class _Chan:
    def __init__(self, value: Any) -> None:
        self.value = value

    def checkpoint(self) -> Any:
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


def test_create_checkpoint():
    """P-1: values of versioned channels except empty ones; id clock sequence = step; updated_channels sorted."""
    from lgembed._typing import MISSING

    prev = {**empty_checkpoint(), "channel_versions": {"a": 1, "b": 1, "c": 1, "d": 1}, "versions_seen": {"n": {"a": 1}}}
    channels = {"a": _Chan((1, 2)), "b": _Chan(MISSING), "c": _Chan(EmptyChannelError()), "d": _Chan(None), "x": _Chan(5)}
    new = create_checkpoint(prev, channels, 3, updated_channels={"d", "a"})
    assert new["channel_values"] == {"a": (1, 2), "d": None}
    assert new["channel_versions"] == prev["channel_versions"] and new["channel_versions"] is not prev["channel_versions"]
    assert new["versions_seen"] is prev["versions_seen"]
    assert new["updated_channels"] == ["a", "d"]
    assert new["id"][19:23] == "8003" and new["v"] == 2
    assert create_checkpoint(prev, None, 0, id="fixed")["id"] == "fixed"
    assert create_checkpoint(prev, None, 0)["updated_channels"] is None


def test_create_checkpoint_with_real_channels():
    """P-1: a never-written LastValue (MISSING) is left out, a written one is in."""
    from lgembed.channels.last_value import LastValue

    empty, full = LastValue(int), LastValue(int).from_checkpoint(7)
    prev = {**empty_checkpoint(), "channel_versions": {"e": 1, "f": 1}}
    assert create_checkpoint(prev, {"e": empty, "f": full}, 0)["channel_values"] == {"f": 7}


def test_copy_checkpoint_is_independent():
    """P-1: copy_checkpoint copies the value/version maps (and each versions_seen entry)."""
    c = {**empty_checkpoint(), "channel_values": {"a": 1}, "channel_versions": {"a": 1}, "versions_seen": {"n": {"a": 1}}}
    d = copy_checkpoint(c)
    d["channel_values"]["a"] = 2
    d["channel_versions"]["a"] = 2
    d["versions_seen"]["n"]["a"] = 2
    assert c["channel_values"] == {"a": 1} and c["channel_versions"] == {"a": 1} and c["versions_seen"] == {"n": {"a": 1}}
    assert d["updated_channels"] is None


def test_empty_channel_error_is_lgembeds():
    """C-11: the checkpoint module re-exports lgembed.errors.EmptyChannelError."""
    assert EmptyChannelError is ErrorsEmptyChannelError
    assert base_mod.EmptyChannelError is ErrorsEmptyChannelError


# --- P-1: uuid6 ids -----------------------------------------------------------------


@pytest.mark.parametrize(("step", "field"), [(-1, "bfff"), (0, "8000"), (1, "8001"), (-2, "bffe"), (16383, "bfff"), (16384, "8000")])
def test_uuid6_clock_sequence_encodes_the_step(step, field):
    """P-1/O-3: step -1 -> `...-bfff-...`, 0 -> `8000`, 1 -> `8001` (step modulo 2**14 behind variant bits 10)."""
    value = uuid6(clock_seq=step)
    assert str(value)[19:23] == field
    assert value.version == 6 and value.variant == uuid.RFC_4122


def test_uuid6_ids_sort_chronologically():
    """P-1: ids made one after another sort in creation order, as strings, even within one clock tick."""
    made = [str(uuid6(clock_seq=s)) for s in [5, -1, 0, 3, 2] * 200]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_uuid6_layout():
    """P-1: time in the leading bits (UUIDv6), node in the last 48 bits."""
    import time

    before = time.time_ns() // 100 + 0x01B21DD213814000
    value = uuid6(node=0x123456789ABC, clock_seq=5)
    after = time.time_ns() // 100 + 0x01B21DD213814000
    timestamp = ((value.int >> 80) << 12) | ((value.int >> 64) & 0xFFF)
    assert before <= timestamp <= after + 1000
    assert str(value).endswith("-8005-123456789abc")


def test_uuid6_is_thread_safe():
    """P-1: concurrent callers never get equal ids."""
    out: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        made = [str(uuid6()) for _ in range(500)]
        with lock:
            out.extend(made)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == len(out) == 4000


@pytest.mark.parametrize("step", [-2, -1, 0, 1, 16383, 16384])
def test_uuid6_str_is_str_of_uuid6(step, monkeypatch):
    """P-1: the engine's fast `uuid6_str` gives `str(uuid6(...))` for the same clock and
    random bits (same timestamp fields, step in the clock sequence, random node)."""
    import random

    from lgembed.checkpoint import _id

    monkeypatch.setattr(_id.time, "time_ns", lambda: 1_764_470_000_123_456_700)
    monkeypatch.setattr(_id, "_LAST_TIMESTAMP", [0])
    random.seed(step)
    fast = _id.uuid6_str(step)
    random.seed(step)
    node = random.getrandbits(48)
    monkeypatch.setattr(_id, "_LAST_TIMESTAMP", [0])
    assert fast == str(uuid6(node=node, clock_seq=step))


@pytest.mark.parametrize("ns", [0, 1_764_470_000_000_000_000, 1_764_470_000_123_456_789, 1_764_470_001_000_000_999, 4_102_444_800_000_001_000])
def test_now_iso_is_datetime_isoformat(ns, monkeypatch):
    """P-1: checkpoint `ts` is `datetime.now(timezone.utc).isoformat()`: microseconds
    truncated, no fraction when they are 0."""
    from datetime import datetime, timedelta, timezone

    from lgembed.checkpoint import _id

    monkeypatch.setattr(_id.time, "time_ns", lambda: ns)
    want = (datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=ns // 1000)).isoformat()
    assert _id.now_iso() == want
    assert _id.now_iso() == want  # from the cached second too


def test_now_iso_follows_the_clock():
    """P-1: consecutive timestamps never go back and match datetime's to the microsecond."""
    from datetime import datetime, timezone

    from lgembed.checkpoint._id import now_iso

    for _ in range(1000):
        before = datetime.now(timezone.utc)
        got = datetime.fromisoformat(now_iso())
        after = datetime.now(timezone.utc)
        assert before <= got <= after


# --- import cost -------------------------------------------------------------------


@pytest.mark.parametrize("module", ["lgembed.checkpoint", "lgembed.checkpoint.base", "lgembed.checkpoint.memory"])
def test_import_is_light(module):
    """DESIGN §1/STYLE §H: importing the saver modules loads no msgpack, lmdb or asyncio, and no langgraph/pydantic."""
    code = (
        "import sys\n"
        f"import {module}\n"
        "bad = [m for m in ('msgpack', 'lmdb', 'asyncio', 'pydantic', 'langchain_core', 'langgraph') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_public_names():
    """STYLE §D: every public module has a tuple `__all__`."""
    from lgembed.checkpoint import memory, serde

    for module in (base_mod, memory, serde):
        assert isinstance(module.__all__, tuple)
        for name in module.__all__:
            assert hasattr(module, name), (module.__name__, name)


def test_put_step_equals_put_writes_then_put(saver):
    """P-5, P-12 (lgembed's put_step): a step's task writes stored against the parent
    checkpoint and the new checkpoint, as the separate calls would store them."""
    first = ckpt(0, {"x": 1})
    parent_cfg = saver.put(cfg(), first, {"source": "loop", "step": 0, "parents": {}}, {"x": 1})
    second = ckpt(1, {"x": 2}, {"x": 2})
    new_cfg = saver.put_step(
        parent_cfg,
        second,
        {"source": "loop", "step": 1, "parents": {}},
        {"x": 2},
        [("task-1", [("x", 2), ("branch:to:b", None)], "~__pregel_pull, a")],
    )
    assert new_cfg["configurable"]["checkpoint_id"] == second["id"]
    parent = saver.get_tuple(parent_cfg)
    assert parent.pending_writes == [("task-1", "x", 2), ("task-1", "branch:to:b", None)]
    latest = saver.get_tuple(cfg())
    assert latest.checkpoint["id"] == second["id"]
    assert latest.checkpoint["channel_values"] == {"x": 2}
    assert latest.parent_config["configurable"]["checkpoint_id"] == first["id"]
