"""The bridge's framing, sans I/O: CRC-16, COBS, packets, and the streaming frame decoder.

Why: everything between the wire and a packet's header and payload bytes lives here,
tested without a port, a thread or a clock (h11 is the model). `FrameDecoder.feed(bytes)`
takes whatever a UART read returned (half a frame, three frames, garbage) and returns
what it completed: `Packet`s and `DecodeError`s, in order; it never raises on input and
its memory is bounded. `encode_frame` is the inverse. ISO-TP carries packets without
COBS (`encode_packet` / `decode_packet`). PROTOCOL.md §3 and §4 (in firmware-bridge/)
are the specification; `lgembed.bridge.codec` adds the message payloads on top.

    UART: COBS(packet) 0x00          CAN: ISO-TP carries the packet as is
    packet = header(6) + payload + CRC-16/CCITT-FALSE(header + payload), big-endian
    header = version, type, flags, seq, payload length (uint16 BE)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from lgembed.bridge import messages as m
from lgembed.bridge.errors import LocalProtocolError, RemoteProtocolError

__all__ = (
    "DEFAULT_MAX_PAYLOAD",
    "DecodeError",
    "FrameDecoder",
    "Packet",
    "cobs_decode",
    "cobs_encode",
    "crc16",
    "decode_packet",
    "encode_frame",
    "encode_packet",
    "frame_packet",
    "max_frame_len",
)

DEFAULT_MAX_PAYLOAD = 4096
"""The longest payload a host-side decoder accepts unless told otherwise (the MCU's own
limit, from its HELLO, is usually far lower; the protocol's is 65535)."""

# --- CRC-16/CCITT-FALSE --------------------------------------------------------------------


def _crc_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()
# Strategy: a 256-entry table, one lookup per byte (the C side may use the bitwise loop;
# both give the check value 0x29B1 for b"123456789")


def crc16(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR.

    Args:
        data: the bytes.
        crc: the running value, to continue a CRC over several pieces.

    Returns:
        The CRC, 0..0xFFFF (`crc16(b"123456789") == 0x29B1`).
    """
    table = _CRC_TABLE
    for b in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ b]
    return crc


# --- COBS ----------------------------------------------------------------------------------


def cobs_encode(data: bytes | bytearray | memoryview) -> bytes:
    """COBS-encodes `data` (Cheshire & Baker): the result has no 0x00 byte and is
    len(data) + len(data) // 254 + 1 bytes long. The delimiter is not added.

    As in PROTOCOL.md, a block of 254 non-zero bytes (code 0xFF) is always followed by
    another block, so data ending exactly with such a block ends in a 0x01 block.
    """
    src = bytes(data)
    out = bytearray()
    i, n = 0, len(src)
    while True:
        j = src.find(0, i, i + 254)
        if j < 0:
            j = min(i + 254, n)
            if j - i == 254:
                out.append(0xFF)
                out += src[i:j]
                i = j
                continue
            out.append(j - i + 1)
            out += src[i:j]
            break
        out.append(j - i + 1)
        out += src[i:j]
        i = j + 1
    return bytes(out)


def cobs_decode(data: bytes | bytearray | memoryview) -> bytes:
    """Decodes one COBS block (without its 0x00 delimiter).

    Raises:
        RemoteProtocolError: code LGB_ERR_COBS: a 0x00 inside, or a block code pointing
            past the end.
    """
    src = bytes(data)
    out = bytearray()
    i, n = 0, len(src)
    while i < n:
        code = src[i]
        if code == 0:
            msg = f"COBS decoding: a 0x00 byte at offset {i} inside a frame"
            raise RemoteProtocolError(msg, m.ERR_COBS)
        end = i + code
        if end > n:
            msg = f"COBS decoding: the block code 0x{code:02x} at offset {i} points past the end of the {n}-byte frame"
            raise RemoteProtocolError(msg, m.ERR_COBS)
        chunk = src[i + 1 : end]
        if 0 in chunk:
            msg = f"COBS decoding: a 0x00 byte at offset {i + 1 + chunk.index(0)} inside a frame"
            raise RemoteProtocolError(msg, m.ERR_COBS)
        out += chunk
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def max_frame_len(max_payload: int) -> int:
    """The longest UART frame (COBS bytes plus the 0x00 delimiter) for a payload limit."""
    n = m.HEADER_LEN + max_payload + m.CRC_LEN
    return n + n // 254 + 1 + 1


# --- packets -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Packet:
    """One packet: the header's fields and the payload (the CRC was good).

    Attributes:
        type: the message type (MSG_*).
        seq: the sender's sequence number, 0..255.
        payload: the payload bytes.
        flags: FLAG_ACK_REQ | FLAG_RETRY bits.
        version: the protocol version byte.
    """

    type: int
    seq: int
    payload: bytes = b""
    flags: int = 0
    version: int = m.VERSION

    @property
    def ack_req(self) -> bool:
        """Whether the receiver must acknowledge it."""
        return bool(self.flags & m.FLAG_ACK_REQ)

    @property
    def retry(self) -> bool:
        """Whether it is a retransmission."""
        return bool(self.flags & m.FLAG_RETRY)

    def encode(self) -> bytes:
        """The packet's bytes (header, payload, CRC); see `encode_packet`."""
        return encode_packet(self.type, self.seq, self.payload, self.flags, self.version)

    def __repr__(self) -> str:
        name = m.MESSAGE_TYPES.get(self.type, f"0x{self.type:02x}")
        fl = "|".join(n for bit, n in ((m.FLAG_ACK_REQ, "ACK_REQ"), (m.FLAG_RETRY, "RETRY")) if self.flags & bit)
        return f"Packet({name} seq={self.seq}{' ' + fl if fl else ''} payload={self.payload.hex() or '-'})"


@dataclass(frozen=True)
class DecodeError:
    """A frame the decoder dropped (an event of `FrameDecoder.feed`, not an exception).

    Attributes:
        code: the error code (LGB_ERR_COBS, LGB_ERR_CRC, ...).
        detail: what was wrong, in words.
        data: the dropped bytes (at most the first 64).
        seq: the frame's seq when its CRC was good (the receiver NAKs it), else None.
        type: the frame's type byte when its CRC was good, else None.
    """

    code: int
    detail: str
    data: bytes = b""
    seq: int | None = None
    type: int | None = None

    @property
    def name(self) -> str:
        """The code's C name, e.g. "LGB_ERR_CRC"."""
        return m.error_name(self.code)

    def __str__(self) -> str:
        return f"{self.name}: {self.detail}"


def _u8(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 0xFF:
        msg = f"Encoding a packet: '{name}' must be an integer from 0 to 255 (got {v!r})"
        raise LocalProtocolError(msg, m.ERR_ARGS)
    return v


def encode_packet(type: int, seq: int, payload: bytes = b"", flags: int = 0, version: int = m.VERSION) -> bytes:
    """The packet's bytes: header, payload, CRC (no COBS; ISO-TP carries this as is).

    Raises:
        LocalProtocolError: a field out of range (code LGB_ERR_ARGS), or a payload above
            65535 bytes (code LGB_ERR_TOO_LONG).
    """
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        msg = f"Encoding a packet: 'payload' must be bytes (got {type(payload).__name__})"  # type: ignore[operator]
        raise LocalProtocolError(msg, m.ERR_ARGS)
    payload = bytes(payload)
    if len(payload) > 0xFFFF:
        msg = f"Encoding a packet: the payload has {len(payload)} bytes, above the protocol's limit of 65535"
        raise LocalProtocolError(msg, m.ERR_TOO_LONG)
    head = struct.pack(">BBBBH", _u8("version", version), _u8("type", type), _u8("flags", flags), _u8("seq", seq), len(payload))
    body = head + payload
    return body + crc16(body).to_bytes(2, "big")


def frame_packet(packet: bytes | bytearray) -> bytes:
    """The UART frame of an encoded packet: COBS(packet) + b"\\x00"."""
    return cobs_encode(packet) + b"\x00"


def encode_frame(type: int, seq: int, payload: bytes = b"", flags: int = 0, version: int = m.VERSION) -> bytes:
    """The UART frame: COBS(header + payload + CRC) followed by one 0x00.

    Raises:
        LocalProtocolError: as `encode_packet`.
    """
    return frame_packet(encode_packet(type, seq, payload, flags, version))


def decode_packet(raw: bytes | bytearray | memoryview, max_payload: int = 0xFFFF) -> Packet:
    """Checks and splits one packet (already COBS-decoded, or from ISO-TP).

    The checks, in PROTOCOL.md's order: the size against `max_payload`
    (LGB_ERR_TOO_LONG), at least 8 bytes (LGB_ERR_LENGTH), the CRC (LGB_ERR_CRC), the
    length field against the packet's size (LGB_ERR_LENGTH), the version
    (LGB_ERR_VERSION). The type is not checked here (`decode_message` does).

    Raises:
        RemoteProtocolError: with the code of the first check that failed; its `seq` and
            `type` attributes are set when the CRC was good (the frame can be NAK'd).
    """
    raw = bytes(raw)
    n = len(raw)
    if n > m.MIN_PACKET + max_payload:
        raise _bad(f"a {n}-byte packet, above the longest accepted ({m.MIN_PACKET + max_payload}: max_payload {max_payload})", m.ERR_TOO_LONG)
    if n < m.MIN_PACKET:
        raise _bad(f"the packet has {n} bytes, fewer than the {m.MIN_PACKET} of a header and CRC", m.ERR_LENGTH)
    got = (raw[-2] << 8) | raw[-1]
    want = crc16(raw[:-2])
    if got != want:
        raise _bad(f"CRC 0x{got:04x} in the packet, 0x{want:04x} computed", m.ERR_CRC)
    version, mtype, flags, seq, length = struct.unpack_from(">BBBBH", raw)
    if length != n - m.MIN_PACKET:
        raise _bad(f"the length field says {length} payload bytes, the packet has {n - m.MIN_PACKET}", m.ERR_LENGTH, seq, mtype)
    if version != m.VERSION:
        raise _bad(f"version {version} (this side speaks {m.VERSION})", m.ERR_VERSION, seq, mtype)
    return Packet(mtype, seq, raw[m.HEADER_LEN : -2], flags, version)


def _bad(detail: str, code: int, seq: int | None = None, mtype: int | None = None) -> RemoteProtocolError:
    e = RemoteProtocolError(f"Decoding a bridge packet: {m.error_name(code)}: {detail}", code)
    e.seq = seq  # type: ignore[attr-defined]
    e.type = mtype  # type: ignore[attr-defined]
    e.detail = detail  # type: ignore[attr-defined]
    return e


class FrameDecoder:
    """Splits a UART byte stream into packets (COBS frames ended by 0x00).

    Feed it whatever arrived; it returns the packets and errors it completed, in order,
    and keeps a partial frame for the next call. Feeding one byte at a time gives the
    same events as feeding everything at once. It never raises on input.

    Strategy: a streaming COBS decoder, like the firmware's: it decodes as bytes come and
    stores at most one packet's worth (`HEADER + max_payload + CRC` decoded bytes), so its
    memory is bounded whatever arrives. Every 0x00 ends a frame and resynchronises:

    - nothing since the last 0x00: skipped (an idle or flush byte), not an error;
    - more decoded bytes than the longest packet: LGB_ERR_TOO_LONG (this wins over a
      COBS error, as in PROTOCOL.md);
    - a block code pointing past the 0x00: LGB_ERR_COBS;
    - otherwise the packet's checks (`decode_packet`): LENGTH, CRC, LENGTH, VERSION.

    Args:
        max_payload: the longest payload accepted (default DEFAULT_MAX_PAYLOAD).

    Attributes:
        packets: packets decoded so far.
        errors: error code -> frames dropped for it.
        dropped_bytes: bytes of dropped frames (garbage included).
    """

    def __init__(self, max_payload: int = DEFAULT_MAX_PAYLOAD) -> None:
        if isinstance(max_payload, bool) or not isinstance(max_payload, int) or not 0 <= max_payload <= 0xFFFF:
            msg = f"FrameDecoder: 'max_payload' must be an integer from 0 to 65535 (got {max_payload!r})"
            raise ValueError(msg)
        self.max_payload = max_payload
        self._cap = m.MIN_PACKET + max_payload  # decoded bytes one packet may have
        self._dec = bytearray()  # decoded bytes of the current frame (at most _cap)
        self._raw = bytearray()  # its first encoded bytes, for DecodeError.data
        self._seen = 0  # encoded bytes of the current frame
        self._left = 0  # bytes left in the current COBS block
        self._zero = False  # whether the current block implies a 0x00 when the next starts
        self._over = False  # more decoded bytes arrived than _cap
        self.packets = 0
        self.errors: dict[int, int] = {}
        self.dropped_bytes = 0

    @property
    def buffered(self) -> int:
        """Encoded bytes of the incomplete frame."""
        return self._seen

    def reset(self) -> None:
        """Drops a partial frame (the counters stay)."""
        self._dec.clear()
        self._raw.clear()
        self._seen = self._left = 0
        self._zero = self._over = False

    def _store(self, data: bytes) -> None:
        room = self._cap - len(self._dec)
        if len(data) > room:
            self._over = True
            data = data[:room]
        self._dec += data

    def _run(self, piece: bytes) -> None:
        # decode the non-zero bytes `piece` of the current frame, block by block
        if len(self._raw) < 64:
            self._raw += piece[: 64 - len(self._raw)]
        self._seen += len(piece)
        i, n = 0, len(piece)
        while i < n:
            if self._left == 0:
                if self._zero:
                    self._store(b"\x00")
                code = piece[i]
                self._left = code - 1
                self._zero = code != 0xFF
                i += 1
                continue
            take = min(self._left, n - i)
            if not self._over:
                self._store(piece[i : i + take])
            self._left -= take
            i += take

    def _end(self, out: list) -> None:
        seen, raw = self._seen, bytes(self._raw)
        over, left, dec = self._over, self._left, bytes(self._dec)
        self.reset()
        if seen == 0:
            return  # an empty frame: 0x00 used as an idle or flush byte
        if over:
            self._drop(out, m.ERR_TOO_LONG, f"the frame decodes to more than {self._cap} bytes (max_payload {self.max_payload})", raw, seen)
            return
        if left:
            self._drop(out, m.ERR_COBS, f"the last COBS block lacks {left} byte{'s' if left > 1 else ''} before the 0x00", raw, seen)
            return
        try:
            packet = decode_packet(dec, self.max_payload)
        except RemoteProtocolError as e:
            self._drop(out, e.code or m.ERR_PAYLOAD, e.detail, raw, seen, e.seq, e.type)  # type: ignore[attr-defined]
            return
        self.packets += 1
        out.append(packet)

    def _drop(self, out: list, code: int, detail: str, raw: bytes, seen: int, seq: int | None = None, mtype: int | None = None) -> None:
        self.errors[code] = self.errors.get(code, 0) + 1
        self.dropped_bytes += seen
        out.append(DecodeError(code, detail, raw, seq, mtype))

    def feed(self, data: bytes | bytearray | memoryview) -> list[Packet | DecodeError]:
        """Adds received bytes. Returns the packets and errors they completed, in order.

        Never raises for any input bytes.
        """
        out: list[Packet | DecodeError] = []
        chunk = bytes(data)
        pos, n = 0, len(chunk)
        while pos < n:
            zero = chunk.find(0, pos)
            if zero < 0:
                self._run(chunk[pos:])
                break
            if zero > pos:
                self._run(chunk[pos:zero])
            self._end(out)
            pos = zero + 1
        return out
