"""The device file's `[bridges.NAME]` tables: a microcontroller behind a UART or CAN adapter.

Why: which port the MCU hangs on, its CAN ids and timeouts, and what its functions may do
as tools are configuration, like everything else on a board. `load_device` checks each
table when the file loads (without talking to the MCU); `device.bridge(name)` opens the
`BridgeClient` on first use and waits for the MCU's HELLO.

    [adapters.mcu_uart]
    kind = "uart"
    port = "/dev/ttyACM0"
    baudrate = 115200

    [bridges.mcu]
    transport = "uart"                 # "uart" or "can"
    adapter = "mcu_uart"               # a uart (or can) adapter of this file
    timeout = 0.05                     # seconds before the first retransmission
    retries = 3
    call_timeout = 2.0                 # default seconds per call
    connect_timeout = 2.0              # seconds device.bridge() waits for the HELLO
    # can_tx_id = 0x7E0, can_rx_id = 0x7E8, extended_id = false   (transport = "can")
    tools = { read_temp = { risk = "low" }, set_led = { risk = "high", args = ["on"] } }

A tool table holds a ToolPolicy's keys (risk, allow, ranges, rate_limit, max_length,
reason) plus `description` and `args` (the argument names the model sees). With `tools`,
only the functions it names become tools; without it, every function does, at low risk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lgembed.bridge.tools import POLICY_KEYS, TOOL_KEYS
from lgembed.edge.errors import DeviceFileError

__all__ = ("BRIDGE_KEYS", "check_bridges", "event_stream", "open_bridge")

BRIDGE_KEYS = (
    "transport",
    "adapter",
    "timeout",
    "retries",
    "call_timeout",
    "connect_timeout",
    "reconnect_interval",
    "max_payload",
    "can_tx_id",
    "can_rx_id",
    "extended_id",
    "tools",
)
"""Keys of a `[bridges.NAME]` table."""

_NUMBERS = {
    "timeout": (0.001, 10.0),
    "call_timeout": (0.001, 3600.0),
    "connect_timeout": (0.0, 3600.0),
    "reconnect_interval": (0.01, 60.0),
}


def _fail(src: str, key: str, value: Any, allowed: str) -> DeviceFileError:
    return DeviceFileError(f"{src}: invalid value for '{key}': {value!r}; allowed: {allowed}", src, key)


def _check_one(name: str, table: Any, registry: Any, src: str) -> dict[str, Any]:
    where = f"bridges.{name}"
    if not isinstance(table, Mapping):
        raise _fail(src, where, table, "a table")
    for k in table:
        if k not in BRIDGE_KEYS:
            msg = f"{src}: unknown key '{where}.{k}'; allowed keys: {', '.join(BRIDGE_KEYS)}"
            raise DeviceFileError(msg, src, f"{where}.{k}")
    t = dict(table)
    transport = t.get("transport")
    if transport not in ("uart", "can"):
        raise _fail(src, f"{where}.transport", transport, "'uart' or 'can'")
    adapter = t.get("adapter")
    if not isinstance(adapter, str) or adapter not in registry:
        names = ", ".join(repr(n) for n in registry.names() if registry.find(n, transport) is not None)
        raise _fail(src, f"{where}.adapter", adapter, f"the name of a {transport} adapter of this file ({names or 'none defined'})")
    if registry.find(adapter, transport) is None:
        kind = registry.require(adapter).kind
        raise _fail(src, f"{where}.adapter", adapter, f"a {transport} adapter (it is a {kind} adapter)")
    for k, (lo, hi) in _NUMBERS.items():
        if k in t:
            v = t[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise _fail(src, f"{where}.{k}", v, f"a number of seconds from {lo:g} to {hi:g}")
    v = t.get("retries", 3)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 16:
        raise _fail(src, f"{where}.retries", v, "an integer from 0 to 16")
    v = t.get("max_payload", 4096)
    if isinstance(v, bool) or not isinstance(v, int) or not 8 <= v <= 65535:
        raise _fail(src, f"{where}.max_payload", v, "an integer from 8 to 65535 (the longest payload accepted from the MCU)")
    ext = t.get("extended_id")
    if ext is not None and not isinstance(ext, bool):
        raise _fail(src, f"{where}.extended_id", ext, "true or false")
    for k in ("can_tx_id", "can_rx_id"):
        if k in t:
            if transport != "can":
                msg = f"{src}: '{where}.{k}' applies only to transport = \"can\""
                raise DeviceFileError(msg, src, f"{where}.{k}")
            hi = 0x1FFFFFFF if ext or ext is None else 0x7FF
            v = t[k]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= hi:
                raise _fail(src, f"{where}.{k}", v, f"a CAN id from 0 to 0x{hi:X}")
    tools = t.get("tools")
    if tools is not None:
        if not isinstance(tools, Mapping):
            raise _fail(src, f"{where}.tools", tools, "a table of function name -> policy table")
        for fn, pt in tools.items():
            key = f"{where}.tools.{fn}"
            if not isinstance(pt, Mapping):
                raise _fail(src, key, pt, "a table (risk, allow, ranges, rate_limit, max_length, reason, description, args)")
            for k in pt:
                if k not in POLICY_KEYS and k not in TOOL_KEYS:
                    msg = f"{src}: unknown key '{key}.{k}'; allowed keys: {', '.join(POLICY_KEYS + TOOL_KEYS)}"
                    raise DeviceFileError(msg, src, f"{key}.{k}")
            from lgembed.edge.policy import ToolPolicy

            ToolPolicy.from_dict({k: v for k, v in pt.items() if k in POLICY_KEYS}, src, key)
    return t


def check_bridges(tables: Any, registry: Any, src: str = "<dict>") -> dict[str, dict[str, Any]]:
    """Validates the `[bridges]` tables (no I/O).

    Raises:
        DeviceFileError: an unknown key or a bad value; the message names the file and key.
    """
    if not isinstance(tables, Mapping):
        raise _fail(src, "bridges", tables, "a table of bridge tables")
    return {name: _check_one(name, t, registry, src) for name, t in tables.items()}


def open_bridge(name: str, table: Mapping[str, Any], registry: Any, src: str = "<dict>") -> Any:
    """A connected BridgeClient for a checked `[bridges.NAME]` table.

    Raises:
        BridgeDisconnected: no HELLO within `connect_timeout` (the client is closed).
        DriverUnavailableError: can-isotp is missing (transport = "can").
    """
    from lgembed.bridge.client import BridgeClient

    kw = {k: table[k] for k in ("timeout", "retries", "call_timeout", "reconnect_interval") if k in table}
    adapter = registry.require(table["adapter"])
    if table["transport"] == "uart":
        client = BridgeClient.over_uart(adapter, max_payload=table.get("max_payload", 4096), registry=registry, name=name, **kw)
    else:
        client = BridgeClient.over_can(
            adapter,
            table.get("can_tx_id", 0x7E0),
            table.get("can_rx_id", 0x7E8),
            extended=table.get("extended_id"),
            max_payload=table.get("max_payload", 4096),
            registry=registry,
            name=name,
            **kw,
        )
    client.tool_policies = table.get("tools")
    try:
        client.connect(table.get("connect_timeout", 2.0))
    except BaseException:
        client.close()
        raise
    return client


def event_stream(device: Any, sources: Any = None, **kwargs: Any) -> Any:
    """`device.events(...)` for a device with bridges: an EventStream over the adapter
    sources, fed the events of the bridges named among `sources` (all bridges when
    `sources` is None, and then not the adapters the bridges use: their bytes or
    frames belong to the bridge).

    Raises:
        AdapterNotFoundError, ArgumentError: as EventStream.
        BridgeDisconnected: a bridge's MCU did not connect.
    """
    from lgembed.edge.events import EventStream

    tables = device._bridge_tables
    if sources is None:
        used = {t["adapter"] for t in tables.values()}
        sources = [
            n
            for n, a in device.registry.items()
            if n not in used and (a.kind in ("can", "uart") or (a.kind == "gpio" and a.settings.get("edge", "none") != "none"))
        ]
        sources += list(tables)
    sources = list(sources)
    stream = EventStream(device.registry, [s for s in sources if s not in tables], **kwargs)
    try:
        for s in sources:
            if s in tables:
                device.bridge(s).feed(stream)
    except BaseException:
        stream.close()
        raise
    return stream
