"""A CAN bus as an adapter, through python-can.

Why: motor controllers, battery management systems and industrial sensors speak CAN.
python-can gives one `Bus` over SocketCAN on a board and a virtual bus in tests; this
driver adds what a graph tool needs on top: one validated settings table (the device
file is the only configuration: python-can's ~/.canrc and CAN_* variables are ignored),
frames checked before they reach the bus (identifier width, classic and FD lengths, FD
on a bus opened for it), a receive that either returns a frame or raises, separate send
and receive paths, and errors that say which bus failed, why, and what to change.

Settings (python-can's argument names):

    ====================  =====  ===========  ============================================
    name                  type   default      meaning
    ====================  =====  ===========  ============================================
    interface             str    "socketcan"  python-can interface: "socketcan" on a board,
                                              "virtual" for tests, or another backend name
    channel               str    "can0"       the interface's channel (network interface
                                              name for socketcan)
    bitrate               int    (none)       nominal bit rate in bit/s, up to 1000000;
                                              socketcan ignores it (the OS sets it, below)
    fd                    bool   false        open the bus for CAN FD frames
    data_bitrate          int    (none)       CAN FD data-phase bit rate (only with fd)
    receive_own_messages  bool   false        also receive the frames this adapter sends
    can_filters           list   (none)       receive only matching frames: tables
                                              {can_id, can_mask, extended (optional)};
                                              a frame matches when
                                              id & can_mask == can_id & can_mask
    ====================  =====  ===========  ============================================

Permissions on a board: opening a SocketCAN socket needs no special group, but bringing
the interface up (setting its bit rate) needs CAP_NET_ADMIN, so let the OS do it at boot:
a systemd-networkd file `/etc/systemd/network/80-can.network` with `[Match] Name=can0`
and `[CAN] BitRate=500000` (plus `DataBitRate=` and `FDMode=yes` for CAN FD), or
`ip link set can0 up type can bitrate 500000` in a oneshot unit. The controller must be
enabled first (e.g. `dtoverlay=mcp2515-can0,oscillator=16000000,interrupt=25` on a
Raspberry Pi). The kernel needs SocketCAN (CONFIG_CAN, CONFIG_CAN_RAW).

Simulator (`lgembed.edge.sim.can`): python-can's `virtual` interface on a channel of its
own per adapter, with a `SimCanPeer` on the far side that records every frame the driver
sends, can send frames to it, and runs a device model (records only, echo, or your own).
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lgembed.edge._base import Adapter, Setting, check_settings, require_library
from lgembed.edge.errors import (
    ArgumentError,
    DeviceAbsentError,
    DeviceFileError,
    DriverError,
    DriverUnavailableError,
)

if TYPE_CHECKING:
    import can

__all__ = ("FD_LENGTHS", "MAX_EXTENDED_ID", "MAX_STANDARD_ID", "PythonCanBus", "filters_problem")

MAX_STANDARD_ID = 0x7FF
"""The largest 11-bit (standard) identifier."""

MAX_EXTENDED_ID = 0x1FFFFFFF
"""The largest 29-bit (extended) identifier."""

FD_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)
"""Data lengths a CAN FD frame can carry (its DLC codes 0 to 15)."""

_RECV_SLICE = 0.2
# seconds recv() waits per call into python-can, so close() from another thread ends a
# long wait (python-can's virtual bus keeps waiting on its queue after shutdown)

_FILTER_KEYS = ("can_id", "can_mask", "extended")


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def filters_problem(filters: Any) -> str | None:
    """What is wrong with a `can_filters` list, or None when it is fine.

    Each entry is a table with `can_id` and `can_mask` (integers up to 0x1FFFFFFF) and an
    optional `extended` (true or false; when false, `can_id` must fit in 11 bits).
    """
    shape = "a list of tables {can_id, can_mask, extended (optional)}"
    if not isinstance(filters, (list, tuple)):
        return shape
    for i, f in enumerate(filters):
        where = f"{shape}; entry {i}"
        if not isinstance(f, Mapping):
            return f"{where} is {f!r}, not a table"
        unknown = [k for k in f if k not in _FILTER_KEYS]
        if unknown:
            return f"{where} has unknown key {unknown[0]!r} (keys: can_id, can_mask, extended)"
        for k in ("can_id", "can_mask"):
            if k not in f:
                return f"{where} lacks {k!r}"
            if not _int_in(f[k], 0, MAX_EXTENDED_ID):
                return f"{where}: {k} {f[k]!r} is not an integer from 0 to 0x1FFFFFFF"
        ext = f.get("extended")
        if "extended" in f and not isinstance(ext, bool):
            return f"{where}: extended {ext!r} is not true or false"
        if ext is False and f["can_id"] > MAX_STANDARD_ID:
            return f"{where}: can_id 0x{f['can_id']:X} is above 0x7FF for a standard (extended = false) filter"
    return None


def _bitrate(hi: int) -> Any:
    def check(v: Any) -> str | None:
        return None if 1000 <= v <= hi else f"bits per second, an integer from 1000 to {hi}"

    return check


def _non_empty(v: Any) -> str | None:
    return None if v else "a non-empty string"


def _timeout_arg(action: str, timeout: Any, allow_none: bool) -> None:
    if timeout is None and allow_none:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
        none = ", or None to wait until a frame comes" if allow_none else ""
        msg = f"{action}: 'timeout' must be a number of seconds, 0 or more{none} (got {timeout!r})"
        raise ArgumentError(msg)


class PythonCanBus(Adapter):
    """A CAN bus opened with python-can. Thread-safe: one sender and one receiver at a time.

    Args:
        name: the adapter's name in the device file.
        **settings: the settings in the module docstring.

    Raises:
        DeviceFileError: an unknown or invalid setting, or an interface python-can does
            not know.
        DriverUnavailableError: python-can (or the interface's own library) is not installed.
        DeviceAbsentError: the channel does not exist (interface not created or enabled).
        DevicePermissionError: the process may not open the channel.
        DriverError: the bus could not be opened (e.g. a kernel without SocketCAN).
    """

    kind = "can"
    driver = "python-can"
    SETTINGS = (
        Setting("interface", str, "socketcan", check=_non_empty, doc="python-can interface: socketcan, virtual, ..."),
        Setting("channel", str, "can0", check=_non_empty, doc="the interface's channel, e.g. can0"),
        Setting("bitrate", int, None, check=_bitrate(1_000_000), doc="nominal bit rate (socketcan: set by the OS)"),
        Setting("fd", bool, False, doc="open the bus for CAN FD frames"),
        Setting("data_bitrate", int, None, check=_bitrate(16_000_000), doc="CAN FD data-phase bit rate"),
        Setting("receive_own_messages", bool, False, doc="also receive the frames this adapter sends"),
        Setting("can_filters", list, None, check=filters_problem, doc="receive only frames matching one of these"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        # None stands for an absent optional setting (what check_settings fills in)
        settings = {k: v for k, v in settings.items() if not (v is None and k in _OPTIONAL)}
        settings = check_settings(type(self), settings, "", f"adapters.{name}")
        if settings["data_bitrate"] is not None and not settings["fd"]:
            key = f"adapters.{name}.data_bitrate"
            msg = f"invalid value for '{key}': {settings['data_bitrate']!r}; allowed: only with fd = true (a CAN FD bus)"
            raise DeviceFileError(msg, "", key)
        if settings["can_filters"] is not None:
            settings["can_filters"] = [dict(f) for f in settings["can_filters"]]
        super().__init__(name, settings, device=f"{settings['interface']}:{settings['channel']}")
        self._send_lock = threading.Lock()
        self._recv_lock = threading.Lock()
        # Strategy: as python-can's ThreadSafeBus, one lock per direction, so a watcher
        # waiting in recv() never holds up a tool's send(); self._lock guards open/close.
        can = require_library("can", self.kind, name)
        self._can = can
        if settings["interface"] not in can.VALID_INTERFACES:
            key = f"adapters.{name}.interface"
            allowed = ", ".join(sorted(can.VALID_INTERFACES))
            msg = f"invalid value for '{key}': {settings['interface']!r}; allowed: a python-can interface ({allowed})"
            raise DeviceFileError(msg, "", key)
        kwargs: dict[str, Any] = {
            "interface": settings["interface"],
            "channel": settings["channel"],
            "fd": settings["fd"],
            "receive_own_messages": settings["receive_own_messages"],
            "can_filters": settings["can_filters"],
            "ignore_config": True,  # the device file is the configuration, not ~/.canrc or CAN_*
        }
        for k in ("bitrate", "data_bitrate"):
            if settings[k] is not None:
                kwargs[k] = settings[k]
        if settings["interface"] == "virtual" and settings["fd"]:
            kwargs["protocol"] = can.CanProtocol.CAN_FD  # the virtual bus reports what it is told
        action = "Opening CAN bus"
        try:
            self._bus = can.Bus(**kwargs)
        except can.CanInterfaceNotImplementedError as e:
            msg = (
                f"{action} on adapter '{name}' ({self.device}): python-can cannot load the "
                f"'{settings['interface']}' interface ({e}). Fix: install that interface's driver "
                "library, or use interface 'socketcan' on Linux ('virtual' for tests)."
            )
            raise DriverUnavailableError(msg) from e
        except (can.CanError, OSError, ValueError, TypeError) as e:
            raise self._can_error(action, e) from e

    # --- errors -----------------------------------------------------------------------

    def _errno_of(self, exc: BaseException) -> int | None:
        code = getattr(exc, "errno", None)
        if isinstance(code, int):
            return code
        cause = exc.__cause__ or exc.__context__
        code = getattr(cause, "errno", None)
        if isinstance(code, int):
            return code
        code = getattr(exc, "error_code", None)
        if isinstance(code, int) and self.settings["interface"] == "socketcan":
            return code  # python-can's socketcan backend puts the errno there
        return None

    def _can_error(self, action: str, exc: BaseException) -> DriverError:
        """The DriverError for a python-can or OS error, with the fix for CAN."""
        code = self._errno_of(exc)
        channel = self.settings["channel"]
        rate = self.settings["bitrate"] or 500000
        fix = None
        if code is None and "Transmit buffer full" in str(exc):
            code = errno.ENOBUFS  # socketcan's send() timed out waiting for room
        if code == errno.EAFNOSUPPORT:
            cause = "the kernel lacks SocketCAN (CONFIG_CAN): no AF_CAN sockets"
            fix = (
                "use a kernel with SocketCAN (CONFIG_CAN, CONFIG_CAN_RAW and the controller's driver), "
                "or interface 'virtual' for tests"
            )
        elif code in (errno.ENODEV, errno.ENXIO):
            cause = f"no network interface named '{channel}'"
            fix = (
                "enable the controller (e.g. dtoverlay=mcp2515-can0,... on a Raspberry Pi; `ip link` lists interfaces) "
                f"and bring it up: ip link set {channel} up type can bitrate {rate}"
            )
        elif code == errno.ENETDOWN:
            cause = f"the interface '{channel}' is down"
            fix = (
                "bring it up at boot (systemd-networkd [CAN] BitRate=) "
                f"or with: ip link set {channel} up type can bitrate {rate}"
            )
        elif code == errno.ENOBUFS:
            cause = "the transmit queue is full: no other node acknowledges the frames"
            fix = (
                "check the wiring, the 120 ohm termination and that another node is powered at the same bit rate "
                f"(`ip -details link show {channel}` shows BUS-OFF); "
                f"raise the queue with: ip link set {channel} txqueuelen 1000"
            )
        if fix is not None:
            cls = DeviceAbsentError if code in (errno.ENODEV, errno.ENXIO) else DriverError
            msg = f"{action} on adapter '{self.name}' ({self.device}): {cause}. Fix: {fix}."
            return cls(msg, code)
        if isinstance(exc, TimeoutError):
            return self._fail(action, TimeoutError(errno.ETIMEDOUT, str(exc) or "timed out"))
        if code is not None:
            cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else (str(exc) or os.strerror(code))
            return self._fail(action, OSError(code, cause))
        return self._fail(action, exc)

    # --- sending ----------------------------------------------------------------------

    def _frame(
        self,
        arbitration_id: Any,
        data: Any,
        is_extended_id: bool | None,
        is_fd: bool,
        bitrate_switch: bool,
        is_remote_frame: bool,
    ) -> tuple[int, bytes, bool]:
        """Checks a frame's arguments (see send). Returns (id, data, is_extended_id)."""
        what = f"Sending a CAN frame on adapter '{self.name}' ({self.device})"
        if not _int_in(arbitration_id, 0, MAX_EXTENDED_ID):
            msg = (
                f"{what}: 'arbitration_id' must be an integer from 0 to 0x7FF (11-bit) or 0x1FFFFFFF (29-bit) "
                f"(got {arbitration_id!r})"
            )
            raise ArgumentError(msg)
        if is_extended_id is None:
            is_extended_id = arbitration_id > MAX_STANDARD_ID
        elif not isinstance(is_extended_id, bool):
            msg = f"{what}: 'is_extended_id' must be true, false or None for automatic (got {is_extended_id!r})"
            raise ArgumentError(msg)
        elif not is_extended_id and arbitration_id > MAX_STANDARD_ID:
            msg = (
                f"{what}: 'arbitration_id' 0x{arbitration_id:X} does not fit in 11 bits (0 to 0x7FF); "
                "pass is_extended_id=True for a 29-bit identifier"
            )
            raise ArgumentError(msg)
        for flag, v in (("is_fd", is_fd), ("bitrate_switch", bitrate_switch), ("is_remote_frame", is_remote_frame)):
            if not isinstance(v, bool):
                msg = f"{what}: '{flag}' must be true or false (got {v!r})"
                raise ArgumentError(msg)
        if isinstance(data, str):
            msg = f"{what}: 'data' must be bytes or a list of integers 0..255, not str (got {data[:40]!r}); encode it first"
            raise ArgumentError(msg)
        if isinstance(data, (bytes, bytearray, memoryview)) or (
            isinstance(data, (list, tuple)) and all(_int_in(b, 0, 255) for b in data)
        ):
            payload = bytes(data)
        else:
            msg = f"{what}: 'data' must be bytes or a list of integers 0..255 (got {data!r})"
            raise ArgumentError(msg)
        n = len(payload)
        if is_fd:
            if not self.settings["fd"]:
                msg = (
                    f"{what}: a CAN FD frame (is_fd=True) needs a bus "
                    "opened for CAN FD; set fd = true in the adapter's settings"
                )
                raise ArgumentError(msg)
            if is_remote_frame:
                msg = f"{what}: CAN FD has no remote frames; pass is_fd=False for a remote frame"
                raise ArgumentError(msg)
            if n not in FD_LENGTHS:
                up = next(k for k in FD_LENGTHS if k >= n) if n <= 64 else None
                pad = f"; pad it to {up} bytes" if up is not None else ""
                msg = f"{what}: a CAN FD frame carries 0 to 8, 12, 16, 20, 24, 32, 48 or 64 bytes (got {n}){pad}"
                raise ArgumentError(msg)
        else:
            if bitrate_switch:
                msg = f"{what}: 'bitrate_switch' applies only to CAN FD frames (pass is_fd=True)"
                raise ArgumentError(msg)
            if n > 8:
                fd = " or send a CAN FD frame (is_fd=True)" if self.settings["fd"] else ""
                msg = f"{what}: a classic CAN frame carries at most 8 bytes (got {n}); split the data{fd}"
                raise ArgumentError(msg)
            if is_remote_frame and n:
                msg = f"{what}: a remote frame carries no data (got {n} bytes); pass data=b''"
                raise ArgumentError(msg)
        return arbitration_id, payload, is_extended_id

    def send(
        self,
        arbitration_id: int,
        data: bytes | bytearray | list[int] = b"",
        *,
        is_extended_id: bool | None = None,
        is_fd: bool = False,
        bitrate_switch: bool = False,
        is_remote_frame: bool = False,
        timeout: float = 1.0,
    ) -> None:
        """Sends one frame.

        Args:
            arbitration_id: the identifier: 0 to 0x7FF (standard) or 0x1FFFFFFF (extended).
            data: the payload, as bytes or a list of integers 0..255: up to 8 bytes on
                classic CAN; 0 to 8, 12, 16, 20, 24, 32, 48 or 64 on CAN FD.
            is_extended_id: a 29-bit identifier; None picks it from the value (True above 0x7FF).
            is_fd: a CAN FD frame (the bus must have been opened with fd = true).
            bitrate_switch: send the FD data phase at `data_bitrate`.
            is_remote_frame: a remote (RTR) frame, which carries no data.
            timeout: seconds to wait for room in the transmit queue.

        Raises:
            ArgumentError: an identifier or payload the frame type cannot carry, or FD on a
                bus not opened for it.
            AdapterClosedError: the adapter is closed.
            DriverError: the bus refused the frame (interface down, transmit queue full, ...).
        """
        ident, payload, ext = self._frame(arbitration_id, data, is_extended_id, is_fd, bitrate_switch, is_remote_frame)
        _timeout_arg(f"Sending a CAN frame on adapter '{self.name}' ({self.device})", timeout, allow_none=False)
        action = f"Sending CAN frame 0x{ident:X}"
        self._check_open(action)
        msg = self._can.Message(
            arbitration_id=ident,
            data=payload,
            is_extended_id=ext,
            is_fd=is_fd,
            bitrate_switch=bitrate_switch,
            is_remote_frame=is_remote_frame,
            check=True,
        )
        with self._send_lock:
            self._check_open(action)
            try:
                self._bus.send(msg, timeout=timeout)
            except (self._can.CanError, OSError) as e:
                self._check_open(action)
                raise self._can_error(action, e) from e

    # --- receiving --------------------------------------------------------------------

    def recv(self, timeout: float | None = None) -> can.Message:
        """Waits for the next frame that passes the filters.

        Args:
            timeout: seconds to wait; None waits until a frame comes (or the adapter closes).

        Returns:
            The frame, a `can.Message` (arbitration_id, data, is_extended_id, is_fd,
            is_remote_frame, is_error_frame, timestamp, ...).

        Raises:
            ArgumentError: `timeout` is negative.
            DriverTimeoutError: no frame arrived in time.
            AdapterClosedError: the adapter is closed (also while waiting).
            DriverError: the bus failed (e.g. the interface went down).
        """
        action = "Receiving a CAN frame"
        _timeout_arg(f"{action} on adapter '{self.name}' ({self.device})", timeout, allow_none=True)
        self._check_open(action)
        with self._recv_lock:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                self._check_open(action)
                left = _RECV_SLICE if deadline is None else min(_RECV_SLICE, max(0.0, deadline - time.monotonic()))
                try:
                    msg = self._bus.recv(left)
                except (self._can.CanError, OSError) as e:
                    self._check_open(action)
                    raise self._can_error(action, e) from e
                if msg is not None:
                    return msg
                if deadline is not None and time.monotonic() >= deadline:
                    cause = f"no frame arrived within {timeout} s"
                    if self.settings["can_filters"]:
                        cause += f" (filters: {_show_filters(self.settings['can_filters'])})"
                    raise self._fail(action, TimeoutError(errno.ETIMEDOUT, cause))

    def set_filters(self, filters: Iterable[Mapping[str, Any]] | None) -> None:
        """Receives only frames that match one of `filters` from now on (None: every frame).

        Args:
            filters: tables {"can_id", "can_mask", "extended" (optional)}: a frame matches
                when id & can_mask == can_id & can_mask (and its id width equals
                `extended`, when given).

        Raises:
            ArgumentError: a malformed filter (the message names the entry).
            AdapterClosedError: the adapter is closed.
            DriverError: the interface refused the filters.
        """
        action = "Setting the CAN receive filters"
        flist = None if filters is None else list(filters)
        if flist is not None:
            problem = filters_problem(flist)
            if problem is not None:
                msg = f"{action} on adapter '{self.name}' ({self.device}): 'filters' must be {problem}"
                raise ArgumentError(msg)
            flist = [dict(f) for f in flist] or None
        self._check_open(action)
        with self._lock, self._recv_lock, self._send_lock:
            self._check_open(action)
            try:
                self._bus.set_filters(flist)
            except (self._can.CanError, OSError) as e:
                raise self._can_error(action, e) from e
            self.settings["can_filters"] = flist

    # --- state ------------------------------------------------------------------------

    @property
    def state(self) -> str:
        """The bus state python-can reports: "active", "passive" or "error" ("closed"
        once closed). python-can 4.6's socketcan backend always says "active"; see
        describe()["link"] for the interface's operational state."""
        if self._closed:
            return "closed"
        try:
            return self._bus.state.name.lower()
        except (self._can.CanError, OSError, NotImplementedError):
            return "unknown"

    def describe(self) -> dict[str, Any]:
        """The base description plus `state`, `protocol` ("CAN_20", "CAN_FD", ...) and, on
        socketcan, `link` (the interface's operstate: "up", "down", ...)."""
        d = super().describe()
        d["state"] = self.state
        if not self._closed:
            d["protocol"] = getattr(getattr(self._bus, "protocol", None), "name", "")
        if self.settings["interface"] == "socketcan":
            try:
                with open(f"/sys/class/net/{self.settings['channel']}/operstate") as f:
                    d["link"] = f.read().strip()
            except OSError:
                d["link"] = "absent"
        return d

    # --- closing ----------------------------------------------------------------------

    def _close(self) -> None:
        # a receiver notices within _RECV_SLICE; a send in progress finishes first
        with self._send_lock:
            try:
                self._bus.shutdown()
            except (self._can.CanError, OSError):
                pass  # the bus is gone either way


_OPTIONAL = frozenset(s.name for s in PythonCanBus.SETTINGS if s.default is None)
# bitrate, data_bitrate, can_filters: None means "not set" and is not passed to python-can


def _show_filters(filters: list[dict]) -> str:
    parts = []
    for f in filters:
        ext = {True: ", extended", False: ", standard"}.get(f.get("extended"), "")
        parts.append(f"id 0x{f['can_id']:X} mask 0x{f['can_mask']:X}{ext}")
    return "; ".join(parts)
