"""A serial port (UART) as an adapter, through pyserial.

Why: GPS receivers, modems, motor controllers and microcontroller bridges talk over a
UART. pyserial does the termios work; this driver adds what a graph tool needs on top:
one validated settings table, a per-call read timeout, `readline` that either returns a
whole line or raises (keeping a partial line for the next call), separate read and
write paths (a watcher waiting for a line does not block a tool's write), and errors
that say which port failed, why, and what to change.

Settings (pyserial's argument names):

    =============  ======  =======  ==================================================
    name           type    default  meaning
    =============  ======  =======  ==================================================
    port           str     -        the device, e.g. /dev/ttyAMA0, /dev/serial0 or
                                    /dev/serial/by-id/usb-... (stable across replugs)
    baudrate       int     9600     bits per second: 50, 75, 110, 134, 150, 200, 300,
                                    600, or any integer from 1200 to 4000000
    bytesize       int     8        data bits: 5, 6, 7 or 8
    parity         str     "N"      "N" none, "E" even, "O" odd, "M" mark, "S" space
    stopbits       number  1        1, 1.5 or 2
    timeout        float   1.0      seconds `read`/`readline` wait when the call gives
                                    no timeout (0: return what is there)
    write_timeout  float   1.0      seconds a write may wait for the port to drain
    rtscts         bool    false    RTS/CTS hardware flow control
    xonxoff        bool    false    XON/XOFF software flow control
    exclusive      bool    true     lock the port: pyserial's flock (a second pyserial
                                    opener gets a DeviceBusyError) and TIOCEXCL (any
                                    other non-root open fails with EBUSY)
    =============  ======  =======  ==================================================

Permissions on a board: serial devices belong to group `dialout` (mode 0660); add the
service user to it (`usermod -aG dialout lgembed`) or grant the port with a udev rule,
e.g. `SUBSYSTEM=="tty", ATTRS{idVendor}=="1a86", GROUP="lgembed", MODE="0660"`. On a
Raspberry Pi, enable the UART (`enable_uart=1`) and free it from the login console
(`raspi-config` > Interface > Serial: no login shell, hardware port on).

Simulator (`lgembed.edge.sim.uart`): a real pseudo-terminal pair. The driver opens the
pty's slave side exactly as it opens /dev/ttyAMA0 (pyserial configures it with
termios), and a device model (echo, a line-command device, an NMEA GPS, or your own
class) answers on the master side from a daemon thread.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from typing import Any

from lgembed.edge._base import Adapter, Setting, check_settings, require_library
from lgembed.edge.errors import ArgumentError, DeviceAbsentError, DeviceBusyError, DriverError

__all__ = ("BAUDRATES", "MAX_LINE", "SerialUART")

BAUDRATES = (
    50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800, 9600, 19200, 38400, 57600,
    115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, 2000000,
    2500000, 3000000, 3500000, 4000000,
)  # fmt: skip
"""pyserial's `SerialBase.BAUDRATES` (copied: this module must not import serial; a test compares)."""

_MIN_CUSTOM, _MAX_BAUD = 1200, 4000000
# Linux sets any rate in between with termios2/BOTHER (pyserial's custom baud rate path)

MAX_LINE = 65536
"""Bytes `readline` buffers while looking for b"\\n" before it gives up (a wrong baud
rate or a binary protocol never sends one, and the buffer must stay bounded)."""

_CHUNK = 4096
# bytes asked of the port per read while looking for a line


def _baudrate_problem(v: Any) -> str | None:
    if v in BAUDRATES or _MIN_CUSTOM <= v <= _MAX_BAUD:
        return None
    low = ", ".join(str(b) for b in BAUDRATES if b < _MIN_CUSTOM)
    return f"one of {low}, or an integer from {_MIN_CUSTOM} to {_MAX_BAUD}"


def _non_negative(v: Any) -> str | None:
    return None if v >= 0 else "a number of seconds, 0 or more"


def _non_empty(v: Any) -> str | None:
    return None if v else "a non-empty device path, e.g. '/dev/ttyAMA0'"


def _timeout_arg(action: str, timeout: Any) -> None:
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
        msg = f"{action}: 'timeout' must be a number of seconds, 0 or more, or None for the adapter's default (got {timeout!r})"
        raise ArgumentError(msg)


def _errno_of(exc: BaseException) -> int | None:
    """The OS error code behind a pyserial error: its own `errno`, else its cause's
    (pyserial wraps `termios.error`, whose args are (errno, text), without a code)."""
    import termios

    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        code = getattr(e, "errno", None)
        if isinstance(code, int):
            return code
        if isinstance(e, termios.error) and e.args and isinstance(e.args[0], int):
            return e.args[0]
        e = e.__cause__ or e.__context__
    return None


class SerialUART(Adapter):
    """A UART opened with pyserial. Thread-safe: one reader and one writer at a time.

    Args:
        name: the adapter's name in the device file.
        **settings: the settings in the module docstring (`port` is required).

    Raises:
        DeviceFileError: an unknown or invalid setting.
        DriverUnavailableError: pyserial is not installed.
        DeviceAbsentError: the port does not exist (or no UART answers behind it).
        DevicePermissionError: the process may not open the port (group `dialout`).
        DeviceBusyError: another process holds the port (exclusive = true).
        DriverError: the port could not be configured.
    """

    kind = "uart"
    driver = "serial"
    SETTINGS = (
        Setting("port", str, check=_non_empty, doc="the serial device, e.g. /dev/ttyAMA0"),
        Setting("baudrate", int, 9600, check=_baudrate_problem, doc="bits per second"),
        Setting("bytesize", int, 8, choices=(5, 6, 7, 8), doc="data bits"),
        Setting("parity", str, "N", choices=("N", "E", "O", "M", "S"), doc="N none, E even, O odd, M mark, S space"),
        Setting("stopbits", (int, float), 1, choices=(1, 1.5, 2), doc="stop bits"),
        Setting("timeout", float, 1.0, check=_non_negative, doc="seconds a read waits when the call gives no timeout"),
        Setting("write_timeout", float, 1.0, check=_non_negative, doc="seconds a write may wait for the port"),
        Setting("rtscts", bool, False, doc="RTS/CTS hardware flow control"),
        Setting("xonxoff", bool, False, doc="XON/XOFF software flow control"),
        Setting("exclusive", bool, True, doc="lock the port against other openers (flock and TIOCEXCL)"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        settings = check_settings(type(self), settings, "", f"adapters.{name}")
        super().__init__(name, settings, device=settings["port"])
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        # Strategy: reads and writes take their own lock (as python-can's ThreadSafeBus
        # does), so a watcher blocked in readline() never holds up a tool's write();
        # self._lock guards open, close and reconfiguration.
        self._rx = bytearray()
        # bytes read from the port but not yet returned (the rest of a chunk, a partial line)
        self._wake_r, self._wake_w = -1, -1
        self._excl = False
        serial = require_library("serial", self.kind, name)
        self._serial_exception = serial.SerialException
        self._serial_timeout = serial.SerialTimeoutException
        action = "Opening UART port"
        try:
            self._port = serial.Serial(
                port=settings["port"],
                baudrate=settings["baudrate"],
                bytesize=settings["bytesize"],
                parity=settings["parity"],
                stopbits=settings["stopbits"],
                timeout=0,  # pyserial returns what is there; the driver waits with select (see _wait)
                write_timeout=settings["write_timeout"],
                xonxoff=settings["xonxoff"],
                rtscts=settings["rtscts"],
                exclusive=settings["exclusive"],
            )
        except (serial.SerialException, OSError, ValueError) as e:
            raise self._uart_error(action, e, opening=True) from e
        try:
            self._wake_r, self._wake_w = os.pipe()
            # close() writes here to wake a reader blocked in select()
            if settings["exclusive"]:
                self._set_excl(True)
        except OSError as e:
            self._release()
            raise self._uart_error(action, e, opening=True) from e

    # --- errors -----------------------------------------------------------------------

    def _uart_error(self, action: str, exc: BaseException, opening: bool = False) -> DriverError:
        """The DriverError for a pyserial or OS error, with a cause in plain words."""
        if isinstance(exc, (self._serial_timeout, TimeoutError)):
            cause = f"the port did not take the data within {self.settings['write_timeout']} s (write_timeout)"
            return self._fail(action, TimeoutError(errno.ETIMEDOUT, cause))
        if isinstance(exc, ValueError):
            cause = f"the port refused the setting ({exc})"
            return self._fail(action, OSError(errno.EINVAL, cause))
        code = _errno_of(exc)
        if opening and code in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY):
            # pyserial's exclusive lock is flock(LOCK_EX | LOCK_NB): EWOULDBLOCK when held;
            # another opener's TIOCEXCL gives EBUSY
            msg = (
                f"{action} on adapter '{self.name}' ({self.device}): another process or adapter holds the port "
                f"exclusively. Fix: stop the other user of the port (`fuser -v {self.device}` lists it) or close the "
                "other adapter on it (ModemManager probes new USB serial ports: a udev rule setting "
                'ENV{ID_MM_DEVICE_IGNORE}="1" keeps it away).'
            )
            return DeviceBusyError(msg, errno.EBUSY)
        if opening and code in (errno.EIO, errno.ENXIO):
            # the device node exists but no UART answers behind it (disabled in the device tree)
            cause = f"no UART answers behind this device node ({os.strerror(code)})"
            return self._fail(action, OSError(errno.ENODEV, cause))
        if code is None and "returned no data" in str(exc):
            msg = (
                f"{action} on adapter '{self.name}' ({self.device}): the port reports data but returns none "
                "(the device was unplugged, or another process reads the same port). Fix: reconnect the device and "
                "open the adapter again; make sure nothing else (ModemManager, a serial console, a second service) uses the port."
            )
            return DeviceAbsentError(msg, errno.ENODEV)
        if code is not None:
            return self._fail(action, OSError(code, os.strerror(code)))
        return self._fail(action, exc)

    # --- exclusive access -------------------------------------------------------------

    def _set_excl(self, on: bool) -> None:
        import fcntl
        import termios

        fcntl.ioctl(self._port.fileno(), termios.TIOCEXCL if on else termios.TIOCNXCL)
        self._excl = on

    # --- reading ----------------------------------------------------------------------

    def _wait(self, action: str, deadline: float) -> bool:
        """Waits until the port has bytes (True) or the deadline passes (False).

        Raises:
            AdapterClosedError: close() was called meanwhile.
        """
        left = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._port.fileno(), self._wake_r], [], [], left)
        if self._wake_r in ready or self._closed:
            self._check_open(action)
        return bool(ready)

    def _pull(self, n: int) -> None:
        """Appends up to `n` bytes the port has now (pyserial's timeout is 0) to the buffer."""
        self._rx += self._port.read(n)

    def read(self, size: int = 1, timeout: float | None = None) -> bytes:
        """Reads up to `size` bytes, waiting up to `timeout` seconds for them.

        Args:
            size: how many bytes to return at most (1 or more).
            timeout: seconds to wait; None uses the adapter's `timeout` setting, 0 returns
                what is already there.

        Returns:
            `size` bytes, or fewer (possibly none) when the time ran out.

        Raises:
            ArgumentError: `size` is not a positive integer, or `timeout` is negative.
            AdapterClosedError: the adapter is closed.
            DriverError: the port failed (DeviceAbsentError when it was unplugged).
        """
        action = f"Reading {size!r} byte{'' if size == 1 else 's'} from UART port"
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            msg = f"{action} on adapter '{self.name}' ({self.device}): 'size' must be an integer of 1 or more (got {size!r})"
            raise ArgumentError(msg)
        _timeout_arg(f"{action} on adapter '{self.name}' ({self.device})", timeout)
        self._check_open(action)
        wait = self.settings["timeout"] if timeout is None else timeout
        with self._read_lock:
            self._check_open(action)
            deadline = time.monotonic() + wait
            try:
                while len(self._rx) < size and self._wait(action, deadline):
                    self._pull(size - len(self._rx))
                    if time.monotonic() >= deadline:
                        break  # a steady stream must not hold the call past its timeout
            except (self._serial_exception, OSError, ValueError) as e:
                if isinstance(e, DriverError):
                    raise
                self._check_open(action)
                raise self._uart_error(action, e) from e
            out = bytes(self._rx[:size])
            del self._rx[:size]
            return out

    def readline(self, timeout: float | None = None) -> bytes:
        """Reads one line: the bytes up to and including the next b"\\n".

        Args:
            timeout: seconds to wait for the whole line; None uses the adapter's `timeout`
                setting.

        Returns:
            The line, ending in b"\\n" (b"\\r\\n" if the device sends that).

        Raises:
            ArgumentError: `timeout` is negative.
            DriverTimeoutError: no complete line arrived in time; the bytes that did
                arrive stay buffered and begin the next read or readline.
            DriverError: `MAX_LINE` bytes arrived without a b"\\n" (the bytes stay
                buffered; read() or reset_input_buffer() them), or the port failed.
            AdapterClosedError: the adapter is closed.
        """
        action = "Reading a line from UART port"
        _timeout_arg(f"{action} on adapter '{self.name}' ({self.device})", timeout)
        self._check_open(action)
        wait = self.settings["timeout"] if timeout is None else timeout
        with self._read_lock:
            self._check_open(action)
            deadline = time.monotonic() + wait
            scanned = 0
            try:
                while True:
                    end = self._rx.find(b"\n", scanned)
                    if end >= 0:
                        line = bytes(self._rx[: end + 1])
                        del self._rx[: end + 1]
                        return line
                    scanned = len(self._rx)
                    if scanned >= MAX_LINE:
                        cause = f"{scanned} bytes arrived without a line end (b'\\n'); they stay buffered"
                        msg = (
                            f"{action} on adapter '{self.name}' ({self.device}): {cause}. Fix: check the baud rate "
                            f"({self.settings['baudrate']}) and framing against the device's; for a binary protocol use read()."
                        )
                        raise DriverError(msg)
                    if self._wait(action, deadline):
                        self._pull(min(_CHUNK, MAX_LINE - scanned))
                        if time.monotonic() < deadline or self._rx.find(b"\n", scanned) >= 0:
                            continue
                    kept = f"{len(self._rx)} bytes without a line end kept for the next read" if self._rx else "nothing arrived"
                    cause = f"no complete line within {wait} s ({kept})"
                    raise self._fail(action, TimeoutError(errno.ETIMEDOUT, cause))
            except (self._serial_exception, OSError, ValueError) as e:
                if isinstance(e, DriverError):
                    raise
                self._check_open(action)
                raise self._uart_error(action, e) from e

    @property
    def in_waiting(self) -> int:
        """Bytes received and not yet read (the driver's buffer plus the port's).

        Raises:
            AdapterClosedError: the adapter is closed.
            DriverError: the port failed.
        """
        action = "Counting waiting bytes on UART port"
        self._check_open(action)
        with self._lock:
            self._check_open(action)
            try:
                return len(self._rx) + self._port.in_waiting
            except (self._serial_exception, OSError) as e:
                raise self._uart_error(action, e) from e

    def reset_input_buffer(self) -> None:
        """Discards every received byte not yet read (the driver's buffer and the port's).

        Raises:
            AdapterClosedError: the adapter is closed.
            DriverError: the port failed.
        """
        action = "Clearing the input buffer of UART port"
        self._check_open(action)
        with self._read_lock:
            self._check_open(action)
            self._rx.clear()
            try:
                self._port.reset_input_buffer()
            except (self._serial_exception, OSError) as e:
                raise self._uart_error(action, e) from e

    # --- writing ----------------------------------------------------------------------

    def write(self, data: bytes) -> int:
        """Sends `data`, waiting up to the `write_timeout` setting for the port to take it.

        Args:
            data: bytes, bytearray or memoryview.

        Returns:
            The number of bytes written (len(data)).

        Raises:
            ArgumentError: `data` is a str (encode it first) or not bytes-like.
            DriverTimeoutError: the port did not take the data within `write_timeout`
                (flow control holding it back, or nobody reading a pty).
            AdapterClosedError: the adapter is closed.
            DriverError: the port failed.
        """
        if isinstance(data, str):
            msg = (
                f"Writing to UART port on adapter '{self.name}' ({self.device}): 'data' must be bytes, not str "
                f"(got {data[:40]!r}); encode it first, e.g. data.encode('ascii')"
            )
            raise ArgumentError(msg)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            msg = (
                f"Writing to UART port on adapter '{self.name}' ({self.device}): 'data' must be bytes, bytearray "
                f"or memoryview (got {type(data).__name__})"
            )
            raise ArgumentError(msg)
        action = f"Writing {len(data)} byte{'' if len(data) == 1 else 's'} to UART port"
        self._check_open(action)
        with self._write_lock:
            self._check_open(action)
            try:
                n = self._port.write(data)
            except (self._serial_exception, OSError, ValueError) as e:
                self._check_open(action)
                raise self._uart_error(action, e) from e
            self._check_open(action)  # close() cancels a write in progress
            return len(data) if n is None else n

    def flush(self) -> None:
        """Waits until every written byte has left the port (tcdrain).

        Raises:
            AdapterClosedError: the adapter is closed.
            DriverError: the port failed.
        """
        action = "Draining the output of UART port"
        self._check_open(action)
        with self._write_lock:
            self._check_open(action)
            try:
                self._port.flush()
            except (self._serial_exception, OSError) as e:
                raise self._uart_error(action, e) from e

    # --- configuration ----------------------------------------------------------------

    @property
    def baudrate(self) -> int:
        """The port's baud rate; setting it reconfigures the open port.

        Raises:
            ArgumentError: (setting) a rate outside what the driver allows.
            AdapterClosedError: (setting) the adapter is closed.
            DriverError: (setting) the port refused the rate.
        """
        return self.settings["baudrate"]

    @baudrate.setter
    def baudrate(self, value: int) -> None:
        action = f"Setting the baud rate of UART port to {value!r}"
        problem = "an integer" if isinstance(value, bool) or not isinstance(value, int) else _baudrate_problem(value)
        if problem is not None:
            msg = f"{action} on adapter '{self.name}' ({self.device}): 'baudrate' must be {problem} (got {value!r})"
            raise ArgumentError(msg)
        self._check_open(action)
        with self._lock, self._write_lock:
            # the write lock: no frame goes out half at the old rate
            self._check_open(action)
            try:
                self._port.baudrate = value
            except (self._serial_exception, OSError, ValueError) as e:
                raise self._uart_error(action, e) from e
            self.settings["baudrate"] = value

    # --- closing ----------------------------------------------------------------------

    def _release(self) -> None:
        if self._excl:
            try:
                self._set_excl(False)
            except OSError:
                pass  # a vanished port: closing releases it anyway
        try:
            self._port.close()
        except (self._serial_exception, OSError):
            pass
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def _close(self) -> None:
        # wake a reader blocked in select() and cancel a write waiting for the port, then
        # wait for both to leave before the descriptors go
        os.write(self._wake_w, b"x")
        self._port.cancel_write()
        with self._read_lock, self._write_lock:
            self._release()
