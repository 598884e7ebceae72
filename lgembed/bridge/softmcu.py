"""A microcontroller in Python: the MCU side of the bridge protocol, for tests and laptops.

Why: the host side needs a peer to be tested against in every test run, also where no C
compiler is at hand, and the protocol's MCU rules (the RESULT cache, NAK BUSY while a
RESULT is unacknowledged, HELLO_REQ resetting the session) deserve a second,
readable implementation beside the C one. `SoftMcu` is sans I/O like `Link`, which it
runs with the MCU's accepted types: `receive(bytes, now)` and `tick(now)` return the
bytes to send back.

`SoftMcuDevice` puts one on a simulated UART (`lgembed.edge.sim.uart`), so a device file
can name it:

    [adapters.mcu_uart]
    kind = "uart"
    port = "/dev/ttyACM0"
    baudrate = 115200
    simulator = "lgembed.bridge.softmcu:SoftMcuDevice"
    simulation = { device_id = "soft-node", temperature = 21.5 }

Its functions mirror the example firmware's (`firmware-bridge/examples/sensor_node`):
`read_temp() -> f`, `set_led(b) -> b`, `echo(y) -> y`; its event is `button`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from lgembed.bridge import messages as m
from lgembed.bridge.codec import (
    Call,
    EventMessage,
    FrameDecoder,
    FunctionSpec,
    Hello,
    HelloRequest,
    Message,
    Result,
    check_value,
    frame_packet,
)
from lgembed.bridge.link import MCU_ACCEPTS, Link, Received, SendFailed
from lgembed.edge.sim.uart import SerialDevice

__all__ = ("SoftMcu", "SoftMcuDevice", "SoftMcuPort", "sensor_node")

Function = tuple[str, str, str, Callable[..., Any]]
# (name, arg_types, result_type, implementation)


class SoftMcu:
    """The MCU end of the protocol over a byte stream (COBS frames), sans I/O.

    Args:
        functions: (name, arg_types, result_type, callable) per function, in index order.
            A callable raising an exception gives RESULT LGB_ERR_FUNCTION with its text.
        events: event names, in index order.
        device_id, fw_version: the HELLO's strings.
        max_payload: the largest payload it accepts and sends.
        timeout, retries: its link's retransmission settings.

    Attributes:
        link: its Link.
        runs: how many times each function ran (to check a repeated CALL is not re-run).
        log: the messages it received, in order.
    """

    def __init__(
        self,
        functions: Sequence[Function],
        events: Sequence[str] = (),
        *,
        device_id: str = "soft-mcu",
        fw_version: str = "1.0.0",
        max_payload: int = 128,
        timeout: float = 0.05,
        retries: int = 3,
    ) -> None:
        self.functions = list(functions)
        self.events = list(events)
        self.hello = Hello(device_id, fw_version, max_payload, tuple(FunctionSpec(n, a, r) for n, a, r, _ in self.functions), tuple(self.events))
        self.link = Link(timeout=timeout, retries=retries, max_payload=max_payload, accepts=MCU_ACCEPTS)
        self.decoder = FrameDecoder(max_payload)
        self.runs: dict[str, int] = {f[0]: 0 for f in self.functions}
        self.log: list[Message] = []
        self._cache: tuple[int, Result] | None = None  # the last RESULT (its call id)
        self._result_out: Any = None  # the Outgoing of the RESULT being sent
        self._t0: float | None = None

    def start(self, now: float, framed: bool = True) -> bytes:
        """What the MCU sends when it boots: a 0x00, then its HELLO (with `framed` False
        the HELLO packet stays in `packets()`)."""
        self._t0 = now
        self.link.send(self.hello, now)
        return b"\x00" + self._out() if framed else b""

    def _out(self) -> bytes:
        return b"".join(frame_packet(p) for p in self.link.data_to_send())

    def packets(self) -> list[bytes]:
        """The packets to send (for a packet transport such as ISO-TP; the byte-stream
        methods return them framed instead)."""
        return self.link.data_to_send()

    def receive_packet(self, raw: bytes, now: float) -> None:
        """One packet from a packet transport (ISO-TP) in; see `packets()` for the output."""
        from lgembed.bridge.codec import decode_packet
        from lgembed.bridge.errors import RemoteProtocolError

        try:
            item: Any = decode_packet(raw, self.hello.max_payload)
        except RemoteProtocolError as e:
            from lgembed.bridge.codec import DecodeError

            item = DecodeError(e.code or 0, str(e), raw[:64], getattr(e, "seq", None), getattr(e, "type", None))
        self._items([item], now)

    def _items(self, items: list, now: float) -> None:
        for item in items:
            for ev in self.link.receive(item, now, check=self._busy):
                if isinstance(ev, Received):
                    self.log.append(ev.message)
                    self._handle(ev.message, now)
                elif isinstance(ev, SendFailed) and ev.outgoing is self._result_out:
                    self._result_out = None

    def _busy(self, msg: Message) -> int | None:
        # PROTOCOL.md §7.4 step 3: a new call while another call's RESULT is unacknowledged
        if isinstance(msg, Call) and not (self._cache and self._cache[0] == msg.call_id):
            if self._result_out is not None and self._result_out.state in ("queued", "in_flight"):
                return m.ERR_BUSY
        return None

    def receive(self, data: bytes, now: float) -> bytes:
        """Bytes from the host in; bytes to send back out."""
        self._items(self.decoder.feed(data), now)
        return self._out()

    def tick(self, now: float, framed: bool = True) -> bytes:
        """Runs the retransmission timer; returns bytes to send (with `framed` False
        the packets stay in `packets()`)."""
        for ev in self.link.poll(now):
            if isinstance(ev, SendFailed) and ev.outgoing is self._result_out:
                self._result_out = None
        return self._out() if framed else b""

    def emit(self, name: str, value: Any, now: float, framed: bool = True) -> bytes:
        """Sends event `name` with `value`; returns the bytes to send (see `start`).

        Raises:
            ValueError: no such event.
        """
        idx = self.events.index(name)
        ts = int((now - (self._t0 if self._t0 is not None else now)) * 1000) & 0xFFFFFFFF
        self.link.send(EventMessage(idx, ts, value), now)
        return self._out() if framed else b""

    def _handle(self, msg: Message, now: float) -> None:
        if isinstance(msg, HelloRequest):
            # reset the session: abandon what is in flight, forget the RESULT cache
            self.link.fail_all(_abandoned())
            self._cache = None
            self._result_out = None
            self.link.send(self.hello, now)
            return
        if not isinstance(msg, Call):
            return
        if self._cache is not None and self._cache[0] == msg.call_id:
            if self._result_out is None or self._result_out.state not in ("queued", "in_flight"):
                self._result_out = self.link.send(self._cache[1], now)
            return
        result = self._run(msg)
        self._cache = (msg.call_id, result)
        self._result_out = self.link.send(result, now)

    def _run(self, call: Call) -> Result:
        if call.fn_index >= len(self.functions):
            return Result(call.call_id, m.ERR_NO_FUNCTION, f"no function {call.fn_index}")
        name, codes, _res, fn = self.functions[call.fn_index]
        args = list(call.args)
        if len(args) != len(codes) or any(check_value(c, v) is not None for c, v in zip(codes, args)):
            return Result(call.call_id, m.ERR_ARGS, f"{name} takes ({codes})")
        self.runs[name] += 1
        try:
            value = fn(*args)
        except Exception as e:  # noqa: BLE001 - a function's failure is its RESULT
            return Result(call.call_id, m.ERR_FUNCTION, str(e))
        return Result(call.call_id, m.OK, value)


def _abandoned() -> Any:
    from lgembed.bridge.errors import ProtocolError

    return ProtocolError("abandoned by HELLO_REQ", m.ERR_STATE)


def sensor_node(state: dict[str, Any] | None = None, **hello: Any) -> SoftMcu:
    """A SoftMcu with the example firmware's functions: read_temp() -> f,
    set_led(b) -> b, echo(y) -> y, and event `button`.

    Args:
        state: a dict holding "temperature" (float) and "led" (bool), shared with the
            caller (default {"temperature": 21.5, "led": False}).
        **hello: SoftMcu keyword arguments (device_id, max_payload, ...).
    """
    st = state if state is not None else {}
    st.setdefault("temperature", 21.5)
    st.setdefault("led", False)

    def read_temp() -> float:
        return float(st["temperature"])

    def set_led(on: bool) -> bool:
        st["led"] = bool(on)
        return st["led"]

    def echo(data: bytes) -> bytes:
        return bytes(data)

    hello.setdefault("device_id", "soft-node")
    return SoftMcu([("read_temp", "", "f", read_temp), ("set_led", "b", "b", set_led), ("echo", "y", "y", echo)], ["button"], **hello)


class SoftMcuDevice(SerialDevice):
    """A SoftMcu sensor node as a simulated UART device (see the module docstring).

    Args:
        device_id: the HELLO's device id.
        temperature: what read_temp returns (the `state` attribute holds it).
        button_period: seconds between `button` events (0: none).
        max_payload: the MCU's payload limit.

    Attributes:
        mcu: the SoftMcu.
        state: {"temperature", "led"}, shared with the MCU's functions.
    """

    def __init__(self, device_id: str = "soft-node", temperature: float = 21.5, button_period: float = 0.0, max_payload: int = 128) -> None:
        super().__init__()
        self.state: dict[str, Any] = {"temperature": float(temperature), "led": False}
        self.mcu = sensor_node(self.state, device_id=device_id, max_payload=max_payload)
        self.button_period = float(button_period)
        self._lock = threading.Lock()
        self._started = False
        self._next_button = 0.0
        self._pressed = False

    def on_data(self, data: bytes) -> bytes | None:
        with self._lock:
            return self.mcu.receive(data, time.monotonic()) or None

    def tick(self, now: float) -> bytes | None:
        with self._lock:
            out = b""
            if not self._started:
                self._started = True
                self._next_button = now + self.button_period
                out += self.mcu.start(now)
            if self.button_period > 0 and now >= self._next_button:
                self._next_button = now + self.button_period
                self._pressed = not self._pressed
                out += self.mcu.emit("button", self._pressed, now)
            out += self.mcu.tick(now)
            return out or None

    def press(self, value: bool = True) -> None:
        """Sends a `button` event now."""
        with self._lock:
            out = self.mcu.emit("button", value, time.monotonic())
        if out:
            self.send(out)


class SoftMcuPort:
    """Runs a SoftMcu on a tty path from a thread (the Python stand-in for the example
    firmware's host build, e.g. on a `PtyWire`'s `port_a`).

    Args:
        mcu: the SoftMcu.
        path: the tty to open (raw mode).

    Call `close()` (or use it as a context manager) to stop it.
    """

    def __init__(self, mcu: SoftMcu, path: str) -> None:
        import os
        import tty

        self.mcu = mcu
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self._fd)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lgembed-softmcu", daemon=True)
        self._thread.start()

    def _write(self, data: bytes) -> None:
        import os
        import select

        while data and not self._stop.is_set():
            try:
                n = os.write(self._fd, data)
                data = data[n:]
            except BlockingIOError:
                select.select([], [self._fd], [], 0.01)
            except OSError:
                return

    def emit(self, name: str, value: Any) -> None:
        """Sends an event now."""
        with self._lock:
            out = self.mcu.emit(name, value, time.monotonic())
        self._write(out)

    def _run(self) -> None:
        import os
        import select

        with self._lock:
            out = self.mcu.start(time.monotonic())
        self._write(out)
        while not self._stop.is_set():
            try:
                r, _, _ = select.select([self._fd], [], [], 0.005)
            except (OSError, ValueError):
                return
            data = b""
            if r:
                try:
                    data = os.read(self._fd, 4096)
                except (BlockingIOError, InterruptedError):
                    data = b""
                except OSError:
                    return
            with self._lock:
                now = time.monotonic()
                out = (self.mcu.receive(data, now) if data else b"") + self.mcu.tick(now)
            if out:
                self._write(out)

    def close(self) -> None:
        """Stops the thread and closes the tty."""
        import os

        self._stop.set()
        self._thread.join(timeout=2.0)
        try:
            os.close(self._fd)
        except OSError:
            pass

    def __enter__(self) -> SoftMcuPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
