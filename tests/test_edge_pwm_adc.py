"""PWM (`lgembed.edge.pwm`) and ADC (`lgembed.edge.adc`) drivers against their simulators.

Both drivers only read and write sysfs files, so the simulators' plain-file trees run
their code unchanged; a few trees are built by hand in tmp_path for the export flow
and for files a driver may or may not find (shared scale, offset).
"""

from __future__ import annotations

import errno
import math
import re
import threading
import time
from pathlib import Path

import pytest

from lgembed.edge._base import check_settings
from lgembed.edge.adc import IioADC
from lgembed.edge.errors import (
    AdapterClosedError,
    ArgumentError,
    DeviceAbsentError,
    DeviceFileError,
    DevicePermissionError,
    DriverError,
    DriverTimeoutError,
)
from lgembed.edge.pwm import SysfsPWM
from lgembed.edge.sim import SimEnv
from lgembed.edge.sim import adc as simadc
from lgembed.edge.sim import pwm as simpwm
from lgembed.edge.sim.adc import SimADC
from lgembed.edge.sim.pwm import SimPWM


@pytest.fixture
def env():
    e = SimEnv()
    yield e
    e.close()


@pytest.fixture
def opened():
    adapters: list = []
    yield adapters
    for a in adapters:
        a.close()


def _pwm(env, opened, name="fan", options=None, **settings):
    checked = check_settings(SysfsPWM, settings)
    new, sim = simpwm.attach(env, name, "sysfs", checked, None, options or {})
    adapter = SysfsPWM(name, **new)
    opened.append(adapter)
    return adapter, sim, new


def _adc(env, opened, name="probe", options=None, **settings):
    checked = check_settings(IioADC, settings)
    new, sim = simadc.attach(env, name, "iio", checked, None, options or {})
    adapter = IioADC(name, **new)
    opened.append(adapter)
    return adapter, sim, new


# --- PWM -------------------------------------------------------------------------------


def test_pwm_opens_with_its_settings(env, opened):
    fan, sim, new = _pwm(env, opened, channel=1, frequency=25000.0, duty_cycle=0.4)
    d = Path(new["sysfs_root"]) / "pwmchip0" / "pwm1"
    assert {n: (d / n).read_text() for n in ("period", "duty_cycle", "enable", "polarity")} == {
        "period": "40000\n",
        "duty_cycle": "16000\n",
        "enable": "1\n",
        "polarity": "normal\n",
    }
    assert isinstance(sim, SimPWM) and sim.path == d
    assert (sim.period_ns, sim.duty_ns, sim.enabled, sim.polarity) == (40000, 16000, True, "normal")
    assert sim.frequency == pytest.approx(25000.0) and sim.duty_cycle == pytest.approx(0.4)
    assert fan.device == str(d)


def test_pwm_duty_frequency_and_enable_round_trip(env, opened):
    fan, sim, _ = _pwm(env, opened, channel=0)
    assert (fan.frequency, fan.duty_cycle, fan.enabled) == (1000.0, 0.0, True)
    fan.duty_cycle = 0.25
    assert sim.duty_ns == 250_000 and sim.duty_cycle == 0.25 and fan.read() == 0.25
    fan.frequency = 50.0  # a longer period: period first, then duty
    assert (sim.period_ns, sim.duty_ns) == (20_000_000, 5_000_000)
    assert fan.frequency == 50.0 and fan.duty_cycle == 0.25 and fan.period == 0.02
    fan.period = 0.0001  # shorter than the old duty: duty first, then period
    assert (sim.period_ns, sim.duty_ns) == (100_000, 25_000)
    assert sim.frequency == pytest.approx(10_000.0)
    fan.duty_cycle = 1
    assert sim.duty_cycle == 1.0
    fan.disable()
    assert sim.enabled is False and sim.duty_cycle == 0.0 and fan.enabled is False
    assert fan.duty_cycle == 1.0  # the setting is kept while stopped
    fan.enable()
    assert sim.enabled and sim.duty_cycle == 1.0
    fan.enabled = False
    assert not sim.enabled


def test_pwm_keeps_duty_le_period_after_every_write(env, opened, monkeypatch):
    fan, sim, _ = _pwm(env, opened, channel=0, frequency=1000.0, duty_cycle=0.9)
    checks: list[tuple[int, int]] = []
    real = SysfsPWM._write_path

    def watch(path, text):
        real(path, text)
        checks.append((sim.duty_ns, sim.period_ns))

    monkeypatch.setattr(SysfsPWM, "_write_path", staticmethod(watch))
    for hz in (100_000.0, 10.0, 7_000.0, 3.0, 1e6, 1000.0):
        fan.frequency = hz
        assert fan.duty_cycle == pytest.approx(0.9, rel=1e-5)
    assert checks and all(duty <= period for duty, period in checks)
    assert (sim.period_ns, sim.duty_ns) == (1_000_000, 900_000)  # the fraction asked for, not a drifted one


def test_pwm_polarity(env, opened):
    fan, sim, _ = _pwm(env, opened, channel=0, polarity="inversed", duty_cycle=0.5)
    assert sim.polarity == "inversed" and fan.polarity == "inversed" and sim.enabled
    fan.polarity = "normal"
    assert sim.polarity == "normal" and sim.enabled  # stopped for the change, restarted
    with pytest.raises(ArgumentError, match=re.escape("polarity must be 'normal' or 'inversed', got 'reverse'.")):
        fan.polarity = "reverse"


def test_pwm_opened_disabled_stays_disabled(env, opened):
    _, sim, _ = _pwm(env, opened, channel=0, enabled=False, duty_cycle=0.5)
    assert sim.enabled is False and sim.duty_ns == 500_000 and sim.duty_cycle == 0.0


def test_pwm_argument_ranges(env, opened):
    fan, sim, new = _pwm(env, opened, channel=0)
    where = f"on adapter 'fan' ({new['sysfs_root']}/pwmchip0/pwm0)"
    for bad in (1.5, -0.1, math.nan, "0.5", True, None):
        with pytest.raises(ArgumentError, match=re.escape(f"Setting the duty cycle of PWM channel 0 {where}: duty_cycle must be a number from 0.0 to 1.0, got {bad!r}.")):
            fan.duty_cycle = bad
    for bad in (0, -5.0, math.inf, 2e9, "1k"):
        with pytest.raises(ArgumentError, match=re.escape(f"frequency must be a number of hertz above 0 and at most 1e9, got {bad!r}.")):
            fan.frequency = bad
    for bad in (0.0, 1e-12, -1.0, math.nan):
        with pytest.raises(ArgumentError, match=re.escape(f"period must be a number of seconds of at least 1e-9, got {bad!r}.")):
            fan.period = bad
    with pytest.raises(ArgumentError, match=re.escape("enabled must be True or False, got 1.")):
        fan.enabled = 1
    assert (sim.period_ns, sim.duty_ns) == (1_000_000, 0)  # nothing was written


def test_pwm_settings_are_checked():
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.fan.duty_cycle': 1.2; allowed: a number from 0.0 to 1.0")):
        check_settings(SysfsPWM, {"channel": 0, "duty_cycle": 1.2}, "", "adapters.fan")
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.fan.frequency': 0.0; allowed: a number of hertz above 0")):
        SysfsPWM("fan", channel=0, frequency=0)
    with pytest.raises(DeviceFileError, match=re.escape("missing setting 'adapters.fan.channel'")):
        SysfsPWM("fan")


def test_pwm_channel_beyond_npwm(env):
    settings = check_settings(SysfsPWM, {"channel": 2})
    new, _ = simpwm.attach(env, "fan", "sysfs", settings, None, {"npwm": 2})
    with pytest.raises(DeviceAbsentError) as info:
        SysfsPWM("fan", **new)
    assert str(info.value) == (
        f"Opening PWM channel 2 of pwmchip0 on adapter 'fan' ({new['sysfs_root']}/pwmchip0/pwm2): pwmchip0 has "
        "2 channel(s) (npwm = 2), no channel 2. Fix: use a channel from 0 to 1, or another chip."
    )


def test_pwm_absent_chip(tmp_path):
    root = tmp_path / "pwm"
    root.mkdir()
    with pytest.raises(DeviceAbsentError) as info:
        SysfsPWM("fan", channel=0, chip=3, sysfs_root=str(root))
    assert str(info.value) == (
        f"Opening PWM channel 0 of pwmchip3 on adapter 'fan' ({root}/pwmchip3/pwm0): {root}/pwmchip3 does not exist. "
        "Fix: enable the PWM overlay (e.g. dtoverlay=pwm-2chan) and check the chip number."
    )


def _pwm_chip(root: Path, npwm: int = 2) -> Path:
    chip = root / "pwmchip0"
    chip.mkdir(parents=True)
    for name, text in (("npwm", f"{npwm}\n"), ("export", ""), ("unexport", "")):
        (chip / name).write_text(text)
    return chip


def test_pwm_exports_waits_and_unexports(tmp_path):
    chip = _pwm_chip(tmp_path / "pwm")

    def kernel():  # the kernel creates pwm1/ on export; udev fixes permissions a bit later
        deadline = time.monotonic() + 5
        while (chip / "export").read_text().strip() != "1" and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(0.03)
        (chip / "pwm1").mkdir()
        for name, text in (("period", "0"), ("duty_cycle", "0"), ("enable", "0"), ("polarity", "normal")):
            (chip / "pwm1" / name).write_text(text + "\n")

    t = threading.Thread(target=kernel, daemon=True)
    t.start()
    led = SysfsPWM("led", channel=1, frequency=500.0, duty_cycle=0.5, sysfs_root=str(tmp_path / "pwm"))
    t.join()
    assert (chip / "pwm1" / "period").read_text() == "2000000\n" and (chip / "pwm1" / "enable").read_text() == "1\n"
    led.close()
    assert (chip / "unexport").read_text() == "1\n"
    assert (chip / "pwm1" / "enable").read_text() == "1\n"  # closing does not stop the output


def test_pwm_export_timeout(tmp_path):
    chip = _pwm_chip(tmp_path / "pwm")
    with pytest.raises(DriverTimeoutError) as info:
        SysfsPWM("fan", channel=0, sysfs_root=str(tmp_path / "pwm"), export_timeout=0.02)
    assert str(info.value).startswith(
        f"Opening PWM channel 0 of pwmchip0 on adapter 'fan' ({chip}/pwm0): {chip}/pwm0 did not appear within "
        f"export_timeout = 0.02 s after writing 0 to {chip}/export (timed out). Fix: raise export_timeout"
    )
    assert (chip / "unexport").read_text() == "0\n"


def test_pwm_permission_and_kernel_refusal_are_mapped(env, opened, monkeypatch):
    fan, _, new = _pwm(env, opened, channel=0)
    real = SysfsPWM._write_path

    def refuse(path, text):
        if path.name == "duty_cycle":
            raise PermissionError(errno.EACCES, "Permission denied")
        if path.name == "period":
            raise OSError(errno.EINVAL, "Invalid argument")
        real(path, text)

    monkeypatch.setattr(SysfsPWM, "_write_path", staticmethod(refuse))
    device = f"{new['sysfs_root']}/pwmchip0/pwm0"
    with pytest.raises(DevicePermissionError) as info:
        fan.duty_cycle = 0.5
    assert str(info.value) == (
        f"Setting the duty cycle of PWM channel 0 on adapter 'fan' ({device}): Permission denied. "
        f"Fix: add the service user to group 'gpio', or add a udev rule granting it {device}."
    )
    with pytest.raises(DriverError, match=re.escape("Setting the frequency of PWM channel 0 on adapter 'fan' (")) as info:
        fan.frequency = 2000.0
    assert info.value.errno == errno.EINVAL


def test_pwm_closed(env, opened):
    fan, _, _ = _pwm(env, opened, channel=0)
    fan.close()
    with pytest.raises(AdapterClosedError, match=re.escape("Setting the duty cycle of PWM channel 0 on adapter 'fan' (")):
        fan.duty_cycle = 0.5
    with pytest.raises(AdapterClosedError, match=re.escape("Reading the duty cycle of PWM channel 0")):
        fan.read()
    with pytest.raises(AdapterClosedError, match=re.escape("Enabling PWM channel 0")):
        fan.enable()


def test_pwm_sim_options_and_sharing(env):
    settings = check_settings(SysfsPWM, {"channel": 3})
    new, sim = simpwm.attach(env, "a", "sysfs", settings, None, {})
    chip_dir = Path(new["sysfs_root"]) / "pwmchip0"
    assert (chip_dir / "npwm").read_text() == "4\n" and (chip_dir / "pwm3" / "period").read_text() == "0\n"
    assert simpwm.attach(env, "b", "sysfs", settings, None, {})[1] is sim
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.c.simulation.npwm': 0; allowed: an integer from 1 to 1024")):
        simpwm.attach(env, "c", "sysfs", check_settings(SysfsPWM, {"channel": 0, "chip": 1}), None, {"npwm": 0})
    with pytest.raises(DeviceFileError, match=re.escape("unknown option 'adapters.c.simulation.volts' for the pwm simulator SimPWM; allowed: none")) as info:
        simpwm.attach(env, "c", "sysfs", check_settings(SysfsPWM, {"channel": 0, "chip": 1}), None, {"volts": 1})
    assert info.value.key == "adapters.c.simulation.volts"


# --- ADC -------------------------------------------------------------------------------


def test_adc_volts_through_scale(env, opened):
    probe, sim, new = _adc(env, opened, channel=2, options={"volts": 1.65})
    assert isinstance(sim, SimADC) and sim.raw == 2048
    assert probe.read_raw() == 2048
    assert probe.read() == pytest.approx(2048 * 0.805664062 / 1000)
    assert probe.scale == pytest.approx(0.805664062) and probe.offset == 0.0
    sim.volts = 3.0
    assert probe.read() == pytest.approx(3.0, abs=0.001)
    sim.volts = 5.0  # above full scale: the converter saturates
    assert probe.read_raw() == 4095
    sim.volts = -1.0
    assert probe.read_raw() == 0
    sim.raw = 100
    assert probe.read() == pytest.approx(100 * 0.805664062 / 1000)
    assert probe.device == f"{new['sysfs_root']}/iio:device0/in_voltage2_raw"


def test_adc_offset_and_bits(env, opened):
    probe, sim, new = _adc(env, opened, channel=0, options={"volts": 1.0, "scale": 0.5, "offset": -100.0, "bits": 10})
    assert sim.raw == 1023  # 1.0 V -> 2000 + 100 counts, clamped to 10 bits
    sim.volts = 0.2
    assert sim.raw == 500 and probe.read_raw() == 500
    assert probe.read() == pytest.approx((500 - 100) * 0.5 / 1000)
    assert probe.offset == -100.0
    assert (Path(new["sysfs_root"]) / "iio:device0" / "in_voltage0_offset").read_text() == "-100\n"
    with pytest.raises(ValueError, match=re.escape("SimADC.raw: must be an integer from 0 to 1023 (got 1024)")):
        sim.raw = 1024


def test_adc_settings_override_the_files(env, opened):
    probe, sim, _ = _adc(env, opened, channel=1, scale=2.0, offset=10, options={"volts": 0.0})
    sim.raw = 40
    assert probe.read() == pytest.approx((40 + 10) * 2.0 / 1000)
    assert probe.scale == 2.0 and probe.offset == 10.0


def _iio(root: Path, files: dict[str, str]) -> Path:
    d = root / "iio:device1"
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name).write_text(text + "\n")
    return d


def test_adc_shared_scale_and_offset_files(tmp_path):
    _iio(tmp_path, {"in_voltage3_raw": "1000", "in_voltage_scale": "0.125", "in_voltage_offset": "24"})
    adc = IioADC("ads", device=1, channel=3, sysfs_root=str(tmp_path))
    assert adc.read() == pytest.approx((1000 + 24) * 0.125 / 1000)
    adc.close()


def test_adc_missing_files(tmp_path):
    with pytest.raises(DeviceAbsentError) as info:
        IioADC("ads", device=4, channel=0, sysfs_root=str(tmp_path))
    assert str(info.value) == (
        f"Opening ADC channel 0 of iio:device4 on adapter 'ads' ({tmp_path}/iio:device4/in_voltage0_raw): "
        f"{tmp_path}/iio:device4 does not exist. Fix: check the IIO device number (ls /sys/bus/iio/devices) "
        "and that its driver is loaded."
    )
    d = _iio(tmp_path, {"in_voltage0_raw": "7"})
    with pytest.raises(DeviceAbsentError) as info:
        IioADC("ads", device=1, channel=5, sysfs_root=str(tmp_path))
    assert str(info.value) == (
        f"Opening ADC channel 5 of iio:device1 on adapter 'ads' ({d}/in_voltage5_raw): No such file or directory. "
        "Fix: check the IIO device number (ls /sys/bus/iio/devices) and that its driver is loaded."
    )
    with pytest.raises(DeviceAbsentError) as info:
        IioADC("ads", device=1, channel=0, sysfs_root=str(tmp_path))
    assert str(info.value) == (
        f"Opening ADC channel 0 of iio:device1 on adapter 'ads' ({d}/in_voltage0_raw): neither in_voltage0_scale "
        f"nor in_voltage_scale exists in {d}. Fix: set `scale` (millivolts per count) in the device file, or "
        "check that this is the right IIO device (cat name)."
    )
    adc = IioADC("ads", device=1, channel=0, sysfs_root=str(tmp_path), scale=1.0)
    assert adc.read() == pytest.approx(0.007)
    (d / "in_voltage0_raw").unlink()  # the driver was unloaded
    with pytest.raises(DeviceAbsentError, match=re.escape(f"Reading ADC channel 0 on adapter 'ads' ({d}/in_voltage0_raw): No such file or directory. Fix: check the IIO device number")):
        adc.read()
    adc.close()
    with pytest.raises(AdapterClosedError, match=re.escape("Reading ADC channel 0 on adapter 'ads'")):
        adc.read()


def test_adc_garbage_and_permission(tmp_path, monkeypatch):
    d = _iio(tmp_path, {"in_voltage0_raw": "abc", "in_voltage0_scale": "1.0"})
    with pytest.raises(DriverError, match=re.escape(f"{d}/in_voltage0_raw holds 'abc', not a number.")) as info:
        IioADC("ads", device=1, channel=0, sysfs_root=str(tmp_path))
    assert info.value.errno == errno.EIO
    (d / "in_voltage0_raw").write_text("12\n")
    adc = IioADC("ads", device=1, channel=0, sysfs_root=str(tmp_path))

    def deny(path, typ):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(IioADC, "_read_number", staticmethod(deny))
    with pytest.raises(DevicePermissionError, match=re.escape("Permission denied. Fix: add the service user to group 'iio'")):
        adc.read_raw()
    adc.close()


def test_adc_settings_and_sim_options(env):
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.p.scale': 0.0; allowed: a number above 0 (millivolts per count)")):
        IioADC("p", channel=0, scale=0)
    assert check_settings(IioADC, {"channel": 0})["scale"] is None
    settings = check_settings(IioADC, {"channel": 0})
    cases = [
        ({"bits": 0}, "adapters.p.simulation.bits", "invalid value for 'adapters.p.simulation.bits': 0; allowed: an integer from 1 to 32"),
        ({"scale": -1}, "adapters.p.simulation.scale", "invalid value for 'adapters.p.simulation.scale': -1.0; allowed: a number above 0"),
        ({"volts": "1"}, "adapters.p.simulation.volts", "invalid value for 'adapters.p.simulation.volts': '1'; allowed: a number"),
        ({"celsius": 1}, "adapters.p.simulation.celsius", "unknown option 'adapters.p.simulation.celsius' for the adc simulator SimADC; allowed: bits, offset, scale, volts"),
    ]
    for options, key, text in cases:
        with pytest.raises(DeviceFileError, match=re.escape(text)) as info:
            simadc.attach(env, "p", "iio", settings, None, options, "dev.toml")
        assert info.value.key == key
    _, sim = simadc.attach(env, "p", "iio", settings, None, {"volts": 2})
    assert simadc.attach(env, "q", "iio", settings, None, {})[1] is sim
    with pytest.raises(DeviceFileError, match="already simulated for another adapter"):
        simadc.attach(env, "r", "iio", settings, None, {"volts": 1.0})


# --- a whole device file, simulated ------------------------------------------------------


def test_device_file_with_gpio_pwm_and_adc(tmp_path):
    from lgembed.edge.device import load_device

    toml = tmp_path / "greenhouse.toml"
    toml.write_text(
        """
[device]
name = "greenhouse"

[adapters.heater]
kind = "gpio"
line = 17
direction = "out"

[adapters.door]
kind = "gpio"
driver = "sysfs"
line = 529
edge = "both"
simulation = { value = true }

[adapters.fan]
kind = "pwm"
channel = 0
frequency = 25000
duty_cycle = 0.5

[adapters.soil]
kind = "adc"
channel = 1
simulation = { volts = 1.2, scale = 0.5 }

[world]
model = "room"
heater = "heater"
fan = "fan"
clock = "manual"
temperature = 10.0
outside = 10.0
"""
    )
    with load_device(toml, simulate=True) as dev:
        heater, line = dev.adapter("heater", "gpio"), dev.simulation("heater")
        heater.write(True)
        assert line.value is True and dev.world.heater_on is True  # on_change reached the world
        assert dev.adapter("door").read() is True
        dev.simulation("door").value = False
        assert dev.adapter("door").read_event(timeout=5.0).edge == "falling"
        assert dev.simulation("fan").duty_cycle == 0.5
        dev.adapter("fan").duty_cycle = 0.8
        assert dev.simulation("fan").duty_cycle == pytest.approx(0.8)
        assert dev.adapter("soil").read() == pytest.approx(1.2)
        assert dev.world.advance(60.0) > 10.0
