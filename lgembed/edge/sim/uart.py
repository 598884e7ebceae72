"""Simulated serial devices on real pseudo-terminals.

Why: a UART driver's behaviour lives in termios, select and partial reads, which a mock
would skip. A pseudo-terminal is a real tty: the driver opens its slave side with
pyserial exactly as it opens /dev/ttyAMA0 on a board, and a device model answers on the
master side. Only the wire is missing.

Strategy: `attach` opens a pty pair (both ends raw), keeps both descriptors, and starts
one daemon thread per adapter that selects on the master (10 ms timeout): bytes the
driver wrote are appended to `model.received` and handed to `model.on_data`, whose
reply goes back; `model.tick(now)` runs about every 10 ms for spontaneous output. The
master is non-blocking and output waits in a buffer until the pty takes it, so a driver
that stops reading never blocks the thread. `env.close()` stops the thread and closes
both ends.

Device file:

    [adapters.gps]
    kind = "uart"
    port = "/dev/serial0"
    baudrate = 9600
    simulator = "nmea-gps"            # "echo" (default), "command", "nmea-gps" or "module:Class"
    simulation = { interval = 1.0, latitude = 48.1173, longitude = 11.5167 }

Built-in models (options are their constructor's keyword arguments):

- "echo" (`Echo`): sends back every byte it receives.
- "command" (`LineCommandDevice`): answers command lines: `responses` (table command ->
  reply, e.g. {AT = "OK", "TEMP?" = "21.5"}), `terminator` (appended to each reply,
  default "\\r\\n"); unknown commands get "ERROR". A command ends at "\\r" or "\\n".
- "nmea-gps" (`NmeaGps`): a GPS receiver sending $GPGGA and $GPRMC sentences every
  `interval` seconds (default 1.0) at `latitude`, `longitude` (degrees), `altitude` (m),
  `speed` (knots), `course` (degrees), with `fix` (default true). All are attributes
  settable while it runs.

A custom model is a subclass of `SerialDevice` named "module:Class" and constructed
with the options; it overrides `on_data` and/or `tick` and must call
`SerialDevice.__init__`. Its constructor may raise `OptionError(key, value, allowed)`
(`lgembed.edge.sim.OptionError`, re-exported here) for a bad option, which becomes a
DeviceFileError naming `adapters.NAME.simulation.KEY`.
"""

from __future__ import annotations

import os
import re
import select
import threading
import time
import tty
from collections.abc import Callable, Mapping
from typing import Any

from lgembed.edge.errors import DeviceFileError
from lgembed.edge.sim import OptionError, SimEnv, build_model, load_model_class

__all__ = (
    "BUILTINS",
    "DEFAULT_MODEL",
    "Echo",
    "LineCommandDevice",
    "NmeaGps",
    "OptionError",
    "SerialDevice",
    "attach",
    "nmea_sentence",
)

BUILTINS = {
    "echo": "lgembed.edge.sim.uart:Echo",
    "command": "lgembed.edge.sim.uart:LineCommandDevice",
    "nmea-gps": "lgembed.edge.sim.uart:NmeaGps",
}
"""Built-in model names -> "module:Class"."""

DEFAULT_MODEL = "echo"
"""The model when the adapter's table has no `simulator` key."""

TICK = 0.01
"""Seconds between `tick` calls (and the pump thread's select timeout)."""

_READ_CHUNK = 4096
# bytes read from the master per wakeup


class SerialDevice:
    """Base of every simulated serial device, and the adapter's simulation object.

    Subclasses override `on_data` and/or `tick` and call `super().__init__()`.

    Attributes:
        received: every byte the driver sent to the device, in order.
        port: the pty slave path the driver opened ("" until attached).
        errors: exceptions raised by `on_data`/`tick` (the pump thread logs them and
            carries on; a test can assert this stays empty).
    """

    def __init__(self) -> None:
        self.received = bytearray()
        self.port = ""
        self.errors: list[BaseException] = []
        self._cond = threading.Condition()
        self._pty: _Pty | None = None

    def on_data(self, data: bytes) -> bytes | None:
        """Called with each chunk the driver sent (already added to `received`).

        Returns:
            Bytes to send back, or None.
        """
        return None

    def tick(self, now: float) -> bytes | None:
        """Called about every 10 ms with `time.monotonic()`.

        Returns:
            Bytes the device sends on its own (a sensor's periodic output), or None.
        """
        return None

    def send(self, data: bytes) -> None:
        """Sends bytes from the device to the driver.

        Raises:
            TypeError: `data` is not bytes-like.
            RuntimeError: the model is not attached to a pty.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            msg = f"SerialDevice.send: 'data' must be bytes (got {type(data).__name__}); encode text first"
            raise TypeError(msg)
        if self._pty is None:
            msg = "SerialDevice.send: the model is not attached to a pseudo-terminal (use it through attach())"
            raise RuntimeError(msg)
        self._pty.write(bytes(data))

    def wait_received(self, expected: bytes | Callable[[bytes], Any], timeout: float = 1.0) -> bytes:
        """Waits until the driver has sent `expected` (a byte string found anywhere in
        `received`) or `expected(bytes(received))` is true.

        Returns:
            Everything received so far.

        Raises:
            TimeoutError: not within `timeout` seconds (the message shows what came).
        """
        if isinstance(expected, (bytes, bytearray)):
            want = bytes(expected)

            def test(buf: bytes) -> bool:
                return want in buf
        else:
            test = expected
        with self._cond:
            if self._cond.wait_for(lambda: test(bytes(self.received)), timeout):
                return bytes(self.received)
            got = bytes(self.received)
        msg = (
            f"{type(self).__name__} on {self.port or 'no port'}: not received within {timeout} s: {expected!r}; "
            f"received so far: {got[-200:]!r}"
        )
        raise TimeoutError(msg)

    def _record(self, data: bytes) -> None:
        with self._cond:
            self.received += data
            self._cond.notify_all()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} on {self.port or 'no port'}, {len(self.received)} bytes received>"


class Echo(SerialDevice):
    """Sends back every byte it receives (a loopback plug)."""

    def on_data(self, data: bytes) -> bytes | None:
        return data


class LineCommandDevice(SerialDevice):
    """A line-oriented command device (a modem's AT set, a sensor's query protocol).

    Args:
        responses: command -> reply text; the command is matched after stripping spaces.
        terminator: appended to every reply.

    Attributes:
        responses: the table (change it while running).
        commands: every command received, in order.

    Override `reply(command)` to compute answers.
    """

    def __init__(self, responses: Mapping[str, str] | None = None, terminator: str = "\r\n") -> None:
        super().__init__()
        if responses is None:
            responses = {}
        if not isinstance(responses, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in responses.items()):
            raise OptionError("responses", responses, 'a table of command = "reply" strings, e.g. {AT = "OK"}')
        if not isinstance(terminator, str) or not terminator:
            raise OptionError("terminator", terminator, 'a non-empty string, e.g. "\\r\\n"')
        self.responses = dict(responses)
        self.terminator = terminator
        self.commands: list[str] = []
        self._line = bytearray()

    def reply(self, command: str) -> str | None:
        """The reply text for `command` (without terminator), or None to stay silent."""
        return self.responses.get(command, "ERROR")

    def on_data(self, data: bytes) -> bytes | None:
        self._line += data
        *lines, rest = re.split(rb"[\r\n]", bytes(self._line))
        self._line = bytearray(rest[-_READ_CHUNK:])
        out = bytearray()
        for raw in lines:
            command = raw.decode("utf-8", "replace").strip()
            if not command:
                continue
            self.commands.append(command)
            text = self.reply(command)
            if text is not None:
                out += (text + self.terminator).encode("utf-8")
        return bytes(out) or None


def nmea_sentence(body: str) -> bytes:
    """`$<body>*<checksum>\\r\\n`: the checksum is the XOR of the body's bytes, in hex."""
    cs = 0
    for b in body.encode("ascii"):
        cs ^= b
    return f"${body}*{cs:02X}\r\n".encode("ascii")


def _angle(value: float, deg_digits: int, hemispheres: str) -> tuple[str, str]:
    # degrees and minutes with 4 decimals, rounded once on the whole (no "60.0000" minutes)
    total = round(abs(value) * 60 * 10000)
    deg, rem = divmod(total, 60 * 10000)
    return f"{deg:0{deg_digits}d}{rem // 10000:02d}.{rem % 10000:04d}", hemispheres[value < 0]


def _number(key: str, value: Any, lo: float | None = None, hi: float | None = None, above: float | None = None) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and lo is not None and not lo <= value <= hi:  # type: ignore[operator]
        ok = False
    if ok and above is not None and not value > above:
        ok = False
    if not ok:
        allowed = f"a number from {lo} to {hi}" if lo is not None else (f"a number above {above}" if above is not None else "a number")
        raise OptionError(key, value, allowed)
    return float(value)


class NmeaGps(SerialDevice):
    """A GPS receiver: $GPGGA and $GPRMC sentences every `interval` seconds.

    Args:
        interval: seconds between fixes (the first comes at once).
        latitude: degrees, north positive (-90 to 90).
        longitude: degrees, east positive (-180 to 180).
        altitude: metres above mean sea level.
        fix: True for a valid position; False sends sentences without one (quality 0,
            status V), as a receiver does before it has a fix.
        speed: knots over ground.
        course: degrees true (0 to 360).

    Every argument is also an attribute the test may change while it runs.
    """

    def __init__(
        self,
        interval: float = 1.0,
        latitude: float = 48.1173,
        longitude: float = 11.5167,
        altitude: float = 545.4,
        fix: bool = True,
        speed: float = 0.0,
        course: float = 0.0,
    ) -> None:
        super().__init__()
        self.interval = _number("interval", interval, above=0)
        self.latitude = _number("latitude", latitude, -90, 90)
        self.longitude = _number("longitude", longitude, -180, 180)
        self.altitude = _number("altitude", altitude)
        if not isinstance(fix, bool):
            raise OptionError("fix", fix, "true or false")
        self.fix = fix
        self.speed = _number("speed", speed, 0, 1e6)
        self.course = _number("course", course, 0, 360)
        self._next: float | None = None

    def sentences(self, when: float | None = None) -> bytes:
        """The GGA and RMC sentences for the current state at wall time `when` (default now)."""
        t = time.time() if when is None else when
        tm = time.gmtime(t)
        hms = f"{tm.tm_hour:02d}{tm.tm_min:02d}{tm.tm_sec:02d}.{int(t * 100) % 100:02d}"
        date = f"{tm.tm_mday:02d}{tm.tm_mon:02d}{tm.tm_year % 100:02d}"
        if self.fix:
            lat, ns = _angle(self.latitude, 2, "NS")
            lon, ew = _angle(self.longitude, 3, "EW")
            gga = f"GPGGA,{hms},{lat},{ns},{lon},{ew},1,08,0.9,{self.altitude:.1f},M,0.0,M,,"
            rmc = f"GPRMC,{hms},A,{lat},{ns},{lon},{ew},{self.speed:.2f},{self.course:.2f},{date},,,A"
        else:
            gga = f"GPGGA,{hms},,,,,0,00,99.99,,,,,,"
            rmc = f"GPRMC,{hms},V,,,,,,,{date},,,N"
        return nmea_sentence(gga) + nmea_sentence(rmc)

    def tick(self, now: float) -> bytes | None:
        if self._next is not None and now < self._next:
            return None
        if self._next is None or now - self._next >= self.interval:
            self._next = now + self.interval  # the first fix, or the thread fell behind
        else:
            self._next += self.interval  # a steady rate, whatever the tick granularity
        return self.sentences()


class _Pty:
    """The pseudo-terminal pair and the pump thread of one simulated UART."""

    def __init__(self, model: SerialDevice, name: str) -> None:
        self.model = model
        self.master, self.slave = os.openpty()
        try:
            tty.setraw(self.master)
            tty.setraw(self.slave)
            os.set_blocking(self.master, False)
            self.path = os.ttyname(self.slave)
        except BaseException:
            self._close_fds()
            raise
        # the slave stays open here too: the pty lives while the driver closes and reopens
        self._out = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lgembed-sim-uart-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def write(self, data: bytes) -> None:
        with self._lock:
            self._out += data
            self._flush_locked()

    def _flush_locked(self) -> None:
        while self._out and not self._stop.is_set():
            try:
                n = os.write(self.master, self._out)
            except BlockingIOError:
                return  # the pty is full: the pump writes the rest when it is writable
            except OSError:
                self._out.clear()  # the pty is gone
                return
            del self._out[:n]

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            out = fn(*args)
            if out:
                self.write(bytes(out))
        except Exception as e:  # a model's bug must not kill the simulated wire
            self.model.errors.append(e)
            import logging

            what = getattr(fn, "__name__", fn)
            logging.getLogger(__name__).exception("simulated UART %s: %s failed", self.path, what)

    def _run(self) -> None:
        next_tick = time.monotonic()
        while not self._stop.is_set():
            wlist = [self.master] if self._out else []
            try:
                r, w, _ = select.select([self.master], wlist, [], TICK)
            except (OSError, ValueError):
                return  # closed under us
            if r:
                try:
                    data = os.read(self.master, _READ_CHUNK)
                except (BlockingIOError, InterruptedError):
                    data = b""
                except OSError:
                    # EIO: no process holds the slave (cannot happen while we keep it open)
                    data = b""
                if data:
                    self.model._record(data)
                    self._call(self.model.on_data, data)
            if w:
                with self._lock:
                    self._flush_locked()
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + TICK
                self._call(self.model.tick, now)

    def _close_fds(self) -> None:
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        with self._lock:
            self._close_fds()


def attach(
    env: SimEnv,
    name: str,
    driver: str,
    settings: Mapping[str, Any],
    model: str | None,
    options: Mapping[str, Any],
    source: str = "<dict>",
) -> tuple[dict[str, Any], SerialDevice]:
    """Builds the simulated device for UART adapter `name` on a new pseudo-terminal.

    Args:
        env: the simulation environment (its close() stops the pump and the pty).
        name: the adapter's name.
        driver: the adapter's driver name ("serial").
        settings: the validated settings the driver would be opened with.
        model: the `simulator` value (a built-in name or "module:Class"), or None for echo.
        options: the `[adapters.NAME.simulation]` table: the model's keyword arguments.
        source: the device file, for messages.

    Returns:
        The settings with `port` set to the pty's slave path, and the model (the
        simulation object: `received`, `send`, `wait_received`, ...).

    Raises:
        DeviceFileError: an unknown model, a class that is not a SerialDevice, or a bad option.
        OSError: no pseudo-terminal could be opened.
    """
    key = f"adapters.{name}"
    spec = model if model is not None else DEFAULT_MODEL
    cls = load_model_class(spec, BUILTINS, "uart", f"{key}.simulator", source)
    if not (isinstance(cls, type) and issubclass(cls, SerialDevice)):
        msg = f"{source}: invalid value for '{key}.simulator': {spec!r} is not a subclass of lgembed.edge.sim.uart.SerialDevice"
        raise DeviceFileError(msg, source, f"{key}.simulator")
    device = build_model(cls, (), options, label=repr(spec), kind="uart", prefix=f"{key}.simulation", source=source)
    if not isinstance(getattr(device, "received", None), bytearray) or not hasattr(device, "_cond"):
        msg = f"{source}: the uart simulator {spec!r} did not call SerialDevice.__init__() in its __init__"
        raise DeviceFileError(msg, source, f"{key}.simulator")
    pty = _Pty(device, name)
    env.on_close(pty.close)
    device.port = pty.path
    device._pty = pty
    pty.start()
    out = dict(settings)
    out["port"] = pty.path
    return out, device
