"""GPIO lines: the character device (through python-periphery) and the sysfs interface.

Why: relays, LEDs, buttons and alarm contacts are single GPIO lines. Graph tools need
`read`/`write` and edge waits whose errors name the line, the adapter and the fix, and
tests need the same driver code to run against a simulated chip.

Two drivers, one API (`read`, `write`, `direction`, `poll`, `read_event`):

- `CdevGPIO` (driver "cdev", the default) requests the line from `/dev/gpiochipN`
  through `periphery.CdevGPIO` (the kernel's GPIO v2 uAPI from Linux 5.10, v1 before).
  The kernel applies `inverted` (active-low) and timestamps edges.
- `SysfsGPIO` (driver "sysfs") uses the deprecated `/sys/class/gpio` interface, written
  here over a configurable root because periphery's SysfsGPIO hard-codes the path. Use
  it only on kernels without the character device or for lines numbered by sysfs.

Settings of `CdevGPIO` (`[adapters.NAME]`, `kind = "gpio"`, `driver = "cdev"`):

    name       type   default           meaning
    path       str    "/dev/gpiochip0"  the chip's character device (gpiodetect lists them)
    line       int    (required)        the line's offset on the chip (gpioinfo lists them)
    direction  str    "in"              "in", "out" (= "low"), "low" or "high": an output
                                        starts electrically low or high, whatever `inverted`
    edge       str    "none"            edges `read_event` reports: "none", "rising",
                                        "falling", "both" (inputs only)
    bias       str    "default"         "default", "pull_up", "pull_down", "disable"
    drive      str    "default"         "default", "open_drain", "open_source" (outputs)
    inverted   bool   false             active-low: `read`/`write` and edges are logical
                                        values, the line's level is their inverse
    label      str    "lgembed"         the consumer name gpioinfo shows (at most 31 bytes)

`direction` sets the electrical level, as the kernel and periphery do: "out" and
"low" start the line low, which for an `inverted` (active-low) output is the *active*
state. Open an active-low relay with `direction = "high"` to start it switched off.

Settings of `SysfsGPIO` (`driver = "sysfs"`): `line` (the sysfs number, e.g. 529 for
BCM 17 on Raspberry Pi kernels from 6.6), `direction`, `edge`, `inverted` (written to
`active_low`) as above, and

    sysfs_root      str    "/sys/class/gpio"  the directory holding export/unexport
    export_timeout  float  1.0                seconds to wait, after writing `export`, for
                                              gpioN/ to appear and become writable (udev
                                              fixes its permissions after the kernel makes it)

`SysfsGPIO` exports the line if `gpioN/` is absent (and unexports it on close, only
then), writes `active_low`, `direction` and `edge`, and keeps `value` open. Edges: it
waits with `select.poll` for POLLPRI|POLLERR on the value file, as the kernel notifies
sysfs readers. A freshly opened sysfs attribute reports POLLPRI once before its first
read; a plain file never does, so when that probe finds no POLLPRI (a simulated tree)
the driver falls back to re-reading `value` every 5 ms and reports a change as an edge
when it matches `edge`. That fallback only sees levels that last longer than a few
milliseconds while `poll`/`read_event` is waiting or between two such calls.

Values: `read()` returns and `write()` takes the logical value (True = active); with
`inverted = true` the line's electrical level is the inverse. `GpioEdge.value` is the
logical value after the edge (True after a rising edge). Timestamps are nanoseconds of
the wall clock (CLOCK_REALTIME), as periphery requests them from the kernel.

Permissions on a board: `/dev/gpiochipN` belongs to group `gpio` (mode 0660) on
Raspberry Pi OS; elsewhere add the service user to a group and a udev rule such as
`SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"`. For sysfs, the same
group needs write access to `export`/`unexport` and to the files of `gpioN/`, which a
udev rule changes after export (Raspberry Pi OS ships one in 99-com.rules); hence
`export_timeout`. A line already requested by another process or a kernel driver
raises DeviceBusyError (gpioinfo shows its consumer).

Simulator (`lgembed.edge.sim.gpio`): for "cdev", a chip whose device node is a regular
file and whose ioctls (periphery's own calls) a `SimGpioChip` answers, with a pipe as
each line's descriptor carrying kernel-format edge events; for "sysfs", a fake
`gpio` tree whose lines are already exported. Either way the simulation is a `SimLine`
whose `value` is the electrical level.

Length: a little over 600 lines, because the two drivers share one API and its
argument checks (`_GpioLine`) and are clearer side by side than split apart.
"""

from __future__ import annotations

import collections
import errno
import math
import os
import select
import time
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from lgembed.edge._base import Adapter, Setting, check_settings, require_library
from lgembed.edge.errors import (
    ArgumentError,
    DeviceAbsentError,
    DeviceFileError,
    DriverError,
    DriverTimeoutError,
)

__all__ = ("CdevGPIO", "GpioEdge", "SysfsGPIO")

DIRECTIONS = ("in", "out", "high", "low")
EDGES = ("none", "rising", "falling", "both")

_SLICE = 0.05
# seconds: a wait is cut into slices of at most this, holding the adapter's lock only
# during a slice, so close() and other calls from another thread get in between

_FALLBACK_PERIOD = 0.005
# seconds between two reads of `value` when sysfs does not notify (a simulated tree)


class GpioEdge(NamedTuple):
    """One edge on an input line.

    Attributes:
        edge: "rising" or "falling" (of the logical value).
        timestamp: when it happened, in nanoseconds of the wall clock.
        value: the logical value after the edge.
    """

    edge: str
    timestamp: int
    value: bool


def _non_negative(v: Any) -> str | None:
    return None if v >= 0 and not (isinstance(v, float) and math.isnan(v)) else "a number from 0 up"


def _line_number(v: Any) -> str | None:
    return None if 0 <= v <= 0xFFFF_FFFF else "an integer from 0 up (the line's number)"


def _label(v: Any) -> str | None:
    return None if len(v.encode()) <= 31 else "a string of at most 31 bytes"


def _plain(exc: BaseException) -> BaseException:
    """periphery's error with its "Opening GPIO chip: " prefix dropped, keeping the errno.

    periphery raises `GPIOError(errno, "Opening output line handle: Device or resource
    busy")`; the message `driver_error` builds already says what was being done.
    """
    code = getattr(exc, "errno", None)
    if isinstance(code, int) and not isinstance(code, bool):
        return OSError(code, os.strerror(code))
    return exc


class _GpioLine(Adapter):
    """What both GPIO drivers share: argument checks and the edge wait loop.

    Subclasses implement `_read`, `_write`, `_poll_once(timeout)` and `_take_event()`,
    each called with the adapter's lock held.
    """

    kind: ClassVar[str] = "gpio"

    def __init__(self, name: str, settings: dict[str, Any], device: str) -> None:
        super().__init__(name, settings, device)
        self.line: int = settings["line"]
        self._direction = "in" if settings["direction"] == "in" else "out"
        self._edge: str = settings["edge"]
        self._inverted: bool = settings["inverted"]
        if settings["edge"] != "none" and self._direction != "in":
            key = f"adapters.{name}.edge"
            msg = (
                f"invalid value for '{key}': {settings['edge']!r}; allowed: 'none' on an output (edge "
                f"detection needs direction 'in', this line has direction {settings['direction']!r})"
            )
            raise DeviceFileError(msg, "<dict>", key)

    # --- public API ------------------------------------------------------------------

    @property
    def direction(self) -> str:
        """The direction: "in" or "out" (a line opened "high" or "low" is an output)."""
        return self._direction

    @property
    def edge(self) -> str:
        """The edges `read_event` reports: "none", "rising", "falling" or "both"."""
        return self._edge

    @property
    def inverted(self) -> bool:
        """True when the line is active-low."""
        return self._inverted

    def read(self) -> bool:
        """Reads the line's logical value.

        Returns:
            True when the line is active (electrically high, or low when `inverted`).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the kernel refused the read.
        """
        action = f"Reading GPIO line {self.line}"
        self._check_open(action)
        with self._lock:
            self._check_open(action)
            try:
                return self._read()
            except OSError as e:
                raise self._fail(action, self._cause(e)) from e

    def write(self, value: bool) -> None:
        """Drives an output line to the logical `value`.

        Args:
            value: True (active) or False; 1 and 0 are accepted too.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `value` is not true or false, or the line is an input.
            DriverError: the kernel refused the write.
        """
        action = f"Writing GPIO line {self.line}"
        self._check_open(action)
        if value is not True and value is not False and not (type(value) is int and value in (0, 1)):
            msg = f"{self._where(action)}: value must be True or False (or 1 or 0), got {value!r}."
            raise ArgumentError(msg)
        if self._direction != "out":
            msg = (
                f"{self._where(action)}: the line is an input (direction 'in'). "
                "Fix: open it with direction 'out', 'low' or 'high' in the device file to drive it."
            )
            raise ArgumentError(msg)
        with self._lock:
            self._check_open(action)
            try:
                self._write(bool(value))
            except OSError as e:
                raise self._fail(action, self._cause(e)) from e

    def poll(self, timeout: float | None = None) -> bool:
        """Waits until an edge is ready for `read_event`.

        Args:
            timeout: seconds to wait (0: just look), None to wait without limit.

        Returns:
            True when an edge is ready, False when `timeout` passed without one.

        Raises:
            AdapterClosedError: the adapter was closed (also while waiting).
            ArgumentError: `timeout` is negative or not a number, or the line was opened
                without edge detection.
            DriverError: the kernel refused the wait.
        """
        action = f"Waiting for an edge on GPIO line {self.line}"
        self._check_open(action)
        self._check_wait(action, timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                self._check_open(action)
                step = _SLICE if deadline is None else min(_SLICE, max(0.0, deadline - time.monotonic()))
                try:
                    if self._poll_once(step):
                        return True
                except OSError as e:
                    raise self._fail(action, self._cause(e)) from e
            if deadline is not None and time.monotonic() >= deadline:
                return False
            self._pause()

    def read_event(self, timeout: float | None = None) -> GpioEdge:
        """Waits for the next edge and returns it.

        Args:
            timeout: seconds to wait, None to wait without limit.

        Returns:
            The edge: "rising" or "falling", its timestamp, the logical value after it.

        Raises:
            AdapterClosedError: the adapter was closed (also while waiting).
            ArgumentError: `timeout` is negative or not a number, or the line was opened
                without edge detection.
            DriverTimeoutError: no edge came within `timeout`.
            DriverError: the kernel refused the wait or the read.
        """
        action = f"Waiting for an edge on GPIO line {self.line}"
        if not self.poll(timeout):
            what = "edge" if self._edge == "both" else f"{self._edge} edge"
            msg = (
                f"{self._where(action)}: no {what} within {timeout} s (timed out). Fix: check the wiring "
                "and the bias (pull-up/pull-down) of the input, or pass a longer timeout."
            )
            raise DriverTimeoutError(msg, errno.ETIMEDOUT)
        action = f"Reading an edge event on GPIO line {self.line}"
        with self._lock:
            self._check_open(action)
            try:
                return self._take_event()
            except OSError as e:
                raise self._fail(action, self._cause(e)) from e

    # --- helpers ----------------------------------------------------------------------

    def _where(self, action: str) -> str:
        return f"{action} on adapter '{self.name}' ({self.device})"

    def _check_wait(self, action: str, timeout: Any) -> None:
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0
        ):
            msg = (
                f"{self._where(action)}: timeout must be a number of seconds from 0 up, "
                f"or None to wait without limit, got {timeout!r}."
            )
            raise ArgumentError(msg)
        if self._edge == "none":
            msg = (
                f"{self._where(action)}: the line was opened without edge detection (edge 'none'). "
                "Fix: set edge to 'rising', 'falling' or 'both' in the device file."
            )
            raise ArgumentError(msg)

    def _cause(self, exc: BaseException) -> BaseException:
        """The error to describe (CdevGPIO drops periphery's message prefix)."""
        return exc

    def _pause(self) -> None:
        """Between two wait slices (outside the lock)."""

    def _read(self) -> bool:
        raise NotImplementedError

    def _write(self, value: bool) -> None:
        raise NotImplementedError

    def _poll_once(self, timeout: float) -> bool:
        raise NotImplementedError

    def _take_event(self) -> GpioEdge:
        raise NotImplementedError


class CdevGPIO(_GpioLine):
    """One line of a GPIO character device, requested through `periphery.CdevGPIO`.

    Args:
        name: the adapter's name in the device file.
        **settings: `path`, `line`, `direction`, `edge`, `bias`, `drive`, `inverted`,
            `label` (see the module docstring).

    Raises:
        DeviceFileError: a setting is unknown, missing or out of range, or `edge` is set
            on an output.
        DriverUnavailableError: python-periphery is not installed.
        DeviceAbsentError: the chip's node does not exist.
        DevicePermissionError: the process may not open the node (group `gpio`).
        DeviceBusyError: another process or a kernel driver holds the line.
        DriverError: the chip has no such line (EINVAL), or another OS error.
    """

    driver: ClassVar[str] = "cdev"
    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("path", str, "/dev/gpiochip0", doc="the chip's character device"),
        Setting("line", int, check=_line_number, doc="the line's offset on the chip"),
        Setting("direction", str, "in", choices=DIRECTIONS, doc="in, out, low or high (outputs start at that level)"),
        Setting("edge", str, "none", choices=EDGES, doc="the edges read_event reports (inputs only)"),
        Setting("bias", str, "default", choices=("default", "pull_up", "pull_down", "disable"), doc="the line's bias"),
        Setting("drive", str, "default", choices=("default", "open_drain", "open_source"), doc="an output's drive"),
        Setting("inverted", bool, False, doc="active-low: values are the inverse of the level"),
        Setting("label", str, "lgembed", check=_label, doc="the consumer name gpioinfo shows"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        settings = check_settings(type(self), settings, source="", prefix=f"adapters.{name}")
        path, line = settings["path"], settings["line"]
        super().__init__(name, settings, device=f"{path} line {line}")
        self.path: str = path
        self._node = path  # a udev rule grants the chip's node, not "<node> line N"
        self._gpio: Any = None
        periphery = require_library("periphery", self.kind, name)
        action = f"Opening GPIO line {line}"
        try:
            self._gpio = periphery.CdevGPIO(
                path,
                line,
                settings["direction"],
                edge=settings["edge"],
                bias=settings["bias"],
                drive=settings["drive"],
                inverted=settings["inverted"],
                label=settings["label"],
            )
        except OSError as e:  # periphery.GPIOError is an OSError
            raise self._fail(action, self._cause(e)) from e

    def _fail(self, action: str, exc: BaseException) -> DriverError:
        code = getattr(exc, "errno", None)
        if code == errno.EINVAL and action.startswith("Opening"):
            msg = (
                f"{self._where(action)}: Invalid argument (the chip has no line {self.line}, or refused "
                f"the requested configuration). Fix: check the line number (gpioinfo {self.path} lists the lines)."
            )
            return DriverError(msg, code)
        return super()._fail(action, exc)

    def _cause(self, exc: BaseException) -> BaseException:
        return _plain(exc)

    def _close(self) -> None:
        gpio, self._gpio = self._gpio, None
        if gpio is None:
            return
        try:
            gpio.close()
        except OSError as e:
            raise self._fail(f"Closing GPIO line {self.line}", _plain(e)) from e

    def _read(self) -> bool:
        return bool(self._gpio.read())

    def _write(self, value: bool) -> None:
        self._gpio.write(value)

    def _poll_once(self, timeout: float) -> bool:
        return bool(self._gpio.poll(timeout))

    def _take_event(self) -> GpioEdge:
        try:
            ev = self._gpio.read_event()
        except ValueError as e:  # periphery decoding a short read: the line's descriptor was closed
            raise OSError(errno.EIO, f"short read of an edge event ({e})") from e
        return GpioEdge(ev.edge, int(ev.timestamp), ev.edge == "rising")


class SysfsGPIO(_GpioLine):
    """One line of the sysfs GPIO interface (`/sys/class/gpio/gpioN`), under any root.

    Args:
        name: the adapter's name in the device file.
        **settings: `line`, `direction`, `edge`, `inverted`, `sysfs_root`,
            `export_timeout` (see the module docstring).

    Raises:
        DeviceFileError: a setting is unknown, missing or out of range, or `edge` is set
            on an output.
        DeviceAbsentError: the sysfs root or the line's files do not exist.
        DevicePermissionError: the process may not write `export` or the line's files.
        DeviceBusyError: the kernel refused the export (a driver holds the line).
        DriverTimeoutError: `gpioN/` did not appear within `export_timeout` after export.
        DriverError: another OS error.
    """

    driver: ClassVar[str] = "sysfs"
    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("line", int, check=_line_number, doc="the line's sysfs number"),
        Setting("direction", str, "in", choices=DIRECTIONS, doc="in, out, low or high (outputs start at that level)"),
        Setting("edge", str, "none", choices=EDGES, doc="the edges read_event reports (inputs only)"),
        Setting("inverted", bool, False, doc="active-low (written to active_low)"),
        Setting("sysfs_root", str, "/sys/class/gpio", doc="the directory holding export and unexport"),
        Setting("export_timeout", float, 1.0, check=_non_negative, doc="seconds to wait for gpioN/ after export"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        settings = check_settings(type(self), settings, source="", prefix=f"adapters.{name}")
        root, line = Path(settings["sysfs_root"]), settings["line"]
        super().__init__(name, settings, device=str(root / f"gpio{line}"))
        self.sysfs_root = root
        self._dir = root / f"gpio{line}"
        self._exported = False
        self._fd: int | None = None
        self._event_fd: int | None = None
        self._poller: Any = None
        self._notified = False
        self._last = False
        self._events: collections.deque[GpioEdge] = collections.deque()
        action = f"Opening GPIO line {line}"
        try:
            self._open(action, settings)
        except BaseException:
            self._release(unexport=True, strict=False)
            raise

    def _open(self, action: str, settings: dict[str, Any]) -> None:
        if not self._dir.is_dir():
            self._export(action, settings["export_timeout"])
        direction = settings["direction"]
        try:
            self._write_attr("active_low", "1" if self._inverted else "0")
            self._write_attr("direction", direction)
            if direction == "in" and (self._edge != "none" or (self._dir / "edge").exists()):
                self._write_attr("edge", self._edge)  # absent on lines that cannot interrupt
            self._fd = os.open(self._dir / "value", os.O_RDWR if direction != "in" else os.O_RDONLY)
            if direction != "in":
                # the kernel already drives "high"/"low"/"out" (= low) electrically; writing the
                # same logical value is a no-op there and makes a plain-file tree consistent
                os.pwrite(self._fd, b"1\n" if (direction == "high") != self._inverted else b"0\n", 0)
            if self._edge != "none":
                self._event_fd = os.open(self._dir / "value", os.O_RDONLY)
                self._poller = select.poll()
                self._poller.register(self._event_fd, select.POLLPRI | select.POLLERR)
                # a sysfs attribute opened and not yet read reports POLLPRI: the kernel can
                # notify; a plain file never does (see the module docstring)
                self._notified = bool(self._poller.poll(0))
                self._last = self._parse(os.pread(self._event_fd, 16, 0))
        except OSError as e:
            raise self._fail(action, e) from e

    def _export(self, action: str, timeout: float) -> None:
        try:
            self._write_path(self.sysfs_root / "export", str(self.line))
        except OSError as e:
            if not (e.errno == errno.EBUSY and self._dir.is_dir()):  # exported meanwhile
                if e.errno == errno.ENOENT and not self.sysfs_root.is_dir():
                    msg = (
                        f"{self._where(action)}: {self.sysfs_root} does not exist. Fix: the kernel has no sysfs "
                        "GPIO interface (CONFIG_GPIO_SYSFS); use driver 'cdev', or check sysfs_root."
                    )
                    raise DeviceAbsentError(msg, e.errno) from e
                raise self._fail(f"{action} (writing {self.line} to {self.sysfs_root / 'export'})", e) from e
            return
        self._exported = True
        deadline = time.monotonic() + timeout
        names = ("value", "direction", "active_low") + (("edge",) if self._edge != "none" else ())
        while True:
            ready = all(os.path.exists(self._dir / n) for n in names)
            if ready and all(os.access(self._dir / n, os.W_OK) for n in names[1:]):
                return
            if time.monotonic() >= deadline:
                if ready:
                    return  # let the first write report the missing permission
                msg = (
                    f"{self._where(action)}: {self._dir} did not appear within export_timeout = {timeout} s "
                    f"after writing {self.line} to {self.sysfs_root / 'export'} (timed out). Fix: check that "
                    f"{self.line} is the line's sysfs number (the chip's base + offset), or raise export_timeout "
                    "if udev is slow to fix permissions."
                )
                raise DriverTimeoutError(msg, errno.ETIMEDOUT)
            time.sleep(0.005)

    def _write_attr(self, attr: str, text: str) -> None:
        self._write_path(self._dir / attr, text)

    @staticmethod
    def _write_path(path: Path, text: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, text.encode() + b"\n")
        finally:
            os.close(fd)

    def _parse(self, data: bytes) -> bool:
        text = data.strip()
        if text not in (b"0", b"1"):
            msg = f"{self._dir / 'value'} holds {data!r}, not 0 or 1"
            raise OSError(errno.EIO, msg)
        return text == b"1"

    def _release(self, *, unexport: bool, strict: bool) -> None:
        first: OSError | None = None
        for attr in ("_event_fd", "_fd"):
            fd = getattr(self, attr)
            setattr(self, attr, None)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError as e:
                    first = first or e
        self._poller = None
        if unexport and self._exported:
            self._exported = False
            try:
                self._write_path(self.sysfs_root / "unexport", str(self.line))
            except OSError as e:
                first = first or e
        if first is not None and strict:
            raise self._fail(f"Closing GPIO line {self.line}", first) from first

    def _close(self) -> None:
        self._release(unexport=True, strict=True)

    def _read(self) -> bool:
        return self._parse(os.pread(self._fd, 16, 0))  # type: ignore[arg-type]

    def _write(self, value: bool) -> None:
        os.pwrite(self._fd, b"1\n" if value else b"0\n", 0)  # type: ignore[arg-type]

    def _poll_once(self, timeout: float) -> bool:
        if self._events:
            return True
        fd = self._event_fd
        assert fd is not None  # edge != "none" was checked
        if self._notified:
            if not self._poller.poll(timeout * 1000.0):
                return False
            value = self._parse(os.pread(fd, 16, 0))  # the read acknowledges the notification
            self._last = value
            edge = ("rising" if value else "falling") if self._edge == "both" else self._edge
            self._events.append(GpioEdge(edge, time.time_ns(), edge == "rising"))
            return True
        value = self._parse(os.pread(fd, 16, 0))
        if value == self._last:
            return False
        self._last = value
        edge = "rising" if value else "falling"
        if self._edge in ("both", edge):
            self._events.append(GpioEdge(edge, time.time_ns(), value))
            return True
        return False

    def _pause(self) -> None:
        if not self._notified:
            time.sleep(_FALLBACK_PERIOD)

    def _take_event(self) -> GpioEdge:
        return self._events.popleft()
