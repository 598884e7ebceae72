"""BridgeClient over real pseudo-terminals and python-can's virtual bus, against the Python
MCU (lgembed.bridge.softmcu); the C firmware's end-to-end tests are test_bridge_e2e.py.

Covers: connect/HELLO, calls and their errors (LocalProtocolError / RemoteProtocolError
with .code), ping, events (iterator and EventStream), garbage on the line, a cut cable
and its reconnection through a by-id style symlink, a restarted MCU, the device file's
`[bridges.NAME]` table, tools under policy (approval), and CAN with ISO-TP.
"""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest

from lgembed.bridge import messages as m
from lgembed.bridge.client import EVENT_KIND, BridgeClient
from lgembed.bridge.errors import (
    BridgeDisconnected,
    BridgeTimeoutError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)
from lgembed.bridge.softmcu import SoftMcu, SoftMcuPort, sensor_node
from lgembed.bridge.wire import PtyWire
from lgembed.edge import DeviceFileError, EdgeError, load_device
from lgembed.edge.errors import DriverTimeoutError
from lgembed.edge.uart import SerialUART


@pytest.fixture
def rig(tmp_path):
    """A PtyWire with the Python sensor node on end A and a connected client on end B."""
    link = str(tmp_path / "ttyMCU")
    wire = PtyWire(link=link)
    state = {"temperature": 21.5, "led": False}
    mcu = SoftMcuPort(sensor_node(state), wire.port_a)
    uart = SerialUART("mcu_uart", port=link, baudrate=115200)
    client = BridgeClient.over_uart(uart, name="mcu", call_timeout=2.0)
    client.connect(3.0)
    yield client, mcu, wire, state
    client.close()
    client.transport.port.close()
    mcu.close()
    wire.close()


def test_connect_functions_and_calls(rig):
    client, mcu, _, state = rig
    assert client.connected and client.hello().device_id == "soft-node"
    assert list(client.functions) == ["read_temp", "set_led", "echo"]
    assert client.functions["set_led"].arg_types == "b"
    assert client.event_names == ("button",)
    assert client.call("read_temp") == 21.5
    state["temperature"] = 19.25
    assert client.call("read_temp") == 19.25
    assert client.call("set_led", True) is True and state["led"] is True
    assert client.call("echo", b"\x00\x01\xff" * 30) == b"\x00\x01\xff" * 30
    assert 0 < client.ping() < 0.5
    assert 0 < client.ping(b"12345678") < 0.5
    assert re.fullmatch(r"<BridgeClient 'mcu' on UART adapter 'mcu_uart' \(.*\): connected soft-node 1.0.0>", repr(client))


def test_call_errors(rig):
    client, *_ = rig
    with pytest.raises(LocalProtocolError) as ei:
        client.call("self_destruct")
    assert ei.value.code == m.ERR_NO_FUNCTION
    assert str(ei.value) == (
        "Calling self_destruct on bridge 'mcu': the MCU (soft-node) has no function 'self_destruct'; "
        "its functions: read_temp, set_led, echo"
    )
    with pytest.raises(LocalProtocolError, match=re.escape("argument 1 must be true or false (type 'b') (got 1)")) as ei:
        client.call("set_led", 1)
    assert ei.value.code == m.ERR_ARGS
    with pytest.raises(LocalProtocolError, match=re.escape("it takes 1 argument (bool), got 0")):
        client.call("set_led")
    with pytest.raises(LocalProtocolError) as ei:
        client.call("echo", bytes(200))  # the MCU's max_payload is 128
    assert ei.value.code == m.ERR_TOO_LONG and "max_payload" in str(ei.value)
    with pytest.raises(LocalProtocolError):
        client.ping(bytes(9))
    assert isinstance(ei.value, (ProtocolError, EdgeError))


def test_remote_errors(tmp_path):
    def fail():
        raise RuntimeError("probe disconnected")

    with PtyWire() as wire, SoftMcuPort(SoftMcu([("probe", "", "f", fail)], device_id="x"), wire.port_a):
        with BridgeClient.over_uart(wire.port_b, name="x") as client:
            client.connect(3)
            with pytest.raises(RemoteProtocolError) as ei:
                client.call("probe")
            assert ei.value.code == m.ERR_FUNCTION and ei.value.code_name == "LGB_ERR_FUNCTION"
            assert str(ei.value) == "Calling probe on the MCU: LGB_ERR_FUNCTION (the function failed): probe disconnected"


def test_events_iterator_and_backlog(rig):
    client, mcu, *_ = rig
    mcu.emit("button", True)  # nobody listens yet: kept in the backlog
    time.sleep(0.2)
    with client.events() as events:
        ev = events.get(2.0)
        assert ev.kind == EVENT_KIND and ev.source == "mcu"
        assert ev.data["event"] == "button" and ev.data["value"] is True and ev.data["device_id"] == "soft-node"
        mcu.emit("button", False)
        assert next(events).data["value"] is False
        with pytest.raises(DriverTimeoutError, match="none arrived within 0.05 s"):
            events.get(0.05)
    with pytest.raises(StopIteration):
        events.get(0.01)


def test_garbage_on_the_line_is_survived(rig):
    client, mcu, wire, _ = rig
    # noise on the line towards the host, mid-conversation, and towards the MCU
    for _ in range(20):
        wire.inject(b"\x13\x37\xff\xfe garbage \x00\x05\x01\x02", to="b")
        wire.inject(b"\xaa\x00\x07\x07", to="a")
        assert client.call("echo", b"ok") == b"ok"
    assert mcu.mcu.decoder.errors.get(m.ERR_COBS, 0) >= 20
    assert client.transport.decoder.errors.get(m.ERR_COBS, 0) >= 20
    assert client.stats["dropped_frames"] >= 20


def test_cut_cable_gives_a_clear_error_and_reconnects(rig):
    client, mcu, wire, _ = rig
    assert client.call("read_temp") == 21.5
    wire.unplug()
    with pytest.raises(BridgeDisconnected) as ei:
        for _ in range(50):  # the reader notices the EIO within a poll or two
            client.call("read_temp", timeout=0.3)
            time.sleep(0.05)
    text = str(ei.value)
    assert "Calling read_temp on bridge 'mcu' (UART adapter 'mcu_uart'" in text or "the port failed" in text
    assert "Fix: check that the MCU is powered and connected to UART adapter 'mcu_uart'" in text
    assert client.state == "disconnected" and isinstance(ei.value, EdgeError)
    wire.replug()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            assert client.call("read_temp", timeout=1.0) == 21.5
            break
        except BridgeDisconnected:
            time.sleep(0.1)
    assert client.connected and client.stats["reconnects"] >= 1 and client.stats["port_failures"] >= 1


def test_silent_mcu_then_restart(tmp_path):
    wire = PtyWire()
    mcu = SoftMcuPort(sensor_node(), wire.port_a)
    try:
        with BridgeClient.over_uart(wire.port_b, name="mcu", reconnect_interval=0.1) as client:
            client.connect(3)
            mcu.close()  # the MCU dies: nobody answers any more
            t0 = time.monotonic()
            with pytest.raises(BridgeTimeoutError) as ei:
                client.call("read_temp", timeout=5)
            assert time.monotonic() - t0 < 1.5  # 50 + 100 + 200 + 400 ms, plus airtime
            assert "no ACK after 4 transmissions" in str(ei.value) and ei.value.code == m.ERR_TIMEOUT
            assert client.state == "disconnected"
            with pytest.raises(BridgeDisconnected, match=r"the MCU is not connected \(no ACK from the MCU after 4 transmissions\)"):
                client.call("read_temp", timeout=0.2)
            mcu = SoftMcuPort(sensor_node({"temperature": 30.0}), wire.port_a)  # it boots again
            assert client.call("read_temp", timeout=3) == 30.0
            assert client.connected
    finally:
        mcu.close()
        wire.close()


def test_concurrent_callers(rig):
    client, *_ = rig
    results, errors = [], []

    def worker(i):
        try:
            for k in range(10):
                data = bytes([i, k]) * 5
                assert client.call("echo", data) == data
            results.append(i)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and sorted(results) == [0, 1, 2, 3]


# --- the device file ------------------------------------------------------------------------

DEVICE = {
    "adapters": {
        "mcu_uart": {
            "kind": "uart",
            "port": "/dev/ttyACM0",
            "baudrate": 115200,
            "simulator": "lgembed.bridge.softmcu:SoftMcuDevice",
            "simulation": {"device_id": "sim-node", "temperature": 18.5},
        },
        "button": {"kind": "gpio", "line": 5, "direction": "in", "edge": "both"},
    },
    "bridges": {
        "mcu": {
            "transport": "uart",
            "adapter": "mcu_uart",
            "timeout": 0.05,
            "retries": 3,
            "tools": {"read_temp": {"risk": "low"}, "set_led": {"risk": "high", "args": ["on"], "reason": "the lab light"}},
        }
    },
}


def test_device_file_bridge_and_tools():
    with load_device(DEVICE, simulate=True) as device:
        client = device.bridge("mcu")
        assert client is device.bridge("mcu") and client.hello().device_id == "sim-node"
        assert client.call("read_temp") == 18.5
        tools = {t.name: t for t in client.tools()}
        assert set(tools) == {"read_temp", "set_led"}  # echo is not listed: no tool
        assert tools["set_led"].policy.risk == "high" and tools["set_led"].adapters == ("mcu",)
        schema = tools["set_led"].tool_call_schema
        assert schema["properties"]["on"]["type"] == "boolean"
        assert tools["read_temp"].invoke({}) == "18.5"
        with pytest.raises(Exception, match="No bridge named 'nope'"):
            device.bridge("nope")
    assert client.state == "closed"


def test_device_events_include_the_bridge():
    with load_device(DEVICE, simulate=True) as device:
        sim = device.simulation("mcu_uart")
        with device.events(["mcu", "button"]) as stream:
            device.bridge("mcu")
            sim.press(True)
            ev = stream.get(3.0)
            assert (ev.source, ev.kind, ev.data["event"], ev.data["value"]) == ("mcu", "bridge_event", "button", True)
        with device.events() as stream:  # every source: the bridge's UART is not watched as lines
            sim.press(False)
            ev = stream.get(3.0)
            assert ev.kind == "bridge_event"


def test_service_event_trigger_from_the_mcu():
    triggers = pytest.importorskip("lgembed.service.triggers", reason="lgembed.service is not there")
    from lgembed.service.config import TriggerSpec

    class Manager:
        def __init__(self):
            self.runs = []
            self.got = threading.Event()

        def create_run(self, thread, graph, **kw):
            self.runs.append((thread, graph, kw))
            self.got.set()
            return {"run_id": "r1"}

    with load_device(DEVICE, simulate=True) as device:
        manager = Manager()
        spec = TriggerSpec(kind="event", graph="g", thread="t", source="mcu", multitask_strategy="enqueue")
        trig = triggers.Triggers([spec], manager, device)
        trig.start()
        try:
            device.bridge("mcu")
            device.simulation("mcu_uart").press(True)
            assert manager.got.wait(3.0)
        finally:
            trig.stop()
        thread, graph, kw = manager.runs[0]
        ev = kw["input"]["event"]
        assert (thread, graph, ev["source"], ev["kind"], ev["data"]["event"], ev["data"]["value"]) == ("t", "g", "mcu", "bridge_event", "button", True)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"transport": "spi"}, "invalid value for 'bridges.mcu.transport': 'spi'; allowed: 'uart' or 'can'"),
        ({"adapter": "button"}, "invalid value for 'bridges.mcu.adapter': 'button'; allowed: a uart adapter (it is a gpio adapter)"),
        ({"adapter": "nope"}, "invalid value for 'bridges.mcu.adapter': 'nope'; allowed: the name of a uart adapter of this file ('mcu_uart')"),
        ({"retries": 99}, "invalid value for 'bridges.mcu.retries': 99; allowed: an integer from 0 to 16"),
        ({"timeout": 0}, "invalid value for 'bridges.mcu.timeout': 0; allowed: a number of seconds from 0.001 to 10"),
        ({"can_tx_id": 0x7E0}, "'bridges.mcu.can_tx_id' applies only to transport = \"can\""),
        ({"colour": "red"}, "unknown key 'bridges.mcu.colour'; allowed keys: transport, adapter, timeout"),
        ({"tools": {"set_led": {"risk": "extreme"}}}, "'risk' must be one of 'low', 'medium', 'high', 'critical' (got 'extreme')"),
        ({"tools": {"set_led": {"colour": 1}}}, "unknown key 'bridges.mcu.tools.set_led.colour'"),
    ],
)
def test_device_file_errors(patch, message):
    cfg = {**DEVICE, "bridges": {"mcu": {**DEVICE["bridges"]["mcu"], **patch}}}
    with pytest.raises(DeviceFileError) as ei:
        load_device(cfg, simulate=True)
    assert message in str(ei.value)


def test_tools_for_unknown_functions_are_refused(rig):
    client, *_ = rig
    with pytest.raises(LocalProtocolError, match="does not announce 'fly'; its functions: read_temp, set_led, echo") as ei:
        client.tools({"fly": {"risk": "low"}})
    assert ei.value.code == m.ERR_NO_FUNCTION
    tools = client.tools()
    assert [t.name for t in tools] == ["read_temp", "set_led", "echo"]
    assert all(t.policy.risk == "low" for t in tools)
    echo = tools[2]
    assert echo.tool_call_schema["properties"]["value"]["type"] == "array"
    assert echo.invoke({"value": [1, 2, 3]}) == "[1, 2, 3]"
    assert "Runs echo(value: bytes) on microcontroller soft-node (bridge 'mcu'); returns bytes." == echo.description


# --- CAN with ISO-TP --------------------------------------------------------------------------


class CanSoftMcu:
    """The Python sensor node on a python-can virtual bus, ISO-TP through can-isotp."""

    def __init__(self, channel: str, mcu: SoftMcu | None = None, rx_id: int = 0x7E0, tx_id: int = 0x7E8) -> None:
        import can

        from lgembed.bridge.isotp import IsoTpChannel

        self.bus = can.Bus(interface="virtual", channel=channel)
        self.mcu = mcu or sensor_node()
        self.ch = IsoTpChannel(self.bus, tx_id=tx_id, rx_id=rx_id)
        self.ch.open()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        with self._lock:
            self.mcu.start(time.monotonic(), framed=False)
        while not self._stop.is_set():
            with self._lock:
                for p in self.mcu.packets():
                    self.ch.send(p)
            raw = self.ch.recv(0.002)
            with self._lock:
                now = time.monotonic()
                if raw:
                    self.mcu.receive_packet(raw, now)
                self.mcu.tick(now, framed=False)

    def emit(self, name, value):
        with self._lock:
            self.mcu.emit(name, value, time.monotonic(), framed=False)

    def close(self):
        self._stop.set()
        self._t.join(2)
        self.ch.close()
        self.bus.shutdown()


def test_can_isotp_with_the_python_mcu():
    pytest.importorskip("isotp", reason="can-isotp is not installed (the hardware extra)")
    channel = f"lgembed-test-{uuid.uuid4().hex}"
    peer = CanSoftMcu(channel)
    try:
        cfg = {
            "adapters": {"bus": {"kind": "can", "interface": "virtual", "channel": channel}},
            "bridges": {"mcu": {"transport": "can", "adapter": "bus", "can_tx_id": 0x7E0, "can_rx_id": 0x7E8}},
        }
        with load_device(cfg) as device:
            client = device.bridge("mcu")
            assert client.call("read_temp") == 21.5
            assert client.call("echo", bytes(range(100))) == bytes(range(100))  # FF + 15 CFs each way
            assert client.ping() < 0.5
            with client.events() as events:
                peer.emit("button", True)
                data = events.get(2.0).data
                assert isinstance(data.pop("timestamp_ms"), int)  # the MCU's own clock
                assert data == {"event": "button", "index": 0, "value": True, "device_id": "soft-node"}
            assert client.transport.isotp_errors == 0
            assert "CAN can:virtual" in client.transport.name or "virtual" in client.transport.name
    finally:
        peer.close()


def test_can_extended_ids_and_bad_ids():
    pytest.importorskip("isotp", reason="can-isotp is not installed (the hardware extra)")
    channel = f"lgembed-test-{uuid.uuid4().hex}"
    peer = CanSoftMcu(channel, rx_id=0x18DA10F1, tx_id=0x18DAF110)
    try:
        cfg = {
            "adapters": {"bus": {"kind": "can", "interface": "virtual", "channel": channel}},
            "bridges": {"mcu": {"transport": "can", "adapter": "bus", "can_tx_id": 0x18DA10F1, "can_rx_id": 0x18DAF110}},
        }
        with load_device(cfg) as device:
            client = device.bridge("mcu")
            assert client.transport.channel.extended
            assert client.call("echo", bytes(50)) == bytes(50)
    finally:
        peer.close()
    bad = {
        "adapters": {"bus": {"kind": "can", "interface": "virtual", "channel": channel}},
        "bridges": {"mcu": {"transport": "can", "adapter": "bus", "extended_id": False, "can_tx_id": 0x800}},
    }
    with pytest.raises(DeviceFileError, match=re.escape("invalid value for 'bridges.mcu.can_tx_id': 2048; allowed: a CAN id from 0 to 0x7FF")):
        load_device(bad)


# --- a graph whose agent uses the MCU's tools ------------------------------------------------


class ScriptedModel:
    """Reads the temperature, then asks to switch the LED on (a high-risk tool)."""

    def bind_tools(self, tools):
        return self

    def invoke(self, messages):
        from lgembed.messages import AIMessage, ToolMessage

        last = messages[-1]
        if not isinstance(last, ToolMessage):
            return AIMessage("", tool_calls=[{"name": "read_temp", "args": {}, "id": "t1", "type": "tool_call"}])
        if last.name == "read_temp":
            return AIMessage(f"{last.content} C", tool_calls=[{"name": "set_led", "args": {"on": True}, "id": "t2", "type": "tool_call"}])
        return AIMessage(f"done: {last.content}")


def run_agent_with_approval(device, approve=True):
    import warnings

    from lgembed.checkpoint.memory import InMemorySaver
    from lgembed.messages import HumanMessage
    from lgembed.prebuilt import create_react_agent
    from lgembed.store.memory import InMemoryStore
    from lgembed.types import Command

    warnings.simplefilter("ignore", DeprecationWarning)
    store = InMemoryStore()
    agent = create_react_agent(ScriptedModel(), device.bridge("mcu").tools(), checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [HumanMessage("check")]}, config)
    (intr,) = first["__interrupt__"]
    assert intr.value["type"] == "approval" and intr.value["tool"] == "set_led" and intr.value["risk"] == "high"
    assert intr.value["args"] == {"on": True} and intr.value["adapter"] == "mcu"
    final = agent.invoke(Command(resume={"approved": approve}), config)
    audit = [i.value for i in store.search(("lgembed", "audit"), limit=10)]
    return first, final, audit


def test_graph_agent_uses_bridge_tools_with_approval():
    with load_device(DEVICE, simulate=True) as device:
        sim = device.simulation("mcu_uart")
        first, final, audit = run_agent_with_approval(device)
        assert first["messages"][2].content == "18.5"  # read_temp ran at low risk
        assert sim.state["led"] is True  # set_led ran only after the approval
        assert final["messages"][-1].content == "done: true"
        assert [(a["tool"], a["outcome"]) for a in audit] == [("read_temp", "allowed"), ("set_led", "approved")]
    with load_device(DEVICE, simulate=True) as device:
        sim = device.simulation("mcu_uart")
        _, final, audit = run_agent_with_approval(device, approve=False)
        assert sim.state["led"] is False and sim.mcu.runs["set_led"] == 0
        assert "denied by the operator" in final["messages"][-2].content


def test_over_a_plain_pyserial_port():
    serial = pytest.importorskip("serial")
    with PtyWire() as wire, SoftMcuPort(sensor_node(), wire.port_a):
        port = serial.Serial(wire.port_b, 115200)
        try:
            with BridgeClient.over_uart(port, name="raw") as client:
                client.connect(3)
                assert client.call("echo", b"abc") == b"abc"
                assert client.transport.name == f"serial port {wire.port_b}"
        finally:
            port.close()


def test_fuzz_script_short_run():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "tools" / "fuzz-bridge-py.py"), "--runs", "3000"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fuzz-bridge-py: 3000 inputs" in proc.stdout and "no undocumented exception" in proc.stdout


def test_import_is_lazy_and_all_is_complete():
    import importlib
    import subprocess
    import sys

    code = "import sys, lgembed.bridge; print(sorted(m for m in ('msgpack', 'serial', 'can', 'isotp', 'lgembed.bridge.codec') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    import lgembed.bridge as b

    for name in b.__all__:
        assert getattr(b, name) is not None
    for mod in ("messages", "errors", "framing", "codec", "link", "session", "isotp", "transport", "events", "client", "tools", "device", "softmcu", "wire", "firmware"):
        mod = importlib.import_module(f"lgembed.bridge.{mod}")
        assert isinstance(mod.__all__, tuple)
        assert all(hasattr(mod, n) for n in mod.__all__), mod.__name__


def test_hello_refresh(rig):
    client, mcu, *_ = rig
    first = client.hello()
    assert client.hello() is first  # the one already received
    again = client.hello(refresh=True)  # HELLO_REQ: a new one
    assert again == first and again is not first
    assert client.call("read_temp") == 21.5
