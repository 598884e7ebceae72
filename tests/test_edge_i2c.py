"""The I2C driver (`lgembed.edge.i2c.PeripheryI2C`) against the simulated bus and chips.

Every test opens the real driver, so python-periphery's own ctypes marshalling builds
the I2C_RDWR structures the simulated bus (`lgembed.edge.sim.i2c`) answers; register
values are checked against the datasheets' tables (TI SBOS397 TMP102, SBOS448 INA219,
24C02 EEPROM).
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lgembed.edge import _base
from lgembed.edge._base import check_settings
from lgembed.edge.errors import (
    AdapterClosedError,
    ArgumentError,
    DeviceAbsentError,
    DeviceBusyError,
    DeviceFileError,
    DevicePermissionError,
    DriverError,
    DriverTimeoutError,
    DriverUnavailableError,
    NackError,
    driver_error,
)
from lgembed.edge.i2c import PeripheryI2C
from lgembed.edge.sim import SimEnv
from lgembed.edge.sim._ioctl import PROXY
from lgembed.edge.sim.i2c import (
    EEPROM24C02,
    INA219,
    TMP102,
    I2CDevice,
    RegisterDevice,
    SimI2CBus,
    attach,
)

NACK_FIX = "Fix: check the wiring, the pull-ups and the address (i2cdetect -y BUS lists what answers)."


@pytest.fixture
def env():
    e = SimEnv()
    yield e
    e.close()


def open_sim(env, name="dev", model=None, options=None, address=0x48, devpath="/dev/i2c-1"):
    """Simulates adapter `name` and opens the real driver on what `attach` returns."""
    validated = check_settings(PeripheryI2C, {"devpath": devpath, "address": address}, prefix=f"adapters.{name}")
    sim_settings, chip = attach(env, name, "periphery", validated, model, options or {})
    adapter = PeripheryI2C(name, **sim_settings)
    env.on_close(adapter.close)  # runs before the bus closes (last registered, first run)
    return adapter, chip


def temp(adapter, extended=False):
    return TMP102.decode(adapter.read_register(0x00, 2), extended)


class Echo(I2CDevice):
    """A custom model for the "module:Class" form: reads return what was last written."""

    def __init__(self, prefix: bytes = b"") -> None:
        super().__init__()
        self.last = bytes(prefix)

    def write(self, data: bytes) -> None:
        self.last = data

    def read(self, n: int) -> bytes:
        return (self.last * n)[:n]


class Refuser(I2CDevice):
    """Acknowledges its address, then refuses every byte."""

    def write(self, data: bytes) -> None:
        raise OSError(errno.EREMOTEIO, os.strerror(errno.EREMOTEIO))


# --- import hygiene ------------------------------------------------------------------


def test_importing_the_driver_and_simulator_does_not_import_periphery():
    code = (
        "import sys, lgembed.edge.i2c, lgembed.edge.sim.i2c; "
        "bad = [m for m in ('periphery', 'serial', 'can') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-I", "-W", "error", "-c", code], check=True)


# --- TMP102 (TI SBOS397) ---------------------------------------------------------------

# "Temperature Register", 12-bit data format table: °C -> register (the 12 bits, left-justified)
TMP102_12BIT = [
    (128.0, 0x7FF0),  # saturates: the table's 128 °C row reads 7FF
    (127.9375, 0x7FF0),
    (100.0, 0x6400),
    (80.0, 0x5000),
    (75.0, 0x4B00),
    (50.0, 0x3200),
    (25.0, 0x1900),
    (0.25, 0x0040),
    (0.0, 0x0000),
    (-0.25, 0xFFC0),
    (-25.0, 0xE700),
    (-55.0, 0xC900),
]
# "Extended Mode (EM)", 13-bit data format table, left-justified with D0 = 1
TMP102_13BIT = [
    (150.0, 0x0960),
    (128.0, 0x0800),
    (127.9375, 0x07FF),
    (25.0, 0x0190),
    (0.25, 0x0004),
    (-0.25, 0x1FFC),
    (-25.0, 0x1E70),
    (-55.0, 0x1C90),
]


@pytest.mark.parametrize(("celsius", "word"), TMP102_12BIT)
def test_tmp102_temperature_register_matches_the_datasheet_table(env, celsius, word):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": celsius})
    raw = adapter.read_register(0x00, 2)
    assert raw == word.to_bytes(2, "big")
    assert TMP102.decode(raw) == min(celsius, 127.9375)


def test_tmp102_extended_mode_uses_13_bits_with_d0_set(env):
    adapter, chip = open_sim(env, "room", "tmp102")
    adapter.write_register(0x01, [0x60, 0xB0])  # power-up value plus EM
    for celsius, counts in TMP102_13BIT:
        chip.celsius = celsius
        raw = adapter.read_register(0x00, 2)
        assert raw == ((counts << 3) | 1).to_bytes(2, "big")
        assert raw[1] & 1 == 1
        assert TMP102.decode(raw, extended=True) == celsius
    chip.celsius = 151.0
    assert temp(adapter, extended=True) == 150.0


def test_tmp102_follows_celsius_quantised_and_clamped(env):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": 21})
    assert temp(adapter) == 21.0
    chip.celsius = 23.46  # 375.36 LSB -> 375
    assert temp(adapter) == 23.4375
    chip.celsius = -10.03
    assert temp(adapter) == -10.0
    chip.celsius = -80.0
    assert temp(adapter) == -55.0
    chip.celsius = 200.0
    assert temp(adapter) == 127.9375
    with pytest.raises(ArgumentError, match=re.escape("'celsius' must be a finite number (got nan)")):
        chip.celsius = float("nan")


def test_tmp102_configuration_register(env):
    adapter, chip = open_sim(env, "room", "tmp102")
    assert adapter.read_register(0x01, 2) == bytes([0x60, 0xA0])  # power-up/reset value
    assert adapter.read_u16(0x02) == 0x4B00  # T_LOW 75 °C
    assert adapter.read_u16(0x03) == 0x5000  # T_HIGH 80 °C
    assert TMP102.decode(adapter.read_register(0x03, 2)) == 80.0
    adapter.write_register(0x01, [0x60, 0xA0])
    assert adapter.read_u16(0x01) == 0x60A0
    adapter.write_u16(0x01, 0x0000)  # R1/R0 stay 11; AL reads 1 (comparator inactive, POL = 0)
    assert adapter.read_u16(0x01) == 0x6020
    adapter.write_u16(0x01, 0xFFFF)  # SD+OS: one-shot, OS reads 1; POL = 1 makes AL read 0; D3..D0 read 0
    assert adapter.read_u16(0x01) == 0xFFD0
    assert chip.config == 0xFFD0
    adapter.write_u16(0x01, 0x60A0)
    adapter.write_register(0x01, [0x78])  # one data byte updates the MSB only: F1/F0 = 11
    assert adapter.read_u16(0x01) == 0x78A0
    assert adapter.read_register(0x01, 5) == bytes([0x78, 0xA0, 0x78, 0xA0, 0x78])  # no auto-increment
    assert adapter.read_register(0x01, 1) == bytes([0x78])


def test_tmp102_limit_registers_drop_unused_bits(env):
    adapter, chip = open_sim(env, "room", "tmp102")
    adapter.write_u16(0x02, 0x1234)
    assert adapter.read_u16(0x02) == 0x1230
    adapter.write_register(0x00, [0x12, 0x34])  # the temperature register is read-only
    assert adapter.read_u16(0x00) == 0x1900


def test_tmp102_shutdown_holds_the_last_conversion_and_one_shot_converts(env):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": 20.0})
    assert temp(adapter) == 20.0
    adapter.write_u16(0x01, 0x61A0)  # SD = 1
    chip.celsius = 30.0
    assert temp(adapter) == 20.0
    assert adapter.read_u16(0x01) == 0x61A0  # OS reads 0 until a one-shot completes
    adapter.write_u16(0x01, 0xE1A0)  # OS = 1 while SD = 1: one conversion
    assert temp(adapter) == 30.0
    assert adapter.read_u16(0x01) == 0xE1A0
    chip.celsius = 40.0
    assert temp(adapter) == 30.0
    adapter.write_u16(0x01, 0x60A0)  # back to continuous conversion
    assert temp(adapter) == 40.0
    assert adapter.read_u16(0x01) == 0x60A0


def test_tmp102_comparator_alert_with_hysteresis_and_polarity(env):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": 25.0})
    assert (chip.alert, chip.alert_pin) == (False, 1)
    chip.celsius = 85.0  # >= T_HIGH (80 °C)
    assert adapter.read_u16(0x01) & TMP102.AL == 0  # POL = 0: AL reads 0 while active
    assert (chip.alert, chip.alert_pin) == (True, 0)  # ALERT is active low
    chip.celsius = 77.0  # between T_LOW and T_HIGH: stays active
    assert adapter.read_u16(0x01) & TMP102.AL == 0
    chip.celsius = 74.0  # below T_LOW (75 °C)
    assert adapter.read_u16(0x01) & TMP102.AL == TMP102.AL
    assert (chip.alert, chip.alert_pin) == (False, 1)
    adapter.write_u16(0x01, 0x64A0)  # POL = 1 inverts AL and the pin
    assert adapter.read_u16(0x01) == 0x6480
    assert chip.alert_pin == 0
    chip.celsius = 90.0
    assert adapter.read_u16(0x01) == 0x64A0
    assert (chip.alert, chip.alert_pin) == (True, 1)


def test_tmp102_fault_queue_needs_consecutive_faults(env):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": 25.0})
    adapter.write_register(0x03, TMP102.encode(30.0))  # T_HIGH
    adapter.write_register(0x02, TMP102.encode(28.0))  # T_LOW
    adapter.write_u16(0x01, 0x70A0)  # F1/F0 = 10: 4 consecutive faults
    chip.celsius = 31.0
    for _ in range(3):  # one conversion per transaction
        temp(adapter)
        assert chip.alert is False
    temp(adapter)
    assert chip.alert is True
    chip.celsius = 27.0
    temp(adapter)
    temp(adapter)
    chip.celsius = 29.0  # not below T_LOW: the count starts again
    temp(adapter)
    chip.celsius = 27.0
    for _ in range(3):
        temp(adapter)
        assert chip.alert is True
    temp(adapter)
    assert chip.alert is False


def test_tmp102_interrupt_mode_latches_until_a_read(env):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": 25.0})
    adapter.write_u16(0x01, 0x62A0)  # TM = 1
    chip.celsius = 85.0
    chip.convert()  # a conversion without bus traffic (a world tick)
    assert (chip.alert, chip.alert_pin) == (True, 0)
    assert adapter.read_u16(0x01) & TMP102.AL == 0  # AL follows the comparator whatever TM is
    assert chip.alert is False  # the read cleared the latch
    chip.celsius = 70.0
    chip.convert()  # falling below T_LOW latches again
    assert chip.alert is True
    adapter.write_u16(0x01, 0x63A0)  # entering shutdown clears it too
    assert chip.alert is False


def test_tmp102_pointer_above_3_is_not_acknowledged(env):
    adapter, chip = open_sim(env, "room", "tmp102")
    msg = (
        f"Reading register 0x04 at address 0x48 on adapter 'room' ({adapter.device}): "
        f"no acknowledge (Remote I/O error). {NACK_FIX}"
    )
    with pytest.raises(NackError, match=re.escape(msg)) as info:
        adapter.read_register(0x04, 2)
    assert info.value.errno == errno.EREMOTEIO


def test_tmp102_before_access_hook_updates_the_ambient(env):
    adapter, chip = open_sim(env, "room", "tmp102")
    world = {"room": 18.0}
    chip.before_access.append(lambda: setattr(chip, "celsius", world["room"]))
    assert temp(adapter) == 18.0
    world["room"] = 19.5
    assert temp(adapter) == 19.5


@given(st.integers(min_value=-55 * 16, max_value=150 * 16), st.booleans())
def test_tmp102_encode_decode_round_trip(counts, extended):
    celsius = counts / 16
    raw = TMP102.encode(celsius, extended)
    expected = celsius if extended else min(celsius, 127.9375)
    assert TMP102.decode(raw, extended) == expected
    assert raw[1] & (0x07 if extended else 0x0F) == (1 if extended else 0)  # unused bits 0, D0 = EM


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=-60.0, max_value=160.0, allow_nan=False))
def test_tmp102_reads_through_the_driver_quantise_to_the_resolution(celsius):
    env = SimEnv()
    try:
        adapter, chip = open_sim(env, "room", "tmp102", {"celsius": celsius})
        adapter.write_u16(0x01, 0x60B0)  # extended mode: the whole -55..150 range
        got = temp(adapter, extended=True)
        clamped = min(max(celsius, -55.0), 150.0)
        assert abs(got - clamped) <= 0.03125
        assert got * 16 == int(got * 16)
    finally:
        env.close()


# --- INA219 (TI SBOS448) ---------------------------------------------------------------


def test_ina219_power_up_and_readings_after_calibration(env):
    adapter, chip = open_sim(env, "pwr", "ina219", {"bus_volts": 12.0, "current_amps": 1.0}, address=0x40)
    assert adapter.read_u16(0x00) == 0x399F
    assert adapter.read_u16(0x05) == 0
    assert adapter.read_u16(0x01) == 10_000  # 1 A x 0.1 ohm = 100 mV at 10 uV/LSB
    bus = adapter.read_u16(0x02)
    assert (bus >> 3) * 0.004 == pytest.approx(12.0)
    assert bus & 0b10 == 0b10  # CNVR
    assert adapter.read_u16(0x04) == 0  # no calibration yet: current and power read 0
    assert adapter.read_u16(0x03) == 0
    # §8.5.1: Current_LSB = 100 uA; Cal = trunc(0.04096 / (100e-6 * 0.1)) = 4096
    adapter.write_u16(0x05, 4096)
    assert adapter.read_u16(0x05) == 4096
    current = adapter.read_u16(0x04)
    assert current == 10_000 * 4096 // 4096
    assert current * 100e-6 == pytest.approx(1.0)
    power = adapter.read_u16(0x03)
    assert power == current * 3000 // 5000  # Power = Current x BusVoltage / 5000
    assert power * 20 * 100e-6 == pytest.approx(12.0)  # Power_LSB = 20 x Current_LSB


def test_ina219_negative_current_and_the_shunt_range(env):
    adapter, chip = open_sim(env, "pwr", "ina219", {"bus_volts": 5.0, "shunt_ohms": 0.1}, address=0x40)
    adapter.write_u16(0x05, 4096)
    chip.current_amps = -0.5
    assert int.from_bytes(adapter.read_register(0x01, 2), "big", signed=True) == -5000
    assert int.from_bytes(adapter.read_register(0x04, 2), "big", signed=True) == -5000
    assert adapter.read_u16(0x03) == 5000 * 1250 // 5000
    adapter.write_u16(0x00, 0x399F & ~0x1800)  # PG = /1: ±40 mV
    chip.current_amps = 1.0  # 100 mV: clamped to 40 mV
    assert adapter.read_u16(0x01) == 4000
    chip.bus_volts = 20.0
    adapter.write_u16(0x00, 0x199F)  # BRNG = 0: 16 V range
    assert adapter.read_u16(0x02) >> 3 == 4000


def test_ina219_conversion_ready_overflow_reset_and_triggered_mode(env):
    adapter, chip = open_sim(env, "pwr", "ina219", {"bus_volts": 12.0, "current_amps": 1.0}, address=0x40)
    adapter.write_u16(0x05, 4096)
    power, bus = adapter.transfer([("w", [0x03]), ("r", 2), ("w", [0x02]), ("r", 2)])
    assert int.from_bytes(bus, "big") & 0b10 == 0  # reading the power register cleared CNVR
    adapter.write_u16(0x05, 0xFFFF)
    assert adapter.read_u16(0x05) == 0xFFFE  # D0 is void
    assert adapter.read_u16(0x02) & 0b01 == 1  # 10000 x 65534 / 4096 overflows: OVF
    adapter.write_u16(0x00, 0x8000)  # RST
    assert adapter.read_u16(0x00) == 0x399F
    assert adapter.read_u16(0x05) == 0
    adapter.write_u16(0x00, 0x399B)  # MODE = 011: shunt and bus, triggered
    chip.current_amps = 2.0
    assert adapter.read_u16(0x01) == 10_000  # no new conversion until the next trigger
    adapter.write_u16(0x00, 0x399B)
    assert adapter.read_u16(0x01) == 20_000


def test_ina219_bad_options_name_the_key(env):
    text = "'adapters.pwr.simulation.shunt_ohms': 0; allowed: a number above 0"
    with pytest.raises(DeviceFileError, match=re.escape(text)) as info:
        open_sim(env, "pwr", "ina219", {"shunt_ohms": 0}, address=0x40)
    assert info.value.key == "adapters.pwr.simulation.shunt_ohms"


# --- 24C02 EEPROM --------------------------------------------------------------------


def test_eeprom_byte_write_random_and_current_address_read(env):
    adapter, chip = open_sim(env, "cfg", "24c02", address=0x50)
    assert chip.memory == bytearray(b"\xff" * 256)
    adapter.write_register(0x10, [0xAB])
    assert chip.memory[0x10] == 0xAB
    assert adapter.read_register(0x10, 1) == b"\xab"  # random read
    chip.memory[0x11:0x13] = b"\x01\x02"
    assert adapter.read(2) == b"\x01\x02"  # current address read continues at 0x11


def test_eeprom_page_write_wraps_within_the_page(env):
    adapter, chip = open_sim(env, "cfg", "eeprom", address=0x50)
    adapter.write_register(0x06, b"ABCD")
    assert chip.memory[0:8] == bytearray(b"CD\xff\xff\xff\xffAB")
    assert adapter.read(1) == b"\xff"  # the counter rolled over to 0x02 within the page
    adapter.write_register(0x08, bytes(range(10)))  # 10 bytes into an 8-byte page
    assert bytes(chip.memory[8:16]) == bytes([8, 9, 2, 3, 4, 5, 6, 7])


def test_eeprom_sequential_read_wraps_at_256(env):
    adapter, chip = open_sim(env, "cfg", "24c02", {"contents": {"0xfe": 1, "0xff": 2, "0": 3, "1": 4}}, address=0x50)
    assert adapter.read_register(0xFE, 4) == bytes([1, 2, 3, 4])
    assert adapter.read(1) == b"\xff"  # counter at 0x02
    assert len(adapter.read(300)) == 300


def test_eeprom_write_cycle_nacks_until_done(env):
    adapter, chip = open_sim(env, "cfg", "24c02", {"write_cycle_ms": 5}, address=0x50)
    now = [100.0]
    chip.clock = lambda: now[0]
    adapter.write_register(0x00, b"hi")
    with pytest.raises(NackError, match=re.escape("Reading register 0x00 at address 0x50 on adapter 'cfg'")):
        adapter.read_register(0x00, 2)
    assert chip.busy
    now[0] += 0.006
    assert adapter.read_register(0x00, 2) == b"hi"


def test_eeprom_write_commits_at_the_stop_and_honours_write_protect(env):
    adapter, chip = open_sim(env, "cfg", "24c02", {"write_protect": True}, address=0x50)
    adapter.write_register(0x20, b"xy")
    assert chip.memory[0x20:0x22] == bytearray(b"\xff\xff")
    chip.write_protect = False
    adapter.transfer([("w", [0x30, 0x55]), ("r", 1)])  # repeated START instead of STOP: no write
    assert chip.memory[0x30] == 0xFF
    adapter.write_register(0x30, b"\x55")
    assert chip.memory[0x30] == 0x55


# --- the bus, the driver's API and its errors ------------------------------------------


def test_default_model_is_256_zero_registers_with_auto_increment(env):
    adapter, chip = open_sim(env, "regs")
    assert isinstance(chip, RegisterDevice)
    assert adapter.read_register(0x00, 4) == bytes(4)
    adapter.write_register(0xFE, [1, 2, 3])
    assert adapter.read_register(0xFE, 3) == bytes([1, 2, 3])  # wrapped to 0x00
    assert chip.memory[0] == 3
    assert adapter.read_u16(0xFE, byteorder="little") == 0x0201


def test_absent_address_raises_nack_error(env):
    adapter, chip = open_sim(env, "temp", "tmp102")
    msg = (
        f"Reading register 0x00 at address 0x49 on adapter 'temp' ({adapter.device}): "
        f"no acknowledge (No such device or address). {NACK_FIX}"
    )
    with pytest.raises(NackError, match=re.escape(msg)) as info:
        adapter.read_register(0x00, 2, address=0x49)
    assert info.value.errno == errno.ENXIO
    assert isinstance(info.value.__cause__, OSError)  # periphery's I2CError, chained


def test_a_chip_refusing_a_byte_raises_nack_error(env):
    adapter, chip = open_sim(env, "dev", f"{__name__}:Refuser")
    with pytest.raises(NackError, match=re.escape("Writing to address 0x48 on adapter 'dev'")):
        adapter.write(b"\x01")


def test_combined_transfer_delivers_messages_in_order(env):
    adapter, chip = open_sim(env, "room", "tmp102", {"celsius": 25.0})
    tlow, config = adapter.transfer([("w", b"\x02"), ("r", 2), ("w", bytearray(b"\x01")), ("r", 2)])
    assert (tlow, config) == (b"\x4b\x00", b"\x60\xa0")
    log = [(0x48, "w", b"\x02"), (0x48, "r", tlow), (0x48, "w", b"\x01"), (0x48, "r", config)]
    assert list(chip.bus.log)[-4:] == log
    assert adapter.transfer([("w", [0x01, 0x61, 0xA0])]) == []
    assert chip.config == 0x61A0


def test_adapters_share_the_bus_and_the_chip_at_one_address(env):
    a, chip = open_sim(env, "a", "tmp102", {"celsius": 30.0})
    b, same = open_sim(env, "b")  # no simulator given: shares the TMP102
    c, eeprom = open_sim(env, "c", "24c02", address=0x50)
    assert same is chip and chip.bus is eeprom.bus
    assert a.devpath == b.devpath == c.devpath
    assert temp(b) == 30.0
    assert a.read_register(0x00, 1, address=0x50) == b"\xff"  # the address override reaches the EEPROM
    other, far = open_sim(env, "d", "tmp102", devpath="/dev/i2c-2")
    assert far.bus is not chip.bus and other.devpath.endswith("i2c-2")
    msg = "invalid value for 'adapters.e.simulator': address 0x48 on /dev/i2c-1 is already simulated for adapter 'a'"
    with pytest.raises(DeviceFileError, match=re.escape(msg)) as info:
        open_sim(env, "e", "ina219")
    assert info.value.key == "adapters.e.simulator"


def test_custom_model_class_with_options(env):
    adapter, chip = open_sim(env, "echo", f"{__name__}:Echo", {"prefix": b"ok"})
    assert isinstance(chip, Echo) and chip.address == 0x48
    assert adapter.read(4) == b"okok"
    adapter.write([1, 2])
    assert adapter.read(3) == bytes([1, 2, 1])


@pytest.mark.parametrize(
    ("model", "options", "key", "text"),
    [
        ("tmp102", {"celsius": "hot"}, "adapters.t.simulation.celsius",
         "<dict>: invalid value for 'adapters.t.simulation.celsius': 'hot'; allowed: a finite number"),
        ("tmp102", {"fahrenheit": 70}, "adapters.t.simulation.fahrenheit",
         "<dict>: unknown option 'adapters.t.simulation.fahrenheit' for the i2c simulator 'tmp102'; "
         "allowed options: celsius"),
        ("24c02", {"write_cycle_ms": -1}, "adapters.t.simulation.write_cycle_ms",
         "<dict>: invalid value for 'adapters.t.simulation.write_cycle_ms': -1; allowed: a number from 0 to 60000"),
        (None, {"size": 300}, "adapters.t.simulation.size",
         "<dict>: invalid value for 'adapters.t.simulation.size': 300; allowed: an integer from 1 to 256"),
        ("lm75", {}, "adapters.t.simulator",
         "<dict>: invalid value for 'adapters.t.simulator': 'lm75'; "
         "allowed: '24c02', 'eeprom', 'ina219', 'registers', 'tmp102'"),
        ("collections:OrderedDict", {}, "adapters.t.simulator",
         "<dict>: invalid value for 'adapters.t.simulator': 'collections:OrderedDict' is not an I2C chip model"),
    ],
)
def test_bad_simulator_or_option_raises_device_file_error(env, model, options, key, text):
    with pytest.raises(DeviceFileError, match=re.escape(text)) as info:
        open_sim(env, "t", model, options)
    assert info.value.key == key


def test_attach_serves_only_periphery(env):
    with pytest.raises(DeviceFileError, match=re.escape("'adapters.t.driver': 'smbus2'")):
        attach(env, "t", "smbus2", {"devpath": "/dev/i2c-1", "address": 0x48}, None, {})


BYTES_LIKE = "(bytes, bytearray or a list of integers 0..255)"
PAIRS = "('w', data) or ('r', length)"


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda a: a.read_register(0x100), "Reading register 0x100 at address 0x48 on adapter 'dev' ({dev}): "
         "'register' must be an integer from 0x00 to 0xff (got 256)."),
        (lambda a: a.read_register(-1), "'register' must be an integer from 0x00 to 0xff (got -1)."),
        (lambda a: a.read_register(True), "'register' must be an integer from 0x00 to 0xff (got True)."),
        (lambda a: a.read_register("1"), "'register' must be an integer from 0x00 to 0xff (got '1')."),
        (lambda a: a.read_register(0, 0), "'length' must be an integer from 1 to 8192 (got 0)."),
        (lambda a: a.read(8193), "Reading 8193 bytes from address 0x48 on adapter 'dev' ({dev}): "
         "'length' must be an integer from 1 to 8192 (got 8193)."),
        (lambda a: a.write("abc"), f"'data' must be 1 to 8192 bytes {BYTES_LIKE} (got 'abc')."),
        (lambda a: a.write([1, 256]), "(got [1, 256])."),
        (lambda a: a.write([1.5]), "(got [1.5])."),
        (lambda a: a.write(b""), f"'data' must be 1 to 8192 bytes {BYTES_LIKE} (got 0 bytes)."),
        (lambda a: a.write_register(0, bytes(8192)), "'data' must be 0 to 8191 bytes"),
        (lambda a: a.read(1, address=0x78), "Reading 1 byte from address 0x78 on adapter 'dev' ({dev}): "
         "'address' must be a 7-bit address from 0x03 to 0x77 (got 120)."),
        (lambda a: a.read(1, address=0x02), "'address' must be a 7-bit address from 0x03 to 0x77 (got 2)."),
        (lambda a: a.read_u16(0, byteorder="middle"), "'byteorder' must be 'big' or 'little' (got 'middle')."),
        (lambda a: a.write_u16(0, 0x10000), "'value' must be an integer from 0 to 0xffff (got 65536)."),
        (lambda a: a.transfer([]), f"'messages' must be a list of 1 to 42 messages {PAIRS} (got 0 messages)."),
        (lambda a: a.transfer([("r", 1)] * 43), "(got 43 messages)."),
        (lambda a: a.transfer([("x", 1)]), "'messages[0]' must be a pair ('w', data) or ('r', length) (got ('x', 1))."),
        (lambda a: a.transfer([("r", 1), ("r", 0)]), "'messages[1] length' must be an integer from 1 to 8192 (got 0)."),
        (lambda a: a.transfer([("w", None)]), "'messages[0] data' must be 1 to 8192 bytes"),
    ],
)
def test_argument_validation(env, call, text):
    adapter, chip = open_sim(env, "dev")
    before = chip.bus.transactions
    with pytest.raises(ArgumentError, match=re.escape(text.format(dev=adapter.device))):
        call(adapter)
    assert chip.bus.transactions == before  # nothing reached the bus


def test_settings_are_validated_for_python_callers(tmp_path):
    msg = "invalid value for 'adapters.x.address': 120; allowed: a 7-bit address from 0x03 to 0x77 (3 to 119)"
    with pytest.raises(DeviceFileError, match=re.escape(msg)):
        PeripheryI2C("x", devpath=str(tmp_path / "i2c-1"), address=0x78)
    with pytest.raises(DeviceFileError, match=re.escape("missing setting 'adapters.x.address'")):
        PeripheryI2C("x")
    with pytest.raises(DeviceFileError, match=re.escape("unknown setting 'adapters.x.bus'")):
        PeripheryI2C("x", bus=1, address=0x48)


def test_closed_adapter(env):
    adapter, chip = open_sim(env, "dev")
    adapter.close()
    adapter.close()  # harmless
    assert adapter.closed and "closed" in repr(adapter)
    msg = (
        f"Reading register 0x00 at address 0x48 on adapter 'dev' ({adapter.device}): "
        "the adapter is closed. Fix: open the device again."
    )
    with pytest.raises(AdapterClosedError, match=re.escape(msg)):
        adapter.read_register(0x00)
    with pytest.raises(AdapterClosedError):
        adapter.transfer([("r", 1)])


def test_describe_names_the_device(env):
    adapter, chip = open_sim(env, "dev", address=0x1D)
    info = adapter.describe()
    assert (info["kind"], info["driver"], info["settings"]["address"]) == ("i2c", "periphery", 0x1D)
    assert info["device"] == f"{chip.bus.devpath} @ 0x1d"


def test_absent_bus_node_raises_device_absent_error(tmp_path):
    node = tmp_path / "i2c-7"
    msg = (
        f"Opening I2C bus {node} on adapter 'temp' ({node} @ 0x48): No such file or directory. "
        "Fix: enable the bus (dtparam=i2c_arm=on, or modprobe i2c-dev) and check the bus number."
    )
    with pytest.raises(DeviceAbsentError, match=re.escape(msg)) as info:
        PeripheryI2C("temp", devpath=str(node), address=0x48)
    assert isinstance(info.value, FileNotFoundError) and info.value.errno == errno.ENOENT


def test_permission_denied_names_the_i2c_group(env):
    validated = check_settings(PeripheryI2C, {"address": 0x48})
    sim_settings, chip = attach(env, "temp", "periphery", validated, "tmp102", {})
    chip.bus.inject_error(PermissionError(errno.EACCES, "Permission denied"))
    node = sim_settings["devpath"]
    msg = (
        f"Opening I2C bus {node} on adapter 'temp' ({node} @ 0x48): Permission denied. "
        f"Fix: add the service user to group 'i2c', or add a udev rule granting it {node}."
    )
    with pytest.raises(DevicePermissionError, match=re.escape(msg)):
        PeripheryI2C("temp", **sim_settings)


@pytest.mark.parametrize(
    ("code", "cls", "fix"),
    [
        (errno.EBUSY, DeviceBusyError, "another process holds the device"),
        (errno.ETIMEDOUT, DriverTimeoutError, "check that the peer is powered and connected"),
        (errno.EIO, DriverError, "check the wiring, the pull-ups and the address"),
        (errno.EACCES, DevicePermissionError, "group 'i2c'"),
    ],
)
def test_transfer_errors_map_to_the_error_tree(env, code, cls, fix):
    adapter, chip = open_sim(env, "dev")
    chip.bus.inject_error(OSError(code, os.strerror(code)))
    with pytest.raises(cls, match=re.escape(f"Reading register 0x00 at address 0x48 on adapter 'dev'")) as info:
        adapter.read_register(0x00)
    assert fix in str(info.value) and info.value.errno == code
    assert adapter.read_register(0x00) == b"\x00"  # one injected failure only


@pytest.mark.parametrize(
    ("device", "node", "bus"),
    [
        ("/dev/i2c-1 @ 0x48", None, "1"),  # PeripheryI2C's device string names its bus
        ("/dev/i2c-1 @ 0x48", "/dev/i2c-1", "1"),
        ("bus 3", "/dev/i2c-3", "3"),
        ("/dev/i2c-12", None, "12"),
        ("/srv/sim/dev/i2c-1 @ 0x48", None, "BUS"),  # not an i2c-dev node: no number to give
        ("/dev/i2c-1 @ 0x48", "/dev/i2c-sim", "BUS"),
    ],
)
def test_nack_fix_names_the_bus_number_of_an_i2c_dev_node(device, node, bus):
    err = driver_error("Reading from address 0x48", "i2c", "temp", device, OSError(errno.ENXIO, "No such device or address"), node=node)
    assert isinstance(err, NackError) and err.errno == errno.ENXIO
    assert str(err) == (
        f"Reading from address 0x48 on adapter 'temp' ({device}): no acknowledge (No such device or address). "
        f"Fix: check the wiring, the pull-ups and the address (i2cdetect -y {bus} lists what answers)."
    )
    denied = driver_error("Opening I2C bus", "i2c", "temp", device, PermissionError(errno.EACCES, "Permission denied"), node=node)
    assert str(denied).endswith(f"or add a udev rule granting it {node or device}.")


def test_a_node_that_is_not_an_i2c_bus(tmp_path):
    bus = SimI2CBus(tmp_path / "i2c-9", functionality=0)
    try:
        with pytest.raises(DriverError, match=re.escape('I2C not supported on device')):
            PeripheryI2C("x", devpath=bus.devpath, address=0x48)
    finally:
        bus.close()


def test_the_bus_enforces_i2c_dev_limits(env):
    periphery = pytest.importorskip("periphery")
    adapter, chip = open_sim(env, "dev")
    with periphery.I2C(chip.bus.devpath) as raw:
        with pytest.raises(periphery.I2CError) as info:
            raw.transfer(0x48, [periphery.I2C.Message([0], read=True)] * 43)
        assert info.value.errno == errno.EINVAL
        with pytest.raises(periphery.I2CError) as info:
            raw.transfer(0x48, [periphery.I2C.Message([0], flags=0x0010)])  # 10-bit address
        assert info.value.errno == errno.EOPNOTSUPP
    assert chip.bus.transfer([(0x48, "w", b"\x05\x07"), (0x48, "w", b"\x05"), (0x48, "r", 1)]) == [b"\x07"]


def test_closing_the_environment_releases_the_node(env):
    adapter, chip = open_sim(env, "dev")
    bus = chip.bus
    key = PROXY._key(bus.devpath)
    assert PROXY._handlers[key] is bus
    env.close()
    assert adapter.closed
    assert key not in PROXY._handlers
    assert not os.path.exists(bus.devpath)


def test_missing_periphery_raises_driver_unavailable(env, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "periphery", None)
    text = (
        "the driver needs the Python module 'periphery' (package python-periphery), which is not installed. "
        "Fix: pip install 'lgembed[hardware]'"
    )
    with pytest.raises(DriverUnavailableError, match=re.escape(f"Opening i2c adapter 'temp': {text}")):
        PeripheryI2C("temp", devpath=str(tmp_path / "i2c-1"), address=0x48)
    with pytest.raises(DriverUnavailableError, match=re.escape(text)):
        attach(env, "temp", "periphery", {"devpath": "/dev/i2c-1", "address": 0x48}, None, {})


def test_models_without_a_bus(env):
    chip = INA219(bus_volts=3.3, current_amps=0.25)
    chip.write(bytes([0x05, 0x10, 0x00]))
    chip.convert()
    chip.write(b"\x04")
    assert chip.read(2) == (2500).to_bytes(2, "big")
    eeprom = EEPROM24C02(contents=[1, 2, 3])
    eeprom.write(b"\x01")
    assert eeprom.read(2) == b"\x02\x03"
    with pytest.raises(ValueError, match=re.escape("address 0x48 is taken")):
        bus = SimI2CBus(env.path("dev", "extra"))
        env.on_close(bus.close)
        bus.add(0x48, I2CDevice())
        bus.add(0x48, I2CDevice())
