"""The device file, the registry and a whole simulated device (issue: edge layer).

Acceptance 2: a device with one adapter of every kind loads with simulate=True and each
adapter round-trips through its real driver; acceptance 4: import hygiene.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from lgembed.edge import (
    AdapterNotFoundError,
    DeviceFileError,
    EdgeAdapterRegistry,
    EdgeError,
    load_device,
)


def every_kind(tag: str = "") -> dict:
    return {
        "device": {"name": "bench"},
        "adapters": {
            "heater": {"kind": "gpio", "line": 17, "direction": "out"},
            "button": {"kind": "gpio", "line": 27, "direction": "in", "edge": "both"},
            "fan": {"kind": "pwm", "channel": 0},
            "vin": {"kind": "adc", "channel": 0, "simulation": {"volts": 1.5}},
            "room": {"kind": "i2c", "address": 0x48, "simulator": "tmp102"},
            "gps": {"kind": "uart", "port": "/dev/ttyS0", "simulator": "nmea-gps"},
            "modem": {"kind": "uart", "port": "/dev/ttyUSB0", "simulator": "echo"},
            "bus": {"kind": "can", "channel": "can0"},
        },
    }


@pytest.fixture
def device():
    with load_device(every_kind(), simulate=True) as d:
        yield d


def tmp102(raw: bytes) -> float:
    return (int.from_bytes(raw, "big", signed=True) >> 4) * 0.0625


def test_every_kind_round_trips(device):
    # GPIO: a write shows on the simulated line, the simulated input reads back
    device.adapter("heater").write(True)
    assert device.simulation("heater").value is True
    assert device.adapter("heater").read() is True
    device.adapter("heater").write(False)
    assert device.simulation("heater").value is False
    device.simulation("button").value = True
    assert device.adapter("button").read() is True
    # PWM
    device.adapter("fan").duty_cycle = 0.4
    assert device.simulation("fan").duty_cycle == pytest.approx(0.4)
    # ADC
    assert device.adapter("vin").read() == pytest.approx(1.5, abs=0.002)
    # I2C: the TMP102's register bytes decode by its datasheet to the set temperature
    device.simulation("room").celsius = 21.5
    assert tmp102(device.adapter("room").read_register(0x00, 2)) == 21.5
    device.adapter("room").write_register(0x01, b"\x60\xa0")
    assert device.adapter("room").read_register(0x01, 2) == b"\x60\xa0"
    # UART: a line crosses the pty both ways
    device.adapter("modem").write(b"hello\n")
    assert device.adapter("modem").readline(timeout=2.0) == b"hello\n"
    line = device.adapter("gps").readline(timeout=3.0)
    assert line.startswith(b"$GP")
    # CAN: a frame crosses the virtual bus both ways
    device.adapter("bus").send(0x123, b"\x01\x02")
    peer = device.simulation("bus")
    got = peer.recv(timeout=2.0)
    assert (got.arbitration_id, bytes(got.data)) == (0x123, b"\x01\x02")
    peer.send(0x321, b"\x09")
    frame = device.adapter("bus").recv(timeout=2.0)
    assert (frame.arbitration_id, bytes(frame.data)) == (0x321, b"\x09")


def test_registry_api(device):
    reg = device.registry
    assert isinstance(reg, EdgeAdapterRegistry)
    assert set(reg) == {"heater", "button", "fan", "vin", "room", "gps", "modem", "bus"}
    assert reg.find("nope") is None
    assert reg.find("heater", "i2c") is None
    assert reg.require("heater", "gpio") is device.adapter("heater")
    with pytest.raises(AdapterNotFoundError, match=re.escape("No adapter named 'nope' in the registry")):
        reg.require("nope")
    with pytest.raises(AdapterNotFoundError, match=re.escape("Adapter 'heater' is a gpio adapter, not i2c.")):
        device.adapter("heater", "i2c")
    caps = reg.capabilities()
    assert caps["heater"]["kind"] == "gpio" and caps["heater"]["actions"] == ["read", "write"]
    assert caps["room"]["driver"] == "periphery"
    assert "read_register" in caps["room"]["actions"]


def test_close_closes_everything():
    d = load_device(every_kind(), simulate=True)
    heater = d.adapter("heater")
    root = d._env.root
    d.close()
    assert heater.closed and not root.exists()
    d.close()  # twice is harmless
    with pytest.raises(EdgeError, match="closed"):
        heater.write(True)


def test_simulation_of_real_adapter_is_an_error(tmp_path):
    cfg = {"adapters": {"a": {"kind": "gpio", "line": 1, "direction": "out", "simulate": True},
                        "b": {"kind": "pwm", "channel": 0, "sysfs_root": str(tmp_path / "none")}}}
    with pytest.raises(EdgeError):  # b is real and its sysfs tree does not exist
        load_device(cfg)
    cfg["adapters"].pop("b")
    with load_device(cfg) as d:  # `simulate = true` in a's own table
        assert d.simulated == {"a"}


def test_simulate_some(tmp_path):
    cfg = every_kind()
    with load_device(cfg, simulate=["heater", "room"] + [n for n in cfg["adapters"] if n not in ("heater", "room")]) as d:
        assert d.simulated == set(cfg["adapters"])
    with pytest.raises(DeviceFileError, match="simulate names adapters that <dict> does not define: ghost"):
        load_device(cfg, simulate=["ghost"])


def test_toml_file_loads(tmp_path):
    f = tmp_path / "dev.toml"
    f.write_text(textwrap.dedent("""
        [device]
        name = "t"
        [adapters.room]
        kind = "i2c"
        address = 0x48
        simulator = "tmp102"
        simulation = { celsius = -12.5 }
    """))
    with load_device(f, simulate=True) as d:
        assert d.name == "t" and d.source == str(f)
        assert tmp102(d.adapter("room").read_register(0, 2)) == -12.5


@pytest.mark.parametrize(
    ("cfg", "key", "text"),
    [
        ({"adaptors": {}}, "adaptors", "unknown table 'adaptors'; allowed: device, adapters, tools, world"),
        ({"adapters": {"x": {"line": 1}}}, "adapters.x.kind", "missing setting 'adapters.x.kind'"),
        ({"adapters": {"x": {"kind": "spi"}}}, "adapters.x.kind", "invalid value for 'adapters.x.kind': 'spi'; allowed: 'gpio', 'pwm', 'adc', 'uart', 'i2c', 'can'"),
        ({"adapters": {"x": {"kind": "gpio", "driver": "mmio", "line": 1}}}, "adapters.x.driver", "invalid value for 'adapters.x.driver': 'mmio'; allowed for a gpio adapter: 'cdev', 'sysfs'"),
        ({"adapters": {"x": {"kind": "gpio", "line": "17"}}}, "adapters.x.line", "invalid value for 'adapters.x.line': '17'; allowed:"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1, "pin": 3}}}, "adapters.x.pin", "unknown setting 'adapters.x.pin' for a gpio adapter (driver 'cdev'); allowed settings:"),
        ({"adapters": {"x": {"kind": "gpio"}}}, "adapters.x.line", "missing setting 'adapters.x.line'"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1, "direction": "sideways"}}}, "adapters.x.direction", "invalid value for 'adapters.x.direction': 'sideways'; allowed: one of 'in', 'out', 'high', 'low'"),
        ({"adapters": {"x": {"kind": "i2c", "address": 0x90}}}, "adapters.x.address", "invalid value for 'adapters.x.address': 144; allowed:"),
        ({"adapters": {"x": {"kind": "i2c", "address": 0x48, "simulator": "tmp999"}}}, "adapters.x.simulator", "invalid value for 'adapters.x.simulator': 'tmp999'; allowed:"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1, "simulate": "yes"}}}, "adapters.x.simulate", "allowed: true or false"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1}}, "tools": {"t": {"adapter": "y", "action": "write"}}}, "tools.t.adapter", "invalid value for 'tools.t.adapter': 'y'; allowed: 'x'"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1}}, "tools": {"t": {"adapter": "x", "action": "blink"}}}, "tools.t", "'blink' is not an action of gpio adapters; allowed: 'read', 'write'"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1}}, "tools": {"t": {"adapter": "x", "action": "write", "policy": {"risk": "extreme"}}}}, "tools.t.policy", "'risk' must be one of 'low', 'medium', 'high', 'critical' (got 'extreme')"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1}}, "tools": {"t": {"adapter": "x", "action": "write", "policy": {"rate": 1}}}}, "tools.t.policy.rate", "unknown key 'tools.t.policy.rate'"),
        ({"adapters": {"x": {"kind": "gpio", "line": 1}}, "world": {"heater": "nope"}}, "world.heater", "invalid value for 'world.heater': 'nope'"),
    ],
)
def test_bad_device_file(cfg, key, text):
    with pytest.raises(DeviceFileError) as ei:
        load_device(cfg, simulate=True)
    assert ei.value.key == key
    assert text in str(ei.value)
    assert str(ei.value).startswith("<dict>: ")


def test_bad_toml_names_the_file(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text("[adapters.x\nkind = 'gpio'\n")
    with pytest.raises(DeviceFileError, match=re.escape(f"Reading device file {f}: invalid TOML")):
        load_device(f)
    with pytest.raises(DeviceFileError, match=re.escape(f"Reading device file {tmp_path / 'missing.toml'}: no such file")):
        load_device(tmp_path / "missing.toml")


def test_failed_open_leaves_nothing_open(tmp_path, monkeypatch):
    import os
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    cfg = every_kind()
    cfg["adapters"]["zz"] = {"kind": "pwm", "channel": 0, "sysfs_root": str(tmp_path / "absent")}
    with pytest.raises(EdgeError):
        load_device(cfg, simulate=[n for n in cfg["adapters"] if n != "zz"])
    assert os.listdir(scratch) == []  # the simulators' temporary trees were removed


def _modules_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_hygiene():
    mods = _modules_after("import lgembed.graph")
    assert not [m for m in mods if m.startswith("lgembed.edge")]
    mods = _modules_after("import lgembed.edge; from lgembed.edge import load_device, ToolPolicy, EdgeError")
    assert not [m for m in mods if m.split(".")[0] in ("serial", "can", "periphery")]
    assert "lgembed.edge.gpio" not in mods
    # loading a device imports only the libraries of the kinds it opens
    mods = _modules_after(
        "from lgembed.edge import load_device\n"
        "d = load_device({'adapters': {'r': {'kind': 'uart', 'port': 'x', 'simulator': 'echo'}}}, simulate=True)\n"
        "d.close()"
    )
    assert "serial" in mods and "can" not in mods and "periphery" not in mods
