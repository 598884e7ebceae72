"""The bridge's sans-I/O codec (lgembed.bridge.codec): CRC, COBS, packets, the streaming
frame decoder, message payloads, and Hypothesis properties (issue 14, fuzzing).

Properties: random bytes never make the decoder raise, and every error it reports is a
documented code; feeding one byte at a time equals feeding everything at once; frames
and messages round-trip; garbage between frames never loses a following frame.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lgembed.bridge import messages as m
from lgembed.bridge.codec import (
    Ack,
    Call,
    DecodeError,
    EventMessage,
    FrameDecoder,
    FunctionSpec,
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
    decode_packet,
    encode_frame,
    encode_message,
    encode_packet,
    encode_payload,
    frame_packet,
)
from lgembed.bridge.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from lgembed.edge.errors import EdgeError

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = ROOT / "firmware-bridge" / "PROTOCOL.md"

DOCUMENTED = set(m.ERRORS) - {m.OK}


def feed_all(dec: FrameDecoder, data: bytes) -> list:
    return dec.feed(data)


def feed_bytewise(dec: FrameDecoder, data: bytes) -> list:
    out = []
    for i in range(len(data)):
        out += dec.feed(data[i : i + 1])
    return out


# --- CRC and COBS ----------------------------------------------------------------------------


def test_crc_check_value_and_continuation():
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"56789", crc16(b"1234")) == 0x29B1
    assert crc16(b"") == 0xFFFF


@pytest.mark.parametrize(
    ("data", "encoded"),
    [
        (b"", b"\x01"),
        (b"\x00", b"\x01\x01"),
        (b"\x00\x00", b"\x01\x01\x01"),
        (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        (bytes.fromhex("0102000000000f33"), bytes.fromhex("03010201010103 0f33".replace(" ", ""))),
        (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255)) + b"\x01"),  # PROTOCOL.md §4.2: a final 0x01 block
        (bytes(range(1, 256)), b"\xff" + bytes(range(1, 255)) + b"\x02\xff"),
    ],
)
def test_cobs_known_encodings(data, encoded):
    assert cobs_encode(data) == encoded
    assert cobs_decode(encoded) == data


def test_cobs_decoder_accepts_the_short_ending_and_refuses_truncation():
    run = bytes(range(1, 255))
    assert cobs_decode(b"\xff" + run) == run  # no final 0x01 block: also valid
    with pytest.raises(RemoteProtocolError) as ei:
        cobs_decode(b"\x05\x01\x02")
    assert ei.value.code == m.ERR_COBS
    with pytest.raises(RemoteProtocolError):
        cobs_decode(b"\x02\x00")


@given(st.binary(max_size=1200))
def test_cobs_round_trip_and_size(data):
    enc = cobs_encode(data)
    assert 0 not in enc
    assert len(enc) <= len(data) + len(data) // 254 + 1
    assert cobs_decode(enc) == data


# --- packets -------------------------------------------------------------------------------


def test_packet_layout_matches_protocol_example():
    # PROTOCOL.md §3.3: HELLO_REQ seq 0, empty payload
    pkt = encode_packet(m.MSG_HELLO_REQ, 0)
    assert pkt.hex() == "0102000000000f33"
    assert encode_frame(m.MSG_HELLO_REQ, 0).hex() == "030102010101030f3300"
    p = decode_packet(pkt)
    assert (p.type, p.seq, p.flags, p.payload, p.version) == (m.MSG_HELLO_REQ, 0, 0, b"", 1)


def test_decode_packet_check_order():
    good = encode_packet(m.MSG_PING, 7, b"abc", 0)
    cases = {
        "too long": (encode_packet(m.MSG_PING, 7, bytes(200)), m.ERR_TOO_LONG, None),
        "short": (good[:7], m.ERR_LENGTH, None),
        "crc": (good[:-1] + bytes([good[-1] ^ 1]), m.ERR_CRC, None),
        # a length field that disagrees, with a good CRC: NAK-able (seq known)
        "length": (_with_crc(good[:5] + b"\x02" + good[6:-2]), m.ERR_LENGTH, 7),
        "version": (_with_crc(b"\x02" + good[1:-2]), m.ERR_VERSION, 7),
        # a too-long packet with a bad CRC is TOO_LONG (check 1 before check 4)
        "too long, bad crc": (encode_packet(m.MSG_PING, 7, bytes(200))[:-1] + b"\x00", m.ERR_TOO_LONG, None),
        # a bad version and a bad length field: the length field is checked first
        "length before version": (_with_crc(b"\x09" + good[1:5] + b"\x09" + good[6:-2]), m.ERR_LENGTH, 7),
    }
    for name, (raw, code, seq) in cases.items():
        with pytest.raises(RemoteProtocolError) as ei:
            decode_packet(raw, max_payload=128)
        assert ei.value.code == code, name
        assert ei.value.seq == seq, name


def _with_crc(body: bytes) -> bytes:
    return body + crc16(body).to_bytes(2, "big")


def test_encode_packet_refuses_bad_fields():
    with pytest.raises(LocalProtocolError, match=re.escape("'seq' must be an integer from 0 to 255 (got 256)")):
        encode_packet(m.MSG_PING, 256)
    with pytest.raises(LocalProtocolError) as ei:
        encode_packet(m.MSG_PING, 1, bytes(70000))
    assert ei.value.code == m.ERR_TOO_LONG
    assert isinstance(ei.value, EdgeError)


def test_packet_flags_and_repr():
    p = Packet(m.MSG_CALL, 3, b"\x93", m.FLAG_ACK_REQ | m.FLAG_RETRY)
    assert p.ack_req and p.retry
    assert repr(p) == "Packet(CALL seq=3 ACK_REQ|RETRY payload=93)"
    assert decode_packet(p.encode()) == p


# --- the streaming decoder -----------------------------------------------------------------


def test_decoder_resynchronises_after_garbage():
    f1 = encode_frame(m.MSG_PING, 1, b"a")
    f2 = encode_frame(m.MSG_PING, 2, b"b")
    dec = FrameDecoder(128)
    events = dec.feed(b"\x13\x37garbage" + b"\x00" + f1 + b"\x05\x01" + b"\x00" + f2)
    kinds = [e.name if isinstance(e, DecodeError) else e.seq for e in events]
    assert kinds == ["LGB_ERR_COBS", 1, "LGB_ERR_COBS", 2]
    assert dec.packets == 2 and dec.errors == {m.ERR_COBS: 2}
    assert dec.dropped_bytes == 11


def test_decoder_skips_empty_frames_and_keeps_partial_frames():
    f = encode_frame(m.MSG_PING, 9, b"xyz")
    dec = FrameDecoder()
    assert dec.feed(b"\x00\x00\x00" + f[:4]) == []
    assert dec.buffered == 4
    (p,) = dec.feed(f[4:])
    assert p.seq == 9 and dec.buffered == 0


def test_decoder_memory_is_bounded_and_reports_too_long_once():
    dec = FrameDecoder(max_payload=16)
    events = []
    for _ in range(200):
        events += dec.feed(b"\x01" * 997)  # 197 kB of 0x01 bytes: empty blocks, 0x00 each
        assert len(dec._dec) <= 8 + 16
    events += dec.feed(b"\x00" + encode_frame(m.MSG_PING, 4))
    assert [e.name if isinstance(e, DecodeError) else e.seq for e in events] == ["LGB_ERR_TOO_LONG", 4]


def test_decoder_reports_nakable_errors_with_seq():
    bad_version = _with_crc(b"\x07\x03\x00\x2a\x00\x00")
    (e,) = FrameDecoder().feed(frame_packet(bad_version))
    assert (e.code, e.seq, e.type) == (m.ERR_VERSION, 0x2A, m.MSG_PING)
    bad_crc = encode_packet(m.MSG_PING, 0x2A)[:-1] + b"\x00"
    (e,) = FrameDecoder().feed(frame_packet(bad_crc))
    assert (e.code, e.seq) == (m.ERR_CRC, None)
    assert str(e).startswith("LGB_ERR_CRC: CRC 0x")


def test_decoder_rejects_bad_max_payload():
    with pytest.raises(ValueError, match=re.escape("'max_payload' must be an integer from 0 to 65535 (got -1)")):
        FrameDecoder(-1)


# --- messages -------------------------------------------------------------------------------

HELLO = Hello(
    "sensor-node",
    "1.0.0",
    128,
    (FunctionSpec("read_temp", "", "f"), FunctionSpec("set_led", "b", "b"), FunctionSpec("echo", "y", "y")),
    ("button",),
)

MESSAGES = [
    HELLO,
    HelloRequest(),
    Ping(b"\x01\x02\x03\x04"),
    Pong(b""),
    Call(1, 0, ()),
    Call(65535, 2, (b"\x00\xff",)),
    Result(1, 0, 21.5),
    Result(3, m.ERR_NO_FUNCTION, "no function 7"),
    EventMessage(0, 12345, True),
    Ack(255),
    Nak(8, m.ERR_TYPE),
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda x: type(x).__name__)
def test_message_round_trip(msg):
    pkt = decode_packet(encode_message(msg, 5))
    assert pkt.ack_req == (msg.TYPE in m.RELIABLE_TYPES)
    assert decode_message(pkt) == msg


def test_protocol_md_hello_example():
    # PROTOCOL.md §12: the example firmware's HELLO
    pkt = encode_message(HELLO, 0)
    assert pkt[:6].hex() == "010101000043"
    assert pkt[-2:].hex() == "4881"


def test_payload_errors():
    def bad(t, payload, code):
        with pytest.raises(RemoteProtocolError) as ei:
            decode_message(Packet(t, 0, payload))
        assert ei.value.code == code, (t, payload)

    bad(m.MSG_ACK, b"", m.ERR_LENGTH)
    bad(m.MSG_ACK, b"\x01\x02", m.ERR_LENGTH)
    bad(m.MSG_NAK, b"\x01", m.ERR_LENGTH)
    bad(m.MSG_PING, bytes(9), m.ERR_LENGTH)
    bad(m.MSG_HELLO_REQ, b"\x00", m.ERR_LENGTH)
    bad(m.MSG_CALL, b"\x93\x01\x00", m.ERR_PAYLOAD)  # truncated
    bad(m.MSG_CALL, b"\x93\x01\x00\x90\xc0", m.ERR_PAYLOAD)  # trailing bytes
    bad(m.MSG_CALL, b"\x93\xce\x00\x01\x00\x00\x00\x90", m.ERR_PAYLOAD)  # call_id 65536
    bad(m.MSG_CALL, b"\x92\x01\x00", m.ERR_PAYLOAD)  # two elements
    bad(m.MSG_EVENT, b"\x93\x00\xcf" + (1 << 32).to_bytes(8, "big") + b"\xc3", m.ERR_PAYLOAD)  # timestamp > uint32
    bad(m.MSG_RESULT, b"\x93\x01\x00\xd4\x01\x00", m.ERR_PAYLOAD)  # an ext value
    bad(m.MSG_RESULT, b"\x93\x01\x00\xd6\xff\x00\x00\x00\x01", m.ERR_PAYLOAD)  # a timestamp
    bad(m.MSG_HELLO, b"\x95\xa1x\xa1y\xcc\x80\x91\x93\xa1f\xa1z\xa1f\x90", m.ERR_PAYLOAD)  # type code z
    bad(0x7F, b"", m.ERR_TYPE)


def test_later_versions_extra_array_elements_are_ignored():
    # PROTOCOL.md §11: receivers accept longer arrays and ignore the extra elements
    import msgpack

    p = msgpack.packb([7, 0, 1.5, "future", 9])
    assert decode_message(Packet(m.MSG_RESULT, 0, p)) == Result(7, 0, 1.5)
    h = msgpack.packb(["d", "v", 64, [["f", "i", "n", "extra"]], ["e"], {"new": 1}])
    assert decode_message(Packet(m.MSG_HELLO, 0, h)) == Hello("d", "v", 64, (FunctionSpec("f", "i", "n"),), ("e",))


def test_encode_payload_errors():
    with pytest.raises(LocalProtocolError) as ei:
        encode_payload(Ping(bytes(9)))
    assert ei.value.code == m.ERR_LENGTH
    with pytest.raises(LocalProtocolError) as ei:
        encode_payload(Call(70000, 0, ()))
    assert ei.value.code == m.ERR_ARGS
    with pytest.raises(LocalProtocolError):
        encode_payload(Call(1, 0, (object(),)))


# --- PROTOCOL.md's worked exchange -----------------------------------------------------------


def _worked_exchange() -> list[tuple[str, bytes, bytes]]:
    """(label, packet, wire) of every message in PROTOCOL.md §12."""
    if not PROTOCOL.exists():
        pytest.skip("firmware-bridge/PROTOCOL.md is missing: this tree has no firmware-bridge/")
    text = PROTOCOL.read_text()
    sect = text.split("## 12. Worked exchange", 1)[1].split("```", 2)[1]
    blocks: list[tuple[str, dict]] = []
    field = None
    for line in sect.splitlines():
        stripped = line.strip()
        if re.match(r"^[HM]->[HM] ", stripped):
            blocks.append((stripped, {}))
            field = None
            continue
        mo = re.match(r"^(packet|wire)\s+([0-9a-f ]+)$", stripped)
        if mo and blocks:
            field = mo.group(1)
            blocks[-1][1][field] = mo.group(2)
        elif field and stripped and re.fullmatch(r"[0-9a-f ]+", stripped):
            blocks[-1][1][field] += " " + stripped
        else:
            field = None
    return [
        (label, bytes.fromhex(d["packet"].replace(" ", "")), bytes.fromhex(d["wire"].replace(" ", "")))
        for label, d in blocks
        if "packet" in d and "wire" in d
    ]


def test_protocol_md_worked_exchange():
    pairs = _worked_exchange()
    assert len(pairs) >= 15
    for label, pkt, wire in pairs:
        assert frame_packet(pkt) == wire, label
        (p,) = FrameDecoder().feed(wire)
        assert p.encode() == pkt, label
        if p.type in m.MESSAGE_TYPES:
            msg = decode_message(p)
            if not (isinstance(msg, Result) and isinstance(msg.value, float)):
                # (the MCU sends 21.5 as float32; the host's msgpack writes float64)
                assert encode_message(msg, p.seq, p.flags) == pkt, label


# --- Hypothesis: fuzzing the decoder -----------------------------------------------------------


def _frames() -> st.SearchStrategy[bytes]:
    payload = st.binary(max_size=140)
    good = st.builds(
        lambda t, s, f, p: encode_frame(t, s, p, f),
        st.sampled_from(sorted(m.MESSAGE_TYPES) + [0x7F]),
        st.integers(0, 255),
        st.integers(0, 3),
        payload,
    )
    damaged = st.builds(lambda f, i, b: f[:i] + bytes([b]) + f[i + 1 :], good, st.integers(0, 200), st.integers(0, 255))
    return st.one_of(good, damaged, st.binary(max_size=300))


@settings(max_examples=400, deadline=None)
@given(st.lists(_frames(), max_size=6), st.integers(8, 200))
def test_decoder_never_raises_and_bytewise_equals_bulk(chunks, max_payload):
    data = b"".join(chunks)
    bulk = feed_all(FrameDecoder(max_payload), data)
    byte = feed_bytewise(FrameDecoder(max_payload), data)
    assert bulk == byte
    for ev in bulk:
        if isinstance(ev, DecodeError):
            assert ev.code in DOCUMENTED
            assert ev.code in (m.ERR_COBS, m.ERR_TOO_LONG, m.ERR_LENGTH, m.ERR_CRC, m.ERR_VERSION)
            assert (ev.seq is not None) == (ev.code in (m.ERR_LENGTH, m.ERR_VERSION) and ev.seq is not None)
        else:
            assert len(ev.payload) <= max_payload
            try:
                decode_message(ev)
            except ProtocolError as e:
                assert isinstance(e, RemoteProtocolError) and e.code in DOCUMENTED


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_random_bytes_any_split(data, cuts):
    dec = FrameDecoder(128)
    whole = FrameDecoder(128).feed(data)
    out, i, k = [], 0, 0
    while i < len(data):
        n = cuts[k % len(cuts)]
        out += dec.feed(data[i : i + n])
        i, k = i + n, k + 1
    assert out == whole


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=100), _frames(), st.integers(0, 255), st.binary(max_size=120))
def test_garbage_never_loses_the_next_frame(garbage, _junk, seq, payload):
    f = encode_frame(m.MSG_PING, seq, payload)
    events = FrameDecoder(128).feed(garbage + b"\x00" + f)
    assert isinstance(events[-1], Packet)
    assert (events[-1].seq, events[-1].payload) == (seq, payload)


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=20) | st.binary(max_size=20),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 65535), st.integers(0, 2**32 - 1), st.integers(0, 255), _values)
def test_message_round_trips(call_id, ts, status, value):
    result = Result(call_id, status, value) if status == 0 else Result(call_id, status, str(value))
    for msg in (result, EventMessage(call_id, ts, value), Call(call_id, status, (value,))):
        assert decode_message(decode_packet(encode_message(msg, 1))) == msg


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(sorted(m.MESSAGE_TYPES) + [0x00, 0x7F, 0xFF]), st.binary(max_size=200))
def test_random_payloads_raise_only_documented_errors(mtype, payload):
    try:
        decode_message(Packet(mtype, 0, payload))
    except RemoteProtocolError as e:
        assert e.code in (m.ERR_TYPE, m.ERR_LENGTH, m.ERR_PAYLOAD)
