"""The firmware bridge's numbers: protocol version, message types, flags, error codes.

Why: the host and the firmware must agree on every number on the wire. They are written
once in C (`firmware-bridge/include/lgb_msg.h`) and mirrored here by hand; a test parses
the header's `#define LGB_MSG_* 0x..`, `LGB_FLAG_*` and `LGB_ERR_*` lines and compares
them with this module (there is no code generator to maintain). PROTOCOL.md explains
each value.
"""

from __future__ import annotations

__all__ = (
    "CRC_LEN",
    "ERRORS",
    "ERROR_CODES",
    "ERR_ARGS",
    "ERR_BUFFER",
    "ERR_BUSY",
    "ERR_COBS",
    "ERR_CRC",
    "ERR_FUNCTION",
    "ERR_ISOTP",
    "ERR_LENGTH",
    "ERR_NO_FUNCTION",
    "ERR_PAYLOAD",
    "ERR_STATE",
    "ERR_TIMEOUT",
    "ERR_TOO_LONG",
    "ERR_TYPE",
    "ERR_VERSION",
    "FLAG_ACK_REQ",
    "FLAG_RETRY",
    "FLAGS_KNOWN",
    "HEADER_LEN",
    "MESSAGE_TYPES",
    "MIN_PACKET",
    "MSG_ACK",
    "MSG_CALL",
    "MSG_EVENT",
    "MSG_HELLO",
    "MSG_HELLO_REQ",
    "MSG_NAK",
    "MSG_PING",
    "MSG_PONG",
    "MSG_RESULT",
    "OK",
    "PING_MAX",
    "RELIABLE_TYPES",
    "VERSION",
    "error_name",
)

VERSION = 0x01
"""The protocol version this side speaks (header byte 0)."""

HEADER_LEN = 6
"""Header bytes: version, type, flags, seq, payload length (uint16, big-endian)."""

CRC_LEN = 2
"""CRC-16/CCITT-FALSE after header and payload, big-endian."""

MIN_PACKET = HEADER_LEN + CRC_LEN
"""The shortest valid packet (an empty payload)."""

PING_MAX = 8
"""The longest PING payload."""

# --- message types (header byte 1) -------------------------------------------------------

MSG_HELLO = 0x01
"""MCU -> host: [device_id, fw_version, max_payload, functions, events]."""
MSG_HELLO_REQ = 0x02
"""host -> MCU, empty payload: "send your HELLO"."""
MSG_PING = 0x03
"""Either way: up to PING_MAX bytes, echoed by a PONG."""
MSG_PONG = 0x04
"""The answer to a PING, with its payload."""
MSG_CALL = 0x10
"""host -> MCU: [call_id, fn_index, args]."""
MSG_RESULT = 0x11
"""MCU -> host: [call_id, status, value_or_error_text]."""
MSG_EVENT = 0x20
"""MCU -> host: [event_index, timestamp_ms, value]."""
MSG_ACK = 0x30
"""1 byte: the seq acknowledged."""
MSG_NAK = 0x31
"""2 bytes: the seq refused, the error code."""

MESSAGE_TYPES = {
    MSG_HELLO: "HELLO",
    MSG_HELLO_REQ: "HELLO_REQ",
    MSG_PING: "PING",
    MSG_PONG: "PONG",
    MSG_CALL: "CALL",
    MSG_RESULT: "RESULT",
    MSG_EVENT: "EVENT",
    MSG_ACK: "ACK",
    MSG_NAK: "NAK",
}
"""Type code -> name (as in `LGB_MSG_<name>`)."""

RELIABLE_TYPES = frozenset({MSG_HELLO, MSG_CALL, MSG_RESULT, MSG_EVENT})
"""Types sent with ACK_REQ: the receiver acknowledges them, the sender retransmits."""

# --- flags (header byte 2) ---------------------------------------------------------------

FLAG_ACK_REQ = 0x01
"""The receiver must ACK this seq."""
FLAG_RETRY = 0x02
"""This frame is a retransmission (same seq as before)."""
FLAGS_KNOWN = FLAG_ACK_REQ | FLAG_RETRY
"""Every flag version 1 defines; senders set the others to 0."""

# --- error codes (lgb_ret_t; also NAK and RESULT status codes) ----------------------------

OK = 0
ERR_CRC = 1
ERR_COBS = 2
ERR_TOO_LONG = 3
ERR_VERSION = 4
ERR_TYPE = 5
ERR_LENGTH = 6
ERR_PAYLOAD = 7
ERR_NO_FUNCTION = 8
ERR_ARGS = 9
ERR_BUSY = 10
ERR_FUNCTION = 11
ERR_BUFFER = 12
ERR_TIMEOUT = 13
ERR_STATE = 14
ERR_ISOTP = 15

ERRORS = {
    OK: ("LGB_OK", "no error"),
    ERR_CRC: ("LGB_ERR_CRC", "the CRC does not match"),
    ERR_COBS: ("LGB_ERR_COBS", "invalid COBS encoding"),
    ERR_TOO_LONG: ("LGB_ERR_TOO_LONG", "the frame is longer than the receiver accepts"),
    ERR_VERSION: ("LGB_ERR_VERSION", "unknown protocol version"),
    ERR_TYPE: ("LGB_ERR_TYPE", "unknown message type"),
    ERR_LENGTH: ("LGB_ERR_LENGTH", "the length field disagrees with the packet"),
    ERR_PAYLOAD: ("LGB_ERR_PAYLOAD", "the payload is not the message's msgpack layout"),
    ERR_NO_FUNCTION: ("LGB_ERR_NO_FUNCTION", "no such function"),
    ERR_ARGS: ("LGB_ERR_ARGS", "the arguments do not match the function's types"),
    ERR_BUSY: ("LGB_ERR_BUSY", "the receiver is busy"),
    ERR_FUNCTION: ("LGB_ERR_FUNCTION", "the function failed"),
    ERR_BUFFER: ("LGB_ERR_BUFFER", "a buffer is too small"),
    ERR_TIMEOUT: ("LGB_ERR_TIMEOUT", "no answer in time"),
    ERR_STATE: ("LGB_ERR_STATE", "not allowed in the current state"),
    ERR_ISOTP: ("LGB_ERR_ISOTP", "ISO-TP segmentation error"),
}
"""Code -> (C name, short description)."""

ERROR_CODES = {name: code for code, (name, _) in ERRORS.items()}
"""C name ("LGB_ERR_CRC") -> code."""


def error_name(code: int) -> str:
    """The C name of an error code ("LGB_ERR_CRC"), or "code N" for an unknown one."""
    entry = ERRORS.get(code)
    return entry[0] if entry else f"code {code}"
