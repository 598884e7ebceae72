"""The device file and the `Device` it builds: adapters, simulators, tools, a world.

Why: a board's hardware is configuration, not code. One TOML file names every adapter
(its kind, driver and driver settings, under the underlying library's own argument
names), the simulator that stands in for it on a laptop, and the hardware tools a
graph may use. The same file runs on the board and, with `simulate=True`, on a laptop.

    [device]
    name = "greenhouse"

    [adapters.heater]              # a GPIO output on the character device
    kind = "gpio"
    path = "/dev/gpiochip0"
    line = 17
    direction = "out"

    [adapters.room]                # a TMP102 on I2C bus 1
    kind = "i2c"
    devpath = "/dev/i2c-1"
    address = 0x48
    simulator = "tmp102"
    simulation = { celsius = 18.0 }

    [tools.set_heater]
    adapter = "heater"
    action = "write"
    policy = { risk = "high", rate_limit = "6/minute" }

    [world]                        # simulated physics linking simulators (simulate only)
    model = "room"
    heater = "heater"
    sensors = ["room"]

    [bridges.mcu]                  # a microcontroller on a UART or CAN adapter (lgembed.bridge)
    transport = "uart"
    adapter = "mcu_uart"
    tools = { read_temp = { risk = "low" } }

Keys of an adapter's table besides its driver settings: `kind`, `driver`, `simulator`
(a built-in name or "module:Class"), `simulation` (the simulator's options) and
`simulate` (true: simulate this adapter even when the device is not simulated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lgembed import _toml
from lgembed.edge.errors import AdapterNotFoundError, DeviceFileError, EdgeError
from lgembed.edge.registry import EdgeAdapterRegistry, driver_class

__all__ = ("Device", "load_device")

_TOP_KEYS = ("device", "adapters", "tools", "world", "bridges")
_ADAPTER_KEYS = ("kind", "driver", "simulator", "simulation", "simulate")


def _read_toml(path: str) -> dict[str, Any]:
    try:
        return _toml.load(path, "device file")
    except _toml.TomlError as e:
        raise DeviceFileError(str(e), path) from e


class Device:
    """A loaded device: open adapters in a registry, their simulations, its tools.

    Use as a context manager, or call `close()`.

    Attributes:
        name: the `[device] name`, or the file's stem.
        registry: the EdgeAdapterRegistry holding every adapter.
        source: the device file's path, or "<dict>".
        world: the simulated world, when the file has a `[world]` table and simulates.
        config: the parsed device file.
    """

    def __init__(self, name: str, source: str, config: dict[str, Any]) -> None:
        self.name = name
        self.source = source
        self.config = config
        self.registry = EdgeAdapterRegistry()
        self.world: Any = None
        self._sims: dict[str, Any] = {}
        self._env: Any = None
        self._tools: list[Any] | None = None
        self._closed = False
        self._bridges: dict[str, Any] = {}  # open BridgeClients (lgembed.bridge), by name
        self._bridge_tables: dict[str, Any] = {}  # the checked [bridges.NAME] tables

    # --- lookups ----------------------------------------------------------------------

    def adapter(self, name: str, kind: str | None = None) -> Any:
        """The open adapter `name` (of `kind`, when given).

        Raises:
            AdapterNotFoundError: no such adapter.
        """
        return self.registry.require(name, kind)

    def simulation(self, name: str) -> Any:
        """The simulated peer of adapter `name` (a SimLine, a TMP102, a pty device model, ...).

        Raises:
            AdapterNotFoundError: no such adapter.
            EdgeError: the adapter is not simulated.
        """
        self.registry.require(name)
        try:
            return self._sims[name]
        except KeyError:
            msg = (
                f"Adapter '{name}' is not simulated: it drives real hardware. "
                "Fix: load the device with simulate=True (or simulate = true in its table)."
            )
            raise EdgeError(msg) from None

    @property
    def simulated(self) -> frozenset[str]:
        """Names of the simulated adapters."""
        return frozenset(self._sims)

    def tools(self, names: Iterable[str] | None = None) -> list[Any]:
        """The hardware tools declared in the device file (all, or those in `names`).

        Raises:
            AdapterNotFoundError: a name that is not a declared tool.
        """
        if self._tools is None:
            from lgembed.edge.tools import tool_from_table

            tables = self.config.get("tools", {})
            self._tools = [tool_from_table(n, t, self.registry, self.source) for n, t in tables.items()]
        if names is None:
            return list(self._tools)
        by_name = {t.name: t for t in self._tools}
        out = []
        for n in names:
            if n not in by_name:
                msg = f"No tool named {n!r} in {self.source} (tools: {', '.join(by_name) or 'none'})"
                raise AdapterNotFoundError(msg)
            out.append(by_name[n])
        return out

    def hardware_tool(self, adapter: str, **kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
        """`lgembed.edge.hardware_tool` for the adapter named `adapter`."""
        from lgembed.edge.tools import hardware_tool

        return hardware_tool(self.adapter(adapter), **kwargs)

    def events(self, sources: Iterable[str] | None = None, **kwargs: Any) -> Any:
        """An EventStream over this device's adapters (see `lgembed.edge.events`).

        A `[bridges.NAME]` name among `sources` adds that MCU's events (kind
        "bridge_event"); with `sources` None every bridge is included and the adapters
        the bridges use are not watched (their bytes or frames belong to the bridge).
        """
        if self._bridge_tables:
            from lgembed.bridge.device import event_stream

            return event_stream(self, sources, **kwargs)
        from lgembed.edge.events import EventStream

        return EventStream(self.registry, sources, **kwargs)

    def bridge(self, name: str) -> Any:
        """The connected `lgembed.bridge.BridgeClient` of `[bridges.NAME]` (opened on first use).

        Raises:
            AdapterNotFoundError: no such bridge in the device file.
            BridgeDisconnected: the MCU did not send its HELLO within the table's
                `connect_timeout` (the next call tries again).
        """
        client = self._bridges.get(name)
        if client is not None and client.state != "closed":
            return client
        if name not in self._bridge_tables:
            msg = f"No bridge named {name!r} in {self.source} (bridges: {', '.join(self._bridge_tables) or 'none'})"
            raise AdapterNotFoundError(msg)
        from lgembed.bridge.device import open_bridge

        client = open_bridge(name, self._bridge_tables[name], self.registry, self.source)
        self._bridges[name] = client
        return client

    # --- lifetime ---------------------------------------------------------------------

    def close(self) -> None:
        """Closes every adapter and stops the simulators. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        for client in self._bridges.values():
            client.close()
        try:
            self.registry.close()
        finally:
            if self._env is not None:
                self._env.close()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        sim = f", simulated: {', '.join(sorted(self._sims))}" if self._sims else ""
        return f"<Device {self.name!r} ({self.source}) adapters: {', '.join(self.registry.names())}{sim}>"


def _check_table(value: Any, source: str, key: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"{source}: invalid value for '{key}': {value!r}; allowed: a table"
        raise DeviceFileError(msg, source, key)
    return dict(value)


def load_device(source: str | os.PathLike | Mapping[str, Any], simulate: bool | Iterable[str] = False) -> Device:
    """Opens every adapter a device file names and returns the Device.

    Args:
        source: the path of a TOML device file, or a dict with the same content.
        simulate: True to simulate every adapter, an iterable of adapter names to
            simulate those, False for real hardware (an adapter's own `simulate = true`
            still simulates it).

    Returns:
        The Device (close it, or use it as a context manager).

    Raises:
        DeviceFileError: the file is missing or invalid; the message names the file, the
            key, the value and what is allowed.
        DriverUnavailableError: a driver's library is not installed.
        DriverError: a device could not be opened (nothing stays open).
    """
    if isinstance(source, Mapping):
        config, src = dict(source), "<dict>"
    else:
        src = os.fspath(source)
        config = _read_toml(src)
    for k in config:
        if k not in _TOP_KEYS:
            msg = f"{src}: unknown table '{k}'; allowed: {', '.join(_TOP_KEYS)}"
            raise DeviceFileError(msg, src, k)
    meta = _check_table(config.get("device", {}), src, "device")
    name = meta.get("name") or (os.path.splitext(os.path.basename(src))[0] if src != "<dict>" else "device")
    adapters = _check_table(config.get("adapters", {}), src, "adapters")
    if simulate is True or simulate is False:
        sim_names = set(adapters) if simulate else set()
    else:
        sim_names = set(simulate)
        unknown = sim_names - set(adapters)
        if unknown:
            msg = f"load_device: simulate names adapters that {src} does not define: {', '.join(sorted(unknown))}"
            raise DeviceFileError(msg, src, "adapters")
    device = Device(str(name), src, config)
    try:
        for aname, table in adapters.items():
            key = f"adapters.{aname}"
            table = _check_table(table, src, key)
            kind = table.get("kind")
            if kind is None:
                msg = f"{src}: missing setting '{key}.kind': every adapter needs a kind (gpio, pwm, adc, uart, i2c, can)"
                raise DeviceFileError(msg, src, f"{key}.kind")
            cls = driver_class(kind, table.get("driver"), src, key)
            settings = {k: v for k, v in table.items() if k not in _ADAPTER_KEYS}
            from lgembed.edge._base import check_settings

            settings = check_settings(cls, settings, src, key)
            own = table.get("simulate", False)
            if not isinstance(own, bool):
                msg = f"{src}: invalid value for '{key}.simulate': {own!r}; allowed: true or false"
                raise DeviceFileError(msg, src, f"{key}.simulate")
            if aname in sim_names or own:
                settings = _simulate(device, aname, kind, cls.driver, settings, table, src)
            device.registry.set(aname, cls(aname, **settings))
        if "world" in config:
            world = _check_table(config["world"], src, "world")
            if device._sims:
                from lgembed.edge.sim.world import build_world

                device.world = build_world(world, device, src)
                if device._env is not None:
                    device._env.world = device.world
        if "tools" in config:
            _check_table(config["tools"], src, "tools")
            device.tools()  # validates every tool table now, not at the first call
        if "bridges" in config:
            from lgembed.bridge.device import check_bridges

            device._bridge_tables = check_bridges(config["bridges"], device.registry, src)
    except BaseException:
        device.close()
        raise
    return device


def _simulate(device: Device, name: str, kind: str, driver: str, settings: dict, table: dict, src: str) -> dict:
    import importlib

    from lgembed.edge.sim import SIM_MODULES, SimEnv

    if device._env is None:
        device._env = SimEnv()
    key = f"adapters.{name}"
    model = table.get("simulator")
    if model is not None and not isinstance(model, str):
        msg = f"{src}: invalid value for '{key}.simulator': {model!r}; allowed: a simulator name or 'module:Class'"
        raise DeviceFileError(msg, src, f"{key}.simulator")
    options = _check_table(table.get("simulation", {}), src, f"{key}.simulation")
    mod = importlib.import_module(SIM_MODULES[kind])
    new_settings, sim = mod.attach(device._env, name, driver, dict(settings), model, options, src)
    device._sims[name] = sim
    return new_settings
