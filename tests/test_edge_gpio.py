"""GPIO drivers (`lgembed.edge.gpio`) against the GPIO simulator (`lgembed.edge.sim.gpio`).

The character-device tests run periphery's real CdevGPIO: its ioctls reach a
`SimGpioChip` through the `_ioctl` proxy and its line descriptor is the simulator's
pipe, so requests, values and `gpio_v2_line_event` reads go through periphery's own
code. The sysfs tests use the simulator's plain-file tree, or a tree built here in
tmp_path with a thread standing in for the kernel and udev on export.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

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
)
from lgembed.edge.gpio import CdevGPIO, GpioEdge, SysfsGPIO
from lgembed.edge.sim import SimEnv
from lgembed.edge.sim import gpio as simgpio
from lgembed.edge.sim.gpio import SimGpioChip, SimLine

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env():
    e = SimEnv()
    yield e
    e.close()


@pytest.fixture
def opened():
    """Adapters opened by a test, closed at its end."""
    adapters: list = []
    yield adapters
    for a in adapters:
        a.close()


def _open(env, opened, cls, name, options=None, model=None, **settings):
    checked = check_settings(cls, settings)
    new, sim = simgpio.attach(env, name, cls.driver, checked, model, options or {})
    adapter = cls(name, **new)
    opened.append(adapter)
    return adapter, sim, new


def _later(delay, fn, *args):
    t = threading.Timer(delay, fn, args)
    t.daemon = True
    t.start()
    return t


def _wait_for(predicate, timeout=2.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


# --- character device: values --------------------------------------------------------


def test_cdev_output_write_reaches_the_sim_line(env, opened):
    led, line, _ = _open(env, opened, CdevGPIO, "led", line=17, direction="out")
    seen: list[bool] = []
    line.on_change.append(seen.append)
    assert line.value is False and line.direction == "out" and line.consumer == "lgembed"
    led.write(True)
    assert line.value is True
    led.write(False)
    led.write(1)
    assert seen == [True, False, True]
    assert [lvl for _, lvl in line.history] == [True, False, True]
    assert led.read() is True
    assert led.direction == "out" and led.device.endswith("gpiochip0 line 17")


def test_cdev_high_and_low_directions_set_the_electrical_level(env, opened):
    _, high, _ = _open(env, opened, CdevGPIO, "a", line=1, direction="high")
    _, low, _ = _open(env, opened, CdevGPIO, "b", line=2, direction="low")
    inv, high_inv, _ = _open(env, opened, CdevGPIO, "c", line=3, direction="high", inverted=True)
    assert (high.value, low.value, high_inv.value) == (True, False, True)
    assert inv.read() is False  # electrically high = logically inactive when active-low


def test_cdev_inverted_output_drives_the_inverse_level(env, opened):
    relay, line, _ = _open(env, opened, CdevGPIO, "relay", line=22, direction="out", inverted=True)
    assert line.value is False and line.active_low is True  # "out" starts electrically low, as the kernel's
    assert relay.read() is True
    relay.write(False)
    assert line.value is True
    relay.write(True)
    assert line.value is False


def test_cdev_input_reads_the_sim_level(env, opened):
    btn, line, _ = _open(env, opened, CdevGPIO, "btn", options={"value": True}, line=4, bias="pull_up")
    assert btn.read() is True and line.bias == "pull_up" and line.direction == "in"
    line.value = False
    assert btn.read() is False
    inv, line2, _ = _open(env, opened, CdevGPIO, "inv", line=5, inverted=True)
    assert inv.read() is True
    line2.set(True)
    assert inv.read() is False


def test_sim_refuses_to_set_a_driven_output(env, opened):
    _, line, _ = _open(env, opened, CdevGPIO, "led", line=17, direction="out")
    with pytest.raises(ValueError, match="output driven by 'lgembed'"):
        line.value = True
    with pytest.raises(TypeError):
        line.set("high")


def test_cdev_line_info_through_periphery(env, opened):
    led, _, _ = _open(env, opened, CdevGPIO, "led", line=17, direction="out", label="heater")
    gpio = led._gpio  # periphery's object: its name/label/chip queries are more ioctls
    assert (gpio.name, gpio.label, gpio.chip_name, gpio.chip_label) == ("GPIO17", "heater", "gpiochip0", "lgembed-sim")


# --- character device: edges ----------------------------------------------------------


@pytest.mark.parametrize(
    ("edge", "expected"),
    [
        ("rising", [("rising", True), ("rising", True)]),
        ("falling", [("falling", False), ("falling", False)]),
        ("both", [("rising", True), ("falling", False), ("rising", True), ("falling", False)]),
    ],
)
def test_cdev_edges_are_read_through_periphery(env, opened, edge, expected):
    btn, line, _ = _open(env, opened, CdevGPIO, "btn", line=27, edge=edge)
    assert line.edge == edge
    before = time.time_ns()
    for level in (True, False, True, False):
        line.set(level)
    got = []
    while btn.poll(0):
        got.append(btn.read_event(timeout=1.0))
    assert [(e.edge, e.value) for e in got] == expected
    assert all(isinstance(e, GpioEdge) and before <= e.timestamp <= time.time_ns() for e in got)
    assert [e.timestamp for e in got] == sorted(e.timestamp for e in got)


def test_cdev_edge_from_another_thread_wakes_read_event(env, opened):
    btn, line, _ = _open(env, opened, CdevGPIO, "btn", line=27, edge="rising")
    _later(0.05, line.set, True)
    ev = btn.read_event(timeout=5.0)
    assert ev.edge == "rising" and ev.value is True and btn.read() is True


def test_cdev_inverted_input_reports_logical_edges(env, opened):
    btn, line, _ = _open(env, opened, CdevGPIO, "btn", options={"value": True}, line=6, edge="rising", inverted=True)
    line.value = False  # pressed: pulled low = logically active
    assert btn.read_event(timeout=1.0)[:1] == ("rising",)
    line.value = True  # a logical falling edge: not asked for
    assert btn.poll(0) is False


def test_cdev_read_event_times_out(env, opened):
    btn, _, _ = _open(env, opened, CdevGPIO, "btn", line=27, edge="both")
    assert btn.poll(0) is False and btn.poll(0.02) is False
    msg = "Waiting for an edge on GPIO line 27 on adapter 'btn' ("
    with pytest.raises(DriverTimeoutError, match=re.escape(msg)) as info:
        btn.read_event(timeout=0.05)
    assert "no edge within 0.05 s (timed out). Fix: check the wiring" in str(info.value)
    assert info.value.errno == errno.ETIMEDOUT and isinstance(info.value, TimeoutError)


def test_edge_calls_need_an_edge_and_a_good_timeout(env, opened):
    btn, _, _ = _open(env, opened, CdevGPIO, "btn", line=27)
    with pytest.raises(ArgumentError, match=re.escape("opened without edge detection (edge 'none'). Fix: set edge")):
        btn.read_event(timeout=0.1)
    with pytest.raises(ArgumentError, match=re.escape("opened without edge detection")):
        btn.poll(0)
    edgy, _, _ = _open(env, opened, CdevGPIO, "edgy", line=28, edge="both")
    for bad in (-1, "1", True):
        with pytest.raises(ArgumentError, match=re.escape(f"timeout must be a number of seconds from 0 up, or None to wait without limit, got {bad!r}")):
            edgy.poll(bad)


def test_edge_on_an_output_is_a_device_file_error(env):
    settings = check_settings(CdevGPIO, {"line": 3, "direction": "out", "edge": "rising"})
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.x.edge': 'rising'; allowed: 'none' on an output")) as info:
        CdevGPIO("x", **settings)
    assert info.value.key == "adapters.x.edge"


def test_write_arguments(env, opened):
    btn, _, _ = _open(env, opened, CdevGPIO, "btn", line=27)
    msg = "Writing GPIO line 27 on adapter 'btn' ("
    with pytest.raises(ArgumentError, match=re.escape(msg)) as info:
        btn.write(True)
    assert "the line is an input (direction 'in'). Fix: open it with direction 'out'" in str(info.value)
    led, _, _ = _open(env, opened, CdevGPIO, "led", line=17, direction="out")
    for bad in ("on", 2, None, 1.0):
        with pytest.raises(ArgumentError, match=re.escape(f"value must be True or False (or 1 or 0), got {bad!r}.")):
            led.write(bad)


# --- character device: errors ----------------------------------------------------------


def test_cdev_same_line_twice_is_busy_until_released(env, opened):
    first, line, settings = _open(env, opened, CdevGPIO, "first", line=17, direction="out")
    with pytest.raises(DeviceBusyError) as info:
        CdevGPIO("second", **settings)
    text = str(info.value)
    assert text.startswith("Opening GPIO line 17 on adapter 'second' (")
    assert text.endswith(
        "gpiochip0 line 17): Device or resource busy. Fix: another process or kernel driver holds the line "
        "(gpioinfo shows its consumer); release it first."
    )
    assert info.value.errno == errno.EBUSY
    first.close()
    assert line.requested is False and line.consumer is None
    second = CdevGPIO("second", **settings)
    opened.append(second)
    assert line.requested is True


def test_cdev_two_adapters_on_one_chip_share_it(env, opened):
    _, a, sa = _open(env, opened, CdevGPIO, "a", line=1, direction="out")
    _, b, sb = _open(env, opened, CdevGPIO, "b", line=2)
    assert sa["path"] == sb["path"] and env.shared[("gpiochip", "/dev/gpiochip0")].line(2) is b


def test_cdev_line_beyond_the_chip(env):
    settings = check_settings(CdevGPIO, {"line": 54})
    new, sim = simgpio.attach(env, "far", "cdev", settings, None, {})
    with pytest.raises(DriverError) as info:
        CdevGPIO("far", **new)
    assert type(info.value) is DriverError and info.value.errno == errno.EINVAL
    assert str(info.value) == (
        f"Opening GPIO line 54 on adapter 'far' ({new['path']} line 54): Invalid argument (the chip has no line 54, "
        f"or refused the requested configuration). Fix: check the line number (gpioinfo {new['path']} lists the lines)."
    )
    small = check_settings(CdevGPIO, {"line": 8, "path": "/dev/gpiochip1"})
    new, _ = simgpio.attach(env, "small", "cdev", small, None, {"lines": 8})
    with pytest.raises(DriverError, match=re.escape("the chip has no line 8")):
        CdevGPIO("small", **new)


def test_cdev_absent_chip(tmp_path):
    path = str(tmp_path / "gpiochip9")
    with pytest.raises(DeviceAbsentError) as info:
        CdevGPIO("led", path=path, line=1)
    assert str(info.value) == (
        f"Opening GPIO line 1 on adapter 'led' ({path} line 1): No such file or directory. "
        "Fix: check the chip path (gpiodetect lists chips) and the line number."
    )


def test_cdev_permission_denied(env):
    settings = check_settings(CdevGPIO, {"line": 17, "direction": "out"})
    new, _ = simgpio.attach(env, "led", "cdev", settings, None, {})
    chip: SimGpioChip = env.shared[("gpiochip", "/dev/gpiochip0")]
    chip.inject_error(PermissionError(errno.EACCES, "Permission denied"))
    with pytest.raises(DevicePermissionError) as info:
        CdevGPIO("led", **new)
    assert str(info.value) == (
        f"Opening GPIO line 17 on adapter 'led' ({new['path']} line 17): Permission denied. "
        f"Fix: add the service user to group 'gpio', or add a udev rule granting it {new['path']}."
    )
    assert isinstance(info.value, PermissionError)
    led = CdevGPIO("led", **new)  # one injected error only
    led.close()


def test_cdev_error_while_running_is_mapped(env, opened):
    led, _, _ = _open(env, opened, CdevGPIO, "led", line=17, direction="out")
    env.shared[("gpiochip", "/dev/gpiochip0")].inject_error(OSError(errno.EIO, "Input/output error"))
    with pytest.raises(DriverError, match=re.escape("Writing GPIO line 17 on adapter 'led' (")) as info:
        led.write(True)
    assert info.value.errno == errno.EIO and "Input/output error. Fix: check the device" in str(info.value)


def test_closed_adapter(env, opened):
    btn, _, _ = _open(env, opened, CdevGPIO, "btn", line=27, edge="both")
    led, _, _ = _open(env, opened, CdevGPIO, "led", line=17, direction="out")
    btn.close()
    btn.close()
    led.close()
    for call, action in (
        (btn.read, "Reading GPIO line 27"),
        (lambda: led.write(True), "Writing GPIO line 17"),
        (lambda: btn.read_event(0.1), "Waiting for an edge on GPIO line 27"),
        (lambda: btn.poll(0), "Waiting for an edge on GPIO line 27"),
    ):
        with pytest.raises(AdapterClosedError, match=re.escape(f"{action} on adapter '")):
            call()
    assert btn.closed and "closed" in repr(btn)


def test_close_from_another_thread_ends_a_wait(env, opened):
    btn, _, _ = _open(env, opened, CdevGPIO, "btn", line=27, edge="both")
    _later(0.05, btn.close)
    with pytest.raises(AdapterClosedError):
        btn.read_event(timeout=None)


def test_missing_periphery_is_driver_unavailable(env, monkeypatch):
    from lgembed.edge import _base

    # _base.require_library raises DriverUnavailableError without importing it (reported
    # to the lead); supply the name so this test checks the driver's side either way
    monkeypatch.setattr(_base, "DriverUnavailableError", DriverUnavailableError, raising=False)
    monkeypatch.setitem(sys.modules, "periphery", None)
    with pytest.raises(DriverUnavailableError) as info:
        CdevGPIO("led", line=17)
    assert str(info.value) == (
        "Opening gpio adapter 'led': the driver needs the Python module 'periphery' (package python-periphery), "
        "which is not installed. Fix: pip install 'lgembed[hardware]'"
    )
    assert isinstance(info.value, ImportError)


def test_importing_the_modules_loads_no_hardware_library():
    code = (
        "import sys\n"
        "import lgembed.edge.gpio, lgembed.edge.pwm, lgembed.edge.adc\n"
        "import lgembed.edge.sim.gpio, lgembed.edge.sim.pwm, lgembed.edge.sim.adc\n"
        "print(sorted(m for m in ('periphery', 'serial', 'can') if m in sys.modules))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# --- the v1 uAPI (kernels before 5.10), through periphery's Cdev1GPIO ------------------


def test_cdev_v1_abi(env):
    g1 = pytest.importorskip("periphery.gpio_cdev1")
    settings = check_settings(CdevGPIO, {"line": 5})
    new, line = simgpio.attach(env, "b", "cdev", settings, None, {})
    chip = env.shared[("gpiochip", "/dev/gpiochip0")]
    out = g1.Cdev1GPIO(new["path"], 4, "out", inverted=True)
    try:
        out.write(True)
        assert chip.line(4).value is False and chip.line(4).consumer == "periphery"
        with pytest.raises(OSError, match="busy"):
            g1.Cdev1GPIO(new["path"], 4, "in")
        inp = g1.Cdev1GPIO(new["path"], 5, "in", edge="both")
        try:
            line.set(True)
            line.set(False)
            assert inp.poll(1.0)
            assert inp.read_event().edge == "rising" and inp.read_event().edge == "falling"
            assert inp.read() is False
        finally:
            inp.close()
    finally:
        out.close()


# --- simulator options -----------------------------------------------------------------


class Bouncy(SimLine):
    """A custom model: a contact that settles after one bounce."""

    def __init__(self, value: bool = False, bounces: int = 1) -> None:
        super().__init__(value)
        self.bounces = bounces

    def press(self) -> None:
        for _ in range(self.bounces):
            self.set(True)
            self.set(False)
        self.set(True)


def test_custom_model_and_option_errors(env, opened):
    btn, sim, _ = _open(env, opened, CdevGPIO, "btn", options={"bounces": 2}, model=f"{__name__}:Bouncy", line=9, edge="rising")
    assert isinstance(sim, Bouncy)
    sim.press()
    rising = 0
    while btn.poll(0):
        rising += btn.read_event(1.0).edge == "rising"
    assert rising == 3
    settings = check_settings(CdevGPIO, {"line": 10})
    cases = [
        ({"value": 1}, "adapters.x.simulation.value", "invalid value for 'adapters.x.simulation.value': 1; allowed: true or false"),
        ({"volts": 1.0}, "adapters.x.simulation.volts", "unknown option 'adapters.x.simulation.volts' for the gpio simulator SimLine; allowed: value"),
        ({"lines": 0}, "adapters.x.simulation.lines", "invalid value for 'adapters.x.simulation.lines': 0; allowed: an integer from 1 to 4096"),
        ({"lines": 60}, "adapters.x.simulation.lines", "chip /dev/gpiochip0 is already simulated with 54 lines"),
    ]
    for options, key, text in cases:
        with pytest.raises(DeviceFileError, match=re.escape(text)) as info:
            simgpio.attach(env, "x", "cdev", settings, None, options, "dev.toml")
        assert info.value.key == key and info.value.source == "dev.toml"
    with pytest.raises(DeviceFileError, match=re.escape("unknown option 'adapters.x.simulation.nope' for the gpio simulator Bouncy")):
        simgpio.attach(env, "x", "cdev", settings, f"{__name__}:Bouncy", {"nope": 1})
    with pytest.raises(DeviceFileError, match=re.escape("'adapters.x.simulator': 'relay'; allowed: 'line'")):
        simgpio.attach(env, "x", "cdev", settings, "relay", {})


def test_two_adapters_on_one_simulated_line_share_the_sim_line(env):
    settings = check_settings(CdevGPIO, {"line": 11})
    _, first = simgpio.attach(env, "a", "cdev", settings, None, {"value": True})
    _, second = simgpio.attach(env, "b", "cdev", settings, None, {})
    assert first is second
    with pytest.raises(DeviceFileError, match="already simulated for another adapter"):
        simgpio.attach(env, "c", "cdev", settings, None, {"value": False})


# --- sysfs: the simulator's tree --------------------------------------------------------


def test_sysfs_output_and_inversion(env, opened):
    led, line, new = _open(env, opened, SysfsGPIO, "led", line=17, direction="out")
    seen: list[bool] = []
    line.on_change.append(seen.append)
    led.write(True)
    assert line.value is True and led.read() is True
    led.write(False)
    assert _wait_for(lambda: line.value is False)
    assert Path(new["sysfs_root"], "gpio17", "value").read_text() == "0\n"
    relay, rline, _ = _open(env, opened, SysfsGPIO, "relay", line=18, direction="high", inverted=True)
    assert rline.value is True and relay.read() is False
    relay.write(True)
    assert rline.value is False


def test_sysfs_on_change_fires_without_a_reader(env, opened):
    led, line, _ = _open(env, opened, SysfsGPIO, "led", line=17, direction="out")
    seen: list[bool] = []
    line.on_change.append(seen.append)
    led.write(True)
    assert _wait_for(lambda: seen == [True])  # the watcher thread saw the driver's write


def test_sysfs_input_reads_and_inverts(env, opened):
    btn, line, _ = _open(env, opened, SysfsGPIO, "btn", options={"value": True}, line=4)
    assert btn.read() is True and line.direction == "in"
    line.value = False
    assert btn.read() is False
    inv, iline, _ = _open(env, opened, SysfsGPIO, "inv", line=5, inverted=True)
    assert inv.read() is True
    iline.set(True)
    assert inv.read() is False
    with pytest.raises(ArgumentError, match="the line is an input"):
        inv.write(True)


@pytest.mark.parametrize(
    ("edge", "levels", "expected"),
    [
        ("rising", (True, False, True), [("rising", True), ("rising", True)]),
        ("falling", (True, False), [("falling", False)]),
        ("both", (True, False), [("rising", True), ("falling", False)]),
    ],
)
def test_sysfs_edges_through_the_polling_fallback(env, opened, edge, levels, expected):
    btn, line, _ = _open(env, opened, SysfsGPIO, "btn", line=27, edge=edge)
    assert btn._notified is False  # a plain file never reports POLLPRI
    got: list[GpioEdge] = []

    def press():
        for level in levels:
            line.set(level)
            time.sleep(0.03)  # longer than the driver's 5 ms sampling

    t = threading.Thread(target=press)
    t.start()
    try:
        for _ in expected:
            got.append(btn.read_event(timeout=5.0))
    finally:
        t.join()
    assert [(e.edge, e.value) for e in got] == expected
    assert btn.poll(0.02) is False


def test_sysfs_inverted_edges_and_timeout(env, opened):
    btn, line, _ = _open(env, opened, SysfsGPIO, "btn", options={"value": True}, line=6, edge="rising", inverted=True)
    _later(0.03, line.set, False)
    assert btn.read_event(timeout=5.0).edge == "rising"
    with pytest.raises(DriverTimeoutError, match=re.escape("no rising edge within 0.03 s (timed out)")):
        btn.read_event(timeout=0.03)


def test_sysfs_notify_mode_consumes_the_kernel_notification(env, opened):
    """On real sysfs poll() reports POLLPRI after an edge; the driver reads the value to
    acknowledge it. A fake poller stands in for the kernel's notification here."""
    import select

    btn, line, _ = _open(env, opened, SysfsGPIO, "btn", line=27, edge="both")

    class Poller:
        def __init__(self):
            self.pending = 1

        def poll(self, timeout):
            if self.pending:
                self.pending -= 1
                return [(btn._event_fd, select.POLLPRI | select.POLLERR)]
            return []

    btn._notified, btn._poller = True, Poller()
    line.set(True)
    ev = btn.read_event(timeout=1.0)
    assert (ev.edge, ev.value) == ("rising", True)
    assert btn.poll(0) is False


def test_sysfs_closed_adapter(env, opened):
    led, _, _ = _open(env, opened, SysfsGPIO, "led", line=17, direction="out")
    led.close()
    with pytest.raises(AdapterClosedError, match=re.escape("Writing GPIO line 17 on adapter 'led' (")):
        led.write(True)


# --- sysfs: a hand-made tree (export flow and errors) --------------------------------------


def _kernel_tree(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "export").write_text("")
    (root / "unexport").write_text("")
    return root


def _exporter(root: Path, line: int, delay: float = 0.05) -> threading.Thread:
    """Stands in for the kernel (and udev): gpioN/ appears a little after `export` is written."""

    def run():
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            if (root / "export").read_text().strip() == str(line):
                time.sleep(delay)
                d = root / f"gpio{line}"
                d.mkdir()
                for name, text in (("direction", "in"), ("active_low", "0"), ("edge", "none"), ("value", "0")):
                    (d / name).write_text(text + "\n")
                return
            time.sleep(0.002)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_sysfs_exports_waits_and_unexports(tmp_path):
    root = _kernel_tree(tmp_path / "gpio")
    t = _exporter(root, 17)
    led = SysfsGPIO("led", line=17, direction="high", inverted=True, sysfs_root=str(root))
    t.join()
    assert (root / "export").read_text() == "17\n"
    d = root / "gpio17"
    assert [(d / n).read_text() for n in ("direction", "active_low", "value")] == ["high\n", "1\n", "0\n"]
    led.write(True)
    assert (d / "value").read_text() == "1\n"
    assert led.device == str(d)
    led.close()
    assert (root / "unexport").read_text() == "17\n"


def test_sysfs_does_not_unexport_a_line_it_found_exported(tmp_path):
    root = _kernel_tree(tmp_path / "gpio")
    t = _exporter(root, 5, delay=0)
    (root / "export").write_text("5\n")
    t.join()
    (root / "export").write_text("")
    btn = SysfsGPIO("btn", line=5, edge="both", sysfs_root=str(root))
    assert (root / "gpio5" / "edge").read_text() == "both\n"
    btn.close()
    assert (root / "export").read_text() == "" and (root / "unexport").read_text() == ""


def test_sysfs_export_timeout(tmp_path):
    root = _kernel_tree(tmp_path / "gpio")
    with pytest.raises(DriverTimeoutError) as info:
        SysfsGPIO("led", line=17, direction="out", sysfs_root=str(root), export_timeout=0.05)
    assert str(info.value) == (
        f"Opening GPIO line 17 on adapter 'led' ({root}/gpio17): {root}/gpio17 did not appear within "
        f"export_timeout = 0.05 s after writing 17 to {root}/export (timed out). Fix: check that 17 is the "
        "line's sysfs number (the chip's base + offset), or raise export_timeout if udev is slow to fix permissions."
    )
    assert (root / "unexport").read_text() == "17\n"  # the failed open undid its export


def test_sysfs_absent_root(tmp_path):
    root = tmp_path / "nogpio"
    with pytest.raises(DeviceAbsentError, match=re.escape(f"{root} does not exist. Fix: the kernel has no sysfs GPIO interface (CONFIG_GPIO_SYSFS); use driver 'cdev'")):
        SysfsGPIO("led", line=17, sysfs_root=str(root))


def test_sysfs_export_busy_and_permission_are_mapped(tmp_path, monkeypatch):
    root = _kernel_tree(tmp_path / "gpio")
    real = SysfsGPIO._write_path

    def refuse(path, text):
        if path.name == "export":
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
        if path.name == "direction":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        real(path, text)

    monkeypatch.setattr(SysfsGPIO, "_write_path", staticmethod(refuse))
    with pytest.raises(DeviceBusyError, match=re.escape(f"Opening GPIO line 17 (writing 17 to {root}/export) on adapter 'led' ({root}/gpio17): Device or resource busy. Fix: another process or kernel driver holds the line")):
        SysfsGPIO("led", line=17, sysfs_root=str(root))
    _exporter(root, 18, delay=0)
    (root / "export").write_text("18\n")
    assert _wait_for(lambda: (root / "gpio18" / "value").exists())
    with pytest.raises(DevicePermissionError) as info:
        SysfsGPIO("led", line=18, direction="out", sysfs_root=str(root))
    assert str(info.value) == (
        f"Opening GPIO line 18 on adapter 'led' ({root}/gpio18): Permission denied. "
        f"Fix: add the service user to group 'gpio', or add a udev rule granting it {root}/gpio18."
    )


def test_sysfs_garbage_in_value_is_a_driver_error(tmp_path):
    root = _kernel_tree(tmp_path / "gpio")
    t = _exporter(root, 3, delay=0)
    (root / "export").write_text("3\n")
    t.join()
    btn = SysfsGPIO("btn", line=3, sysfs_root=str(root))
    (root / "gpio3" / "value").write_text("x\n")
    with pytest.raises(DriverError, match=re.escape(f"Reading GPIO line 3 on adapter 'btn' ({root}/gpio3): {root}/gpio3/value holds b'x\\n', not 0 or 1.")):
        btn.read()
    btn.close()
