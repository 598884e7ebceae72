"""The bridge's transports: packets over a UART (COBS frames) or over CAN (ISO-TP).

Why: `BridgeClient` runs one protocol over two very different wires. A transport hides
the difference behind four calls: `write(packets)`, `read(timeout)` (decoded packets and
decode errors), `reopen()` after the port failed, and `airtime(n)` for the link's
retransmission timer. Both take the lgembed.edge adapters (so a device file's settings,
validation, simulators and error messages apply), and the UART one also a pyserial
`Serial` or a port path.
"""

from __future__ import annotations

from typing import Any

from lgembed.bridge import messages as m
from lgembed.bridge.codec import DEFAULT_MAX_PAYLOAD, DecodeError, FrameDecoder, Packet, decode_packet, frame_packet
from lgembed.bridge.errors import RemoteProtocolError
from lgembed.edge.errors import DriverError, DriverTimeoutError, EdgeError

__all__ = ("CanTransport", "UartTransport")

_READ_CHUNK = 4096
# bytes asked of a pyserial port per read once data is waiting


class UartTransport:
    """Bridge packets as COBS frames on a serial port.

    Args:
        port: an lgembed UART adapter (`device.adapter("mcu_uart")`), a pyserial
            `Serial`, or a port path (opened as a SerialUART adapter named "bridge").
        baudrate: for a path: the baud rate (115200); also the airtime figure when the
            port does not say.
        max_payload: the longest payload accepted from the MCU.
        registry: the EdgeAdapterRegistry holding the adapter; a reopened adapter
            replaces the failed one there.

    Attributes:
        decoder: the FrameDecoder (its counters show garbage and resynchronisations).
    """

    kind = "uart"

    def __init__(self, port: Any, *, baudrate: int = 115200, max_payload: int = DEFAULT_MAX_PAYLOAD, registry: Any = None) -> None:
        self._owned = isinstance(port, str)
        if isinstance(port, str):
            from lgembed.edge.uart import SerialUART

            port = SerialUART("bridge", port=port, baudrate=baudrate, timeout=0.02)
        self.port = port
        self._adapter = getattr(port, "kind", None) == "uart"
        self._registry = registry
        self.baudrate = int(getattr(port, "baudrate", baudrate) or baudrate)
        self.decoder = FrameDecoder(max_payload)
        self._sync = True  # send one 0x00 before the first frame (PROTOCOL.md §4.3, §9)
        if not self._adapter:
            try:
                port.timeout = 0.02
            except Exception:  # noqa: BLE001 - a port object without a settable timeout
                pass

    @property
    def name(self) -> str:
        """The adapter and device, for messages ("UART adapter 'mcu' (/dev/ttyACM0)")."""
        if self._adapter:
            return f"UART adapter '{self.port.name}' ({self.port.device})"
        return f"serial port {getattr(self.port, 'port', self.port)}"

    @property
    def fix(self) -> str:
        """What to check when the MCU does not answer."""
        return (
            f"check that the MCU is powered and connected to {self.name}, runs the bridge firmware, and uses "
            f"{self.baudrate} baud"
        )

    def airtime(self, n: int) -> float:
        """Seconds `n` packet bytes take on the wire: COBS overhead and delimiter, 10 bits a byte."""
        return (n + n // 254 + 2) * 10.0 / self.baudrate

    def write(self, packets: list[bytes]) -> None:
        """Sends the packets as COBS frames, in one write.

        Raises:
            DriverError: the port failed.
        """
        data = b"".join(frame_packet(p) for p in packets)
        if not data:
            return
        if self._sync:
            data = b"\x00" + data
            self._sync = False
        if self._adapter:
            self.port.write(data)
            return
        try:
            self.port.write(data)
        except Exception as e:  # noqa: BLE001 - pyserial's SerialException and OSError
            raise DriverError(f"Writing to {self.name}: {e}") from e

    def read(self, timeout: float) -> list[Packet | DecodeError]:
        """Waits up to `timeout` s for bytes; returns what they completed.

        Raises:
            DriverError: the port failed (DeviceAbsentError when it vanished).
        """
        if self._adapter:
            try:
                data = self.port.read(1, timeout=timeout)
            except DriverTimeoutError:
                return []
            if not data:
                return []
            waiting = self.port.in_waiting
            if waiting:
                data += self.port.read(waiting, timeout=0)
        else:
            try:
                data = self.port.read(1)
                if data:
                    waiting = self.port.in_waiting
                    if waiting:
                        data += self.port.read(min(waiting, _READ_CHUNK))
            except Exception as e:  # noqa: BLE001 - pyserial's SerialException and OSError
                raise DriverError(f"Reading from {self.name}: {e}") from e
        return self.decoder.feed(data) if data else []

    def reopen(self) -> None:
        """Opens the port again after a failure (an unplugged USB adapter came back).

        Raises:
            EdgeError: it is still absent or busy.
        """
        self.decoder.reset()
        self._sync = True
        if self._adapter:
            old = self.port
            try:
                old.close()
            except EdgeError:
                pass
            new = type(old)(old.name, **old.settings)
            self.port = new
            if self._registry is not None:
                self._registry.set(new.name, new)
        else:
            try:
                self.port.close()
                self.port.open()
            except Exception as e:  # noqa: BLE001 - pyserial's SerialException and OSError
                raise DriverError(f"Reopening {self.name}: {e}") from e

    def open(self) -> None:
        """Nothing to start for a UART."""

    def close(self) -> None:
        """Closes the port if this transport opened it (from a path); an adapter or a
        pyserial port belongs to its owner."""
        if self._owned:
            self.port.close()


class CanTransport:
    """Bridge packets over CAN with ISO-TP (see `lgembed.bridge.isotp`).

    Args:
        bus: an lgembed CAN adapter or a python-can bus.
        tx_id, rx_id, extended: the ISO-TP ids (host -> MCU 0x7E0, MCU -> host 0x7E8).
        max_payload: the longest payload accepted from the MCU.
        **options: IsoTpChannel options (padding, block_size, stmin, timeout).
    """

    kind = "can"

    def __init__(self, bus: Any, tx_id: int = 0x7E0, rx_id: int = 0x7E8, *, extended: bool | None = None, max_payload: int = DEFAULT_MAX_PAYLOAD, registry: Any = None, **options: Any) -> None:
        from lgembed.bridge.isotp import IsoTpChannel

        self._options = {"extended": extended, **options}
        self.channel = IsoTpChannel(bus, tx_id, rx_id, **self._options)
        self.max_payload = max_payload
        self._registry = registry
        self._isotp_errors = 0

    @property
    def name(self) -> str:
        """The bus and ids, for messages."""
        return f"CAN {self.channel.name}"

    @property
    def fix(self) -> str:
        """What to check when the MCU does not answer."""
        return (
            f"check that the MCU is powered and on the bus, answers ISO-TP on id 0x{self.channel.tx_id:X} with "
            f"0x{self.channel.rx_id:X}, and that the bus bit rate matches"
        )

    @property
    def isotp_errors(self) -> int:
        """ISO-TP errors seen (wrong sequence numbers, timeouts, unexpected frames)."""
        return len(self.channel.errors)

    def airtime(self, n: int) -> float:
        """Seconds a packet of `n` bytes takes as ISO-TP frames."""
        return self.channel.airtime(n)

    def open(self) -> None:
        """Starts the ISO-TP threads."""
        self.channel.open()

    def write(self, packets: list[bytes]) -> None:
        """Queues the packets for ISO-TP.

        Raises:
            DriverError: the bus failed.
        """
        for p in packets:
            self.channel.send(p)

    def read(self, timeout: float) -> list[Packet | DecodeError]:
        """Waits up to `timeout` s for one packet.

        Raises:
            DriverError: the bus failed.
        """
        raw = self.channel.recv(timeout)
        if raw is None:
            return []
        try:
            return [decode_packet(raw, self.max_payload)]
        except RemoteProtocolError as e:
            return [DecodeError(e.code if e.code is not None else m.ERR_LENGTH, getattr(e, "detail", str(e)), raw[:64], getattr(e, "seq", None), getattr(e, "type", None))]

    def reopen(self) -> None:
        """Restarts ISO-TP after a bus failure (the adapter is reopened if it is closed).

        Raises:
            EdgeError: the bus is still failing.
        """
        from lgembed.bridge.isotp import IsoTpChannel

        old = self.channel
        old.close()
        bus = old.bus
        if getattr(bus, "kind", None) == "can" and getattr(bus, "closed", False):
            bus = type(bus)(bus.name, **bus.settings)
            if self._registry is not None:
                self._registry.set(bus.name, bus)
        self.channel = IsoTpChannel(bus, old.tx_id, old.rx_id, **self._options)
        self.channel.open()

    def close(self) -> None:
        """Stops the ISO-TP threads (the bus stays open: its owner closes it)."""
        self.channel.close()
