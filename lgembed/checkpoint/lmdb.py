"""LmdbSaver: checkpoints in an LMDB environment, the embedded default.

Why this module exists: a device must keep its graphs' state across restarts and
power cuts, cheaply, in one directory, without a database server. LMDB gives
atomic, crash-consistent transactions with one writer and many lock-free readers,
across threads and processes. The observable behaviour of every saver method is
InMemorySaver's (`lgembed.checkpoint.memory`, the reference); only where things are
kept differs.

Layout: one environment (a directory: `data.mdb`, `lock.mdb`) holds one named
database, `lgembed.records`, for everything of every thread (and `lgembed.format`, the
format version of each kind of data, shared with LmdbStore): channel values (`b`),
checkpoints (`c`, full or delta records) and pending writes (`w`), grouped by thread
and namespace so that "latest" and `list()` are cursor scans. The record format (the
key layout, version encoding and delta records) is `lgembed.checkpoint._lmdb_records`.
`get_next_version` returns ints, `(n + 1) << 32 | 32 random bits` (L-49: any
increasing comparable values), so a checkpoint record holds 9-byte versions instead of
LangGraph's 45-character strings; the random bits keep a fork (a run resumed from an
older checkpoint) from reusing a version of the branch it left, whose checkpoints still
read their values (a 2**-32 chance per version that it does, as InMemorySaver's random
fraction has a tiny one). A thread that already has LangGraph-format string versions
keeps getting strings (the engine compares versions).

Values are serialized by the saver's `serde` (`MsgpackSerializer` by default: a
closed set of types, loading never imports or calls what a record names). A
channel value is stored once per `(thread, ns, channel, version)`, only for the
channels in `new_versions`, like InMemorySaver; a version without value (an empty
channel, InMemorySaver's "empty" blob) stores no record and removes one stored
before under the same version, and loading skips what is missing. Metadata is part of
the checkpoint record (one put per checkpoint; `list(filter=...)` reads the record).
`list(None)` walks threads and namespaces in key (byte) order, newest checkpoint
first within each namespace (InMemorySaver walks threads in first-write order).
Format 1 (lgembed 0.1: four databases, string versions) is refused with an
`LmdbCorruptError` that says so.

Durability. Each `put`, each `put_writes` and each `put_step` (the engine's call at
the end of a superstep: the step's writes and the new checkpoint) is one LMDB
transaction. A committed
transaction is in the OS page cache, which survives the death of the process, so a
SIGKILL, an OOM kill or an unhandled exception never loses a committed checkpoint
and never leaves a half-written one (tests/test_crash_lmdb.py kills a writer 50
times). What a power cut or kernel crash can lose depends on when the data reaches
the disk, set by `fsync=`. fsync counts are exact (strace, LMDB 0.9.36, pinned by
tests/test_lmdb_saver.py::test_fsync_count_per_checkpoint); times are the saver's
`put_step` cost per superstep of a 10-node chain (1.2 calls per superstep, fresh
thread per run, format 2) on the 2-core x86 CI host, ext4 on a virtio disk, where an
fdatasync costs about 0.1-0.3 ms (an SD card or eMMC: 2-20 ms); InMemorySaver: 19 us:

===========  ==============  ======================  ==========  =========  ===================================
`fsync=`     lmdb.open       fsyncs                  us per      SIGKILL    power cut loses
             flags                                   superstep   loses
===========  ==============  ======================  ==========  =========  ===================================
"deferred"   sync=False      0 per commit            40          nothing    the commits since the last flush;
(default)                                                                   LMDB warns that if the file system
                                                                            reorders writes, such a cut can
                                                                            leave the file inconsistent; LMDB
                                                                            0.9 has no page checksums, so that
                                                                            shows only when a damaged page is
                                                                            read (LmdbCorruptError)
  + run durability "sync"    1 per checkpoint        350        nothing    nothing once `put` returned
"commit"     sync=True,      1 fdatasync per commit  350        nothing    at most the last commit; the file is
             metasync=False  (+1 per "sync" put)                           always consistent
"always"     sync=True,      1 fdatasync + 1         410        nothing    nothing committed
             metasync=True   O_DSYNC meta write
                             per commit
===========  ==============  ======================  ==========  =========  ===================================

Why "deferred" is the default: it maps LangGraph's default durability ("async": the
step goes on while the checkpoint is saved) and "exit" onto "committed, flushed
later", so a killed process loses nothing and only a power cut can lose the last
steps, at the cost of no fsync per step. That keeps flash wear low and makes a
checkpointed superstep 13x to 16x cheaper than LangGraph's SqliteSaver (chain10, end
to end: 73 to 81 us vs 977 to 1219 us over two full runs of tools/bench.py, see
BENCHMARKS.md; most of the difference is SqliteSaver's 23 fdatasync per invoke). Devices that lose power often and write
rarely should pass `fsync="commit"`, or run graphs with `durability="sync"`.

Flushes (one fdatasync each, making everything committed so far durable) happen:

- after `put` when the run's durability is "sync" (the engine tells the saver through
  `config["configurable"]["__pregel_durability"]`, LangGraph's CONFIG_KEY_DURABILITY),
  and after a `put_writes` under "sync" that records an interrupt (the last record a
  run writes before it pauses for a human). Pending writes of other tasks are not
  flushed one by one: the step's checkpoint flush covers them, so a "sync" run costs
  one fdatasync per superstep, not one per task;
- after every `flush_every`-th `put` of this saver, when given (flash wear:
  `flush_every=10` bounds what a power cut loses to the last 9 checkpoints, at one
  fdatasync per 10 steps);
- when `saver.sync()` is called, and when the last user of the environment closes it.

With "always" the flushes above are skipped (LMDB already synced). Under "deferred",
the kernel also writes dirty pages back by itself (`vm.dirty_expire_centisecs`, 30 s
on stock Linux).

Retention: `keep_last=N` keeps the newest N checkpoints of each (thread, namespace);
each `put` removes older ones in the same transaction, with their pending writes
and the channel values no kept checkpoint references (cost: reading the N kept
records per put). Their `parent_config` then names a removed checkpoint, as after
`prune`.

Growth and errors: the map starts at `map_size` and doubles on demand up to
`max_map_size` (then `LmdbMapFullError`). A full file system raises
`LmdbDiskFullError` (an `OSError` with `errno` ENOSPC/EDQUOT/EFBIG naming the
directory) and stores nothing of that call. All LMDB errors surface as `LmdbError`
subclasses; a value the serializer refuses raises its TypeError before anything is
written; a stored value it refuses to load raises `DeserializationError`.

Concurrency: any number of threads and processes may use one environment. LMDB
allows one write transaction at a time (threads of this process queue on a Python
lock, other processes on LMDB's lock file); readers do not wait for writers (only,
briefly, for a map growth) and see committed data only. One environment is opened once per process (see
`lgembed.checkpoint._lmdb_env.ENVIRONMENTS`).

Why this file is longer than 600 lines: it is one class, the saver's reads, puts and
maintenance over one transaction discipline (each method one transaction, retention
and delta rewrites inside it); the record format it writes lives apart.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from lgembed.checkpoint._lmdb_env import (
    EnvUser,
    check_options,
    DEFAULT_MAP_SIZE,
    DEFAULT_MAX_MAP_SIZE,
    ENVIRONMENTS,
    FSYNC_POLICIES,
    UPPER,
    LmdbCorruptError,
    LmdbDiskFullError,
    LmdbError,
    LmdbMapFullError,
    decode_parts,
    enc,
    enc_name,
    parts_end,
)
from lgembed.checkpoint._lmdb_records import (
    BLOB,
    CHECKPOINT,
    DELTA_DEPTH_MAX,
    FORMAT_VERSION,
    IDX,
    IDX_BIAS,
    READABLE_FORMATS,
    RECORDS,
    WRITE,
    delta_of,
    enc_version,
    kind_of,
    resolve_checkpoint,
    write_owner,
)
from lgembed.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from lgembed.checkpoint.serde import thread_pack

__all__ = (
    "ENVIRONMENTS",
    "FSYNC_POLICIES",
    "LmdbCorruptError",
    "LmdbDiskFullError",
    "LmdbError",
    "LmdbMapFullError",
    "LmdbSaver",
)

_DURABILITY_KEY = "__pregel_durability"
# LangGraph's CONFIG_KEY_DURABILITY: the run's durability, when the caller chose one
_INTERRUPT = "__interrupt__"
_PRUNE_STRATEGIES = ("keep_latest", "delete")
_COUNTER_SHIFT = 32
# get_next_version: counter << 32 | 32 random bits
_PUT_MEMO_MAX = 64
# (thread, ns) groups whose last put a saver remembers (the base of the next put's delta)


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}


class LmdbSaver(EnvUser, BaseCheckpointSaver[int]):
    """A checkpoint saver that keeps checkpoints in an LMDB environment (a directory).

    Example:
        ```python
        with LmdbSaver.from_conn_string("/var/lib/myagent/state") as saver:
            graph = builder.compile(checkpointer=saver)
            graph.invoke(inputs, {"configurable": {"thread_id": "1"}})
        ```

    Args:
        path: the environment directory (created if missing), or an open
            `lmdb.Environment` (same as `env=`).
        env: an open `lmdb.Environment` the caller owns and closes; it needs
            `max_dbs` >= 8. Its `sync`/`metasync` flags are the fsync policy.
        map_size: initial map size in bytes when the environment is opened here.
        max_map_size: the map doubles on demand up to this size.
        fsync: "deferred" (default), "commit" or "always"; see the module docstring.
            None takes the policy of an environment already open (or "deferred").
        flush_every: flush to disk after every N checkpoints this saver puts.
        keep_last: keep only the newest N checkpoints per (thread, namespace).
        serde: serializer of checkpoints, metadata, values and writes.

    Raises:
        ValueError: for an invalid option, or an fsync policy that differs from the
            one of the environment already open for this path.
        TypeError: when `env` is not an `lmdb.Environment`.
        LmdbError: when the environment cannot be opened or has an unknown format.
    """

    _lg_serializes_on_put = True
    # put() serializes the checkpoint before returning: the engine may pass live dicts

    def __init__(
        self,
        path: str | os.PathLike | Any | None = None,
        *,
        env: Any = None,
        map_size: int = DEFAULT_MAP_SIZE,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
        fsync: str | None = None,
        flush_every: int | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        path, env = check_options(path, env, map_size, max_map_size, flush_every=flush_every, keep_last=keep_last)
        self.max_map_size = max_map_size
        self.flush_every = flush_every
        self.keep_last = keep_last
        self._puts_since_flush = 0
        self._counter_lock = threading.Lock()
        self._put_memo: dict[bytes, tuple] = {}
        # group -> (checkpoint_id, record bytes, channel_versions, versions_seen, depth)
        # of its last put here: the base of the next put's delta (checked against the
        # stored record inside the write transaction)
        (self._records,) = self._attach(
            path,
            env=env,
            fsync=fsync,
            map_size=map_size,
            kind="checkpoint",
            version=FORMAT_VERSION,
            readable=READABLE_FORMATS,
            names=(RECORDS,),
        )

    # --- lifecycle ------------------------------------------------------------------

    @property
    def fsync(self) -> str:
        """The fsync policy in force ("deferred", "commit" or "always")."""
        return self._shared.fsync

    def __repr__(self) -> str:
        return f"LmdbSaver({self.path!r}, fsync={self.fsync!r}, keep_last={self.keep_last!r})"

    def flush(self) -> None:
        """Alias of `sync()`."""
        self.sync()

    async def __aenter__(self) -> LmdbSaver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __copy__(self) -> LmdbSaver:
        # with_allowlist() clones the saver: the clone is one more user of the environment
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._shared = ENVIRONMENTS.retain(self._shared)
        clone._closed = False
        clone._counter_lock = threading.Lock()
        clone._put_memo = {}
        return clone

    # --- records --------------------------------------------------------------------

    def _loads(self, raw: bytes, what: str, size: int = 2) -> list:
        """A stored msgpack array of at least `size` items.

        Raises:
            LmdbCorruptError: when the bytes are not such an array.
        """
        from msgpack import unpackb

        try:
            record = unpackb(raw, raw=False)
        except Exception as e:
            msg = f"LmdbSaver: a stored {what} record in {self.path!r} is not readable ({type(e).__name__}: {e})"
            raise LmdbCorruptError(msg, path=self.path) from e
        if type(record) is not list or len(record) < size or type(record[0]) is not str:
            msg = f"LmdbSaver: a stored {what} record in {self.path!r} is not readable (unexpected layout)"
            raise LmdbCorruptError(msg, path=self.path)
        return record

    def _checkpoint_record(self, raw: bytes) -> list:
        """[tag, checkpoint, parent id, metadata tag, metadata] (metadata tag checked too)."""
        record = self._loads(raw, "checkpoint", 5)
        if type(record[3]) is not str:
            msg = f"LmdbSaver: a stored checkpoint record in {self.path!r} is not readable (unexpected layout)"
            raise LmdbCorruptError(msg, path=self.path)
        return record

    def _checkpoint_of(self, txn: Any, key: bytes, record: list) -> dict:
        """The checkpoint (without channel_values) of the record stored under `key`.

        Raises:
            LmdbCorruptError: when a delta record's parents cannot be read.
        """
        if len(record) < 7:
            return self._typed(record)
        db = self._records
        try:
            return resolve_checkpoint(lambda k: txn.get(k, db=db), key, record, self.serde.loads_typed)
        except (ValueError, TypeError, LookupError) as e:
            msg = f"LmdbSaver: a stored checkpoint record in {self.path!r} is not readable ({e})"
            raise LmdbCorruptError(msg, path=self.path) from e

    def _make_full(self, txn: Any, key: bytes, raw: bytes) -> None:
        """Rewrites a delta record as a full one (before a record it needs goes)."""
        record = self._checkpoint_record(raw)
        if len(record) < 7:
            return
        checkpoint = self._checkpoint_of(txn, key, record)
        txn.put(key, thread_pack()([*self.serde.dumps_typed(checkpoint), *record[2:5]]), db=self._records)

    def _make_group_full(self, txn: Any, group: bytes, skip: Any = ()) -> None:
        """Rewrites every delta record of a group (but `skip`) as a full one."""
        prefix = group + CHECKPOINT
        cur = txn.cursor(db=self._records)
        found = []
        if cur.set_range(prefix):
            for key, raw in cur:
                if not key.startswith(prefix):
                    break
                if key not in skip and raw[:1] == b"\x97":  # a 7-item array: a delta record
                    found.append((key, raw))
        for key, raw in found:
            self._make_full(txn, key, raw)

    def _typed(self, record: list, start: int = 0) -> Any:
        return self.serde.loads_typed((record[start], record[start + 1]))

    def _load_blobs(self, txn: Any, group: bytes, versions: ChannelVersions) -> dict[str, Any]:
        values: dict[str, Any] = {}
        prefix = group + BLOB
        db = self._records
        for channel, version in versions.items():
            raw = txn.get(prefix + enc_name(channel) + enc_version(version), db=db)
            if raw is None:
                continue  # a version without value (an empty channel), or removed by retention
            values[channel] = self._typed(self._loads(raw, "channel value"))
        return values

    def _load_writes(self, txn: Any, prefix: bytes) -> list[tuple[str, str, Any]]:
        stored = []
        cur = txn.cursor(db=self._records)
        if cur.set_range(prefix):
            for wkey, raw in cur:
                if not wkey.startswith(prefix):
                    break
                record = self._loads(raw, "pending write", 4)
                task_id = decode_parts(wkey[len(prefix) :], 1)[0]
                idx = IDX.unpack(wkey[-8:])[0] - IDX_BIAS
                stored.append((writes_sort_key(record[3], task_id, idx), task_id, record))
        stored.sort(key=lambda item: item[0])
        return [(task_id, record[0], self._typed(record, 1)) for _, task_id, record in stored]

    def _make_tuple(
        self,
        txn: Any,
        config: RunnableConfig,
        thread_id: str,
        checkpoint_ns: str,
        key: bytes,
        record: list,
        metadata: Any = None,
    ) -> CheckpointTuple:
        """The tuple of the checkpoint stored under `key` (record already parsed)."""
        at = parts_end(key, 2)
        checkpoint: dict[str, Any] = self._checkpoint_of(txn, key, record)
        parent_id = record[2]
        if metadata is None:
            metadata = self._typed(record, 3)
        return CheckpointTuple(
            config=config,
            checkpoint={  # type: ignore[typeddict-item]
                **checkpoint,
                "channel_values": self._load_blobs(txn, key[:at], checkpoint["channel_versions"]),
            },
            metadata=metadata,
            parent_config=_config(thread_id, checkpoint_ns, parent_id) if parent_id else None,
            pending_writes=self._load_writes(txn, key[:at] + WRITE + key[at + 1 :]),
        )

    # --- scans (call inside a transaction) --------------------------------------------

    @staticmethod
    def _last_below(cur: Any, prefix: bytes, upper: bytes) -> bytes | None:
        """The greatest key < `upper` that starts with `prefix`, or None; leaves `cur` on it."""
        found = cur.prev() if cur.set_range(upper) else cur.last()
        if not found:
            return None
        key = cur.key()
        return key if key.startswith(prefix) else None

    @staticmethod
    def _next_group(cur: Any, seek: bytes, outer: bytes) -> bytes | None:
        """The (thread, ns) prefix of the first key >= `seek` within `outer`, or None."""
        if not cur.set_range(seek):
            return None
        key = cur.key()
        if not key.startswith(outer):
            return None
        return key[: parts_end(key, 2)]

    # --- read ---------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint `config` addresses, or the latest of its thread and namespace (P-10).

        With a `checkpoint_id` the returned tuple's `config` is `config` itself (as
        InMemorySaver); otherwise a new config naming the latest checkpoint.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
            LmdbError: when the environment cannot be read.
            DeserializationError: when a stored value names a type the serializer refuses.
        """
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = config["configurable"].get("checkpoint_ns") or ""
        checkpoint_id = get_checkpoint_id(config)
        prefix = enc_name(thread_id) + enc_name(checkpoint_ns) + CHECKPOINT
        with self._shared.read("LmdbSaver: reading a checkpoint") as txn:
            if checkpoint_id:
                key = prefix + enc(checkpoint_id)
                raw = txn.get(key, db=self._records)
                if raw is None:
                    return None
                return self._make_tuple(txn, config, thread_id, checkpoint_ns, key, self._checkpoint_record(raw))
            cur = txn.cursor(db=self._records)
            key = self._last_below(cur, prefix, prefix + UPPER)
            if key is None:
                return None
            own = _config(thread_id, checkpoint_ns, decode_parts(key[len(prefix) :], 1)[0])
            return self._make_tuple(txn, own, thread_id, checkpoint_ns, key, self._checkpoint_record(cur.value()))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoint tuples, newest first within each thread and namespace (P-11).

        Each tuple is read in its own short transaction, so a paused iterator holds no
        lock and writers are never blocked; a checkpoint deleted meanwhile is skipped.

        Args:
            config: its `thread_id` (required), `checkpoint_ns` (all namespaces when
                absent) and `checkpoint_id` (that one only, when given) restrict the
                listing; None lists every thread, in key (byte) order of thread and
                namespace.
            filter: metadata keys whose values must equal these (a missing key equals None).
            before: only checkpoints whose id is smaller than this config's `checkpoint_id`.
            limit: at most this many tuples (0 or less: none).

        Raises:
            KeyError: when `config` has no `thread_id`.
            LmdbError: when the environment cannot be read.
        """
        if limit is not None and limit <= 0:
            return
        outer = b""
        id_filter = None
        if config:
            configurable = config["configurable"]
            outer = enc(str(configurable["thread_id"]))
            ns_filter = configurable.get("checkpoint_ns")
            if ns_filter is not None:
                outer += enc(ns_filter)
            id_filter = get_checkpoint_id(config)
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        position: tuple[bytes, bytes] | None = None  # (group, exclusive upper bound in it)
        while remaining is None or remaining > 0:
            with self._shared.read("LmdbSaver: listing checkpoints") as txn:
                found = self._list_next(txn, outer, position, id_filter, before_id, filter)
                if found is None:
                    return
                position, item = found
            if remaining is not None:
                remaining -= 1
            yield item

    def _list_next(
        self,
        txn: Any,
        outer: bytes,
        position: tuple[bytes, bytes] | None,
        id_filter: str | None,
        before_id: str | None,
        filter: dict[str, Any] | None,
    ) -> tuple[tuple[bytes, bytes], CheckpointTuple] | None:
        """The next listed tuple after `position` and the position after it, or None."""
        cur = txn.cursor(db=self._records)
        if position is None:
            group = self._next_group(cur, outer, outer)
            upper = None
        else:
            group, upper = position
        while group is not None:
            prefix = group + CHECKPOINT
            if upper is None:
                upper = prefix + (enc(before_id) if before_id else UPPER)
            if id_filter:
                key: bytes | None = prefix + enc(id_filter)
                if not key < upper or not cur.set_key(key):  # type: ignore[operator]
                    key = None
            else:
                key = self._last_below(cur, prefix, upper)
            while key is not None:
                record = self._checkpoint_record(cur.value())
                metadata = self._typed(record, 3)
                if not filter or all(metadata.get(k) == v for k, v in filter.items()):
                    thread_id, ns = decode_parts(key, 2)
                    own = _config(thread_id, ns, decode_parts(key[len(prefix) :], 1)[0])
                    item = self._make_tuple(txn, own, thread_id, ns, key, record, metadata)
                    return (group, key), item
                if id_filter:
                    break
                key = cur.key() if cur.prev() and cur.key().startswith(prefix) else None
            group, upper = self._next_group(cur, group + UPPER, outer), None
        return None

    # --- write --------------------------------------------------------------------

    def _durability(self, config: RunnableConfig) -> str | None:
        return config.get("configurable", {}).get(_DURABILITY_KEY)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Stores `checkpoint` in one transaction; its parent is `config`'s `checkpoint_id` (P-12, P-13).

        Only the channels in `new_versions` get a stored value (none for an empty
        channel); metadata is merged with the config's user values
        (`get_checkpoint_metadata`). With `keep_last`, older checkpoints of the thread
        and namespace are removed in the same transaction. Flushes to disk when the
        run's durability is "sync" or `flush_every` is due.

        Returns:
            The config of the stored checkpoint.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
            TypeError: when a value cannot be serialized (nothing is stored then).
            LmdbError: when the write fails (LmdbMapFullError, LmdbDiskFullError);
                nothing is stored then.
        """
        return self.put_step(config, checkpoint, metadata, new_versions, ())

    def put_step(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        task_writes: Sequence[tuple[str, Sequence[tuple[str, Any]], str]],
    ) -> RunnableConfig:
        """`put_writes` for each `(task_id, writes, task_path)` against `config`'s checkpoint,
        then `put(config, checkpoint, ...)`, all in one transaction (one commit instead of
        several per superstep). Same results and errors as the separate calls.
        """
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns") or ""
        group = enc_name(thread_id) + enc_name(checkpoint_ns)
        rest = dict(checkpoint)
        values: dict[str, Any] = rest.pop("channel_values")
        dumps = self.serde.dumps_typed
        pack = thread_pack()
        # serialize everything first, so a bad value stores nothing
        blob_prefix = group + BLOB
        blobs = []
        cleared = []  # keys of versions without value: nothing stored (InMemorySaver: "empty")
        for channel, version in new_versions.items():
            blob_key = blob_prefix + enc_name(channel) + enc_version(version)
            if channel in values:
                blobs.append((blob_key, pack(dumps(values[channel]))))
            else:
                cleared.append(blob_key)
        write_rows: list[tuple[bytes, bytes, bool]] = []
        if task_writes:
            writes_prefix = group + WRITE + enc(configurable["checkpoint_id"])
            for task_id, writes, task_path in task_writes:
                write_rows.extend(self._write_rows(writes_prefix, writes, task_id, task_path, pack))
        key = group + CHECKPOINT + enc(checkpoint["id"])
        parent_id = configurable.get("checkpoint_id")
        meta = dumps(get_checkpoint_metadata(config, metadata))
        versions, seen = rest.get("channel_versions"), rest.get("versions_seen")
        base = self._put_memo.get(group)
        delta = None
        if base is not None and parent_id and base[0] == parent_id and parent_id != checkpoint["id"] and base[4] < DELTA_DEPTH_MAX:
            delta = delta_of(base, versions, seen)
        if delta is not None:  # format 3: the checkpoint without its versions, and what changed
            slim = dict(rest)
            slim["channel_versions"] = slim["versions_seen"] = None
            record = pack([*dumps(slim), parent_id, *meta, delta[0], delta[1]])
            parent_key = group + CHECKPOINT + enc(parent_id)
        else:
            record = pack([*dumps(rest), parent_id, *meta])
        keep_last = self.keep_last
        db = self._records
        stored: list = []

        def write(txn: Any) -> None:  # `db` is the transaction's default: positional calls
            put = txn.put
            for row_key, row, overwrite in write_rows:
                put(row_key, row, True, overwrite)  # (key, value, dupdata, overwrite)
            for blob_key, blob in blobs:
                put(blob_key, blob)
            for blob_key in cleared:
                txn.delete(blob_key)  # a value stored before under this version goes
            own = record
            if delta is not None and txn.get(parent_key) != base[1]:  # the parent is not what we remember
                own = pack([*dumps(rest), parent_id, *meta])
            if txn.get(key) is not None:  # put again: delta records must not follow it
                self._make_group_full(txn, group, (key,))
            put(key, own)
            stored[:] = [own]
            if keep_last is not None:
                self._retain(txn, group, keep_last)

        durable = self._durability(config) == "sync"
        if not durable and self.flush_every is not None:
            with self._counter_lock:
                self._puts_since_flush += 1
                if self._puts_since_flush >= self.flush_every:
                    self._puts_since_flush = 0
                    durable = True
        self._shared.write(
            write,
            owner="LmdbSaver",
            action="LmdbSaver: writing a checkpoint",
            max_map_size=self.max_map_size,
            durable=durable,
            db=db,
        )
        memo = self._put_memo
        if type(versions) is dict and type(seen) is dict and all(type(v) is dict for v in seen.values()):
            if len(memo) >= _PUT_MEMO_MAX:
                memo.clear()
            depth = base[4] + 1 if delta is not None and stored[0] is record else 0
            memo[group] = (checkpoint["id"], stored[0], dict(versions), {k: dict(v) for k, v in seen.items()}, depth)
        else:
            memo.pop(group, None)
        return _config(thread_id, checkpoint_ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Stores a task's writes against `config`'s checkpoint in one transaction (P-5).

        A regular write is keyed by its position in `writes` and kept if already
        stored; `__error__`, `__scheduled__`, `__interrupt__` and `__resume__` have a
        fixed negative index and replace the task's previous one. Under durability
        "sync", a call recording an interrupt is flushed to disk.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id` or `checkpoint_id`.
            TypeError: when a value cannot be serialized (nothing is stored then).
            LmdbError: when the write fails; nothing of this call is stored then.
        """
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_id = configurable["checkpoint_id"]
        if not writes:
            return
        checkpoint_ns = configurable.get("checkpoint_ns") or ""
        prefix = enc_name(thread_id) + enc_name(checkpoint_ns) + WRITE + enc(checkpoint_id)
        rows = self._write_rows(prefix, writes, task_id, task_path, thread_pack())
        db = self._records

        def write(txn: Any) -> None:  # `db` is the transaction's default: positional calls
            put = txn.put
            for key, row, overwrite in rows:
                put(key, row, True, overwrite)  # (key, value, dupdata, overwrite)

        durable = self._durability(config) == "sync" and any(w[0] == _INTERRUPT for w in writes)
        self._shared.write(
            write,
            owner="LmdbSaver",
            action="LmdbSaver: writing pending writes",
            max_map_size=self.max_map_size,
            durable=durable,
            db=db,
        )

    def _write_rows(
        self, prefix: bytes, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str, pack: Any
    ) -> list[tuple[bytes, bytes, bool]]:
        """Serialized (key, row, overwrite) rows of one task's writes (P-5 indexes);
        `prefix` is the checkpoint's writes prefix (thread, ns, `w`, checkpoint_id)."""
        dumps = self.serde.dumps_typed
        prefix += enc(task_id)
        rows = []
        for idx, (channel, value) in enumerate(writes):
            fixed = WRITES_IDX_MAP.get(channel, idx)
            rows.append((prefix + IDX.pack(fixed + IDX_BIAS), pack([channel, *dumps(value), task_path]), fixed < 0))
        return rows

    # --- retention and maintenance ------------------------------------------------------

    def _versions(self, txn: Any, key: bytes, raw: bytes) -> ChannelVersions:
        return self._checkpoint_of(txn, key, self._checkpoint_record(raw))["channel_versions"]

    def _delete_prefix(self, txn: Any, prefix: bytes) -> None:
        cur = txn.cursor(db=self._records)
        if not cur.set_range(prefix):
            return
        while cur.key().startswith(prefix):
            if not cur.delete():
                break

    def _retain(self, txn: Any, group: bytes, keep: int) -> None:
        """Keeps the newest `keep` checkpoints of one (thread, ns); removes the rest.

        Removed with them: their pending writes, and every channel value they
        reference that no kept checkpoint references.
        """
        prefix = group + CHECKPOINT
        cur = txn.cursor(db=self._records)
        key = self._last_below(cur, prefix, prefix + UPPER)
        kept: list[tuple[bytes, bytes]] = []
        removed: list[tuple[bytes, bytes]] = []
        while key is not None:
            if len(kept) < keep:
                kept.append((key, cur.value()))
            else:
                removed.append((key, cur.value()))
            key = cur.key() if cur.prev() and cur.key().startswith(prefix) else None
        if not removed:
            return
        live = {(ch, enc_version(v)) for k, raw in kept for ch, v in self._versions(txn, k, raw).items()}
        dead = {(ch, enc_version(v)) for k, raw in removed for ch, v in self._versions(txn, k, raw).items()}
        gone = {k for k, _ in removed}
        for k, raw in reversed(kept):  # oldest first: a kept delta whose parent goes becomes full
            if raw[:1] == b"\x97" and prefix + enc(self._checkpoint_record(raw)[2]) in gone:
                self._make_full(txn, k, raw)
        blob_prefix = group + BLOB
        for channel, version in dead - live:
            txn.delete(blob_prefix + enc(channel) + version, db=self._records)
        for key, _ in removed:
            txn.delete(key, db=self._records)
            self._delete_prefix(txn, group + WRITE + key[len(prefix) :])

    def _groups(self, txn: Any, thread_prefix: bytes) -> list[bytes]:
        groups = []
        cur = txn.cursor(db=self._records)
        group = self._next_group(cur, thread_prefix, thread_prefix)
        while group is not None:
            groups.append(group)
            group = self._next_group(cur, group + UPPER, thread_prefix)
        return groups

    def delete_thread(self, thread_id: str) -> None:
        """Deletes every checkpoint, write and stored value of `thread_id` (all namespaces).

        Raises:
            LmdbError: when the write fails.
        """
        prefix = enc(str(thread_id))

        def write(txn: Any) -> None:
            self._delete_prefix(txn, prefix)

        self._shared.write(write, owner="LmdbSaver", action="LmdbSaver: deleting a thread", max_map_size=self.max_map_size)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint (same ids, all namespaces), write and value to another thread.

        The target keeps its own checkpoints except those with a copied namespace and
        id; the pending writes of a copied checkpoint replace the target's. A missing
        source copies nothing. With `keep_last`, the target is then trimmed.

        Raises:
            LmdbError: when the write fails.
        """
        source, target = enc(str(source_thread_id)), enc(str(target_thread_id))
        if source == target:
            return

        def write(txn: Any) -> None:
            found = []
            cur = txn.cursor(db=self._records)
            if cur.set_range(source):
                for key, value in cur:
                    if not key.startswith(source):
                        break
                    found.append((target + key[len(source) :], value))
            groups = set()
            write_groups = set()  # (thread, ns, `w`, checkpoint_id) of copied writes
            for key, _ in found:
                at = parts_end(key, 2)
                kind = key[at : at + 1]
                if kind == CHECKPOINT:
                    groups.add(key[:at])
                elif kind == WRITE:
                    write_groups.add(key[: parts_end(key, 1, at + 1)])
            if not groups:
                return
            copied = {key for key, _ in found}
            for group in {key[: parts_end(key, 2)] for key in copied if txn.get(key, db=self._records) is not None}:
                self._make_group_full(txn, group, copied)  # ids copied over: the target's deltas must not follow
            for write_group in write_groups:
                self._delete_prefix(txn, write_group)
            for key, value in found:
                txn.put(key, value, db=self._records)
            if self.keep_last is not None:
                for group in groups:
                    self._retain(txn, group, self.keep_last)

        self._shared.write(write, owner="LmdbSaver", action="LmdbSaver: copying a thread", max_map_size=self.max_map_size)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Removes old checkpoints of `thread_ids` (unknown ids are ignored), in one transaction.

        `"keep_latest"` keeps the newest checkpoint of each namespace, its pending
        writes and the values it references (its `parent_config` then names a removed
        checkpoint); `"delete"` removes the threads entirely.

        Raises:
            ValueError: for another strategy.
            LmdbError: when the write fails.
        """
        if strategy not in _PRUNE_STRATEGIES:
            msg = f"'strategy' must be one of {_PRUNE_STRATEGIES} (got {strategy!r})"
            raise ValueError(msg)
        prefixes = [enc(str(t)) for t in thread_ids]
        if not prefixes:
            return

        def write(txn: Any) -> None:
            for prefix in prefixes:
                if strategy == "delete":
                    self._delete_prefix(txn, prefix)
                    continue
                live_blobs: set[bytes] = set()
                live_checkpoints: set[bytes] = set()
                for group in self._groups(txn, prefix):
                    self._retain(txn, group, 1)
                    cur = txn.cursor(db=self._records)
                    key = self._last_below(cur, group + CHECKPOINT, group + CHECKPOINT + UPPER)
                    if key is None:
                        continue
                    live_checkpoints.add(key)
                    for ch, v in self._versions(txn, key, cur.value()).items():
                        live_blobs.add(group + BLOB + enc(ch) + enc_version(v))

                # sweep what no kept checkpoint references (also orphans of other namespaces)
                def keep(key: bytes, blobs: set = live_blobs, checkpoints: set = live_checkpoints) -> bool:
                    kind = kind_of(key)
                    if kind == BLOB:
                        return key in blobs
                    if kind == WRITE:
                        return write_owner(key) in checkpoints
                    return True

                self._sweep(txn, prefix, keep)

        self._shared.write(write, owner="LmdbSaver", action="LmdbSaver: pruning", max_map_size=self.max_map_size)

    def _sweep(self, txn: Any, prefix: bytes, keep: Any) -> None:
        cur = txn.cursor(db=self._records)
        if not cur.set_range(prefix):
            return
        while cur.key().startswith(prefix):
            if keep(cur.key()):
                if not cur.next():
                    break
            elif not cur.delete():
                break

    def get_next_version(self, current: float | str | None, channel: None) -> int | str:  # type: ignore[override]
        """The version after `current`: `(n + 1) << 32 | 32 random bits` (L-49).

        `n` is the counter part of `current` (`current >> 32` for an int or float, 0
        for None), so versions increase; the random low bits make the versions of a
        fork (a run resumed from an older checkpoint) differ from those the abandoned
        branch got at the same count, so a branch never overwrites the other's stored
        values. A LangGraph-format string `current` ("000…041.0.123", e.g. a thread
        written by another saver) gets the next string of that format, so the
        versions of one thread never mix str and int (they are compared).
        """
        if current is None:
            counter = 0
        elif isinstance(current, int):
            counter = current >> _COUNTER_SHIFT
        elif isinstance(current, float):
            counter = int(current) >> _COUNTER_SHIFT
        else:
            return f"{int(current.split('.')[0]) + 1:032}.{random.random():016}"
        return ((counter + 1) << _COUNTER_SHIFT) | random.getrandbits(_COUNTER_SHIFT)
