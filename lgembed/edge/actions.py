"""The actions a hardware tool can perform, per adapter kind: parameters and the call.

Why: a tool in a device file names an adapter and an action (`[tools.heat] adapter =
"heater", action = "write"`). This table says, for each kind, which actions exist, the
arguments a model fills (with types and descriptions that become the tool's JSON
schema) and how the action calls the adapter. Results are plain JSON data so they read
well in a ToolMessage and an audit record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, NamedTuple

__all__ = ("ACTIONS", "Action", "Param")


class Param(NamedTuple):
    """One argument of an action: name, type hint, default (inspect.Parameter.empty if required)."""

    name: str
    hint: Any
    default: Any


_REQ: Any = __import__("inspect").Parameter.empty


class Action(NamedTuple):
    """What an action does (`description`), its arguments, and the call itself."""

    description: str
    params: tuple[Param, ...]
    call: Callable[..., Any]
    options: tuple[str, ...] = ()
    # tool-table `options` keys the call accepts (e.g. a UART line ending)


def _hex(data: bytes) -> dict[str, Any]:
    return {"data": list(data), "hex": bytes(data).hex()}


def _i2c_kw(args: dict) -> dict:
    return {"address": args["address"]} if args.get("address") is not None else {}


def _pwm_state(a: Any) -> dict[str, Any]:
    return {"duty_cycle": a.duty_cycle, "frequency": a.frequency, "enabled": a.enabled}


def _gpio_write(a: Any, value: bool) -> dict[str, Any]:
    a.write(value)
    return {"value": value}


def _pwm_set(a: Any, attr: str, value: Any) -> dict[str, Any]:
    setattr(a, attr, value)
    return _pwm_state(a)


def _uart_write(a: Any, text: str, line_ending: str = "") -> dict[str, Any]:
    data = (text + line_ending).encode()
    return {"written": a.write(data)}


def _uart_readline(a: Any, timeout: float = 1.0) -> dict[str, Any]:
    return {"line": a.readline(timeout=timeout).decode(errors="replace").rstrip("\r\n")}


def _uart_query(a: Any, text: str, timeout: float = 1.0, line_ending: str = "\n") -> dict[str, Any]:
    a.reset_input_buffer()
    a.write((text + line_ending).encode())
    return _uart_readline(a, timeout)


def _can_recv(a: Any, timeout: float = 1.0) -> dict[str, Any]:
    m = a.recv(timeout=timeout)
    return {"arbitration_id": m.arbitration_id, "is_extended_id": m.is_extended_id, **_hex(bytes(m.data))}


def _can_send(a: Any, arbitration_id: int, data: list[int]) -> dict[str, Any]:
    a.send(arbitration_id, bytes(data))
    return {"sent": True, "arbitration_id": arbitration_id, "length": len(data)}


_BYTES = Annotated[list[int], "bytes to send, each 0..255"]
_REG = Annotated[int, "register address, 0..255"]
_ADDR = Param("address", Annotated[int | None, "7-bit I2C address (default: the adapter's)"], None)
# offered to the model only when the tool's policy has an allow-list for `address`

ACTIONS: dict[str, dict[str, Action]] = {
    "gpio": {
        "read": Action("Reads the line's logical value (true = active).", (), lambda a: {"value": a.read()}),
        "write": Action(
            "Drives the line: true = active, false = inactive.",
            (Param("value", Annotated[bool, "true to activate, false to deactivate"], _REQ),),
            _gpio_write,
        ),
    },
    "pwm": {
        "read": Action("Reads the PWM output's duty cycle, frequency and state.", (), _pwm_state),
        "set_duty_cycle": Action(
            "Sets the duty cycle (0.0 = off, 1.0 = full on).",
            (Param("duty_cycle", Annotated[float, "fraction from 0.0 to 1.0"], _REQ),),
            lambda a, duty_cycle: _pwm_set(a, "duty_cycle", duty_cycle),
        ),
        "set_frequency": Action(
            "Sets the PWM frequency in hertz.",
            (Param("frequency", Annotated[float, "hertz, above 0"], _REQ),),
            lambda a, frequency: _pwm_set(a, "frequency", frequency),
        ),
        "enable": Action("Starts the PWM output.", (), lambda a: (a.enable(), _pwm_state(a))[1]),
        "disable": Action("Stops the PWM output.", (), lambda a: (a.disable(), _pwm_state(a))[1]),
    },
    "adc": {
        "read": Action("Reads the input voltage in volts.", (), lambda a: {"volts": a.read()}),
    },
    "i2c": {
        "read_register": Action(
            "Reads bytes from a device register.",
            (Param("register", _REG, _REQ), Param("length", Annotated[int, "bytes to read"], 1), _ADDR),
            lambda a, register, length=1, address=None: _hex(a.read_register(register, length, **_i2c_kw(locals()))),
        ),
        "write_register": Action(
            "Writes bytes to a device register.",
            (Param("register", _REG, _REQ), Param("data", _BYTES, _REQ), _ADDR),
            lambda a, register, data, address=None: (a.write_register(register, bytes(data), **_i2c_kw(locals())), {"written": len(data)})[1],
        ),
        "read": Action(
            "Reads bytes from the device.",
            (Param("length", Annotated[int, "bytes to read"], _REQ), _ADDR),
            lambda a, length, address=None: _hex(a.read(length, **_i2c_kw(locals()))),
        ),
        "write": Action(
            "Writes bytes to the device.",
            (Param("data", _BYTES, _REQ), _ADDR),
            lambda a, data, address=None: (a.write(bytes(data), **_i2c_kw(locals())), {"written": len(data)})[1],
        ),
    },
    "uart": {
        "write": Action(
            "Sends text on the serial line.",
            (Param("text", Annotated[str, "text to send"], _REQ),),
            _uart_write,
            ("line_ending",),
        ),
        "readline": Action(
            "Reads one line from the serial line.",
            (Param("timeout", Annotated[float, "seconds to wait"], 1.0),),
            _uart_readline,
        ),
        "query": Action(
            "Sends a command line and returns the reply line.",
            (Param("text", Annotated[str, "the command"], _REQ), Param("timeout", Annotated[float, "seconds to wait"], 1.0)),
            _uart_query,
            ("line_ending",),
        ),
    },
    "can": {
        "send": Action(
            "Sends a CAN frame.",
            (Param("arbitration_id", Annotated[int, "CAN identifier"], _REQ), Param("data", _BYTES, _REQ)),
            _can_send,
        ),
        "recv": Action(
            "Waits for the next CAN frame.",
            (Param("timeout", Annotated[float, "seconds to wait"], 1.0),),
            _can_recv,
        ),
    },
}
"""kind -> action name -> Action."""
