"""The bridge's messages, sans I/O: one dataclass per message type and its msgpack payload,
over the framing of `lgembed.bridge.framing` (re-exported here, so this module is the
whole codec: bytes in, messages out).

Why: PROTOCOL.md §6 and §7 define each payload; `decode_message` checks a packet's payload
against its type's schema exactly (ranges, types, the msgpack subset: no ext or timestamp
values; extra trailing array elements of a later version are ignored) and raises
RemoteProtocolError with the code the firmware would NAK it with. `encode_message` is the
inverse. No I/O, no threads.

    packet = decode_packet(raw)            # or from FrameDecoder.feed(...)
    msg = decode_message(packet)           # Hello, Call, Result, EventMessage, Ack, ...
    raw = encode_message(Call(7, 0, ()), seq=3)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Union

import msgpack

from lgembed.bridge import messages as m
from lgembed.bridge.errors import LocalProtocolError, RemoteProtocolError
from lgembed.bridge.framing import (
    DEFAULT_MAX_PAYLOAD,
    DecodeError,
    FrameDecoder,
    Packet,
    _u8,
    cobs_decode,
    cobs_encode,
    crc16,
    decode_packet,
    encode_frame,
    encode_packet,
    frame_packet,
    max_frame_len,
)

__all__ = (
    "DEFAULT_MAX_PAYLOAD",
    "TYPE_CODES",
    "Ack",
    "Call",
    "DecodeError",
    "EventMessage",
    "FrameDecoder",
    "FunctionSpec",
    "Hello",
    "HelloRequest",
    "Message",
    "Nak",
    "Packet",
    "Ping",
    "Pong",
    "Result",
    "check_args",
    "check_value",
    "cobs_decode",
    "cobs_encode",
    "crc16",
    "decode_message",
    "decode_packet",
    "encode_frame",
    "encode_message",
    "encode_packet",
    "encode_payload",
    "frame_packet",
    "max_frame_len",
)

# --- payload value types -------------------------------------------------------------------

TYPE_CODES = {
    "i": "int",
    "u": "uint",
    "f": "float",
    "b": "bool",
    "s": "str",
    "y": "bytes",
    "n": "nil",
}
"""HELLO type codes -> names: i int64, u uint64, f float (32 or 64 bit), b bool, s str
(UTF-8), y bytes, n nil."""

_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64 = (1 << 64) - 1


def check_value(code: str, value: Any) -> str | None:
    """What is wrong with `value` for type code `code`, or None when it fits.

    An int is accepted for "f" (it is sent as a float by the caller).
    """
    if code == "i":
        ok = isinstance(value, int) and not isinstance(value, bool) and _INT64[0] <= value <= _INT64[1]
        return None if ok else "an integer from -2**63 to 2**63-1"
    if code == "u":
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _UINT64
        return None if ok else "an integer from 0 to 2**64-1"
    if code == "f":
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "a number"
    if code == "b":
        return None if isinstance(value, bool) else "true or false"
    if code == "s":
        return None if isinstance(value, str) else "a string"
    if code == "y":
        return None if isinstance(value, (bytes, bytearray, memoryview)) else "bytes"
    if code == "n":
        return None if value is None else "nil (None)"
    return f"a value of an unknown type code {code!r}"


# --- messages ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionSpec:
    """One function an MCU announces in its HELLO.

    Attributes:
        name: the function's name (the tool's name).
        arg_types: one type code per argument, e.g. "if" = (int, float); "" = none.
        result_type: the result's type code ("" or "n": no value).
    """

    name: str
    arg_types: str
    result_type: str


_CODE_NAMES = {"i": "int", "u": "uint", "f": "float", "b": "bool", "s": "str", "y": "bytes", "n": "nil"}


def check_args(spec: FunctionSpec, args: tuple, action: str = "Calling a function") -> tuple:
    """The arguments of a CALL of `spec`, checked against its type codes (an int is
    sent as a float for "f", bytes-like as bytes for "y").

    Raises:
        LocalProtocolError: the wrong number of arguments or a value of the wrong type
            (code LGB_ERR_ARGS); the message starts with `action`.
    """
    codes = spec.arg_types
    if len(args) != len(codes):
        want = ", ".join(_CODE_NAMES[c] for c in codes) or "no arguments"
        msg = f"{action}: it takes {len(codes)} argument{'s' if len(codes) != 1 else ''} ({want}), got {len(args)}"
        raise LocalProtocolError(msg, m.ERR_ARGS)
    out = []
    for i, (code, v) in enumerate(zip(codes, args)):
        problem = check_value(code, v)
        if problem is not None:
            msg = f"{action}: argument {i + 1} must be {problem} (type '{code}') (got {v!r})"
            raise LocalProtocolError(msg, m.ERR_ARGS)
        out.append(float(v) if code == "f" else bytes(v) if code == "y" else v)
    return tuple(out)


@dataclass(frozen=True)
class Hello:
    """MCU -> host: who it is and what it can do (type 0x01)."""

    TYPE: ClassVar[int] = m.MSG_HELLO
    device_id: str
    fw_version: str
    max_payload: int
    functions: tuple[FunctionSpec, ...] = ()
    events: tuple[str, ...] = ()

    def function_index(self, name: str) -> int | None:
        """The index of function `name` (what CALL sends), or None."""
        for i, f in enumerate(self.functions):
            if f.name == name:
                return i
        return None


@dataclass(frozen=True)
class HelloRequest:
    """host -> MCU: "send your HELLO" (type 0x02, empty payload)."""

    TYPE: ClassVar[int] = m.MSG_HELLO_REQ


@dataclass(frozen=True)
class Ping:
    """Either way: up to 8 bytes to be echoed (type 0x03)."""

    TYPE: ClassVar[int] = m.MSG_PING
    data: bytes = b""


@dataclass(frozen=True)
class Pong:
    """The echo of a PING's bytes (type 0x04)."""

    TYPE: ClassVar[int] = m.MSG_PONG
    data: bytes = b""


@dataclass(frozen=True)
class Call:
    """host -> MCU: run function `fn_index` with `args` (type 0x10)."""

    TYPE: ClassVar[int] = m.MSG_CALL
    call_id: int
    fn_index: int
    args: tuple = ()


@dataclass(frozen=True)
class Result:
    """MCU -> host: the outcome of call `call_id` (type 0x11): status 0 and the value,
    or an error code and its text."""

    TYPE: ClassVar[int] = m.MSG_RESULT
    call_id: int
    status: int
    value: Any = None


@dataclass(frozen=True)
class EventMessage:
    """MCU -> host: event `event_index` happened at `timestamp_ms` (type 0x20)."""

    TYPE: ClassVar[int] = m.MSG_EVENT
    event_index: int
    timestamp_ms: int
    value: Any = None


@dataclass(frozen=True)
class Ack:
    """The receiver accepted frame `seq` (type 0x30)."""

    TYPE: ClassVar[int] = m.MSG_ACK
    seq: int


@dataclass(frozen=True)
class Nak:
    """The receiver refused frame `seq` with an error code (type 0x31)."""

    TYPE: ClassVar[int] = m.MSG_NAK
    seq: int
    code: int


Message = Union[Hello, HelloRequest, Ping, Pong, Call, Result, EventMessage, Ack, Nak]
"""Any message dataclass."""

_LIMITS = {"max_str_len": 0xFFFF, "max_bin_len": 0xFFFF, "max_array_len": 0xFFFF, "max_map_len": 0xFFFF, "max_ext_len": 0xFFFF}
# payloads are at most 65535 bytes: msgpack need not reserve more for any field


def _no_ext(code: int, data: bytes) -> Any:
    # PROTOCOL.md §6: ext, fixext and timestamp formats are not part of the subset
    msg = f"msgpack ext type {code} is not allowed"
    raise ValueError(msg)


def _plain_value(v: Any, depth: int = 0) -> bool:
    # msgpack decodes the timestamp extension (type -1) without calling ext_hook
    if isinstance(v, msgpack.Timestamp):
        return False
    if isinstance(v, list):
        return all(_plain_value(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(_plain_value(k, depth + 1) and _plain_value(x, depth + 1) for k, x in v.items())
    return True


def _unpack(payload: bytes, what: str) -> Any:
    try:
        obj = msgpack.unpackb(payload, raw=False, use_list=True, strict_map_key=False, ext_hook=_no_ext, **_LIMITS)
        if not _plain_value(obj):
            msg = "msgpack ext type -1 (timestamp) is not allowed"
            raise ValueError(msg)
        return obj
    except (ValueError, TypeError, msgpack.UnpackException, OverflowError, RecursionError) as e:
        # ValueError covers ExtraData, FormatError, StackError, UnicodeDecodeError and
        # the ext refusal; TypeError an unhashable map key
        msg = f"Decoding a {what} payload: not valid msgpack ({type(e).__name__}: {e})"
        raise RemoteProtocolError(msg, m.ERR_PAYLOAD) from None


def _shape(what: str, text: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"Decoding a {what} payload: {text}", m.ERR_PAYLOAD)


def _is_uint(v: Any, hi: int = _UINT64) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= hi


def _array(obj: Any, n: int, what: str, fields: str) -> list:
    # extra trailing elements are a later version's additions: ignored (PROTOCOL.md §11)
    if not isinstance(obj, list) or len(obj) < n:
        raise _shape(what, f"expected an array of {n} ({fields}), got {_show(obj)}")
    return obj[:n]


def _show(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _value(v: Any) -> Any:
    # msgpack gives lists for arrays; values keep them (bin stays bytes)
    return v


def _decode_hello(obj: Any) -> Hello:
    what = "HELLO"
    dev, fw, maxp, fns, evs = _array(obj, 5, what, "device_id, fw_version, max_payload, functions, events")
    if not isinstance(dev, str) or not isinstance(fw, str):
        raise _shape(what, f"device_id and fw_version must be strings (got {_show(dev)}, {_show(fw)})")
    if not _is_uint(maxp, 0xFFFF):
        raise _shape(what, f"max_payload must be an integer from 0 to 65535 (got {_show(maxp)})")
    if not isinstance(fns, list) or not isinstance(evs, list):
        raise _shape(what, "functions and events must be arrays")
    specs = []
    for i, f in enumerate(fns):
        if not (isinstance(f, list) and len(f) >= 3 and all(isinstance(x, str) for x in f[:3])):
            raise _shape(what, f"function {i} must be [name, arg_types, result_type] strings (got {_show(f)})")
        name, args, res = f[:3]
        bad = [c for c in args + res if c not in TYPE_CODES]
        if bad or len(res) > 1:
            raise _shape(what, f"function {name!r} has unknown type codes {args!r} -> {res!r} (codes: {''.join(TYPE_CODES)})")
        specs.append(FunctionSpec(name, args, res))
    if not all(isinstance(e, str) for e in evs):
        raise _shape(what, f"events must be an array of names (got {_show(evs)})")
    return Hello(dev, fw, maxp, tuple(specs), tuple(evs))


def decode_message(packet: Packet) -> Message:
    """The message a packet carries.

    Raises:
        RemoteProtocolError: code LGB_ERR_TYPE for an unknown type, LGB_ERR_PAYLOAD for
            a payload that is not the type's layout (bad msgpack, wrong shape or types),
            LGB_ERR_LENGTH for an ACK, NAK, PING or PONG of the wrong size.
    """
    t, p = packet.type, packet.payload
    if t == m.MSG_ACK:
        if len(p) != 1:
            raise RemoteProtocolError(f"Decoding an ACK payload: 1 byte expected, got {len(p)}", m.ERR_LENGTH)
        return Ack(p[0])
    if t == m.MSG_NAK:
        if len(p) != 2:
            raise RemoteProtocolError(f"Decoding a NAK payload: 2 bytes expected, got {len(p)}", m.ERR_LENGTH)
        return Nak(p[0], p[1])
    if t in (m.MSG_PING, m.MSG_PONG):
        if len(p) > m.PING_MAX:
            name = m.MESSAGE_TYPES[t]
            raise RemoteProtocolError(f"Decoding a {name} payload: at most {m.PING_MAX} bytes, got {len(p)}", m.ERR_LENGTH)
        return Ping(p) if t == m.MSG_PING else Pong(p)
    if t == m.MSG_HELLO_REQ:
        if p:
            raise RemoteProtocolError(f"Decoding a HELLO_REQ payload: empty expected, got {len(p)} bytes", m.ERR_LENGTH)
        return HelloRequest()
    if t == m.MSG_HELLO:
        return _decode_hello(_unpack(p, "HELLO"))
    if t == m.MSG_CALL:
        cid, fn, args = _array(_unpack(p, "CALL"), 3, "CALL", "call_id, fn_index, args")
        if not _is_uint(cid, 0xFFFF) or not _is_uint(fn) or not isinstance(args, list):
            raise _shape("CALL", f"expected [uint16, uint, array], got {_show([cid, fn, args])}")
        return Call(cid, fn, tuple(args))
    if t == m.MSG_RESULT:
        cid, status, value = _array(_unpack(p, "RESULT"), 3, "RESULT", "call_id, status, value")
        if not _is_uint(cid, 0xFFFF) or not _is_uint(status, 0xFF):
            raise _shape("RESULT", f"expected [uint16, status 0..255, value], got {_show([cid, status, value])}")
        if status != m.OK and not isinstance(value, str):
            raise _shape("RESULT", f"a failed call's value must be its error text (str), got {_show(value)}")
        return Result(cid, status, _value(value))
    if t == m.MSG_EVENT:
        idx, ts, value = _array(_unpack(p, "EVENT"), 3, "EVENT", "event_index, timestamp_ms, value")
        if not _is_uint(idx) or not _is_uint(ts, 0xFFFFFFFF):
            raise _shape("EVENT", f"expected [uint, uint32, value], got {_show([idx, ts, value])}")
        return EventMessage(idx, ts, _value(value))
    raise RemoteProtocolError(f"Decoding a bridge message: unknown type 0x{t:02x}", m.ERR_TYPE)


def _pack(obj: Any, what: str) -> bytes:
    try:
        return msgpack.packb(obj, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as e:
        msg = f"Encoding a {what} payload: {e}"
        raise LocalProtocolError(msg, m.ERR_ARGS) from None


def encode_payload(msg: Message) -> bytes:
    """The payload bytes of a message.

    Raises:
        LocalProtocolError: a field out of range or a value msgpack cannot carry (code
            LGB_ERR_ARGS), a PING above 8 bytes (LGB_ERR_LENGTH).
    """
    if isinstance(msg, Ack):
        return bytes([_u8("seq", msg.seq)])
    if isinstance(msg, Nak):
        return bytes([_u8("seq", msg.seq), _u8("code", msg.code)])
    if isinstance(msg, (Ping, Pong)):
        data = bytes(msg.data)
        if len(data) > m.PING_MAX:
            text = f"Encoding a {type(msg).__name__.upper()}: at most {m.PING_MAX} bytes (got {len(data)})"
            raise LocalProtocolError(text, m.ERR_LENGTH)
        return data
    if isinstance(msg, HelloRequest):
        return b""
    if isinstance(msg, Hello):
        fns = [[f.name, f.arg_types, f.result_type] for f in msg.functions]
        return _pack([msg.device_id, msg.fw_version, msg.max_payload, fns, list(msg.events)], "HELLO")
    if isinstance(msg, Call):
        if not _is_uint(msg.call_id, 0xFFFF):
            raise LocalProtocolError(f"Encoding a CALL: 'call_id' must be 0..65535 (got {msg.call_id!r})", m.ERR_ARGS)
        return _pack([msg.call_id, msg.fn_index, list(msg.args)], "CALL")
    if isinstance(msg, Result):
        return _pack([msg.call_id, msg.status, msg.value], "RESULT")
    if isinstance(msg, EventMessage):
        return _pack([msg.event_index, msg.timestamp_ms, msg.value], "EVENT")
    text = f"Encoding a bridge message: {type(msg).__name__} is not a message class"
    raise LocalProtocolError(text, m.ERR_TYPE)


def encode_message(msg: Message, seq: int, flags: int | None = None) -> bytes:
    """The packet bytes (header, payload, CRC) of a message.

    Args:
        msg: the message.
        seq: the sender's sequence number.
        flags: the header flags; None sets FLAG_ACK_REQ for HELLO, CALL, RESULT and EVENT.

    Raises:
        LocalProtocolError: as `encode_payload` and `encode_packet`.
    """
    if flags is None:
        flags = m.FLAG_ACK_REQ if msg.TYPE in m.RELIABLE_TYPES else 0
    return encode_packet(msg.TYPE, seq, encode_payload(msg), flags)

