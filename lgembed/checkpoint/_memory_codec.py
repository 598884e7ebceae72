"""The compact layout of InMemorySaver's records: version codes, stored values, ids,
timestamps, msgpack helpers.

Why this module exists: the layout `lgembed.checkpoint.memory` documents stores
LangGraph-format versions, checkpoint and task ids and timestamps as small ints or
bytes, and channel values as the serde's payload or themselves; the functions that
turn each of those into its stored form and back, with their exactness checks, are
here, apart from the store that keeps records (`_memory_store`) and the saver API
(`memory`). They are plain functions of their arguments (no state but bounded
caches), compiled in place in the compiled build (`_memory_codec.pxd`).
"""

from __future__ import annotations

from typing import Any, Callable

from lgembed.checkpoint.base import RunnableConfig, SerializerProtocol
from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer, thread_pack

_REF_BITS = 12
_REF_MASK = (1 << _REF_BITS) - 1
# blob keys: `code << _REF_BITS | name index`
_NAMES_MAX = 1 << _REF_BITS
# names (keys, channels, nodes, task paths) a saver indexes; later ones are stored as themselves
_CACHE_MAX = 256
# version strings <-> codes a saver remembers, each way (forgotten all at once when full;
# at most ~55 kB; enough for the current versions of a few threads of large graphs)
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
_TS_SECOND: tuple = ("", 0)
# (a timestamp's "YYYY-MM-DDTHH:MM:SS", its digits after "20" as an int times 10**6) of the last _ts_code
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
    `now_iso` makes) as the int of its 18 digits after "20", anything else as itself.

    Strategy: the date and time part is the same for every checkpoint of one second,
    so its int is remembered with it (`_TS_SECOND`) and only the microseconds are read.
    """
    if type(ts) is not str or len(ts) != 32 or ts[19] != "." or ts[26:] != "+00:00":
        return ts
    micros = ts[20:26]
    if not (micros.isascii() and micros.isdigit()):
        return ts
    second = ts[:19]
    cached = _TS_SECOND
    if cached[0] != second:
        if not (
            second[:2] == "20"
            and second[4] == "-"
            and second[7] == "-"
            and second[10] == "T"
            and second[13] == ":"
            and second[16] == ":"
        ):
            return ts
        digits = second[2:4] + second[5:7] + second[8:10] + second[11:13] + second[14:16] + second[17:19]
        if not (digits.isascii() and digits.isdigit()):
            return ts
        cached = (second, int(digits) * 1_000_000)
        globals()["_TS_SECOND"] = cached
    return cached[1] + int(micros)


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
