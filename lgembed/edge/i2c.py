"""I2C devices on a Linux i2c-dev bus, through python-periphery.

Why: sensors and small peripherals (temperature, current, EEPROM, ADC chips) hang off
the board's I2C bus. Graph tools need a register-level API that says what it was doing
when the chip did not answer, and tests need the same code to run against a simulated
chip. `PeripheryI2C` drives one device (one 7-bit address) on one bus node through
`periphery.I2C`, whose only kernel call is the `I2C_RDWR` ioctl: every method here is
one combined transfer (repeated START between its messages, one STOP at the end).

Settings (the device file's `[adapters.NAME]` table, `kind = "i2c"`, `driver = "periphery"`):

    name      type  default       meaning
    devpath   str   "/dev/i2c-1"  the i2c-dev node of the bus (the `N` of i2cdetect -y N)
    address   int   (required)    the device's 7-bit address, 0x03..0x77

Permissions on a board: the i2c-dev nodes belong to group `i2c` (mode 0660) on
Raspberry Pi OS and Debian; add the service user to it (`usermod -aG i2c USER`) or add
a udev rule such as `SUBSYSTEM=="i2c-dev", GROUP="i2c", MODE="0660"`. The bus must be
enabled (`dtparam=i2c_arm=on` in config.txt on a Raspberry Pi, or `modprobe i2c-dev`);
`i2cdetect -y N` lists the addresses that acknowledge.

Errors: an address that does not acknowledge (the kernel's ENXIO or EREMOTEIO) raises
NackError; an absent node DeviceAbsentError; no permission DevicePermissionError; bad
arguments (register above 0xFF, a read of 0 bytes, data that is not bytes) ArgumentError
before anything reaches the bus.

Simulator (`lgembed.edge.sim.i2c`): the node becomes a regular file whose `I2C_FUNCS`
and `I2C_RDWR` ioctls a simulated bus answers, with datasheet models of a TMP102,
an INA219 and a 24C02 EEPROM (or a plain 256-register device) at the address, so this
module's code and periphery's marshalling run unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from lgembed.edge._base import Adapter, Setting, check_settings, require_library
from lgembed.edge.errors import ArgumentError

__all__ = ("MAX_MESSAGE_BYTES", "MAX_MESSAGES", "PeripheryI2C")

MAX_MESSAGE_BYTES = 8192
"""The longest message i2c-dev accepts in one I2C_RDWR transfer (drivers/i2c/i2c-dev.c)."""

MAX_MESSAGES = 42
"""The most messages i2c-dev accepts in one I2C_RDWR transfer (I2C_RDWR_IOCTL_MAX_MSGS)."""

_ADDRESS_MIN, _ADDRESS_MAX = 0x03, 0x77
# 7-bit addresses outside this range are reserved by the I2C specification (general call,
# CBUS, high-speed master codes, 10-bit prefixes)


def _check_address(v: Any) -> str | None:
    return None if _ADDRESS_MIN <= v <= _ADDRESS_MAX else "a 7-bit address from 0x03 to 0x77 (3 to 119)"


def _check_devpath(v: Any) -> str | None:
    return None if v.strip() else "a non-empty device path such as '/dev/i2c-1'"


def _hex(v: Any) -> str:
    """`0x48` for an int, the repr otherwise (action texts are built before arguments are checked)."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return f"0x{v:02x}"
    return repr(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class PeripheryI2C(Adapter):
    """One device (one 7-bit address) on a Linux i2c-dev bus, driven by `periphery.I2C`.

    Every method takes an optional keyword `address` that overrides the adapter's address
    for that one call (a second chip on the same bus, a device with two addresses).

    Args:
        name: the adapter's name in the device file.
        **settings: `devpath` and `address` (see the module docstring).

    Raises:
        DeviceFileError: a setting is unknown, missing or out of range.
        DriverUnavailableError: python-periphery is not installed.
        DeviceAbsentError: the bus node does not exist (bus not enabled).
        DevicePermissionError: the process may not open the node (group `i2c`).
        DriverError: the node is not an I2C bus, or another OS error.
    """

    kind: ClassVar[str] = "i2c"
    driver: ClassVar[str] = "periphery"
    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("devpath", str, "/dev/i2c-1", check=_check_devpath, doc="the i2c-dev node of the bus"),
        Setting("address", int, check=_check_address, doc="the device's 7-bit I2C address, 0x03..0x77"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        settings = check_settings(type(self), settings, source="", prefix=f"adapters.{name}")
        devpath, address = settings["devpath"], settings["address"]
        super().__init__(name, settings, device=f"{devpath} @ 0x{address:02x}")
        self._node = devpath  # the node a permission fix names (not the address)
        self.devpath: str = devpath
        self.address: int = address
        self._i2c: Any = None
        periphery = require_library("periphery", self.kind, name)
        self._message = periphery.I2C.Message
        action = f"Opening I2C bus {devpath}"
        try:
            self._i2c = periphery.I2C(devpath)
        except (periphery.I2CError, OSError) as e:
            raise self._fail(action, _plain(e)) from e

    def _close(self) -> None:
        i2c, self._i2c = self._i2c, None
        if i2c is None:
            return
        try:
            i2c.close()
        except OSError as e:
            raise self._fail(f"Closing I2C bus {self.devpath}", _plain(e)) from e

    # --- public API ------------------------------------------------------------------

    def read(self, length: int, *, address: int | None = None) -> bytes:
        """Reads `length` bytes (one read message: START, address+R, bytes, STOP).

        Args:
            length: how many bytes, 1 to 8192.
            address: overrides the adapter's address for this call.

        Returns:
            The bytes the device sent.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `length` or `address` out of range.
            NackError: the address did not acknowledge.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        action = f"Reading {length!r} byte{'' if length == 1 else 's'} from address {_hex(addr)}"
        self._check_open(action)
        addr = self._address(action, address)
        self._length(action, "length", length)
        return self._transfer(action, addr, [("r", length)])[0]

    def write(self, data: bytes | bytearray | Sequence[int], *, address: int | None = None) -> None:
        """Writes `data` (one write message: START, address+W, bytes, STOP).

        Args:
            data: 1 to 8192 bytes: bytes, bytearray, memoryview or a list of ints 0..255.
            address: overrides the adapter's address for this call.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `data` or `address` invalid.
            NackError: the address or a byte was not acknowledged.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        action = f"Writing to address {_hex(addr)}"
        self._check_open(action)
        addr = self._address(action, address)
        payload = self._data(action, "data", data, min_len=1)
        self._transfer(action, addr, [("w", payload)])

    def read_register(self, register: int, length: int = 1, *, address: int | None = None) -> bytes:
        """Reads `length` bytes from `register`: write the register byte, repeated START, read.

        Args:
            register: the register (pointer) byte, 0x00..0xFF.
            length: how many bytes, 1 to 8192.
            address: overrides the adapter's address for this call.

        Returns:
            The bytes the device sent.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `register`, `length` or `address` out of range.
            NackError: the address or the register byte was not acknowledged.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        action = f"Reading register {_hex(register)} at address {_hex(addr)}"
        self._check_open(action)
        addr = self._address(action, address)
        self._register(action, register)
        self._length(action, "length", length)
        return self._transfer(action, addr, [("w", bytes((register,))), ("r", length)])[0]

    def write_register(
        self, register: int, data: bytes | bytearray | Sequence[int], *, address: int | None = None
    ) -> None:
        """Writes `data` to `register` in one write message (the register byte, then `data`).

        An empty `data` only sets the device's register pointer (for a later `read`).

        Args:
            register: the register (pointer) byte, 0x00..0xFF.
            data: 0 to 8191 bytes: bytes, bytearray, memoryview or a list of ints 0..255.
            address: overrides the adapter's address for this call.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `register`, `data` or `address` invalid.
            NackError: the address or a byte was not acknowledged.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        action = f"Writing register {_hex(register)} at address {_hex(addr)}"
        self._check_open(action)
        addr = self._address(action, address)
        self._register(action, register)
        payload = self._data(action, "data", data, min_len=0, max_len=MAX_MESSAGE_BYTES - 1)
        self._transfer(action, addr, [("w", bytes((register,)) + payload)])

    def read_u16(self, register: int, byteorder: str = "big", *, address: int | None = None) -> int:
        """Reads a 16-bit unsigned register (two bytes, MSB first unless `byteorder="little"`).

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `register`, `byteorder` or `address` invalid.
            NackError: the address or the register byte was not acknowledged.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        action = f"Reading register {_hex(register)} at address {_hex(addr)}"
        self._check_open(action)
        self._byteorder(action, byteorder)
        return int.from_bytes(self.read_register(register, 2, address=address), byteorder)  # type: ignore[arg-type]

    def write_u16(self, register: int, value: int, byteorder: str = "big", *, address: int | None = None) -> None:
        """Writes a 16-bit unsigned register (two bytes, MSB first unless `byteorder="little"`).

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `register`, `value`, `byteorder` or `address` invalid.
            NackError: the address or a byte was not acknowledged.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        action = f"Writing register {_hex(register)} at address {_hex(addr)}"
        self._check_open(action)
        self._byteorder(action, byteorder)
        if not _is_int(value) or not 0 <= value <= 0xFFFF:
            raise self._argument(action, "value", value, "an integer from 0 to 0xffff")
        self.write_register(register, value.to_bytes(2, byteorder), address=address)  # type: ignore[arg-type]

    def transfer(self, messages: Sequence[tuple[str, Any]], *, address: int | None = None) -> list[bytes]:
        """Runs a combined transfer: messages separated by repeated STARTs, one STOP at the end.

        Args:
            messages: 1 to 42 messages, each `("w", data)` (1 to 8192 bytes, as for `write`)
                or `("r", length)` (1 to 8192).
            address: overrides the adapter's address for this call.

        Returns:
            The bytes of each read message, in order.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: a malformed message, or `address` out of range.
            NackError: the address or a byte was not acknowledged.
            DriverError: another bus or OS error.
        """
        addr = self.address if address is None else address
        count = len(messages) if isinstance(messages, (list, tuple)) else "?"
        action = f"Transferring {count} messages at address {_hex(addr)}"
        self._check_open(action)
        addr = self._address(action, address)
        if not isinstance(messages, (list, tuple)) or not 1 <= len(messages) <= MAX_MESSAGES:
            got = f"{len(messages)} messages" if isinstance(messages, (list, tuple)) else repr(messages)
            allowed = f"a list of 1 to {MAX_MESSAGES} messages ('w', data) or ('r', length)"
            raise self._argument(action, "messages", got, allowed, raw=True)
        plan: list[tuple[str, Any]] = []
        for i, m in enumerate(messages):
            what = f"messages[{i}]"
            if not isinstance(m, (tuple, list)) or len(m) != 2 or m[0] not in ("w", "r"):
                raise self._argument(action, what, m, "a pair ('w', data) or ('r', length)")
            if m[0] == "r":
                self._length(action, f"{what} length", m[1])
                plan.append(("r", m[1]))
            else:
                plan.append(("w", self._data(action, f"{what} data", m[1], min_len=1)))
        return self._transfer(action, addr, plan)

    # --- helpers ---------------------------------------------------------------------

    def _transfer(self, action: str, address: int, plan: list[tuple[str, Any]]) -> list[bytes]:
        """One I2C_RDWR call for `plan` (validated), under the adapter's lock."""
        msgs = [self._message(bytes(v), read=True) if op == "r" else self._message(v) for op, v in plan]
        with self._lock:
            self._check_open(action)
            try:
                self._i2c.transfer(address, msgs)
            except OSError as e:
                # periphery's I2CError is an OSError carrying the kernel's errno
                raise self._fail(action, _plain(e)) from e
        return [bytes(m.data) for (op, _), m in zip(plan, msgs) if op == "r"]

    def _argument(self, action: str, what: str, value: Any, allowed: str, *, raw: bool = False) -> ArgumentError:
        got = value if raw else repr(value)
        msg = f"{action} on adapter '{self.name}' ({self.device}): '{what}' must be {allowed} (got {got})."
        return ArgumentError(msg)

    def _address(self, action: str, address: Any) -> int:
        if address is None:
            return self.address
        if not _is_int(address) or not _ADDRESS_MIN <= address <= _ADDRESS_MAX:
            raise self._argument(action, "address", address, "a 7-bit address from 0x03 to 0x77")
        return address

    def _register(self, action: str, register: Any) -> None:
        if not _is_int(register) or not 0 <= register <= 0xFF:
            raise self._argument(action, "register", register, "an integer from 0x00 to 0xff")

    def _length(self, action: str, what: str, length: Any) -> None:
        if not _is_int(length) or not 1 <= length <= MAX_MESSAGE_BYTES:
            raise self._argument(action, what, length, f"an integer from 1 to {MAX_MESSAGE_BYTES}")

    def _byteorder(self, action: str, byteorder: Any) -> None:
        if byteorder not in ("big", "little"):
            raise self._argument(action, "byteorder", byteorder, "'big' or 'little'")

    def _data(self, action: str, what: str, data: Any, *, min_len: int, max_len: int = MAX_MESSAGE_BYTES) -> bytes:
        allowed = f"{min_len} to {max_len} bytes (bytes, bytearray or a list of integers 0..255)"
        if isinstance(data, (bytes, bytearray, memoryview)):
            payload = bytes(data)
        elif isinstance(data, (list, tuple)) and all(_is_int(b) and 0 <= b <= 0xFF for b in data):
            payload = bytes(data)
        else:
            raise self._argument(action, what, data, allowed)
        if not min_len <= len(payload) <= max_len:
            raise self._argument(action, what, f"{len(payload)} bytes", allowed, raw=True)
        return payload


def _plain(exc: BaseException) -> BaseException:
    """periphery's error with its "I2C transfer: " prefix dropped, keeping the errno.

    periphery raises `I2CError(errno, "I2C transfer: Remote I/O error")`; the message
    `driver_error` builds already says what was being done, so it gets the OS's own text.
    """
    code = getattr(exc, "errno", None)
    if isinstance(code, int) and not isinstance(code, bool):
        return OSError(code, os.strerror(code))
    return exc
