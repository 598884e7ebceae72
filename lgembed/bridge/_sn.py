"""ctypes bindings of the example firmware's library API (firmware-bridge/examples/sensor_node/sn_api.h).

Private: `lgembed.bridge.firmware.CanFirmware` is the public face. One `Node` is one
simulated MCU; its methods must be called from one thread at a time (the header's rule).
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ("CAN", "EXTENDED", "UART", "Node", "load")

UART = 0
CAN = 1
EXTENDED = 0x80000000
"""sn_api.h's flag for a 29-bit CAN id."""

_u8p = ctypes.POINTER(ctypes.c_uint8)


def load(path: str) -> ctypes.CDLL:
    """The library with every function's argument and result types declared.

    Raises:
        OSError: the library cannot be loaded (not built: make -C firmware-bridge host-example).
    """
    lib = ctypes.CDLL(path)
    h = ctypes.c_void_p
    sigs: dict[str, tuple[Any, list[Any]]] = {
        "sn_create": (h, [ctypes.c_int]),
        "sn_create_can": (h, [ctypes.c_uint32, ctypes.c_uint32]),
        "sn_destroy": (None, [h]),
        "sn_tick": (ctypes.c_int, [h, ctypes.c_uint32]),
        "sn_feed_bytes": (ctypes.c_int, [h, _u8p, ctypes.c_size_t]),
        "sn_read_bytes": (ctypes.c_size_t, [h, _u8p, ctypes.c_size_t]),
        "sn_feed_can": (ctypes.c_int, [h, ctypes.c_uint32, _u8p, ctypes.c_size_t]),
        "sn_poll_can": (ctypes.c_int, [h, ctypes.POINTER(ctypes.c_uint32), _u8p, ctypes.POINTER(ctypes.c_size_t)]),
        "sn_set_temp": (ctypes.c_int, [h, ctypes.c_float]),
        "sn_get_led": (ctypes.c_int, [h]),
        "sn_press_button": (ctypes.c_int, [h, ctypes.c_int]),
        "sn_calls": (ctypes.c_long, [h]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def _buf(data: bytes) -> Any:
    return (ctypes.c_uint8 * max(1, len(data))).from_buffer_copy(data or b"\x00")


class Node:
    """One sensor node (sn_create / sn_create_can).

    Args:
        lib: the loaded library.
        transport: UART or CAN.
        rx_id, tx_id: CAN ids other than the defaults (0x7E0 in, 0x7E8 out).
    """

    def __init__(self, lib: ctypes.CDLL, transport: int = CAN, rx_id: int | None = None, tx_id: int | None = None) -> None:
        self.lib = lib
        if rx_id is not None or tx_id is not None:
            self.h = lib.sn_create_can(rx_id if rx_id is not None else 0x7E0, tx_id if tx_id is not None else 0x7E8)
        else:
            self.h = lib.sn_create(transport)
        if not self.h:
            msg = "sn_create returned NULL"
            raise RuntimeError(msg)

    def tick(self, now_ms: int) -> None:
        self.lib.sn_tick(self.h, now_ms & 0xFFFFFFFF)

    def feed(self, ident: int, data: bytes, extended: bool = False) -> None:
        self.lib.sn_feed_can(self.h, ident | (EXTENDED if extended else 0), _buf(data), len(data))

    def poll_frames(self) -> list[tuple[int, bytes, bool]]:
        out = []
        ident = ctypes.c_uint32()
        n = ctypes.c_size_t()
        data = (ctypes.c_uint8 * 8)()
        while self.lib.sn_poll_can(self.h, ctypes.byref(ident), data, ctypes.byref(n)) == 1:
            v = ident.value
            out.append((v & 0x1FFFFFFF, bytes(data[: n.value]), bool(v & EXTENDED)))
        return out

    def feed_bytes(self, data: bytes) -> None:
        self.lib.sn_feed_bytes(self.h, _buf(data), len(data))

    def read_bytes(self, limit: int = 4096) -> bytes:
        buf = (ctypes.c_uint8 * limit)()
        n = self.lib.sn_read_bytes(self.h, buf, limit)
        return bytes(buf[:n])

    def set_temp(self, celsius: float) -> None:
        self.lib.sn_set_temp(self.h, celsius)

    def get_led(self) -> bool:
        return self.lib.sn_get_led(self.h) == 1

    def press_button(self, pressed: bool = True) -> None:
        self.lib.sn_press_button(self.h, 1 if pressed else 0)

    def calls(self) -> int:
        return int(self.lib.sn_calls(self.h))

    def close(self) -> None:
        if self.h:
            self.lib.sn_destroy(self.h)
            self.h = None
