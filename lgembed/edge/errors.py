"""The edge layer's one error tree, and the helper that turns an OS error into it.

Why: a failure on a device is diagnosed by someone reading a log line far from the
code. Every message says what was being done, on which adapter and device path, the
cause (busy line, no permission, absent device, timeout, NACK) and the fix (the group
or udev rule that grants access, the overlay that enables a bus), in that order:

    Opening GPIO line 17 on adapter 'heater' (/dev/gpiochip0): Permission denied.
    Fix: add the service user to group 'gpio', or add a udev rule granting it /dev/gpiochip0.

Tree (each class also derives from the builtin a caller would catch):

    EdgeError
     ├─ DeviceFileError(ValueError)        a device file or adapter setting is invalid
     ├─ AdapterNotFoundError(LookupError)  no adapter of that name (or not of that kind)
     ├─ DriverUnavailableError(ImportError) the library a driver needs is not installed
     ├─ ArgumentError(ValueError)          a call's argument is outside what the device takes
     ├─ PolicyViolation                    a hardware call refused by its ToolPolicy
     └─ DriverError(OSError)               the driver failed while talking to the device
         ├─ DevicePermissionError(PermissionError)
         ├─ DeviceAbsentError(FileNotFoundError)
         ├─ DeviceBusyError
         ├─ DriverTimeoutError(TimeoutError)
         ├─ NackError                      an I2C address did not acknowledge
         └─ AdapterClosedError             the adapter was used after close()
"""

from __future__ import annotations

import errno as _errno
import re as _re

__all__ = (
    "AdapterClosedError",
    "AdapterNotFoundError",
    "ArgumentError",
    "DeviceAbsentError",
    "DeviceBusyError",
    "DeviceFileError",
    "DevicePermissionError",
    "DriverError",
    "DriverTimeoutError",
    "DriverUnavailableError",
    "EdgeError",
    "NackError",
    "PolicyViolation",
    "driver_error",
)


class EdgeError(Exception):
    """Base of every error the edge layer raises."""


class DeviceFileError(EdgeError, ValueError):
    """A device file (or the dict given to `load_device`) is invalid.

    Attributes:
        source: the file path, or "<dict>".
        key: the dotted key that is wrong (e.g. "adapters.room.address").
    """

    def __init__(self, message: str, source: str = "<dict>", key: str = "") -> None:
        super().__init__(message)
        self.source = source
        self.key = key


class AdapterNotFoundError(EdgeError, LookupError):
    """`registry.require(name)` found no adapter of that name (or not of that kind)."""


class ArgumentError(EdgeError, ValueError):
    """A call's argument is outside what the device takes (a duty cycle above 1.0, a
    register above 0xFF, 9 bytes in a classic CAN frame)."""


class DriverUnavailableError(EdgeError, ImportError):
    """The library a driver needs is not installed (install the `hardware` extra)."""


class PolicyViolation(EdgeError):
    """A hardware call outside its ToolPolicy. `rule`, `value` and `limit` say which.

    Tools turn it into an error ToolMessage; it never reaches a driver.
    """

    def __init__(self, message: str, rule: str = "", value: object = None, limit: object = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.value = value
        self.limit = limit


class DriverError(EdgeError, OSError):
    """A driver failed while talking to its device. `errno` is the OS's code when there is one."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno  # type: ignore[misc] - OSError's attribute, set after a one-argument init

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class DevicePermissionError(DriverError, PermissionError):
    """The process may not open the device (file mode, group, udev rule)."""


class DeviceAbsentError(DriverError, FileNotFoundError):
    """The device path does not exist (bus not enabled, wrong path, unplugged)."""


class DeviceBusyError(DriverError):
    """The device or line is held by another process or driver."""


class DriverTimeoutError(DriverError, TimeoutError):
    """A read or wait on the device ran out of time."""


class NackError(DriverError):
    """An I2C transfer was not acknowledged (no device at that address, or it refused)."""


class AdapterClosedError(DriverError):
    """The adapter was used after `close()`."""


_GROUP = {"gpio": "gpio", "pwm": "gpio", "adc": "iio", "uart": "dialout", "i2c": "i2c", "can": "netdev"}
# the Debian / Raspberry Pi OS group that usually owns each kind's device nodes

_ABSENT_FIX = {
    "gpio": "check the chip path (gpiodetect lists chips) and the line number",
    "pwm": "enable the PWM overlay (e.g. dtoverlay=pwm-2chan) and check the chip number",
    "adc": "check the IIO device number (ls /sys/bus/iio/devices) and that its driver is loaded",
    "uart": "check the port name (ls /dev/serial/by-id) and that the UART is enabled (enable_uart=1)",
    "i2c": "enable the bus (dtparam=i2c_arm=on, or modprobe i2c-dev) and check the bus number",
    "can": "bring the interface up (ip link set can0 up type can bitrate 500000)",
}


_I2C_NODE = _re.compile(r"/dev/i2c-(\d+)(?: @ 0x[0-9a-fA-F]+)?")
# an i2c-dev node, whose number is the bus number i2cdetect takes; PeripheryI2C's device
# string ("/dev/i2c-1 @ 0x48") counts too, so its messages name the bus without `node`


def _fix_for(kind: str, code: int | None, node: str) -> str:
    if code in (_errno.EACCES, _errno.EPERM):
        group = _GROUP.get(kind, "the device's group")
        return f"add the service user to group '{group}', or add a udev rule granting it {node}"
    if code in (_errno.ENOENT, _errno.ENODEV):
        return _ABSENT_FIX.get(kind, "check the device path")
    if code == _errno.EBUSY:
        if kind == "gpio":
            return "another process or kernel driver holds the line (gpioinfo shows its consumer); release it first"
        return "another process holds the device; stop it or use another device"
    if code in (_errno.ENXIO, _errno.EREMOTEIO, _errno.EIO) and kind == "i2c":
        m = _I2C_NODE.fullmatch(node)
        bus = m.group(1) if m else "BUS"
        return f"check the wiring, the pull-ups and the address (i2cdetect -y {bus} lists what answers)"
    if code == _errno.ETIMEDOUT:
        return "check that the peer is powered and connected, or pass a longer timeout"
    return "check the device and its driver (dmesg shows kernel messages)"


def driver_error(
    action: str, kind: str, adapter: str, device: str, exc: BaseException, *, node: str | None = None
) -> DriverError:
    """The DriverError subclass for `exc`, with the message the module docstring shows.

    Args:
        action: what was being done, e.g. "Opening GPIO line 17".
        kind: the adapter's kind ("gpio", "uart", ...), which picks the fix.
        adapter: the adapter's name in the device file.
        device: the device path or channel, as the message names it.
        exc: the underlying error (an OSError, a library's own error, a timeout).
        node: the device node the fix names, when it is not `device` itself (a GPIO
            chip for "/dev/gpiochip0 line 17"): a permission fix grants access to it,
            and for kind "i2c" a node "/dev/i2c-N" (or "/dev/i2c-N @ 0xAA") puts N in
            the NACK fix's `i2cdetect -y N` (otherwise it says `i2cdetect -y BUS`).
            Default: `device`.

    Returns:
        The error to raise (`raise driver_error(...) from exc`).
    """
    code = getattr(exc, "errno", None)
    if not isinstance(code, int):
        code = None
    if isinstance(exc, TimeoutError) or code == _errno.ETIMEDOUT:
        cls: type[DriverError] = DriverTimeoutError
    elif isinstance(exc, PermissionError) or code in (_errno.EACCES, _errno.EPERM):
        cls = DevicePermissionError
    elif isinstance(exc, FileNotFoundError) or code in (_errno.ENOENT, _errno.ENODEV):
        cls = DeviceAbsentError
    elif code == _errno.EBUSY:
        cls = DeviceBusyError
    elif kind == "i2c" and code in (_errno.ENXIO, _errno.EREMOTEIO):
        cls = NackError
    else:
        cls = DriverError
    cause = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    if cls is NackError:
        cause = f"no acknowledge ({cause})"
    fix = _fix_for(kind, code, device if node is None else node)
    msg = f"{action} on adapter '{adapter}' ({device}): {cause}. Fix: {fix}."
    return cls(msg, code)
