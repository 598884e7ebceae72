"""EdgeAdapterRegistry: the open adapters of a device, by name, and the driver table.

Why: graphs, tools, event sources and the service find hardware by the name the device
file gives it ("heater", "room"), never by a path. Drivers are looked up by name from
module-path strings (python-can's backend table is the model), so a driver's library is
imported only when an adapter of that kind and driver opens.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Any

from lgembed.edge.errors import AdapterNotFoundError, DeviceFileError

__all__ = ("DEFAULT_DRIVERS", "DRIVERS", "KINDS", "EdgeAdapterRegistry", "driver_class")

KINDS = ("gpio", "pwm", "adc", "uart", "i2c", "can")
"""Adapter kinds a device file may name."""

DRIVERS: dict[str, dict[str, str]] = {
    "gpio": {"cdev": "lgembed.edge.gpio:CdevGPIO", "sysfs": "lgembed.edge.gpio:SysfsGPIO"},
    "pwm": {"sysfs": "lgembed.edge.pwm:SysfsPWM"},
    "adc": {"iio": "lgembed.edge.adc:IioADC"},
    "uart": {"serial": "lgembed.edge.uart:SerialUART"},
    "i2c": {"periphery": "lgembed.edge.i2c:PeripheryI2C"},
    "can": {"python-can": "lgembed.edge.can:PythonCanBus"},
}
"""kind -> driver name -> "module:Class"; a device file's `driver` key picks one."""

DEFAULT_DRIVERS = {"gpio": "cdev", "pwm": "sysfs", "adc": "iio", "uart": "serial", "i2c": "periphery", "can": "python-can"}
"""The driver used when an adapter's table has no `driver` key."""


def driver_class(kind: str, driver: str | None = None, source: str = "<dict>", key: str = "") -> type:
    """The driver class for `kind` and `driver` (the kind's default when None).

    Raises:
        DeviceFileError: an unknown kind or driver (the message lists the allowed ones).
    """
    if kind not in DRIVERS:
        msg = f"{source}: invalid value for '{key}.kind': {kind!r}; allowed: {', '.join(map(repr, KINDS))}"
        raise DeviceFileError(msg, source, f"{key}.kind")
    name = DEFAULT_DRIVERS[kind] if driver is None else driver
    target = DRIVERS[kind].get(name)
    if target is None:
        allowed = ", ".join(map(repr, DRIVERS[kind]))
        msg = f"{source}: invalid value for '{key}.driver': {driver!r}; allowed for a {kind} adapter: {allowed}"
        raise DeviceFileError(msg, source, f"{key}.driver")
    mod, _, cls = target.partition(":")
    return getattr(importlib.import_module(mod), cls)


class EdgeAdapterRegistry:
    """Open adapters by name: `set`, `find`, `require`, `capabilities`.

    The registry owns what is put in it: `close()` closes every adapter.
    """

    def __init__(self) -> None:
        self._adapters: dict[str, Any] = {}
        self._lock = threading.Lock()

    def set(self, name: str, adapter: Any) -> Any:
        """Registers `adapter` under `name`. Returns the adapter it replaced, or None."""
        if not isinstance(name, str) or not name:
            msg = f"EdgeAdapterRegistry.set: 'name' must be a non-empty string (got {name!r})"
            raise ValueError(msg)
        with self._lock:
            old = self._adapters.get(name)
            self._adapters[name] = adapter
            return old

    def find(self, name: str, kind: str | None = None) -> Any:
        """The adapter named `name` (of `kind`, when given), or None."""
        a = self._adapters.get(name)
        if a is None or (kind is not None and a.kind != kind):
            return None
        return a

    def require(self, name: str, kind: str | None = None) -> Any:
        """The adapter named `name` (of `kind`, when given).

        Raises:
            AdapterNotFoundError: no such adapter, or one of another kind.
        """
        a = self._adapters.get(name)
        if a is None:
            names = ", ".join(sorted(self._adapters)) or "none"
            msg = f"No adapter named {name!r} in the registry (adapters: {names}). Fix: add [adapters.{name}] to the device file."
            raise AdapterNotFoundError(msg) from None
        if kind is not None and a.kind != kind:
            msg = f"Adapter {name!r} is a {a.kind} adapter, not {kind}."
            raise AdapterNotFoundError(msg)
        return a

    def remove(self, name: str) -> Any:
        """Unregisters `name` (without closing it). Returns the adapter, or None."""
        with self._lock:
            return self._adapters.pop(name, None)

    def capabilities(self) -> dict[str, dict[str, Any]]:
        """name -> {"kind", "driver", "device", "actions"} for every adapter."""
        from lgembed.edge.actions import ACTIONS

        out = {}
        for name, a in self._adapters.items():
            d = a.describe() if hasattr(a, "describe") else {"kind": a.kind}
            out[name] = {
                "kind": d.get("kind", a.kind),
                "driver": d.get("driver", ""),
                "device": d.get("device", ""),
                "actions": sorted(ACTIONS.get(a.kind, {})),
            }
        return out

    def names(self) -> list[str]:
        return list(self._adapters)

    def items(self) -> list[tuple[str, Any]]:
        return list(self._adapters.items())

    def __contains__(self, name: object) -> bool:
        return name in self._adapters

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._adapters))

    def __len__(self) -> int:
        return len(self._adapters)

    def close(self) -> None:
        """Closes every adapter (last opened first). Errors are collected, the first re-raised."""
        with self._lock:
            adapters = list(self._adapters.values())[::-1]
        first: BaseException | None = None
        for a in adapters:
            try:
                a.close()
            except Exception as e:  # noqa: BLE001 - close the others, then report
                first = first or e
        if first is not None:
            raise first

    def __repr__(self) -> str:
        return f"<EdgeAdapterRegistry {', '.join(f'{n}:{a.kind}' for n, a in self._adapters.items())}>"
