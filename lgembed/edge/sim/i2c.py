"""A simulated I2C bus that answers python-periphery's ioctls, with datasheet chip models.

Why: this machine's kernel has no I2C (no i2c-dev, no i2c-stub), and on a board the
only kernel call `periphery.I2C` makes is `ioctl(I2C_FUNCS)` at open and
`ioctl(I2C_RDWR)` per transfer. `SimI2CBus` answers exactly those two on a regular
file that stands in for `/dev/i2c-N` (routed by `lgembed.edge.sim._ioctl.PROXY`), so the
real driver (`lgembed.edge.i2c.PeripheryI2C`) and periphery's ctypes marshalling run
unchanged, and the chips behind it behave as their datasheets say.

Bus semantics (what the kernel and the wire do, as far as a driver can tell):
- One `I2C_RDWR` call is one combined transaction: START, the messages separated by
  repeated STARTs, STOP. Each message reaches the model at its address in order, a
  write as `model.write(data)` (the bytes after the address byte), a read as
  `model.read(n)`; so "write the register pointer, repeated START, read" works.
- An address with no model does not acknowledge: the call fails with ENXIO (some bus
  drivers return EREMOTEIO; a model raises OSError(EREMOTEIO) to NACK a byte).
- i2c-dev's limits hold: 1 to 42 messages, each at most 8192 bytes (EINVAL beyond).
  10-bit addresses, NOSTART, REV_DIR_ADDR and RECV_LEN messages are refused
  (EOPNOTSUPP): `I2C_FUNCS` reports plain I2C only.
- `model.begin_transfer()` runs before a model's first message of a transaction (it
  calls the `before_access` hooks, where a world model updates what the chip senses),
  `model.end_transfer()` at the STOP.

Models (simulator names for the device file's `simulator` key; the classes live in
`lgembed.edge.sim.i2c_chips` and are re-exported here):

    name              class          datasheet
    "tmp102"          TMP102         TI SBOS397, TMP102 digital temperature sensor
    "ina219"          INA219         TI SBOS448, INA219 current/power monitor
    "24c02", "eeprom" EEPROM24C02    Microchip/Atmel 24C02 2-Kbit serial EEPROM
    "registers"       RegisterDevice 256 byte registers, pointer auto-increment
    (absent)          RegisterDevice the default: 256 zero registers
    "module:Class"    your class     constructed with the `[adapters.NAME.simulation]` table

Options (`[adapters.NAME.simulation]`) are the model constructor's keyword arguments,
e.g. `celsius = 21.5` for a TMP102 or `bus_volts = 12.0, current_amps = 0.5` for an
INA219; an unknown or missing option, or a bad value (a model raises
`lgembed.edge.sim.OptionError`), raises DeviceFileError naming
`adapters.NAME.simulation.KEY` (see `lgembed.edge.sim.build_model`).
"""

from __future__ import annotations

import collections
import ctypes
import errno
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lgembed.edge._base import require_library
from lgembed.edge.errors import DeviceFileError
from lgembed.edge.sim import SimEnv, build_model, load_model_class
from lgembed.edge.sim._ioctl import PROXY, install
from lgembed.edge.sim.i2c_chips import (
    EEPROM24C02,
    INA219,
    TMP102,
    I2CDevice,
    ModelOptionError,
    OptionError,
    RegisterDevice,
    _oserror,
)

__all__ = (
    "BUILTIN_MODELS",
    "EEPROM24C02",
    "INA219",
    "TMP102",
    "I2CDevice",
    "ModelOptionError",
    "OptionError",
    "RegisterDevice",
    "SimI2CBus",
    "attach",
)

I2C_FUNCS = 0x0705
"""ioctl: query the adapter's functionality bits (linux/i2c-dev.h)."""
I2C_RDWR = 0x0707
"""ioctl: one combined read/write transaction (linux/i2c-dev.h)."""
I2C_FUNC_I2C = 0x0001
"""Functionality bit: plain I2C transactions through I2C_RDWR (linux/i2c.h)."""
I2C_M_RD = 0x0001
"""Message flag: a read (linux/i2c.h)."""
_UNSUPPORTED_FLAGS = 0x0010 | 0x0400 | 0x2000 | 0x4000
# I2C_M_TEN, I2C_M_RECV_LEN, I2C_M_REV_DIR_ADDR, I2C_M_NOSTART: not advertised in I2C_FUNCS
_MAX_MSGS = 42
# I2C_RDWR_IOCTL_MAX_MSGS in drivers/i2c/i2c-dev.c
_MAX_LEN = 8192
# the largest message i2c-dev accepts (drivers/i2c/i2c-dev.c)

BUILTIN_MODELS = {
    "tmp102": "lgembed.edge.sim.i2c_chips:TMP102",
    "ina219": "lgembed.edge.sim.i2c_chips:INA219",
    "24c02": "lgembed.edge.sim.i2c_chips:EEPROM24C02",
    "eeprom": "lgembed.edge.sim.i2c_chips:EEPROM24C02",
    "registers": "lgembed.edge.sim.i2c_chips:RegisterDevice",
}
"""Simulator names accepted in a device file's `simulator` key -> "module:Class"."""


# --- the bus -------------------------------------------------------------------------


class SimI2CBus:
    """One simulated I2C bus: a device node answering periphery's ioctls, and its chips.

    Args:
        node: the regular file that stands in for /dev/i2c-N (created if absent). Its
            ioctls are routed here through `_ioctl.PROXY` until `close()`.
        functionality: what `I2C_FUNCS` reports (I2C_FUNC_I2C; 0 makes periphery refuse
            the node as "not an I2C bus").
        log_size: how many messages `log` keeps.

    Attributes:
        devpath: the node's path, to open with periphery / PeripheryI2C.
        log: the last messages, oldest first: `(address, "w", data)` or
            `(address, "r", data)` (only messages a chip acknowledged).
        transactions: how many transactions ran (including failed ones).
    """

    def __init__(self, node: str | os.PathLike, *, functionality: int = I2C_FUNC_I2C, log_size: int = 1000) -> None:
        path = Path(node)
        path.touch(exist_ok=True)
        self.devpath = str(path)
        self.functionality = functionality
        self.log: collections.deque[tuple[int, str, bytes]] = collections.deque(maxlen=log_size)
        self.transactions = 0
        self.lock = threading.RLock()
        self._devices: dict[int, Any] = {}
        self._errors: list[BaseException] = []
        self._specs: dict[int, tuple[str, Any, dict]] = {}
        # address -> (adapter, simulator, options) of the adapter that created its model (attach)
        self._key: tuple[int, int] | None = PROXY.register(self.devpath, self)
        _install_periphery()

    def close(self) -> None:
        """Stops answering ioctls on the node (the node then behaves as a plain file)."""
        key, self._key = self._key, None
        if key is not None:
            PROXY.unregister(key)

    @property
    def devices(self) -> dict[int, Any]:
        """The chips on the bus by address (a copy)."""
        with self.lock:
            return dict(self._devices)

    def add(self, address: int, model: Any) -> Any:
        """Puts `model` at `address` and returns it.

        Raises:
            ValueError: the address is not 7-bit, or already taken.
        """
        if isinstance(address, bool) or not isinstance(address, int) or not 0 <= address <= 0x7F:
            msg = f"Adding a simulated I2C chip to {self.devpath}: the address must be 0x00..0x7f (got {address!r})"
            raise ValueError(msg)
        with self.lock:
            if address in self._devices:
                taken = self._devices[address]
                msg = f"Adding a simulated I2C chip to {self.devpath}: address 0x{address:02x} is taken by {taken!r}"
                raise ValueError(msg)
            self._devices[address] = model
        for attr, value in (("address", address), ("bus", self)):
            try:
                setattr(model, attr, value)
            except AttributeError:  # a custom model with __slots__ or a read-only property
                pass
        return model

    def remove(self, address: int) -> Any:
        """Takes the chip at `address` off the bus (it stops acknowledging) and returns it."""
        with self.lock:
            self._specs.pop(address, None)
            return self._devices.pop(address, None)

    def inject_error(self, error: BaseException, count: int = 1) -> None:
        """Makes the next `count` ioctls (or `transfer` calls) raise `error`.

        For error paths a host cannot produce: `PermissionError(errno.EACCES, ...)`,
        `OSError(errno.EBUSY, ...)`, `OSError(errno.ETIMEDOUT, ...)`.
        """
        with self.lock:
            self._errors.extend([error] * count)

    def transfer(self, messages: list[tuple[int, str, Any]]) -> list[bytes]:
        """Runs one transaction: `(address, "w", data)` / `(address, "r", length)` messages.

        This is what `I2C_RDWR` calls; a world model or a test may call it directly.

        Returns:
            The bytes of each read message, in order.

        Raises:
            OSError: ENXIO for an address with no chip, or what a chip raised (EREMOTEIO
                for a NACK), or an injected error.
        """
        with self.lock:
            self._raise_injected()
            self.transactions += 1
            started: list[Any] = []
            out: list[bytes] = []
            try:
                for address, op, value in messages:
                    model = self._devices.get(address)
                    if model is None:
                        raise _oserror(errno.ENXIO)
                    if all(m is not model for m in started):
                        started.append(model)
                        begin = getattr(model, "begin_transfer", None)
                        if begin is not None:
                            begin()
                    if op == "w":
                        data = bytes(value)
                        model.write(data)
                    else:
                        data = bytes(model.read(value))
                        data = (data + b"\xff" * value)[:value]  # a short answer reads as the idle bus
                        out.append(data)
                    self.log.append((address, op, data))
            finally:
                for model in started:
                    end = getattr(model, "end_transfer", None)
                    if end is not None:
                        end()
            return out

    def ioctl(self, fd: int, request: int, arg: Any) -> int:
        """Answers `I2C_FUNCS` and `I2C_RDWR` as i2c-dev does (see the module docstring).

        Raises:
            OSError: ENOTTY for another request, EINVAL / EOPNOTSUPP for a transfer
                i2c-dev refuses, EFAULT for an argument that is not periphery's struct,
                and the errors of `transfer`.
        """
        if request == I2C_FUNCS:
            with self.lock:
                self._raise_injected()
            try:
                arg[0] = self.functionality
            except (TypeError, IndexError):
                raise _oserror(errno.EFAULT) from None
            return 0
        if request != I2C_RDWR:
            raise _oserror(errno.ENOTTY)
        try:
            count = int(arg.nmsgs)
            cmsgs = arg.msgs
        except (AttributeError, TypeError, ValueError):
            raise _oserror(errno.EFAULT) from None
        if not 1 <= count <= _MAX_MSGS:
            raise _oserror(errno.EINVAL)
        plan: list[tuple[int, str, Any]] = []
        reads: list[Any] = []
        for i in range(count):
            m = cmsgs[i]
            if m.len > _MAX_LEN:
                raise _oserror(errno.EINVAL)
            if m.flags & _UNSUPPORTED_FLAGS:
                raise _oserror(errno.EOPNOTSUPP)
            if m.flags & I2C_M_RD:
                plan.append((m.addr, "r", m.len))
                reads.append(m)
            else:
                plan.append((m.addr, "w", ctypes.string_at(m.buf, m.len) if m.len else b""))
        for m, data in zip(reads, self.transfer(plan)):
            if m.len:
                ctypes.memmove(m.buf, data, m.len)
        return count

    def _raise_injected(self) -> None:
        if self._errors:
            raise self._errors.pop(0)

    def __repr__(self) -> str:
        chips = ", ".join(f"0x{a:02x}: {type(m).__name__}" for a, m in sorted(self._devices.items()))
        return f"<SimI2CBus {self.devpath} {{{chips}}}>"


def _install_periphery() -> None:
    """Routes periphery's I2C ioctls through PROXY, when periphery is installed.

    Without it there is nothing to route; `attach` reports the missing library.
    """
    try:
        import periphery.i2c
    except ImportError:
        return
    install(periphery.i2c)


# --- attach --------------------------------------------------------------------------


def _node_path(env: SimEnv, devpath: str) -> Path:
    """A fresh file under env.root/dev named like the real node (i2c-1 for /dev/i2c-1)."""
    base = os.path.basename(devpath.rstrip("/"))
    if not re.fullmatch(r"i2c-\d+", base):
        base = "i2c-sim"
    path, n = env.path("dev", base), 1
    while path.exists():
        n += 1
        path = env.path("dev", f"{base}.{n}")
    return path


def attach(
    env: SimEnv,
    name: str,
    driver: str,
    settings: Mapping[str, Any],
    model: str | None,
    options: Mapping[str, Any] | None,
    source: str = "<dict>",
) -> tuple[dict[str, Any], Any]:
    """Simulates adapter `name`: a chip at its address on the simulated bus of its devpath.

    One bus per `devpath` per environment (`env.shared[("i2c", devpath)]`); adapters
    with the same devpath share it, and adapters at the same address share the chip
    (the later ones must name the same simulator and options, or none).

    Args:
        env: the simulated side of the device.
        name: the adapter's name.
        driver: the adapter's driver ("periphery").
        settings: the validated settings (`devpath`, `address`).
        model: the `simulator` key: a name in BUILTIN_MODELS, "module:Class", or None
            for a RegisterDevice.
        options: the `[adapters.NAME.simulation]` table: the model's keyword arguments.
        source: the device file, for messages.

    Returns:
        The settings re-pointed at the simulated node, and the chip model.

    Raises:
        DeviceFileError: an unknown driver, simulator or option, a bad option value, a
            chip that is not a model, or two adapters giving one address different models.
        DriverUnavailableError: python-periphery is not installed.
    """
    prefix = f"adapters.{name}"
    where = f"{source}: " if source else ""
    if driver != "periphery":
        msg = f"{where}invalid value for '{prefix}.driver': {driver!r}; the i2c simulator serves only 'periphery'"
        raise DeviceFileError(msg, source, f"{prefix}.driver")
    require_library("periphery", "i2c", name)
    options = dict(options or {})
    devpath, address = settings["devpath"], settings["address"]

    bus = env.shared.get(("i2c", devpath))
    if bus is None:
        bus = SimI2CBus(_node_path(env, devpath))
        env.shared[("i2c", devpath)] = bus
        env.on_close(bus.close)
    new_settings = dict(settings, devpath=bus.devpath)

    with bus.lock:
        spec = bus._specs.get(address)
        existing = bus.devices.get(address)
        if existing is not None:
            if (model is None and not options) or spec is None or spec[1:] == (model, options):
                return new_settings, existing
            owner, owner_model, owner_options = spec
            msg = (
                f"{where}invalid value for '{prefix}.simulator': address 0x{address:02x} on {devpath} is already "
                f"simulated for adapter '{owner}' (simulator {owner_model!r}, options {owner_options!r}); "
                f"give '{name}' the same simulator and options, or none, to share that chip"
            )
            raise DeviceFileError(msg, source, f"{prefix}.simulator")
        chip = _build_chip(model, options, prefix, where, source)
        bus.add(address, chip)
        bus._specs[address] = (name, model, options)
    return new_settings, chip


def _build_chip(model: str | None, options: dict[str, Any], prefix: str, where: str, source: str) -> Any:
    """The chip for `model` constructed with `options` (see `attach`)."""
    if model is None:
        cls: Any = RegisterDevice
    else:
        cls = load_model_class(model, BUILTIN_MODELS, "i2c", f"{prefix}.simulator", source)
    label = model or "registers"
    chip = build_model(
        cls,
        (),
        options,
        label=repr(label),
        kind="i2c",
        prefix=f"{prefix}.simulation",
        source=source,
        allowed_label="allowed options",
    )
    if not (callable(getattr(chip, "read", None)) and callable(getattr(chip, "write", None))):
        msg = (
            f"{where}invalid value for '{prefix}.simulator': {label!r} is not an I2C chip model "
            f"(it needs write(data) and read(n) methods; subclass lgembed.edge.sim.i2c.I2CDevice)"
        )
        raise DeviceFileError(msg, source, f"{prefix}.simulator")
    return chip
