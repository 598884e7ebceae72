"""The edge layer: GPIO, PWM, ADC, UART, I2C and CAN adapters, their simulators, hardware
tools under a policy, and hardware events for graphs.

    from lgembed.edge import load_device, ToolPolicy
    with load_device("device.toml", simulate=True) as device:
        device.adapter("heater").write(True)
        device.simulation("room").celsius = 21.5
        tools = device.tools()

This package imports lazily (propcache's facade): `import lgembed.edge` loads none of
its driver modules and no hardware library; `python-periphery`, `pyserial` and
`python-can` are imported when an adapter of their kind opens (the `hardware` extra).
"""

from __future__ import annotations

from lgembed._lazy import lazy_attributes

__all__ = (
    "AUDIT_NAMESPACE",
    "RISK_LEVELS",
    "AdapterClosedError",
    "AdapterNotFoundError",
    "ArgumentError",
    "Device",
    "DeviceAbsentError",
    "DeviceBusyError",
    "DeviceFileError",
    "DevicePermissionError",
    "DriverError",
    "DriverTimeoutError",
    "DriverUnavailableError",
    "EdgeAdapterRegistry",
    "EdgeError",
    "Event",
    "EventStream",
    "HardwareTool",
    "NackError",
    "PolicyViolation",
    "RateLimit",
    "ToolPolicy",
    "hardware_tool",
    "load_device",
)

_WHERE = {
    "AUDIT_NAMESPACE": "tools",
    "HardwareTool": "tools",
    "hardware_tool": "tools",
    "RISK_LEVELS": "policy",
    "RateLimit": "policy",
    "ToolPolicy": "policy",
    "Device": "device",
    "load_device": "device",
    "EdgeAdapterRegistry": "registry",
    "Event": "events",
    "EventStream": "events",
}
# public name -> submodule; every other public name is an error class in `errors`


__getattr__, __dir__ = lazy_attributes(globals(), _WHERE, "errors")
