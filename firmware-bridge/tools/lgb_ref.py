"""Reference model of the lgembed firmware-bridge wire format, written from PROTOCOL.md.

Why this exists: the test vectors (tests/vectors/*.txt) and every hex example in
PROTOCOL.md are computed by this module, so the document, the vectors, the C library
and the host codec can all be checked against one small, readable model. It is a
maintenance tool: nothing in lgembed imports it. Only the standard library and
msgpack are used.
"""

from __future__ import annotations

import struct

VERSION = 0x01

# Message types (PROTOCOL.md §5), mirrored by include/lgb_msg.h.
HELLO = 0x01
HELLO_REQ = 0x02
PING = 0x03
PONG = 0x04
CALL = 0x10
RESULT = 0x11
EVENT = 0x20
ACK = 0x30
NAK = 0x31

TYPE_NAMES = {
    HELLO: "HELLO", HELLO_REQ: "HELLO_REQ", PING: "PING", PONG: "PONG", CALL: "CALL",
    RESULT: "RESULT", EVENT: "EVENT", ACK: "ACK", NAK: "NAK",
}

# Header flags.
FLAG_ACK_REQ = 0x01
FLAG_RETRY = 0x02

HEADER_SIZE = 6
CRC_SIZE = 2
PING_MAX = 8

# Error codes (lgb_ret_t), PROTOCOL.md §10.
ERRORS = {
    "LGB_OK": 0, "LGB_ERR_CRC": 1, "LGB_ERR_COBS": 2, "LGB_ERR_TOO_LONG": 3,
    "LGB_ERR_VERSION": 4, "LGB_ERR_TYPE": 5, "LGB_ERR_LENGTH": 6, "LGB_ERR_PAYLOAD": 7,
    "LGB_ERR_NO_FUNCTION": 8, "LGB_ERR_ARGS": 9, "LGB_ERR_BUSY": 10, "LGB_ERR_FUNCTION": 11,
    "LGB_ERR_BUFFER": 12, "LGB_ERR_TIMEOUT": 13, "LGB_ERR_STATE": 14, "LGB_ERR_ISOTP": 15,
}


class DecodeError(Exception):
    """A frame the decoder drops; .name is the LGB_ERR_* name."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no xorout."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing (Cheshire & Baker), without the delimiter."""
    out = bytearray()
    block = bytearray()
    for byte in data:
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out.append(255)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Inverse of cobs_encode (no delimiter in data); raises DecodeError('LGB_ERR_COBS')."""
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data):
            raise DecodeError("LGB_ERR_COBS")
        out += data[i + 1:i + code]
        i += code
        if code < 255 and i < len(data):
            out.append(0)
    return bytes(out)


def packet(mtype: int, seq: int, payload: bytes = b"", flags: int = 0, version: int = VERSION,
           length: int | None = None) -> bytes:
    """Header + payload + CRC. `length` overrides the length field (for invalid vectors)."""
    n = len(payload) if length is None else length
    body = struct.pack(">BBBBH", version, mtype, flags, seq, n) + payload
    return body + struct.pack(">H", crc16(body))


def frame(pkt: bytes) -> bytes:
    """What goes on the UART: COBS(packet) then one 0x00."""
    return cobs_encode(pkt) + b"\x00"


def parse_packet(pkt: bytes, max_payload: int) -> tuple[int, int, int, bytes]:
    """Check a decoded packet in the order PROTOCOL.md §3.4 gives; returns (type, seq, flags, payload)."""
    if len(pkt) > HEADER_SIZE + max_payload + CRC_SIZE:
        raise DecodeError("LGB_ERR_TOO_LONG")
    if len(pkt) < HEADER_SIZE + CRC_SIZE:
        raise DecodeError("LGB_ERR_LENGTH")
    if crc16(pkt[:-2]) != struct.unpack(">H", pkt[-2:])[0]:
        raise DecodeError("LGB_ERR_CRC")
    if struct.unpack(">H", pkt[4:6])[0] != len(pkt) - HEADER_SIZE - CRC_SIZE:
        raise DecodeError("LGB_ERR_LENGTH")
    if pkt[0] != VERSION:
        raise DecodeError("LGB_ERR_VERSION")
    return pkt[1], pkt[3], pkt[2], pkt[HEADER_SIZE:-CRC_SIZE]


def decode_wire(wire: bytes, max_payload: int) -> list:
    """Feed a byte string to a model stream decoder; returns packets (tuples) and DecodeErrors."""
    out: list = []
    buf = bytearray()
    for byte in wire:
        if byte != 0:
            buf.append(byte)
            continue
        if not buf:
            continue  # an empty frame (two delimiters) is ignored, not an error
        enc = bytes(buf)
        buf.clear()
        try:
            # The encoded length bounds the decoded length from above, but the
            # decoded length is what counts: a streaming decoder stops storing at
            # max + 1 decoded bytes and reports TOO_LONG at the delimiter.
            try:
                dec = cobs_decode(enc)
            except DecodeError:
                # TOO_LONG wins over COBS when enough bytes arrived (see §3.4).
                partial = _cobs_decode_prefix(enc)
                if len(partial) > HEADER_SIZE + max_payload + CRC_SIZE:
                    raise DecodeError("LGB_ERR_TOO_LONG") from None
                raise
            out.append(parse_packet(dec, max_payload))
        except DecodeError as e:
            out.append(e)
    return out


def _cobs_decode_prefix(data: bytes) -> bytes:
    """What a streaming COBS decoder has emitted when the input ends (possibly mid-block)."""
    out = bytearray()
    remaining = 0
    code = 0xFF
    first = True
    for byte in data:
        if remaining == 0:
            if not first and code != 0xFF:
                out.append(0)
            first = False
            code = byte
            remaining = code - 1
        else:
            out.append(byte)
            remaining -= 1
    return bytes(out)


# ---------------------------------------------------------------- ISO-TP (ISO 15765-2)

PAD = 0xCC


def isotp_segment(pkt: bytes, pad: int | None = PAD) -> list[bytes]:
    """The data frames a sender produces for one packet (flow control not shown)."""

    def padded(b: bytes) -> bytes:
        return b + bytes([pad]) * (8 - len(b)) if pad is not None else b

    n = len(pkt)
    if n <= 7:
        return [padded(bytes([n]) + pkt)]
    if n > 4095:
        raise ValueError("packet longer than 4095 bytes cannot use a classic first frame")
    frames = [bytes([0x10 | (n >> 8), n & 0xFF]) + pkt[:6]]
    rest = pkt[6:]
    sn = 1
    while rest:
        frames.append(padded(bytes([0x20 | sn]) + rest[:7]))
        rest = rest[7:]
        sn = (sn + 1) & 0x0F
    return frames


def flow_control(status: int = 0, block_size: int = 0, stmin: int = 0, pad: int | None = PAD) -> bytes:
    """A flow-control frame: status 0 = continue to send, 1 = wait, 2 = overflow."""
    b = bytes([0x30 | status, block_size, stmin])
    return b + bytes([pad]) * 5 if pad is not None else b
