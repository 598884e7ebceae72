"""The CAN driver (python-can) against simulated nodes on python-can's virtual bus.

Every test opens the real `PythonCanBus` on the settings `lgembed.edge.sim.can.attach`
returns: interface "virtual" on a channel of its own, with a `SimCanPeer` on the far side.
"""

from __future__ import annotations

import errno
import re
import subprocess
import sys
import threading
import time

import pytest

from lgembed.edge import load_device
from lgembed.edge._base import check_settings
from lgembed.edge.can import FD_LENGTHS, PythonCanBus, filters_problem
from lgembed.edge.errors import (
    AdapterClosedError,
    ArgumentError,
    DeviceAbsentError,
    DeviceFileError,
    DriverError,
    DriverTimeoutError,
    DriverUnavailableError,
)
from lgembed.edge.sim import SimEnv
from lgembed.edge.sim import can as sim_can

can = pytest.importorskip("can")


@pytest.fixture
def env():
    e = SimEnv()
    yield e
    e.close()


def open_sim(env, name="bus", model=None, options=None, **settings):
    """The real driver on a simulated bus: (adapter, peer)."""
    checked = check_settings(PythonCanBus, settings, "<test>", f"adapters.{name}")
    s, peer = sim_can.attach(env, name, "python-can", checked, model, options or {}, "<test>")
    adapter = PythonCanBus(name, **s)
    env.on_close(adapter.close)  # closed before the peer (last registered, first run)
    return adapter, peer


def wait_until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


# --- frames both ways ----------------------------------------------------------------


def test_send_reaches_the_peer_standard_and_extended(env):
    bus, peer = open_sim(env, bitrate=500000)
    bus.send(0x123, b"\x01\x02\x03")
    bus.send(0x18FF50E5, [0xAA, 0xBB])  # above 0x7FF: extended automatically
    bus.send(0x10, b"", is_extended_id=True)
    bus.send(0x7FF, bytes(8))
    got = peer.wait_received(4, timeout=2.0)
    assert [(m.arbitration_id, m.is_extended_id, bytes(m.data)) for m in got] == [
        (0x123, False, b"\x01\x02\x03"),
        (0x18FF50E5, True, b"\xaa\xbb"),
        (0x10, True, b""),
        (0x7FF, False, bytes(8)),
    ]
    assert peer.recv(timeout=1.0).arbitration_id == 0x123  # recv() hands them out in order
    assert peer.model.__class__ is sim_can.CanDevice  # the default "peer" model records only


def test_peer_send_reaches_recv(env):
    bus, peer = open_sim(env)
    peer.send(0x321, b"\x09")
    peer.send(0x1ABCDEF0, [1, 2, 3, 4, 5, 6, 7, 8])
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, m.is_extended_id, bytes(m.data)) == (0x321, False, b"\x09")
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, m.is_extended_id, list(m.data)) == (0x1ABCDEF0, True, [1, 2, 3, 4, 5, 6, 7, 8])


def test_remote_frame(env):
    bus, peer = open_sim(env)
    bus.send(0x700, is_remote_frame=True)
    (m,) = peer.wait_received(1, timeout=2.0)
    assert m.is_remote_frame and m.arbitration_id == 0x700


def test_recv_timeout(env):
    bus, _ = open_sim(env)
    with pytest.raises(DriverTimeoutError) as exc:
        bus.recv(timeout=0.05)
    assert str(exc.value) == (
        f"Receiving a CAN frame on adapter 'bus' ({bus.device}): no frame arrived within 0.05 s. "
        "Fix: check that the peer is powered and connected, or pass a longer timeout."
    )
    assert exc.value.errno == errno.ETIMEDOUT and isinstance(exc.value, TimeoutError)


def test_recv_without_timeout_waits(env):
    bus, peer = open_sim(env)
    got = []
    t = threading.Thread(target=lambda: got.append(bus.recv()))
    t.start()
    wait_until(bus._recv_lock.locked)
    time.sleep(0.3)  # longer than one internal slice
    peer.send(0x42, b"late")
    t.join(timeout=5.0)
    assert [bytes(m.data) for m in got] == [b"late"]


def test_receive_own_messages(env):
    bus, peer = open_sim(env, receive_own_messages=True)
    bus.send(0x55, b"me")
    assert bytes(bus.recv(timeout=2.0).data) == b"me"
    assert bytes(peer.wait_received(1)[0].data) == b"me"


# --- filters -------------------------------------------------------------------------


def test_can_filters_setting(env):
    bus, peer = open_sim(env, can_filters=[{"can_id": 0x100, "can_mask": 0x7F0, "extended": False}])
    peer.send(0x200, b"\x00")  # id outside the mask
    peer.send(0x105, b"\x00", is_extended_id=True)  # id matches, but extended
    peer.send(0x105, b"\x05")
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, m.is_extended_id) == (0x105, False)
    with pytest.raises(DriverTimeoutError, match=re.escape("no frame arrived within 0.05 s (filters: id 0x100 mask 0x7F0, standard)")):
        bus.recv(timeout=0.05)


def test_set_filters_at_run_time(env):
    bus, peer = open_sim(env)
    bus.set_filters([{"can_id": 0x200, "can_mask": 0x7FF}])
    assert bus.settings["can_filters"] == [{"can_id": 0x200, "can_mask": 0x7FF}]
    peer.send(0x100, b"")
    peer.send(0x200, b"\x02")
    assert bus.recv(timeout=2.0).arbitration_id == 0x200
    bus.set_filters(None)
    peer.send(0x100, b"\x01")
    assert bus.recv(timeout=2.0).arbitration_id == 0x100
    with pytest.raises(ArgumentError, match=re.escape(f"Setting the CAN receive filters on adapter 'bus' ({bus.device}): 'filters' must be a list of tables {{can_id, can_mask, extended (optional)}}; entry 0 lacks 'can_mask'")):
        bus.set_filters([{"can_id": 1}])


@pytest.mark.parametrize(
    ("filters", "problem"),
    [
        ({"can_id": 1}, "a list of tables {can_id, can_mask, extended (optional)}"),
        ([5], "entry 0 is 5, not a table"),
        ([{"can_id": 1, "can_mask": 1, "mask": 1}], "entry 0 has unknown key 'mask' (keys: can_id, can_mask, extended)"),
        ([{"can_id": 1, "can_mask": 1}, {"can_id": -1, "can_mask": 1}], "entry 1: can_id -1 is not an integer from 0 to 0x1FFFFFFF"),
        ([{"can_id": 1, "can_mask": 1 << 29}], "entry 0: can_mask 536870912 is not an integer from 0 to 0x1FFFFFFF"),
        ([{"can_id": 1, "can_mask": 1, "extended": 1}], "entry 0: extended 1 is not true or false"),
        ([{"can_id": 0x800, "can_mask": 0x7FF, "extended": False}], "entry 0: can_id 0x800 is above 0x7FF for a standard (extended = false) filter"),
    ],
)
def test_bad_filters(filters, problem):
    assert problem in filters_problem(filters)
    if isinstance(filters, list):
        with pytest.raises(DeviceFileError, match=re.escape(f"<dict>: invalid value for 'adapters.bus.can_filters': {filters!r}; allowed: ")) as exc:
            PythonCanBus.from_settings("bus", {"interface": "virtual", "can_filters": filters})
        assert problem in str(exc.value) and exc.value.key == "adapters.bus.can_filters"


# --- CAN FD ------------------------------------------------------------------------------


def test_fd_frames_on_an_fd_bus(env):
    bus, peer = open_sim(env, fd=True, bitrate=500000, data_bitrate=2000000)
    assert bus.describe()["protocol"] == "CAN_FD"
    bus.send(0x123, bytes(range(64)), is_fd=True, bitrate_switch=True)
    (m,) = peer.wait_received(1, timeout=2.0)
    assert m.is_fd and m.bitrate_switch and bytes(m.data) == bytes(range(64))
    peer.send(0x1FFFFFFF, bytes(48), is_fd=True)
    m = bus.recv(timeout=2.0)
    assert m.is_fd and m.is_extended_id and len(m.data) == 48
    bus.send(0x10, bytes(8))  # classic frames still go on an FD bus
    assert not peer.wait_received(2, timeout=2.0)[1].is_fd


def test_fd_argument_errors(env):
    bus, _ = open_sim(env, fd=True)
    where = f"Sending a CAN frame on adapter 'bus' ({bus.device})"
    with pytest.raises(ArgumentError, match=re.escape(f"{where}: a CAN FD frame carries 0 to 8, 12, 16, 20, 24, 32, 48 or 64 bytes (got 10); pad it to 12 bytes")):
        bus.send(0x1, bytes(10), is_fd=True)
    with pytest.raises(ArgumentError, match=re.escape("a CAN FD frame carries 0 to 8, 12, 16, 20, 24, 32, 48 or 64 bytes (got 65)")):
        bus.send(0x1, bytes(65), is_fd=True)
    with pytest.raises(ArgumentError, match=re.escape(f"{where}: CAN FD has no remote frames")):
        bus.send(0x1, b"", is_fd=True, is_remote_frame=True)
    with pytest.raises(ArgumentError, match=re.escape(f"{where}: a classic CAN frame carries at most 8 bytes (got 12); split the data or send a CAN FD frame (is_fd=True)")):
        bus.send(0x1, bytes(12))
    for n in FD_LENGTHS:
        bus.send(0x1, bytes(n), is_fd=True)


def test_fd_frame_on_a_classic_bus(env):
    bus, _ = open_sim(env)
    with pytest.raises(ArgumentError) as exc:
        bus.send(0x1, bytes(16), is_fd=True)
    assert str(exc.value) == (
        f"Sending a CAN frame on adapter 'bus' ({bus.device}): a CAN FD frame (is_fd=True) needs a bus "
        "opened for CAN FD; set fd = true in the adapter's settings"
    )


# --- argument errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "text"),
    [
        ((0x20000000, b""), {}, "'arbitration_id' must be an integer from 0 to 0x7FF (11-bit) or 0x1FFFFFFF (29-bit) (got 536870912)"),
        ((-1, b""), {}, "'arbitration_id' must be an integer from 0 to 0x7FF (11-bit) or 0x1FFFFFFF (29-bit) (got -1)"),
        ((True, b""), {}, "(got True)"),
        ((0x800, b""), {"is_extended_id": False}, "'arbitration_id' 0x800 does not fit in 11 bits (0 to 0x7FF); pass is_extended_id=True for a 29-bit identifier"),
        ((0x1, bytes(9)), {}, "a classic CAN frame carries at most 8 bytes (got 9); split the data"),
        ((0x1, "hi"), {}, "'data' must be bytes or a list of integers 0..255, not str (got 'hi'); encode it first"),
        ((0x1, [1, 256]), {}, "'data' must be bytes or a list of integers 0..255 (got [1, 256])"),
        ((0x1, b"\x01"), {"is_remote_frame": True}, "a remote frame carries no data (got 1 bytes); pass data=b''"),
        ((0x1, b""), {"bitrate_switch": True}, "'bitrate_switch' applies only to CAN FD frames (pass is_fd=True)"),
        ((0x1, b""), {"is_extended_id": 1}, "'is_extended_id' must be true, false or None for automatic (got 1)"),
        ((0x1, b""), {"timeout": -1}, "'timeout' must be a number of seconds, 0 or more (got -1)"),
    ],
)
def test_send_argument_errors(env, args, kwargs, text):
    bus, peer = open_sim(env)
    with pytest.raises(ArgumentError, match=re.escape(text)):
        bus.send(*args, **kwargs)
    assert peer.received == []


def test_recv_argument_error(env):
    bus, _ = open_sim(env)
    with pytest.raises(ArgumentError, match=re.escape(f"Receiving a CAN frame on adapter 'bus' ({bus.device}): 'timeout' must be a number of seconds, 0 or more, or None to wait until a frame comes (got -0.5)")):
        bus.recv(timeout=-0.5)


# --- settings ------------------------------------------------------------------------


def test_settings_errors():
    with pytest.raises(DeviceFileError, match=re.escape("<dict>: invalid value for 'adapters.bus.bitrate': 2000000; allowed: bits per second, an integer from 1000 to 1000000")):
        PythonCanBus.from_settings("bus", {"interface": "virtual", "bitrate": 2_000_000})
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.bus.data_bitrate': 2000000; allowed: only with fd = true (a CAN FD bus)")):
        PythonCanBus.from_settings("bus", {"interface": "virtual", "data_bitrate": 2_000_000})
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'adapters.bus.interface': 'vcan'; allowed: a python-can interface (")) as exc:
        PythonCanBus.from_settings("bus", {"interface": "vcan"})
    assert exc.value.key == "adapters.bus.interface"
    with pytest.raises(DeviceFileError, match=re.escape("unknown setting 'adapters.bus.bustype'")):
        PythonCanBus.from_settings("bus", {"bustype": "virtual"})


def test_state_and_describe(env):
    bus, _ = open_sim(env, bitrate=250000)
    assert bus.state == "active"
    d = bus.describe()
    assert d["kind"] == "can" and d["driver"] == "python-can" and d["device"] == f"virtual:{bus.settings['channel']}"
    assert d["settings"]["bitrate"] == 250000 and d["state"] == "active" and d["protocol"] == "CAN_20"
    assert "link" not in d  # only socketcan has a network interface
    bus.close()
    assert bus.state == "closed" and bus.describe()["state"] == "closed"


# --- errors opening and using the bus --------------------------------------------------


def test_socketcan_on_this_kernel():
    # this host's kernel has no SocketCAN (errno 97); a host that has it has no such interface
    try:
        bus = PythonCanBus("real", interface="socketcan", channel="lgbnope0")
    except DeviceAbsentError as e:
        assert "no network interface named 'lgbnope0'" in str(e)
    except DriverError as e:
        assert e.errno == errno.EAFNOSUPPORT
        assert str(e) == (
            "Opening CAN bus on adapter 'real' (socketcan:lgbnope0): the kernel lacks SocketCAN (CONFIG_CAN): no AF_CAN "
            "sockets. Fix: use a kernel with SocketCAN (CONFIG_CAN, CONFIG_CAN_RAW and the controller's driver), or "
            "interface 'virtual' for tests."
        )
    else:
        bus.close()
        pytest.fail("opened a socketcan interface that should not exist")


def test_eafnosupport_injected(monkeypatch):
    def refuse(**kwargs):
        raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")

    monkeypatch.setattr(can, "Bus", refuse)
    with pytest.raises(DriverError, match=re.escape("Opening CAN bus on adapter 'b' (socketcan:can0): the kernel lacks SocketCAN (CONFIG_CAN)")):
        PythonCanBus("b")


def test_missing_interface_injected(monkeypatch):
    def absent(**kwargs):
        raise OSError(errno.ENODEV, "No such device")

    monkeypatch.setattr(can, "Bus", absent)
    with pytest.raises(DeviceAbsentError) as exc:
        PythonCanBus("b", channel="can1", bitrate=250000)
    assert str(exc.value) == (
        "Opening CAN bus on adapter 'b' (socketcan:can1): no network interface named 'can1'. Fix: enable the controller "
        "(e.g. dtoverlay=mcp2515-can0,... on a Raspberry Pi; `ip link` lists interfaces) and bring it up: "
        "ip link set can1 up type can bitrate 250000."
    )


def test_send_errors_map(env, monkeypatch):
    bus, _ = open_sim(env)

    def down(msg, timeout=None):
        try:
            raise OSError(errno.ENETDOWN, "Network is down")
        except OSError as e:
            raise can.CanOperationError(f"Failed to transmit: {e.strerror}", e.errno) from e

    monkeypatch.setattr(bus._bus, "send", down)
    channel = bus.settings["channel"]
    with pytest.raises(DriverError) as exc:
        bus.send(0x1, b"")
    assert str(exc.value) == (
        f"Sending CAN frame 0x1 on adapter 'bus' ({bus.device}): the interface '{channel}' is down. Fix: bring it up at boot "
        f"(systemd-networkd [CAN] BitRate=) or with: ip link set {channel} up type can bitrate 500000."
    )
    assert exc.value.errno == errno.ENETDOWN

    def full(msg, timeout=None):
        raise can.CanOperationError("Transmit buffer full")

    monkeypatch.setattr(bus._bus, "send", full)
    with pytest.raises(DriverError, match=re.escape("the transmit queue is full: no other node acknowledges the frames. Fix: check the wiring, the 120 ohm termination")):
        bus.send(0x1, b"")

    def timeout(msg, timeout=None):
        raise can.CanTimeoutError("send timed out")

    monkeypatch.setattr(bus._bus, "send", timeout)
    with pytest.raises(DriverTimeoutError, match=re.escape("Sending CAN frame 0x1 on adapter 'bus'")):
        bus.send(0x1, b"")


def test_closed_adapter(env):
    bus, _ = open_sim(env)
    bus.close()
    bus.close()  # twice is harmless
    with pytest.raises(AdapterClosedError, match=re.escape(f"Sending CAN frame 0x1 on adapter 'bus' ({bus.device}): the adapter is closed. Fix: open the device again.")):
        bus.send(0x1, b"")
    with pytest.raises(AdapterClosedError, match=re.escape("Receiving a CAN frame on adapter 'bus'")):
        bus.recv(timeout=0.1)
    with pytest.raises(AdapterClosedError):
        bus.set_filters(None)


def test_close_ends_a_waiting_recv(env):
    bus, _ = open_sim(env)
    errors = []

    def reader():
        try:
            bus.recv()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    wait_until(bus._recv_lock.locked)
    bus.close()
    t.join(timeout=5.0)
    assert not t.is_alive() and len(errors) == 1 and isinstance(errors[0], AdapterClosedError)


def test_missing_python_can(monkeypatch):
    monkeypatch.setitem(sys.modules, "can", None)
    with pytest.raises(DriverUnavailableError) as exc:
        PythonCanBus("bus")
    assert str(exc.value) == (
        "Opening can adapter 'bus': the driver needs the Python module 'can' (package python-can), "
        "which is not installed. Fix: pip install 'lgembed[hardware]'"
    )


def test_import_does_not_load_python_can():
    code = "import sys, lgembed.edge.can, lgembed.edge.sim.can; print(sorted(m for m in sys.modules if m.split('.')[0] in ('serial', 'can', 'periphery')))"
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the simulator's models ----------------------------------------------------------


def test_echo_model(env):
    bus, peer = open_sim(env, model="echo", fd=True)
    assert isinstance(peer.model, sim_can.EchoDevice)
    bus.send(0x123, b"\x01\x02")
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, bytes(m.data), m.is_extended_id) == (0x123, b"\x01\x02", False)
    bus.send(0x1234567, bytes(32), is_fd=True, bitrate_switch=True)
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, m.is_extended_id, m.is_fd, m.bitrate_switch, len(m.data)) == (0x1234567, True, True, True, 32)


def test_respond_hook_replaced(env):
    bus, peer = open_sim(env)
    peer.respond = lambda m: [peer.message(m.arbitration_id + 1, bytes(m.data)[::-1])]
    bus.send(0x100, b"\x01\x02")
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, bytes(m.data)) == (0x101, b"\x02\x01")


class Heartbeat(sim_can.CanDevice):
    """A custom model: a status frame every `period` seconds; answers 0x600 requests."""

    def __init__(self, peer, node: int = 1, period: float = 0.05) -> None:
        super().__init__(peer)
        if not isinstance(node, int) or not 1 <= node <= 127:
            raise sim_can.OptionError("node", node, "an integer from 1 to 127")
        self.node = node
        self.period = period
        self.next = 0.0

    def on_frame(self, msg):
        if msg.arbitration_id == 0x600 + self.node:
            return self.peer.message(0x580 + self.node, b"\x60" + bytes(msg.data[1:4]) + bytes(4))
        return None

    def tick(self, now):
        if now >= self.next:
            self.next = now + self.period
            return [self.peer.message(0x700 + self.node, b"\x05")]
        return None


def test_custom_model_with_options(env):
    bus, peer = open_sim(env, model=f"{__name__}:Heartbeat", options={"node": 5})
    assert isinstance(peer.model, Heartbeat) and peer.model.peer is peer and peer.model.node == 5
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, bytes(m.data)) == (0x705, b"\x05")
    bus.set_filters([{"can_id": 0x585, "can_mask": 0x7FF}])
    bus.send(0x605, b"\x40\x00\x10\x00")
    m = bus.recv(timeout=2.0)
    assert (m.arbitration_id, bytes(m.data[:4])) == (0x585, b"\x60\x00\x10\x00")
    assert peer.errors == []


@pytest.mark.parametrize(
    ("model", "options", "key", "text"),
    [
        (f"{__name__}:Heartbeat", {"node": 0}, "adapters.bus.simulation.node", "<test>: invalid value for 'adapters.bus.simulation.node': 0; allowed: an integer from 1 to 127"),
        (f"{__name__}:Heartbeat", {"nod": 1}, "adapters.bus.simulation.nod", "<test>: unknown option 'adapters.bus.simulation.nod' for the can simulator"),
        ("echo", {"delay": 1}, "adapters.bus.simulation.delay", "unknown option 'adapters.bus.simulation.delay' for the can simulator 'echo'; allowed: none"),
        ("loopback", {}, "adapters.bus.simulator", "invalid value for 'adapters.bus.simulator': 'loopback'; allowed: 'echo', 'peer', or 'module:Class'"),
        ("os:getcwd", {}, "adapters.bus.simulator", "'os:getcwd' is not a subclass of lgembed.edge.sim.can.CanDevice"),
    ],
)
def test_bad_simulator_settings(env, model, options, key, text):
    checked = check_settings(PythonCanBus, {}, "<test>", "adapters.bus")
    with pytest.raises(DeviceFileError, match=re.escape(text)) as exc:
        sim_can.attach(env, "bus", "python-can", checked, model, options, "<test>")
    assert exc.value.key == key


def test_model_errors_are_recorded_not_fatal(env):
    bus, peer = open_sim(env)

    def respond(m):
        if m.arbitration_id == 0x666:
            raise RuntimeError("model bug")
        return [peer.message(m.arbitration_id, b"ok")]

    peer.respond = respond
    bus.send(0x666, b"")
    bus.send(0x1, b"")
    assert bytes(bus.recv(timeout=2.0).data) == b"ok"
    assert [str(e) for e in peer.errors] == ["model bug"]


def test_peer_helpers(env):
    bus, peer = open_sim(env)
    assert peer.recv(timeout=0.01) is None
    with pytest.raises(TimeoutError, match=re.escape(f"SimCanPeer on {peer.channel}: 0 of 1 frames received within 0.01 s")):
        peer.wait_received(1, timeout=0.01)
    with pytest.raises(ValueError):
        peer.send(0x1, bytes(9))  # python-can's own check
    assert peer.channel == bus.settings["channel"] and peer.channel.startswith("lgembed-sim-bus-")


def test_channels_are_private(env):
    a, pa = open_sim(env, name="a")
    b, pb = open_sim(env, name="b")
    assert a.settings["channel"] != b.settings["channel"]
    a.send(0x1, b"a")
    assert bytes(pa.wait_received(1)[0].data) == b"a"
    assert pb.recv(timeout=0.1) is None


def test_device_file_round_trip():
    cfg = {"adapters": {"motor": {"kind": "can", "channel": "can0", "bitrate": 500000, "fd": True, "simulator": "echo"}}}
    with load_device(cfg, simulate=True) as d:
        bus = d.adapter("motor")
        assert bus.settings["interface"] == "virtual" and bus.settings["fd"] is True
        bus.send(0x7E0, bytes(20), is_fd=True)
        assert len(bus.recv(timeout=2.0).data) == 20
        assert isinstance(d.simulation("motor"), sim_can.SimCanPeer)
