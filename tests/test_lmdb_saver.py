"""LmdbSaver specifics: environments, growth, full disks, durability, retention, safety of loading.

Statements: docs/DESIGN.md §4 (LMDB environment, map growth, disk-full and corruption as
clear errors, durability modes, retention, closed serializer), docs/STYLE.md §F (errors)
and §H (implicit LMDB ownership), issue 3 acceptance 3. The behaviour every saver
shares is in `test_checkpoint_savers.py`, run against LmdbSaver by
`test_checkpoint_savers_lmdb.py`; the crash test is `test_crash_lmdb.py`.

Real LMDB files in temp dirs, real subprocesses, a real size-limited file system
(tmpfs, mounted when running as root) and RLIMIT_FSIZE; no mocks.
"""

from __future__ import annotations

import dataclasses
import errno
import operator
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from typing import Annotated, TypedDict

import lmdb
import msgpack
import pytest

from lgembed.checkpoint import lmdb as lmdb_mod
from lgembed.checkpoint._id import uuid6
from lgembed.checkpoint.lmdb import (
    ENVIRONMENTS,
    LmdbCorruptError,
    LmdbDiskFullError,
    LmdbError,
    LmdbMapFullError,
    LmdbSaver,
)
from lgembed.checkpoint.memory import InMemorySaver
from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer
from lgembed.store.lmdb import LmdbStore

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cfg(thread: str = "t", ns: str | None = "", checkpoint_id: str | None = None, **extra) -> dict:
    configurable = {"thread_id": thread, **extra}
    if ns is not None:
        configurable["checkpoint_ns"] = ns
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def ckpt(step: int = 0, values: dict | None = None, versions: dict | None = None) -> dict:
    values = values or {}
    return {
        "v": 4,
        "id": str(uuid6(clock_seq=step)),
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions if versions is not None else {k: 1 for k in values},
        "versions_seen": {"__input__": {}},
        "updated_channels": sorted(values) or None,
    }


def md(step: int = 0, source: str = "loop") -> dict:
    return {"source": source, "step": step, "parents": {}}


def put_chain(saver, n: int, thread: str = "t", ns: str = "", value=lambda i: i) -> list[dict]:
    configs, parent = [], cfg(thread, ns)
    for i in range(n):
        parent = saver.put(parent, ckpt(i, {"x": value(i)}, {"x": i + 1}), md(i), {"x": i + 1})
        configs.append(parent)
    return configs


def ids(tuples) -> list[str]:
    return [t.checkpoint["id"] for t in tuples]


KINDS = {"blobs": b"b", "checkpoints": b"c", "writes": b"w"}
# kind byte of each record kind, after the thread and namespace components (format 2)


def records(saver) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of the saver's one database, in key order."""
    with saver.env.begin() as txn:
        return list(txn.cursor(db=saver.env.open_db(b"lgembed.records", txn=txn, create=False)))


def kind_of(key: bytes) -> bytes:
    return key.split(b"\x00\x01", 2)[2][:1]  # thread and ns end with 00 01; NUL is escaped as 00 ff


def entries(saver, kind: str) -> int:
    return sum(1 for key, _ in records(saver) if kind_of(key) == KINDS[kind])


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture
def saver(tmp_path):
    s = LmdbSaver(tmp_path / "env")
    yield s
    s.close()


# --- construction, ownership, the registry ----------------------------------------------


def test_public_names():
    """STYLE §D: a tuple __all__ whose names exist."""
    assert isinstance(lmdb_mod.__all__, tuple)
    for name in lmdb_mod.__all__:
        assert hasattr(lmdb_mod, name)


def test_errors_are_oserrors():
    """STYLE §F: LMDB errors map to one tree rooted in OSError."""
    assert issubclass(LmdbError, OSError)
    for cls in (LmdbMapFullError, LmdbDiskFullError, LmdbCorruptError):
        assert issubclass(cls, LmdbError)


def test_import_is_light():
    """DESIGN §1/STYLE §H: importing the LMDB saver and store loads neither lmdb nor msgpack."""
    code = (
        "import sys\n"
        "import lgembed.checkpoint.lmdb, lgembed.store.lmdb\n"
        "bad = [m for m in ('lmdb', 'msgpack', 'asyncio') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_persists_across_reopen(tmp_path):
    """DESIGN §4: checkpoints, metadata, values and writes survive closing and reopening."""
    path = tmp_path / "env"
    with LmdbSaver.from_conn_string(path) as s:
        configs = put_chain(s, 3)
        s.put_writes(configs[-1], [("x", "pending")], "task", "~path")
        before = list(s.list(cfg()))
    with LmdbSaver(path) as s:
        assert list(s.list(cfg())) == before
        assert s.get_tuple(cfg()).pending_writes == [("task", "x", "pending")]


def test_from_conn_string_closes(tmp_path):
    """P-12/STYLE §H: the context manager releases the environment it opened."""
    path = tmp_path / "env"
    with LmdbSaver.from_conn_string(path, keep_last=2) as s:
        assert s.keep_last == 2
        assert ENVIRONMENTS.open_paths()[s.path] == 1
        real = s.path
    assert real not in ENVIRONMENTS.open_paths()
    assert os.path.isfile(os.path.join(real, "data.mdb"))


def test_registry_shares_one_environment_per_path(tmp_path):
    """STYLE §H: two savers and a store of one directory share one Environment, counted."""
    path = tmp_path / "env"
    os.makedirs(path)
    link = tmp_path / "link"
    os.symlink(path, link)
    a = LmdbSaver(path)
    b = LmdbSaver(link)  # another spelling of the same directory
    store = LmdbStore(env=a.env)
    assert a.env is b.env is store.env
    assert ENVIRONMENTS.open_paths()[a.path] == 3
    put_chain(a, 1)
    assert b.get_tuple(cfg()) == a.get_tuple(cfg())
    a.close()
    a.close()  # twice does nothing
    assert ENVIRONMENTS.open_paths()[b.path] == 2
    store.close()
    b.close()
    assert b.path not in ENVIRONMENTS.open_paths()


def test_with_allowlist_clone_is_one_more_user(tmp_path):
    """P-12 (with_allowlist): the clone shares the environment and counts as a user."""

    @dataclasses.dataclass
    class Reading:
        value: int

    s = LmdbSaver(tmp_path / "env")
    clone = s.with_allowlist([Reading])
    assert clone.env is s.env and ENVIRONMENTS.open_paths()[s.path] == 2
    clone.put(cfg(), ckpt(0, {"r": Reading(1)}), md(), {"r": 1})
    assert clone.get_tuple(cfg()).checkpoint["channel_values"] == {"r": Reading(1)}
    s.close()
    assert clone.get_tuple(cfg()) is not None  # still open for the clone
    clone.close()
    assert s.path not in ENVIRONMENTS.open_paths()


def test_caller_owned_environment_is_not_closed(tmp_path):
    """STYLE §H: an Environment passed in belongs to the caller; close() leaves it open."""
    env = lmdb.open(str(tmp_path / "env"), max_dbs=16, map_size=1 << 20)
    try:
        s = LmdbSaver(env)  # positionally, or env=...
        assert s.env is env and s.fsync == "always"  # lmdb.open's defaults: sync=True, metasync=True
        put_chain(s, 2)
        also = LmdbSaver(env=env)
        assert ENVIRONMENTS.open_paths()[s.path] == 2
        also.close()
        s.close()
        assert s.path not in ENVIRONMENTS.open_paths()
        assert env.stat()["entries"] >= 2  # still usable: the named databases exist
        with LmdbSaver(env=env) as again:
            assert len(list(again.list(cfg()))) == 2
    finally:
        env.close()


def test_caller_environment_needs_room_for_named_databases(tmp_path):
    """STYLE §F: a too small max_dbs is a clear LmdbError that says how to fix it."""
    env = lmdb.open(str(tmp_path / "env"), max_dbs=1)
    try:
        with pytest.raises(LmdbError, match=re.escape("Open it with lmdb.open(..., max_dbs=16) or more.")):
            LmdbSaver(env=env)
        assert ENVIRONMENTS.open_paths().get(os.path.realpath(tmp_path / "env")) is None
    finally:
        env.close()


def test_fsync_policy_must_match_the_open_environment(tmp_path):
    """DESIGN §4: one environment has one fsync policy; a conflicting request is refused."""
    with LmdbSaver(tmp_path / "env", fsync="commit") as s:
        assert s.fsync == "commit" and s.env.flags()["sync"] and not s.env.flags()["metasync"]
        msg = (
            f"LmdbStore(fsync='always'): LMDB environment {s.path!r} is already open in this "
            "process with fsync='commit'; use the same policy (or omit fsync)."
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            LmdbStore(tmp_path / "env", fsync="always")
        with LmdbStore(tmp_path / "env") as store:  # None: whatever is in force
            assert store.env is s.env


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fsync": "sometimes"}, "'fsync' must be one of ('deferred', 'commit', 'always') (got 'sometimes')"),
        ({"keep_last": 0}, "'keep_last' must be a positive int or None (got 0)"),
        ({"flush_every": -1}, "'flush_every' must be a positive int or None (got -1)"),
        ({"map_size": 0}, "'map_size' must be a positive int (got 0)"),
        ({"map_size": 1 << 20, "max_map_size": 1 << 19}, "'max_map_size' must be >= map_size (1048576) (got 524288)"),
    ],
)
def test_invalid_options(tmp_path, kwargs, message):
    """STYLE §F: an invalid option names the constraint and the value."""
    with pytest.raises(ValueError, match=re.escape(message)):
        LmdbSaver(tmp_path / "env", **kwargs)
    assert os.path.realpath(tmp_path / "env") not in ENVIRONMENTS.open_paths()


def test_path_and_env_are_exclusive(tmp_path):
    """Exactly one of a path or env= is needed."""
    with pytest.raises(ValueError, match=re.escape("LmdbSaver() needs exactly one of a path or env=")):
        LmdbSaver()
    with pytest.raises(TypeError, match=re.escape("LmdbSaver(env=...) must be an lmdb.Environment (got int)")):
        LmdbSaver(env=3)


def test_path_that_is_a_file(tmp_path):
    """STYLE §F: a file where the directory should be: what, where, why."""
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(LmdbError, match=re.escape(f"Opening LMDB environment {str(target)!r} for LmdbSaver: not a directory")) as info:
        LmdbSaver(target)
    assert info.value.errno == errno.ENOTDIR


def test_unknown_format_version_is_refused(tmp_path):
    """DESIGN §4: data of another on-disk format is refused with a clear error, not misread."""
    path = tmp_path / "env"
    LmdbSaver(path).close()
    env = lmdb.open(str(path), max_dbs=16)
    with env.begin(write=True) as txn:
        txn.put(b"checkpoint", b"99", db=env.open_db(b"lgembed.format", txn=txn))
    env.close()
    real = os.path.realpath(path)
    msg = f"LmdbSaver: LMDB environment {real!r} holds checkpoint data in format 99; this lgembed reads format 3 only (and 2, recorded as 3 when opened)."
    with pytest.raises(LmdbCorruptError, match=re.escape(msg)):
        LmdbSaver(path)
    assert real not in ENVIRONMENTS.open_paths()


def test_format_1_environment_is_refused_with_the_way_out(tmp_path):
    """DESIGN §4/STYLE §F: an environment of lgembed 0.1's layout (format 1: four databases)
    is refused with what was found, what is expected and how to go on; nothing in it is
    read or changed, and an LmdbStore sharing it keeps working."""
    path = tmp_path / "env"
    with LmdbStore(path) as store:
        store.put(("users",), "ada", {"lang": "en"})
    env = lmdb.open(str(path), max_dbs=16)
    with env.begin(write=True) as txn:  # what LmdbSaver of format 1 left behind
        txn.put(b"checkpoint", b"1", db=env.open_db(b"lgembed.format", txn=txn))
        old = env.open_db(b"lgembed.checkpoints", txn=txn)
        txn.put(b"t\x00\x01\x00\x01id\x00\x01", b"old record", db=old)
        for name in (b"lgembed.metadata", b"lgembed.blobs", b"lgembed.writes"):
            env.open_db(name, txn=txn)
    env.close()
    real = os.path.realpath(path)
    with pytest.raises(LmdbError) as info:
        LmdbSaver(path)
    assert str(info.value) == (
        f"LmdbSaver: LMDB environment {real!r} holds checkpoint data in format 1; this lgembed reads format 3 only (and 2, recorded as 3 when opened). "
        "Open it with the lgembed release that wrote it, or give LmdbSaver a new directory (remove this one once "
        "nothing in it is needed: other users of the environment keep their data in the same files)."
    )
    assert info.value.filename == real
    assert real not in ENVIRONMENTS.open_paths()
    env = lmdb.open(str(path), max_dbs=16, readonly=True)
    with env.begin() as txn:
        assert txn.get(b"checkpoint", db=env.open_db(b"lgembed.format", txn=txn)) == b"1"
        assert txn.get(b"t\x00\x01\x00\x01id\x00\x01", db=env.open_db(b"lgembed.checkpoints", txn=txn)) == b"old record"
    env.close()
    with LmdbStore(path) as store:
        assert store.get(("users",), "ada").value == {"lang": "en"}


def test_damaged_record_is_a_corruption_error(saver):
    """DESIGN §4: corruption surfaces as a clear error, never as a silently wrong value."""
    put_chain(saver, 1)
    with saver.env.begin(write=True) as txn:
        db = saver.env.open_db(b"lgembed.records", txn=txn, create=False)
        key = next(key for key, _ in txn.cursor(db=db) if kind_of(key) == KINDS["checkpoints"])
        txn.put(key, b"\xc1garbage", db=db)
    with pytest.raises(LmdbCorruptError, match=re.escape("a stored checkpoint record in")):
        saver.get_tuple(cfg())


# --- keys -----------------------------------------------------------------------------


def test_keys_do_not_collide(saver):
    """DESIGN §4: byte-sortable keys never let one thread or namespace alias another (NUL, prefixes)."""
    threads = ["a", "a\x00", "a\x00b", "ab", "", "a\x01"]
    for i, thread in enumerate(threads):
        put_chain(saver, i + 1, thread=thread)
        put_chain(saver, 1, thread=thread, ns="x\x00")
    for i, thread in enumerate(threads):
        assert len(list(saver.list(cfg(thread)))) == i + 1
        assert len(list(saver.list(cfg(thread, ns=None)))) == i + 2
        assert saver.get_tuple(cfg(thread)).config["configurable"]["thread_id"] == thread
    saver.delete_thread("a")
    assert list(saver.list(cfg("a", ns=None))) == []
    assert len(list(saver.list(cfg("a\x00b")))) == 3


def test_list_none_walks_threads_in_byte_order(saver):
    """P-11 (documented for LmdbSaver): config None lists threads and namespaces in key order, newest first within."""
    put_chain(saver, 2, thread="b")
    put_chain(saver, 1, thread="a", ns="sub")
    put_chain(saver, 2, thread="a")
    got = [(t.config["configurable"]["thread_id"], t.config["configurable"]["checkpoint_ns"], t.metadata["step"]) for t in saver.list(None)]
    assert got == [("a", "", 1), ("a", "", 0), ("a", "sub", 0), ("b", "", 1), ("b", "", 0)]


def test_channel_values_are_stored_once_per_version(saver):
    """P-13/DESIGN §4: a value is stored once per (thread, ns, channel, version), not per checkpoint."""
    first = saver.put(cfg(), ckpt(0, {"big": "x" * 1000, "n": 0}, {"big": 1, "n": 1}), md(), {"big": 1, "n": 1})
    parent = first
    for i in range(1, 10):
        parent = saver.put(parent, ckpt(i, {"big": "x" * 1000, "n": i}, {"big": 1, "n": i + 1}), md(i), {"n": i + 1})
    assert entries(saver, "blobs") == 1 + 10
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"big": "x" * 1000, "n": 9}


def _groups_in_key_order(saver) -> list[tuple[str, str]]:
    from lgembed.checkpoint._lmdb_env import decode_parts

    return [tuple(decode_parts(key, 2)) for key, _ in records(saver)]


def test_records_of_a_thread_and_namespace_sit_together(saver):
    """Format 2: one named database; every record of one (thread, ns) is in one key range
    (checkpoints, values and writes alike), so a step's commit touches one place."""
    for i in range(3):
        for thread, ns in (("b", ""), ("a", "sub"), ("a", ""), ("a\x00", "")):
            parent = saver.get_tuple(cfg(thread, ns))
            stored = saver.put(parent.config if parent else cfg(thread, ns), ckpt(i, {"x": i, "y": str(i)}, {"x": i + 1, "y": i + 1}), md(i), {"x": i + 1, "y": i + 1})
            saver.put_writes(stored, [("x", i), ("y", "w")], f"task{i}")
    with saver.env.begin() as txn:
        assert sorted(key for key, _ in txn.cursor()) == [b"lgembed.format", b"lgembed.records"]
    groups = _groups_in_key_order(saver)
    runs = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
    assert runs == [("a", ""), ("a", "sub"), ("a\x00", ""), ("b", "")]  # each group one contiguous run, in byte order
    kinds = [kind_of(key) for key, _ in records(saver) if key.startswith(b"a\x00\x01\x00\x01")]
    assert kinds == [b"b"] * 6 + [b"c"] * 3 + [b"w"] * 6
    assert [t.metadata["step"] for t in saver.list(cfg("a", ns=None))] == [2, 1, 0, 2, 1, 0]


def test_get_next_version_is_a_compact_int(saver):
    """L-49 for LmdbSaver: ints `counter << 32 | 32 random bits`; the blob key holds them as 8 bytes."""
    v1 = saver.get_next_version(None, None)
    v2 = saver.get_next_version(v1, None)
    assert type(v1) is int and type(v2) is int
    assert (v1 >> 32, v2 >> 32) == (1, 2)
    assert saver.get_next_version(5, None) >> 32 == 1  # a small int counts as counter 0
    assert saver.get_next_version(float(v2), None) >> 32 == 3
    assert type(saver.get_next_version(2.5, None)) is int
    langgraph = saver.get_next_version("00000000000000000000000000000041.0.123", None)
    assert re.fullmatch(r"0{30}42\.[0-9.e-]{16,}", langgraph), langgraph  # a string thread stays a string thread
    first = saver.put(cfg(), ckpt(0, {"x": "a"}, {"x": v1}), md(), {"x": v1})
    saver.put(first, ckpt(1, {"x": "b"}, {"x": v2}), md(1), {"x": v2})
    blob_keys = [key for key, _ in records(saver) if kind_of(key) == KINDS["blobs"]]
    assert blob_keys == [b"t\x00\x01\x00\x01bx\x00\x01i" + v.to_bytes(8, "big") for v in (v1, v2)]
    assert saver.get_tuple(first).checkpoint["channel_values"] == {"x": "a"}
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {"x": "b"}


def test_versions_of_every_type_address_values_as_in_memory(saver):
    """P-13: a version is a blob key as in InMemorySaver's dict: 2 and 2.0 are one version,
    "2" another; negative, fractional and the largest u64 versions work too."""
    memory = InMemorySaver()
    steps = [
        ({"a": "int"}, {"a": 2}),
        ({"a": "float"}, {"a": 2.0}),  # same version as 2: replaces its value
        ({"a": "str"}, {"a": "2"}),
        ({"a": "frac"}, {"a": 2.5}),
        ({"a": "neg"}, {"a": -3}),
        ({"a": "top"}, {"a": (1 << 64) - 1}),
    ]
    configs = {id(memory): [], id(saver): []}
    for i, (values, versions) in enumerate(steps):
        c = ckpt(i, values, versions)
        for s in (memory, saver):
            previous = configs[id(s)][-1] if configs[id(s)] else cfg()
            configs[id(s)].append(s.put(previous, c, md(i), versions))
    got = [saver.get_tuple(c).checkpoint["channel_values"] for c in configs[id(saver)]]
    assert got == [memory.get_tuple(c).checkpoint["channel_values"] for c in configs[id(memory)]]
    assert got[0] == got[1] == {"a": "float"} and got[2] == {"a": "str"} and got[-1] == {"a": "top"}
    assert entries(saver, "blobs") == len(steps) - 1


def test_a_thread_with_string_versions_continues(tmp_path):
    """L-49: a thread whose versions are LangGraph-format strings (written by another saver
    and imported) runs on under LmdbSaver: its versions stay strings, so the engine never
    compares a str version with an int one."""
    from lgembed.graph import END, START, StateGraph

    class S(TypedDict):
        n: int

    def build(checkpointer):
        g = StateGraph(S)
        g.add_node("a", lambda s: {"n": s["n"] + 1})
        g.add_node("b", lambda s: {"n": s["n"] * 10})
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", END)
        return g.compile(checkpointer=checkpointer, interrupt_before=["b"])

    memory = InMemorySaver()
    config = {"configurable": {"thread_id": "imported"}}
    assert build(memory).invoke({"n": 1}, config) == {"n": 2}
    with LmdbSaver(tmp_path / "env") as s:
        for tup in reversed(list(memory.list(config))):
            stored = s.put(tup.parent_config or cfg("imported"), tup.checkpoint, tup.metadata, tup.checkpoint["channel_versions"])
            for task_id, channel, value in tup.pending_writes:
                s.put_writes(stored, [(channel, value)], task_id)
        assert build(s).invoke(None, config) == {"n": 20}
        versions = s.get_tuple(config).checkpoint["channel_versions"]
        assert versions and all(type(v) is str for v in versions.values()), versions


def _chain_graph(checkpointer):
    from lgembed.graph import END, START, StateGraph

    class S(TypedDict, total=False):
        n: int
        note: str

    g = StateGraph(S)
    previous = START
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s, name=name: {"n": s["n"] + 1, "note": name})
        g.add_edge(previous, name)
        previous = name
    g.add_edge(previous, END)
    return g.compile(checkpointer=checkpointer)


def _history_values(saver, config) -> list:
    return [(t.metadata["step"], t.checkpoint["channel_values"], t.pending_writes and len(t.pending_writes)) for t in saver.list(config)]


def test_empty_channels_store_no_value_yet_load_the_same(saver, tmp_path):
    """P-1/P-13: a channel version without value (InMemorySaver's "empty" blob) stores no
    record; every checkpoint still loads exactly the values InMemorySaver returns,
    after copy_thread and with keep_last too."""
    memory = InMemorySaver()
    config = {"configurable": {"thread_id": "g"}}
    for s in (memory, saver):
        assert _chain_graph(s).invoke({"n": 0}, config) == {"n": 3, "note": "c"}
    empty = [key for key, blob in memory.blobs.items() if blob[0] == "empty"]
    assert empty  # the run has versions without value (consumed triggers)
    assert entries(saver, "blobs") == len(memory.blobs) - len(empty)
    assert all(msgpack.unpackb(raw)[0] != "empty" for key, raw in records(saver) if kind_of(key) == KINDS["blobs"])
    assert _history_values(saver, config) == _history_values(memory, config)
    for s in (memory, saver):
        s.copy_thread("g", "copy")
    copied = {"configurable": {"thread_id": "copy"}}
    assert _history_values(saver, copied) == _history_values(memory, copied) == _history_values(memory, config)
    with LmdbSaver(tmp_path / "kept", keep_last=2) as kept:
        _chain_graph(kept).invoke({"n": 0}, config)
        assert _history_values(kept, config) == _history_values(memory, config)[:2]


def test_a_version_reused_without_value_hides_the_old_value(saver):
    """P-13 (InMemorySaver parity): storing a version without value where a value of the
    same (channel, version) is stored removes it, as InMemorySaver's "empty" marker
    replaces its blob."""
    memory = InMemorySaver()
    first_ckpt, second_ckpt = ckpt(0, {"x": 1, "y": 2}, {"x": 1, "y": 1}), ckpt(1, {"y": 2}, {"x": 1, "y": 1})
    for s in (memory, saver):
        first = s.put(cfg(), first_ckpt, md(0), {"x": 1, "y": 1})
        second = s.put(first, second_ckpt, md(1), {"x": 1})  # x: same version, no value now
        assert s.get_tuple(first).checkpoint["channel_values"] == {"y": 2}
        assert s.get_tuple(second).checkpoint["channel_values"] == {"y": 2}
    assert entries(saver, "blobs") == 1


def test_list_filter_reads_metadata_from_the_checkpoint_record(saver):
    """P-11: filter, before and limit select what InMemorySaver selects; metadata (with the
    config's user values merged in) comes from the checkpoint record."""
    memory = InMemorySaver()
    plan = []
    for i in range(12):
        thread = ("t1", "t2")[i % 2]
        ns = ("", "", "child:1")[i % 3]
        user = ("ada", "bob", None)[i % 3]
        plan.append((thread, ns, user, ckpt(i, {"x": i}, {"x": i + 1}), md(i, ("input", "loop", "update")[i % 3])))
    heads: dict = {}
    for thread, ns, user, c, m in plan:
        for s in (memory, saver):
            parent = heads.get((id(s), thread, ns)) or cfg(thread, ns)
            config = {**parent, "metadata": {"user": user} if user else {}}
            heads[(id(s), thread, ns)] = s.put(config, c, m, {"x": 1})
    middle = plan[6][3]["id"]
    filters = [None, {"source": "loop"}, {"step": 4}, {"user": "ada"}, {"user": None}, {"source": "input", "user": "ada"}, {"source": "nope"}]
    for config in (cfg("t1"), cfg("t2", ns=None), cfg("t1", ns="child:1")):
        for flt in filters:
            for before in (None, cfg(checkpoint_id=middle)):
                for limit in (None, 1, 2):
                    want = ids(memory.list(config, filter=flt, before=before, limit=limit))
                    got = list(saver.list(config, filter=flt, before=before, limit=limit))
                    assert ids(got) == want, (config, flt, before, limit)
                    assert [t.metadata for t in got] == [memory.get_tuple(t.config).metadata for t in got]
    for flt in filters:
        assert sorted(ids(saver.list(None, filter=flt))) == sorted(ids(memory.list(None, filter=flt)))
    assert {t.metadata["user"] for t in saver.list(None, filter={"user": "bob"})} == {"bob"}


# --- map growth -------------------------------------------------------------------------


def test_map_grows_past_the_initial_size(tmp_path):
    """DESIGN §4: the map grows on demand; everything written stays readable."""
    initial = 64 * 1024
    with LmdbSaver(tmp_path / "env", map_size=initial) as s:
        configs = put_chain(s, 200, value=lambda i: os.urandom(4096))
        assert s.env.info()["map_size"] > initial
        assert os.path.getsize(os.path.join(s.path, "data.mdb")) > 4 * initial
        assert len(list(s.list(cfg()))) == 200
        for c in configs:
            assert len(s.get_tuple(c).checkpoint["channel_values"]["x"]) == 4096
    with LmdbSaver(tmp_path / "env", map_size=initial) as s:  # reopened with the small size
        assert len(list(s.list(cfg()))) == 200


def test_map_growth_with_concurrent_readers_and_writers(tmp_path):
    """DESIGN §4: growth while other threads read and write loses nothing and raises nothing."""
    s = LmdbSaver(tmp_path / "env", map_size=32 * 1024)
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(i: int) -> None:
        try:
            parent = cfg(f"w{i}")
            for j in range(60):
                parent = s.put(parent, ckpt(j, {"x": os.urandom(2048)}, {"x": j + 1}), md(j), {"x": j + 1})
                s.put_writes(parent, [("x", os.urandom(512))], f"task-{j}")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def reader() -> None:
        try:
            while not stop.is_set():
                for i in range(4):
                    for tup in s.list(cfg(f"w{i}"), limit=3):
                        assert len(tup.checkpoint["channel_values"]["x"]) == 2048
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert errors == []
    assert s.env.info()["map_size"] > 32 * 1024
    assert all(len(list(s.list(cfg(f"w{i}")))) == 60 for i in range(4))
    s.close()


def test_map_full_at_the_maximum(tmp_path):
    """STYLE §F: past max_map_size the error says what and how to fix it; nothing of that call is stored."""
    s = LmdbSaver(tmp_path / "env", map_size=64 * 1024, max_map_size=256 * 1024)
    stored = []
    with pytest.raises(LmdbMapFullError) as info:
        parent = cfg()
        for i in range(1000):
            c = ckpt(i, {"x": os.urandom(8192)}, {"x": i + 1})
            parent = s.put(parent, c, md(i), {"x": i + 1})
            stored.append(parent)
    assert str(info.value) == "LMDB map is full (map_size=262144). Pass a larger max_map_size to LmdbSaver(...)."
    assert info.value.filename == s.path
    assert ids(s.list(cfg())) == [c["configurable"]["checkpoint_id"] for c in reversed(stored)]
    assert len(stored) > 10
    s.close()


# --- full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 512 KiB tmpfs; skipped where mounting is impossible (not root, no CAP_SYS_ADMIN)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root; test_file_size_limit covers the same path")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()}); test_file_size_limit covers the same path")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_is_a_clear_error_and_keeps_committed_checkpoints(small_tmpfs):
    """DESIGN §4/issue 3 acceptance 3: ENOSPC -> LmdbDiskFullError (OSError) naming the path; committed data stays."""
    path = small_tmpfs / "env"
    s = LmdbSaver(path)
    stored = []
    with pytest.raises(LmdbDiskFullError) as info:
        parent = cfg()
        for i in range(1000):
            parent = s.put(parent, ckpt(i, {"x": os.urandom(16384)}, {"x": i + 1}), md(i), {"x": i + 1})
            stored.append(parent)
    err = info.value
    assert isinstance(err, OSError) and err.errno == errno.ENOSPC and err.filename == s.path
    assert str(err) == (
        f"LmdbSaver: writing a checkpoint in LMDB environment {s.path!r}: No space left on device (errno 28). "
        "Nothing of this call was stored; committed data is intact. Free space on that file system or move the environment."
    )
    assert len(stored) > 5
    # still usable for reading in the same process, and after reopening
    assert ids(s.list(cfg())) == [c["configurable"]["checkpoint_id"] for c in reversed(stored)]
    s.close()
    with LmdbSaver(path) as again:
        assert ids(again.list(cfg())) == [c["configurable"]["checkpoint_id"] for c in reversed(stored)]
        assert len(again.get_tuple(cfg()).checkpoint["channel_values"]["x"]) == 16384


FSIZE_CHILD = r"""
import os, resource, signal, sys
from lgembed.checkpoint._id import uuid6
from lgembed.checkpoint.lmdb import LmdbSaver, LmdbDiskFullError
path = sys.argv[1]
saver = LmdbSaver(path)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
limit = os.path.getsize(os.path.join(saver.path, "data.mdb")) + 300 * 1024
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
parent = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
n = 0
try:
    for i in range(1000):
        c = {"v": 4, "id": str(uuid6(clock_seq=i)), "ts": "", "channel_values": {"x": os.urandom(16384)},
             "channel_versions": {"x": i + 1}, "versions_seen": {}, "updated_channels": ["x"]}
        parent = saver.put(parent, c, {"source": "loop", "step": i, "parents": {}}, {"x": i + 1})
        n += 1
except LmdbDiskFullError as e:
    print(n, e.errno, str(e), sep="\n")
    print(saver.get_tuple({"configurable": {"thread_id": "t"}}).metadata["step"])
"""


def test_file_size_limit_is_a_disk_full_error(tmp_path):
    """DESIGN §4: a file size limit (RLIMIT_FSIZE -> EFBIG) is reported like a full disk; committed data stays."""
    script = tmp_path / "child.py"
    script.write_text(FSIZE_CHILD)
    path = tmp_path / "env"
    proc = subprocess.run([sys.executable, str(script), str(path)], env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    count, code, message, last_step = proc.stdout.splitlines()
    assert int(code) == errno.EFBIG
    assert message.startswith(f"LmdbSaver: writing a checkpoint in LMDB environment {os.path.realpath(path)!r}: File too large")
    assert int(count) > 5 and int(last_step) == int(count) - 1
    with LmdbSaver(path) as s:
        assert len(list(s.list(cfg()))) == int(count)


# --- loading never imports or calls -----------------------------------------------------


_PAYLOAD_AT = {"blobs": ("blobs", 0), "checkpoints": ("checkpoints", 0), "metadata": ("checkpoints", 3), "writes": ("writes", 1)}
# where each stored value sits: record kind, index of its (tag, bytes) pair in the record


def _replace_value(saver, what: str, payload_value) -> None:
    """Overwrites one stored value in every record of a kind with a crafted msgpack payload (as an attacker with write access)."""
    data = msgpack.packb(payload_value, use_bin_type=True)
    kind, at = _PAYLOAD_AT[what]
    with saver.env.begin(write=True) as txn:
        db = saver.env.open_db(b"lgembed.records", txn=txn, create=False)
        for key, raw in list(txn.cursor(db=db)):
            if kind_of(key) != KINDS[kind]:
                continue
            record = msgpack.unpackb(raw, raw=False)
            record[at : at + 2] = ["msgpack", data]
            txn.put(key, msgpack.packb(record, use_bin_type=True), db=db)


@pytest.mark.parametrize("db_name", ["blobs", "checkpoints", "metadata", "writes"])
@pytest.mark.parametrize(
    ("ext", "message"),
    [
        (msgpack.ExtType(0, msgpack.packb(["os", "system", "touch pwned"])), "Refusing to load 'os:system' (msgpack ext 0)"),
        (msgpack.ExtType(1, msgpack.packb(["subprocess", "run", [["touch", "pwned"]]])), "Refusing to load 'subprocess:run'"),
        (msgpack.ExtType(3, msgpack.packb(["os", "system", "touch pwned", "system"])), "Refusing to call os:system.system"),
        (msgpack.ExtType(2, msgpack.packb(["lgembed_never_imported_mod", "Evil", {}])), "Refusing to load 'lgembed_never_imported_mod:Evil'"),
    ],
)
def test_crafted_record_is_refused_on_load(saver, monkeypatch, tmp_path, db_name, ext, message):
    """DESIGN §4/issue 3 acceptance 3: a stored record naming a module or callable is refused: no import, no call."""
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a))
    monkeypatch.chdir(tmp_path)
    stored = put_chain(saver, 1)[0]
    saver.put_writes(stored, [("x", 1)], "task")
    _replace_value(saver, db_name, {"x": ext} if db_name == "checkpoints" else ext)
    with pytest.raises(DeserializationError, match=re.escape(message)):
        saver.get_tuple(cfg())
    with pytest.raises(DeserializationError):
        list(saver.list(cfg()))
    assert calls == []
    assert "lgembed_never_imported_mod" not in sys.modules
    assert not os.path.exists(tmp_path / "pwned")


# --- unknown types at write time ------------------------------------------------------------


class Opaque:
    pass


@dataclasses.dataclass
class Unregistered:
    value: int


def test_unknown_types_fail_at_write_time_with_the_serde_message(saver):
    """DESIGN §4/issue 3 acceptance 3: an unknown type fails when written, with the documented message; nothing is stored."""
    name = f"{Opaque.__module__}.{Opaque.__qualname__}"
    msg = (
        f"Cannot serialize object of type '{name}' for a checkpoint: not a supported type. "
        "Convert it to plain data (dict/list/str/...) or to a dataclass registered with "
        "MsgpackSerializer(allowed_types=[...])."
    )
    with pytest.raises(TypeError, match=re.escape(msg)):
        saver.put(cfg(), ckpt(0, {"ok": 1, "bad": Opaque()}), md(), {"ok": 1, "bad": 1})
    assert saver.get_tuple(cfg()) is None
    assert entries(saver, "blobs") == 0
    dname = f"{Unregistered.__module__}.{Unregistered.__qualname__}"
    dmsg = (
        f"Cannot serialize object of type '{dname}' for a checkpoint: not a supported type. "
        f"Register it with MsgpackSerializer(allowed_types=[{dname}]) or convert it to "
        "plain data (dict/list/str/...)."
    )
    stored = saver.put(cfg(), ckpt(0, {"ok": 1}), md(), {"ok": 1})
    with pytest.raises(TypeError, match=re.escape(dmsg)):
        saver.put_writes(stored, [("ok", 2), ("bad", Unregistered(1))], "task")
    assert saver.get_tuple(cfg()).pending_writes == []
    with LmdbSaver(saver.env, serde=MsgpackSerializer(allowed_types=[Unregistered])) as registered:
        registered.put_writes(stored, [("ok", Unregistered(2))], "task")
        assert registered.get_tuple(cfg()).pending_writes == [("task", "ok", Unregistered(2))]


# --- processes -------------------------------------------------------------------------------


WRITER_CHILD = r"""
import sys
from lgembed.checkpoint._id import uuid6
from lgembed.checkpoint.lmdb import LmdbSaver
path, name, shared_id = sys.argv[1], sys.argv[2], sys.argv[3]
with LmdbSaver(path, map_size=64 * 1024) as saver:
    parent = {"configurable": {"thread_id": name, "checkpoint_ns": ""}}
    shared = {"configurable": {"thread_id": "shared", "checkpoint_ns": "", "checkpoint_id": shared_id}}
    for i in range(150):
        c = {"v": 4, "id": str(uuid6(clock_seq=i)), "ts": "", "channel_values": {"x": [name, i] * 50},
             "channel_versions": {"x": i + 1}, "versions_seen": {}, "updated_channels": ["x"]}
        parent = saver.put(parent, c, {"source": "loop", "step": i, "parents": {}}, {"x": i + 1})
        saver.put_writes(shared, [("log", (name, i))], f"{name}-{i:04d}")
print("ok")
"""


def test_two_processes_write_one_environment(tmp_path):
    """DESIGN §4: several processes write one environment at once (LMDB's lock file); nothing is lost."""
    path = tmp_path / "env"
    script = tmp_path / "writer.py"
    script.write_text(WRITER_CHILD)
    with LmdbSaver(path, map_size=64 * 1024) as s:
        shared = put_chain(s, 1, thread="shared")[0]
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), str(path), name, shared["configurable"]["checkpoint_id"]],
                env=_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("p1", "p2")
        ]
        # this process writes too, meanwhile
        put_chain(s, 100, thread="parent", value=lambda i: "y" * 500)
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and out == "ok\n", err
        for name in ("p1", "p2"):
            history = list(s.list(cfg(name)))
            assert [t.metadata["step"] for t in history] == list(range(149, -1, -1))
            assert history[0].checkpoint["channel_values"]["x"] == [name, 149] * 50
        writes = s.get_tuple(shared).pending_writes
        assert sorted(w[2] for w in writes) == sorted([["p1", i] for i in range(150)] + [["p2", i] for i in range(150)])
        assert len(list(s.list(cfg("parent")))) == 100


# --- durability and fsync counts -----------------------------------------------------------------


FSYNC_CHILD = r"""
import os, sys
from lgembed.checkpoint._id import uuid6
from lgembed.checkpoint.lmdb import LmdbSaver
path, policy, flush_every, durability, action, n = sys.argv[1:]
saver = LmdbSaver(path, fsync=policy, flush_every=int(flush_every) or None)
base = {"thread_id": "t", "checkpoint_ns": ""}
if durability != "-":
    base["__pregel_durability"] = durability
def put(parent, i):
    c = {"v": 4, "id": str(uuid6(clock_seq=i)), "ts": "", "channel_values": {"x": i},
         "channel_versions": {"x": i + 1}, "versions_seen": {}, "updated_channels": ["x"]}
    return saver.put({"configurable": {**base, **parent["configurable"]}}, c, {"source": "loop", "step": i, "parents": {}}, {"x": i + 1})
first = put({"configurable": {}}, 0)  # creates the databases before the measured part
os.umask(0o077)  # marker: the measured part starts
for i in range(int(n)):
    if action == "put":
        put(first, i + 1)
    elif action == "writes":
        saver.put_writes({"configurable": {**base, **first["configurable"]}}, [("x", i)], f"task{i}")
    elif action == "interrupt":
        saver.put_writes({"configurable": {**base, **first["configurable"]}}, [("__interrupt__", [i])], f"task{i}")
    elif action == "sync":
        saver.sync()
os.umask(0o077)  # marker: the measured part ends
saver.close()
"""


def _fdatasyncs(tmp_path, policy: str, flush_every: int, durability: str, action: str, n: int) -> int:
    script = tmp_path / "fsync_child.py"
    script.write_text(FSYNC_CHILD)
    trace = tmp_path / "trace"
    env_dir = tmp_path / f"env-{policy}-{flush_every}-{durability}-{action}"
    proc = subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync,umask", "-o", str(trace),
         sys.executable, str(script), str(env_dir), policy, str(flush_every), durability, action, str(n)],
        env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = trace.read_text().splitlines()
    marks = [i for i, line in enumerate(lines) if "umask(" in line]
    return sum(1 for line in lines[marks[-2] : marks[-1]] if "fsync(" in line or "fdatasync(" in line)


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is needed to count fsync calls")
@pytest.mark.parametrize(
    ("policy", "flush_every", "durability", "action", "n", "expected"),
    [
        ("deferred", 0, "-", "put", 10, 0),  # default: no fsync per checkpoint
        ("deferred", 0, "async", "put", 10, 0),
        ("deferred", 0, "sync", "put", 10, 10),  # durability="sync": one per checkpoint
        ("deferred", 0, "sync", "writes", 10, 0),  # ... but none per pending write
        ("deferred", 0, "sync", "interrupt", 3, 3),  # ... except a recorded interrupt
        ("deferred", 5, "-", "put", 10, 2),  # flush_every=5
        ("deferred", 0, "-", "sync", 4, 4),  # saver.sync()
        ("commit", 0, "-", "put", 10, 10),  # LMDB syncs each commit
        ("commit", 0, "-", "writes", 10, 10),
        ("commit", 0, "sync", "put", 10, 20),  # + the meta page flush for "sync"
        ("always", 0, "sync", "put", 10, 10),  # LMDB syncs data and meta itself: nothing extra
    ],
)
def test_fsync_count_per_checkpoint(tmp_path, policy, flush_every, durability, action, n, expected):
    """DESIGN §4/issue 3: the fsync cost of each policy is exactly the one documented in lgembed.checkpoint.lmdb."""
    assert _fdatasyncs(tmp_path, policy, flush_every, durability, action, n) == expected


def test_sync_and_close_flush(tmp_path):
    """DESIGN §4: sync() flushes; the last close of an environment opened here flushes too."""
    s = LmdbSaver(tmp_path / "env")
    put_chain(s, 2)
    s.sync()
    s.flush()
    s.close()
    with LmdbSaver(tmp_path / "env") as again:
        assert len(list(again.list(cfg()))) == 2


# --- retention ----------------------------------------------------------------------------------


def test_keep_last_keeps_the_newest_checkpoints(tmp_path):
    """DESIGN §4 (retention): keep_last=N keeps N per (thread, ns), with their writes and values; the rest goes."""
    with LmdbSaver(tmp_path / "env", keep_last=3) as s:
        first = s.put(cfg(), ckpt(0, {"const": "C", "x": 0}, {"const": 1, "x": 1}), md(0), {"const": 1, "x": 1})
        s.put_writes(first, [("x", "old")], "task")
        configs = [first]
        for i in range(1, 10):
            configs.append(s.put(configs[-1], ckpt(i, {"x": i}, {"const": 1, "x": i + 1}), md(i), {"x": i + 1}))
            s.put_writes(configs[-1], [("x", f"w{i}")], "task")
        child = put_chain(s, 5, ns="child:1")
        assert ids(s.list(cfg())) == [c["configurable"]["checkpoint_id"] for c in reversed(configs[-3:])]
        assert ids(s.list(cfg(ns="child:1"))) == [c["configurable"]["checkpoint_id"] for c in reversed(child[-3:])]
        oldest = s.get_tuple(configs[-3])
        assert oldest.checkpoint["channel_values"] == {"const": "C", "x": 7}  # a value stored at step 0 stays
        assert oldest.pending_writes == [("task", "x", "w7")]
        assert s.get_tuple(configs[0]) is None
        assert entries(s, "checkpoints") == 6
        assert entries(s, "writes") == 3
        assert entries(s, "blobs") == 1 + 3 + 3  # const, x@7..9, child x@3..5


class LoopState(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]


def _loop_graph(saver):
    from lgembed.graph import END, START, StateGraph

    g = StateGraph(LoopState)
    g.add_node("inc", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: END if s["n"] >= 6 else "inc", ["inc", END])
    return g.compile(checkpointer=saver)


def test_keep_last_with_a_graph(tmp_path):
    """DESIGN §4 (retention): a graph runs and resumes normally with keep_last; history is the last N."""
    with LmdbSaver(tmp_path / "env", keep_last=2) as s:
        graph = _loop_graph(s)
        config = {"configurable": {"thread_id": "1"}}
        assert graph.invoke({"n": 0, "log": []}, config) == {"n": 6, "log": [0, 1, 2, 3, 4, 5]}
        history = list(graph.get_state_history(config))
        assert len(history) == 2 and history[0].values == {"n": 6, "log": [0, 1, 2, 3, 4, 5]}
        assert graph.invoke({"n": 0}, config)["log"] == [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]


def test_copy_thread_applies_keep_last(tmp_path):
    """P-12 (copy_thread) with retention: the target is trimmed like any other thread."""
    with LmdbSaver(tmp_path / "env") as s:
        put_chain(s, 5, thread="src")
    with LmdbSaver(tmp_path / "env", keep_last=2) as s:
        assert len(list(s.list(cfg("src")))) == 5  # retention applies to new puts only
        s.copy_thread("src", "dst")
        assert [t.metadata["step"] for t in s.list(cfg("dst"))] == [4, 3]


def test_prune_sweeps_everything_unreferenced(saver):
    """P-12 (prune): keep_latest leaves only what the newest checkpoints reference (blobs, writes)."""
    configs = put_chain(saver, 5)
    saver.put_writes(configs[0], [("x", 1)], "t0")
    saver.put_writes(configs[-1], [("x", 2)], "t4")
    saver.put_writes(cfg(checkpoint_id=str(uuid.uuid4())), [("x", 3)], "orphan")  # no such checkpoint
    saver.prune(["t"])
    assert entries(saver, "checkpoints") == 1
    assert entries(saver, "blobs") == 1
    assert entries(saver, "writes") == 1


# --- the engine on LMDB ---------------------------------------------------------------------------


def test_interrupt_survives_a_restart(tmp_path):
    """§6/DESIGN §4: a graph paused by interrupt() resumes from a new process's saver (here: a reopened one)."""
    from lgembed.graph import END, START, StateGraph
    from lgembed.types import Command, interrupt

    class S(TypedDict, total=False):
        answer: str
        log: Annotated[list, operator.add]

    def build(saver):
        g = StateGraph(S)
        g.add_node("ask", lambda s: {"answer": interrupt("question?"), "log": ["asked"]})
        g.add_node("done", lambda s: {"log": [f"got {s['answer']}"]})
        g.add_edge(START, "ask")
        g.add_edge("ask", "done")
        g.add_edge("done", END)
        return g.compile(checkpointer=saver)

    config = {"configurable": {"thread_id": "hitl"}}
    with LmdbSaver(tmp_path / "env") as s:
        out = build(s).invoke({"log": []}, config)
        assert out["__interrupt__"][0].value == "question?"
    with LmdbSaver(tmp_path / "env") as s:
        graph = build(s)
        assert graph.get_state(config).next == ("ask",)
        assert graph.invoke(Command(resume="yes"), config) == {"answer": "yes", "log": ["asked", "got yes"]}
