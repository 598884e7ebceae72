"""`lgembed unit`: the generated systemd unit, checked by systemd itself.

`systemd-analyze verify` must print nothing (it exits 0 on warnings, so any output is
a failure: research spike §4a), inside a staged root that holds systemd's base units
and the ExecStart binary. `systemd-analyze security --offline=true` must rate the
unit at 2.0 or lower. Device access lines must match the device file exactly.

Needs the Debian package `systemd` (systemd-analyze); without it the systemd checks
are skipped with that reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lgembed.service.unit import UnitOptions, device_needs, render_unit

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (Debian package: systemd)")
EXPOSURE_LIMIT = 2.0


def lg(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lgembed", *args], cwd=str(cwd), capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root for `systemd-analyze --root`: systemd's base units and this Python as ExecStart."""
    if ANALYZE is None:
        pytest.skip("systemd-analyze is not installed (Debian package: systemd)")
    base = tmp_path_factory.mktemp("unitroot")
    (base / "usr/lib/systemd").mkdir(parents=True)
    shutil.copytree("/usr/lib/systemd/system", base / "usr/lib/systemd/system", symlinks=True)
    (base / "etc/systemd/system").mkdir(parents=True)
    for exe in (sys.executable, "/opt/agent/bin/agent"):
        target = base / exe.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("#!/bin/sh\n")
        target.chmod(0o755)
    return base


def verify(root: Path, name: str, text: str) -> str:
    """`systemd-analyze verify` output for the unit (empty when systemd has nothing to say)."""
    (root / "etc/systemd/system" / f"{name}.service").write_text(text)
    proc = subprocess.run(
        [ANALYZE, "verify", f"--root={root}", f"{name}.service"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return (proc.stdout + proc.stderr).strip() + ("" if proc.returncode == 0 else f"\n(exit {proc.returncode})")


def exposure(root: Path, name: str) -> float:
    proc = subprocess.run(
        [ANALYZE, "security", "--offline=true", f"--root={root}", f"{name}.service"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    match = re.search(rf"Overall exposure level for {re.escape(name)}\.service: ([0-9.]+)", proc.stdout)
    assert match, proc.stdout + proc.stderr
    return float(match.group(1))


def keys(text: str) -> dict[str, list[str]]:
    """Key -> values (in order) of the unit's assignments, comments left out."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith(("#", "[")) and "=" in line:
            k, _, v = line.partition("=")
            out.setdefault(k, []).append(v)
    return out


DEVICE = textwrap.dedent(
    """
    [adapters.heater]
    kind = "gpio"
    path = "/dev/gpiochip0"
    line = 17
    direction = "low"

    [adapters.room]
    kind = "i2c"
    devpath = "/dev/i2c-1"
    address = 0x48

    [adapters.gps]
    kind = "uart"
    port = "/dev/ttyAMA0"
    baudrate = 9600

    [adapters.bms]
    kind = "can"
    channel = "can0"

    [adapters.fan]
    kind = "pwm"
    chip = 0
    channel = 1

    [adapters.light]
    kind = "adc"
    channel = 0

    [adapters.relay2]
    kind = "gpio"
    path = "/dev/gpiochip0"
    line = 18

    [adapters.bench]
    kind = "i2c"
    devpath = "/dev/i2c-3"
    address = 0x40
    simulate = true
    """
)


def test_default_unit(root: Path, tmp_path: Path) -> None:
    proc = lg("unit", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    k = keys(text)
    assert k["Type"] == ["notify"] and k["NotifyAccess"] == ["main"]
    assert k["ExecStart"] == [f"{sys.executable} -m lgembed serve --config /etc/lgembed/service.toml"]
    assert k["WatchdogSec"] == ["30"] and k["Restart"] == ["on-failure"] and k["RestartSec"] == ["5"]
    assert k["TimeoutStopSec"] == ["30"] and k["RestartPreventExitStatus"] == ["2"]
    assert k["User"] == ["lgembed"] and k["Group"] == ["lgembed"] and "DynamicUser" not in k
    assert k["StateDirectory"] == ["lgembed"] and "ReadWritePaths" not in k
    assert k["DevicePolicy"] == ["closed"] and "DeviceAllow" not in k and k["PrivateDevices"] == ["yes"]
    assert "SupplementaryGroups" not in k and k["PrivateUsers"] == ["yes"]
    assert k["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6 AF_NETLINK"]
    assert "PrivateNetwork" not in k  # the API listens on 127.0.0.1:8123
    for key, value in {
        "ProtectSystem": "strict", "ProtectHome": "yes", "NoNewPrivileges": "yes", "PrivateTmp": "yes",
        "MemoryMax": "256M", "MemoryDenyWriteExecute": "yes", "CapabilityBoundingSet": "", "UMask": "0077",
        "SystemCallArchitectures": "native", "ProtectProc": "invisible", "ProcSubset": "pid",
    }.items():  # fmt: skip
        assert k[key] == [value], key
    assert verify(root, "lgembed", text) == ""
    score = exposure(root, "lgembed")
    print(f"exposure (no devices): {score}")
    assert score <= EXPOSURE_LIMIT


def test_device_access_matches_the_device_file(root: Path, tmp_path: Path) -> None:
    device = tmp_path / "device.toml"
    device.write_text(DEVICE)
    proc = lg("unit", "--device", str(device), "--name", "board", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    k = keys(text)
    # one DeviceAllow per node (the two lines on gpiochip0 share it; the simulated bus has none)
    assert k["DeviceAllow"] == ["/dev/gpiochip0 rw", "/dev/i2c-1 rw", "/dev/ttyAMA0 rw"]
    assert k["SupplementaryGroups"] == ["gpio i2c dialout"]
    assert k["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_CAN"]
    assert k["ReadWritePaths"] == ["/sys/class/pwm /sys/devices"]
    assert k["ExecStart"] == [f"{sys.executable} -m lgembed serve --config /etc/lgembed/service.toml --device {device}"]
    assert "Wants" in k and "sys-subsystem-net-devices-can0.device" in k["Wants"]
    assert "PrivateDevices" not in k and "PrivateUsers" not in k and "PrivateNetwork" not in k
    assert k["DevicePolicy"] == ["closed"]
    assert "/dev/i2c-3" not in text
    for adapter in ("heater", "room", "gps", "bms", "fan"):
        assert f"# adapter {adapter} (" in text
    for group in ("gpio", "i2c"):
        if (
            shutil.which("getent")
            and subprocess.run(["getent", "group", group], capture_output=True, check=False).returncode
        ):
            assert f"group {group!r} does not exist on this machine" in proc.stderr
    assert verify(root, "board", text) == ""
    score = exposure(root, "board")
    print(f"exposure (gpio, i2c, uart, can, pwm, adc): {score}")
    assert score <= EXPOSURE_LIMIT


def test_config_file_drives_the_sandbox(root: Path, tmp_path: Path) -> None:
    device = tmp_path / "device.toml"
    device.write_text(DEVICE)
    config = tmp_path / "service.toml"
    config.write_text(
        textwrap.dedent(
            """
            [service]
            db = "/data/lgembed"
            http = ""
            device = "device.toml"
            simulate = true
            stop_timeout = 40.0

            [graphs.g]
            path = "app.py:graph"
            """
        )
    )
    proc = lg("unit", "--config", str(config), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    k = keys(proc.stdout)
    assert k["ExecStart"] == [f"{sys.executable} -m lgembed serve --config {config}"]
    assert k["ReadWritePaths"] == ["/data/lgembed"] and "StateDirectory" not in k
    assert "install -d -o lgembed -g lgembed -m 0700 /data/lgembed" in proc.stdout
    assert "DeviceAllow" not in k and k["PrivateDevices"] == ["yes"]  # every adapter simulated
    assert k["PrivateNetwork"] == ["yes"]  # no API, no CAN
    assert k["TimeoutStopSec"] == ["50"]
    assert verify(root, "lgembed", proc.stdout) == ""
    # flags override the file and are passed on to `lgembed serve`
    proc = lg("unit", "--config", str(config), "--db", "/var/lib/agent/state", "--http", "0.0.0.0:8123", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    k = keys(proc.stdout)
    assert k["StateDirectory"] == ["agent/state"] and "ReadWritePaths" not in k
    assert k["ExecStart"][0].endswith("--db /var/lib/agent/state --http 0.0.0.0:8123")
    assert "PrivateNetwork" not in k and k["After"] == ["network-online.target"]
    assert verify(root, "lgembed", proc.stdout) == ""


def test_options(root: Path, tmp_path: Path) -> None:
    proc = lg(
        "unit", "--name", "greenhouse", "--user", "agent", "--exec", "/opt/agent/bin/agent serve --config /etc/agent.toml",
        "--watchdog", "0", "--memory-max", "64M", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    k = keys(proc.stdout)
    assert k["ExecStart"] == ["/opt/agent/bin/agent serve --config /etc/agent.toml"]
    assert "WatchdogSec" not in k and k["MemoryMax"] == ["64M"]
    assert k["User"] == ["agent"] and k["Description"] == ["lgembed graph service greenhouse"]
    assert verify(root, "greenhouse", proc.stdout) == ""
    proc = lg("unit", "--watchdog", "2.5", cwd=tmp_path)
    assert keys(proc.stdout)["WatchdogSec"] == ["2.5s"]
    assert verify(root, "lgembed", proc.stdout) == ""


@needs_analyze
def test_verify_is_not_vacuous(root: Path, tmp_path: Path) -> None:
    """The staged check reports what systemd only warns about (it would exit 0 for these)."""
    text = lg("unit", cwd=tmp_path).stdout
    assert verify(root, "typo", text.replace("Type=notify", "Type=notfy")) != ""
    assert verify(root, "typo", text.replace("WatchdogSec=30", "WatchdogSec=abc")) != ""
    assert verify(root, "typo", text.replace("Restart=on-failure", "Restrt=on-failure")) != ""


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--memory-max", "lots"], 1, "--memory-max: 'lots' is not a size"),
        (["--user", "Bad User"], 1, "--user: 'Bad User' is not a user name"),
        (["--exec", "python -m lgembed serve"], 1, "must start with an absolute path"),
        (["--http", "localhost"], 1, "--http: 'localhost' is not HOST:PORT"),
        (["--watchdog", "-1"], 1, "--watchdog: must be 0 (off) or more seconds"),
        (["--watchdog", "soon"], 1, "argument --watchdog: invalid float value"),
        (["--name", "my unit.service"], 1, "--name: 'my unit.service' is not a unit name"),
        (["--config", "missing.toml"], 2, "--config missing.toml: no such file"),
        (["--device", "missing.toml"], 2, "no such file"),
    ],
)
def test_errors(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    proc = lg("unit", *args, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    assert message in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


def test_bad_device_file(tmp_path: Path) -> None:
    device = tmp_path / "device.toml"
    device.write_text('[adapters.fan]\nkind = "pwm"\nchip = 0\nchannel = 1\nspeed = 3\n')
    proc = lg("unit", "--device", str(device), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{device}: unknown setting 'adapters.fan.speed'" in proc.stderr
    config = tmp_path / "service.toml"
    config.write_text('[service]\nstop_timeout = "soon"\n')
    proc = lg("unit", "--config", str(config), cwd=tmp_path)
    assert proc.returncode == 2
    assert "invalid value for 'service.stop_timeout': 'soon'" in proc.stderr


def test_device_needs_api() -> None:
    import tomllib

    needs = {n.adapter: n for n in device_needs(tomllib.loads(DEVICE), "device.toml")}
    assert needs["heater"].nodes == (("/dev/gpiochip0", "rw"),) and needs["heater"].group == "gpio"
    assert needs["bms"].families == ("AF_CAN",) and needs["bms"].interface == "can0" and not needs["bms"].nodes
    assert needs["light"].check == (("/sys/bus/iio/devices/iio:device0/in_voltage0_raw", "r"),)
    assert needs["bench"].simulated and not needs["bench"].nodes
    everything_simulated = device_needs(tomllib.loads(DEVICE), "device.toml", simulate=True)
    text = render_unit(UnitOptions(python="/usr/bin/python3"), everything_simulated)
    assert "DeviceAllow" not in text and "SupplementaryGroups" not in text
    quoted = render_unit(UnitOptions(python="/opt/my env/bin/python", config="/etc/lg%d.toml"))
    assert 'ExecStart="/opt/my env/bin/python" -m lgembed serve --config /etc/lg%%d.toml' in quoted
