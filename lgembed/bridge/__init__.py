"""The firmware bridge's host side: a microcontroller's functions as tools, its events as
graph input, over a UART (COBS frames) or CAN (ISO-TP).

    from lgembed.bridge import BridgeClient
    with BridgeClient.over_uart("/dev/ttyACM0", name="mcu") as mcu:
        mcu.connect()
        mcu.call("read_temp")                       # 21.5
        tools = mcu.tools(policies={"set_led": {"risk": "high"}})

or from a device file's `[bridges.NAME]` table: `device.bridge("mcu")`.

Modules, from the wire up: `messages` (the numbers, mirroring
firmware-bridge/include/lgb_msg.h), `framing` (CRC, COBS, packets, the streaming
decoder) and `codec` (the message payloads; re-exports `framing`), `link` (sans-I/O
reliability: seq, ACK/NAK, retries, duplicates) and `session` (the host's calls, HELLO,
PING), `isotp` (ISO-TP through can-isotp), `transport` (UART / CAN), `client` (threads,
reconnection), `events`, `tools` (MCU functions as hardware tools), `device` (the device
file's `[bridges.NAME]`). For tests and laptops: `softmcu` (the MCU side in Python),
`wire` (a simulated serial cable with fault injection), `firmware` (the C example
firmware as a simulated MCU). The wire format is firmware-bridge/PROTOCOL.md.

This package imports lazily: `import lgembed.bridge` loads neither msgpack nor pyserial
nor python-can.
"""

from __future__ import annotations

from lgembed._lazy import lazy_attributes

__all__ = (
    "EVENT_KIND",
    "BridgeClient",
    "BridgeDisconnected",
    "BridgeEvents",
    "BridgeTimeoutError",
    "DecodeError",
    "FrameDecoder",
    "FunctionSpec",
    "Hello",
    "LocalProtocolError",
    "Packet",
    "ProtocolError",
    "RemoteProtocolError",
    "decode_message",
    "decode_packet",
    "encode_frame",
    "encode_message",
)

_WHERE = {
    "EVENT_KIND": "client",
    "BridgeClient": "client",
    "BridgeEvents": "client",
    "BridgeDisconnected": "errors",
    "BridgeTimeoutError": "errors",
    "LocalProtocolError": "errors",
    "ProtocolError": "errors",
    "RemoteProtocolError": "errors",
}
# public name -> submodule; the other names live in `codec`


__getattr__, __dir__ = lazy_attributes(globals(), _WHERE, "codec")
