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
version string) retains about 66 kB per thread of a 10-node chain run once; this
one about 10 kB. Everything of one `(thread_id, checkpoint_ns)` is in a `_Lane`:

- a checkpoint is one `bytes` record. With the default `MsgpackSerializer` it is
  the serde's msgpack of `[checkpoint, channel_versions, metadata, parent_id, empty,
  versions_seen]`: the checkpoint dict without `channel_values` (values are blobs),
  its `id` None (the record's key) and, when they are encoded beside it,
  `channel_versions` as `[names, codes]` and `versions_seen` as an array of `[node,
  names, codes]` rows (else None beside it and the dict in place); `empty` is
  `[names, codes]` of the channels put without a value. A checkpoint with exactly the
  engine's keys in its order, both versions encoded, is stored as `[v, ts,
  updated_channels]` instead of the dict (loading rebuilds the dict in that order).
  A node's row is packed once and reused while its entry is unchanged (only the
  node that ran changes it), so the record is packed without `versions_seen` and its
  rows are appended as bytes.
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
  them when several tasks wrote): the serde's msgpack of `[task_id, task_path,
  idxs, channels, values]`, or plain msgpack of `[..., [tag, bytes] pairs, 0]` (for
  another serializer, or a value it stores only at top level, like bytearray).

Records are immutable and hold no thread id, so `copy_thread` shares them. The
tables and the encoding code live in `_Store`, an extension type in the compiled
build; the saver's methods hand it their serde.
`storage`, `writes` and `blobs` are read-only views in LangGraph's shapes, rebuilt
on each access (for inspection and tests; lgembed itself never reads them).

Why this file is longer than 600 lines: the compact layout's encoders and decoders,
with their checks, sit next to the saver methods that use them, so the layout can
be reviewed as one unit.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from itertools import islice, repeat
from operator import lshift, or_
from typing import Any, Callable, Iterator, Sequence

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
from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer, thread_pack

__all__ = ("InMemorySaver", "MemorySaver")

_PRUNE_STRATEGIES = ("keep_latest", "delete")
_REF_BITS = 12
_REF_MASK = (1 << _REF_BITS) - 1
# blob keys: `code << _REF_BITS | name index`
_NAMES_MAX = 1 << _REF_BITS
# names (keys, channels, nodes, task paths) a saver indexes; later ones are stored as themselves
_CACHE_MAX = 256
# version strings <-> codes a saver remembers, each way (forgotten all at once when full;
# at most ~55 kB; enough for the current versions of a few threads of large graphs)
_SEEN_MEMO_MAX = 256
# nodes whose last encoded versions_seen entry a saver remembers (a node's entry rarely changes)
_DELTA_DEPTH_MAX = 16
# a checkpoint record is a delta against its parent at most this many records deep; the
# next one is a full record again, so loading decodes at most this many more records
_PUT_MEMO_MAX = 64
# lanes whose last put a store remembers (what the next put's delta is computed against)
_FRACTION_BITS = 53
_FRACTION_SCALE = float(1 << _FRACTION_BITS)
_FRACTION_MASK = (1 << _FRACTION_BITS) - 1
_COUNTER_MAX = (1 << (64 - _FRACTION_BITS)) - 1
# largest integer part whose code fits 64 bits (a msgpack int); larger ones are bytes
_U64_LIMIT = 1 << 64
_I64_MIN = -(1 << 63)
_CODE_BYTES_MAX = 24
# a version code stored as bytes has at most this many (the integer part has 32 digits)
_PLAIN_ERRORS = (TypeError, ValueError, OverflowError)
# what msgpack alone raises for an object only the serde can pack
_FIXARRAYS = tuple(bytes((0x90 | n,)) for n in range(16))
# msgpack's one-byte headers of arrays of 0..15 items
_CHECKPOINT_KEYS = ("v", "id", "ts", "channel_values", "channel_versions", "versions_seen", "updated_channels")
# the keys, in order, of the checkpoints the engine makes: their record holds only the values
_METADATA_KEYS = ("source", "step", "parents")
# the keys, in order, of the engine's metadata of a root graph: its record holds `[source, step]`
_MISSING = object()
_PREFIXES: dict = {}
# current counter -> `f"{counter + 1:032}."`, the integer part of the next version (up to _CACHE_MAX)


def _msgpack() -> Any:
    import msgpack

    return msgpack


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}


def _corrupt(what: str, detail: Any) -> DeserializationError:
    return DeserializationError(f"Loading {what} from InMemorySaver: corrupt record ({detail!r:.100})")


def _lists(value: Any, count: int, what: str) -> list:
    """`value` if it is a list of `count` lists, else a DeserializationError."""
    if type(value) is list and len(value) == count:
        for item in value:
            if type(item) is not list:
                break
        else:
            return value
    raise _corrupt(what, value)


class _HasExt(Exception):
    """Raised by `_plain_unpack` at the first msgpack extension type."""


def _no_ext(code: int, data: bytes) -> Any:
    raise _HasExt


def _plain_unpack(packed: bytes) -> Any:
    """`packed` loaded by msgpack alone; _HasExt, TypeError or ValueError when that is not enough.

    Why: bytes without extension types (and without array map keys) load to the same
    objects as through `MsgpackSerializer`, without its wrapper's cost.
    """
    return _msgpack().unpackb(packed, raw=False, strict_map_key=False, ext_hook=_no_ext)


def _plain_pack(obj: Any) -> bytes:
    """msgpack of `obj` made of msgpack's own types only (else one of `_PLAIN_ERRORS`).

    Why: for such an object `MsgpackSerializer` writes exactly these bytes (its hook
    is never called), and skipping its wrapper saves about 1 us per record.
    """
    return thread_pack(True)(obj)


# --- version codes ---------------------------------------------------------------------


def _parse_version(version: str) -> Any:
    """The code of a version string (see the module docstring): int, bytes, or `version`.

    A code is used only when `_format_version` gives back exactly `version`.
    """
    if len(version) < 49 or version[32] != "." or not version.isascii() or not version[:32].isdigit():
        return version
    try:
        fraction = float(version[33:])
    except ValueError:
        return version
    scaled = fraction * _FRACTION_SCALE
    if not 0.0 <= fraction < 1.0 or scaled != int(scaled):
        return version
    code = int(version[:32]) << _FRACTION_BITS | int(scaled)
    if _format_version(code) != version:  # e.g. "-0.0", "1e-05", a float repr of other digits
        return version
    return code if code < _U64_LIMIT else code.to_bytes((code.bit_length() + 7) // 8, "big")


def _format_version(code: int) -> str:
    return f"{code >> _FRACTION_BITS:032}.{(code & _FRACTION_MASK) / _FRACTION_SCALE:016}"


def _version_key(code: Any) -> Any:
    """A stored version code as a dict key; equal versions give equal keys."""
    if type(code) is int or type(code) is str:
        return code
    if type(code) is bytes and 0 < len(code) <= _CODE_BYTES_MAX:
        return int.from_bytes(code, "big")
    if type(code) is list and len(code) == 1:
        key = (_hashable(code[0]),)  # (2,) == (2.0,): one key, as in LangGraph's dict
        hash(key)  # TypeError (corrupt) if it cannot be one
        return key
    raise _corrupt("a version", code)


def _version_of_key(key: Any) -> Any:
    """The version a `_version_key` stands for."""
    if type(key) is int:
        return _format_version(key)
    return key[0] if type(key) is tuple else key


def _hashable(value: Any) -> Any:
    if type(value) is list:
        return tuple(_hashable(v) for v in value)
    return value


def _remember(cache: dict, key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_MAX:
        cache.clear()  # Why not LRU: clearing is C-fast, and a miss costs only one parse or format
    cache[key] = value


# --- stored values ---------------------------------------------------------------------


def _stored(typed: tuple[str, Any]) -> Any:
    """The stored form of a serde `(tag, bytes)`: the bytes for "msgpack", None for "null"."""
    tag, payload = typed
    if tag == "msgpack" and type(payload) is bytes:
        return payload
    if tag == "null" and payload == b"":
        return None
    return (tag, payload)


def _kept_as_is(value: Any) -> bool:
    """Whether a channel value is stored as itself, not serialized: an int msgpack can
    hold, float, bool or ASCII str (exact types), which is immutable and which the
    default serde gives back equal and of the same type (and refuses nothing of).

    Why: packing such a value costs a Packer call per put; keeping it costs nothing and
    often less memory (the saver shares the object the channel held).
    """
    kind = type(value)
    if kind is int:
        return _I64_MIN <= value < _U64_LIMIT  # the serde refuses other ints, as LangGraph's
    return kind is float or kind is bool or (kind is str and value.isascii())


def _typed(stored: Any) -> tuple[str, Any]:
    if type(stored) is bytes:
        return "msgpack", stored
    if stored is None:
        return "null", b""
    return stored


def _fast(serde: SerializerProtocol) -> bool:
    """Whether records are packed by `serde` itself (the default MsgpackSerializer)."""
    return type(serde) is MsgpackSerializer


def _pack_part(serde: SerializerProtocol, pack: Callable[[Any], bytes] | None, value: Any) -> bytes:
    """msgpack of `value` (a record, or a part of one) as the serde (a MsgpackSerializer)
    writes it; `pack`: a Packer's, as `_plain_pack` (None: that one)."""
    try:
        return pack(value) if pack else _plain_pack(value)
    except _PLAIN_ERRORS:
        return serde.dumps_typed(value)[1]


def _array_header(count: int) -> bytes:
    """msgpack's header of an array of `count` items: fixarray, array 16 or array 32."""
    if count < 16:
        return _FIXARRAYS[count]
    return b"\xdc" + count.to_bytes(2, "big") if count < 65536 else b"\xdd" + count.to_bytes(4, "big")


def _keys_ok(keys: list, start: int) -> bool:
    """Whether `keys[start:]` are all indexes or str (so a delta can key a dict by them)."""
    for i in range(start, len(keys)):
        if type(keys[i]) is not int and type(keys[i]) is not str:
            return False
    return True


def _all_str(items: list) -> bool:
    for item in items:
        if type(item) is not str:
            return False
    return True


def _id_code(checkpoint_id: Any) -> Any:
    """A checkpoint id as stored in a record: the 16 bytes of a lowercase canonical
    UUID string (given back exactly by `_id_text`), else the id itself."""
    if type(checkpoint_id) is not str:
        return checkpoint_id if checkpoint_id is None else [checkpoint_id]
    if len(checkpoint_id) != 36:
        return checkpoint_id
    if checkpoint_id[8] != "-" or checkpoint_id[13] != "-" or checkpoint_id[18] != "-" or checkpoint_id[23] != "-":
        return checkpoint_id
    digits = checkpoint_id.replace("-", "")
    try:
        code = bytes.fromhex(digits)
    except ValueError:
        return checkpoint_id
    return code if len(code) == 16 and code.hex() == digits else checkpoint_id


def _id_text(stored: Any) -> Any:
    if type(stored) is bytes and len(stored) == 16:
        h = stored.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if type(stored) is list and len(stored) == 1:
        return stored[0]
    return stored


def _ts_code(ts: Any) -> Any:
    """A checkpoint timestamp as stored: `20YY-MM-DDTHH:MM:SS.ffffff+00:00` (what
    `now_iso` makes) as the int of its 18 digits after "20", anything else as itself."""
    if (
        type(ts) is str
        and len(ts) == 32
        and ts[:2] == "20"
        and ts[4] == "-"
        and ts[7] == "-"
        and ts[10] == "T"
        and ts[13] == ":"
        and ts[16] == ":"
        and ts[19] == "."
        and ts[26:] == "+00:00"
    ):
        digits = ts[2:4] + ts[5:7] + ts[8:10] + ts[11:13] + ts[14:16] + ts[17:19] + ts[20:26]
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return ts


def _ts_text(stored: Any) -> Any:
    if type(stored) is int and 0 <= stored < 10**18:
        s = "%018d" % stored
        return f"20{s[:2]}-{s[2:4]}-{s[4:6]}T{s[6:8]}:{s[8:10]}:{s[10:12]}.{s[12:]}+00:00"
    return stored


def _typed_pair(stored: Any) -> tuple[str, Any]:
    if type(stored) is list and len(stored) == 2:
        return stored[0], stored[1]
    raise _corrupt("a value", stored)


class _Serialized:
    """A value the serde serialized already: its `(tag, bytes)` pair."""

    __slots__ = ("pair",)

    def __init__(self, pair: tuple[str, Any]) -> None:
        self.pair = pair


class _Lane:
    """What one `(thread_id, checkpoint_ns)` holds (see the module docstring)."""

    __slots__ = ("blobs", "checkpoints", "writes")

    def __init__(self) -> None:
        self.checkpoints: dict[str, bytes] = {}
        # checkpoint_id -> record
        self.writes: dict[str, bytes | tuple[bytes, ...]] = {}
        # checkpoint_id -> one write record, or a tuple of them
        self.blobs: dict[Any, Any] = {}
        # blob key -> stored value


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


class _Store:
    """An InMemorySaver's state and the code that encodes, stores and decodes it.

    Why a class apart from the saver: `BaseCheckpointSaver` is `Generic`, so the saver
    cannot be an extension type; this one is in the compiled build
    (`lgembed/checkpoint/memory.pxd`), so a put's many table lookups and helper calls
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
            return self._decode_record(serde, record, checkpoint_id, lane)
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
        if record[:1] != b"\x96" or not _fast(serde):
            return False
        versions = self._unpack(serde, record, "a checkpoint")[1]
        return type(versions) is list and len(versions) == 3

    def _parent_of(self, serde: SerializerProtocol, record: bytes) -> Any:
        return _id_text(self._unpack(serde, record, "a checkpoint")[3])

    def _full_record(self, serde: SerializerProtocol, lane: _Lane, record: bytes) -> bytes:
        """`record` (of `lane`) as a full record: its delta applied, so it no longer
        needs its parents.

        Raises:
            DeserializationError: for a corrupt record.
        """
        if not self._is_delta(serde, record):
            return record
        parts = self._unpack(serde, record, "a checkpoint")
        try:
            versions, rows = self._resolve(serde, lane, parts)
        except (TypeError, ValueError, LookupError, AttributeError) as e:
            raise _corrupt("a checkpoint", record) from e
        packed = _pack_part(serde, None, [parts[0], versions, parts[2], parts[3], parts[4], None])
        return packed[:-1] + _array_header(len(rows)) + b"".join([_pack_part(serde, None, row) for row in rows])

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
            if checkpoint_id in lane.checkpoints:  # replaced: its delta children must not follow
                self._detach(serde, lane, (checkpoint_id,))
            lane.checkpoints[checkpoint_id] = record
            memo = self.put_memo
            if entry is None:
                memo.pop(lane_key, None)
            else:
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
        entry = lane.writes.get(checkpoint_id) if lane else None
        records = () if entry is None else (entry,) if type(entry) is bytes else entry
        mine: list = []
        if records:
            head = _msgpack().packb(_id_code(task_id))
            mine = [r for r in records if r.startswith(head, 1)]  # a record is a fixarray: 1 header byte
        if not mine and (min(idxs) >= 0 or len(set(idxs)) == len(idxs)):  # the usual case
            packed = self._pack_writes(serde, task_id, task_path, idxs, channels, values)
            if lane is not None and not records:
                lane.writes[checkpoint_id] = packed
            else:
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
        lane.writes[checkpoint_id] = records[0] if len(records) == 1 else records

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
        entry = lane.writes.get(checkpoint_id)
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
                copy.checkpoints.update(lane.checkpoints)
                copy.writes.update(lane.writes)
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
                    lane.writes = {latest: lane.writes[latest]} if latest in lane.writes else {}
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
                for checkpoint_id, entry in lane.writes.items():
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
