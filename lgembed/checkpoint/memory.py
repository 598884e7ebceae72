"""InMemorySaver: checkpoints in process memory, with LangGraph's storage semantics.

Why this module exists: tests, examples and short-lived runs need a saver without a
database, and its observable behaviour must be LangGraph's `InMemorySaver` (P-5,
P-10 .. P-13, L-49) so programs and tests move between the two unchanged:

- values are stored serialized through `serde` (so a tuple comes back as a list);
- a channel value is stored once per `(thread, ns, channel, version)`, only for the
  channels in `new_versions`; a checkpoint's `channel_values` are rebuilt from its
  `channel_versions` (a channel in `new_versions` without a value is stored as
  "empty" and left out);
- pending writes are keyed `(task_id, idx)` per `(thread, ns, checkpoint_id)`:
  re-putting a regular write is a no-op, the special channels (`WRITES_IDX_MAP`)
  overwrite; they are returned ordered by `(task_path, task_id, idx)`;
- versions are strings `f"{n:032}.{random.random():016}"`.

Additions: a lock makes every method safe to call from several threads (listing
releases it between the tuples it yields), and `copy_thread` / `prune` are
implemented (LangGraph's InMemorySaver raises NotImplementedError for both).

Layout. Why: a device keeps many threads in RAM. LangGraph's layout (a tuple and a
str per key part, two serialized dicts per checkpoint repeating every 49-character
version string) retains about 33 kB per thread of a 10-node chain run once
(tracemalloc; `tools/bench.py --only memory`); this one about 6 kB. Everything of one
`(thread_id, checkpoint_ns)` is in a `_Lane`:

- a checkpoint is one `bytes` record. With the default `MsgpackSerializer` it is
  the serde's msgpack of `[checkpoint, channel_versions, metadata, parent_id, empty,
  versions_seen]`: the checkpoint dict without `channel_values` (values are blobs),
  its `id` None (the record's key) and, when they are encoded beside it,
  `channel_versions` as `[names, codes]` and `versions_seen` as an array of `[node,
  names, codes]` rows (else None beside it and the dict in place); `empty` is
  `[names, codes]` of the channels put without a value. A checkpoint with exactly the
  engine's keys in its order, both versions encoded, is stored as `[v, ts,
  updated_channels]` instead of the dict (loading rebuilds the dict in that order),
  `ts` of `now_iso`'s form as an int of its digits and `updated_channels` as names;
  the engine's root metadata (`source`, `step`, empty `parents`) as `[source, step]`;
  a parent id that is a canonical UUID as its 16 bytes.
  A node's row is packed once and reused while its entry is unchanged (only the
  node that ran changes it), so the record is packed without `versions_seen` and its
  rows are appended as bytes.
  Delta records: when the parent is the lane's last put (the store remembers it,
  `put_memo`) and the checkpoint is that parent plus changes (new channels and nodes
  last, none gone), `channel_versions` is `[names, codes, 0]`, only the entries that
  changed, and the rows only those of the nodes whose entry changed; loading applies
  them to the parents' in order, back to the nearest full record (at most
  `_DELTA_DEPTH_MAX` back: the next record is full again). A record a delta needs
  never goes first: putting a checkpoint again under its id, `copy_thread` over
  existing ids and `prune` make the records that would lose their parent full.
  With another serializer: plain msgpack of `[None, tag, bytes, tag, bytes,
  parent_id, empty]` (its typed checkpoint and metadata, as LangGraph stores them);
- a name (key, channel, node, task path) is an index into the saver's name table
  (it only grows, to `_NAMES_MAX` names; later names are stored as themselves), a
  str, or `[name]` for a non-str;
- a version code: a LangGraph-format string whose integer part `n` and fraction `f`
  (a multiple of 2**-53, as `random.random()` returns) give back exactly that string
  is the int `n << 53 | f * 2**53` (big-endian bytes past 64 bits); another str is
  itself, a non-str version `v` is `[v]`. Loading formats the string again (only
  int arithmetic and formatting: a crafted code gives a str or a
  DeserializationError);
- blobs: one dict per lane, `code << 12 | name index -> stored value` (a
  `(channel, version)` tuple key when either is not an int), where a stored value
  is the serde's msgpack payload (`bytes`), None for its "null" tag, `(tag,
  bytes)`, or (with the default serde) an int, float, bool or ASCII str itself
  (`_kept_as_is`). "Empty" values are not in it (loading skips them): they are in
  the record that put them;
- pending writes: per checkpoint id, one record per `put_writes` call (a tuple of
  them when several tasks wrote), joined to the checkpoint's record in one `bytes`
  (`_memory_store._join`: `c1`, msgpack's unused byte, then each part with a 4-byte
  length; the lane's `writes` dict holds only writes of ids without a checkpoint): the serde's msgpack of `[task_id (16 bytes when a
  canonical UUID), task_path,
  idxs, channels, values]`, or plain msgpack of `[..., [tag, bytes] pairs, 0]` (for
  another serializer, or a value it stores only at top level, like bytearray).

Records hold no thread id, so `copy_thread` shares them. Where the code is: this
module is the saver's API and the read-only views; `_memory_store` holds `_Store`
(the tables, the record encoders and decoders, the put and delta logic), an extension
type in the compiled build; `_memory_codec` the stored forms of single values
(version codes, values, ids, timestamps). The saver's methods hand the store their
serde.
`storage`, `writes` and `blobs` are read-only views in LangGraph's shapes, rebuilt
on each access (for inspection and tests; lgembed itself never reads them).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Sequence

from lgembed.checkpoint._memory_codec import (
    _MISSING,
    _REF_BITS,
    _REF_MASK,
    _config,
    _hashable,
    _kept_as_is,
    _lists,
    _typed,
    _version_of_key,
)
from lgembed.checkpoint._memory_store import _JOINED, _Lane, _Store, _join, _record_of, _writes_of
from lgembed.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_id,
    writes_sort_key,
)

__all__ = ("InMemorySaver", "MemorySaver")

_PRUNE_STRATEGIES = ("keep_latest", "delete")


class _View(Mapping):
    """A read-only mapping rebuilt from the saver on each access (`copy()` gives a dict).

    `build(thread_id)` returns the part of one thread, or everything for None, so a
    lookup rebuilds only the thread its key names.
    """

    def __init__(self, build: Callable[[Any], dict], thread_of: Callable[[Any], Any]) -> None:
        self._build = build
        self._thread_of = thread_of

    def __getitem__(self, key: Any) -> Any:
        try:
            part = self._build(self._thread_of(key))
        except (TypeError, IndexError, KeyError):  # not a key of this view
            raise KeyError(key) from None
        return part[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._build(None))

    def __len__(self) -> int:
        return len(self._build(None))

    def copy(self) -> dict:
        return self._build(None)

    def __repr__(self) -> str:
        return repr(self._build(None))


class InMemorySaver(BaseCheckpointSaver[str]):
    """A checkpoint saver that keeps everything in process memory (lost when the process ends).

    Usable as a (async) context manager, like LangGraph's.

    Args:
        serde: serializer of checkpoints, metadata, values and writes
            (`MsgpackSerializer()` by default).

    Attributes:
        storage: read-only view `thread_id -> checkpoint_ns -> checkpoint_id ->
            (checkpoint, metadata, parent_checkpoint_id)`, the first two serialized
            `(tag, bytes)` pairs, as in LangGraph (rebuilt on each access).
        writes: read-only view `(thread_id, checkpoint_ns, checkpoint_id) ->
            (task_id, idx) -> (task_id, channel, serialized value, task_path)`.
        blobs: read-only view `(thread_id, checkpoint_ns, channel, version) ->
            serialized value` (`("empty", b"")` for a version put without a value,
            while the checkpoint that put it is stored).
    """

    _lg_serializes_on_put = True
    # put() serializes the checkpoint before returning: the engine may pass live dicts

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._lock = threading.RLock()
        store = self._store = _Store(self._lock)
        # the store's tables under the saver's former names, the same objects (for inspection)
        self._threads = store.threads
        self._names, self._name_refs = store.names, store.name_refs
        self._codes, self._texts = store.codes, store.texts
        self.storage: Mapping[str, Any] = _View(self._storage_view, lambda key: key)
        self.writes: Mapping[tuple[str, str, str], Any] = _View(self._writes_view, lambda key: key[0])
        self.blobs: Mapping[tuple[str, str, str, Any], tuple[str, bytes]] = _View(self._blobs_view, lambda key: key[0])

    def __enter__(self) -> InMemorySaver:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    async def __aenter__(self) -> InMemorySaver:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        return None

    # --- loading helpers (call with the lock held) -----------------------------------

    def _load_blobs(self, lane: _Lane, keys: list) -> dict[str, Any]:
        values: dict[str, Any] = {}
        blobs = lane.blobs
        for channel, key in keys:
            stored = blobs.get(key, _MISSING)
            if stored is not _MISSING:
                values[channel] = self._store._load_value(self.serde, stored)
        return values

    def _load_writes(self, lane: _Lane, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        entry = self._store._writes_entry(lane, checkpoint_id)
        if entry is None:
            return []
        rows = self._store._write_rows(self.serde, entry)
        rows.sort(key=lambda row: writes_sort_key(row[0], row[1], row[2]))
        loads = self.serde.loads_typed
        return [(task_id, channel, e[1] if e[0] else loads(e[1])) for _, task_id, _, channel, e in rows]

    def _make_tuple(
        self,
        config: RunnableConfig,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        lane: _Lane,
        decoded: tuple[dict, Any, Any, list, list],
    ) -> CheckpointTuple:
        checkpoint, metadata, parent_id, keys, _ = decoded
        checkpoint["channel_values"] = self._load_blobs(lane, keys)
        return CheckpointTuple(
            config=config,
            checkpoint=checkpoint,  # type: ignore[arg-type]
            metadata=metadata,
            parent_config=_config(thread_id, checkpoint_ns, parent_id) if parent_id else None,
            pending_writes=self._load_writes(lane, checkpoint_id),
        )

    def _lane(self, thread_id: str, checkpoint_ns: str) -> _Lane | None:
        lanes = self._threads.get(thread_id)
        return lanes.get(checkpoint_ns) if lanes else None

    # --- read ---------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint `config` addresses, or the latest of its thread and namespace (P-10).

        With a `checkpoint_id` the returned tuple's `config` is `config` itself (as in
        LangGraph); otherwise a new config naming the latest checkpoint.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
            DeserializationError: when a stored value cannot be loaded.
        """
        thread_id: str = config["configurable"]["thread_id"]
        checkpoint_ns: str = config["configurable"].get("checkpoint_ns", "")
        with self._lock:
            lane = self._lane(thread_id, checkpoint_ns)
            if lane is None or not lane.checkpoints:
                return None
            checkpoint_id = get_checkpoint_id(config)
            if checkpoint_id:
                record = lane.checkpoints.get(checkpoint_id)
                if record is None:
                    return None
            else:
                checkpoint_id = max(lane.checkpoints)
                record = lane.checkpoints[checkpoint_id]
                config = _config(thread_id, checkpoint_ns, checkpoint_id)
            decoded = self._store._decode(self.serde, record, checkpoint_id, lane)
            return self._make_tuple(config, thread_id, checkpoint_ns, checkpoint_id, lane, decoded)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoint tuples, newest first within each thread and namespace (P-11).

        Args:
            config: its `thread_id` (required), `checkpoint_ns` (all namespaces when
                absent) and `checkpoint_id` (that one only, when given) restrict the
                listing; None lists every thread, in the order threads were first written.
            filter: metadata keys whose values must equal these (a missing key equals None).
            before: only checkpoints whose id is smaller than this config's `checkpoint_id`.
            limit: at most this many tuples (0 or less: none).

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
            DeserializationError: when a stored value cannot be loaded.
        """
        configurable = config["configurable"] if config else {}
        ns_filter = configurable.get("checkpoint_ns") if config else None
        id_filter = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        with self._lock:
            thread_ids = [configurable["thread_id"]] if config else [*self._threads]
            candidates = [
                (thread_id, ns, checkpoint_id)
                for thread_id in thread_ids
                for ns, lane in self._threads.get(thread_id, {}).items()
                if ns_filter is None or ns == ns_filter
                for checkpoint_id in sorted(lane.checkpoints, reverse=True)
                if (not id_filter or checkpoint_id == id_filter) and (not before_id or checkpoint_id < before_id)
            ]
        remaining = limit
        for thread_id, ns, checkpoint_id in candidates:
            if remaining is not None and remaining <= 0:
                return
            # Strategy: the lock is held while one tuple is built, never across a yield
            with self._lock:
                lane = self._lane(thread_id, ns)
                record = lane.checkpoints.get(checkpoint_id) if lane else None
                if record is None:
                    continue  # deleted since the listing started
                decoded = self._store._decode(self.serde, record, checkpoint_id, lane)
                metadata = decoded[1]
                if filter and not all(metadata.get(k) == v for k, v in filter.items()):
                    continue
                own_config = _config(thread_id, ns, checkpoint_id)
                item = self._make_tuple(own_config, thread_id, ns, checkpoint_id, lane, decoded)
            if remaining is not None:
                remaining -= 1
            yield item


    # --- write --------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Stores `checkpoint`; its parent is `config`'s `checkpoint_id` (P-12, P-13).

        Only the channels in `new_versions` get a stored value; metadata is merged with
        the config's user values (`get_checkpoint_metadata`).

        Returns:
            The config of the stored checkpoint.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
            TypeError: when a value cannot be serialized (nothing is stored then).
        """
        return self._store.put(self.serde, config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Stores a task's writes against `config`'s checkpoint (P-5).

        A regular write is keyed by its position in `writes` and kept if already
        stored; `__error__`, `__scheduled__`, `__interrupt__` and `__resume__` have a
        fixed negative index and replace the task's previous one.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id` or `checkpoint_id`.
            TypeError: when a value cannot be serialized (nothing is stored then).
            DeserializationError: when the task's earlier writes here cannot be loaded.
        """
        self._store.put_writes(self.serde, config, writes, task_id, task_path)

    def put_step(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        task_writes: Sequence[tuple[str, Sequence[tuple[str, Any]], str]],
    ) -> RunnableConfig:
        """`BaseCheckpointSaver.put_step`: `put_writes` for each task, then `put`.

        Made by the store in one call, unless a subclass or the instance replaced `put`
        or `put_writes` (then those are called, as the base class does).
        """
        cls = type(self)
        own = self.__dict__
        if (
            (cls is not InMemorySaver and (cls.put is not _PUT or cls.put_writes is not _PUT_WRITES))
            or "put" in own
            or "put_writes" in own
        ):
            return BaseCheckpointSaver.put_step(self, config, checkpoint, metadata, new_versions, task_writes)
        return self._store.put_step(self.serde, config, checkpoint, metadata, new_versions, task_writes)

    # --- maintenance --------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        """Deletes every checkpoint, write and stored value of `thread_id`."""
        with self._lock:
            self._threads.pop(thread_id, None)

    def _has_checkpoints(self, thread_id: str) -> bool:
        return any(lane.checkpoints for lane in self._threads.get(thread_id, {}).values())

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint (same ids, all namespaces), write and value to another thread.

        The target keeps its own checkpoints except those with a copied namespace and
        id. A missing source copies nothing. Records hold no thread id, so the copies
        share them.
        """
        with self._lock:
            if source_thread_id == target_thread_id or not self._has_checkpoints(source_thread_id):
                return
            if not self._has_checkpoints(target_thread_id):
                # the target's first checkpoints: it moves to the end of list(None)'s order
                self._threads[target_thread_id] = self._threads.pop(target_thread_id, {})
            target = self._threads[target_thread_id]
            for ns, lane in self._threads[source_thread_id].items():
                copy = target.setdefault(ns, _Lane())
                if copy.checkpoints.keys() & lane.checkpoints.keys():  # replaced: their children must not follow
                    self._store._detach(self.serde, copy, lane.checkpoints.keys())
                for checkpoint_id, value in lane.checkpoints.items():
                    if value[0] != _JOINED:  # no writes of its own: the target's stay
                        value = _join(value, self._store._writes_entry(copy, checkpoint_id))
                        copy.writes.pop(checkpoint_id, None)
                    copy.checkpoints[checkpoint_id] = value
                for checkpoint_id, entry in lane.writes.items():  # writes of no stored checkpoint
                    old = copy.checkpoints.get(checkpoint_id)
                    if old is None:
                        copy.writes[checkpoint_id] = entry
                    else:
                        copy.checkpoints[checkpoint_id] = _join(_record_of(old), entry)
                copy.blobs.update(lane.blobs)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Removes old checkpoints of `thread_ids` (unknown ids are ignored).

        `"keep_latest"` keeps the newest checkpoint of each namespace, its pending
        writes and the values it references (its `parent_config` then names a removed
        checkpoint); `"delete"` removes the threads entirely.

        Raises:
            ValueError: for another strategy.
            DeserializationError: when a kept checkpoint's record cannot be loaded.
        """
        if strategy not in _PRUNE_STRATEGIES:
            msg = f"'strategy' must be one of {_PRUNE_STRATEGIES} (got {strategy!r})"
            raise ValueError(msg)
        with self._lock:
            for thread_id in thread_ids:
                lanes = self._threads.get(thread_id)
                if strategy == "delete" or lanes is None:
                    self._threads.pop(thread_id, None)
                    continue
                for ns, lane in list(lanes.items()):
                    if not lane.checkpoints:
                        del lanes[ns]  # only writes and values, of no kept checkpoint
                        continue
                    latest = max(lane.checkpoints)
                    lane.checkpoints = {latest: self._store._full_record(self.serde, lane, lane.checkpoints[latest])}
                    lane.writes = {}  # (the latest's writes are joined to its record)
                    keep = {key for _, key in self._store._decode(self.serde, lane.checkpoints[latest], latest, lane)[3]}
                    lane.blobs = {key: value for key, value in lane.blobs.items() if key in keep}
                if not lanes:
                    del self._threads[thread_id]

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """The version after `current`: `f"{n + 1:032}.{random.random():016}"` (L-49).

        The integer part orders versions; the random fraction makes concurrent
        branches' versions differ.
        """
        return self._store.next_version(current)

    # --- read-only views in LangGraph's shapes -------------------------------------

    def _view_lanes(self, thread_id: Any) -> list[tuple[str, str, _Lane]]:
        """`(thread_id, ns, lane)` of every thread, or of `thread_id` only (call with the lock held)."""
        threads = self._threads if thread_id is None else {thread_id: self._threads.get(thread_id, {})}
        return [(t, ns, lane) for t, lanes in threads.items() for ns, lane in lanes.items()]

    def _storage_view(self, thread_id: Any) -> dict:
        out: dict = {}
        dumps = self.serde.dumps_typed
        with self._lock:
            for t, ns, lane in self._view_lanes(thread_id):
                for checkpoint_id, record in lane.checkpoints.items():
                    checkpoint, metadata, parent, _, _ = self._store._decode(self.serde, record, checkpoint_id, lane)
                    saved = (dumps(checkpoint), dumps(metadata), parent)
                    out.setdefault(t, {}).setdefault(ns, {})[checkpoint_id] = saved
        return out

    def _writes_view(self, thread_id: Any) -> dict:
        out: dict = {}
        dumps = self.serde.dumps_typed
        with self._lock:
            for t, ns, lane in self._view_lanes(thread_id):
                entries = [(checkpoint_id, self._store._writes_entry(lane, checkpoint_id)) for checkpoint_id in lane.writes]
                entries += [(checkpoint_id, _writes_of(value)) for checkpoint_id, value in lane.checkpoints.items()]
                for checkpoint_id, entry in entries:
                    if entry is None:
                        continue
                    out[(t, ns, checkpoint_id)] = {
                        (task_id, idx): (task_id, channel, dumps(e[1]) if e[0] else e[1], path)
                        for path, task_id, idx, channel, e in self._store._write_rows(self.serde, entry)
                    }
        return out

    def _blobs_view(self, thread_id: Any) -> dict:
        out: dict = {}
        with self._lock:
            for t, ns, lane in self._view_lanes(thread_id):
                for checkpoint_id, record in lane.checkpoints.items():
                    names, codes = _lists(self._store._decode(self.serde, record, checkpoint_id, lane)[4], 2, "a checkpoint")
                    for name, code in zip(names, codes):
                        out[(t, ns, self._store._unname(name), _hashable(self._store._text(code)))] = ("empty", b"")
                for key, stored in lane.blobs.items():
                    if type(key) is int:
                        channel = self._store._unname(key & _REF_MASK)
                        version = self._store._text(key >> _REF_BITS)
                    else:
                        channel, version = key[0], _version_of_key(key[1])
                    # a value put after "empty" wins
                    pair = self.serde.dumps_typed(stored) if _kept_as_is(stored) else _typed(stored)
                    out[(t, ns, channel, version)] = pair
        return out


_PUT, _PUT_WRITES = InMemorySaver.put, InMemorySaver.put_writes
# what put_step compares a subclass's methods with

MemorySaver = InMemorySaver
"""Alias kept for LangGraph compatibility."""
