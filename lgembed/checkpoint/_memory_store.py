"""The tables of an InMemorySaver and the code that encodes, stores and decodes its records.

Why this module exists: `_Store` is what `lgembed.checkpoint.memory`'s layout section
describes (lanes of records, the name table, version caches, delta records against
the lane's last put), kept apart from the saver's API so that it can be an extension
type in the compiled build (`_memory_store.pxd`): the saver class is `Generic`, this
one is not. The stored forms of single values come from `_memory_codec`.

Why this file is longer than 600 lines: `_Store` is one extension type (its methods
call each other as C functions); its encoders and decoders sit next to the put and
read paths that use them, so a record's layout is reviewed in one place.
"""

from __future__ import annotations

import random
from itertools import repeat
from operator import lshift, or_
from typing import Any, Callable, Sequence

from lgembed.checkpoint._memory_codec import (
    _CACHE_MAX,
    _CHECKPOINT_KEYS,
    _CODE_BYTES_MAX,
    _FRACTION_BITS,
    _HasExt,
    _METADATA_KEYS,
    _MISSING,
    _NAMES_MAX,
    _PLAIN_ERRORS,
    _PREFIXES,
    _U64_LIMIT,
    _REF_BITS,
    _Serialized,
    _all_str,
    _array_header,
    _config,
    _corrupt,
    _fast,
    _format_version,
    _hashable,
    _id_code,
    _id_text,
    _kept_as_is,
    _keys_ok,
    _lists,
    _msgpack,
    _pack_part,
    _parse_version,
    _plain_pack,
    _plain_unpack,
    _remember,
    _stored,
    _ts_code,
    _ts_text,
    _typed,
    _typed_pair,
    _version_key,
)
from lgembed.checkpoint.base import (
    WRITES_IDX_MAP,
    Checkpoint,
    CheckpointMetadata,
    ChannelVersions,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_metadata,
)
from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer, thread_pack

__all__ = ("_Lane", "_Store")

_FRACTION_SCALE = float(1 << _FRACTION_BITS)
_COUNTER_MAX = (1 << (64 - _FRACTION_BITS)) - 1
# C constants of next_version in the compiled build (`_memory_store.pxd`; the codec's
# Python ones format and parse)
_SEEN_MEMO_MAX = 256
# nodes whose last encoded versions_seen entry a saver remembers (a node's entry rarely changes)
_DELTA_DEPTH_MAX = 16
# a checkpoint record is a delta against its parent at most this many records deep; the
# next one is a full record again, so loading decodes at most this many more records
_PUT_MEMO_MAX = 64
# lanes whose last put a store remembers (what the next put's delta is computed against)


_JOINED = 0xC1
# first byte of a checkpoint record joined with its writes: msgpack's one unused byte


def _join(record: bytes, entry: Any) -> bytes:
    """A checkpoint record with its write records (`entry`: one, a tuple, or None) in one
    `bytes`: `c1`, then each part as a 4-byte big-endian length and its bytes.

    Why: a dict entry and a `bytes` header per checkpoint cost more than the 5 bytes
    per part (most checkpoints of a run have writes).
    """
    if entry is None:
        return record
    parts = [record] if type(entry) is bytes else [record, *entry[:-1]]
    last = entry if type(entry) is bytes else entry[-1]
    out = [b"\xc1"]
    for part in parts:
        out.append(len(part).to_bytes(4, "big"))
        out.append(part)
    out.append(len(last).to_bytes(4, "big"))
    out.append(last)
    return b"".join(out)


def _parts(value: bytes) -> list:
    at = 1
    parts = []
    end = len(value)
    while at < end:
        size = int.from_bytes(value[at : at + 4], "big")
        if size > end - at:
            # a damaged size: the part is what is left, as slicing gives it (clamped first
            # so that a 32-bit build's C index cannot overflow)
            size = end - at
        parts.append(value[at + 4 : at + 4 + size])
        at += 4 + size
    return parts


def _record_of(value: bytes) -> bytes:
    """The checkpoint record of a stored value (see `_join`)."""
    if value[0] != _JOINED:
        return value
    size = int.from_bytes(value[1:5], "big")
    return value[5 : 5 + min(size, len(value))]  # min: see `_parts`


def _writes_of(value: bytes) -> Any:
    """The write records joined to a checkpoint record: one, a tuple, or None."""
    if value[0] != _JOINED:
        return None
    parts = _parts(value)
    return parts[1] if len(parts) == 2 else tuple(parts[1:])


class _Lane:
    """What one `(thread_id, checkpoint_ns)` holds (see the module docstring)."""

    __slots__ = ("blobs", "checkpoints", "writes")

    def __init__(self) -> None:
        self.checkpoints: dict[str, bytes] = {}
        # checkpoint_id -> record, joined with its pending writes when it has some (`_join`)
        self.writes: dict[str, bytes | tuple[bytes, ...]] = {}
        # checkpoint_id of no stored checkpoint -> one write record, or a tuple of them
        self.blobs: dict[Any, Any] = {}
        # blob key -> stored value


class _Store:
    """An InMemorySaver's state and the code that encodes, stores and decodes it.

    Why a class apart from the saver: `BaseCheckpointSaver` is `Generic`, so the saver
    cannot be an extension type; this one is in the compiled build
    (`lgembed/checkpoint/_memory_store.pxd`), so a put's many table lookups and helper calls
    are C struct reads and C calls instead of instance-dict reads and Python method
    calls. A saver and its `with_allowlist` clones share one store; the serde, which
    may differ between them, is an argument of every method that serializes.
    """

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.acquire, self.release = lock.acquire, lock.release
        # bound once: a `with` statement looks both methods up on every put
        self.threads: dict[str, dict[str, _Lane]] = {}
        # thread_id -> checkpoint_ns -> lane; threads in the order of their first put
        self.names: list[str] = []
        self.name_refs: dict[str, int] = {}
        # the name table: index -> name, name -> index
        self.codes: dict[str, Any] = {}
        self.texts: dict[int, str] = {}
        # caches: version string -> stored code, int code -> version string
        self.seen_memo: dict[str, tuple] = {}
        # node -> (its versions_seen entry, its packed row): see _seen_rows
        self.put_memo: dict[tuple, list] = {}
        # (thread_id, ns) -> [checkpoint_id, record, names, codes, nodes, rows, depth] of
        # the lane's last put: the base of the next put's delta (see _encode)

    # --- names and version codes -------------------------------------------------------

    def _name(self, name: Any) -> Any:
        """The stored form of a name, adding a str to the table while there is room."""
        if type(name) is not str:
            return name if isinstance(name, str) else [name]
        ref = self.name_refs.get(name)
        if ref is not None:
            return ref
        with self.lock:
            ref = self.name_refs.get(name)
            if ref is None:
                if len(self.names) >= _NAMES_MAX:
                    return name
                ref = len(self.names)
                self.names.append(name)  # before other threads can see the index
                self.name_refs[name] = ref
            return ref

    def _names_for(self, names: list | dict) -> list:
        refs = self.name_refs
        try:  # Strategy: C-level lookups; one miss takes the slow path
            return [refs[name] for name in names]
        except (KeyError, TypeError):
            return [self._name(name) for name in names]

    def _unname(self, stored: Any) -> Any:
        if type(stored) is int and 0 <= stored < len(self.names):
            return self.names[stored]
        if type(stored) is str:
            return stored
        if type(stored) is list and len(stored) == 1:
            name = _hashable(stored[0])
            hash(name)  # a dict key: TypeError (corrupt) if it cannot be one
            return name
        raise _corrupt("a name", stored)

    def _names_of(self, stored: list) -> list:
        try:
            return list(map(self.names.__getitem__, stored))
        except (TypeError, IndexError):  # a name stored as itself
            return [self._unname(s) for s in stored]

    def _code(self, version: Any) -> Any:
        if type(version) is not str:
            return [version]
        code = self.codes.get(version)
        if code is None:
            code = _parse_version(version)
            _remember(self.codes, version, code)
        return code

    def _text(self, code: Any) -> Any:
        """The version a stored code stands for (for an int code, the exact LangGraph string)."""
        if type(code) is int:
            text = self.texts.get(code)
            if text is None:
                if not 0 <= code < _U64_LIMIT:
                    raise _corrupt("a version", code)
                text = _format_version(code)
                _remember(self.texts, code, text)
            return text
        if type(code) is str:
            return code
        if type(code) is bytes and 0 < len(code) <= _CODE_BYTES_MAX:
            return _format_version(int.from_bytes(code, "big"))
        if type(code) is list and len(code) == 1:
            return code[0]
        raise _corrupt("a version", code)

    def _texts_of(self, codes: list) -> list:
        try:
            return list(map(self.texts.__getitem__, codes))
        except (KeyError, TypeError):  # not cached, or not an int code
            return [self._text(c) for c in codes]

    def _blob_key(self, stored_name: Any, code: Any, channel: Any) -> Any:
        if type(stored_name) is int and type(code) is int:
            return code << _REF_BITS | stored_name
        return (channel, _version_key(code))

    def _encode_versions(self, versions: Any) -> list | None:
        """`[names, codes]` of a `{channel: version}` dict; None for anything else."""
        if type(versions) is not dict:
            return None
        names: list = []
        codes: list = []
        refs, known = self.name_refs, self.codes
        try:  # one pass, C-level lookups; a name or version not cached takes the slow path
            for channel, version in versions.items():
                names.append(refs[channel])
                codes.append(known[version])
        except (KeyError, TypeError):
            return [[self._name(ch) for ch in versions], [self._code(v) for v in versions.values()]]
        return [names, codes]

    def _seen_rows(self, serde: SerializerProtocol, pack: Callable[[Any], bytes] | None, seen: Any) -> tuple | None:
        """`(node names, packed rows)` of `versions_seen`, a row being the msgpack of
        `[node, names, codes]`; None if it is not a dict of dicts.

        Strategy: a node's row changes only when that node runs, so each node's packed
        row is remembered with the entry it encodes and reused while they are equal.
        """
        if type(seen) is not dict:
            return None
        nodes: list = []
        rows: list = []
        memo = self.seen_memo
        refs, known = self.name_refs, self.codes
        try:
            for node, versions in seen.items():
                ref = refs[node]
                hit = memo.get(node)
                if hit is None or hit[0] != versions:
                    row = [ref, [refs[k] for k in versions], [known[v] for v in versions.values()]]
                    hit = (dict(versions), _pack_part(serde, pack, row))
                    if type(node) is str:  # (its versions are str: `known` had them)
                        if len(memo) >= _SEEN_MEMO_MAX:
                            memo.clear()
                        memo[node] = hit
                nodes.append(ref)
                rows.append(hit[1])
        except (KeyError, TypeError, AttributeError):  # not cached yet, or not a dict of dicts
            # (a list, not a generator: a compiled cpdef method cannot hold a closure)
            if not all([isinstance(versions, dict) for versions in seen.values()]):
                return None
            nodes = [self._name(node) for node in seen]
            rows = [
                _pack_part(serde, pack, [ref, [self._name(k) for k in versions], [self._code(v) for v in versions.values()]])
                for ref, versions in zip(nodes, seen.values())
            ]
        return nodes, rows

    def _decode_seen(self, value: Any) -> dict:
        if type(value) is not list:
            raise _corrupt("versions_seen", value)
        seen = {}
        for row in value:
            if type(row) is not list or len(row) != 3:
                raise _corrupt("versions_seen", row)
            node, names, codes = row
            if type(names) is not list or type(codes) is not list or len(names) != len(codes):
                raise _corrupt("versions_seen", row)
            seen[self._unname(node)] = dict(zip(self._names_of(names), self._texts_of(codes)))
        return seen

    def _decode_versions(self, value: Any) -> tuple[dict, list]:
        """`(channel_versions, [(channel, blob key)])` of an encoded `channel_versions`."""
        names, codes = _lists(value, 2, "channel_versions")
        if len(names) != len(codes):
            raise _corrupt("channel_versions", value)
        try:  # all indexed names and cached int codes: C-level
            channels = list(map(self.names.__getitem__, names))
            versions = dict(zip(channels, map(self.texts.__getitem__, codes)))
            return versions, list(zip(channels, map(or_, map(lshift, codes, repeat(_REF_BITS)), names)))
        except (KeyError, TypeError, IndexError):
            channels = [self._unname(n) for n in names]
            versions = dict(zip(channels, [self._text(c) for c in codes]))
            return versions, [(ch, self._blob_key(n, c, ch)) for ch, n, c in zip(channels, names, codes)]

    # --- records -----------------------------------------------------------------------

    def _unpack(self, serde: SerializerProtocol, record: bytes, what: str) -> list:
        """A record as a list (the serde's msgpack with `_fast(serde)`, else plain msgpack).

        Raises:
            DeserializationError: for a corrupt record, or a value the serde refuses.
        """
        if _fast(serde):
            try:
                value = _plain_unpack(record)
            except (_HasExt, TypeError, ValueError):
                value = serde.loads_typed(("msgpack", record))
        else:
            try:
                value = _msgpack().unpackb(record, raw=False, strict_map_key=False)
            except (ValueError, TypeError) as e:
                raise _corrupt(what, record) from e
        if type(value) is not list:
            raise _corrupt(what, value)
        return value

    def _store_value(self, serde: SerializerProtocol, value: Any) -> Any:
        """The stored form of a channel value (see the module docstring).

        Raises:
            TypeError: when the serde cannot serialize it.
        """
        if _fast(serde):
            if value is None:
                return None
            if not isinstance(value, (bytes, bytearray)):  # those have their own tags
                try:
                    return _plain_pack(value)
                except _PLAIN_ERRORS:
                    pass
        return _stored(serde.dumps_typed(value))

    def _load_value(self, serde: SerializerProtocol, stored: Any) -> Any:
        if _kept_as_is(stored):
            return stored
        if type(stored) is bytes and _fast(serde):
            try:
                return _plain_unpack(stored)
            except (_HasExt, TypeError, ValueError):
                pass
        return serde.loads_typed(_typed(stored))

    def _encode(
        self,
        serde: SerializerProtocol,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        empty: list,
        pack: Callable[[Any], bytes] | None,
        lane_key: tuple,
        lane: _Lane | None,
    ) -> tuple:
        """`(record, memo entry or None)` of a checkpoint (see the module docstring);
        `pack`: a Packer's, as `_plain_pack`; `lane`: where it goes (None: a new lane).

        The record is a delta against the parent when the store remembers the parent
        as the lane's last put (`put_memo`) and the lane still holds that very record
        (call with the lock held).

        Raises:
            TypeError: when the serde cannot serialize a value.
        """
        parent = config["configurable"].get("checkpoint_id")
        metadata = get_checkpoint_metadata(config, metadata)
        if not _fast(serde):
            rest = checkpoint.copy()
            del rest["channel_values"]
            return _msgpack().packb([None, *serde.dumps_typed(rest), *serde.dumps_typed(metadata), parent, empty]), None
        stored_parent = _id_code(parent)
        if (
            len(metadata) == 3
            and tuple(metadata) == _METADATA_KEYS
            and metadata["parents"] == {}
            and type(metadata["parents"]) is dict
            and type(metadata["source"]) is str
            and type(metadata["step"]) is int
        ):  # the engine's metadata of a root graph
            metadata = [metadata["source"], metadata["step"]]
        versions = self._encode_versions(checkpoint.get("channel_versions"))
        seen = self._seen_rows(serde, pack, checkpoint.get("versions_seen"))
        updated = checkpoint.get("updated_channels")
        if (
            versions is not None
            and seen is not None
            and tuple(checkpoint) == _CHECKPOINT_KEYS
            and type(checkpoint["ts"]) is str
            and (updated is None or (type(updated) is list and _all_str(updated)))
        ):  # the engine's checkpoint: its values only, compacted
            rest: Any = [checkpoint["v"], _ts_code(checkpoint["ts"]), None if updated is None else self._names_for(updated)]
        else:
            rest = checkpoint.copy()
            del rest["channel_values"]
            rest["id"] = None  # the record's key
            if versions is not None:
                rest["channel_versions"] = None
            if seen is not None:
                rest["versions_seen"] = None
        if seen is None:
            return _pack_part(serde, pack, [rest, versions, metadata, stored_parent, empty, None]), None
        names, codes = versions if versions is not None else (None, None)
        nodes, rows = seen
        entry = None
        delta = None
        if versions is not None:
            base = self.put_memo.get(lane_key)
            if (
                base is not None
                and parent
                and base[0] == parent
                and parent != checkpoint["id"]
                and lane is not None
                and lane.checkpoints.get(parent) is base[1]
                and base[6] < _DELTA_DEPTH_MAX
            ):
                delta = self._delta(base, names, codes, nodes, rows)
            if delta is not None or _keys_ok(names, 0) and _keys_ok(nodes, 0):
                entry = [checkpoint["id"], None, names, codes, nodes, rows, 0 if delta is None else base[6] + 1]
        if delta is None:
            packed = _pack_part(serde, pack, [rest, versions, metadata, stored_parent, empty, None])
        else:
            versions_delta, rows = delta
            packed = _pack_part(serde, pack, [rest, versions_delta, metadata, stored_parent, empty, None])
        # the record's last item, packed None (one byte), becomes the packed versions_seen rows
        record = packed[:-1] + _array_header(len(rows)) + b"".join(rows)
        if entry is not None:
            entry[1] = record
        return record, entry

    def _delta(self, base: list, names: list, codes: list, nodes: list, rows: list) -> tuple | None:
        """`([names, codes, 0], rows)`: what changed since `base` (a `put_memo` entry), or
        None when the checkpoint is not its parent plus changes (a key gone or moved).

        Loading applies the changes to the parent's dicts in order: a changed key keeps
        its place and a new one goes last, as the engine's own dicts do.
        """
        base_names, base_codes, base_nodes, base_rows = base[2], base[3], base[4], base[5]
        known = len(base_names)
        if names[:known] != base_names or not _keys_ok(names, known):
            return None
        known_nodes = len(base_nodes)
        if nodes[:known_nodes] != base_nodes or not _keys_ok(nodes, known_nodes):
            return None
        changed = [i for i in range(known) if codes[i] != base_codes[i]]
        changed += range(known, len(names))
        new_rows = [rows[i] for i in range(known_nodes) if rows[i] != base_rows[i]]
        new_rows += rows[known_nodes:]
        return [[names[i] for i in changed], [codes[i] for i in changed], 0], new_rows

    def _decode(
        self, serde: SerializerProtocol, record: bytes, checkpoint_id: str, lane: _Lane | None
    ) -> tuple[dict, Any, Any, list, list]:
        """`(checkpoint without channel_values, metadata, parent id, [(channel, blob key)], empty)`;
        `lane`: the one holding the record (a delta record's parents are read from it).

        Raises:
            DeserializationError: for a corrupt record, or a value the serde refuses.
        """
        try:
            return self._decode_record(serde, _record_of(record), checkpoint_id, lane)
        except DeserializationError:
            raise
        except (TypeError, ValueError, LookupError, OverflowError, AttributeError) as e:
            # Why: only this saver writes records, so anything unexpected means corruption
            raise _corrupt("a checkpoint", record) from e

    def _decode_record(
        self, serde: SerializerProtocol, record: bytes, checkpoint_id: str, lane: _Lane | None
    ) -> tuple[dict, Any, Any, list, list]:
        parts = self._unpack(serde, record, "a checkpoint")
        if record[:1] == b"\x97":  # written with another serializer: its typed pairs
            _, tag, payload, meta_tag, meta_payload, parent, empty = parts
            checkpoint = serde.loads_typed((tag, payload))
            metadata = serde.loads_typed((meta_tag, meta_payload))
            return checkpoint, metadata, parent, self._version_keys(checkpoint), empty
        checkpoint, versions, metadata, parent, empty, seen = parts
        if type(versions) is list and len(versions) == 3:  # a delta against its parent
            versions, seen = self._resolve(serde, lane, parts)
        if type(checkpoint) is list and len(checkpoint) == 3 and versions is not None and seen is not None:
            v, ts, updated = checkpoint  # the engine's checkpoint: its keys, in its order
            checkpoint = {
                "v": v,
                "id": checkpoint_id,
                "ts": _ts_text(ts),
                "channel_versions": None,
                "versions_seen": None,
                "updated_channels": None if updated is None else self._names_of(updated),
            }
        elif type(checkpoint) is dict and "id" in checkpoint:
            checkpoint["id"] = checkpoint_id
        if type(metadata) is list and len(metadata) == 2:  # the engine's metadata of a root graph
            metadata = {"source": metadata[0], "step": metadata[1], "parents": {}}
        parent = _id_text(parent)
        if type(checkpoint) is not dict or type(metadata) is not dict:
            raise _corrupt("a checkpoint", parts)
        if versions is None:  # not a dict of versions: stored as it was
            keys = self._version_keys(checkpoint)
        else:
            checkpoint["channel_versions"], keys = self._decode_versions(versions)
        if seen is not None:
            checkpoint["versions_seen"] = self._decode_seen(seen)
        return checkpoint, metadata, parent, keys, empty

    def _resolve(self, serde: SerializerProtocol, lane: _Lane | None, parts: list) -> tuple[list, list]:
        """`([names, codes], rows)`: the encoded `channel_versions` and `versions_seen` rows
        of a delta record (unpacked `parts`), its changes applied to its parents' in order.

        Raises:
            DeserializationError: when a parent is missing or the chain is too long (corrupt).
        """
        deltas = [parts]
        current = parts
        for _ in range(_DELTA_DEPTH_MAX + 1):
            parent = _id_text(current[3])
            record = lane.checkpoints.get(parent) if lane is not None and type(parent) is str else None
            if record is not None:
                record = _record_of(record)
            if record is None or record[:1] == b"\x97":
                raise _corrupt("a checkpoint's parent", parent)
            current = self._unpack(serde, record, "a checkpoint")
            if len(current) != 6:
                raise _corrupt("a checkpoint's parent", current)
            versions = current[1]
            if not (type(versions) is list and len(versions) == 3):
                break
            deltas.append(current)
        else:
            raise _corrupt("a checkpoint's chain of parents", parts[3])
        names, codes = _lists(versions, 2, "channel_versions")
        by_name = dict(zip(names, codes))
        by_node = {row[0]: row for row in current[5]}
        for delta in reversed(deltas):
            names, codes = delta[1][0], delta[1][1]
            by_name.update(zip(names, codes))
            by_node.update({row[0]: row for row in delta[5]})
        return [list(by_name), list(by_name.values())], list(by_node.values())

    def _is_delta(self, serde: SerializerProtocol, record: bytes) -> bool:
        record = _record_of(record)
        if record[:1] != b"\x96" or not _fast(serde):
            return False
        versions = self._unpack(serde, record, "a checkpoint")[1]
        return type(versions) is list and len(versions) == 3

    def _parent_of(self, serde: SerializerProtocol, record: bytes) -> Any:
        return _id_text(self._unpack(serde, _record_of(record), "a checkpoint")[3])

    def _full_record(self, serde: SerializerProtocol, lane: _Lane, record: bytes) -> bytes:
        """`record` (of `lane`) as a full record: its delta applied, so it no longer
        needs its parents.

        Raises:
            DeserializationError: for a corrupt record.
        """
        if not self._is_delta(serde, record):
            return record
        writes = _writes_of(record)
        record = _record_of(record)
        parts = self._unpack(serde, record, "a checkpoint")
        try:
            versions, rows = self._resolve(serde, lane, parts)
        except (TypeError, ValueError, LookupError, AttributeError) as e:
            raise _corrupt("a checkpoint", record) from e
        packed = _pack_part(serde, None, [parts[0], versions, parts[2], parts[3], parts[4], None])
        full = packed[:-1] + _array_header(len(rows)) + b"".join([_pack_part(serde, None, row) for row in rows])
        return _join(full, writes)

    def _chain_meets(self, serde: SerializerProtocol, lane: _Lane, record: bytes, ids: Any) -> bool:
        """Whether a record's chain of delta parents reaches one of `ids`."""
        for _ in range(_DELTA_DEPTH_MAX + 1):
            if not self._is_delta(serde, record):
                return False
            parent = self._parent_of(serde, record)
            if parent in ids:
                return True
            record = lane.checkpoints.get(parent)
            if record is None:
                return False
        return False

    def _detach(self, serde: SerializerProtocol, lane: _Lane, ids: Any) -> None:
        """Makes full every record of `lane` (other than `ids`) whose delta chain reaches
        one of `ids`, before those are replaced or removed (call with the lock held)."""
        rewrite = {
            checkpoint_id: self._full_record(serde, lane, record)
            for checkpoint_id, record in lane.checkpoints.items()
            if checkpoint_id not in ids and self._chain_meets(serde, lane, record, ids)
        }
        lane.checkpoints.update(rewrite)

    def _version_keys(self, checkpoint: dict) -> list:
        """`[(channel, blob key)]` of a checkpoint whose `channel_versions` was stored as it was."""
        versions = checkpoint.get("channel_versions")
        if not isinstance(versions, dict):
            return []
        return [(ch, self._blob_key(self._name(ch), self._code(v), ch)) for ch, v in versions.items()]

    def _pack_writes(
        self, serde: SerializerProtocol, task_id: str, path: str, idxs: list, channels: list, values: list
    ) -> bytes:
        """A write record; a value is an object, or a `_Serialized` `(tag, bytes)` pair.

        Raises:
            TypeError: when the serde cannot serialize a value.
        """
        ref = self.name_refs.get(path) if type(path) is str else None
        head = [_id_code(task_id), self._name(path) if ref is None else ref, idxs, self._names_for(channels)]
        if type(serde) is MsgpackSerializer:
            for value in values:
                if isinstance(value, (bytearray, _Serialized)):
                    break  # bytearray: its own tag at top level, and only there
            else:
                head.append(values)
                try:
                    return _plain_pack(head)
                except _PLAIN_ERRORS:
                    pass
                try:
                    return serde.dumps_typed(head)[1]
                except TypeError:
                    head.pop()  # the error dumps_typed raises below, with its message
        dumps = serde.dumps_typed
        typed = [list(v.pair) if isinstance(v, _Serialized) else list(dumps(v)) for v in values]
        return _msgpack().packb([*head, typed, 0])

    def _write_rows(self, serde: SerializerProtocol, entry: bytes | tuple[bytes, ...]) -> list[tuple]:
        """`(task_path, task_id, idx, channel, (True, value) | (False, (tag, bytes)))` of write records.

        Raises:
            DeserializationError: for a corrupt record, or a value the serde refuses.
        """
        try:
            return self._write_rows_of(serde, entry)
        except DeserializationError:
            raise
        except (TypeError, ValueError, LookupError, OverflowError, AttributeError) as e:
            raise _corrupt("pending writes", entry) from e

    def _write_rows_of(self, serde: SerializerProtocol, entry: bytes | tuple[bytes, ...]) -> list[tuple]:
        rows = []
        for packed in (entry,) if type(entry) is bytes else entry:
            record = self._unpack(serde, packed, "pending writes")
            if len(record) not in (5, 6) or any(type(item) is not list for item in record[2:5]):
                raise _corrupt("pending writes", record)
            task_id, path, idxs, names, values = record[:5]
            task_id = _id_text(task_id)
            entries = [(False, _typed_pair(v)) for v in values] if len(record) == 6 else [(True, v) for v in values]
            path = self._unname(path)
            if (
                not len(idxs) == len(names) == len(entries)
                or type(task_id) is not str
                or type(path) is not str
                or any(type(idx) is not int for idx in idxs)
            ):  # put_writes takes str task ids and paths, and makes int indexes
                raise _corrupt("pending writes", record)
            rows += ((path, task_id, idx, ch, e) for idx, ch, e in zip(idxs, self._names_of(names), entries))
        return rows

    # --- write --------------------------------------------------------------------

    def _lane_for_put(self, thread_id: str, checkpoint_ns: str) -> _Lane:
        """The lane a checkpoint goes to (call with the lock held)."""
        threads = self.threads
        lanes = threads.get(thread_id)
        if lanes is None:
            lanes = threads[thread_id] = {}
        lane = lanes.get(checkpoint_ns)
        if lane is None:
            lane = lanes[checkpoint_ns] = _Lane()
        elif lane.checkpoints:
            return lane
        if not any([other.checkpoints for other in lanes.values()]):  # (a list: see _encode_seen)
            # the thread's first checkpoint: list(None) orders threads by it (LangGraph's
            # storage gets the thread then), even when put_writes made the entry earlier
            del threads[thread_id]
            threads[thread_id] = lanes
        return lane

    def put(
        self,
        serde: SerializerProtocol,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """`InMemorySaver.put`, values and records serialized through `serde`."""
        thread_id = config["configurable"]["thread_id"]
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        checkpoint_id = checkpoint["id"]
        values = checkpoint["channel_values"]
        # serialize everything first, so a bad value stores nothing
        blobs = []
        empty: list = [[], []]
        codes, refs = self.codes, self.name_refs
        pack = thread_pack(True) if type(serde) is MsgpackSerializer else None
        for channel, version in new_versions.items():
            code = codes.get(version) if type(version) is str else None
            if code is None:
                code = self._code(version)
            ref = refs.get(channel) if type(channel) is str else None
            if ref is None:
                ref = self._name(channel)
            if type(code) is int and type(ref) is int:
                key = code << _REF_BITS | ref
            else:
                key = self._blob_key(ref, code, channel)
            if channel in values:
                value = values[channel]
                if pack and (value is None or _kept_as_is(value)):
                    blobs.append((key, value))
                    continue
                if pack and not isinstance(value, (bytes, bytearray)):
                    try:  # inline _store_value: the usual case, msgpack's own types
                        blobs.append((key, pack(value)))
                        continue
                    except _PLAIN_ERRORS:
                        pass
                blobs.append((key, self._store_value(serde, value)))
            else:
                blobs.append((key, _MISSING))  # "empty": in the record, and replaces a value
                empty[0].append(ref)
                empty[1].append(code)
        lane_key = (thread_id, checkpoint_ns)
        self.acquire()
        try:
            lanes = self.threads.get(thread_id)
            lane = lanes.get(checkpoint_ns) if lanes else None
            record, entry = self._encode(serde, config, checkpoint, metadata, empty, pack, lane_key, lane)
            lane = self._lane_for_put(thread_id, checkpoint_ns)
            stored = lane.blobs
            for key, value in blobs:
                if value is _MISSING:
                    stored.pop(key, None)
                else:
                    stored[key] = value
            old = lane.checkpoints.get(checkpoint_id)
            if old is not None:  # replaced: its delta children must not follow; its writes stay
                self._detach(serde, lane, (checkpoint_id,))
                record = _join(record, _writes_of(old))
            elif lane.writes:
                record = _join(record, lane.writes.pop(checkpoint_id, None))
            lane.checkpoints[checkpoint_id] = record
            memo = self.put_memo
            if entry is None:
                memo.pop(lane_key, None)
            else:
                entry[1] = record
                if len(memo) >= _PUT_MEMO_MAX:
                    memo.clear()
                memo[lane_key] = entry
        finally:
            self.release()
        return _config(thread_id, checkpoint_ns, checkpoint_id)

    def put_step(
        self,
        serde: SerializerProtocol,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        task_writes: Sequence[tuple[str, Sequence[tuple[str, Any]], str]],
    ) -> RunnableConfig:
        """`BaseCheckpointSaver.put_step` on this store: each task's writes, then the checkpoint."""
        for task_id, writes, task_path in task_writes:
            self.put_writes(serde, config, writes, task_id, task_path)
        return self.put(serde, config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        serde: SerializerProtocol,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> None:
        """`InMemorySaver.put_writes`, values serialized through `serde`."""
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        if not writes:
            return
        channels = []
        values = []
        for channel, value in writes:
            channels.append(channel)
            values.append(value)
        get = WRITES_IDX_MAP.get
        idxs = [get(channel, idx) for idx, channel in enumerate(channels)]
        self.acquire()
        try:
            self._put_writes_locked(
                serde, thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idxs, channels, values
            )
        finally:
            self.release()

    def _put_writes_locked(
        self,
        serde: SerializerProtocol,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        task_id: str,
        task_path: str,
        idxs: list,
        channels: list,
        values: list,
    ) -> None:
        """`put_writes` past its argument checks (call with the lock held)."""
        lanes = self.threads.get(thread_id)
        lane = lanes.get(checkpoint_ns) if lanes else None
        entry = self._writes_entry(lane, checkpoint_id) if lane else None
        records = () if entry is None else (entry,) if type(entry) is bytes else entry
        mine: list = []
        if records:
            head = _msgpack().packb(_id_code(task_id))
            mine = [r for r in records if r.startswith(head, 1)]  # a record is a fixarray: 1 header byte
        if not mine and (min(idxs) >= 0 or len(set(idxs)) == len(idxs)):  # the usual case
            packed = self._pack_writes(serde, task_id, task_path, idxs, channels, values)
            self._set_writes(lane, thread_id, checkpoint_ns, checkpoint_id, (*records, packed))
            return
        # Strategy: the rare path (a task writing again, or repeating a special
        # channel) applies LangGraph's `(task_id, idx) -> write` dict rules to the
        # task's decoded rows and packs them again, one record per task path
        rows = {
            idx: (path, channel, e[1] if e[0] else _Serialized(e[1]))
            for path, _, idx, channel, e in self._write_rows(serde, tuple(mine))
        }
        changed = False
        for idx, channel, value in zip(idxs, channels, values):
            if idx < 0 or idx not in rows:
                rows[idx] = (task_path, channel, value)
                changed = True
        if not changed:
            return
        by_path: dict[str, list] = {}
        for idx, (path, channel, e) in rows.items():
            by_path.setdefault(path, []).append((idx, channel, e))
        new = [
            self._pack_writes(serde, task_id, path, [r[0] for r in group], [r[1] for r in group], [r[2] for r in group])
            for path, group in by_path.items()
        ]
        kept = [r for r in records if r not in mine]
        self._set_writes(lane, thread_id, checkpoint_ns, checkpoint_id, (*kept, *new))

    def _set_writes(
        self, lane: _Lane | None, thread_id: str, checkpoint_ns: str, checkpoint_id: str, records: tuple
    ) -> None:
        if lane is None:
            lane = self.threads.setdefault(thread_id, {}).setdefault(checkpoint_ns, _Lane())
        entry = records[0] if len(records) == 1 else records
        old = lane.checkpoints.get(checkpoint_id)
        if old is None:
            lane.writes[checkpoint_id] = entry
            return
        value = lane.checkpoints[checkpoint_id] = _join(_record_of(old), entry)
        base = self.put_memo.get((thread_id, checkpoint_ns))
        if base is not None and base[1] is old:
            base[1] = value  # the next put's delta base is still this record

    def _writes_entry(self, lane: _Lane, checkpoint_id: str) -> Any:
        """The write records of a checkpoint id: one, a tuple, or None."""
        value = lane.checkpoints.get(checkpoint_id)
        if value is None:
            return lane.writes.get(checkpoint_id) if lane.writes else None
        return _writes_of(value)

    def next_version(self, current: str | int | None) -> str:
        """`InMemorySaver.get_next_version`; remembers the new version's code."""
        if type(current) is str:
            code = self.codes.get(current)  # cached: its integer part without parsing
            current_v = code >> _FRACTION_BITS if type(code) is int else int(current.split(".")[0])
        elif current is None:
            current_v = 0
        elif isinstance(current, (int, float)):
            current_v = int(current)
        else:
            current_v = int(current.split(".")[0])
        fraction = random.random()  # looked up per call, as LangGraph does (it may be patched)
        prefix = _PREFIXES.get(current_v)
        if prefix is None:
            prefix = f"{current_v + 1:032}."
            if len(_PREFIXES) < _CACHE_MAX:
                _PREFIXES[current_v] = prefix
        # for a float, `f"{fraction:016}"` is its repr zero-filled (tested), which is cheaper
        version = prefix + (repr(fraction).zfill(16) if type(fraction) is float else f"{fraction:016}")
        scaled = fraction * _FRACTION_SCALE
        if not (0 <= current_v < _COUNTER_MAX and 0.0 <= scaled < _FRACTION_SCALE):
            return version
        whole = int(scaled)
        if whole == scaled:  # random.random()'s always are (a patched one's may not be)
            # Why: put() and loading need the code; computing it here is cheaper than parsing
            code = (current_v + 1) << _FRACTION_BITS | whole
            codes, texts = self.codes, self.texts
            if len(codes) >= _CACHE_MAX or len(texts) >= _CACHE_MAX:
                codes.clear()
                texts.clear()
            codes[version] = code
            texts[code] = version
        return version
