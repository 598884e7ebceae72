"""InMemorySaver's compact layout: same observable behaviour as LangGraph's dict layout.

Statements: P-5, P-10 .. P-13, L-49, and the memory acceptance item (retained memory
per thread). `InMemorySaver` stores one bytes record per checkpoint, version strings
as integer codes, names as indices into a table, and "empty" values inside the
checkpoint record (see lgembed/checkpoint/memory.py). These tests check that none of
that is observable: a reference saver with LangGraph's layout (`RefSaver`, a dict of
serialized `(tag, bytes)` pairs per key part, as langgraph.checkpoint.memory keeps
them) gets the same calls and must return the same tuples, and the compact pieces
(version codes, empty blobs, crafted records) are checked on their own.
"""

from __future__ import annotations

import datetime
import random
import sys
import threading
import uuid
from typing import Any

import msgpack
import pytest

from lgembed.checkpoint import _memory_codec, _memory_store, memory
from lgembed.checkpoint._id import uuid6
from lgembed.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from lgembed.checkpoint.memory import InMemorySaver
from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer

# --- a reference saver with LangGraph's layout --------------------------------------------


class RefSaver(BaseCheckpointSaver):
    """LangGraph's InMemorySaver layout and rules (langgraph.checkpoint.memory), minus async."""

    def __init__(self, serde: Any = None) -> None:
        super().__init__(serde=serde)
        self.storage: dict = {}
        self.writes: dict = {}
        self.blobs: dict = {}

    def _tuple(self, config, thread_id, ns, checkpoint_id, saved) -> CheckpointTuple:
        checkpoint_b, metadata_b, parent = saved
        checkpoint = self.serde.loads_typed(checkpoint_b)
        values = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = self.blobs.get((thread_id, ns, channel, version))
            if blob is not None and blob[0] != "empty":
                values[channel] = self.serde.loads_typed(blob)
        stored = self.writes.get((thread_id, ns, checkpoint_id), {})
        ordered = sorted(stored.items(), key=lambda item: writes_sort_key(item[1][3], *item[0]))
        return CheckpointTuple(
            config,
            {**checkpoint, "channel_values": values},
            self.serde.loads_typed(metadata_b),
            cfg(thread_id, ns, parent) if parent else None,
            [(task_id, channel, self.serde.loads_typed(v)) for _, (task_id, channel, v, _) in ordered],
        )

    def get_tuple(self, config):
        thread_id = config["configurable"]["thread_id"]
        ns = config["configurable"].get("checkpoint_ns", "")
        checkpoints = self.storage.get(thread_id, {}).get(ns, {})
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            saved = checkpoints.get(checkpoint_id)
            return None if saved is None else self._tuple(config, thread_id, ns, checkpoint_id, saved)
        if not checkpoints:
            return None
        checkpoint_id = max(checkpoints)
        own = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        return self._tuple(own, thread_id, ns, checkpoint_id, checkpoints[checkpoint_id])

    def list(self, config, *, filter=None, before=None, limit=None):
        threads = [config["configurable"]["thread_id"]] if config else list(self.storage)
        ns_filter = config["configurable"].get("checkpoint_ns") if config else None
        before_id = get_checkpoint_id(before) if before else None
        out = []
        for thread_id in threads:
            for ns, checkpoints in self.storage.get(thread_id, {}).items():
                if ns_filter is not None and ns != ns_filter:
                    continue
                for checkpoint_id in sorted(checkpoints, reverse=True):
                    if before_id and checkpoint_id >= before_id:
                        continue
                    saved = checkpoints[checkpoint_id]
                    item = self._tuple(cfg(thread_id, ns, checkpoint_id), thread_id, ns, checkpoint_id, saved)
                    if filter and not all(item.metadata.get(k) == v for k, v in filter.items()):
                        continue
                    out.append(item)
        return iter(out[:limit] if limit is not None else out)

    def put(self, config, checkpoint, metadata, new_versions):
        thread_id = config["configurable"]["thread_id"]
        ns = config["configurable"].get("checkpoint_ns", "")
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        values = checkpoint["channel_values"]
        for channel, version in new_versions.items():
            typed = self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
            self.blobs[(thread_id, ns, channel, version)] = typed
        saved = (
            self.serde.dumps_typed(rest),
            self.serde.dumps_typed(get_checkpoint_metadata(config, metadata)),
            config["configurable"].get("checkpoint_id"),
        )
        self.storage.setdefault(thread_id, {}).setdefault(ns, {})[checkpoint["id"]] = saved
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def put_writes(self, config, writes, task_id, task_path=""):
        c = config["configurable"]
        outer = (c["thread_id"], c.get("checkpoint_ns", ""), c["checkpoint_id"])
        stored = self.writes.get(outer)
        for idx, (channel, value) in enumerate(writes):
            inner = (task_id, WRITES_IDX_MAP.get(channel, idx))
            if inner[1] >= 0 and stored and inner in stored:
                continue
            self.writes.setdefault(outer, {})[inner] = (task_id, channel, self.serde.dumps_typed(value), task_path)
            stored = self.writes[outer]


# --- helpers -------------------------------------------------------------------------


def cfg(thread: str = "t", ns: str = "", checkpoint_id: str | None = None) -> dict:
    configurable = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def ckpt(step: int, values: dict, versions: dict, seen: dict | None = None) -> dict:
    return {
        "v": 4,
        "id": str(uuid6(clock_seq=step)),
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": seen if seen is not None else {"__input__": {}},
        "updated_channels": sorted(values, key=str) or None,
    }


def md(step: int = 0, **extra: Any) -> dict:
    return {"source": "loop", "step": step, "parents": {}, **extra}


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (a str version must stay a str)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def assert_same_tuples(mine: Any, ref: Any) -> None:
    if ref is None:
        assert mine is None
        return
    assert mine is not None
    for field in CheckpointTuple._fields:
        assert same(getattr(mine, field), getattr(ref, field)), (field, getattr(mine, field), getattr(ref, field))


def both(serde: Any = None) -> tuple[InMemorySaver, RefSaver]:
    return InMemorySaver(serde=serde), RefSaver(serde=serde)


def assert_same_state(saver: InMemorySaver, ref: RefSaver) -> None:
    """Every tuple, every listing, and the three views agree with the reference."""
    for thread_id, namespaces in ref.storage.items():
        for ns, checkpoints in namespaces.items():
            assert_same_tuples(saver.get_tuple(cfg(thread_id, ns)), ref.get_tuple(cfg(thread_id, ns)))
            for checkpoint_id in checkpoints:
                config = cfg(thread_id, ns, checkpoint_id)
                assert_same_tuples(saver.get_tuple(config), ref.get_tuple(config))
    mine, theirs = list(saver.list(None)), list(ref.list(None))
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert_same_tuples(a, b)
    assert saver.blobs.copy() == ref.blobs
    assert saver.writes.copy() == ref.writes
    assert {t: {ns: list(c) for ns, c in v.items()} for t, v in saver.storage.copy().items()} == {
        t: {ns: list(c) for ns, c in v.items()} for t, v in ref.storage.items()
    }


class WrappedSerde:
    """A serializer that is not a MsgpackSerializer (the saver's generic layout), same wire format."""

    def __init__(self) -> None:
        self.inner = MsgpackSerializer()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)


SERDES = [pytest.param(None, id="msgpack"), pytest.param(WrappedSerde, id="other-serde")]

LG = InMemorySaver().get_next_version
VERSIONS = [
    LG(None, None),
    LG("00000000000000000000000000000041.0.123", None),
    LG(2046, None),  # the largest integer part whose code is a 64-bit int
    LG(2047, None),  # ... and the first one stored as bytes
    LG(10**30, None),
    "00000000000000000000000000000003." + format(0.0, "016"),  # fraction 0.0
    "00000000000000000000000000000003." + format(0.5, "016"),
    "00000000000000000000000000000003." + format(2.0**-53, "016"),  # smallest fraction: '1.1102230246251565e-16'
    "00000000000000000000000000000003.0.564456532751561",  # docs/BEHAVIOUR.md L-49's example
    # not codes:
    "00000000000000000000000000000001.-000000000000000",  # -0.0: formats back differently
    "00000000000000000000000000000003.0.10000000000000001",  # LangGraph-shaped, float repr differs
    "00000000000000000000000000000003.0.1000000000000000",  # trailing zero: float repr differs
    "00000000000000000000000000000003.0.3333333333333333",  # not a multiple of 2**-53
    "0000000000000000000000000000003.0.56445653275156100",  # 31 digits
    "\uff10" * 32 + ".0.5644565327515610",  # full-width digits
    "",
    "abc",
    "00000000000000000000000000000009.0.5",
    1,
    7,
    2.5,
    2.0,
    -3,
]


# --- version codes -------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS, ids=[repr(v)[:40] for v in VERSIONS])
def test_versions_round_trip_exactly(version):
    """L-49: whatever a version is, it loads back equal and of the same type, in both maps, with its value."""
    saver = InMemorySaver()
    versions = {"a": version, "b": version}
    seen = {"node": {"a": version}, "other": {"b": version, "a": version}}
    stored = saver.put(cfg(), ckpt(0, {"a": [1, "x"]}, versions, seen), md(), {"a": version, "b": version})
    loaded = saver.get_tuple(stored).checkpoint
    assert same(loaded["channel_versions"], versions)
    assert same(loaded["versions_seen"], seen)
    assert loaded["channel_values"] == {"a": [1, "x"]}
    assert saver.blobs.copy() == {
        ("t", "", "a", version): ("msgpack", b"\x92\x01\xa1x"),
        ("t", "", "b", version): ("empty", b""),
    }


def test_langgraph_versions_are_stored_as_codes_and_others_as_themselves():
    """Memory item: a LangGraph-format version costs a 9-byte int in a record, any other str its full length."""
    saver = InMemorySaver()
    for version in VERSIONS[:9]:
        code = _memory_codec._parse_version(version)
        assert type(code) in (int, bytes), version
        assert _memory_codec._format_version(code if type(code) is int else int.from_bytes(code, "big")) == version
    for version in VERSIONS[9:18]:
        assert _memory_codec._parse_version(version) == version, version

    def record_size(version: Any) -> int:
        stored = saver.put(cfg(str(version)), ckpt(0, {}, {"a": version}), md(), {})
        return len(saver._threads[str(version)][""].checkpoints[stored["configurable"]["checkpoint_id"]])

    assert record_size(VERSIONS[3]) - record_size(VERSIONS[2]) < 12  # bytes code: a few bytes more
    assert record_size(VERSIONS[10]) - record_size(VERSIONS[0]) >= 40  # the str costs ~50 bytes, a code 9


def test_version_caches_can_be_forgotten(monkeypatch):
    """The caches only save work: with room for two versions, loads are still exact."""
    monkeypatch.setattr(_memory_codec, "_CACHE_MAX", 2)
    monkeypatch.setattr(_memory_store, "_CACHE_MAX", 2)
    saver = InMemorySaver()
    version = None
    configs = []
    parent = cfg()
    for step in range(8):
        version = saver.get_next_version(version, None)
        checkpoint = ckpt(step, {"x": step}, {"x": version, "y": VERSIONS[0]}, {"n": {"x": version}})
        parent = saver.put(parent, checkpoint, md(step), {"x": version})
        configs.append((parent, version))
    assert len(saver._codes) <= 2 and len(saver._texts) <= 2
    for step, (config, version) in enumerate(configs):
        loaded = saver.get_tuple(config).checkpoint
        assert loaded["channel_versions"] == {"x": version, "y": VERSIONS[0]}
        assert loaded["versions_seen"] == {"n": {"x": version}}
        assert loaded["channel_values"] == {"x": step}


def test_get_next_version_reads_cached_and_foreign_versions_alike():
    """L-49: the integer part is the same whether `current` was made here (cached) or elsewhere."""
    mine, other = InMemorySaver(), InMemorySaver()
    current = mine.get_next_version(41, None)
    assert current in mine._codes and current not in other._codes
    assert mine.get_next_version(current, None)[:33] == other.get_next_version(current, None)[:33]
    assert mine.get_next_version(current, None)[:32] == "00000000000000000000000000000043"


# --- empty blobs -------------------------------------------------------------------------


def test_empty_values_are_not_blobs_yet_load_as_in_langgraph():
    """P-13: a channel in new_versions without a value is not stored as a blob; it loads and shows as LangGraph's."""
    saver, ref = both()
    first = ckpt(0, {"a": 1, "c": None}, {"a": "1", "b": "1", "c": "1"})
    for s in (saver, ref):
        s.put(cfg(), first, md(), {"a": "1", "b": "1", "c": "1"})
    lane = saver._threads["t"][""]
    assert len(lane.blobs) == 2  # a and c; b is only a mark inside the checkpoint record
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"a": 1, "c": None}
    assert saver.blobs[("t", "", "b", "1")] == ("empty", b"")
    assert_same_state(saver, ref)
    # an "empty" put over a stored value hides it, a value put over "empty" shows it (LangGraph's dict)
    second = ckpt(1, {"b": 2}, {"a": "1", "b": "1", "c": "1"})
    for s in (saver, ref):
        s.put(cfg(), second, md(1), {"a": "1", "b": "1"})
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"b": 2, "c": None}
    assert_same_state(saver, ref)


# --- crafted records -------------------------------------------------------------------


def _record(saver: InMemorySaver, config: dict) -> tuple[Any, str]:
    lane = saver._threads[config["configurable"]["thread_id"]][""]
    return lane, config["configurable"]["checkpoint_id"]


CRAFTED_CODES = [
    (-1, "error"),
    (-(2**63), "error"),
    (2**64 - 1, "str"),
    (0, "str"),
    (b"", "error"),
    (b"\x01", "str"),
    (b"\xff" * 24, "str"),
    (b"\xff" * 25, "error"),
    (b"\xff" * 100_000, "error"),
    (1.5, "error"),
    (None, "error"),
    (True, "error"),
    ([], "error"),
    ([1, 2], "error"),
    ([[1]], [1]),  # the form of a non-str version: its value, as plain data
    ({"a": 1}, "error"),
    (msgpack.ExtType(0, msgpack.packb(["os", "system", "echo hi"])), "error"),
    (msgpack.ExtType(3, msgpack.packb(["subprocess", "call", "x", "__call__"])), "error"),
    (msgpack.ExtType(99, b"x"), "error"),
]


@pytest.mark.parametrize(("code", "expected"), CRAFTED_CODES, ids=[repr(c)[:30] for c, _ in CRAFTED_CODES])
def test_crafted_version_codes_give_a_str_or_fail_cleanly(code, expected):
    """A crafted version code loads as a str or raises DeserializationError; it never imports or calls anything."""
    saver = InMemorySaver()
    version = VERSIONS[0]
    stored = saver.put(cfg(), ckpt(0, {"a": 1}, {"a": version}, {"n": {"a": version}}), md(), {"a": version})
    lane, checkpoint_id = _record(saver, stored)
    record = msgpack.unpackb(lane.checkpoints[checkpoint_id])
    _, versions, _, _, empty, seen = record  # the layout of memory.py's docstring
    for target in ("channel_versions", "versions_seen", "empty"):
        if target == "channel_versions":
            versions[1] = [code]
        elif target == "versions_seen":
            seen[0][2] = [code]  # the row of node "n": [node, names, codes]
        else:  # only the blobs view reads the "empty" marks
            empty[:] = [[0], [code]]
        lane.checkpoints[checkpoint_id] = msgpack.packb(record, use_bin_type=True)
        before = set(sys.modules)
        try:
            loaded = saver.get_tuple(stored).checkpoint
            view = saver.blobs.copy()
        except DeserializationError:
            outcome: Any = "error"
        else:
            found = [*loaded["channel_versions"].values()]
            found += [v for seen_by_node in loaded["versions_seen"].values() for v in seen_by_node.values()]
            found += [key[3] for key in view if key[3] != VERSIONS[0]]
            found = [v for v in found if v != VERSIONS[0]] or found
            outcome = "str" if all(type(v) is str for v in found) else found[0]
        assert outcome == expected, (target, outcome)
        assert set(sys.modules) - before == set()  # nothing imported (a payload names os, subprocess)


def test_crafted_records_fail_with_deserialization_error_only():
    """Random damage to a record or a write record: a tuple or DeserializationError, nothing else."""
    saver = InMemorySaver()
    parent = cfg()
    versions = {}
    for step in range(4):
        versions = {**versions, f"c{step}": saver.get_next_version(None, None)}
        checkpoint = ckpt(step, {f"c{step}": {step}}, versions, {"n": dict(versions)})
        parent = saver.put(parent, checkpoint, md(step), versions)
        saver.put_writes(parent, [("a", datetime.date(2020, 1, step + 1)), ("__error__", "boom")], f"task{step}", "p")
    lane, checkpoint_id = _record(saver, parent)
    joined = lane.checkpoints[checkpoint_id]  # the record with its writes (`_memory_store._join`)
    good, good_writes = _memory_store._record_of(joined), _memory_store._writes_of(joined)
    assert type(good_writes) is bytes
    rng = random.Random(5)
    outcomes = set()
    for _ in range(1500):
        for target in ("record", "writes", "joined"):
            data = bytearray({"record": good, "writes": good_writes, "joined": joined}[target])
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            if target == "joined":
                lane.checkpoints[checkpoint_id] = bytes(data)
            else:
                record = bytes(data) if target == "record" else good
                writes = bytes(data) if target == "writes" else good_writes
                lane.checkpoints[checkpoint_id] = _memory_store._join(record, writes)
            try:
                saver.get_tuple(parent)
                outcomes.add("ok")
            except DeserializationError:
                outcomes.add("refused")
    assert outcomes == {"ok", "refused"}


# --- differential: the reference layout ------------------------------------------------------


class Odd:
    """Not serializable: put must raise TypeError and store nothing."""


VALUES = [
    None,
    0,
    -5,
    2**63,
    True,
    1.5,
    -0.0,
    "",
    "text",
    "ünïcode",
    "lone \udc80 surrogate",
    b"raw",
    bytearray(b"ba"),
    [1, (2, 3)],
    (4, [5]),
    {"k": [1]},
    {(1, 2): "tuple key"},
    {1, 2},
    frozenset({("a", 1)}),
    datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
    uuid.UUID(int=7),
    msgpack.Timestamp(1, 2),
]


@pytest.mark.parametrize("serde", SERDES)
def test_random_operations_match_the_reference_layout(serde):
    """P-5, P-10 .. P-13: random puts and writes (odd values, versions, names) load as with LangGraph's layout."""
    saver, ref = both(serde() if serde else None)
    rng = random.Random(11)
    channels = ["a", "b", "branch:to:x", "__start__", "ü-ñame"]
    heads: dict[tuple[str, str], dict] = {}
    version_pool = VERSIONS + [saver.get_next_version(None, None) for _ in range(5)]
    for step in range(120):
        thread, ns = rng.choice(["t1", "t2", "t3"]), rng.choice(["", "sub:1"])
        parent = heads.get((thread, ns), cfg(thread, ns))
        op = rng.random()
        if op < 0.55 or "checkpoint_id" not in parent["configurable"]:
            versions = {c: rng.choice(version_pool) for c in rng.sample(channels, rng.randint(0, 5))}
            new = {c: v for c, v in versions.items() if rng.random() < 0.7}
            values = {c: rng.choice(VALUES) for c in new if rng.random() < 0.8}
            values.update({c: 0 for c in versions if c not in new and rng.random() < 0.3})  # not stored
            seen = {
                node: {c: rng.choice(version_pool) for c in rng.sample(channels, rng.randint(0, 2))}
                for node in ("n1", "n2")
            }
            checkpoint = ckpt(step, values, versions, seen)
            meta = md(step, score=rng.random(), who=rng.choice(["x", "y\x00z"]))
            results = []
            for s in (saver, ref):
                try:
                    results.append(s.put(parent, checkpoint, meta, new))
                except TypeError:  # an int key that cannot be a version: both refuse
                    results.append(None)
            assert results[0] == results[1]
            if results[0]:
                heads[(thread, ns)] = results[0]
        else:
            task = rng.choice(["task-a", "task-b", str(uuid.UUID(int=step))])
            targets = [*channels, "__error__", "__interrupt__", "__resume__"]
            writes = [(rng.choice(targets), rng.choice(VALUES)) for _ in range(rng.randint(1, 3))]
            path = rng.choice(["", "~__pregel_pull, n1", "~__pregel_push, 0, False"])
            for s in (saver, ref):
                s.put_writes(parent, writes, task, path)
    assert_same_state(saver, ref)
    for thread in ("t1", "t2", "t3"):
        for kwargs in ({"limit": 2}, {"filter": {"who": "x"}}, {"filter": {"step": 3, "source": "loop"}}):
            config = cfg(thread)
            del config["configurable"]["checkpoint_ns"]
            mine, theirs = list(saver.list(config, **kwargs)), list(ref.list(config, **kwargs))
            assert len(mine) == len(theirs)
            for a, b in zip(mine, theirs):
                assert_same_tuples(a, b)


@pytest.mark.parametrize("serde", SERDES)
def test_checkpoints_of_other_shapes_load_with_their_keys_in_order(serde):
    """P-10: an engine-shaped checkpoint is stored without its keys; others keep theirs, in their order."""
    saver, ref = both(serde() if serde else None)
    version = saver.get_next_version(None, None)
    base = ckpt(0, {"a": 1}, {"a": version}, {"n": {"a": version}})
    reordered = {k: base[k] for k in reversed(list(base))}
    extra = {**base, "pending_sends": [], "custom": {"x": 1}}
    missing = {k: v for k, v in base.items() if k != "updated_channels"}
    not_dicts = {**base, "channel_versions": {"a": version}, "versions_seen": [["n", "a"]]}
    for checkpoint in (base, reordered, extra, missing, not_dicts):
        checkpoint = {**checkpoint, "id": str(uuid6(clock_seq=0))}
        stored = [s.put(cfg(), checkpoint, md(), {"a": version}) for s in (saver, ref)]
        assert stored[0] == stored[1]
        mine, theirs = saver.get_tuple(stored[0]), ref.get_tuple(stored[1])
        assert_same_tuples(mine, theirs)
        assert list(mine.checkpoint) == [k for k in checkpoint if k != "channel_values"] + ["channel_values"]


@pytest.mark.parametrize("serde", SERDES)
def test_unserializable_value_stores_nothing(serde):
    """P-12: a value the serde refuses raises TypeError from put/put_writes, and nothing is stored."""
    saver = InMemorySaver(serde=serde() if serde else None)
    with pytest.raises(TypeError):
        saver.put(cfg(), ckpt(0, {"a": Odd()}, {"a": "1"}), md(), {"a": "1"})
    with pytest.raises(TypeError):
        saver.put(cfg(), ckpt(0, {"a": 1}, {"a": "1"}), md(odd=Odd()), {"a": "1"})
    for too_big in (2**64, -(2**63) - 1):  # an int is kept as itself only when the serde takes it
        with pytest.raises(TypeError, match="Integer exceeds 64-bit range"):
            saver.put(cfg(), ckpt(0, {"a": too_big}, {"a": "1"}), md(), {"a": "1"})
    assert saver.get_tuple(cfg()) is None and saver.blobs.copy() == {}
    stored = saver.put(cfg(), ckpt(0, {"a": 1}, {"a": "1"}), md(), {"a": "1"})
    with pytest.raises(TypeError):
        saver.put_writes(stored, [("a", 1), ("b", Odd())], "task")
    assert saver.get_tuple(stored).pending_writes == []


def test_put_step_is_put_writes_then_put_and_honours_overrides():
    """P-5, P-12: put_step stores what put_writes then put store; replaced methods are still called."""
    direct, separate = InMemorySaver(), InMemorySaver()
    version = direct.get_next_version(None, None)
    start = ckpt(0, {"a": 1}, {"a": version})
    first = direct.put(cfg(), start, md(0), {"a": version})
    assert separate.put(cfg(), start, md(0), {"a": version}) == first
    writes = [("task-1", [("a", 2), ("__error__", "x")], "~__pregel_pull, n"), ("task-2", [("b", [3])], "p")]
    step = ckpt(1, {"a": 2}, {"a": version}, {"n": {"a": version}})
    stored = direct.put_step(first, step, md(1), {"a": version}, writes)
    for task_id, task_writes, path in writes:
        separate.put_writes(first, task_writes, task_id, path)
    assert stored == separate.put(first, step, md(1), {"a": version})
    assert_same_tuples(direct.get_tuple(first), separate.get_tuple(first))
    assert_same_tuples(direct.get_tuple(stored), separate.get_tuple(stored))

    calls = []

    class Counting(InMemorySaver):
        def put(self, *args):
            calls.append("put")
            return super().put(*args)

    patched = InMemorySaver()
    patched.put_writes = lambda *args: calls.append("put_writes")
    for saver in (Counting(), patched):
        parent = InMemorySaver.put(saver, cfg(), start, md(0), {"a": version})
        saver.put_step(parent, step, md(1), {"a": version}, [("t", [("a", 1)], "")])
    assert calls == ["put", "put_writes"]


def test_put_writes_rules_match_the_reference():
    """P-5: a repeated regular write is kept, special channels replace, each write keeps its own task path."""
    saver, ref = both()
    checkpoint = ckpt(0, {}, {})
    for s in (saver, ref):
        stored = s.put(cfg(), checkpoint, md(), {})
        s.put_writes(stored, [("a", 1), ("b", 2)], "t1", "p2")
        s.put_writes(stored, [("a", 10), ("b", 20), ("c", 30)], "t1", "p1")  # idx 0, 1 kept; idx 2 new, own path
        s.put_writes(stored, [("x", 0)], "t0", "p3")
        s.put_writes(stored, [("__error__", "e1"), ("__error__", "e2")], "t1", "p0")  # the last one of a call wins
        s.put_writes(stored, [("__error__", "e3")], "t1", "p4")
        s.put_writes(stored, [("__interrupt__", "i"), ("y", bytearray(b"z"))], "t2", "p1")
    assert [w[2] for w in saver.get_tuple(cfg()).pending_writes] == [30, "i", bytearray(b"z"), 1, 2, 0, "e3"]
    assert_same_state(saver, ref)


def test_thread_order_is_the_order_of_first_checkpoints():
    """P-11: list(None) walks threads in the order of their first put, even after earlier put_writes."""
    saver, ref = both()
    early = {"configurable": {"thread_id": "late", "checkpoint_ns": "", "checkpoint_id": str(uuid6(clock_seq=0))}}
    first, late = ckpt(0, {}, {}), ckpt(1, {}, {})
    for s in (saver, ref):
        s.put_writes(early, [("a", 1)], "task")
        s.put(cfg("first"), first, md(), {})
        s.put(cfg("late"), late, md(), {})
    assert [t.config["configurable"]["thread_id"] for t in saver.list(None)] == ["first", "late"]
    assert_same_state(saver, ref)


def test_names_past_the_table_are_stored_as_themselves(monkeypatch):
    """Names beyond the table's room (and non-str names) are stored inline and load the same."""
    monkeypatch.setattr(_memory_store, "_NAMES_MAX", 6)
    saver, ref = both()
    names = [f"channel-{i}" for i in range(12)] + [7, ("tuple", 1)]
    versions = {name: VERSIONS[i % 5] for i, name in enumerate(names)}
    seen = {f"node-{i}": {name: versions[name]} for i, name in enumerate(names)}
    values = {name: i for i, name in enumerate(names)}
    checkpoint = ckpt(0, values, versions, seen)
    for s in (saver, ref):
        stored = s.put(cfg(), checkpoint, md(**{f"key-{i}": i for i in range(8)}), versions)
        s.put_writes(stored, [(name, name) for name in names[4:]], "task", "path-x")
    assert len(saver._names) == 6
    assert_same_state(saver, ref)


def test_copy_thread_shares_records_and_prune_keeps_what_the_latest_needs():
    """copy_thread copies by reference (records hold no thread id); prune keeps the latest's values and writes."""
    saver = InMemorySaver()
    parent = cfg("src")
    versions: dict = {}
    for step in range(5):
        versions = {**versions, f"c{step % 3}": saver.get_next_version(versions.get(f"c{step % 3}"), None)}
        channel = f"c{step % 3}"
        parent = saver.put(parent, ckpt(step, {channel: step}, dict(versions)), md(step), {channel: versions[channel]})
        saver.put_writes(parent, [("c0", step)], "task")
    saver.copy_thread("src", "dst")
    source, target = saver._threads["src"][""], saver._threads["dst"][""]
    assert all(target.checkpoints[k] is v for k, v in source.checkpoints.items())
    for a, b in zip(saver.list(cfg("src")), saver.list(cfg("dst"))):
        assert a.checkpoint == b.checkpoint and a.pending_writes == b.pending_writes
    latest = saver.get_tuple(cfg("src"))
    saver.prune(["src"])
    assert [t.checkpoint["id"] for t in saver.list(cfg("src"))] == [latest.checkpoint["id"]]
    assert saver.get_tuple(cfg("src")).checkpoint == latest.checkpoint
    assert saver.get_tuple(cfg("src")).pending_writes == latest.pending_writes
    assert len(source.blobs) == 3  # c0, c1, c2 at their latest versions only
    assert len(saver._threads["dst"][""].checkpoints) == 5


def test_concurrent_savers_share_the_name_table_safely():
    """Thread safety: threads adding names and versions at once all load back exactly."""
    saver = InMemorySaver()
    errors: list = []

    def work(n: int) -> None:
        try:
            for step in range(30):
                version = saver.get_next_version(None, None)
                names = {f"w{n}-s{step}-{k}": version for k in range(3)}
                checkpoint = ckpt(step, dict.fromkeys(names, step), names, {f"node{n}": names})
                stored = saver.put(cfg(f"thread-{n}"), checkpoint, md(step), names)
                loaded = saver.get_tuple(stored).checkpoint
                assert loaded["channel_versions"] == names and loaded["versions_seen"] == {f"node{n}": names}
                assert loaded["channel_values"] == dict.fromkeys(names, step)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert len(saver._names) == len(set(saver._names)) == len(saver._name_refs)


def test_views_are_read_only_and_keyed_like_langgraph():
    """storage/writes/blobs: LangGraph's keys and `(tag, bytes)` values; they cannot be assigned to."""
    saver = InMemorySaver()
    stored = saver.put(cfg(), ckpt(0, {"a": 1}, {"a": "v1"}), md(), {"a": "v1"})
    saver.put_writes(stored, [("a", 2)], "task", "p")
    checkpoint_id = stored["configurable"]["checkpoint_id"]
    assert saver.blobs[("t", "", "a", "v1")] == ("msgpack", b"\x01")
    assert saver.writes[("t", "", checkpoint_id)] == {("task", 0): ("task", "a", ("msgpack", b"\x02"), "p")}
    checkpoint_typed, metadata_typed, parent = saver.storage["t"][""][checkpoint_id]
    assert saver.serde.loads_typed(checkpoint_typed)["channel_versions"] == {"a": "v1"} and parent is None
    assert saver.serde.loads_typed(metadata_typed) == md()
    assert "t" in saver.storage and "x" not in saver.storage and ("x",) not in saver.blobs
    with pytest.raises(TypeError):
        saver.blobs[("t", "", "a", "v1")] = ("msgpack", b"\x02")  # type: ignore[index]


def test_graph_runs_leave_compact_records():
    """Memory item: a 10-node chain's checkpoints are bytes records without version strings in them."""
    from typing import TypedDict

    from lgembed.graph import END, START, StateGraph

    class State(TypedDict):
        n: int

    graph = StateGraph(State)
    prev = START
    for i in range(10):
        graph.add_node(f"n{i}", lambda s: {"n": s["n"] + 1})
        graph.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    graph.add_edge(prev, END)
    saver = InMemorySaver()
    app = graph.compile(checkpointer=saver)
    assert app.invoke({"n": 0}, {"configurable": {"thread_id": "t"}}) == {"n": 10}
    lane = saver._threads["t"][""]
    assert len(lane.checkpoints) == 12
    assert all(type(r) is bytes and b"0000000000000000" not in r for r in lane.checkpoints.values())
    assert all(type(k) is int and (v is None or type(v) in (bytes, int)) for k, v in lane.blobs.items())
    history = list(app.get_state_history({"configurable": {"thread_id": "t"}}))
    assert [h.values.get("n") for h in history] == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, None]
    versions = saver.get_tuple({"configurable": {"thread_id": "t"}}).checkpoint["channel_versions"]
    assert all(type(v) is str and len(v) >= 49 for v in versions.values())


def test_versions_from_a_patched_random_stay_exact(monkeypatch):
    """L-49: a code is kept only for a fraction that formats back exactly (random.random may be patched)."""
    saver = InMemorySaver()
    for fraction in (0.1, 1 / 3, 0.5, 0.0, 2.0**-60):
        monkeypatch.setattr(_memory_store.random, "random", lambda f=fraction: f)
        version = saver.get_next_version(3, None)
        assert version == f"{4:032}.{fraction:016}"
        stored = saver.put(cfg(), ckpt(0, {"a": fraction}, {"a": version}, {"n": {"a": version}}), md(), {"a": version})
        saver._codes.clear()  # the caches only save work: what a record holds must give the version back
        saver._texts.clear()
        loaded = saver.get_tuple(stored).checkpoint
        assert loaded["channel_versions"] == {"a": version} and loaded["versions_seen"] == {"n": {"a": version}}
        assert loaded["channel_values"] == {"a": fraction}


def test_damaged_part_sizes_read_as_slicing_does():
    """A joined record whose 4-byte part size is damaged (up to 2**32 - 1) yields the rest
    of the value, in both builds and on 32-bit boards too (a compiled C index of 32 bits
    overflowed there: OverflowError instead of the saver's DeserializationError)."""
    value = b"\xc1" + b"\xff\xff\xff\xff" + b"abc"
    assert _memory_store._parts(value) == [b"abc"]
    assert _memory_store._record_of(value) == b"abc"
    assert _memory_store._parts(b"\xc1\x00\x00\x00\x01a\x80\x00\x00\x00bc") == [b"a", b"bc"]
