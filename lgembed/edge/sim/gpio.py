"""Simulated GPIO lines: a chip that answers the kernel's GPIO ioctls, and a sysfs tree.

Why: the GPIO drivers (`lgembed.edge.gpio`) must run unchanged on a host whose kernel
has no GPIO (no gpio-sim, no gpio-mockup). The simulator stands in for the kernel
below them, so periphery's own request, value and event code runs as on a board.

Character device ("cdev"): `SimGpioChip` is the kernel side of one `/dev/gpiochipN`.
Its node is a regular file under the environment's directory, registered with
`lgembed.edge.sim._ioctl.PROXY`, which `install` puts in place of `fcntl` inside
`periphery.gpio_cdev2` (and `gpio_cdev1`). It answers GPIO_GET_CHIPINFO, the v2
ioctls (GET_LINEINFO, GET_LINE, LINE_GET_VALUES, LINE_SET_VALUES, LINE_SET_CONFIG)
and the v1 ones (GET_LINEINFO, GET_LINEHANDLE, GET_LINEEVENT, GPIOHANDLE_GET/SET_LINE_VALUES)
with the kernel's structures, validation and errors: EINVAL for a line beyond the
chip or contradictory flags, EBUSY for a line another request holds, EPERM for a
write to an input. A request's descriptor is the read end of a pipe; edge events
the request asked for are written to it as `gpio_v2_line_event` (or v1
`gpioevent_data`) structures, so poll() and read() behave as on the kernel's line
descriptor. ACTIVE_LOW is applied here, as the kernel does: values and edges the
driver sees are logical, `SimLine.value` is electrical. A request ends when the driver
closes its descriptor (seen as POLLERR on the pipe's write end). One chip serves every
adapter with the same `path` (`env.shared[("gpiochip", path)]`). Lines are named
"GPIO0".."GPIOn" as on a Raspberry Pi; the default size is 54 lines (option `lines`).

Sysfs ("sysfs"): a tree under `env.path("sys/class/gpio")` with `export` and
`unexport` files and, for each simulated line, a `gpioN/` directory created at attach
time as if already exported (plain files cannot react to a write to `export`), its
files already holding the adapter's settings (`direction`, `active_low`, `edge`,
`value`). A watcher thread re-reads them every 5 ms, so `SimLine.on_change` fires when
the driver writes `value`; setting an input's level writes `value`, which the driver's
polling fallback sees (see `lgembed.edge.gpio`).

Device-file options (`[adapters.NAME.simulation]`): `value` (bool, default false: the
input's initial level; an output starts at its direction's level) and, for "cdev",
`lines` (int, the chip's size, default 54). `simulator` may name "line" (the default)
or a "module:Class" subclass of `SimLine`, built with the options as keywords.

Length: this module is over 600 lines because it reproduces the kernel's GPIO uAPI
(the v1 and v2 structures, their validation and their event format) in one place,
where it can be read against include/uapi/linux/gpio.h.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lgembed.edge._base import int_range
from lgembed.edge.errors import DeviceFileError
from lgembed.edge.sim import SimEnv, build_model, load_model_class
from lgembed.edge.sim._ioctl import PROXY, install

__all__ = ("SimGpioChip", "SimLine", "attach")

# --- the kernel's structures (include/uapi/linux/gpio.h) ------------------------------

_NAME_MAX = 32
_LINES_MAX = 64
_ATTRS_MAX = 10


class _ChipInfo(ctypes.Structure):
    _fields_ = (("name", ctypes.c_char * _NAME_MAX), ("label", ctypes.c_char * _NAME_MAX), ("lines", ctypes.c_uint32))


class _AttrData(ctypes.Union):
    _fields_ = (("flags", ctypes.c_uint64), ("values", ctypes.c_uint64), ("debounce_period_us", ctypes.c_uint32))


class _Attr(ctypes.Structure):
    _fields_ = (("id", ctypes.c_uint32), ("padding", ctypes.c_uint32), ("data", _AttrData))


class _ConfigAttr(ctypes.Structure):
    _fields_ = (("attr", _Attr), ("mask", ctypes.c_uint64))


class _Config(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("num_attrs", ctypes.c_uint32),
        ("padding", ctypes.c_uint32 * 5),
        ("attrs", _ConfigAttr * _ATTRS_MAX),
    )


class _LineRequest(ctypes.Structure):
    _fields_ = (
        ("offsets", ctypes.c_uint32 * _LINES_MAX),
        ("consumer", ctypes.c_char * _NAME_MAX),
        ("config", _Config),
        ("num_lines", ctypes.c_uint32),
        ("event_buffer_size", ctypes.c_uint32),
        ("padding", ctypes.c_uint32 * 5),
        ("fd", ctypes.c_int32),
    )


class _LineValues(ctypes.Structure):
    _fields_ = (("bits", ctypes.c_uint64), ("mask", ctypes.c_uint64))


class _LineInfo(ctypes.Structure):
    _fields_ = (
        ("name", ctypes.c_char * _NAME_MAX),
        ("consumer", ctypes.c_char * _NAME_MAX),
        ("offset", ctypes.c_uint32),
        ("num_attrs", ctypes.c_uint32),
        ("flags", ctypes.c_uint64),
        ("attrs", _Attr * _ATTRS_MAX),
        ("padding", ctypes.c_uint32 * 4),
    )


class _LineEvent(ctypes.Structure):
    _fields_ = (
        ("timestamp_ns", ctypes.c_uint64),
        ("id", ctypes.c_uint32),
        ("offset", ctypes.c_uint32),
        ("seqno", ctypes.c_uint32),
        ("line_seqno", ctypes.c_uint32),
        ("padding", ctypes.c_uint32 * 6),
    )


class _V1LineInfo(ctypes.Structure):
    _fields_ = (
        ("line_offset", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("name", ctypes.c_char * _NAME_MAX),
        ("consumer", ctypes.c_char * _NAME_MAX),
    )


class _V1HandleRequest(ctypes.Structure):
    _fields_ = (
        ("lineoffsets", ctypes.c_uint32 * _LINES_MAX),
        ("flags", ctypes.c_uint32),
        ("default_values", ctypes.c_uint8 * _LINES_MAX),
        ("consumer_label", ctypes.c_char * _NAME_MAX),
        ("lines", ctypes.c_uint32),
        ("fd", ctypes.c_int),
    )


class _V1HandleData(ctypes.Structure):
    _fields_ = (("values", ctypes.c_uint8 * _LINES_MAX),)


class _V1EventRequest(ctypes.Structure):
    _fields_ = (
        ("lineoffset", ctypes.c_uint32),
        ("handleflags", ctypes.c_uint32),
        ("eventflags", ctypes.c_uint32),
        ("consumer_label", ctypes.c_char * _NAME_MAX),
        ("fd", ctypes.c_int),
    )


class _V1EventData(ctypes.Structure):
    _fields_ = (("timestamp", ctypes.c_uint64), ("id", ctypes.c_uint32))


def _iowr(nr: int, struct: type, read_only: bool = False) -> int:
    """The ioctl number _IOR/_IOWR(0xB4, nr, struct) as <asm-generic/ioctl.h> builds it."""
    direction = 2 if read_only else 3
    return (direction << 30) | (ctypes.sizeof(struct) << 16) | (0xB4 << 8) | nr


GPIO_GET_CHIPINFO_IOCTL = _iowr(0x01, _ChipInfo, read_only=True)
GPIO_GET_LINEINFO_IOCTL = _iowr(0x02, _V1LineInfo)
GPIO_GET_LINEHANDLE_IOCTL = _iowr(0x03, _V1HandleRequest)
GPIO_GET_LINEEVENT_IOCTL = _iowr(0x04, _V1EventRequest)
GPIOHANDLE_GET_LINE_VALUES_IOCTL = _iowr(0x08, _V1HandleData)
GPIOHANDLE_SET_LINE_VALUES_IOCTL = _iowr(0x09, _V1HandleData)
GPIO_V2_GET_LINEINFO_IOCTL = _iowr(0x05, _LineInfo)
GPIO_V2_GET_LINE_IOCTL = _iowr(0x07, _LineRequest)
GPIO_V2_LINE_SET_CONFIG_IOCTL = _iowr(0x0D, _Config)
GPIO_V2_LINE_GET_VALUES_IOCTL = _iowr(0x0E, _LineValues)
GPIO_V2_LINE_SET_VALUES_IOCTL = _iowr(0x0F, _LineValues)

# gpio_v2_line_flag
_F_USED = 1 << 0
_F_ACTIVE_LOW = 1 << 1
_F_INPUT = 1 << 2
_F_OUTPUT = 1 << 3
_F_EDGE_RISING = 1 << 4
_F_EDGE_FALLING = 1 << 5
_F_OPEN_DRAIN = 1 << 6
_F_OPEN_SOURCE = 1 << 7
_F_PULL_UP = 1 << 8
_F_PULL_DOWN = 1 << 9
_F_BIAS_DISABLED = 1 << 10
_F_CLOCK_REALTIME = 1 << 11
_F_CLOCK_HTE = 1 << 12
_F_VALID = (1 << 13) - 2  # every flag above except USED
_ATTR_FLAGS, _ATTR_OUTPUT_VALUES, _ATTR_DEBOUNCE = 1, 2, 3
_EVENT_RISING, _EVENT_FALLING = 1, 2

# v1 request and line-info flags
_H_INPUT, _H_OUTPUT, _H_ACTIVE_LOW, _H_OPEN_DRAIN, _H_OPEN_SOURCE = 1, 2, 4, 8, 16
_H_PULL_UP, _H_PULL_DOWN, _H_BIAS_DISABLE = 32, 64, 128
_I_KERNEL, _I_IS_OUT = 1, 2
_E_RISING, _E_FALLING = 1, 2


def _os_error(code: int, detail: str = "") -> OSError:
    text = os.strerror(code) + (f" ({detail})" if detail else "")
    return OSError(code, text)


# --- the line ------------------------------------------------------------------------


class SimLine:
    """One simulated GPIO line, seen from the wire.

    `value` is the electrical level: for an output, what the driver drives (after the
    kernel's active-low inversion); for an input, what the simulation sets. Setting an
    input's level (`line.value = True` or `line.set(True)`) delivers an edge to the
    driver when the line was requested with edge detection for that edge.

    A custom model ("module:Class" in the device file) subclasses this class and is
    built with the `[adapters.NAME.simulation]` options as keywords.

    Args:
        value: the initial level (an output takes its direction's level when requested).

    Attributes:
        on_change: callables run with the new level whenever it changes, whichever side
            changed it (from the driver's thread or the simulation's).
        history: (time.monotonic(), level) for every change.
        direction: "in" or "out" as the driver requested it, None before any request.
        edge: the edges the request asked for: "none", "rising", "falling", "both".
        bias, drive: as requested ("default", "pull_up", ...); they do not move the level.
        active_low: whether the request asked for inversion.
        consumer: the request's label, None when no request holds the line.
        offset: the line's offset on its chip (cdev) or its sysfs number.
    """

    OPTIONS: dict[str, tuple[type, Callable[[Any], str | None] | None]] = {"value": (bool, None)}
    """Options the device file may give: name -> (type, check), used by `attach`."""

    def __init__(self, value: bool = False) -> None:
        if not isinstance(value, bool):
            msg = f"SimLine: 'value' must be True or False (got {value!r})"
            raise TypeError(msg)
        self._level = value
        self.on_change: list[Callable[[bool], None]] = []
        self.history: list[tuple[float, bool]] = []
        self.direction: str | None = None
        self.edge = "none"
        self.bias = "default"
        self.drive = "default"
        self.active_low = False
        self.consumer: str | None = None
        self.offset: int | None = None
        self._port: Any = None  # the chip or sysfs tree the line belongs to
        self._lock: Any = threading.RLock()

    @property
    def value(self) -> bool:
        """The electrical level (True = high). Assigning it is `set(level)`."""
        with self._lock:
            changed = self._port.refresh(self) if self._port is not None else None
            level = self._level
        if changed is not None:
            self._notify(changed)
        return level

    @value.setter
    def value(self, level: bool) -> None:
        self.set(level)

    def set(self, level: bool) -> None:
        """Sets an input's electrical level, delivering the edge if the driver asked for it.

        Args:
            level: True (high) or False (low); 1 and 0 are accepted too.

        Raises:
            TypeError: `level` is not true or false.
            ValueError: the line is an output held by a driver (only it drives the line).
        """
        if level is not True and level is not False and not (type(level) is int and level in (0, 1)):
            msg = f"SimLine.set: level must be True or False (got {level!r})"
            raise TypeError(msg)
        level = bool(level)
        notify: list[bool] = []
        with self._lock:
            if self._port is not None:
                changed = self._port.refresh(self)
                if changed is not None:
                    notify.append(changed)
                if self._port.driven(self):
                    msg = (
                        f"SimLine.set: line {self.offset} is an output driven by "
                        f"'{self.consumer or 'a driver'}'; only an input's level can be set from the simulation"
                    )
                    raise ValueError(msg)
            if level != self._level:
                self._record(level)
                notify.append(level)
                if self._port is not None:
                    self._port.deliver(self, level)
        for n in notify:
            self._notify(n)

    @property
    def requested(self) -> bool:
        """True while a driver holds the line (a live request, or an exported sysfs line)."""
        with self._lock:
            return self._port is not None and self._port.requested(self)

    def _record(self, level: bool) -> None:
        self._level = level
        self.history.append((time.monotonic(), level))

    def _notify(self, level: bool) -> None:
        for fn in list(self.on_change):
            fn(level)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.offset} {self.direction or '-'} level={int(self._level)}>"


# --- the character device ------------------------------------------------------------


class _Request:
    """One line request: its lines, the pipe that is its descriptor, its ABI."""

    __slots__ = ("abi", "consumer", "key", "lines", "rfd", "seqno", "wfd")

    def __init__(self, abi: str, lines: list[SimLine], consumer: str) -> None:
        self.abi = abi  # "v2", "v1-handle" or "v1-event"
        self.lines = lines
        self.consumer = consumer
        self.rfd, self.wfd = os.pipe()
        os.set_blocking(self.wfd, False)  # a full event buffer drops events, as the kernel's does
        self.key: tuple[int, int] | None = None
        self.seqno = 0

    def alive(self) -> bool:
        """False once the driver closed its descriptor (the pipe's write end reports POLLERR)."""
        p = select.poll()
        p.register(self.wfd, select.POLLOUT)
        return not any(ev & select.POLLERR for _, ev in p.poll(0))


class SimGpioChip:
    """The kernel side of one GPIO character device (see the module docstring).

    Args:
        node: the regular file standing for the device node.
        lines: how many lines the chip has.
        name: the chip's name (GPIO_GET_CHIPINFO), e.g. "gpiochip0".
        label: the chip's label.

    Attributes:
        path: the node's path (what the driver opens).
        num_lines: the chip's size.
    """

    def __init__(
        self, node: str | os.PathLike, lines: int = 54, name: str = "gpiochip0", label: str = "lgembed-sim"
    ) -> None:
        self.path = Path(node)
        self.path.touch()
        self.num_lines = lines
        self.name = name
        self.label = label
        self._lock = threading.RLock()
        self._lines: dict[int, SimLine] = {}
        self._requests: dict[tuple[int, int], _Request] = {}
        self._errors: list[OSError] = []
        self._node_key = PROXY.register(self.path, self)
        self._closed = False

    # --- simulation side -------------------------------------------------------------

    def line(self, offset: int) -> SimLine:
        """The line at `offset` (a plain SimLine is made on first use).

        Raises:
            IndexError: `offset` is beyond the chip.
        """
        if not 0 <= offset < self.num_lines:
            msg = f"SimGpioChip {self.name}: no line {offset} (the chip has {self.num_lines} lines)"
            raise IndexError(msg)
        with self._lock:
            if offset not in self._lines:
                self.attach_line(offset, SimLine())
            return self._lines[offset]

    def attach_line(self, offset: int, line: SimLine) -> SimLine:
        """Puts `line` (a SimLine or subclass) at `offset`, replacing an unrequested one.

        Raises:
            IndexError: `offset` is beyond the chip.
            ValueError: a request holds the line now at `offset`.
        """
        if not 0 <= offset < self.num_lines:
            msg = f"SimGpioChip {self.name}: no line {offset} (the chip has {self.num_lines} lines)"
            raise IndexError(msg)
        with self._lock:
            old = self._lines.get(offset)
            if old is not None and old is not line and self.requested(old):
                msg = f"SimGpioChip {self.name}: line {offset} is requested; it cannot be replaced"
                raise ValueError(msg)
            line._port, line._lock, line.offset = self, self._lock, offset
            self._lines[offset] = line
            return line

    def inject_error(self, exc: OSError, count: int = 1) -> None:
        """Makes the next `count` ioctls on this chip or its lines raise `exc`
        (e.g. PermissionError(errno.EACCES, ...) to test a driver's error path)."""
        with self._lock:
            self._errors.extend([exc] * count)

    def close(self) -> None:
        """Ends every request (the drivers' descriptors then read end-of-file) and unregisters."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for req in list(self._requests.values()):
                self._end(req)
            PROXY.unregister(self._node_key)

    # --- the port interface SimLine calls (under self._lock) ---------------------------

    def refresh(self, line: SimLine) -> bool | None:
        self._reap()
        return None

    def driven(self, line: SimLine) -> bool:
        return self._request_of(line) is not None and line.direction == "out"

    def requested(self, line: SimLine) -> bool:
        self._reap()
        return self._request_of(line) is not None

    def deliver(self, line: SimLine, level: bool) -> None:
        req = self._request_of(line)
        if req is None or req.abi == "v1-handle":
            return
        logical = level != line.active_low
        if line.edge not in ("both", "rising" if logical else "falling"):
            return
        if req.abi == "v2":
            req.seqno += 1
            line_seqno = getattr(line, "_line_seqno", 0) + 1
            line._line_seqno = line_seqno  # type: ignore[attr-defined]
            ev = _LineEvent()
            ev.timestamp_ns = time.time_ns() if getattr(line, "_realtime", False) else time.monotonic_ns()
            ev.id = _EVENT_RISING if logical else _EVENT_FALLING
            ev.offset = line.offset or 0
            ev.seqno, ev.line_seqno = req.seqno, line_seqno
            data = bytes(ev)
        else:
            ev1 = _V1EventData()
            ev1.timestamp = time.monotonic_ns()
            ev1.id = _E_RISING if logical else _E_FALLING
            data = bytes(ev1)
        try:
            os.write(req.wfd, data)
        except BlockingIOError:
            pass  # the driver does not read its events: the buffer is full, drop this one
        except OSError:
            self._end(req)  # the driver closed the line

    # --- requests ---------------------------------------------------------------------

    def _request_of(self, line: SimLine) -> _Request | None:
        req = getattr(line, "_request", None)
        if req is not None and req.key not in self._requests:
            line._request = None  # type: ignore[attr-defined]
            return None
        return req

    def _reap(self) -> None:
        for req in list(self._requests.values()):
            if not req.alive():
                self._end(req)

    def _end(self, req: _Request) -> None:
        self._requests.pop(req.key, None)  # type: ignore[arg-type]
        if req.key is not None:
            PROXY.unregister(req.key)
        for line in req.lines:
            if getattr(line, "_request", None) is req:
                line._request = None  # type: ignore[attr-defined]
                line.consumer = None
        try:
            os.close(req.wfd)
        except OSError:
            pass

    def _new_request(self, abi: str, offsets: list[int], consumer: str) -> _Request:
        """Checks the offsets (EINVAL beyond the chip, EBUSY if held) and opens the request."""
        for off in offsets:
            if off >= self.num_lines:
                raise _os_error(errno.EINVAL, f"line {off} is beyond the chip's {self.num_lines} lines")
        if len(set(offsets)) != len(offsets):
            raise _os_error(errno.EBUSY, "a line is requested twice")
        self._reap()
        lines = [self.line(off) for off in offsets]
        for line in lines:
            held = self._request_of(line)
            if held is not None:
                raise _os_error(errno.EBUSY, f"line {line.offset} is held by '{held.consumer}'")
        req = _Request(abi, lines, consumer)
        req.key = PROXY.register(req.rfd, self)
        self._requests[req.key] = req
        for line in lines:
            line._request = req  # type: ignore[attr-defined]
            line.consumer = consumer
        return req

    # --- ioctl ------------------------------------------------------------------------

    def ioctl(self, fd: int, request: int, arg: Any) -> Any:
        """Answers one ioctl on the chip's node or on a request's descriptor.

        Raises:
            OSError: as the kernel would (EINVAL, EBUSY, EPERM, ENOTTY, EFAULT), or an
                injected error.
        """
        if isinstance(arg, int):
            raise _os_error(errno.EFAULT)
        immutable = isinstance(arg, bytes)
        buf = bytearray(arg) if immutable else arg
        changes: list[tuple[SimLine, bool]] = []
        with self._lock:
            if self._errors:
                raise self._errors.pop(0)
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            req = self._requests.get(key)
            if req is not None:
                handler = _LINE_OPS.get(request)
            elif key == self._node_key and not self._closed:
                handler = _CHIP_OPS.get(request)
            else:
                raise _os_error(errno.EBADF)
            if handler is None:
                raise _os_error(errno.ENOTTY)
            struct_type, method = handler
            if len(memoryview(buf).cast("B")) < ctypes.sizeof(struct_type):
                raise _os_error(errno.EFAULT)
            data = struct_type.from_buffer(buf)
            method(self, req, data, changes)
        for line, level in changes:
            line._notify(level)
        return bytes(buf) if immutable else 0

    def _drive(self, line: SimLine, logical: bool, changes: list[tuple[SimLine, bool]]) -> None:
        level = logical != line.active_low
        if level != line._level:
            line._record(level)
            changes.append((line, level))

    # chip ioctls

    def _chipinfo(self, req: Any, info: _ChipInfo, changes: list) -> None:
        info.name = self.name.encode()[:31]
        info.label = self.label.encode()[:31]
        info.lines = self.num_lines

    def _lineinfo_v2(self, req: Any, info: _LineInfo, changes: list) -> None:
        off = info.offset
        if off >= self.num_lines:
            raise _os_error(errno.EINVAL)
        self._reap()
        line = self.line(off)
        held = self._request_of(line) is not None
        ctypes.memset(ctypes.addressof(info), 0, ctypes.sizeof(info))
        info.offset = off
        info.name = f"GPIO{off}".encode()
        flags = _F_OUTPUT if line.direction == "out" else _F_INPUT
        if held:
            flags |= _F_USED
            info.consumer = (line.consumer or "").encode()[:31]
            flags |= _F_ACTIVE_LOW if line.active_low else 0
            flags |= {"rising": _F_EDGE_RISING, "falling": _F_EDGE_FALLING}.get(line.edge, 0)
            flags |= (_F_EDGE_RISING | _F_EDGE_FALLING) if line.edge == "both" else 0
            flags |= {"pull_up": _F_PULL_UP, "pull_down": _F_PULL_DOWN, "disable": _F_BIAS_DISABLED}.get(line.bias, 0)
            flags |= {"open_drain": _F_OPEN_DRAIN, "open_source": _F_OPEN_SOURCE}.get(line.drive, 0)
        info.flags = flags

    def _lineinfo_v1(self, req: Any, info: _V1LineInfo, changes: list) -> None:
        off = info.line_offset
        if off >= self.num_lines:
            raise _os_error(errno.EINVAL)
        self._reap()
        line = self.line(off)
        held = self._request_of(line) is not None
        ctypes.memset(ctypes.addressof(info), 0, ctypes.sizeof(info))
        info.line_offset = off
        info.name = f"GPIO{off}".encode()
        flags = _I_IS_OUT if line.direction == "out" else 0
        if held:
            flags |= _I_KERNEL | (_H_ACTIVE_LOW if line.active_low else 0)
            flags |= {"open_drain": _H_OPEN_DRAIN, "open_source": _H_OPEN_SOURCE}.get(line.drive, 0)
            flags |= {"pull_up": _H_PULL_UP, "pull_down": _H_PULL_DOWN, "disable": _H_BIAS_DISABLE}.get(line.bias, 0)
            info.consumer = (line.consumer or "").encode()[:31]
        info.flags = flags

    @staticmethod
    def _v2_flags_ok(flags: int) -> bool:
        """gpio_v2_line_flags_validate: the combinations the kernel refuses with EINVAL."""
        edges = flags & (_F_EDGE_RISING | _F_EDGE_FALLING)
        biases = flags & (_F_PULL_UP | _F_PULL_DOWN | _F_BIAS_DISABLED)
        return not (
            flags & ~_F_VALID
            or (flags & _F_CLOCK_REALTIME and flags & _F_CLOCK_HTE)
            or (flags & _F_INPUT and flags & _F_OUTPUT)
            or (edges and not flags & _F_INPUT)
            or (flags & _F_OPEN_DRAIN and flags & _F_OPEN_SOURCE)
            or (flags & (_F_OPEN_DRAIN | _F_OPEN_SOURCE) and not flags & _F_OUTPUT)
            or (biases and biases & (biases - 1))
            or (biases and not flags & (_F_INPUT | _F_OUTPUT))
        )

    def _v2_line_config(self, config: _Config, n: int) -> list[tuple[int, int | None]]:
        """Per line: (flags, output value or None) from a gpio_v2_line_config."""
        if config.num_attrs > _ATTRS_MAX or any(config.padding):
            raise _os_error(errno.EINVAL)
        flags = [int(config.flags)] * n
        values: list[int | None] = [None] * n
        for i in range(config.num_attrs):
            ca = config.attrs[i]
            for j in range(n):
                if not ca.mask >> j & 1:
                    continue
                if ca.attr.id == _ATTR_FLAGS:
                    flags[j] = int(ca.attr.data.flags)
                elif ca.attr.id == _ATTR_OUTPUT_VALUES:
                    values[j] = int(ca.attr.data.values >> j & 1)
                elif ca.attr.id != _ATTR_DEBOUNCE:
                    raise _os_error(errno.EINVAL)
        for f in flags:
            if not self._v2_flags_ok(f):
                raise _os_error(errno.EINVAL, "contradictory line flags")
        return [(f, values[j]) for j, f in enumerate(flags)]

    def _apply_v2(self, line: SimLine, flags: int, value: int | None, changes: list) -> None:
        line.active_low = bool(flags & _F_ACTIVE_LOW)
        line._realtime = bool(flags & _F_CLOCK_REALTIME)  # type: ignore[attr-defined]
        rising, falling = flags & _F_EDGE_RISING, flags & _F_EDGE_FALLING
        line.edge = "both" if rising and falling else "rising" if rising else "falling" if falling else "none"
        line.bias = (
            "pull_up" if flags & _F_PULL_UP else "pull_down" if flags & _F_PULL_DOWN
            else "disable" if flags & _F_BIAS_DISABLED else "default"
        )
        line.drive = "open_drain" if flags & _F_OPEN_DRAIN else "open_source" if flags & _F_OPEN_SOURCE else "default"
        if flags & _F_OUTPUT:
            line.direction = "out"
            self._drive(line, bool(value), changes)
        elif flags & _F_INPUT:
            line.direction = "in"

    def _get_line_v2(self, req: Any, lr: _LineRequest, changes: list) -> None:
        n = lr.num_lines
        if not 1 <= n <= _LINES_MAX or any(lr.padding):
            raise _os_error(errno.EINVAL)
        config = self._v2_line_config(lr.config, n)
        offsets = list(lr.offsets[:n])
        new = self._new_request("v2", offsets, lr.consumer.decode(errors="replace"))
        for line, (flags, value) in zip(new.lines, config):
            self._apply_v2(line, flags, value, changes)
        lr.fd = new.rfd

    def _get_linehandle_v1(self, req: Any, hr: _V1HandleRequest, changes: list) -> None:
        n, flags = hr.lines, hr.flags
        if not 1 <= n <= _LINES_MAX or flags & ~0xFF:
            raise _os_error(errno.EINVAL)
        drive = flags & (_H_OPEN_DRAIN | _H_OPEN_SOURCE)
        if (flags & _H_INPUT and flags & _H_OUTPUT) or (drive and not flags & _H_OUTPUT):
            raise _os_error(errno.EINVAL)
        new = self._new_request("v1-handle", list(hr.lineoffsets[:n]), hr.consumer_label.decode(errors="replace"))
        v2 = self._v1_to_v2(flags)
        for j, line in enumerate(new.lines):
            self._apply_v2(line, v2, hr.default_values[j], changes)
        hr.fd = new.rfd

    def _get_lineevent_v1(self, req: Any, er: _V1EventRequest, changes: list) -> None:
        if er.handleflags & _H_OUTPUT or er.eventflags & ~(_E_RISING | _E_FALLING):
            raise _os_error(errno.EINVAL)
        new = self._new_request("v1-event", [er.lineoffset], er.consumer_label.decode(errors="replace"))
        v2 = self._v1_to_v2(er.handleflags | _H_INPUT)
        v2 |= _F_EDGE_RISING if er.eventflags & _E_RISING else 0
        v2 |= _F_EDGE_FALLING if er.eventflags & _E_FALLING else 0
        self._apply_v2(new.lines[0], v2, None, changes)
        er.fd = new.rfd

    @staticmethod
    def _v1_to_v2(flags: int) -> int:
        table = (
            (_H_INPUT, _F_INPUT), (_H_OUTPUT, _F_OUTPUT), (_H_ACTIVE_LOW, _F_ACTIVE_LOW),
            (_H_OPEN_DRAIN, _F_OPEN_DRAIN), (_H_OPEN_SOURCE, _F_OPEN_SOURCE), (_H_PULL_UP, _F_PULL_UP),
            (_H_PULL_DOWN, _F_PULL_DOWN), (_H_BIAS_DISABLE, _F_BIAS_DISABLED),
        )
        return sum(v2 for v1, v2 in table if flags & v1)

    # line ioctls

    def _get_values_v2(self, req: _Request, lv: _LineValues, changes: list) -> None:
        if req.abi != "v2":
            raise _os_error(errno.ENOTTY)
        bits = 0
        for j, line in enumerate(req.lines):
            if lv.mask >> j & 1 and line._level != line.active_low:
                bits |= 1 << j
        lv.bits = bits

    def _set_values_v2(self, req: _Request, lv: _LineValues, changes: list) -> None:
        if req.abi != "v2":
            raise _os_error(errno.ENOTTY)
        picked = [(line, bool(lv.bits >> j & 1)) for j, line in enumerate(req.lines) if lv.mask >> j & 1]
        if not picked:
            raise _os_error(errno.EINVAL)
        if any(line.direction != "out" for line, _ in picked):
            raise _os_error(errno.EPERM, "the line is an input")
        for line, logical in picked:
            self._drive(line, logical, changes)

    def _set_config_v2(self, req: _Request, config: _Config, changes: list) -> None:
        if req.abi != "v2":
            raise _os_error(errno.ENOTTY)
        for line, (flags, value) in zip(req.lines, self._v2_line_config(config, len(req.lines))):
            if flags & _F_OUTPUT and value is None:
                value = int(line._level != bool(flags & _F_ACTIVE_LOW))  # keeps the level
            self._apply_v2(line, flags, value, changes)

    def _get_values_v1(self, req: _Request, hd: _V1HandleData, changes: list) -> None:
        if req.abi == "v2":
            raise _os_error(errno.ENOTTY)
        for j, line in enumerate(req.lines):
            hd.values[j] = int(line._level != line.active_low)

    def _set_values_v1(self, req: _Request, hd: _V1HandleData, changes: list) -> None:
        if req.abi != "v1-handle":
            raise _os_error(errno.ENOTTY if req.abi == "v2" else errno.EPERM)
        if any(line.direction != "out" for line in req.lines):
            raise _os_error(errno.EPERM, "the line is an input")
        for j, line in enumerate(req.lines):
            self._drive(line, bool(hd.values[j]), changes)


_CHIP_OPS: dict[int, tuple[type, Callable[..., None]]] = {
    GPIO_GET_CHIPINFO_IOCTL: (_ChipInfo, SimGpioChip._chipinfo),
    GPIO_V2_GET_LINEINFO_IOCTL: (_LineInfo, SimGpioChip._lineinfo_v2),
    GPIO_V2_GET_LINE_IOCTL: (_LineRequest, SimGpioChip._get_line_v2),
    GPIO_GET_LINEINFO_IOCTL: (_V1LineInfo, SimGpioChip._lineinfo_v1),
    GPIO_GET_LINEHANDLE_IOCTL: (_V1HandleRequest, SimGpioChip._get_linehandle_v1),
    GPIO_GET_LINEEVENT_IOCTL: (_V1EventRequest, SimGpioChip._get_lineevent_v1),
}
# ioctls on the chip's node: request -> (argument structure, handler)

_LINE_OPS: dict[int, tuple[type, Callable[..., None]]] = {
    GPIO_V2_LINE_GET_VALUES_IOCTL: (_LineValues, SimGpioChip._get_values_v2),
    GPIO_V2_LINE_SET_VALUES_IOCTL: (_LineValues, SimGpioChip._set_values_v2),
    GPIO_V2_LINE_SET_CONFIG_IOCTL: (_Config, SimGpioChip._set_config_v2),
    GPIOHANDLE_GET_LINE_VALUES_IOCTL: (_V1HandleData, SimGpioChip._get_values_v1),
    GPIOHANDLE_SET_LINE_VALUES_IOCTL: (_V1HandleData, SimGpioChip._set_values_v1),
}
# ioctls on a request's descriptor


# --- sysfs ---------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    with open(path, "rb") as f:
        return f.read(64).decode(errors="replace").strip()


class _SysfsPort:
    """The kernel side of one exported sysfs line: reads and writes its plain files."""

    def __init__(self, directory: Path, active_low: bool) -> None:
        self.dir = directory
        self._al = active_low

    def _write_value(self, logical: bool) -> None:
        fd = os.open(self.dir / "value", os.O_WRONLY)
        try:
            os.pwrite(fd, b"1\n" if logical else b"0\n", 0)  # in place: the driver keeps it open
        finally:
            os.close(fd)

    def refresh(self, line: SimLine) -> bool | None:
        try:
            direction = _read_text(self.dir / "direction")
            al = _read_text(self.dir / "active_low") == "1"
            value = _read_text(self.dir / "value")
            edge = _read_text(self.dir / "edge") if (self.dir / "edge").exists() else "none"
        except OSError:
            return None  # unexported, or the environment is closing
        if value not in ("0", "1") or direction not in ("in", "out", "high", "low"):
            return None  # caught in the middle of a write
        line.direction = "in" if direction == "in" else "out"
        line.active_low, line.edge = al, edge
        if line.direction == "in" and al != self._al:
            # active_low changed on an input: the level stays, the logical value flips
            self._write_value(line._level != al)
            level = line._level
        else:
            level = (value == "1") != al
        self._al = al
        if level != line._level:
            line._record(level)
            return level
        return None

    def driven(self, line: SimLine) -> bool:
        return line.direction == "out"

    def requested(self, line: SimLine) -> bool:
        return self.dir.is_dir()

    def deliver(self, line: SimLine, level: bool) -> None:
        self._write_value(level != self._al)


class _SysfsTree:
    """One simulated /sys/class/gpio: its lines and the watcher thread re-reading them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for name in ("export", "unexport"):
            (root / name).touch()
        self.lines: dict[int, SimLine] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"lgembed-sim-gpio-sysfs {root}", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            for line in list(self.lines.values()):
                try:
                    line.value  # noqa: B018 - refreshes from the files and runs on_change
                except Exception as e:  # noqa: BLE001 - a failing callback must not stop the watcher
                    threading.excepthook(threading.ExceptHookArgs((type(e), e, e.__traceback__, self._thread)))

    def close(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)


# --- attach --------------------------------------------------------------------------

_BUILTINS = {"line": "lgembed.edge.sim.gpio:SimLine"}


def _build_line(name: str, model: str | None, opts: Mapping[str, Any], source: str) -> SimLine:
    """The line's simulation object: `model`'s class (SimLine when None) built with `opts`."""
    key = f"adapters.{name}"
    cls = SimLine if model is None else load_model_class(model, _BUILTINS, "gpio", f"{key}.simulator", source)
    return build_model(cls, (), opts, label=cls.__name__, kind="gpio", prefix=f"{key}.simulation", source=source)


def _chip_option(options: dict[str, Any], name: str, source: str) -> int | None:
    if "lines" not in options:
        return None
    v = options.pop("lines")
    problem = int_range(1, 4096)(v) if isinstance(v, int) and not isinstance(v, bool) else "an integer"
    if problem is not None:
        key = f"adapters.{name}.simulation.lines"
        msg = f"{source}: invalid value for '{key}': {v!r}; allowed: {problem}"
        raise DeviceFileError(msg, source, key)
    return v


def attach(
    env: SimEnv,
    name: str,
    driver: str,
    settings: dict[str, Any],
    model: str | None,
    options: Mapping[str, Any],
    source: str = "<dict>",
) -> tuple[dict[str, Any], SimLine]:
    """Simulates GPIO adapter `name`: a line on a simulated chip ("cdev") or sysfs tree.

    Args:
        env: the simulation environment.
        name: the adapter's name.
        driver: "cdev" or "sysfs".
        settings: the adapter's validated settings.
        model: the `simulator` key: None or "line" for `SimLine`, or "module:Class".
        options: the `[adapters.NAME.simulation]` table (`value`; `lines` for cdev).
        source: the device file, for messages.

    Returns:
        The settings re-pointed at the simulated device (`path` or `sysfs_root`), and the
        line's `SimLine`.

    Raises:
        DeviceFileError: an unknown driver, simulator or option, or a bad option value.
        DriverUnavailableError: "cdev" without python-periphery.
    """
    opts = dict(options)
    if driver == "cdev":
        return _attach_cdev(env, name, settings, model, opts, source)
    if driver == "sysfs":
        return _attach_sysfs(env, name, settings, model, opts, source)
    key = f"adapters.{name}.driver"
    msg = f"{source}: invalid value for '{key}': {driver!r}; the gpio simulator knows 'cdev' and 'sysfs'"
    raise DeviceFileError(msg, source, key)


def _shared_line(existing: SimLine | None, name: str, model: str | None, opts: dict, source: str) -> SimLine | None:
    """The line another adapter already simulates at the same place, if any."""
    if existing is None or getattr(existing, "_from_attach", False) is False:
        return None
    if model is not None or opts:
        key = f"adapters.{name}.simulation"
        msg = (
            f"{source}: invalid '{key}': line {existing.offset} is already simulated for another adapter; "
            "give its simulator and options on one adapter only"
        )
        raise DeviceFileError(msg, source, key)
    return existing


def _attach_cdev(
    env: SimEnv, name: str, settings: dict[str, Any], model: str | None, opts: dict, source: str
) -> tuple[dict[str, Any], SimLine]:
    from lgembed.edge._base import require_library

    require_library("periphery", "gpio", name)
    import periphery.gpio_cdev2

    install(periphery.gpio_cdev2)
    try:
        import periphery.gpio_cdev1
    except ImportError:  # pragma: no cover - every periphery 2.x has it
        pass
    else:
        install(periphery.gpio_cdev1)
    lines = _chip_option(opts, name, source)
    path = settings["path"]
    chip: SimGpioChip | None = env.shared.get(("gpiochip", path))
    if chip is None:
        parts = [p if p not in ("", ".", "..") else "_" for p in Path(path).parts if p != "/"]
        node = env.path(*(parts or ["dev", "gpiochip"]))
        chip = SimGpioChip(node, lines if lines is not None else 54, name=Path(path).name or "gpiochip0")
        env.shared[("gpiochip", path)] = chip
        env.on_close(chip.close)
    elif lines is not None and lines != chip.num_lines:
        key = f"adapters.{name}.simulation.lines"
        msg = (
            f"{source}: invalid value for '{key}': {lines!r}; "
            f"chip {path} is already simulated with {chip.num_lines} lines"
        )
        raise DeviceFileError(msg, source, key)
    offset = settings["line"]
    existing = chip._lines.get(offset) if offset < chip.num_lines else None
    sim = _shared_line(existing, name, model, opts, source)
    if sim is None:
        sim = _build_line(name, model, opts, source)
        sim._from_attach = True
        if offset < chip.num_lines:  # beyond the chip the driver gets EINVAL, as on a board
            chip.attach_line(offset, sim)
        else:
            sim.offset = offset
    return {**settings, "path": str(chip.path)}, sim


def _attach_sysfs(
    env: SimEnv, name: str, settings: dict[str, Any], model: str | None, opts: dict, source: str
) -> tuple[dict[str, Any], SimLine]:
    root = env.path("sys", "class", "gpio")
    tree: _SysfsTree | None = env.shared.get(("gpio-sysfs", str(root)))
    if tree is None:
        tree = _SysfsTree(root)
        env.shared[("gpio-sysfs", str(root))] = tree
        env.on_close(tree.close)
    number = settings["line"]
    sim = _shared_line(tree.lines.get(number), name, model, opts, source)
    if sim is None:
        sim = _build_line(name, model, opts, source)
        sim._from_attach = True
        direction, inverted = settings["direction"], settings["inverted"]
        if direction != "in":
            sim._level = direction == "high"  # the kernel drives "out"/"low" low, "high" high
        gdir = root / f"gpio{number}"
        gdir.mkdir(exist_ok=True)
        files = {
            "direction": "in" if direction == "in" else "out",
            "active_low": "1" if inverted else "0",
            "edge": settings["edge"] if direction == "in" else "none",
            "value": "1" if sim._level != inverted else "0",
        }
        for fname, text in files.items():
            (gdir / fname).write_text(text + "\n")
        sim.offset, sim.direction, sim.active_low, sim.edge = number, files["direction"], inverted, files["edge"]
        sim._port = _SysfsPort(gdir, inverted)
        tree.lines[number] = sim
    return {**settings, "sysfs_root": str(root)}, sim
