"""The shared test vectors (firmware-bridge/tests/vectors/*.txt, PROTOCOL.md §13), every line,
through the host side: the C library's tests read the same files.

frames.txt: the stream decoder and the encoder; payloads.txt: the message decoder;
isotp.txt: ISO-TP segmentation and reassembly (through can-isotp); primitives.txt: CRC
and COBS. A file that is missing skips with a reason; a line of an unknown kind fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import msgpack
import pytest

from lgembed.bridge import messages as m
from lgembed.bridge.codec import (
    Ack,
    Call,
    DecodeError,
    EventMessage,
    FrameDecoder,
    Hello,
    HelloRequest,
    Nak,
    Packet,
    Ping,
    Pong,
    Result,
    cobs_decode,
    cobs_encode,
    crc16,
    decode_message,
    encode_frame,
)
from lgembed.bridge.errors import RemoteProtocolError

VECTORS = Path(__file__).resolve().parents[1] / "firmware-bridge" / "tests" / "vectors"
MAX_PAYLOAD = 128  # PROTOCOL.md §13: every invalid vector assumes this receiver limit


def lines(name: str) -> list[tuple[int, list[str], str]]:
    """(line number, fields, the raw line) of every vector in a file."""
    path = VECTORS / name
    if not path.exists():
        pytest.skip(f"{path} is missing (firmware-bridge/tools/gen_vectors.py writes it): this tree has no firmware-bridge/")
    out = []
    for i, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        out.append((i, s.split(), s))
    assert out, f"{name} has no vectors"
    return out


def hx(field: str) -> bytes:
    return b"" if field == "-" else bytes.fromhex(field)


def code(name: str) -> int:
    assert name in m.ERROR_CODES, f"unknown error name {name}"
    return m.ERROR_CODES[name]


# --- frames.txt -----------------------------------------------------------------------------


def test_frames():
    kinds = {"valid": 0, "invalid": 0}
    seen_types = set()
    seen_errors = set()
    for n, f, raw in lines("frames.txt"):
        kind, name = f[0], f[1]
        wire = hx(f[2])
        where = f"frames.txt:{n} {name}"
        assert kind in kinds, f"{where}: unknown kind {kind!r}"
        kinds[kind] += 1
        bulk = FrameDecoder(MAX_PAYLOAD).feed(wire)
        dec = FrameDecoder(MAX_PAYLOAD)
        bytewise = [ev for i in range(len(wire)) for ev in dec.feed(wire[i : i + 1])]
        assert bulk == bytewise, where
        assert len(bulk) == 1, f"{where}: {bulk}"
        (ev,) = bulk
        if kind == "valid":
            mtype, seq, flags, payload = int(f[3], 16), int(f[4]), int(f[5], 16), hx(f[6])
            assert isinstance(ev, Packet), f"{where}: {ev}"
            assert (ev.type, ev.seq, ev.flags, ev.payload) == (mtype, seq, flags, payload), where
            assert encode_frame(mtype, seq, payload, flags) == wire, where
            seen_types.add(mtype)
        else:
            assert isinstance(ev, DecodeError), f"{where}: decoded {ev}"
            assert ev.name == f[3], f"{where}: {ev}"
            seen_errors.add(f[3])
    assert kinds["valid"] and kinds["invalid"]
    assert set(m.MESSAGE_TYPES) <= seen_types  # every message type has a valid frame
    assert {"LGB_ERR_CRC", "LGB_ERR_COBS", "LGB_ERR_TOO_LONG", "LGB_ERR_LENGTH", "LGB_ERR_VERSION"} <= seen_errors


# --- payloads.txt ---------------------------------------------------------------------------


def _as_value(msg) -> object:
    """A decoded message in the vectors' VALUE form."""
    if isinstance(msg, (Ack, Nak, Ping, Pong, HelloRequest)):
        return None  # compared as raw bytes
    if isinstance(msg, Hello):
        return [msg.device_id, msg.fw_version, msg.max_payload, [[f.name, f.arg_types, f.result_type] for f in msg.functions], list(msg.events)]
    if isinstance(msg, Call):
        return [msg.call_id, msg.fn_index, list(msg.args)]
    if isinstance(msg, Result):
        return [msg.call_id, msg.status, msg.value]
    if isinstance(msg, EventMessage):
        return [msg.event_index, msg.timestamp_ms, msg.value]
    raise AssertionError(msg)


def _schema(mtype: int, value: list) -> list:
    """The vector's value without the trailing elements a later version may add (§11)."""
    if mtype == m.MSG_HELLO:
        return [*value[:3], [fn[:3] for fn in value[3]], value[4]]
    return value[:3]


def test_payloads():
    seen = {"valid": set(), "invalid": set()}
    for n, f, raw in lines("payloads.txt"):
        kind, name, mtype, payload = f[0], f[1], int(f[2], 16), hx(f[3])
        where = f"payloads.txt:{n} {name}"
        assert kind in seen, f"{where}: unknown kind {kind!r}"
        seen[kind].add(mtype)
        pkt = Packet(mtype, 0, payload, m.FLAG_ACK_REQ if mtype in m.RELIABLE_TYPES else 0)
        if kind == "valid":
            value = ast.literal_eval(raw.split(None, 4)[4])
            msg = decode_message(pkt)
            if mtype in (m.MSG_ACK, m.MSG_NAK, m.MSG_PING, m.MSG_PONG, m.MSG_HELLO_REQ):
                assert value == payload, where
            else:
                assert msgpack.unpackb(payload, raw=False, strict_map_key=False) == value, where
                assert _as_value(msg) == _schema(mtype, value), f"{where}: {_as_value(msg)!r} != {value!r}"
        else:
            with pytest.raises(RemoteProtocolError) as ei:
                decode_message(pkt)
            assert ei.value.code == code(f[4]), f"{where}: got {ei.value.code_name} ({ei.value})"
    assert seen["valid"] >= set(m.MESSAGE_TYPES)


# --- isotp.txt ------------------------------------------------------------------------------


def _frames(fields: list[str]) -> list[tuple[str, bytes]]:
    out = []
    for x in fields:
        assert x[0] in "<>", x
        out.append((x[0], bytes.fromhex(x[1:])))
    return out


def test_isotp():
    pytest.importorskip("isotp", reason="can-isotp is not installed (the hardware extra)")
    from lgembed.bridge.isotp import reassemble, segment

    kinds = {"valid": 0, "invalid-rx": 0, "invalid-tx": 0}
    for n, f, _raw in lines("isotp.txt"):
        kind, name = f[0], f[1]
        where = f"isotp.txt:{n} {name}"
        assert kind in kinds, f"{where}: unknown kind {kind!r}"
        kinds[kind] += 1
        if kind == "valid":
            packet = hx(f[2])
            frames = _frames(f[3:])
            data = [b for d, b in frames if d == ">"]
            fcs = [b for d, b in frames if d == "<"]
            assert segment(packet, fcs or [b"\x30\x00\x00"]) == data, where
            bs, stmin = (fcs[0][1], fcs[0][2]) if fcs else (0, 0)
            got, answered = reassemble(data, block_size=bs, stmin=stmin)
            assert got == packet, where
            assert answered == fcs, where
        elif kind == "invalid-rx":
            frames = _frames(f[3:])
            data = [b for d, b in frames if d == ">"]
            fcs = [b for d, b in frames if d == "<"]
            with pytest.raises(RemoteProtocolError) as ei:
                reassemble(data, max_packet=8 + MAX_PAYLOAD)
            assert ei.value.code == code(f[2]), f"{where}: got {ei.value.code_name} ({ei.value})"
            assert ei.value.sent == fcs, where
            assert ei.value.packet is None, where
        else:
            packet = hx(f[3])
            frames = _frames(f[4:])
            data = [b for d, b in frames if d == ">"]
            fcs = [b for d, b in frames if d == "<"]
            with pytest.raises(RemoteProtocolError) as ei:
                segment(packet, fcs)
            assert ei.value.code == code(f[2]), f"{where}: got {ei.value.code_name} ({ei.value})"
            assert ei.value.sent == data, where
    assert all(kinds.values()), kinds


# --- primitives.txt -------------------------------------------------------------------------


def test_primitives():
    kinds = {"crc16": 0, "cobs": 0}
    for n, f, _raw in lines("primitives.txt"):
        kind, name = f[0], f[1]
        where = f"primitives.txt:{n} {name}"
        assert kind in kinds, f"{where}: unknown kind {kind!r}"
        kinds[kind] += 1
        if kind == "crc16":
            assert crc16(hx(f[2])) == int(f[3], 16), where
        else:
            raw, enc = hx(f[2]), hx(f[3])
            assert cobs_encode(raw) == enc, where
            assert cobs_decode(enc) == raw, where
    assert all(kinds.values()), kinds
