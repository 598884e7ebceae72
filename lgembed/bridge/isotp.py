"""ISO-TP (ISO 15765-2) for the bridge's CAN transport, through the `can-isotp` package.

Why can-isotp: it is the maintained ISO-TP implementation on PyPI (pylessard/python-can-isotp,
used by udsoncan), complete where a home-grown one would not be (flow control with block
size and STmin, wait frames, padding, the N_Bs/N_Cr timeouts, 29-bit and mixed
addressing, CAN FD), and its `TransportLayer` takes plain `rxfn(timeout)`/`txfn(msg)`
callables, so it runs over an lgembed CAN adapter (with the adapter's validation, error
messages and simulator) instead of owning a python-can bus. Its threads (one relaying
received frames, one running the protocol) are started by `IsoTpChannel.open()` and
stopped by `close()`. The firmware side (`lgb_isotp.c`) is our own C.

A bridge packet (header + payload + CRC, at least 8 bytes) always travels as a first
frame, the receiver's flow control, and consecutive frames; frames are padded to 8
bytes with 0xCC (PROTOCOL.md). Default ids: host -> MCU 0x7E0, MCU -> host 0x7E8.

`segment` and `reassemble` run the same library synchronously (no threads, no clock) for
the test vectors.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from lgembed.bridge import messages as m
from lgembed.bridge.errors import LocalProtocolError, RemoteProtocolError
from lgembed.edge.errors import DriverError, DriverTimeoutError, DriverUnavailableError

__all__ = ("DEFAULT_RX_ID", "DEFAULT_TX_ID", "PAD", "IsoTpChannel", "reassemble", "segment")

DEFAULT_TX_ID = 0x7E0
"""The CAN id of host -> MCU frames."""

DEFAULT_RX_ID = 0x7E8
"""The CAN id of MCU -> host frames."""

PAD = 0xCC
"""The padding byte of short CAN frames (ISO 15765-2's recommendation)."""

MAX_PACKET = 4095
"""The longest packet a classic (12-bit length) first frame carries."""


def _isotp() -> Any:
    try:
        import isotp
    except ImportError as e:
        msg = (
            "Opening the bridge's ISO-TP transport: the 'can-isotp' package is not installed. "
            "Fix: pip install 'lgembed[hardware]' (or pip install can-isotp)"
        )
        raise DriverUnavailableError(msg) from e
    return isotp


def _address(isotp: Any, tx_id: int, rx_id: int, extended: bool) -> Any:
    mode = isotp.AddressingMode.Normal_29bits if extended else isotp.AddressingMode.Normal_11bits
    return isotp.Address(mode, txid=tx_id, rxid=rx_id)


def _params(padding: int | None, block_size: int, stmin: int, timeout_ms: int, max_packet: int) -> dict[str, Any]:
    return {
        "stmin": stmin,  # STmin our flow control asks the MCU to keep between its frames
        "blocksize": block_size,  # frames the MCU may send per flow control (0: all)
        "tx_padding": padding,
        "tx_data_length": 8,
        "rx_flowcontrol_timeout": timeout_ms,  # N_Bs: waiting for the MCU's flow control
        "rx_consecutive_frame_timeout": timeout_ms,  # N_Cr: waiting for its next frame
        "max_frame_size": max_packet,
        "blocking_send": False,
        "wftmax": 10,  # PROTOCOL.md §5.3: more than 10 WAITs in a row abort the send
        "logger_name": "lgembed.bridge.isotp",
    }


def error_code(e: Exception) -> int:
    """The lgb error code of a can-isotp error: LGB_ERR_TOO_LONG for an overflow (a
    message above the receiver's limit), LGB_ERR_TIMEOUT for the N_Bs and N_Cr timeouts
    (PROTOCOL.md §5.3, §5.4, as the C library reports them), else LGB_ERR_ISOTP."""
    name = type(e).__name__
    if name in ("FrameTooLongError", "OverflowError"):
        return m.ERR_TOO_LONG
    if name in ("FlowControlTimeoutError", "ConsecutiveFrameTimeoutError", "BlockingSendTimeout"):
        return m.ERR_TIMEOUT
    return m.ERR_ISOTP


class _RxGuard:
    """PROTOCOL.md §5.4 checks that can-isotp does not make on received data frames.

    can-isotp accepts a first frame shorter than 8 bytes or announcing fewer than 8
    bytes, and a consecutive frame with fewer data bytes than the message still needs
    (it waits for more). PROTOCOL.md makes them errors: the first two are ignored, the
    third aborts the message in progress; all three count as LGB_ERR_ISOTP. The packet's
    CRC would catch the damage anyway; this keeps the error the same on both sides.
    """

    def __init__(self) -> None:
        self.remaining = 0  # bytes the message in progress still needs

    def check(self, data: bytes) -> tuple[str | None, bool]:
        """(why the frame is refused or None, whether the message in progress aborts)."""
        if not data:
            return None, False  # can-isotp reports an empty frame itself
        pci = data[0] >> 4
        if pci == 0:
            self.remaining = 0
        elif pci == 1:
            self.remaining = 0
            if len(data) < 8:
                return f"a first frame of {len(data)} bytes (a first frame has 8)", False
            n = ((data[0] & 0x0F) << 8) | data[1]
            if 0 < n < 8:
                return f"a first frame announcing {n} bytes (at least 8; fewer go in a single frame)", False
            self.remaining = n - 6 if n else 0
        elif pci == 2 and self.remaining > 0:
            need = min(7, self.remaining)
            if len(data) - 1 < need:
                self.remaining = 0
                return f"a consecutive frame with {len(data) - 1} data bytes where {need} are due", True
            self.remaining -= need
        return None, False


def _check_id(name: str, v: Any, extended: bool) -> None:
    hi = 0x1FFFFFFF if extended else 0x7FF
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= hi:
        width = "29-bit (extended)" if extended else "11-bit"
        msg = f"ISO-TP channel: '{name}' must be a {width} CAN id, 0 to 0x{hi:X} (got {v!r})"
        raise LocalProtocolError(msg, m.ERR_ARGS)


class IsoTpChannel:
    """Packets over CAN with ISO-TP, on an lgembed CAN adapter or a python-can bus.

    Args:
        bus: a `lgembed.edge` CAN adapter (PythonCanBus) or a python-can `BusABC`.
        tx_id: the id this side sends with (host: 0x7E0).
        rx_id: the id this side receives (host: 0x7E8).
        extended: 29-bit ids; None: when either id is above 0x7FF.
        padding: the padding byte (None: no padding).
        block_size, stmin: the flow control this side sends as a receiver.
        timeout: seconds for the ISO-TP N_Bs and N_Cr timeouts.
        max_packet: the longest packet accepted (up to 4095).

    Attributes:
        errors: ISO-TP errors seen so far (can-isotp's exceptions: wrong sequence
            numbers, timeouts, unexpected frames), newest last, at most 100.
        failure: the DriverError that stopped the bus, or None.

    Raises:
        DriverUnavailableError: can-isotp is not installed.
        LocalProtocolError: an id out of range.
    """

    def __init__(
        self,
        bus: Any,
        tx_id: int = DEFAULT_TX_ID,
        rx_id: int = DEFAULT_RX_ID,
        *,
        extended: bool | None = None,
        padding: int | None = PAD,
        block_size: int = 0,
        stmin: int = 0,
        timeout: float = 1.0,
        max_packet: int = MAX_PACKET,
    ) -> None:
        isotp = _isotp()
        if extended is None:
            extended = (isinstance(tx_id, int) and tx_id > 0x7FF) or (isinstance(rx_id, int) and rx_id > 0x7FF)
        _check_id("tx_id", tx_id, extended)
        _check_id("rx_id", rx_id, extended)
        self.bus = bus
        self.tx_id, self.rx_id, self.extended = tx_id, rx_id, bool(extended)
        self.errors: list[Exception] = []
        self.failure: DriverError | None = None
        self._lgembed = hasattr(bus, "kind") and getattr(bus, "kind", None) == "can"
        self._guard = _RxGuard()
        _quiet()
        self._stack = isotp.TransportLayer(
            rxfn=self._rx,
            txfn=self._tx,
            address=_address(isotp, tx_id, rx_id, self.extended),
            error_handler=self._error,
            params=_params(padding, block_size, stmin, max(1, int(timeout * 1000)), max_packet),
            read_timeout=0.02,
        )
        self._isotp = isotp
        self._open = False
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The bus and ids, for messages ("can:virtual:bus0 0x7E0/0x7E8")."""
        dev = getattr(self.bus, "device", None) or getattr(self.bus, "channel_info", "python-can bus")
        return f"{dev} 0x{self.tx_id:X}/0x{self.rx_id:X}"

    # --- the CAN side (called from can-isotp's threads) ----------------------------------------

    def _rx(self, timeout: float) -> Any:
        if self.failure is not None:
            time.sleep(timeout)
            return None
        try:
            if self._lgembed:
                try:
                    msg = self.bus.recv(timeout=timeout)
                except DriverTimeoutError:
                    return None
            else:
                msg = self.bus.recv(timeout)
                if msg is None:
                    return None
        except DriverError as e:
            self.failure = e
            return None
        except Exception as e:  # noqa: BLE001 - python-can's own errors on a raw bus
            self.failure = DriverError(f"Receiving a CAN frame on {self.name}: {e}")
            return None
        if msg.arbitration_id != self.rx_id or bool(msg.is_extended_id) != self.extended or msg.is_error_frame:
            return None
        why, abort = self._guard.check(bytes(msg.data))
        if why is not None:
            self._error(self._isotp.errors.InvalidCanDataError(f"Received {why}"))
            if abort:
                self._stack.stop_receiving()
            return None
        return self._isotp.CanMessage(
            arbitration_id=msg.arbitration_id, dlc=msg.dlc, data=bytes(msg.data), extended_id=bool(msg.is_extended_id)
        )

    def _tx(self, msg: Any) -> None:
        try:
            if self._lgembed:
                self.bus.send(msg.arbitration_id, bytes(msg.data), is_extended_id=bool(msg.is_extended_id))
            else:
                import can

                self.bus.send(can.Message(arbitration_id=msg.arbitration_id, data=bytes(msg.data), is_extended_id=bool(msg.is_extended_id)))
        except DriverError as e:
            self.failure = e
        except Exception as e:  # noqa: BLE001 - python-can's own errors on a raw bus
            self.failure = DriverError(f"Sending a CAN frame on {self.name}: {e}")

    def _error(self, e: Exception) -> None:
        self.errors.append(e)
        del self.errors[:-100]
        if not isinstance(e, self._isotp.errors.InvalidCanDataError) or self._guard.remaining:
            self._guard.remaining = 0  # can-isotp dropped the message in progress

    # --- packets -------------------------------------------------------------------------------

    def open(self) -> None:
        """Starts can-isotp's threads."""
        with self._lock:
            if not self._open:
                self._stack.start()
                self._open = True

    def send(self, packet: bytes) -> None:
        """Queues one packet (it leaves as FF, flow control, CFs).

        Raises:
            LocalProtocolError: a packet above 4095 bytes (code LGB_ERR_TOO_LONG).
            DriverError: the bus failed.
        """
        if self.failure is not None:
            raise self.failure
        if len(packet) > MAX_PACKET:
            msg = f"Sending over ISO-TP on {self.name}: a {len(packet)}-byte packet, above the {MAX_PACKET} a classic first frame carries"
            raise LocalProtocolError(msg, m.ERR_TOO_LONG)
        self._stack.send(bytes(packet))

    def recv(self, timeout: float) -> bytes | None:
        """The next reassembled packet, or None after `timeout` seconds.

        Raises:
            DriverError: the bus failed.
        """
        if self.failure is not None:
            raise self.failure
        data = self._stack.recv(block=True, timeout=timeout)
        if data is None and self.failure is not None:
            raise self.failure
        return None if data is None else bytes(data)

    def airtime(self, n: int) -> float:
        """Seconds a packet of `n` bytes needs on a 500 kbit/s bus: about 0.25 ms per
        frame plus the flow control, rounded up to 1 ms per frame for the host's thread
        scheduling."""
        frames = 1 if n <= 7 else 1 + 1 + -(-(n - 6) // 7)  # SF, or FF + FC + the CFs
        return frames * 0.001

    def close(self) -> None:
        """Stops the threads (the bus stays open: its owner closes it)."""
        with self._lock:
            if self._open:
                self._open = False
                self._stack.stop()


# --- synchronous helpers for the test vectors --------------------------------------------------


class _Wire:
    def __init__(self, isotp: Any, frames: Iterable[bytes], rx_id: int, errors: list) -> None:
        self.isotp = isotp
        self.inbox = [isotp.CanMessage(arbitration_id=rx_id, dlc=len(f), data=bytes(f)) for f in frames]
        self.sent: list[bytes] = []
        self.errors = errors
        self.guard = _RxGuard()
        self.logic: Any = None

    def rx(self) -> Any:  # no timeout parameter: can-isotp treats it as non-blocking
        while self.inbox:
            msg = self.inbox.pop(0)
            why, abort = self.guard.check(bytes(msg.data))
            if why is None:
                return msg
            self.errors.append(self.isotp.errors.InvalidCanDataError(f"Received {why}"))
            if abort:
                self.logic.stop_receiving()
        return None

    def tx(self, msg: Any) -> None:
        self.sent.append(bytes(msg.data))


def _logic(wire: _Wire, errors: list, padding: int | None, block_size: int, stmin: int, max_packet: int = MAX_PACKET) -> Any:
    isotp = wire.isotp
    _quiet()
    wire.logic = isotp.TransportLayerLogic(
        rxfn=wire.rx,
        txfn=wire.tx,
        address=_address(isotp, DEFAULT_TX_ID, DEFAULT_RX_ID, False),
        error_handler=errors.append,
        params={**_params(padding, block_size, stmin, 1000, max_packet), "wait_func": lambda s: None},
    )
    return wire.logic


def _quiet() -> None:
    # can-isotp logs every protocol error at WARNING; they are counted and reported by
    # lgembed instead (a NullHandler keeps logging's last-resort handler from printing)
    import logging

    log = logging.getLogger("lgembed.bridge.isotp")
    if not log.handlers:
        log.addHandler(logging.NullHandler())


def segment(packet: bytes, flow_controls: Iterable[bytes] = (b"\x30\x00\x00",), *, padding: int | None = PAD) -> list[bytes]:
    """The CAN frames (data bytes) can-isotp sends for `packet`, given the receiver's
    flow-control frames (default: one "continue, no block limit, STmin 0").

    Frames are listed as sent; a flow control is consumed whenever the sender waits for
    one. STmin delays are not waited for.

    Raises:
        RemoteProtocolError: the sender stopped: an overflow flow control (code
            LGB_ERR_TOO_LONG), a bad one or too many WAITs (LGB_ERR_ISOTP), or none
            left where one is needed (LGB_ERR_ISOTP).
    """
    isotp = _isotp()
    errors: list = []
    wire = _Wire(isotp, [], DEFAULT_RX_ID, errors)
    fcs = [bytes(f) for f in flow_controls]
    tl = _logic(wire, errors, padding, 0, 0)
    tl.send(bytes(packet))
    for _ in range(10000):
        tl.process(do_rx=True, do_tx=True)
        if not tl.transmitting() or errors:
            break
        if tl.tx_state == tl.TxState.WAIT_FC and not wire.inbox:
            if not fcs:
                msg = f"ISO-TP segmentation: the sender waits for a flow control after {len(wire.sent)} frames and none is left"
                e = RemoteProtocolError(msg, m.ERR_ISOTP)
                e.sent = wire.sent  # type: ignore[attr-defined]
                raise e
            f = fcs.pop(0)
            wire.inbox.append(isotp.CanMessage(arbitration_id=DEFAULT_RX_ID, dlc=len(f), data=f))
    if errors:
        msg = f"ISO-TP segmentation: {type(errors[0]).__name__}: {errors[0]}"
        e = RemoteProtocolError(msg, error_code(errors[0]))
        e.sent = wire.sent  # type: ignore[attr-defined]
        raise e
    return wire.sent


def reassemble(
    frames: Iterable[bytes], *, padding: int | None = PAD, block_size: int = 0, stmin: int = 0, max_packet: int = MAX_PACKET
) -> tuple[bytes | None, list[bytes]]:
    """Feeds received CAN frames (data bytes) to can-isotp's receiver.

    Returns:
        (the packet, or None if it did not complete), and the frames the receiver sent
        (its flow controls).

    Raises:
        RemoteProtocolError: the frames broke ISO-TP (a wrong sequence number, a
            consecutive frame without a first frame, ...: code LGB_ERR_ISOTP; a first
            frame above `max_packet`: LGB_ERR_TOO_LONG). Its `sent` attribute holds the
            frames the receiver sent, its `packet` what it delivered (None).
    """
    isotp = _isotp()
    errors: list = []
    wire = _Wire(isotp, frames, DEFAULT_RX_ID, errors)
    tl = _logic(wire, errors, padding, block_size, stmin, max_packet)
    for _ in range(len(wire.inbox) + 4):
        tl.process(do_rx=True, do_tx=True)
    got = tl.recv()
    packet = None if got is None else bytes(got)
    if errors:
        msg = f"ISO-TP reassembly: {type(errors[0]).__name__}: {errors[0]}"
        e = RemoteProtocolError(msg, error_code(errors[0]))
        e.sent = wire.sent  # type: ignore[attr-defined]
        e.packet = packet  # type: ignore[attr-defined]
        raise e
    return packet, wire.sent
