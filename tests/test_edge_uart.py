"""The UART driver (pyserial) against simulated devices on real pseudo-terminals.

Every test opens the real `SerialUART` on the pty slave that `lgembed.edge.sim.uart`
returns: pyserial configures a real tty, select() waits on it, and the device model
answers from the master side.
"""

from __future__ import annotations

import errno
import os
import pty
import re
import subprocess
import sys
import termios
import threading
import time
import tty

import pytest

from lgembed.edge import load_device
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
from lgembed.edge.sim import SimEnv
from lgembed.edge.sim import uart as sim_uart
from lgembed.edge.uart import BAUDRATES, MAX_LINE, SerialUART

pytest.importorskip("serial")


@pytest.fixture
def env():
    e = SimEnv()
    yield e
    e.close()


def open_sim(env, name="dev", model=None, options=None, **settings):
    """The real driver on a simulated device: (adapter, model)."""
    checked = check_settings(SerialUART, {"port": "/dev/ttyAMA0", **settings}, "<test>", f"adapters.{name}")
    s, dev = sim_uart.attach(env, name, "serial", checked, model, options or {}, "<test>")
    adapter = SerialUART(name, **s)
    env.on_close(adapter.close)  # runs before the pty closes (last registered, first run)
    return adapter, dev


def wait_until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


def nmea_ok(line: bytes) -> list[str]:
    """The fields of an NMEA sentence whose checksum is right (asserts it)."""
    assert line.startswith(b"$") and line.endswith(b"\r\n"), line
    body, star, cs = line[1:-2].decode("ascii").rpartition("*")
    assert star == "*"
    x = 0
    for ch in body.encode("ascii"):
        x ^= ch
    assert cs == f"{x:02X}", (line, f"{x:02X}")
    return body.split(",")


def degrees(value: str, hemi: str) -> float:
    d, _, m = value.partition(".")
    whole = float(d[:-2]) + float(d[-2:] + "." + m) / 60
    return -whole if hemi in "SW" else whole


# --- data through the pty -------------------------------------------------------------


def test_write_reaches_the_model(env):
    u, dev = open_sim(env, model="echo", baudrate=115200)
    assert u.write(b"PING\n") == 5
    assert dev.wait_received(b"PING\n", timeout=2.0) == b"PING\n"
    assert dev.port == u.device and u.device.startswith("/dev/pts/")
    assert dev.errors == []


def test_echo_round_trip_and_partial_reads(env):
    u, dev = open_sim(env)  # default model: echo
    assert isinstance(dev, sim_uart.Echo)
    u.write(bytearray(b"hello world"))
    assert u.read(5, timeout=2.0) == b"hello"
    assert u.read(100, timeout=0.3) == b" world"  # fewer than asked at the timeout
    assert u.read(4, timeout=0) == b""
    dev.send(b"xyz")
    assert u.read(3, timeout=2.0) == b"xyz"


def test_readline_with_command_device(env):
    u, dev = open_sim(env, model="command", options={"responses": {"AT": "OK", "TEMP?": "21.5"}})
    u.write(b"AT\r\n")
    assert u.readline(timeout=2.0) == b"OK\r\n"
    u.write(b"TEMP?\r")
    assert u.readline(timeout=2.0) == b"21.5\r\n"
    u.write(b"FOO\n")
    assert u.readline(timeout=2.0) == b"ERROR\r\n"
    assert dev.commands == ["AT", "TEMP?", "FOO"]
    dev.responses["AT"] = "READY"  # changeable while running
    u.write(b"AT\n")
    assert u.readline(timeout=2.0) == b"READY\r\n"


def test_readline_does_not_block_a_write(env):
    u, _ = open_sim(env, model="command", options={"responses": {"PING": "PONG"}, "terminator": "\n"})
    got = []
    t = threading.Thread(target=lambda: got.append(u.readline(timeout=5.0)))
    t.start()
    wait_until(u._read_lock.locked)
    u.write(b"PING\n")  # the reader holds the read lock; the write goes through
    t.join(timeout=5.0)
    assert got == [b"PONG\n"]


def test_nmea_gps_sentences_parse_with_valid_checksums(env):
    u, gps = open_sim(env, model="nmea-gps", options={"interval": 0.05, "latitude": -33.8568, "longitude": 151.2153, "altitude": 58.0})
    seen = {}
    while len(seen) < 2:
        fields = nmea_ok(u.readline(timeout=3.0))
        seen[fields[0]] = fields
    gga, rmc = seen["GPGGA"], seen["GPRMC"]
    assert degrees(gga[2], gga[3]) == pytest.approx(-33.8568, abs=1e-5) and gga[3] == "S"
    assert degrees(gga[4], gga[5]) == pytest.approx(151.2153, abs=1e-5) and gga[5] == "E"
    assert gga[6] == "1" and float(gga[9]) == 58.0
    assert rmc[2] == "A" and rmc[3:7] == gga[2:6]
    # attributes change what it sends while it runs
    gps.fix = False
    while True:
        fields = nmea_ok(u.readline(timeout=3.0))
        if fields[0] == "GPRMC" and fields[2] == "V":
            break
    assert gps.errors == []


def test_nmea_sentence_checksum():
    # the worked example of the NMEA 0183 GGA sentence
    body = "GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"
    assert sim_uart.nmea_sentence(body) == b"$" + body.encode() + b"*47\r\n"


def test_readline_timeout_keeps_the_partial_line(env):
    u, dev = open_sim(env)
    dev.send(b"par")
    with pytest.raises(DriverTimeoutError) as exc:
        u.readline(timeout=0.3)
    assert str(exc.value) == (
        f"Reading a line from UART port on adapter 'dev' ({u.device}): no complete line within 0.3 s "
        "(3 bytes without a line end kept for the next read). "
        "Fix: check that the peer is powered and connected, or pass a longer timeout."
    )
    assert exc.value.errno == errno.ETIMEDOUT
    assert u.in_waiting == 3
    dev.send(b"tial\nnext")
    assert u.readline(timeout=2.0) == b"partial\n"
    assert u.read(4, timeout=2.0) == b"next"


def test_readline_nothing_arrived(env):
    u, _ = open_sim(env, timeout=0.05)  # the adapter's default timeout
    with pytest.raises(DriverTimeoutError, match=re.escape("no complete line within 0.05 s (nothing arrived)")):
        u.readline()


def test_readline_gives_up_after_max_line(env):
    u, dev = open_sim(env)
    dev.send(b"x" * MAX_LINE)
    with pytest.raises(DriverError, match=re.escape(f"{MAX_LINE} bytes arrived without a line end (b'\\n'); they stay buffered. Fix: check the baud rate (9600)")):
        u.readline(timeout=5.0)
    assert len(u.read(MAX_LINE, timeout=0)) == MAX_LINE  # still there for read()


def test_buffers_and_flush(env):
    u, dev = open_sim(env)
    dev.send(b"abc")
    dev.send(b"def\n")
    assert u.readline(timeout=2.0) == b"abcdef\n"
    dev.send(b"junk")
    wait_until(lambda: u.in_waiting == 4)
    u.reset_input_buffer()
    assert u.in_waiting == 0
    u.write(b"ok")
    u.flush()
    dev.wait_received(b"ok", timeout=2.0)


# --- settings ------------------------------------------------------------------------


def test_baudrate_validation_in_device_file():
    with pytest.raises(DeviceFileError) as exc:
        SerialUART.from_settings("gps", {"port": "/dev/ttyS0", "baudrate": 1000})
    assert str(exc.value) == (
        "<dict>: invalid value for 'adapters.gps.baudrate': 1000; allowed: one of 50, 75, 110, 134, 150, 200, "
        "300, 600, or an integer from 1200 to 4000000"
    )
    assert exc.value.key == "adapters.gps.baudrate"
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.gps.baudrate': 5000000")):
        SerialUART.from_settings("gps", {"port": "/dev/ttyS0", "baudrate": 5_000_000})
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.gps.parity': 'X'; allowed: one of 'N', 'E', 'O', 'M', 'S'")):
        SerialUART.from_settings("gps", {"port": "/dev/ttyS0", "parity": "X"})
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.gps.stopbits': 3; allowed: one of 1, 1.5, 2")):
        SerialUART.from_settings("gps", {"port": "/dev/ttyS0", "stopbits": 3})
    with pytest.raises(DeviceFileError, match=re.escape("missing setting 'adapters.gps.port'")):
        SerialUART.from_settings("gps", {})


def test_baudrates_mirror_pyserial():
    import serial

    assert tuple(serial.Serial.BAUDRATES) == BAUDRATES


def baud_of(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        return termios.tcgetattr(fd)[4]
    finally:
        os.close(fd)


def test_baudrate_property_reconfigures_the_tty(env):
    u, dev = open_sim(env, baudrate=19200, bytesize=7, parity="E", stopbits=2)
    assert u.baudrate == 19200 and baud_of(dev.port) == termios.B19200
    u.baudrate = 57600
    assert u.baudrate == 57600 and u.settings["baudrate"] == 57600
    assert baud_of(dev.port) == termios.B57600
    u.baudrate = 250000  # not a termios constant: pyserial's custom rate path
    assert u.baudrate == 250000
    with pytest.raises(ArgumentError, match=re.escape(f"Setting the baud rate of UART port to 1000 on adapter 'dev' ({u.device}): 'baudrate' must be one of 50, 75")):
        u.baudrate = 1000
    with pytest.raises(ArgumentError, match=re.escape("'baudrate' must be an integer (got '9600')")):
        u.baudrate = "9600"
    u.write(b"still works\n")
    assert u.readline(timeout=2.0) == b"still works\n"


def test_argument_errors(env):
    u, _ = open_sim(env)
    with pytest.raises(ArgumentError, match=re.escape(f"Writing to UART port on adapter 'dev' ({u.device}): 'data' must be bytes, not str (got 'AT'); encode it first, e.g. data.encode('ascii')")):
        u.write("AT")
    with pytest.raises(ArgumentError, match=re.escape("'data' must be bytes, bytearray or memoryview (got list)")):
        u.write([1, 2])
    with pytest.raises(ArgumentError, match=re.escape("'size' must be an integer of 1 or more (got 0)")):
        u.read(0)
    with pytest.raises(ArgumentError, match=re.escape("'timeout' must be a number of seconds, 0 or more, or None for the adapter's default (got -1)")):
        u.readline(timeout=-1)


# --- errors opening and using the port -------------------------------------------------


def test_absent_port(tmp_path):
    port = str(tmp_path / "ttyUSB9")
    with pytest.raises(DeviceAbsentError) as exc:
        SerialUART("gps", port=port)
    assert str(exc.value) == (
        f"Opening UART port on adapter 'gps' ({port}): No such file or directory. "
        "Fix: check the port name (ls /dev/serial/by-id) and that the UART is enabled (enable_uart=1)."
    )
    assert exc.value.errno == errno.ENOENT and isinstance(exc.value, FileNotFoundError)


def test_exclusive_port_is_busy_for_a_second_opener(env):
    u, _ = open_sim(env, name="first")
    expected = (
        f"Opening UART port on adapter 'second' ({u.device}): another process or adapter holds the port exclusively. "
        f"Fix: stop the other user of the port (`fuser -v {u.device}` lists it) or close the other adapter on it"
    )
    with pytest.raises(DeviceBusyError, match=re.escape(expected)) as exc:
        SerialUART("second", port=u.device)
    assert exc.value.errno == errno.EBUSY
    u.close()
    with SerialUART("second", port=u.device) as again:  # released on close
        again.write(b"x")
        assert again.read(1, timeout=2.0) == b"x"


def test_non_exclusive_ports_share(env):
    u, dev = open_sim(env, exclusive=False)
    with SerialUART("other", port=dev.port, exclusive=False) as other:
        other.write(b"B")
        dev.wait_received(b"B", timeout=2.0)
    u.write(b"A")
    dev.wait_received(b"BA", timeout=2.0)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another user")
def test_tiocexcl_refuses_other_users(env):
    # TIOCEXCL does not stop root, so a shell run as 'nobody' tries to open the port
    u, dev = open_sim(env)
    os.chmod(dev.port, 0o666)

    def open_as_nobody() -> subprocess.CompletedProcess:
        return subprocess.run(["/bin/sh", "-c", 'exec 3<>"$0"', dev.port], user=65534, group=65534,
                              start_new_session=True, capture_output=True, text=True, timeout=10)

    r = open_as_nobody()
    assert r.returncode != 0 and "busy" in r.stderr.lower(), r.stderr
    u.close()  # TIOCNXCL
    r = open_as_nobody()
    assert r.returncode == 0, r.stderr


def test_permission_error_maps_with_dialout_fix(monkeypatch):
    import serial

    def refuse(*args, **kwargs):
        e = OSError(errno.EACCES, "Permission denied", "/dev/ttyAMA0")
        raise serial.SerialException(e.errno, f"could not open port /dev/ttyAMA0: {e}")

    monkeypatch.setattr(serial, "Serial", refuse)
    with pytest.raises(DevicePermissionError) as exc:
        SerialUART("gps", port="/dev/ttyAMA0")
    assert str(exc.value) == (
        "Opening UART port on adapter 'gps' (/dev/ttyAMA0): Permission denied. "
        "Fix: add the service user to group 'dialout', or add a udev rule granting it /dev/ttyAMA0."
    )
    assert isinstance(exc.value, PermissionError) and exc.value.errno == errno.EACCES


def test_write_timeout():
    # a bare pty whose master nobody reads: its buffer fills and the write times out
    master, slave = pty.openpty()
    tty.setraw(master)
    try:
        with SerialUART("tx", port=os.ttyname(slave), write_timeout=0.1) as u:
            with pytest.raises(DriverTimeoutError) as exc:
                u.write(bytes(1 << 20))
            assert str(exc.value) == (
                f"Writing 1048576 bytes to UART port on adapter 'tx' ({u.device}): the port did not take the data "
                "within 0.1 s (write_timeout). Fix: check that the peer is powered and connected, or pass a longer timeout."
            )
    finally:
        os.close(master)
        os.close(slave)


def test_vanished_device(env):
    s, _ = sim_uart.attach(env, "dev", "serial", check_settings(SerialUART, {"port": "/dev/ttyUSB0"}), None, {})
    u = SerialUART("dev", **s)
    env.close()  # the simulated device goes away (as a USB adapter pulled out)
    with pytest.raises(DeviceAbsentError, match=re.escape(f"Reading 1 byte from UART port on adapter 'dev' ({u.device}): the port reports data but returns none")):
        u.read(1, timeout=1.0)
    u.close()


def test_closed_adapter(env):
    u, _ = open_sim(env)
    u.close()
    u.close()  # twice is harmless
    assert u.closed and "closed" in repr(u)
    with pytest.raises(AdapterClosedError, match=re.escape(f"Writing 1 byte to UART port on adapter 'dev' ({u.device}): the adapter is closed. Fix: open the device again.")):
        u.write(b"x")
    with pytest.raises(AdapterClosedError):
        u.readline()
    with pytest.raises(AdapterClosedError):
        _ = u.in_waiting


def test_close_wakes_a_blocked_reader(env):
    u, _ = open_sim(env)
    errors = []

    def reader():
        try:
            u.readline(timeout=30.0)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    wait_until(u._read_lock.locked)
    u.close()
    t.join(timeout=5.0)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], AdapterClosedError)


def test_missing_pyserial(monkeypatch):
    monkeypatch.setitem(sys.modules, "serial", None)
    with pytest.raises(DriverUnavailableError) as exc:
        SerialUART("gps", port="/dev/ttyS0")
    assert str(exc.value) == (
        "Opening uart adapter 'gps': the driver needs the Python module 'serial' (package pyserial), "
        "which is not installed. Fix: pip install 'lgembed[hardware]'"
    )


def test_import_does_not_load_pyserial():
    code = "import sys, lgembed.edge.uart, lgembed.edge.sim.uart; print(sorted(m for m in sys.modules if m.split('.')[0] in ('serial', 'can', 'periphery')))"
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the simulator's options and custom models ---------------------------------------


class Upper(sim_uart.SerialDevice):
    """A custom model: answers each chunk in upper case, with a prefix option."""

    def __init__(self, prefix: str = "") -> None:
        super().__init__()
        if not isinstance(prefix, str):
            raise sim_uart.OptionError("prefix", prefix, "a string")
        self.prefix = prefix

    def on_data(self, data: bytes) -> bytes:
        return self.prefix.encode() + data.upper()


class Forgetful(sim_uart.SerialDevice):
    def __init__(self) -> None:  # does not call SerialDevice.__init__
        pass


def test_custom_model(env):
    u, dev = open_sim(env, model=f"{__name__}:Upper", options={"prefix": ">"})
    assert isinstance(dev, Upper)
    u.write(b"abc\n")
    assert u.readline(timeout=2.0) == b">ABC\n"


@pytest.mark.parametrize(
    ("model", "options", "key", "text"),
    [
        ("nmea-gps", {"interval": 0}, "adapters.gps.simulation.interval", "<test>: invalid value for 'adapters.gps.simulation.interval': 0; allowed: a number above 0"),
        ("nmea-gps", {"latitude": 91}, "adapters.gps.simulation.latitude", "invalid value for 'adapters.gps.simulation.latitude': 91; allowed: a number from -90 to 90"),
        ("nmea-gps", {"speeed": 1}, "adapters.gps.simulation.speeed", "<test>: unknown option 'adapters.gps.simulation.speeed' for the uart simulator 'nmea-gps'; allowed: altitude, course, fix, interval, latitude, longitude, speed"),
        ("command", {"responses": {"AT": 1}}, "adapters.gps.simulation.responses", "invalid value for 'adapters.gps.simulation.responses': {'AT': 1}"),
        ("command", {"terminator": ""}, "adapters.gps.simulation.terminator", "allowed: a non-empty string"),
        ("modem", {}, "adapters.gps.simulator", "invalid value for 'adapters.gps.simulator': 'modem'; allowed: 'command', 'echo', 'nmea-gps', or 'module:Class'"),
        ("os:getcwd", {}, "adapters.gps.simulator", "'os:getcwd' is not a subclass of lgembed.edge.sim.uart.SerialDevice"),
        (f"{__name__}:Forgetful", {}, "adapters.gps.simulator", "did not call SerialDevice.__init__()"),
        (f"{__name__}:Upper", {"prefix": 3}, "adapters.gps.simulation.prefix", "allowed: a string"),
    ],
)
def test_bad_simulator_settings(env, model, options, key, text):
    checked = check_settings(SerialUART, {"port": "/dev/ttyS0"}, "<test>", "adapters.gps")
    with pytest.raises(DeviceFileError, match=re.escape(text)) as exc:
        sim_uart.attach(env, "gps", "serial", checked, model, options, "<test>")
    assert exc.value.key == key


def test_model_errors_are_recorded_not_fatal(env):
    class Broken(sim_uart.SerialDevice):
        def on_data(self, data):
            if data == b"boom":
                raise RuntimeError("model bug")
            return data

    s, dev = sim_uart.attach(env, "b", "serial", check_settings(SerialUART, {"port": "x"}), None, {}, "<test>")
    # attach built the default echo; swap in the broken model's behaviour on the same pty
    dev.on_data = Broken.on_data.__get__(dev)
    u = SerialUART("b", **s)
    env.on_close(u.close)
    u.write(b"boom")
    dev.wait_received(b"boom", timeout=2.0)
    u.write(b"ok")
    assert u.read(2, timeout=2.0) == b"ok"
    assert [str(e) for e in dev.errors] == ["model bug"]


def test_send_and_wait_errors():
    dev = sim_uart.Echo()
    with pytest.raises(RuntimeError, match="not attached"):
        dev.send(b"x")
    with pytest.raises(TypeError, match=re.escape("'data' must be bytes (got str); encode text first")):
        dev.send("x")
    with pytest.raises(TimeoutError, match=re.escape("Echo on no port: not received within 0.01 s: b'x'; received so far: b''")):
        dev.wait_received(b"x", timeout=0.01)


def test_device_file_round_trip():
    cfg = {
        "adapters": {
            "gps": {"kind": "uart", "port": "/dev/serial0", "simulator": "nmea-gps", "simulation": {"interval": 0.05}},
            "modem": {"kind": "uart", "port": "/dev/ttyUSB0", "baudrate": 115200, "simulator": "command",
                      "simulation": {"responses": {"ATI": "lgembed sim"}}},
        }
    }
    with load_device(cfg, simulate=True) as d:
        nmea_ok(d.adapter("gps").readline(timeout=3.0))
        d.adapter("modem").write(b"ATI\r\n")
        assert d.adapter("modem").readline(timeout=2.0) == b"lgembed sim\r\n"
        assert d.simulation("modem").commands == ["ATI"]
        assert d.adapter("modem").describe()["settings"]["baudrate"] == 115200
