"""Datasheet models of I2C chips for the simulated bus (`lgembed.edge.sim.i2c`).

Why: the bus (`SimI2CBus`) only routes a transaction's messages to the chip at each
address; what a chip answers is here, one class per datasheet, with the behaviour it
implements in its docstring so the model can be read against the datasheet. The bus
module re-exports every name, so `from lgembed.edge.sim.i2c import TMP102` works.

What the bus calls on a model (see `I2CDevice`): `begin_transfer()` before the chip's
first message of a transaction, `write(data)` / `read(n)` per message, and
`end_transfer()` at the STOP; a model raises OSError(EREMOTEIO) to not acknowledge.

Models (simulator names for the device file's `simulator` key):

    name              class          datasheet
    "tmp102"          TMP102         TI SBOS397, TMP102 digital temperature sensor
    "ina219"          INA219         TI SBOS448, INA219 current/power monitor
    "24c02", "eeprom" EEPROM24C02    Microchip/Atmel 24C02 2-Kbit serial EEPROM
    "registers"       RegisterDevice 256 byte registers, pointer auto-increment

A constructor (or a settable attribute) raises `OptionError` for a bad option value
(`ModelOptionError` is the same class), which `attach` reports as a DeviceFileError
naming `adapters.NAME.simulation.KEY`.

Length: about 700 lines, because three datasheet models live together with the
datasheet behaviour they implement in their docstrings. A further model should go to
a module of its own, with its simulator name added to
`lgembed.edge.sim.i2c.BUILTIN_MODELS`.
"""

from __future__ import annotations

import errno
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lgembed.edge.sim import OptionError

if TYPE_CHECKING:
    from lgembed.edge.sim.i2c import SimI2CBus

__all__ = (
    "EEPROM24C02",
    "INA219",
    "TMP102",
    "I2CDevice",
    "ModelOptionError",
    "OptionError",
    "RegisterDevice",
)

ModelOptionError = OptionError
"""The name this module's models used for `lgembed.edge.sim.OptionError` (the same class)."""


def _oserror(code: int) -> OSError:
    return OSError(code, os.strerror(code))


def _nack() -> OSError:
    """What a model raises to not acknowledge a byte (the kernel reports EREMOTEIO)."""
    return _oserror(errno.EREMOTEIO)


# --- option checking -----------------------------------------------------------------


def _number(
    option: str, value: Any, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False
) -> float:
    """`value` as a float, or OptionError (bools and non-finite numbers are refused)."""
    if lo is not None and hi is not None:
        allowed = f"a number from {lo:g} to {hi:g}"
    elif lo is not None:
        allowed = f"a number above {lo:g}" if lo_open else f"a number from {lo:g} up"
    else:
        allowed = "a finite number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OptionError(option, value, allowed)
    v = float(value)
    if (lo is not None and (v <= lo if lo_open else v < lo)) or (hi is not None and v > hi):
        raise OptionError(option, value, allowed)
    return v


def _integer(option: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise OptionError(option, value, f"an integer from {lo} to {hi}")
    return value


def _flag(option: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionError(option, value, "true or false")
    return value


def _contents(option: str, value: Any, size: int) -> dict[int, int]:
    """Initial memory: a list/bytes from address 0, or a table {address: byte}.

    Table keys may be ints or strings such as "0x10" (TOML keys are strings).
    """
    allowed = f"a list of at most {size} bytes (0..255), or a table of address -> byte"
    out: dict[int, int] = {}
    if isinstance(value, (bytes, bytearray)):
        value = list(value)
    if isinstance(value, (list, tuple)):
        if len(value) > size:
            raise OptionError(option, value, allowed)
        items: Any = enumerate(value)
    elif isinstance(value, Mapping):
        items = value.items()
    else:
        raise OptionError(option, value, allowed)
    for k, v in items:
        try:
            addr = int(k, 0) if isinstance(k, str) else k
        except ValueError:
            raise OptionError(option, value, allowed) from None
        ok_addr = isinstance(addr, int) and not isinstance(addr, bool) and 0 <= addr < size
        ok_byte = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 0xFF
        if not (ok_addr and ok_byte):
            raise OptionError(option, value, allowed)
        out[addr] = v
    return out


# --- models --------------------------------------------------------------------------


class I2CDevice:
    """Base of every simulated I2C chip: what the bus calls, and the world's hooks.

    The defaults model a chip that acknowledges everything, ignores what it is sent and
    returns 0xFF (the idle bus level) when read. Subclasses override `write` and `read`.

    Attributes:
        address: the 7-bit address the bus put it at (None until added to a bus).
        bus: the SimI2CBus it is on (None until added).
        before_access: callables run at the start of every transaction addressed to
            this chip, before its first message (a world model updates the physical
            quantity here, so the chip converts the current value).
    """

    def __init__(self) -> None:
        self.address: int | None = None
        self.bus: SimI2CBus | None = None
        self.before_access: list[Callable[[], None]] = []

    def begin_transfer(self) -> None:
        """Called by the bus before this chip's first message of a transaction.

        Raises:
            OSError: EREMOTEIO to not acknowledge the address (e.g. a busy EEPROM).
        """
        for hook in list(self.before_access):
            hook()

    def end_transfer(self) -> None:
        """Called by the bus at the transaction's STOP."""

    def write(self, data: bytes) -> None:
        """Receives the bytes of one write message (empty for an address-only probe).

        Raises:
            OSError: EREMOTEIO to not acknowledge.
        """

    def read(self, n: int) -> bytes:
        """Returns the `n` bytes of one read message.

        Raises:
            OSError: EREMOTEIO to not acknowledge.
        """
        return b"\xff" * n


class RegisterDevice(I2CDevice):
    """The common "first written byte is the register pointer" chip, with byte registers.

    A write message sets the pointer from its first byte and stores the rest from
    there; a read returns bytes from the pointer. The pointer advances after every
    byte and wraps at `size`. A pointer at or above `size` is not acknowledged.

    Args:
        size: how many registers, 1 to 256.
        fill: the power-up value of every register.
        registers: initial values: a list from register 0, or a table {register: byte}.

    Attributes:
        memory: the registers (a bytearray of `size`), readable and writable by tests.
        pointer: the register the next byte reads or writes.

    Raises:
        OptionError: an option out of range.
    """

    def __init__(self, size: int = 256, fill: int = 0, registers: Any = None) -> None:
        super().__init__()
        self.size = _integer("size", size, 1, 256)
        self.memory = bytearray([_integer("fill", fill, 0, 255)]) * self.size
        for addr, value in (_contents("registers", registers, self.size) if registers is not None else {}).items():
            self.memory[addr] = value
        self.pointer = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        if data[0] >= self.size:
            raise _nack()
        self.pointer = data[0]
        for b in data[1:]:
            self.memory[self.pointer] = b
            self.pointer = (self.pointer + 1) % self.size

    def read(self, n: int) -> bytes:
        out = bytearray()
        for _ in range(n):
            out.append(self.memory[self.pointer])
            self.pointer = (self.pointer + 1) % self.size
        return bytes(out)


class _WordRegisterDevice(I2CDevice):
    """A pointer byte selecting one of `_REGISTERS` 16-bit registers, sent MSB first.

    The pointer does not auto-increment: a read returns the selected register's MSB
    and LSB, repeated if more bytes are read; a write's first two data bytes are the
    new MSB and LSB (further bytes are ignored). Subclasses implement `_get` and `_set`.
    """

    _REGISTERS = 4
    _MSB_ALONE = False
    # True: a write of one data byte updates the MSB alone ("updated byte by byte")

    def __init__(self) -> None:
        super().__init__()
        self.pointer = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        if data[0] >= self._REGISTERS:
            raise _nack()
        self.pointer = data[0]
        if len(data) >= 3:
            self._set(self.pointer, data[1] << 8 | data[2])
        elif len(data) == 2 and self._MSB_ALONE:
            self._set(self.pointer, data[1] << 8 | (self._get(self.pointer) & 0xFF))

    def read(self, n: int) -> bytes:
        word = self._get(self.pointer)
        pair = bytes((word >> 8, word & 0xFF))
        out = (pair * (n // 2 + 1))[:n]
        self._after_read(self.pointer)
        return out

    def _get(self, register: int) -> int:
        raise NotImplementedError

    def _set(self, register: int, value: int) -> None:
        raise NotImplementedError

    def _after_read(self, register: int) -> None:
        """Side effects of reading a register (a flag cleared by the read)."""


class TMP102(_WordRegisterDevice):
    """Texas Instruments TMP102 temperature sensor (datasheet SBOS397).

    Registers (section "Pointer Register"; the pointer's bits P7..P2 must be 0, so a
    pointer above 0x03 is not acknowledged here):

        0x00 temperature  read-only; 12-bit two's complement, left-justified, 0.0625 °C
                          per LSB, D0 = 0 ("Temperature Register"); with EM = 1, 13-bit
                          left-justified with D0 = 1 ("Extended Mode (EM)"). Reads 0 °C
                          until the first conversion. Writes are ignored.
        0x01 configuration  power-up 0x60A0 ("Configuration Register"):
                          D15 OS, D14..D13 R1/R0 (read-only, 11), D12..D11 F1/F0 fault
                          queue (1, 2, 4, 6 faults), D10 POL, D9 TM, D8 SD,
                          D7..D6 CR1/CR0 conversion rate, D5 AL (read-only), D4 EM.
        0x02 T_LOW        power-up 0x4B00 (75 °C), same format as the temperature
        0x03 T_HIGH       power-up 0x5000 (80 °C) ("High- and Low-Limit Registers")

    Registers are updated byte by byte: a write of one data byte changes the MSB only
    ("Serial Interface": "to update only the MS byte, terminate the communication").

    Conversions (the simulation's clock): in continuous mode (SD = 0) one conversion
    runs at the start of every transaction addressed to the chip (after the
    `before_access` hooks), so a read returns `celsius` as it is now; `convert()` runs
    conversions without bus traffic (a world model's tick). The conversion rate bits
    are stored and read back but time nothing, and a conversion takes no time.

    Shutdown ("Shutdown Mode (SD)", "One-Shot/Conversion Ready (OS)"): with SD = 1 no
    conversions run and the temperature register keeps its last value; writing OS = 1
    while SD = 1 (in the same write or later) runs one conversion, after which OS reads
    1 until SD is cleared; otherwise OS reads 0.

    Alert ("Thermostat Mode (TM)", "Polarity (POL)", "Fault Queue", "Alert (AL Bit)"):
    every conversion compares the result with T_HIGH / T_LOW. The comparator becomes
    active after F consecutive conversions at or above T_HIGH and inactive after F
    consecutive conversions below T_LOW. AL reads the comparator (1 while inactive when
    POL = 0; POL = 1 inverts it), whatever TM is. The ALERT pin (`alert`, `alert_pin`)
    follows the comparator when TM = 0; when TM = 1 it latches on each comparator
    change and clears on a read of any register or on entering shutdown.

    Not modelled: conversion time and rate, the SMBus alert response address, general
    call reset, bus time-out, high-speed mode. T_LOW / T_HIGH keep their bits when EM
    changes (they are reinterpreted, not converted).

    Args:
        celsius: the ambient temperature the sensor measures. Reads return it clamped to
            the device range (-55..150 °C; 127.9375 °C at most outside extended mode)
            and rounded to 0.0625 °C.

    Attributes:
        celsius: settable at any time (the next conversion measures it).

    Raises:
        OptionError: `celsius` is not a finite number.
    """

    _REGISTERS = 4
    _MSB_ALONE = True
    RESOLUTION = 0.0625
    """°C per LSB of the temperature, T_LOW and T_HIGH registers."""
    MIN_C, MAX_C = -55.0, 150.0
    """The device's temperature range (specified -40..125, functional -55..150)."""

    OS, R, F, POL, TM, SD, CR, AL, EM = 0x8000, 0x6000, 0x1800, 0x0400, 0x0200, 0x0100, 0x00C0, 0x0020, 0x0010
    """Configuration register bit masks."""
    _WRITABLE = F | POL | TM | SD | CR | EM
    _FAULTS = (1, 2, 4, 6)
    # consecutive faults for F1/F0 = 00, 01, 10, 11

    def __init__(self, celsius: float = 25.0) -> None:
        super().__init__()
        self._celsius = _number("celsius", celsius)
        self._config = 0x60A0 & self._WRITABLE
        self._temp = 0x0000
        self._tlow = 0x4B00
        self._thigh = 0x5000
        self._faults = 0
        self._comparator = False
        self._interrupt = False
        self._os_ready = False

    # physical side

    @property
    def celsius(self) -> float:
        return self._celsius

    @celsius.setter
    def celsius(self, value: float) -> None:
        self._celsius = _number("celsius", value)

    @property
    def config(self) -> int:
        """The configuration register as the bus reads it."""
        return self._get(1)

    @property
    def alert(self) -> bool:
        """Whether the ALERT output is active (comparator when TM = 0, latch when TM = 1)."""
        return self._interrupt if self._config & self.TM else self._comparator

    @property
    def alert_pin(self) -> int:
        """The ALERT pin's logic level: active low when POL = 0, active high when POL = 1."""
        return int(self.alert) if self._config & self.POL else int(not self.alert)

    def convert(self, count: int = 1) -> None:
        """Runs `count` conversions now (each one feeds the fault queue)."""
        for _ in range(count):
            extended = bool(self._config & self.EM)
            self._temp = int.from_bytes(self.encode(self._celsius, extended), "big")
            t = self.decode(self._temp.to_bytes(2, "big"), extended)
            low = self.decode(self._get(2).to_bytes(2, "big"), extended)
            high = self.decode(self._get(3).to_bytes(2, "big"), extended)
            fault = t < low if self._comparator else t >= high
            if not fault:
                self._faults = 0
                continue
            self._faults += 1
            if self._faults >= self._FAULTS[(self._config & self.F) >> 11]:
                self._faults = 0
                self._comparator = not self._comparator
                if self._config & self.TM:
                    self._interrupt = True

    @staticmethod
    def encode(celsius: float, extended: bool = False) -> bytes:
        """The temperature register's two bytes for `celsius` ("Temperature Register").

        The value is clamped to -55..150 °C (to 127.9375 °C in the 12-bit format, whose
        largest code is 0x7FF) and rounded to the nearest 0.0625 °C.
        """
        c = min(max(celsius, TMP102.MIN_C), TMP102.MAX_C)
        counts = math.floor(c / TMP102.RESOLUTION + 0.5)
        if extended:
            return ((((counts & 0x1FFF) << 3) | 1) & 0xFFFF).to_bytes(2, "big")
        counts = min(counts, 0x7FF)
        return ((counts & 0xFFF) << 4).to_bytes(2, "big")

    @staticmethod
    def decode(raw: bytes, extended: bool = False) -> float:
        """°C from the temperature (or T_LOW / T_HIGH) register's bytes, MSB first.

        Args:
            raw: two bytes (one byte is read as the MSB alone, as a master may stop
                after it).
            extended: the 13-bit format (EM = 1; bit D0 of the LSB reads 1 then).
        """
        word = (raw[0] << 8) | (raw[1] if len(raw) > 1 else 0)
        if extended:
            counts = word >> 3
            counts -= 0x2000 if counts & 0x1000 else 0
        else:
            counts = word >> 4
            counts -= 0x1000 if counts & 0x800 else 0
        return counts * TMP102.RESOLUTION

    # bus side

    def begin_transfer(self) -> None:
        super().begin_transfer()
        if not self._config & self.SD:
            self.convert()

    def _get(self, register: int) -> int:
        if register == 0:
            return self._temp
        if register == 1:
            al = self._comparator if self._config & self.POL else not self._comparator
            return (self.OS if self._os_ready else 0) | self.R | self._config | (self.AL if al else 0)
        mask = 0xFFF8 if self._config & self.EM else 0xFFF0
        return (self._tlow if register == 2 else self._thigh) & mask

    def _set(self, register: int, value: int) -> None:
        if register == 1:
            was_shutdown = bool(self._config & self.SD)
            self._config = value & self._WRITABLE
            if not self._config & self.SD:
                self._os_ready = False
            elif not was_shutdown:
                self._interrupt = False
            if self._config & self.SD and value & self.OS:
                self.convert()
                self._os_ready = True
        elif register == 2:
            self._tlow = value
        elif register == 3:
            self._thigh = value
        # register 0 is read-only: writes are acknowledged and ignored

    def _after_read(self, register: int) -> None:
        if self._config & self.TM:
            self._interrupt = False


class INA219(_WordRegisterDevice):
    """Texas Instruments INA219 current/power monitor (datasheet SBOS448).

    Registers (SBOS448G §8.6 "Register Maps"; 16-bit, MSB first, the pointer kept until
    the next write (§8.5.6); a pointer above 0x05 is not acknowledged here):

        0x00 configuration  §8.6.2.1, power-up 0x399F: D15 RST (writing 1 resets every
                          register, reads 0), D13 BRNG (0 = 16 V, 1 = 32 V), D12..D11 PG
                          (shunt range ±40, ±80, ±160, ±320 mV), D10..D7 BADC,
                          D6..D3 SADC (stored, not modelled), D2..D0 MODE.
        0x01 shunt voltage  §8.6.3.1: signed, 10 µV per LSB, clamped to the PG range.
        0x02 bus voltage    §8.6.3.2: D15..D3 the voltage (4 mV per LSB, clamped to the
                          BRNG range: 4000 or 8000 counts), D1 CNVR, D0 OVF.
        0x03 power          §8.6.3.3: Power = Current × BusVoltage / 5000 (§8.5.1).
        0x04 current        §8.6.3.4: Current = ShuntVoltage × Calibration / 4096 (§8.5.1).
        0x05 calibration    §8.6.4.1: power-up 0; D0 always reads 0. While it is 0,
                          current and power read 0.

    Conversions (the simulation's clock): in the continuous modes (MODE 5..7) one
    conversion runs at the start of every transaction addressed to the chip (after the
    `before_access` hooks); in the triggered modes (1..3) one runs when the
    configuration register is written; power-down (0) and ADC off (4) keep the last
    results. MODE bit 0 selects the shunt measurement, bit 1 the bus measurement.
    A conversion sets CNVR; reading the power register or writing the configuration
    register (except to power-down or ADC off) clears it (§8.6.3.2). OVF is set when the
    current or power result is outside its register (the value is clamped).

    The arithmetic is the datasheet's integer arithmetic with truncation toward zero;
    the power register takes |current|. ADC resolution, averaging and conversion time
    are not modelled.

    Args:
        bus_volts: the voltage at IN- (bus) relative to GND, 0 to 26 V.
        shunt_ohms: the shunt resistor on the board, above 0 (the default 0.1 Ω is the
            common breakout boards' R100).
        current_amps: the current through the shunt (negative flows IN- to IN+).

    Attributes:
        bus_volts, shunt_ohms, current_amps: settable at any time.

    Raises:
        OptionError: an option out of range.
    """

    _REGISTERS = 6
    RST, BRNG, PG, MODE = 0x8000, 0x2000, 0x1800, 0x0007
    """Configuration register bit masks."""
    POWER_UP_CONFIG = 0x399F
    """Configuration register power-up value."""

    def __init__(self, bus_volts: float = 0.0, shunt_ohms: float = 0.1, current_amps: float = 0.0) -> None:
        super().__init__()
        self.bus_volts = bus_volts
        self.shunt_ohms = shunt_ohms
        self.current_amps = current_amps
        self._reset()

    def _reset(self) -> None:
        self._config = self.POWER_UP_CONFIG
        self._cal = 0
        self._shunt = 0
        self._bus = 0
        self._current = 0
        self._power = 0
        self._cnvr = False
        self._ovf = False

    @property
    def bus_volts(self) -> float:
        return self._bus_volts

    @bus_volts.setter
    def bus_volts(self, value: float) -> None:
        self._bus_volts = _number("bus_volts", value, 0.0, 26.0)

    @property
    def shunt_ohms(self) -> float:
        return self._shunt_ohms

    @shunt_ohms.setter
    def shunt_ohms(self, value: float) -> None:
        self._shunt_ohms = _number("shunt_ohms", value, 0.0, lo_open=True)

    @property
    def current_amps(self) -> float:
        return self._current_amps

    @current_amps.setter
    def current_amps(self, value: float) -> None:
        self._current_amps = _number("current_amps", value)

    def convert(self) -> None:
        """Runs one conversion of what MODE selects, then the current and power math."""
        mode = self._config & self.MODE
        if mode & 1:
            limit = 4000 << ((self._config & self.PG) >> 11)
            counts = round(self._current_amps * self._shunt_ohms / 10e-6)
            self._shunt = max(-limit, min(limit, counts))
        if mode & 2:
            limit = 8000 if self._config & self.BRNG else 4000
            self._bus = max(0, min(limit, round(self._bus_volts / 4e-3)))
        current = int(self._shunt * self._cal / 4096)
        power = int(abs(current) * self._bus / 5000)
        self._ovf = not -0x8000 <= current <= 0x7FFF or power > 0xFFFF
        self._current = max(-0x8000, min(0x7FFF, current))
        self._power = min(0xFFFF, power)
        self._cnvr = True

    def begin_transfer(self) -> None:
        super().begin_transfer()
        if self._config & 0x4:
            self.convert()

    def _get(self, register: int) -> int:
        if register == 0:
            return self._config
        if register == 1:
            return self._shunt & 0xFFFF
        if register == 2:
            return (self._bus << 3) | (2 if self._cnvr else 0) | (1 if self._ovf else 0)
        if register == 3:
            return self._power
        if register == 4:
            return self._current & 0xFFFF
        return self._cal

    def _set(self, register: int, value: int) -> None:
        if register == 0:
            if value & self.RST:
                self._reset()
                return
            self._config = value & 0x3FFF
            mode = self._config & self.MODE
            if mode not in (0, 4):
                self._cnvr = False
            if mode in (1, 2, 3):
                self.convert()
        elif register == 5:
            self._cal = value & 0xFFFE
        # registers 1..4 are read-only: writes are acknowledged and ignored

    def _after_read(self, register: int) -> None:
        if register == 3:
            self._cnvr = False


class EEPROM24C02(I2CDevice):
    """A 24C02 2-Kbit (256 x 8) serial EEPROM (Microchip 24AA02/24LC02B, Atmel AT24C02).

    From the datasheets' "Write Operations" and "Read Operations" sections:
    - Byte write / page write: the first byte after the address is the word address;
      up to 8 data bytes follow. The low 3 address bits increment after each byte and
      wrap within the 8-byte page ("roll over"), so more than 8 bytes overwrite the
      page's start. The write starts at the STOP; here a repeated START before the STOP
      discards it.
    - Write cycle: after the STOP the chip does not acknowledge its address for t_WR
      ("Acknowledge Polling"); modelled with `write_cycle_ms` (0 = instantly done).
    - Current address read: a read continues from the internal address counter (the
      last address accessed, plus one). Random read: a write of the word address alone,
      then a read. Sequential read: the counter increments after every byte and wraps
      from 0xFF to 0x00.
    - Write protect (WP high): writes are acknowledged and discarded, no write cycle.

    Args:
        write_cycle_ms: how long the chip NACKs after a write (the datasheets' t_WR is
            at most 5 ms); 0 turns it off.
        fill: the erased value of every byte (0xFF as shipped).
        contents: initial contents: a list from address 0, or a table {address: byte}.
        write_protect: the WP pin is high.

    Attributes:
        memory: the 256 bytes (a bytearray).
        pointer: the internal address counter.
        clock: the time source for the write cycle (`time.monotonic`; tests replace it).

    Raises:
        OptionError: an option out of range.
    """

    SIZE = 256
    """Bytes of memory (the word address wraps here)."""
    PAGE_SIZE = 8
    """Bytes per write page."""

    def __init__(
        self, write_cycle_ms: float = 0.0, fill: int = 0xFF, contents: Any = None, write_protect: bool = False
    ) -> None:
        super().__init__()
        self.write_cycle_ms = _number("write_cycle_ms", write_cycle_ms, 0.0, 60000.0)
        self.memory = bytearray([_integer("fill", fill, 0, 255)]) * self.SIZE
        for addr, value in (_contents("contents", contents, self.SIZE) if contents is not None else {}).items():
            self.memory[addr] = value
        self.write_protect = _flag("write_protect", write_protect)
        self.pointer = 0
        self.clock: Callable[[], float] = time.monotonic
        self._busy_until: float | None = None
        self._pending: dict[int, int] | None = None

    @property
    def busy(self) -> bool:
        """Whether a write cycle is running (the chip does not acknowledge)."""
        if self._busy_until is not None and self.clock() >= self._busy_until:
            self._busy_until = None
        return self._busy_until is not None

    def begin_transfer(self) -> None:
        if self.busy:
            raise _nack()
        super().begin_transfer()

    def end_transfer(self) -> None:
        pending, self._pending = self._pending, None
        if not pending or self.write_protect:
            return
        for addr, value in pending.items():
            self.memory[addr] = value
        if self.write_cycle_ms > 0:
            self._busy_until = self.clock() + self.write_cycle_ms / 1000.0

    def write(self, data: bytes) -> None:
        self._pending = None  # a repeated START before the STOP aborts a page write
        if not data:
            return  # address-only probe (acknowledge polling)
        self.pointer = data[0] % self.SIZE
        if len(data) == 1:
            return  # random read's dummy write: sets the counter only
        base = self.pointer - self.pointer % self.PAGE_SIZE
        offset = self.pointer % self.PAGE_SIZE
        pending: dict[int, int] = {}
        for b in data[1:]:
            pending[base + offset] = b
            offset = (offset + 1) % self.PAGE_SIZE
        self.pointer = base + offset
        self._pending = pending

    def read(self, n: int) -> bytes:
        self._pending = None
        out = bytearray()
        for _ in range(n):
            out.append(self.memory[self.pointer])
            self.pointer = (self.pointer + 1) % self.SIZE
        return bytes(out)
